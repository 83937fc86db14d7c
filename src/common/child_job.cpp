#include "common/child_job.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace commgauge {

namespace {
volatile sig_atomic_t g_forward_signal = 0;
void remember_signal(int sig) {
  g_forward_signal = sig;
}
}  // namespace

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
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (g_forward_signal != 0) {
      kill(-pid, g_forward_signal);
      g_forward_signal = 0;
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (job.time_limit_s > 0 && elapsed > job.time_limit_s && !timed_out) {
      if (job.on_time_limit) job.on_time_limit();
      kill(-pid, SIGTERM);
      timed_out = true;
    }
    if (timed_out && elapsed > job.time_limit_s + job.kill_grace_s) kill(-pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace commgauge
