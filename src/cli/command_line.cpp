#include "cli/command_line.hpp"

#include <string>

#include "cli/checks.hpp"
#include "commgauge/version.hpp"
#include "net/launch.hpp"

namespace commgauge::cli {

std::unique_ptr<CLI::App> make_command_line(Action& action) {
  auto app = std::make_unique<CLI::App>(
      "commgauge: measure what communication costs on a parallel machine (LogGP/LogGPS/"
      "LogGPO parameters, latency, bandwidth sharing) and predict MPI program run times.");
  // A callback, so that MPI is asked only when --version is given.
  app->set_version_flag("--version", [] {
    return std::string("commgauge ") + kVersion + " (" + kGitRevision + ")\nbuilt with " +
           net::mpi_library_built_with()
#ifdef COMMGAUGE_TRACER_MPICH_VERSION
           + "\ntraces MPICH " COMMGAUGE_TRACER_MPICH_VERSION " programs too (trace --mpi mpich)"
#endif
        ;
  });
  app->require_subcommand(1);
  add_timer_command(*app, action);
  add_latency_command(*app, action);
  add_loggp_command(*app, action);
  add_overlap_command(*app, action);
  add_profile_command(*app, action);
  add_predict_command(*app, action);
  add_models_command(*app, action);
  add_share_command(*app, action);
  add_share_fit_command(*app, action);
  add_share_task_command(*app, action);
  add_trace_command(*app, action);
  add_trace_summary_command(*app, action);
  add_trace_dump_command(*app, action);
  add_trace_check_command(*app, action);
  add_trace_export_command(*app, action);
  add_simulate_command(*app, action);
  add_synth_command(*app, action);
  add_serve_command(*app, action);
  add_completion_command(*app, action);
  check_every_value(*app);
  return app;
}

}  // namespace commgauge::cli
