#include "model/cost.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::model {

namespace {
[[noreturn]] void too_costly(std::uint64_t bytes) {
  throw TimeRangeError(fmt::format(
      "a message of {} bytes costs more than {:.0f} hours on this link, beyond the range of the "
      "simulated clock",
      bytes, static_cast<double>(kMaxMessageCostPs.count()) / 3.6e15));
}

// Rounds n * per_byte_fs femtoseconds to the nearest picosecond (non-negative inputs). The
// product is formed in 128 bits (n < 2^64, per_byte_fs <= 10^18 after validate), so a cost
// past the bound is an error, never a wrapped time.
Picoseconds per_byte_ps(std::uint64_t n, std::int64_t per_byte_fs, std::uint64_t bytes) {
  std::int64_t fs = 0;
  if (n <= static_cast<std::uint64_t>(INT64_MAX) &&
      !__builtin_mul_overflow(static_cast<std::int64_t>(n), per_byte_fs, &fs) &&
      fs <= INT64_MAX - 500)
    return Picoseconds{(fs + 500) /
                       1000};  // the usual case; below 2^63 fs the result is below the bound
  __extension__ using Wide = unsigned __int128;
  const Wide ps = (Wide{n} * static_cast<std::uint64_t>(per_byte_fs) + 500) / 1000;
  if (ps > static_cast<Wide>(kMaxMessageCostPs.count())) too_costly(bytes);
  return Picoseconds{static_cast<std::int64_t>(ps)};
}
}  // namespace

Picoseconds checked_picoseconds(double picoseconds, const char* what) {
  if (!(std::abs(picoseconds) <= static_cast<double>(kMaxSimulatedTimePs.count())))
    throw TimeRangeError(fmt::format(
        "{} of {:.4g} us passes the range of the simulated clock (about {:.0f} days)", what,
        picoseconds / 1e6, static_cast<double>(kMaxSimulatedTimePs.count()) / 8.64e16));
  return Picoseconds{std::llround(picoseconds)};
}

Picoseconds to_picoseconds(double microseconds, const char* what) {
  return checked_picoseconds(microseconds * 1e6, what);
}
double to_microseconds(Picoseconds ps) {
  return static_cast<double>(ps.count()) / 1e6;
}

CostModel::CostModel(const LinkParams& link)
    : link_(link), latency_(to_picoseconds(link.effective_latency_us())) {
  ranges_.reserve(link.ranges.size());
  for (const auto& r : link.ranges) {
    ranges_.push_back(
        {r.from_bytes, to_picoseconds(r.send_overhead_us), to_picoseconds(r.recv_overhead_us),
         to_picoseconds(r.gap_us), to_picoseconds(r.unexpected_recv_us),
         to_picoseconds(r.crossing_recv_us), std::llround(r.send_overhead_per_byte_us * 1e9),
         std::llround(r.recv_overhead_per_byte_us * 1e9), std::llround(r.gap_per_byte_us * 1e9),
         std::llround(r.crossing_recv_per_byte_us * 1e9), r.rendezvous,
         r.acknowledged() || r.pulled(), r.pulled(), r.progress,
         to_picoseconds(r.control_send_or_default_us()),
         to_picoseconds(r.control_recv_us >= 0 ? r.control_recv_us : r.recv_overhead_us)});
    Range& c = ranges_.back();
    c.G_st_fs = std::llround(r.stream_gap_per_byte_us * 1e9);
    c.page_bytes = r.page_bytes;
    const std::int64_t largest_fs =
        std::max({c.O_s_fs, c.O_r_fs, c.G_fs, c.O_x_fs, c.G_st_fs, std::int64_t{1}});
    c.unchecked_up_to_bytes = static_cast<std::uint64_t>((INT64_MAX - 500) / largest_fs);
  }
}

MessageCost CostModel::self_message(std::uint64_t bytes) const {
  MessageCost c;
  c.bytes = bytes;
  c.send_overhead = to_picoseconds(link_.self_message_cost_us(bytes), "a message to oneself");
  return c;
}

MessageCost CostModel::message(std::uint64_t bytes, std::uint64_t page_offset_bytes) const {
  const std::size_t index = link_.range_index(bytes);
  const Range& r = ranges_[index];
  const std::uint64_t actual = bytes;
  // A range billed by pages charges its per-byte terms for the whole pages the send buffer
  // spans (LinkRange::page_bytes; a 0-byte message is billed for none, like 1 byte by the byte).
  if (r.page_bytes != 0) bytes = link_.ranges[index].billed_bytes(bytes, page_offset_bytes);
  // (k-1)G as in seeds 000 and 001 (seed 004 writes kG); a 0-byte message transfers like 1 byte.
  const std::uint64_t k_minus_1 = bytes > 0 ? bytes - 1 : 0;
  MessageCost c;
  c.bytes = actual;
  c.rendezvous = r.rendezvous;
  c.acknowledged = r.acknowledged;
  c.pulled = r.pulled;
  c.progress = r.progress;
  if (bytes <= r.unchecked_up_to_bytes) [[likely]] {
    // Every product below 2^63 fs, so every cost below 2^53 ps: no check needed (one compare
    // per message instead of four; measured in BM_MessageCost), hence the raw counts.
    const auto n = static_cast<std::int64_t>(bytes), n1 = static_cast<std::int64_t>(k_minus_1);
    c.send_overhead = Picoseconds{r.o_s.count() + (n * r.O_s_fs + 500) / 1000};
    c.transfer = Picoseconds{latency_.count() + (n1 * r.G_fs + 500) / 1000};
    c.recv_overhead = Picoseconds{r.o_r.count() + (n * r.O_r_fs + 500) / 1000};
    c.gap = Picoseconds{r.g.count() + (n1 * r.G_fs + 500) / 1000};
    if (r.G_st_fs != 0) c.gap += Picoseconds{(n * r.G_st_fs + 500) / 1000};
    // Most links have no O_x: a predictable branch instead of a division per message
    // (BM_MessageCost).
    c.crossing_recv =
        r.O_x_fs == 0 ? r.o_x : Picoseconds{r.o_x.count() + (n * r.O_x_fs + 500) / 1000};
  } else {
    c.send_overhead = r.o_s + per_byte_ps(bytes, r.O_s_fs, actual);
    c.transfer = latency_ + per_byte_ps(k_minus_1, r.G_fs, actual);
    c.recv_overhead = r.o_r + per_byte_ps(bytes, r.O_r_fs, actual);
    c.gap = r.g + per_byte_ps(k_minus_1, r.G_fs, actual) + per_byte_ps(bytes, r.G_st_fs, actual);
    c.crossing_recv = r.o_x + per_byte_ps(bytes, r.O_x_fs, actual);
  }
  c.latency = latency_;
  // Eager: data that arrived before its receive; rendezvous: a request that did (its data
  // arrives only after the match).
  c.unexpected_recv = r.o_u;
  c.control_send = r.ctrl_s;
  c.control_recv = r.ctrl_r;
  return c;
}

Picoseconds CostModel::blocking_one_way(std::uint64_t bytes) const {
  const MessageCost c = message(bytes);
  Picoseconds t = c.send_overhead + c.transfer + c.recv_overhead;
  if (c.pulled) return t + c.control_send + c.latency + c.control_recv + c.control_send;
  if (c.rendezvous) t += 2 * (c.control_send + c.latency + c.control_recv);
  // With acknowledgement the receiver sends the ack before it copies the data out (DCP: on its
  // own CPU, inside the call).
  if (c.acknowledged && c.progress == Progress::dependent) t += c.control_send;
  return t;
}

}  // namespace commgauge::model
