#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "cli/method_run.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/text_file.hpp"
#include "common/units.hpp"
#include "measure/latency.hpp"
#include "measure/limits.hpp"
#include "profile/json_file.hpp"
#include "report/context.hpp"
#include "report/latency_report.hpp"
#include "report/progress_bar.hpp"

namespace commgauge::cli {

void add_latency_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "latency",
      "Ping-pong latency with seed 002's method: before each trial a barrier and a hand-shake, "
      "then npp ping-pongs timed on the source (npp chosen from the timer resolution unless "
      "--npp is given); one-way times (ping-pong time / 2 / npp) with min, median, mean, max, "
      "variance, sd, cv, se, rse, rates, the same after filtering trials above cut-coef x median, "
      "and distribution and frequency tables.");
  struct Flags {
    TransportFlags transport;
    measure::LatencyOptions latency;
    measure::TimerOptions timer;
    std::string size = "8";
    std::string sizes;
    std::optional<std::uint64_t> npp;
    std::string json, tables_csv;
    std::string output_dir;
  };
  auto f = std::make_shared<Flags>();
  add_transport_options(*cmd, f->transport);
  const std::string g = "Method";
  cmd->add_option("--size", f->size, "message size in bytes (units: KiB, MiB, kB, MB...)")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--sizes", f->sizes,
                  "sweep: a list \"8,64,1KiB\" or a range \"MIN:MAX[:FACTOR]\" (geometric, factor "
                  "2 by default), at most 10000 sizes; replaces --size")
      ->group(g);
  cmd->add_option("--trials", f->latency.trials,
                  "timing trials (ntrial) per size at most; a size stops earlier once its median "
                  "is known to --rse-target")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--min-trials", f->latency.min_trials, "timing trials every size gets")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--rse-target", f->latency.rse_target,
                  "stop a size when the relative standard error of its median (from the "
                  "distribution-free 95 % interval) is at most this; 0: always run --trials "
                  "(seed 002's fixed count)")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--npp", f->npp,
                  fmt::format("ping-pongs per timing loop, 1 to {} (default: estimated, seed 002 "
                              "§3.3, at most that too)",
                              measure::kMaxNpp))
      ->group(g);
  cmd->add_option("--res-npp", f->latency.res_npp,
                  fmt::format("res_npp: npp = nint(max(1, res_npp * res_timing / median_ppt)); "
                              "above 0, at most {:g}",
                              measure::kMaxResNpp))
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--handshake-bias", f->latency.handshake_bias,
                  "largest share of a trial the hand-shake's first ping-pong may bias (it costs "
                  "more than the next ones): npp grows until its measured extra cost spread over "
                  "the loop is at most this; 0: seed 002's npp alone")
      ->capture_default_str()
      ->group(g);
  cmd->add_option(
         "--npp-init", f->latency.npp_init,
         fmt::format("ping-pongs per loop while estimating npp, 1 to {}", measure::kMaxNpp))
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--npp-trials", f->latency.npp_trials,
                  "loops timed while estimating npp (npptrial)")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--cut-coef", f->latency.cut_coef, "filter trials above cut_coef x median")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--timer-trials", f->timer.trials, "timer pairs for the timer characterization")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--bin-width", f->latency.bin_width_us,
                  "distribution bin width in microseconds (0: automatic)")
      ->capture_default_str()
      ->group(g);
  const std::string o = "Output";
  cmd->add_option("--json", f->json, "write every figure as JSON to this file")->group(o);
  add_tables_csv_option(*cmd, f->tables_csv, o);
  cmd->add_option("--output-dir", f->output_dir,
                  "write latency.output (everything), latency.summary.output (seed 002 Appendix "
                  "C) and latency.trials.csv here (created)")
      ->check(CLI::Validator(
          [](const std::string& value) -> std::string {
            // Checked before measuring: the files are written at the end.
            namespace fs = std::filesystem;
            std::error_code ec;
            if (value == "-") return "standard output is not supported; give a directory";
            if (fs::exists(value, ec) && !fs::is_directory(value, ec))
              return "\"" + value + "\" is not a directory";
            for (const char* name :
                 {"latency.output", "latency.summary.output", "latency.trials.csv"}) {
              if (fs::is_directory(fs::path(value) / name, ec))
                return "\"" + (fs::path(value) / name).string() + "\" is a directory";
            }
            return {};
          },
          ""))
      ->group(o);

  cmd->callback([&action, f] {
    action = [f](int& argc, char**& argv) {
      f->latency.sizes = f->sizes.empty()
                             ? std::vector<std::uint64_t>{parse_byte_size(f->size, "--size")}
                             : parse_size_list(f->sizes, "--sizes");
      if (f->npp && *f->npp == 0) throw InputError("--npp", "must be at least 1");
      f->latency.npp = f->npp.value_or(0);
      f->latency.validate();
      f->timer.validate();
      // The table and the files; also for the sizes of a sweep a transport failure ended, saved
      // before the failure is reported (exit 3).
      auto publish = [f](const measure::LatencyResult& result,
                         const measure::TimerCharacterization& timer,
                         const nlohmann::json& context) {
        std::printf("commgauge latency over %s; timer %s: res_timing = %.4f us, min_ov = %.4f us\n",
                    context.value("transport", "?").c_str(), timer.clock.c_str(),
                    timer.res_timing_us, timer.min_ov_us);
        report::TableSink tables;
        std::fputs(report::latency_table(result, f->latency, &tables).c_str(), stdout);
        if (!result.interrupted.empty()) {
          std::printf("INCOMPLETE: %zu of %zu sizes measured, then: %s\n", result.points.size(),
                      f->latency.sizes.size(), result.interrupted.c_str());
        }
        std::printf("%llu messages, %llu bytes sent by the source in %.3f s\n",
                    static_cast<unsigned long long>(result.counters.messages),
                    static_cast<unsigned long long>(result.counters.bytes), result.seconds);
        if (!f->json.empty()) {
          write_text_file(f->json, report::latency_json_text(result, f->latency, timer, context));
        }
        if (!f->tables_csv.empty()) write_text_file(f->tables_csv, tables.csv());
        if (!f->output_dir.empty())
          report::write_latency_files(f->output_dir, result, f->latency, timer, context);
      };
      auto runner = net::make_runner(f->transport.resolve(), argc, argv);
      report::TerminalProgress progress;
      run_and_publish<measure::LatencyResult>(
          *runner, f->timer, {"latency", f->latency},
          [&](net::Transport& t, const measure::TimerCharacterization& timer) {
            return measure::measure_latency(t, f->latency, timer, &progress);
          },
          publish,
          [&](const measure::LatencyResult& r) {
            return fmt::format("ended after {} of {} sizes; those are saved", r.points.size(),
                               f->latency.sizes.size());
          });
      return 0;
    };
  });
}

}  // namespace commgauge::cli
