#pragma once
// A command run as a child job in its own process group: SIGINT and SIGTERM sent to commgauge
// are forwarded to the whole job, and a time limit ends it (SIGTERM, then SIGKILL a grace later),
// so that a hung MPI job never hangs commgauge. Used to run the program `trace` records.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace commgauge {

struct ChildJob {
  std::vector<std::string> args;        ///< the command and its arguments (found on $PATH)
  std::vector<std::string> env;         ///< NAME=value entries added to the environment
  double time_limit_s = 0;              ///< 0: none
  std::function<void()> on_time_limit;  ///< called once, when the limit is reached
  /// After the limit's SIGTERM, how long the job may take to end before SIGKILL (a launcher
  /// that itself waits before killing its ranks needs longer than that wait).
  double kill_grace_s = 5;
  /// For a launcher that kills its ranks right after passing a SIGTERM on (MPICH's Hydra): the
  /// processes that must end first. If set and it finds any, a SIGTERM or SIGINT for the job
  /// stops every other process of the job's tree (launchers put their daemons into sessions of
  /// their own), signals these alone, waits up to kill_grace_s until each has ended, and only
  /// then signals and continues the rest.
  std::function<std::vector<int>()> end_first;
};

/// This machine's processes whose environment holds every one of `entries` ("NAME=value"), read
/// from /proc; processes that cannot be read (another user's, gone) are skipped.
std::vector<int> processes_with_environment(const std::vector<std::string>& entries);

/// Runs the job to its end; returns its exit status (128 + signal if it was killed or ended by a
/// signal passed on to it, 127 if the command cannot be run). Throws std::runtime_error if it
/// cannot be started.
int run_child_job(ChildJob job);

/// Runs a helper tool (found on $PATH) and returns what it wrote to standard output, or nothing
/// if it cannot be run, fails, or runs past `time_limit_s` (then it is killed). Its standard
/// error is discarded.
std::optional<std::string> run_capturing_output(const std::vector<std::string>& args,
                                                double time_limit_s);

}  // namespace commgauge
