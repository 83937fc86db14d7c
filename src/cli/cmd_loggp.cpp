#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "cli/method_run.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/text_file.hpp"
#include "common/units.hpp"
#include "measure/limits.hpp"
#include "measure/loggp.hpp"
#include "measure/timer.hpp"
#include "profile/json_file.hpp"
#include "report/context.hpp"
#include "report/loggp_report.hpp"
#include "report/progress_bar.hpp"
#include "report/timer_report.hpp"

namespace commgauge::cli {

void add_loggp_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "loggp",
      "LogGP(S) parameters with seed 000's PRTT(n,d,s) method, measured in interleaved rounds "
      "(every size's four PRTTs each round, all in a random order; sizes whose 95 % intervals "
      "are still wide get more rounds within the budgets): per size o_s (eq. 6), o_r (the server "
      "delays before each receive: a late receive's cost), G_all (eq. 7); switches found by the "
      "late-receive jump of a rendezvous hand-shake and by joint segmentation of PRTT(1,0,s), "
      "o_s(s), o_r(s) and G_all(s), each confirmed by re-measuring both sides alternately and "
      "bisected (to one byte where the curve allows); g and G by least squares per range; "
      "L = PRTT(1,0,1)/2 - o_s(1) - o_r(1), never below 0; bootstrap intervals and a verdict per "
      "range; the calibrated set fitted to all four curves, a range split where one set misses "
      "them and two do not (a per-byte change, no protocol change). --json writes the "
      "link-parameter document that --virtual-net reads.");
  struct Flags {
    TransportFlags transport;
    measure::LoggpOptions loggp;
    measure::TimerOptions timer;
    std::string min_size = "1";
    std::string max_size = "256KiB";
    std::string max_bytes;
    std::string sizes;
    std::optional<double> delay;
    bool no_refine = false;
    bool no_calibrate = false;
    bool no_streams = false;
    bool bill_by_pages = false;
    std::string json, csv, plot, tables_csv;
  };
  auto f = std::make_shared<Flags>();
  f->timer.trials = std::uint64_t{1} << 20;
  add_transport_options(*cmd, f->transport);
  const std::string g = "Method";
  auto* min_opt = cmd->add_option("--min-size", f->min_size, "first size of the sweep")
                      ->capture_default_str()
                      ->group(g);
  auto* max_opt = cmd->add_option("--max-size", f->max_size, "last size of the sweep")
                      ->capture_default_str()
                      ->group(g);
  auto* ppo = cmd->add_option("--points-per-octave", f->loggp.points_per_octave,
                              fmt::format("density of the geometric sweep (at most {:g})",
                                          measure::kMaxPointsPerOctave))
                  ->capture_default_str()
                  ->group(g);
  cmd->add_option("--sizes", f->sizes,
                  "explicit sizes \"8,64,1KiB\" or \"MIN:MAX[:FACTOR]\" (at most 10000)")
      ->group(g)
      ->excludes(min_opt)
      ->excludes(max_opt)
      ->excludes(ppo);
  cmd->add_option("-n,--messages", f->loggp.n, "n of PRTT(n,d,s) (seed 000 uses 16)")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--delay", f->delay,
                  "d in microseconds (default: PRTT(1,0,s) per size, or PRTT(2,0,s) where that "
                  "is not above G_all, as seed 000 §3.2); at most 1e6")
      ->group(g);
  auto* detector = cmd->add_option("--detector", f->loggp.detector,
                                   "protocol-change detector: joint (robust, default), seed000 "
                                   "(the paper's eq. 8 look-ahead on G_all) or none")
                       ->capture_default_str()
                       ->group(g);
  cmd->add_option("--lookahead", f->loggp.lookahead, "x of seed 000 §3.5")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--pfact", f->loggp.pfact, "pfact of seed 000 §3.5 (sensitivity)")
      ->capture_default_str()
      ->group(g);
  auto* no_refine =
      cmd->add_flag("--no-refine", f->no_refine, "do not bisect around switches")->group(g);
  cmd->add_option("--refine-tolerance", f->loggp.refine_tolerance,
                  "bisect until the switch is bracketed within this fraction of its size (0: "
                  "to one byte, where the curve allows)")
      ->capture_default_str()
      ->group(g)
      ->excludes(no_refine);
  cmd->add_option("--ci-target", f->loggp.ci_target,
                  "a size is stable when the 95 % CI of each of its PRTT medians over the rounds "
                  "is within this fraction; unstable sizes get more rounds")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--min-rounds", f->loggp.min_rounds,
                  "interleaved rounds every size gets (6 is the least for a 95 % CI)")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--max-rounds", f->loggp.max_rounds, "rounds an unstable size may get in all")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--seed", f->loggp.seed,
                  "seed of the random order of the cells (0: drawn; the JSON records it)")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--bootstrap", f->loggp.bootstrap,
                  "resamples of the rounds for the parameters' 95 % intervals")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--budget", f->loggp.budget_s,
                  "bound in seconds on extra rounds and refinement (0: none)")
      ->capture_default_str()
      ->group(g);
  add_loggp_budget_options(*cmd, f->loggp, f->max_bytes, "the whole run", g);
  auto* no_calibrate =
      cmd->add_flag(
             "--no-calibrate", f->no_calibrate,
             "report the seeds' estimators only, without the calibrated set fitted to all four "
             "PRTT curves")
          ->group(g);
  cmd->add_flag("--no-streams", f->no_streams,
                "measure no streams of nonblocking sends and no send calls: a rendezvous or "
                "acknowledged (TA) range keeps the calibrated g, G and O_r (TA: o_s, O_s), which "
                "its PRTTs cannot tell apart")
      ->group(g);
  cmd->add_flag("--bill-by-pages", f->bill_by_pages, kBillByPagesHelp)
      ->excludes(no_calibrate)  // pages bill only the calibrated set
      ->group(g);
  cmd->add_option("--timer-trials", f->timer.trials, "timer pairs for the context's timer figures")
      ->capture_default_str()
      ->group(g);
  const std::string o = "Output";
  cmd->add_option("--json", f->json, "write the link-parameter document and everything else")
      ->group(o);
  cmd->add_option("--csv", f->csv, "write the raw points")->group(o);
  add_tables_csv_option(*cmd, f->tables_csv, o);
  cmd->add_option("--plot", f->plot,
                  "draw G_all(s), the fits, o(s) and the switches (.png or .svg)")
      ->group(o);

  cmd->callback([&action, f, detector, cmd] {
    action = [f, detector, cmd](int& argc, char**& argv) {
      auto& lo = f->loggp;
      if (!f->sizes.empty()) {
        lo.sizes = parse_size_list(f->sizes, "--sizes");
      } else {
        lo.min_size = parse_byte_size(f->min_size, "--min-size");
        lo.max_size = parse_byte_size(f->max_size, "--max-size");
      }
      if (f->delay) {
        if (*f->delay < 0)
          throw InputError("--delay", fmt::format("must be >= 0 us, got {}", *f->delay));
        lo.delay_us = *f->delay;
      }
      lo.refine = !f->no_refine;
      lo.calibrate = !f->no_calibrate;
      lo.streams = !f->no_streams;
      if (f->bill_by_pages) lo.page_bytes = net::kPageBytes;
      (void)detector;
      apply_loggp_budget(*cmd, lo, f->max_bytes, measure::LoggpOptions{});
      lo.validate();
      f->timer.validate();
      // The table and the files; also for a run a transport failure ended after complete
      // rounds, saved before the failure is reported (exit 3).
      auto publish = [f, &lo](const measure::LoggpResult& result,
                              const measure::TimerCharacterization& timer,
                              const nlohmann::json& context) {
        std::printf("commgauge loggp over %s\n", context.value("transport", "?").c_str());
        report::TableSink tables;
        std::fputs(report::loggp_table(result, &tables).c_str(), stdout);
        if (!result.interrupted.empty()) {
          std::printf("INCOMPLETE: the analysis of %u complete rounds, then: %s\n", result.rounds,
                      result.interrupted.c_str());
        }
        if (!f->json.empty()) {
          profile::write_json_file(
              f->json, report::loggp_json(result, lo, report::timer_json(timer), context));
        }
        if (!f->csv.empty()) write_text_file(f->csv, report::loggp_csv(result));
        if (!f->tables_csv.empty()) write_text_file(f->tables_csv, tables.csv());
        if (!f->plot.empty()) {
          report::plot_loggp(
              f->plot, result,
              fmt::format("commgauge loggp over {}{}", context.value("transport", "?"),
                          result.interrupted.empty() ? "" : " (incomplete)"));
        }
      };
      auto runner = net::make_runner(f->transport.resolve(), argc, argv);
      report::TerminalProgress progress;
      run_and_publish<measure::LoggpResult>(
          *runner, f->timer, {"loggp", lo},
          [&](net::Transport& t, const measure::TimerCharacterization&) {
            return measure::measure_loggp(t, lo, &progress);
          },
          publish,
          [](const measure::LoggpResult& r) {
            return fmt::format("ended after {} complete rounds; their analysis is saved", r.rounds);
          });
      return 0;
    };
  });
}

}  // namespace commgauge::cli
