#include "net/tcp_session.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "commgauge/version.hpp"
#include "common/error.hpp"
#include "common/json_text.hpp"

namespace commgauge::net {

namespace {

nlohmann::json hello(const std::string& host) {
  return {{"hello", "commgauge"}, {"version", kVersion}, {"host", host}};
}

std::string seconds_text(std::chrono::milliseconds ms) {
  return fmt::format("{:g}", static_cast<double>(ms.count()) / 1000.0);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// LocalPeer

LocalPeer::LocalPeer(std::chrono::milliseconds connect_timeout,
                     std::chrono::milliseconds io_timeout) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw TransportError("cannot create a pipe for the local peer");
  const std::string announce = std::to_string(fds[1]);
  const std::vector<std::string> args = {"commgauge",
                                         "serve",
                                         "--bind",
                                         "127.0.0.1",
                                         "--port",
                                         "0",
                                         "--once",
                                         "--announce-fd",
                                         announce,
                                         "--io-timeout",
                                         seconds_text(io_timeout),
                                         "--accept-timeout",
                                         seconds_text(connect_timeout)};
  pid_ = fork();
  if (pid_ < 0) {
    close(fds[0]);
    close(fds[1]);
    throw TransportError("cannot start the local peer: fork failed");
  }
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // the peer never outlives its client
    close(fds[0]);
    fcntl(fds[1], F_SETFD, 0);  // the announce fd survives exec
    std::vector<char*> argv;
    for (const auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    std::fprintf(stderr, "commgauge: cannot start the local peer: %s\n", std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  pollfd p{fds[0], POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + connect_timeout;
  while (text.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[64];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  const long port = std::strtol(text.c_str(), nullptr, 10);
  if (port <= 0 || port > 65535) {
    reap(std::chrono::milliseconds(0));
    throw TransportError("the local TCP peer (commgauge serve) did not start");
  }
  port_ = static_cast<std::uint16_t>(port);
}

int LocalPeer::reap(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (r < 0) {
      pid_ = -1;
      return -1;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

LocalPeer::~LocalPeer() {
  reap(std::chrono::milliseconds(2000));
}

// ---------------------------------------------------------------------------------------------
// Client

TcpClientSession::TcpClientSession(const TcpOptions& options, const Job& job) {
  HostPort address;
  if (options.peer) {
    address = *options.peer;
  } else {
    local_peer_ = std::make_unique<LocalPeer>(options.connect_timeout, options.io_timeout);
    address = local_peer_->address();
  }
  Socket socket = connect_with_timeout(address, options.connect_timeout);
  const std::string me = host_name();
  transport_ = std::make_unique<TcpTransport>(std::move(socket), Role::source, options.io_timeout,
                                              nlohmann::json::object());
  nlohmann::json request = hello(me);
  request["job"] = {{"method", job.method}, {"params", job.params}};
  transport_->send_frame(FrameTag::control, json_text(request));
  const auto reply =
      nlohmann::json::parse(transport_->recv_frame(FrameTag::control), nullptr, false);
  if (!reply.is_object() || reply.value("hello", "") != "commgauge") {
    throw TransportError(fmt::format("{} is not a commgauge serve peer", address.text()));
  }
  transport_->set_context(
      {{"transport", "tcp"},
       {"hosts", {me, reply.value("host", "?")}},
       {"peer_address", address.text()},
       {"self_started_peer", local_peer_ != nullptr},
       {"tcp_nodelay", true},
       {"io_timeout_s", static_cast<double>(options.io_timeout.count()) / 1e3}});
}

void TcpClientSession::finish() {
  transport_->send_frame(FrameTag::control, json_text(nlohmann::json{{"bye", true}}));
  transport_->recv_frame(FrameTag::control);
  finished_ = true;
  if (local_peer_) local_peer_->reap(std::chrono::milliseconds(5000));
}

void TcpClientSession::abort(const std::string& message) noexcept {
  if (transport_ && !finished_) transport_->send_error_noexcept(message);
  finished_ = true;
}

TcpClientSession::~TcpClientSession() {
  abort("the client ended the session");
}

// ---------------------------------------------------------------------------------------------
// Server

namespace {

void serve_session(Socket socket, const ServeOptions& options, const JobRunner& runner) {
  const std::string client = peer_address(socket);
  TcpTransport transport(std::move(socket), Role::dest, options.io_timeout,
                         nlohmann::json{{"transport", "tcp"}, {"client", client}});
  try {
    const std::string text = transport.recv_frame(FrameTag::control);
    const auto request = nlohmann::json::parse(text, nullptr, false);
    if (!request.is_object() || request.value("hello", "") != "commgauge" ||
        !request.contains("job")) {
      throw TransportError("the client did not send a commgauge job");
    }
    if (request.value("version", "") != kVersion) {
      throw TransportError(fmt::format("version mismatch: client {}, server {}",
                                       request.value("version", "?"), kVersion));
    }
    Job job{request["job"].value("method", ""), request["job"].value("params", nlohmann::json{})};
    transport.send_frame(FrameTag::control, json_text(hello(host_name())));
    runner(transport, job);
    transport.recv_frame(FrameTag::control);  // the client's bye
    transport.send_frame(FrameTag::control, json_text(nlohmann::json{{"bye", true}}));
  } catch (const std::exception& e) {
    transport.send_error_noexcept(e.what());
    throw;
  }
}

}  // namespace

int serve(const ServeOptions& options, const JobRunner& runner) {
  Socket listener = listen_on(options.bind_host, options.port);
  const std::uint16_t port = local_port(listener);
  if (options.announce_fd >= 0) {
    const std::string line = std::to_string(port) + "\n";
    const ssize_t w = write(options.announce_fd, line.data(), line.size());
    const int error = errno;
    close(options.announce_fd);
    if (w != static_cast<ssize_t>(line.size()))
      throw TransportError(fmt::format("cannot announce the port on file descriptor {}: {}",
                                       options.announce_fd,
                                       w < 0 ? std::strerror(error) : "short write"));
  } else {
    std::fprintf(stderr, "commgauge serve: listening on %s:%u\n",
                 options.bind_host.empty() ? "*" : options.bind_host.c_str(), port);
  }
  for (;;) {
    // No client within --accept-timeout ends the server as a timeout (TransportError, exit 3).
    // A failed session ends it only with --once, and then as any command's failure ends: the
    // CLI maps the error to the exit status (3 for a transport failure, also a client that does
    // not speak the protocol; 2 for a job the client sent malformed, its input; 1 otherwise).
    Socket client = accept_with_timeout(listener, options.accept_timeout);
    try {
      serve_session(std::move(client), options, runner);
      if (options.once) return 0;
    } catch (const std::exception& e) {
      if (options.once) throw;
      std::fprintf(stderr, "commgauge serve: %s\n", e.what());
    }
  }
}

}  // namespace commgauge::net
