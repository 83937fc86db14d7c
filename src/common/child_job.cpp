#include "common/child_job.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace commgauge {

namespace {
volatile sig_atomic_t g_forward_signal = 0;
void remember_signal(int sig) {
  g_forward_signal = sig;
}

// Every process id /proc lists.
std::vector<int> all_processes() {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit))
      out.push_back(std::stoi(name));
  }
  return out;
}

// The fields of /proc/PID/stat after the command's name: state, ppid, ...; empty if gone.
std::string stat_after_name(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const std::size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? std::string{}
                                                                : line.substr(close + 2);
}

// Ended: gone, or a zombie its (stopped) parent has not reaped yet.
bool ended(int pid) {
  const std::string rest = stat_after_name(pid);
  return rest.empty() || rest[0] == 'Z' || rest[0] == 'X';
}

// `root` and every process below it, parents before children. Launchers put their daemons and
// ranks into sessions of their own (Hydra's proxies and ranks each call setsid), so the job's
// process group does not hold them.
std::vector<int> process_tree(int root) {
  std::vector<std::pair<int, int>> parent_of;  // (pid, ppid)
  for (int pid : all_processes()) {
    std::istringstream fields(stat_after_name(pid));
    char state = 0;
    int ppid = 0;
    if (fields >> state >> ppid) parent_of.emplace_back(pid, ppid);
  }
  std::vector<int> tree = {root};
  for (std::size_t i = 0; i < tree.size(); ++i) {
    for (const auto& [pid, ppid] : parent_of) {
      if (ppid == tree[i]) tree.push_back(pid);
    }
  }
  return tree;
}

// Sends `sig` to the job's group, or, with end_first, to those processes alone while the rest of
// the job's tree is stopped (returned in `stopped`); returns them (empty: the group was
// signalled).
std::vector<int> signal_job(const ChildJob& job, pid_t group, int sig, std::vector<int>& stopped) {
  std::vector<int> first = job.end_first ? job.end_first() : std::vector<int>{};
  if (first.empty()) {
    kill(-group, sig);
    return first;
  }
  stopped.clear();
  for (int p : process_tree(group)) {
    if (std::find(first.begin(), first.end(), p) == first.end()) stopped.push_back(p);
  }
  for (int p : stopped)
    kill(p, SIGSTOP);
  for (int p : first) {
    kill(p, sig);
    kill(p, SIGCONT);
  }
  return first;
}
}  // namespace

std::vector<int> processes_with_environment(const std::vector<std::string>& entries) {
  std::vector<int> out;
  for (int pid : all_processes()) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    std::size_t found = 0;
    std::string var;
    while (found < entries.size() && std::getline(in, var, '\0'))
      found += static_cast<std::size_t>(std::count(entries.begin(), entries.end(), var));
    if (!entries.empty() && found == entries.size()) out.push_back(pid);
  }
  return out;
}

int run_child_job(ChildJob job) {
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // its own process group, so a time limit ends the whole job
    for (auto& kv : job.env)
      putenv(kv.data());
    std::vector<char*> argv;
    for (auto& a : job.args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "commgauge: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  struct sigaction action {
  }, old_int{}, old_term{};
  action.sa_handler = remember_signal;
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  bool timed_out = false;
  int forwarded = 0;
  // With end_first: the signal the rest of the group still gets, when, and who must end first.
  int held_signal = 0;
  std::chrono::steady_clock::time_point held_until;
  std::vector<int> ending, stopped;
  const auto deliver = [&](int sig) {
    ending = signal_job(job, pid, sig, stopped);
    if (ending.empty()) return;
    held_signal = sig;
    held_until = std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(job.kill_grace_s));
  };
  double kill_at_s = 0;  // SIGKILL for the whole group after a time limit
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (g_forward_signal != 0) {
      forwarded = g_forward_signal;
      g_forward_signal = 0;
      if (held_signal == 0) deliver(forwarded);
    }
    if (held_signal != 0 && (std::all_of(ending.begin(), ending.end(), ended) ||
                             std::chrono::steady_clock::now() > held_until)) {
      for (int p : stopped) {
        kill(p, held_signal);
        kill(p, SIGCONT);
      }
      kill(-pid, held_signal);
      kill(-pid, SIGCONT);
      held_signal = 0;
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (job.time_limit_s > 0 && elapsed > job.time_limit_s && !timed_out) {
      if (job.on_time_limit) job.on_time_limit();
      timed_out = true;
      if (held_signal == 0) deliver(SIGTERM);
      kill_at_s = elapsed + job.kill_grace_s + (held_signal != 0 ? job.kill_grace_s : 0);
    }
    if (timed_out && elapsed > kill_at_s) {
      for (int p : stopped)
        kill(p, SIGKILL);
      kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  // A job ended by a signal passed on to it did not succeed, whatever its launcher says (MPICH's
  // Hydra sometimes exits 0 after SIGTERM).
  if (forwarded != 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return 128 + forwarded;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::optional<std::string> run_capturing_output(const std::vector<std::string>& args,
                                                double time_limit_s) {
  if (args.empty()) return std::nullopt;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    std::vector<char*> argv;
    for (const auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  ::close(out[1]);
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(time_limit_s));
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return text;
}

}  // namespace commgauge
