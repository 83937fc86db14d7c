#pragma once
// The one cost function of DESIGN.md ("One cost convention"), in integer picoseconds.
// The virtual network, the models and the simulator all call it, so they agree exactly.

#include <cstdint>
#include <vector>

#include "model/link_params.hpp"
#include "model/picoseconds.hpp"

namespace commgauge::model {

/// The largest cost one message may have (2^56 ps, about 20 hours) and the largest simulated
/// time (2^62 ps, about 53 days). With every cost below the first and every event time below the
/// second, the few additions between two checks cannot pass 2^63: times never wrap; beyond
/// either bound the replay stops with a TimeRangeError.
inline constexpr Picoseconds kMaxMessageCostPs{std::int64_t{1} << 56};
inline constexpr Picoseconds kMaxSimulatedTimePs{std::int64_t{1} << 62};

/// Microseconds to picoseconds, rounded; a time beyond kMaxSimulatedTimePs either way (or NaN)
/// is a TimeRangeError naming `what`, never an llround past 2^63 (undefined behaviour).
Picoseconds to_picoseconds(double microseconds, const char* what = "a time");
/// The same from picoseconds held in a double (a scaled duration, a drawn noise).
Picoseconds checked_picoseconds(double picoseconds, const char* what);
double to_microseconds(Picoseconds ps);

/// Everything a message of k bytes costs, for the range it falls in.
struct MessageCost {
  std::uint64_t bytes = 0;
  bool rendezvous = false;
  /// Eager with acknowledgement (seed 001 Tm = TA): the receiver acknowledges the data (o'_s)
  /// once it handles it, and the send completes when the sender has taken the acknowledgement
  /// (o'_r), L later; see net/virtual_network.hpp for when each side acts.
  bool acknowledged = false;
  /// A rendezvous the receiver pulls (DCP with Tm = RTA): when it handles the request (o'_r) it
  /// starts the transfer itself (T1), the data arrives T2 later, and it acknowledges it with a
  /// FIN (o'_s) before its copy (T3), as an acknowledged eager message; `acknowledged` is set too.
  bool pulled = false;
  Progress progress = Progress::independent;
  Picoseconds send_overhead{};  ///< o_s + k*O_s: the sender is busy
  Picoseconds transfer{};       ///< L - omega + (k-1)*G after the send overhead ends
  Picoseconds recv_overhead{};  ///< o_r + k*O_r: the receiver is busy after arrival
  /// o_u: added to recv_overhead when eager data arrived before its receive was posted, and to
  /// the answer of a rendezvous request that did
  Picoseconds unexpected_recv{};
  /// o_x + kO_x: added to recv_overhead when the message crossed one its receiver sent to the same
  /// peer (LinkRange::crossing_recv_us; Engine and VirtualNetwork tell when)
  Picoseconds crossing_recv{};
  Picoseconds gap{};           ///< g + (k-1)*G: minimum distance between send starts
  Picoseconds latency{};       ///< L - omega (LinkParams::effective_latency_us)
  Picoseconds control_send{};  ///< o' (default o_s): sending a rendezvous request or ack
  Picoseconds control_recv{};  ///< o' (default o_r): receiving one (seed 004 o', seed 001 O')
};

/// What a rendezvous answer costs beyond its control overheads: o_u when its request arrived
/// before the receive was posted (the virtual network and the replay tell when).
inline Picoseconds late_answer_cost(const MessageCost& m, bool request_came_first) {
  return request_came_first ? m.unexpected_recv : Picoseconds{};
}

/// LinkParams compiled to integer units once, so that costing a message is a lookup and a
/// few integer multiplications (per-byte values are held in femtoseconds per byte).
class CostModel {
 public:
  explicit CostModel(const LinkParams& link);

  /// A message of `bytes` whose send buffer starts `page_offset_bytes` bytes past a page's start
  /// (kUnknownPageOffset: not known); only a range billed by pages looks at it.
  MessageCost message(std::uint64_t bytes, std::uint64_t page_offset_bytes = 0) const;
  /// A message a rank sends itself, where its cost was measured (has_self_message): the sender
  /// is busy LinkParams::self_message_cost_us(bytes), and nothing else is charged (no latency,
  /// gap or receive overhead: the library copies it within the process).
  bool has_self_message() const { return !link_.self_message.empty(); }
  MessageCost self_message(std::uint64_t bytes) const;
  const LinkParams& link() const { return link_; }

  /// One-way time of a blocking send whose receive was posted before the message (or its
  /// rendezvous request) arrived: eager o_s + kO_s + L + (k-1)G + o_r + kO_r; rendezvous adds
  /// the request and acknowledgement, 2 (o'_s + L + o'_r) (seed 004's T4 + T5 with t_r <= t_s);
  /// eager with acknowledgement (TA) under DCP adds the receiver's o'_s for the ack; a pulled
  /// rendezvous costs the request, the transfer and the FIN: o'_s + L + o'_r + T1 + T2 + o'_s + T3.
  Picoseconds blocking_one_way(std::uint64_t bytes) const;

 private:
  struct Range {
    std::uint64_t from_bytes;
    Picoseconds o_s, o_r, g, o_u, o_x;
    std::int64_t O_s_fs, O_r_fs, G_fs, O_x_fs;  // femtoseconds per byte
    bool rendezvous;
    bool acknowledged;
    bool pulled;
    Progress progress;
    Picoseconds ctrl_s, ctrl_r;               // o' for sending / receiving a control message
    std::uint64_t unchecked_up_to_bytes = 0;  // every n x fs product fits 63 bits up to here
    std::int64_t G_st_fs = 0;      // the gap's per-byte part beyond G (LinkRange::stream_gap_...)
    std::uint64_t page_bytes = 0;  // per-byte terms billed by whole pages (LinkRange::page_bytes)
  };
  LinkParams link_;
  Picoseconds latency_;
  std::vector<Range> ranges_;
};

}  // namespace commgauge::model
