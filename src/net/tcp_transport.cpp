#include "net/tcp_transport.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::net {

namespace {

constexpr std::uint32_t kMagic = 0x50544743;  // "CGTP" little-endian
constexpr std::size_t kHeaderBytes = 16;
constexpr std::size_t kInputBuffer = 256 * 1024;
constexpr std::uint64_t kMaxSessionFrame = 16 * 1024 * 1024;
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(200);

void put_u32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_u64(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

const char* tag_name(FrameTag t) {
  switch (t) {
    case FrameTag::data:
      return "data";
    case FrameTag::barrier:
      return "barrier";
    case FrameTag::control:
      return "control";
    case FrameTag::error:
      return "error";
  }
  return "unknown";
}

std::int64_t send_id(std::uint64_t seq) {
  return static_cast<std::int64_t>(2 * seq);
}
std::int64_t recv_id(std::uint64_t seq) {
  return static_cast<std::int64_t>(2 * seq + 1);
}

}  // namespace

TcpTransport::TcpTransport(Socket socket, Role role, std::chrono::milliseconds io_timeout,
                           nlohmann::json context)
    : socket_(std::move(socket)),
      role_(role),
      io_timeout_(io_timeout),
      context_(std::move(context)),
      inbuf_(kInputBuffer) {}

const unsigned char* TcpTransport::zeros(std::size_t length) {
  if (zeros_.size() < length) zeros_.assign(length, 0);
  return zeros_.data();
}

std::int64_t TcpTransport::post_send(FrameTag tag, const unsigned char* payload,
                                     std::size_t length) {
  SendOp op{};
  op.seq = sends_posted_++;
  put_u32(op.header, kMagic);
  put_u32(op.header + 4, static_cast<std::uint32_t>(tag));
  put_u64(op.header + 8, length);
  op.payload = payload;
  op.length = length;
  op.offset = 0;
  sends_.push_back(op);
  progress();
  return send_id(op.seq);
}

std::int64_t TcpTransport::post_recv(FrameTag tag, std::uint64_t length, bool any_length,
                                     bool keep) {
  RecvOp op{};
  op.seq = recvs_posted_++;
  op.tag = tag;
  op.length = length;
  op.any_length = any_length;
  op.keep = keep;
  const std::int64_t id = recv_id(op.seq);
  recvs_.push_back(std::move(op));
  progress();
  return id;
}

bool TcpTransport::done(std::int64_t id) const {
  const auto seq = static_cast<std::uint64_t>(id / 2);
  return id % 2 == 0 ? send_done(seq) : recv_done(seq);
}

bool TcpTransport::progress() {
  bool moved = false;
  for (;;) {
    const bool s = progress_sends();
    const bool r = progress_recvs();
    if (!s && !r) return moved;
    moved = true;
  }
}

bool TcpTransport::progress_sends() {
  bool moved = false;
  while (!sends_.empty()) {
    SendOp& op = sends_.front();
    iovec iov[2];
    int n = 0;
    if (op.offset < kHeaderBytes) {
      iov[n++] = {op.header + op.offset, kHeaderBytes - op.offset};
      if (op.length > 0) iov[n++] = {const_cast<unsigned char*>(op.payload), op.length};
    } else {
      const std::size_t done_payload = op.offset - kHeaderBytes;
      iov[n++] = {const_cast<unsigned char*>(op.payload) + done_payload, op.length - done_payload};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(n);
    const ssize_t w = sendmsg(socket_.fd(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return moved;
      throw TransportError(fmt::format("sending to the TCP peer failed: {}", std::strerror(errno)));
    }
    moved = moved || w > 0;
    op.offset += static_cast<std::size_t>(w);
    if (op.offset < kHeaderBytes + op.length) return moved;
    sends_.pop_front();
    ++sends_completed_;
  }
  return moved;
}

bool TcpTransport::fill_input() {
  if (in_begin_ == in_end_) in_begin_ = in_end_ = 0;
  if (in_end_ == inbuf_.size()) {
    if (in_begin_ == 0) return false;  // full of unread data
    std::memmove(inbuf_.data(), inbuf_.data() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
  }
  const ssize_t r =
      ::recv(socket_.fd(), inbuf_.data() + in_end_, inbuf_.size() - in_end_, MSG_DONTWAIT);
  if (r == 0) throw TransportError("the TCP peer closed the connection");
  if (r < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
    throw TransportError(
        fmt::format("receiving from the TCP peer failed: {}", std::strerror(errno)));
  }
  in_end_ += static_cast<std::size_t>(r);
  return true;
}

bool TcpTransport::progress_recvs() {
  bool moved = false;
  while (!recvs_.empty()) {
    RecvOp& op = recvs_.front();
    if (!op.have_header) {
      while (in_end_ - in_begin_ < kHeaderBytes) {
        if (!fill_input()) return moved;
        moved = true;
      }
      const unsigned char* h = inbuf_.data() + in_begin_;
      const std::uint32_t magic = get_u32(h);
      const auto tag = static_cast<FrameTag>(get_u32(h + 4));
      const std::uint64_t length = get_u64(h + 8);
      if (magic != kMagic) throw TransportError("TCP peer sent a malformed frame (bad magic)");
      if (tag == FrameTag::error) {
        // The peer reports its own failure; its message is the payload.
        op.tag = FrameTag::error;
        op.length = std::min(length, kMaxSessionFrame);
        op.any_length = true;
      } else if (tag != op.tag) {
        throw TransportError(fmt::format("TCP protocol error: expected a {} frame, got a {} frame",
                                         tag_name(op.tag), tag_name(tag)));
      } else if (op.any_length) {
        if (length > kMaxSessionFrame) throw TransportError("TCP peer sent an oversized frame");
        op.length = length;
      } else if (length != op.length) {
        throw TransportError(
            fmt::format("message size mismatch: receive posted for {} bytes, the "
                        "peer sent {} bytes",
                        op.length, length));
      }
      in_begin_ += kHeaderBytes;
      op.have_header = true;
      moved = true;
    }
    while (op.got < op.length) {
      if (in_begin_ == in_end_ && !fill_input()) return moved;
      const std::size_t take = static_cast<std::size_t>(
          std::min<std::uint64_t>(op.length - op.got, in_end_ - in_begin_));
      if (op.keep || op.tag == FrameTag::error) {
        op.content.append(reinterpret_cast<const char*>(inbuf_.data() + in_begin_), take);
      }
      in_begin_ += take;
      op.got += take;
      moved = true;
    }
    if (op.tag == FrameTag::error) {
      throw TransportError("the TCP peer failed: " + op.content);
    }
    if (op.keep) kept_[op.seq] = std::move(op.content);
    recvs_.pop_front();
    ++recvs_completed_;
    moved = true;
  }
  return moved;
}

void TcpTransport::wait_for(std::int64_t id) {
  auto last_progress = std::chrono::steady_clock::now();
  while (!done(id)) {
    if (progress()) {
      last_progress = std::chrono::steady_clock::now();
      continue;
    }
    const auto idle_time = std::chrono::steady_clock::now() - last_progress;
    // Busy-poll briefly before sleeping: a wake-up from poll() costs tens of microseconds,
    // more than a whole small-message round trip on loopback.
    if (idle_time < kSpinBeforeSleep) continue;
    const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(idle_time);
    if (idle >= io_timeout_) {
      throw TransportError(fmt::format("the TCP peer did not respond for {:.1f} s (I/O timeout)",
                                       static_cast<double>(io_timeout_.count()) / 1000.0));
    }
    pollfd p{socket_.fd(), 0, 0};
    if (!sends_.empty()) p.events |= POLLOUT;
    if (!recvs_.empty()) p.events |= POLLIN;
    const int n = poll(&p, 1, static_cast<int>((io_timeout_ - idle).count()));
    if (n < 0 && errno != EINTR) {
      throw TransportError(fmt::format("waiting on the TCP peer failed: {}", std::strerror(errno)));
    }
    if (n > 0 && (p.revents & (POLLERR | POLLNVAL))) {
      throw TransportError("the connection to the TCP peer failed");
    }
  }
}

std::string TcpTransport::take_content(std::int64_t id) {
  auto it = kept_.find(static_cast<std::uint64_t>(id / 2));
  if (it == kept_.end()) return {};
  std::string content = std::move(it->second);
  kept_.erase(it);
  return content;
}

void TcpTransport::send(std::size_t bytes) {
  Request r = isend(bytes);
  wait(r);
}

void TcpTransport::recv(std::size_t bytes) {
  Request r = irecv(bytes);
  wait(r);
}

Request TcpTransport::isend(std::size_t bytes) {
  ++counters_.messages;
  counters_.bytes += bytes;
  return {post_send(FrameTag::data, zeros(bytes), bytes)};
}

Request TcpTransport::irecv(std::size_t bytes) {
  return {post_recv(FrameTag::data, bytes, false, false)};
}

void TcpTransport::wait(Request& request) {
  if (!request.active()) throw TransportError("wait on an inactive request");
  wait_for(request.id);
  request.id = -1;
}

bool TcpTransport::test(Request& request) {
  if (!request.active()) throw TransportError("test on an inactive request");
  progress();
  if (!done(request.id)) return false;
  request.id = -1;
  return true;
}

void TcpTransport::barrier() {
  const std::int64_t s = post_send(FrameTag::barrier, nullptr, 0);
  const std::int64_t r = post_recv(FrameTag::barrier, 0, false, false);
  wait_for(r);
  wait_for(s);
}

void TcpTransport::send_value(std::uint64_t value) {
  put_u64(value_out_, value);
  ++counters_.messages;
  counters_.bytes += sizeof value;
  wait_for(post_send(FrameTag::data, value_out_, sizeof value));
}

std::uint64_t TcpTransport::recv_value() {
  const std::int64_t id = post_recv(FrameTag::data, sizeof(std::uint64_t), false, true);
  wait_for(id);
  const std::string content = take_content(id);
  return get_u64(reinterpret_cast<const unsigned char*>(content.data()));
}

void TcpTransport::send_frame(FrameTag tag, const std::string& payload) {
  frame_payloads_.push_back(payload);
  const auto& p = frame_payloads_.back();
  wait_for(post_send(tag, reinterpret_cast<const unsigned char*>(p.data()), p.size()));
  frame_payloads_.pop_front();
}

std::string TcpTransport::recv_frame(FrameTag tag) {
  const std::int64_t id = post_recv(tag, 0, true, true);
  wait_for(id);
  return take_content(id);
}

void TcpTransport::send_error_noexcept(const std::string& message) noexcept {
  try {
    // Only if nothing is half-written: a frame boundary is needed for the peer to parse it.
    if (!sends_.empty() && sends_.front().offset > 0) return;
    sends_.clear();
    unsigned char header[kHeaderBytes];
    put_u32(header, kMagic);
    put_u32(header + 4, static_cast<std::uint32_t>(FrameTag::error));
    put_u64(header + 8, message.size());
    std::string frame(reinterpret_cast<const char*>(header), kHeaderBytes);
    frame += message;
    [[maybe_unused]] const ssize_t w =
        ::send(socket_.fd(), frame.data(), frame.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  } catch (...) {
  }
}

}  // namespace commgauge::net
