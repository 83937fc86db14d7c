#pragma once
// Running commgauge (and mpirun) from tests: capture output, enforce a time limit, never hang.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

#include <nlohmann/json_fwd.hpp>

namespace commgauge::testing {

struct Outcome {
  int exit_code = -1;  ///< -1 if killed by a signal or by the time limit
  bool timed_out = false;
  std::string out;
  std::string err;
  double seconds = 0;
};

/// The limit for a run that measures a real link (loggp, profile): such runs are bounded by
/// their message and byte budgets, and took 9.6-19.7 s for `loggp --max-size 64KiB` in 12 runs
/// with both cores kept busy (scripts/under-load), once more than 110 s in CI; 300 s is 15 times
/// the slowest of the 12. (ctest's backstop per test is 600 s.)
inline constexpr std::chrono::seconds kMeasuringLimit{300};

/// Runs argv, waits at most `limit`, then kills the process group.
Outcome run(const std::vector<std::string>& argv,
            std::chrono::seconds limit = std::chrono::seconds(110));

/// A process left running in the background (a `commgauge serve`), killed on destruction.
class Background {
 public:
  explicit Background(const std::vector<std::string>& argv);
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  pid_t pid() const { return pid_; }
  void signal(int sig) const;
  /// Reads stderr until a line containing `text` appears or `limit` passes; returns that line.
  std::string wait_for_stderr(const std::string& text, std::chrono::seconds limit);
  /// Every line of stderr read so far (for a failure's message).
  const std::string& stderr_seen() const { return seen_; }
  /// Waits up to `limit` for the process to end; its exit status (128 + signal if killed), or
  /// -1 if it is still running.
  int wait_for_exit(std::chrono::seconds limit);

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  std::string buffer_;
  std::string seen_;
};

/// A `commgauge serve --once` on a free loopback port that is stopped (SIGSTOP) once it has
/// received `bytes` on its connection (ss -tin; a count of bytes, not a time, so load does not
/// move it); continued and killed on destruction.
class ServeStoppedAfter {
 public:
  explicit ServeStoppedAfter(std::uint64_t bytes);
  ~ServeStoppedAfter();
  ServeStoppedAfter(const ServeStoppedAfter&) = delete;
  ServeStoppedAfter& operator=(const ServeStoppedAfter&) = delete;
  /// The port it listens on, empty if it did not start.
  const std::string& port() const { return port_; }
  /// Ends the watch (the client has finished) and continues the server.
  void finish();

 private:
  std::unique_ptr<Background> server_;
  std::string port_;
  std::atomic<bool> finished_{false};
  std::thread stopper_;
};

/// Runs `commgauge COMMAND... --transport tcp --peer ADDRESS --io-timeout 3` (kMeasuringLimit)
/// against a ServeStoppedAfter(`bytes`), continued once the run has ended. Throws
/// std::runtime_error if the server does not start.
Outcome run_against_peer_stopped_after(std::uint64_t bytes,
                                       const std::vector<std::string>& command);

/// `name` in this test process's own scratch directory (created on first use, removed with
/// everything in it when the process ends, unless a test failed: then its path is printed).
std::filesystem::path scratch_file(const std::string& name);

/// A path in the temporary directory, removed (if present) on construction and destruction.
struct ScratchPath {
  explicit ScratchPath(const std::string& name);
  ~ScratchPath();
  ScratchPath(const ScratchPath&) = delete;
  ScratchPath& operator=(const ScratchPath&) = delete;
  std::filesystem::path path;
};

/// The processes whose parent is `parent` (from /proc).
std::vector<pid_t> children_of(pid_t parent);
/// The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), 0 if there is no such process.
char process_state(pid_t pid);

/// Mounts a tmpfs of `size` ("8k", "1m") at the existing directory `dir` (needs root); the
/// outcome of mount. Callers skip where it fails, and fail instead under CI (in_ci()).
Outcome mount_tmpfs(const std::string& dir, const std::string& size);
/// Whether the tests run in CI (CI=true), where a missing capability is a failure, not a skip.
bool in_ci();

/// The bytes received so far on the established TCP connection whose local end is
/// 127.0.0.1:`port` (bytes_received of `ss -tin`), 0 if there is none.
std::uint64_t tcp_bytes_received(const std::string& port);

/// The CPU seconds a process has used (utime + stime from /proc).
double cpu_seconds(pid_t pid);

/// The JSON document in the file at `p` (throws nlohmann's parse_error if it is not JSON).
nlohmann::json read_json(const std::filesystem::path& p);
/// Checks (gtest expectations, `what` in each message) that a loggp document's switches hold
/// exactly one rendezvous switch, confirmed, whose first size is the BTL's eager limit less ob1's
/// 55-byte match header (Open MPI 4.1): to the byte, or, where load kept the bisection from its
/// last midpoints and the document says so ("exact": false), bracketed within 64 B around it.
/// Returns that switch (null if there was not exactly one).
nlohmann::json expect_one_rendezvous_switch_at(const nlohmann::json& switches,
                                               double eager_limit_bytes, const std::string& what);
/// The time `rank` spent outside MPI between its consecutive calls of `function` in a trace
/// (`commgauge trace-dump`'s start and duration of each call), in seconds.
double gaps_between_calls_s(const std::filesystem::path& trace, int rank,
                            const std::string& function);
/// The duration of each of `rank`'s calls of `function` in a trace, in seconds, in order.
std::vector<double> call_durations_s(const std::filesystem::path& trace, int rank,
                                     const std::string& function);
/// `base` followed by `more`: a command line with more arguments.
std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more);

/// The commgauge binary under test.
std::string commgauge();
/// mpirun with the flags this machine needs (root, oversubscription).
std::vector<std::string> mpirun(int ranks, const std::vector<std::string>& extra = {});

}  // namespace commgauge::testing
