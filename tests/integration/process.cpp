#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace commgauge::testing {

namespace {

pid_t spawn(const std::vector<std::string>& argv, int out_fd, int err_fd) {
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setpgid(0, 0);
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, STDIN_FILENO);
    if (out_fd >= 0) dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

Outcome run(const std::vector<std::string>& argv, std::chrono::seconds limit) {
  int out[2];
  int err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = spawn(argv, out[1], err[1]);
  close(out[1]);
  close(err[1]);
  Outcome o;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  const auto deadline = start + limit;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      o.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? o.out : o.err).append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  o.exit_code = WIFEXITED(status) && !o.timed_out ? WEXITSTATUS(status) : -1;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

Background::Background(const std::vector<std::string>& argv) {
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  pid_ = spawn(argv, -1, err[1]);
  close(err[1]);
  err_fd_ = err[0];
}

Background::~Background() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (err_fd_ >= 0) close(err_fd_);
}

void Background::signal(int sig) const {
  kill(pid_, sig);
}

int Background::wait_for_exit(std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

std::string Background::wait_for_stderr(const std::string& text, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  pollfd p{err_fd_, POLLIN, 0};
  for (;;) {
    const auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      const std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      seen_ += line + '\n';
      if (line.find(text) != std::string::npos) return line;
      continue;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
    char buf[1024];
    const ssize_t n = read(err_fd_, buf, sizeof buf);
    if (n <= 0) return {};
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

std::string commgauge() {
  return COMMGAUGE_BIN;
}

std::vector<std::string> mpirun(int ranks, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                                   std::to_string(ranks)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(commgauge());
  return argv;
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

Outcome mount_tmpfs(const std::string& dir, const std::string& size) {
  return run({"mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir});
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

std::uint64_t tcp_bytes_received(const std::string& port) {
  const Outcome ss = run({"ss", "-tin"}, std::chrono::seconds(10));
  std::istringstream lines(ss.out);
  const std::string local = "127.0.0.1:" + port + " ";
  bool ours = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ESTAB", 0) == 0) {
      // "ESTAB recv-q send-q LOCAL PEER": ours if LOCAL is the port.
      std::istringstream fields(line);
      std::string state, recv_q, send_q, me;
      fields >> state >> recv_q >> send_q >> me;
      ours = me + " " == local;
      continue;
    }
    const auto at = line.find("bytes_received:");
    if (ours && at != std::string::npos)
      return std::stoull(line.substr(at + std::string("bytes_received:").size()));
  }
  return 0;
}

ServeStoppedAfter::ServeStoppedAfter(std::uint64_t bytes)
    : server_(std::make_unique<Background>(std::vector<std::string>{
          commgauge(), "serve", "--bind", "127.0.0.1", "--port", "0", "--once"})) {
  const std::string line = server_->wait_for_stderr("listening on", std::chrono::seconds(10));
  if (line.empty()) return;
  port_ = line.substr(line.rfind(':') + 1);
  stopper_ = std::thread([this, bytes] {
    while (!finished_ && tcp_bytes_received(port_) < bytes)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!finished_) server_->signal(SIGSTOP);
  });
}

void ServeStoppedAfter::finish() {
  finished_ = true;
  if (stopper_.joinable()) stopper_.join();
  server_->signal(SIGCONT);
}

ServeStoppedAfter::~ServeStoppedAfter() {
  finish();
}

Outcome run_against_peer_stopped_after(std::uint64_t bytes,
                                       const std::vector<std::string>& command) {
  ServeStoppedAfter server(bytes);
  if (server.port().empty()) throw std::runtime_error("commgauge serve did not start");
  std::vector<std::string> argv = {commgauge()};
  argv.insert(argv.end(), command.begin(), command.end());
  argv.insert(argv.end(),
              {"--transport", "tcp", "--peer", "127.0.0.1:" + server.port(), "--io-timeout", "3"});
  Outcome o = run(argv, kMeasuringLimit);
  server.finish();
  return o;
}

std::filesystem::path scratch_file(const std::string& name) {
  struct Owned {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("commgauge-test-" + std::to_string(::getpid()));
    Owned() { std::filesystem::create_directories(path); }
    ~Owned() {
      if (::testing::UnitTest::GetInstance()->Failed()) {
        std::fprintf(stderr, "a test failed: its files are kept in %s\n", path.c_str());
        return;
      }
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Owned dir;
  return dir.path / name;
}

ScratchPath::ScratchPath(const std::string& name)
    : path(std::filesystem::temp_directory_path() / name) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

ScratchPath::~ScratchPath() {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

char process_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? 0 : line[close + 2];
}

double cpu_seconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

nlohmann::json expect_one_rendezvous_switch_at(const nlohmann::json& switches,
                                               double eager_limit_bytes, const std::string& what) {
  std::vector<nlohmann::json> rendezvous;
  for (const auto& sw : switches)
    if (sw["rendezvous"].get<bool>()) rendezvous.push_back(sw);
  EXPECT_EQ(rendezvous.size(), 1u) << what << ": " << switches.dump();
  if (rendezvous.size() != 1) return nullptr;
  const auto& sw = rendezvous.front();
  const double first = sw["first_bytes"].get<double>();
  const double truth = eager_limit_bytes - 55;
  if (sw["exact"].get<bool>()) {
    EXPECT_EQ(first, truth) << what << ": " << sw.dump();
  } else {
    EXPECT_LT(sw["below_bytes"].get<double>(), truth) << what << ": " << sw.dump();
    EXPECT_GE(first, truth) << what << ": " << sw.dump();
    EXPECT_LE(first - sw["below_bytes"].get<double>(), 64) << what << ": " << sw.dump();
    std::printf("note: %s: switch bracketed to (%g, %g], not exact\n", what.c_str(),
                sw["below_bytes"].get<double>(), first);
  }
  EXPECT_TRUE(sw["confirmed"].get<bool>()) << what << ": " << sw.dump();
  return sw;
}

namespace {
// `rank`'s calls of `function` as `commgauge trace-dump` lists them: (start, duration) in seconds.
std::vector<std::pair<double, double>> dumped_calls(const std::filesystem::path& trace, int rank,
                                                    const std::string& function) {
  const Outcome o = run({commgauge(), "trace-dump", trace.string()});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  std::istringstream lines(o.out);
  std::string line;
  std::vector<std::pair<double, double>> calls;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    int r = -1;
    std::string index, duration, name;
    double start = 0;
    if (!(fields >> r >> index >> start >> duration >> name) || r != rank || name != function)
      continue;
    calls.emplace_back(start, std::stod(duration) * 1e-6);  // "15.583us"
  }
  return calls;
}
}  // namespace

double gaps_between_calls_s(const std::filesystem::path& trace, int rank,
                            const std::string& function) {
  double gaps = 0, previous_end = -1;
  for (const auto& [start, duration] : dumped_calls(trace, rank, function)) {
    if (previous_end >= 0) gaps += start - previous_end;
    previous_end = start + duration;
  }
  return gaps;
}

std::vector<double> call_durations_s(const std::filesystem::path& trace, int rank,
                                     const std::string& function) {
  std::vector<double> out;
  for (const auto& call : dumped_calls(trace, rank, function))
    out.push_back(call.second);
  return out;
}

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace commgauge::testing
