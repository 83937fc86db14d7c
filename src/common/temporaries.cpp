#include "common/temporaries.hpp"

#include <csignal>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace commgauge {

namespace {

std::mutex registry_mutex;
std::map<std::string, bool>& registry() {  // path -> is a directory
  // Never destroyed: a signal may come while static objects are torn down at exit.
  static auto* paths = new std::map<std::string, bool>;
  return *paths;
}

int wake_pipe[2] = {-1, -1};
pid_t owner = 0;

// Async-signal-safe: a write to the pipe, or in a forked child the default action.
extern "C" void on_signal(int sig) {
  if (::getpid() != owner) {
    std::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  const unsigned char byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] const ssize_t n = ::write(wake_pipe[1], &byte, 1);
}

void remove_then_end() {
  unsigned char byte = 0;
  while (::read(wake_pipe[0], &byte, 1) != 1) {
  }
  // The registry stays locked until the process ends: no new temporary is created meanwhile.
  registry_mutex.lock();
  std::error_code ec;
  for (const auto& [path, directory] : registry()) {
    if (directory)
      std::filesystem::remove_all(path, ec);
    else
      ::unlink(path.c_str());
  }
  const int sig = byte;
  std::signal(sig, SIG_DFL);
  ::kill(::getpid(), sig);
  // Blocked in this thread's mask or the like: end with the shell's status for the signal.
  ::sleep(5);
  ::_exit(128 + sig);
}

}  // namespace

void register_temporary(const std::string& path, bool directory) {
  const std::lock_guard lock(registry_mutex);
  registry()[path] = directory;
}

void forget_temporary(const std::string& path) {
  const std::lock_guard lock(registry_mutex);
  registry().erase(path);
}

void remove_temporaries_on_signals() {
  if (owner != 0) return;
  if (::pipe2(wake_pipe, O_CLOEXEC) != 0) return;  // without it, signals keep their default
  owner = ::getpid();
  std::thread(remove_then_end).detach();
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace commgauge
