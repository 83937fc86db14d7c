#include "net/tcp_group.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/json_text.hpp"

namespace commgauge::net {

namespace {

using DeadlineClock = std::chrono::steady_clock;
constexpr std::uint32_t kDataMagic = 0x44544743;  // "CGTD"

// Writes all of `data` before the deadline (the socket is nonblocking).
void write_all(int fd, const void* data, std::size_t n, DeadlineClock::time_point deadline,
               const char* what) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w > 0) {
      p += w;
      n -= static_cast<std::size_t>(w);
      continue;
    }
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      throw TransportError(fmt::format("{}: sending failed: {}", what, std::strerror(errno)));
    }
    pollfd pf{fd, POLLOUT, 0};
    if (poll(&pf, 1, remaining_ms(deadline)) == 0) {
      throw TransportError(fmt::format("{}: the peer took no data before the I/O timeout", what));
    }
  }
}

// Reads exactly n bytes before the deadline.
void read_all(int fd, void* data, std::size_t n, DeadlineClock::time_point deadline,
              const char* what) {
  auto* p = static_cast<unsigned char*>(data);
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, MSG_DONTWAIT);
    if (r > 0) {
      p += r;
      n -= static_cast<std::size_t>(r);
      continue;
    }
    if (r == 0) throw TransportError(fmt::format("{}: the peer closed the connection", what));
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      throw TransportError(fmt::format("{}: receiving failed: {}", what, std::strerror(errno)));
    }
    pollfd pf{fd, POLLIN, 0};
    if (poll(&pf, 1, remaining_ms(deadline)) == 0) {
      throw TransportError(fmt::format("{}: nothing arrived before the I/O timeout", what));
    }
  }
}

void send_json(int fd, const nlohmann::json& j, std::chrono::milliseconds timeout) {
  const std::string text = json_text(j);
  const std::uint32_t len = static_cast<std::uint32_t>(text.size());
  const auto deadline = DeadlineClock::now() + timeout;
  write_all(fd, &len, sizeof len, deadline, "control channel");
  write_all(fd, text.data(), text.size(), deadline, "control channel");
}

nlohmann::json recv_json(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = DeadlineClock::now() + timeout;
  std::uint32_t len = 0;
  read_all(fd, &len, sizeof len, deadline, "control channel");
  if (len > (64u << 20)) throw TransportError("control channel: oversized message");
  std::string text(len, '\0');
  read_all(fd, text.data(), len, deadline, "control channel");
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw TransportError("control channel: malformed message");
  if (j.value("type", "") == "error") {
    throw TransportError("a task failed: " + j.value("message", std::string("?")));
  }
  return j;
}

struct DataHeader {
  std::uint32_t magic;
  std::uint32_t sender;
  std::uint64_t length;
};

std::string self_exe() {
  char path[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : "commgauge";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Coordinator

struct TcpGroupCoordinator::Member {
  pid_t pid = -1;
  Socket control;
  std::string host;
  HostPort data;
  int node = 0;
};

TcpGroupCoordinator::TcpGroupCoordinator(const std::vector<int>& task_nodes,
                                         const std::vector<TcpNode>& nodes,
                                         const nlohmann::json& job, const TcpGroupOptions& o)
    : options_(o) {
  Socket listener = listen_on(o.coordinator_bind, 0);
  const std::uint16_t port = local_port(listener);
  const std::string exe = self_exe();
  for (std::size_t k = 0; k < task_nodes.size(); ++k) {
    const int node = task_nodes[k];
    if (node < 0 || static_cast<std::size_t>(node) >= nodes.size()) {
      throw InputError("--tcp-nodes", fmt::format("no address is given for node {}", node));
    }
    const TcpNode& where = nodes[static_cast<std::size_t>(node)];
    std::vector<std::string> args;
    if (!where.netns.empty()) args = {"ip", "netns", "exec", where.netns};
    args.insert(args.end(),
                {exe, "share-task", "--coordinator", fmt::format("{}:{}", o.coordinator_bind, port),
                 "--rank", std::to_string(k + 1), "--bind", where.address, "--io-timeout",
                 fmt::format("{:g}", static_cast<double>(o.io_timeout.count()) / 1000)});
    auto m = std::make_unique<Member>();
    m->node = node;
    m->pid = fork();
    if (m->pid < 0) throw TransportError("cannot start a task process: fork failed");
    if (m->pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      std::vector<char*> argv;
      for (auto& a : args)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      std::fprintf(stderr, "commgauge: cannot start %s: %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    members_.push_back(std::move(m));
  }
  // Every task connects and says which rank it is and where it listens for data.
  const auto deadline = DeadlineClock::now() + o.connect_timeout;
  for (std::size_t k = 0; k < members_.size(); ++k) {
    Socket s = accept_with_timeout(listener, std::chrono::milliseconds(remaining_ms(deadline)));
    const auto hello = recv_json(s.fd(), o.io_timeout);
    const int r = hello.value("rank", 0);
    if (r < 1 || static_cast<std::size_t>(r) > members_.size() ||
        members_[static_cast<std::size_t>(r - 1)]->control.valid()) {
      throw TransportError("a task process announced an unexpected rank");
    }
    Member& m = *members_[static_cast<std::size_t>(r - 1)];
    m.control = std::move(s);
    m.host = hello.value("host", "?");
    m.data = {nodes[static_cast<std::size_t>(m.node)].address,
              static_cast<std::uint16_t>(hello.value("data_port", 0))};
  }
  hosts_.push_back(host_name());
  nlohmann::json data = nlohmann::json::array({nullptr});
  for (const auto& m : members_) {
    hosts_.push_back(fmt::format("node{}@{}", m->node, m->data.host));
    data.push_back(m->data.text());
  }
  for (const auto& m : members_) {
    send_json(m->control.fd(), {{"type", "table"}, {"hosts", hosts_}, {"data", data}, {"job", job}},
              o.io_timeout);
  }
  context_ = {{"transport", "tcp"},
              {"hosts", hosts_},
              {"coordinator", fmt::format("{}:{}", o.coordinator_bind, port)}};
}

TcpGroupCoordinator::~TcpGroupCoordinator() {
  // A stopped task (SIGSTOP) holds SIGTERM pending and never exits: it is continued so that it
  // can, and killed if it has not within a second; waiting without a bound hung for 616 s.
  for (auto& m : members_) {
    if (m->pid > 0) {
      kill(m->pid, SIGTERM);
      kill(m->pid, SIGCONT);
    }
  }
  const auto deadline = DeadlineClock::now() + std::chrono::seconds(1);
  for (auto& m : members_) {
    if (m->pid <= 0) continue;
    while (waitpid(m->pid, nullptr, WNOHANG) == 0) {
      if (DeadlineClock::now() >= deadline) {
        kill(m->pid, SIGKILL);
        waitpid(m->pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    m->pid = -1;
  }
}

namespace {
// What a task sent on its control channel; a task that stops answering is named in the error.
nlohmann::json recv_from_task(std::size_t k, int fd, pid_t pid, const std::string& host,
                              std::chrono::milliseconds timeout) {
  try {
    return recv_json(fd, timeout);
  } catch (const TransportError& e) {
    throw TransportError(
        fmt::format("task {} (pid {} on node {}): {}", k + 1, pid, host, e.what()));
  }
}
}  // namespace

void TcpGroupCoordinator::barrier() {
  for (std::size_t k = 0; k < members_.size(); ++k) {
    const auto& m = members_[k];
    const auto j = recv_from_task(k, m->control.fd(), m->pid, m->host, options_.io_timeout);
    if (j.value("type", "") != "barrier") throw TransportError("task out of step at a barrier");
  }
  for (auto& m : members_)
    send_json(m->control.fd(), {{"type", "go"}}, options_.io_timeout);
}

void TcpGroupCoordinator::send(int, std::size_t) {
  throw std::logic_error("the coordinator has no task");
}

int TcpGroupCoordinator::recv_any(std::size_t) {
  throw std::logic_error("the coordinator has no task");
}

double TcpGroupCoordinator::now_us() {
  return std::chrono::duration<double, std::micro>(DeadlineClock::now().time_since_epoch()).count();
}

std::vector<std::vector<double>> TcpGroupCoordinator::gather(const std::vector<double>& mine) {
  std::vector<std::vector<double>> all = {mine};
  for (std::size_t k = 0; k < members_.size(); ++k) {
    const auto& m = members_[k];
    const auto j = recv_from_task(k, m->control.fd(), m->pid, m->host, options_.io_timeout);
    if (j.value("type", "") != "gather") throw TransportError("task out of step at the gather");
    all.push_back(j.at("values").get<std::vector<double>>());
  }
  return all;
}

nlohmann::json TcpGroupCoordinator::context() const {
  return context_;
}

bool TcpGroupCoordinator::finish() {
  bool ok = true;
  for (auto& m : members_) {
    if (m->pid <= 0) continue;
    int status = 0;
    const auto deadline = DeadlineClock::now() + options_.io_timeout;
    pid_t r = 0;
    while ((r = waitpid(m->pid, &status, WNOHANG)) == 0 && DeadlineClock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (r == 0) {
      kill(m->pid, SIGKILL);
      waitpid(m->pid, &status, 0);
      ok = false;
    } else {
      ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    m->pid = -1;
  }
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Member

struct TcpGroupMember::Incoming {
  Socket socket;
  DataHeader header{};
  std::size_t header_got = 0;
  std::uint64_t payload_got = 0;
  bool closed = false;
};

TcpGroupMember::TcpGroupMember(const HostPort& coordinator, int rank,
                               const std::string& bind_address, const TcpGroupOptions& o)
    : rank_(rank), options_(o) {
  listener_ = listen_on(bind_address, 0);
  control_ = connect_with_timeout(coordinator, o.connect_timeout);
  send_json(control_.fd(),
            {{"type", "hello"},
             {"rank", rank},
             {"data_port", local_port(listener_)},
             {"host", host_name()}},
            o.io_timeout);
  const auto table = recv_json(control_.fd(), o.connect_timeout + o.io_timeout);
  hosts_ = table.at("hosts").get<std::vector<std::string>>();
  size_ = static_cast<int>(hosts_.size());
  for (const auto& d : table.at("data")) {
    data_addresses_.push_back(d.is_null() ? HostPort{}
                                          : parse_host_port(d.get<std::string>(), "data address"));
  }
  job_ = table.at("job");
  outgoing_.resize(static_cast<std::size_t>(size_));
}

TcpGroupMember::~TcpGroupMember() = default;

void TcpGroupMember::barrier() {
  send_json(control_.fd(), {{"type", "barrier"}}, options_.io_timeout);
  const auto j = recv_json(control_.fd(), options_.io_timeout);
  if (j.value("type", "") != "go") throw TransportError("coordinator out of step at a barrier");
}

double TcpGroupMember::now_us() {
  return std::chrono::duration<double, std::micro>(DeadlineClock::now().time_since_epoch()).count();
}

std::vector<std::vector<double>> TcpGroupMember::gather(const std::vector<double>& mine) {
  send_json(control_.fd(), {{"type", "gather"}, {"values", mine}}, options_.io_timeout);
  return {};
}

void TcpGroupMember::send(int to, std::size_t bytes) {
  Socket& s = outgoing_.at(static_cast<std::size_t>(to));
  if (!s.valid())
    s = connect_with_timeout(data_addresses_.at(static_cast<std::size_t>(to)),
                             options_.connect_timeout);
  const DataHeader h{kDataMagic, static_cast<std::uint32_t>(rank_), bytes};
  // The I/O timeout bounds each wait without progress, not the whole transfer.
  write_all(s.fd(), &h, sizeof h, DeadlineClock::now() + options_.io_timeout, "data");
  if (buffer_.size() < (1u << 20)) buffer_.assign(1u << 20, 0);
  for (std::size_t left = bytes; left > 0;) {
    const std::size_t chunk = std::min<std::size_t>(left, buffer_.size());
    write_all(s.fd(), buffer_.data(), chunk, DeadlineClock::now() + options_.io_timeout, "data");
    left -= chunk;
  }
  DataHeader ack{};
  read_all(s.fd(), &ack, sizeof ack, DeadlineClock::now() + options_.io_timeout, "acknowledgement");
  if (ack.magic != kDataMagic || ack.length != bytes)
    throw TransportError("malformed acknowledgement");
}

int TcpGroupMember::recv_any(std::size_t bytes) {
  if (buffer_.size() < (1u << 20)) buffer_.assign(1u << 20, 0);
  for (;;) {
    std::vector<pollfd> fds = {{listener_.fd(), POLLIN, 0}};
    for (const auto& in : incoming_)
      fds.push_back({in->socket.fd(), POLLIN, 0});
    const int n = poll(fds.data(), fds.size(), static_cast<int>(options_.io_timeout.count()));
    if (n == 0)
      throw TransportError("no message arrived before the I/O timeout (a sender is missing)");
    if (n < 0) {
      if (errno == EINTR) continue;
      throw TransportError(fmt::format("waiting for data failed: {}", std::strerror(errno)));
    }
    if (fds[0].revents & POLLIN) {
      auto in = std::make_unique<Incoming>();
      in->socket = accept_with_timeout(listener_, options_.io_timeout);
      incoming_.push_back(std::move(in));
    }
    // Read every connection that has data, so concurrent senders share this node's link.
    for (std::size_t k = 0; k + 1 < fds.size(); ++k) {
      if (!(fds[k + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Incoming& in = *incoming_[k];
      for (;;) {
        ssize_t r = 0;
        if (in.header_got < sizeof in.header) {
          r = ::recv(in.socket.fd(), reinterpret_cast<unsigned char*>(&in.header) + in.header_got,
                     sizeof in.header - in.header_got, MSG_DONTWAIT);
          if (r > 0) {
            in.header_got += static_cast<std::size_t>(r);
            if (in.header_got == sizeof in.header) {
              if (in.header.magic != kDataMagic) throw TransportError("malformed data frame");
              if (in.header.length != bytes) {
                throw TransportError(fmt::format("message of {} bytes where {} were expected",
                                                 in.header.length, bytes));
              }
            }
            continue;
          }
        } else if (in.payload_got < in.header.length) {
          r = ::recv(in.socket.fd(), buffer_.data(),
                     std::min<std::uint64_t>(in.header.length - in.payload_got, buffer_.size()),
                     MSG_DONTWAIT);
          if (r > 0) {
            in.payload_got += static_cast<std::uint64_t>(r);
            continue;
          }
        } else {
          // All of it is here: acknowledge, so the sender's blocking send ends now.
          const DataHeader ack{kDataMagic, static_cast<std::uint32_t>(rank_), in.header.length};
          write_all(in.socket.fd(), &ack, sizeof ack, DeadlineClock::now() + options_.io_timeout,
                    "acknowledgement");
          in.header_got = 0;
          in.payload_got = 0;
          return static_cast<int>(in.header.sender);
        }
        if (r == 0) {
          if (in.header_got == 0) {  // the sender is done and closed its connection
            in.closed = true;
            break;
          }
          throw TransportError("a sender closed its connection in the middle of a message");
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
        throw TransportError(fmt::format("receiving data failed: {}", std::strerror(errno)));
      }
    }
    std::erase_if(incoming_, [](const std::unique_ptr<Incoming>& in) { return in->closed; });
  }
}

}  // namespace commgauge::net
