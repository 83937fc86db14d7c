#include <cstdio>

#include <fmt/format.h>

#include "cli/failure.hpp"
#include "cli/options.hpp"
#include "cli/run_guard.hpp"
#include "measure/limits.hpp"
#include "measure/timer.hpp"
#include "profile/json_file.hpp"
#include "report/timer_report.hpp"

namespace commgauge::cli {

void add_timer_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "timer",
      "Characterize the timer (seed 002 §3.1): back-to-back timer pairs give its resolution "
      "res_timing (minimum positive difference) and overhead min_ov (minimum non-negative "
      "difference), with statistics, distribution and frequency tables. Runs on the source end's "
      "clock of the selected transport (under mpirun: the --source rank).");
  struct Flags {
    TransportFlags transport;
    measure::TimerOptions timer;
    std::string json;
  };
  auto flags = std::make_shared<Flags>();
  add_transport_options(*cmd, flags->transport);
  cmd->add_option("--trials", flags->timer.trials, "back-to-back timer pairs (seed 002: 2^24)")
      ->capture_default_str();
  name_field(*cmd, "timer_trials", "--trials");
  cmd->add_option("--bin-width", flags->timer.bin_width_us,
                  "distribution bin width in microseconds (0: automatic)")
      ->capture_default_str();
  cmd->add_option("--max-bins", flags->timer.max_bins,
                  fmt::format("distribution bins (the last is open), 1 to {}", measure::kMaxBins))
      ->capture_default_str();
  cmd->add_option("--max-frequency-rows", flags->timer.max_frequency_rows,
                  fmt::format("distinct values listed in the frequency table (the rest are "
                              "summarised), 1 to {}",
                              measure::kMaxFrequencyRows))
      ->capture_default_str();
  cmd->add_option("--json", flags->json, "write the result as JSON to this file");
  cmd->callback([&action, flags] {
    action = [flags](int& argc, char**& argv) {
      flags->timer.validate();
      auto runner = net::make_runner(flags->transport.resolve(), argc, argv);
      if (!runner->reports()) return 0;
      run_guarded(*runner, [&] {
        const auto t = measure::characterize_timer(runner->source_clock(), flags->timer);
        std::fputs(report::timer_text(t).c_str(), stdout);
        if (!flags->json.empty()) profile::write_json_file(flags->json, report::timer_json(t));
      });
      return 0;
    };
  });
}

}  // namespace commgauge::cli
