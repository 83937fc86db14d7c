#pragma once
// The TCP transport: one connection between the source (client) and the dest (the
// `commgauge serve` peer). Every message is a frame: a 16-byte header (magic, tag, length)
// and its payload. All I/O is nonblocking and driven by one progress engine, so the
// nonblocking calls are real and every wait is bounded by the I/O timeout.

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/socket.hpp"
#include "net/transport.hpp"

namespace commgauge::net {

/// Frame tags on the wire.
enum class FrameTag : std::uint32_t {
  data = 1,     ///< a message of the measurement
  barrier = 2,  ///< barrier token
  control = 3,  ///< session JSON (hello, job, bye)
  error = 4,    ///< the peer failed; payload is its message
};

class TcpTransport final : public Transport {
 public:
  /// `io_timeout`: the longest a call may wait without any byte moving before it fails.
  TcpTransport(Socket socket, Role role, std::chrono::milliseconds io_timeout,
               nlohmann::json context);

  std::string kind() const override { return "tcp"; }
  Role role() const override { return role_; }
  int rank() const override { return role_ == Role::source ? 0 : 1; }
  int peer() const override { return role_ == Role::source ? 1 : 0; }
  void send(std::size_t bytes) override;
  void recv(std::size_t bytes) override;
  Request isend(std::size_t bytes) override;
  Request irecv(std::size_t bytes) override;
  void wait(Request& request) override;
  bool test(Request& request) override;
  void barrier() override;
  double now_us() override { return clock_.now_us(); }
  void compute(double us) override { spin_for(clock_, us); }
  void send_value(std::uint64_t value) override;
  std::uint64_t recv_value() override;
  const Clock& clock() const override { return clock_; }
  Counters counters() const override { return counters_; }
  nlohmann::json context() const override { return context_; }
  void set_context(nlohmann::json context) { context_ = std::move(context); }

  /// Session frames (not counted): a text payload with the given tag.
  void send_frame(FrameTag tag, const std::string& payload);
  std::string recv_frame(FrameTag tag);
  /// Best effort: tells the peer why this side gives up (never throws).
  void send_error_noexcept(const std::string& message) noexcept;

 private:
  struct SendOp {
    std::uint64_t seq;
    unsigned char header[16];
    const unsigned char* payload;
    std::size_t length;
    std::size_t offset;  // over header + payload
  };
  struct RecvOp {
    std::uint64_t seq;
    FrameTag tag;
    std::uint64_t length;  // expected payload length
    bool any_length;       // session frames: any length, kept in `content`
    std::uint64_t got;     // payload bytes consumed
    bool have_header;
    bool keep;  // keep the payload (values and session frames; small)
    std::string content;
  };

  std::int64_t post_send(FrameTag tag, const unsigned char* payload, std::size_t length);
  std::int64_t post_recv(FrameTag tag, std::uint64_t length, bool any_length, bool keep);
  std::string take_content(std::int64_t id);
  bool send_done(std::uint64_t seq) const { return seq < sends_completed_; }
  bool recv_done(std::uint64_t seq) const { return seq < recvs_completed_; }
  bool done(std::int64_t id) const;
  bool progress();  // moves whatever it can without blocking; true if anything moved
  bool progress_sends();
  bool progress_recvs();
  bool fill_input();
  void wait_for(std::int64_t id);
  const unsigned char* zeros(std::size_t length);

  Socket socket_;
  Role role_;
  std::chrono::milliseconds io_timeout_;
  nlohmann::json context_;
  SteadyClock clock_;
  Counters counters_;

  std::deque<SendOp> sends_;
  std::deque<RecvOp> recvs_;
  std::uint64_t sends_posted_ = 0, sends_completed_ = 0;
  std::uint64_t recvs_posted_ = 0, recvs_completed_ = 0;
  std::unordered_map<std::uint64_t, std::string> kept_;  // payloads of completed kept receives

  std::vector<unsigned char> inbuf_;
  std::size_t in_begin_ = 0, in_end_ = 0;
  std::vector<unsigned char> zeros_;
  std::deque<std::string> frame_payloads_;  // payloads of session frames in flight
  unsigned char value_out_[8] = {};
};

}  // namespace commgauge::net
