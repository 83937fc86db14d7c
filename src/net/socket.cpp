#include "net/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::net {

namespace {

using DeadlineClock = std::chrono::steady_clock;

void set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

std::string errno_text(int err) {
  return std::strerror(err);
}

// One nonblocking connect attempt; returns 0 or an errno value.
int try_connect(const addrinfo* ai, DeadlineClock::time_point deadline, Socket& out) {
  Socket s(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
  if (!s.valid()) return errno;
  set_nonblocking(s.fd());
  if (connect(s.fd(), ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return errno;
    pollfd p{s.fd(), POLLOUT, 0};
    const int n = poll(&p, 1, remaining_ms(deadline));
    if (n == 0) return ETIMEDOUT;
    if (n < 0) return errno;
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return err;
  }
  set_nodelay(s.fd());
  out = std::move(s);
  return 0;
}

}  // namespace

int remaining_ms(DeadlineClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - DeadlineClock::now());
  return static_cast<int>(std::max<std::int64_t>(left.count(), 0));
}

Socket::~Socket() {
  if (fd_ >= 0) close(fd_);
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

std::string HostPort::text() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
}

HostPort parse_host_port(const std::string& text, const std::string& option) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw InputError(option, fmt::format("expected HOST:PORT, got \"{}\"", text));
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port_text = text.substr(colon + 1);
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (*end != '\0' || port < 1 || port > 65535) {
    throw InputError(option, fmt::format("port must be 1-65535, got \"{}\"", port_text));
  }
  return {host, static_cast<std::uint16_t>(port)};
}

Socket connect_with_timeout(const HostPort& peer, std::chrono::milliseconds timeout) {
  const auto deadline = DeadlineClock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string port = std::to_string(peer.port);
  if (const int rc = getaddrinfo(peer.host.c_str(), port.c_str(), &hints, &list); rc != 0) {
    throw TransportError(fmt::format("cannot resolve {}: {}", peer.host, gai_strerror(rc)));
  }
  int last_error = ETIMEDOUT;
  Socket result;
  for (;;) {
    for (const addrinfo* ai = list; ai != nullptr && !result.valid(); ai = ai->ai_next) {
      last_error = try_connect(ai, deadline, result);
    }
    if (result.valid() || DeadlineClock::now() >= deadline) break;
    // A peer that is starting up refuses for a moment; retry until the deadline.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(100, remaining_ms(deadline))));
  }
  freeaddrinfo(list);
  if (!result.valid()) {
    throw TransportError(fmt::format("cannot connect to {} within {:.1f} s: {}", peer.text(),
                                     static_cast<double>(timeout.count()) / 1000.0,
                                     errno_text(last_error)));
  }
  return result;
}

Socket listen_on(const std::string& bind_host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* list = nullptr;
  const std::string port_text = std::to_string(port);
  const char* host = bind_host.empty() ? nullptr : bind_host.c_str();
  if (const int rc = getaddrinfo(host, port_text.c_str(), &hints, &list); rc != 0) {
    // A name that does not exist (256.1.1.1, a typo) is the user's input; a resolver that
    // could not answer is the network's failure.
    const std::string message =
        fmt::format("cannot resolve the address to listen on, {}: {}", bind_host, gai_strerror(rc));
    if (rc == EAI_NONAME || rc == EAI_FAMILY || rc == EAI_SERVICE) throw InputError(message);
    throw TransportError(message);
  }
  int err = 0;
  Socket result;
  for (const addrinfo* ai = list; ai != nullptr && !result.valid(); ai = ai->ai_next) {
    Socket s(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!s.valid()) {
      err = errno;
      continue;
    }
    int one = 1;
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s.fd(), ai->ai_addr, ai->ai_addrlen) != 0 || listen(s.fd(), 16) != 0) {
      err = errno;
      continue;
    }
    result = std::move(s);
  }
  freeaddrinfo(list);
  if (!result.valid()) {
    const std::string message = fmt::format(
        "cannot listen on {}:{}: {}", bind_host.empty() ? "*" : bind_host, port, errno_text(err));
    // An address that is not this host's is the user's input; a port in use is not.
    if (err == EADDRNOTAVAIL) throw InputError(message);
    throw TransportError(message);
  }
  return result;
}

Socket accept_with_timeout(const Socket& listener, std::chrono::milliseconds timeout) {
  pollfd p{listener.fd(), POLLIN, 0};
  for (;;) {
    const int n = poll(&p, 1, timeout.count() < 0 ? -1 : static_cast<int>(timeout.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      throw TransportError(fmt::format("no client connected within {:.1f} s",
                                       static_cast<double>(timeout.count()) / 1000.0));
    }
    if (n < 0) throw TransportError("waiting for a client failed: " + errno_text(errno));
    break;
  }
  Socket s(accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!s.valid()) throw TransportError("accepting a client failed: " + errno_text(errno));
  set_nonblocking(s.fd());
  set_nodelay(s.fd());
  return s;
}

std::uint16_t local_port(const Socket& s) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

std::string peer_address(const Socket& s) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char host[NI_MAXHOST] = {};
  char port[NI_MAXSERV] = {};
  getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, port, sizeof port,
              NI_NUMERICHOST | NI_NUMERICSERV);
  return fmt::format("{}:{}", host, port);
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace commgauge::net
