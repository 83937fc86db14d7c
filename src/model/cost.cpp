#include "model/cost.hpp"

#include <cmath>

namespace commgauge::model {

namespace {
// Rounds n * per_byte_fs femtoseconds to the nearest picosecond (non-negative inputs).
Picoseconds per_byte_ps(std::uint64_t n, std::int64_t per_byte_fs) {
  const auto fs = static_cast<std::int64_t>(n) * per_byte_fs;
  return (fs + 500) / 1000;
}
}  // namespace

Picoseconds to_picoseconds(double microseconds) {
  return std::llround(microseconds * 1e6);
}
double to_microseconds(Picoseconds ps) {
  return static_cast<double>(ps) / 1e6;
}

CostModel::CostModel(const LinkParams& link)
    : link_(link), latency_(to_picoseconds(link.latency_us)) {
  ranges_.reserve(link.ranges.size());
  for (const auto& r : link.ranges) {
    ranges_.push_back(
        {r.from_bytes, to_picoseconds(r.send_overhead_us), to_picoseconds(r.recv_overhead_us),
         to_picoseconds(r.gap_us), std::llround(r.send_overhead_per_byte_us * 1e9),
         std::llround(r.recv_overhead_per_byte_us * 1e9), std::llround(r.gap_per_byte_us * 1e9),
         r.rendezvous, r.progress,
         to_picoseconds(r.control_send_us >= 0 ? r.control_send_us : r.send_overhead_us),
         to_picoseconds(r.control_recv_us >= 0 ? r.control_recv_us : r.recv_overhead_us)});
  }
}

MessageCost CostModel::message(std::uint64_t bytes) const {
  const Range& r = ranges_[link_.range_index(bytes)];
  // (k-1)G as in seeds 000 and 001 (seed 004 writes kG); a 0-byte message transfers like 1 byte.
  const std::uint64_t k_minus_1 = bytes > 0 ? bytes - 1 : 0;
  MessageCost c;
  c.bytes = bytes;
  c.rendezvous = r.rendezvous;
  c.progress = r.progress;
  c.send_overhead = r.o_s + per_byte_ps(bytes, r.O_s_fs);
  c.transfer = latency_ + per_byte_ps(k_minus_1, r.G_fs);
  c.recv_overhead = r.o_r + per_byte_ps(bytes, r.O_r_fs);
  c.gap = r.g + per_byte_ps(k_minus_1, r.G_fs);
  c.latency = latency_;
  c.control_send = r.ctrl_s;
  c.control_recv = r.ctrl_r;
  return c;
}

Picoseconds CostModel::blocking_one_way(std::uint64_t bytes) const {
  const MessageCost c = message(bytes);
  Picoseconds t = c.send_overhead + c.transfer + c.recv_overhead;
  if (c.rendezvous) t += 2 * (c.control_send + c.latency + c.control_recv);
  return t;
}

}  // namespace commgauge::model
