#pragma once
// Sessions over the TCP transport: the client (source) connects to `commgauge serve` (dest),
// names the method it wants to run and its parameters, both sides run it, and the session
// ends with an exchange that tells each side the other finished cleanly.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <sys/types.h>
#include <nlohmann/json.hpp>

#include "net/socket.hpp"
#include "net/tcp_transport.hpp"

namespace commgauge::net {

/// What the source asks the dest to run: a method of the registry and its parameters.
struct Job {
  std::string method;
  nlohmann::json params;
};

struct TcpOptions {
  std::optional<HostPort> peer;  ///< empty: start a peer process on 127.0.0.1
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds io_timeout{10000};
};

/// A `commgauge serve --once` process started on 127.0.0.1 by the client itself.
class LocalPeer {
 public:
  LocalPeer(std::chrono::milliseconds connect_timeout, std::chrono::milliseconds io_timeout);
  ~LocalPeer();
  LocalPeer(const LocalPeer&) = delete;
  LocalPeer& operator=(const LocalPeer&) = delete;
  HostPort address() const { return {"127.0.0.1", port_}; }
  /// Waits up to `timeout` for the peer to exit; returns its exit status (or -1: killed).
  int reap(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

class TcpClientSession {
 public:
  /// Connects (starting a local peer if options.peer is empty) and sends the job.
  TcpClientSession(const TcpOptions& options, const Job& job);
  ~TcpClientSession();
  TcpClientSession(const TcpClientSession&) = delete;
  TcpClientSession& operator=(const TcpClientSession&) = delete;

  TcpTransport& transport() { return *transport_; }
  /// Ends the session cleanly; throws if the peer reports a failure.
  void finish();
  /// Tells the peer this side failed (called on the error path; never throws).
  void abort(const std::string& message) noexcept;

 private:
  std::unique_ptr<LocalPeer> local_peer_;
  std::unique_ptr<TcpTransport> transport_;
  bool finished_ = false;
};

/// Runs the dest side of a job; throws to report a failure to the client.
using JobRunner = std::function<void(Transport&, const Job&)>;

struct ServeOptions {
  std::string bind_host;  ///< empty: all interfaces
  std::uint16_t port = 0;
  bool once = false;     ///< serve one session, then exit with its status
  int announce_fd = -1;  ///< write the bound port here (used by LocalPeer)
  std::chrono::milliseconds io_timeout{10000};
  std::chrono::milliseconds accept_timeout{-1};  ///< < 0: wait forever
};

/// The `commgauge serve` loop. Returns 0; throws what ends it (no client within accept_timeout,
/// or with `once` the session's failure), which the CLI maps to the exit status.
int serve(const ServeOptions& options, const JobRunner& runner);

}  // namespace commgauge::net
