#pragma once
// Thin RAII wrappers over POSIX TCP sockets, with timeouts on everything that can wait.

#include <chrono>
#include <cstdint>
#include <string>

namespace commgauge::net {

/// An owned file descriptor.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
  std::string text() const;
};

/// Parses "HOST:PORT" (or "[v6addr]:PORT"). Throws InputError naming `option`.
HostPort parse_host_port(const std::string& text, const std::string& option);

/// Connects, retrying refused connections until `timeout` has passed; the socket is
/// nonblocking with TCP_NODELAY. Throws TransportError naming the peer and the reason.
Socket connect_with_timeout(const HostPort& peer, std::chrono::milliseconds timeout);

/// A listening socket on bind_host:port (port 0: any free port).
Socket listen_on(const std::string& bind_host, std::uint16_t port);

/// Waits for one connection; timeout < 0 waits forever. Throws TransportError on timeout.
Socket accept_with_timeout(const Socket& listener, std::chrono::milliseconds timeout);

/// Milliseconds left until `deadline`, at least 0 (a poll(2) timeout).
int remaining_ms(std::chrono::steady_clock::time_point deadline);

std::uint16_t local_port(const Socket& s);
/// Numeric address of the connected peer.
std::string peer_address(const Socket& s);

/// Host name of this machine.
std::string host_name();

}  // namespace commgauge::net
