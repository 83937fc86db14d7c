#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "cli/checks.hpp"
#include "cli/method_run.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/text_file.hpp"
#include "common/units.hpp"
#include "measure/limits.hpp"
#include "measure/overlap.hpp"
#include "profile/json_file.hpp"
#include "profile/profile.hpp"
#include "report/overlap_report.hpp"
#include "report/progress_bar.hpp"

namespace commgauge::cli {

void add_overlap_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "overlap",
      "LogGPO parameters from measurement (seed 001): per size the time in MPI_Isend, MPI_Irecv "
      "and both MPI_Waits after no, sufficient and one-sided computation; the progress strategy "
      "(DCP/ICP) per rendezvous range, the transfer mechanism Tm (T/RAT/RTA), the control "
      "overheads O', the overlap ratios Rso and Rro, and the eager/rendezvous switch S.");
  struct Flags {
    TransportFlags transport;
    measure::OverlapOptions overlap;
    measure::TimerOptions timer;
    std::string sizes, min_size = "1", max_size = "1MiB";
    std::string loggp, link_class;
    std::string json, plot, tables_csv;
  };
  auto f = std::make_shared<Flags>();
  f->timer.trials = std::uint64_t{1} << 20;
  add_transport_options(*cmd, f->transport);
  const std::string g = "Method";
  auto* mn =
      cmd->add_option("--min-size", f->min_size, "first size")->capture_default_str()->group(g);
  auto* mx =
      cmd->add_option("--max-size", f->max_size, "last size")->capture_default_str()->group(g);
  auto* ppo =
      cmd->add_option("--points-per-octave", f->overlap.points_per_octave,
                      fmt::format("sweep density (at most {:g})", measure::kMaxPointsPerOctave))
          ->capture_default_str()
          ->group(g);
  cmd->add_option("--sizes", f->sizes,
                  "explicit sizes \"8,64,1KiB\" or \"MIN:MAX[:FACTOR]\" (at most 10000)")
      ->group(g)
      ->excludes(mn)
      ->excludes(mx)
      ->excludes(ppo);
  cmd->add_option("--repetitions", f->overlap.repetitions, "trials per experiment (medians)")
      ->capture_default_str()
      ->group(g);
  cmd->add_option(
         "--min-comp", f->overlap.min_comp_us,
         fmt::format(
             "least computation C in us (C = max(this, 4 x the one-way time)); at most {:g}",
             measure::kMaxComputation_us))
      ->capture_default_str()
      ->group(g);
  // Not given leaves the option's "C of each size" (-1 inside); a value given must be one.
  cmd->add_option("--comp-us", f->overlap.comp_us,
                  fmt::format("computation for Rso and Rro in us (default: C); at most {:g}",
                              measure::kMaxComputation_us))
      ->check(kNonNegative)
      ->group(g);
  cmd->add_option("--loggp", f->loggp,
                  "link parameters (loggp --json) or profile: its ranges and S to compare with")
      ->group(g);
  cmd->add_option("--link-class", f->link_class, "link class of a --loggp profile")->group(g);
  cmd->add_option("--timer-trials", f->timer.trials, "timer pairs for the context")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--json", f->json, "write everything as JSON")->group("Output");
  add_tables_csv_option(*cmd, f->tables_csv, "Output");
  cmd->add_option("--plot", f->plot, "draw the call and wait times per size (.png or .svg)")
      ->group("Output");
  cmd->callback([&action, f] {
    action = [f](int& argc, char**& argv) {
      auto& o = f->overlap;
      if (!f->sizes.empty()) {
        o.sizes = parse_size_list(f->sizes, "--sizes");
      } else {
        o.min_size = parse_byte_size(f->min_size, "--min-size");
        o.max_size = parse_byte_size(f->max_size, "--max-size");
      }
      o.validate();
      std::optional<model::LinkParams> loggp;
      if (!f->loggp.empty()) {
        loggp = profile::read_link_for_prediction(f->loggp, f->link_class).link;
      } else if (!f->link_class.empty()) {
        throw InputError("--link-class", "only applies with --loggp");
      }
      // The table and the files; also for a sweep a transport failure ended, saved before the
      // failure is reported (exit 3).
      auto publish = [f, &o](const measure::OverlapResult& result,
                             const measure::TimerCharacterization&, const nlohmann::json& context) {
        std::printf("commgauge overlap over %s\n", context.value("transport", "?").c_str());
        report::TableSink tables;
        std::fputs(report::overlap_table(result, &tables).c_str(), stdout);
        if (!result.interrupted.empty()) {
          std::printf("INCOMPLETE: %zu of %zu sizes measured, then: %s\n", result.points.size(),
                      o.sweep_sizes().size(), result.interrupted.c_str());
        }
        if (!f->json.empty())
          profile::write_json_file(f->json, report::overlap_json(result, o, context));
        if (!f->tables_csv.empty()) write_text_file(f->tables_csv, tables.csv());
        if (!f->plot.empty()) {
          report::plot_overlap(
              f->plot, result,
              fmt::format("commgauge overlap over {}{}", context.value("transport", "?"),
                          result.interrupted.empty() ? "" : " (incomplete)"));
        }
      };
      auto runner = net::make_runner(f->transport.resolve(), argc, argv);
      report::TerminalProgress progress;
      run_and_publish<measure::OverlapResult>(
          *runner, f->timer, {"overlap", o},
          [&](net::Transport& t, const measure::TimerCharacterization&) {
            return measure::measure_overlap(t, o, loggp, &progress);
          },
          publish,
          [&](const measure::OverlapResult& r) {
            return fmt::format("ended after {} of {} sizes; those are saved", r.points.size(),
                               o.sweep_sizes().size());
          });
      return 0;
    };
  });
}

}  // namespace commgauge::cli
