#pragma once
// Parameters of one link (one link class), piecewise in the message size
// (DESIGN.md "One cost convention"; seed 000 Table 2 gives one set per protocol range).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace commgauge::model {

/// How a started rendezvous transfer makes progress (seed 001's Scp).
enum class Progress {
  independent,  ///< ICP: handshake and data proceed while the endpoints compute
  dependent,    ///< DCP: each handshake step waits until its endpoint is inside a call
};

std::string to_string(Progress p);
Progress progress_from_string(const std::string& text);  ///< throws InputError

/// A send buffer whose start within its page is not known (a library's temporary, a traced
/// program's buffer): LinkRange::billed_bytes takes the mean over the starts malloc may give.
inline constexpr std::uint64_t kUnknownPageOffset = UINT64_MAX;
/// glibc's malloc on 64-bit systems returns addresses 16 bytes apart (2 * sizeof(size_t)). A block
/// mapped on its own starts 16 B past a page's start, but glibc raises its mapping threshold once
/// such a block is freed (as Open MPI's temporaries are), so the heap's starts are the mean taken.
inline constexpr std::uint64_t kMallocAlignmentBytes = 16;

/// One protocol range: applies from `from_bytes` up to the next range's from_bytes - 1,
/// and its parameters apply to the whole message.
struct LinkRange {
  std::uint64_t from_bytes = 1;
  double send_overhead_us = 0;           ///< o_s
  double recv_overhead_us = 0;           ///< o_r
  double send_overhead_per_byte_us = 0;  ///< O_s (seed 004)
  double recv_overhead_per_byte_us = 0;  ///< O_r (seed 004)
  double gap_us = 0;                     ///< g
  double gap_per_byte_us = 0;            ///< G
  /// o_u: what a receive costs beyond o_r + kO_r when its eager data arrived before it was
  /// posted (MPI's unexpected-message path: matched from the unexpected queue and copied out of
  /// its buffer); in a rendezvous range, what its answer costs more when the request did.
  /// commgauge's addition, measured where the server-delay PRTT's receives are all posted late
  /// while PRTT(n,0,s)'s are not; 0: a late receive costs what an early one does.
  double unexpected_recv_us = 0;
  /// o_x: what a receive costs beyond o_r + kO_r (and o_u) when its message crossed one its
  /// receiver had sent to the same peer (both under way at once, as in an exchange: over shared
  /// memory both processors write into each other's buffers while polling their own).
  /// commgauge's addition, fitted by loggp to exchanges at the sweep's sizes; no PRTT, ping-pong
  /// or overlap measurement has a crossing. 0: crossing costs nothing.
  double crossing_recv_us = 0;
  /// O_x: o_x's part per byte, o_x + kO_x (commgauge's addition, fitted with o_x): between
  /// emulated nodes two large transfers that cross cost more than twice one, per byte (both
  /// directions' kernel work shares the cores); 0: a crossing costs o_x at every size.
  double crossing_recv_per_byte_us = 0;
  /// G_st: what the gap between two messages a rank sends costs per byte beyond G, g + (k-1)G
  /// + kG_st (commgauge's addition, fitted by loggp to streams of nonblocking sends). In a
  /// rendezvous range the hand-shake hides the gap from every PRTT (in a TA range the
  /// acknowledgement's round trip): over TCP between emulated
  /// nodes a stream of 2 MB messages followed each other at the whole one-way slope O_s + G +
  /// O_r, where the PRTT split let the sender's and receiver's per-byte work overlap the next
  /// transfer. 0: the gap is g + (k-1)G.
  double stream_gap_per_byte_us = 0;
  /// Per-byte costs billed by whole pages of this many bytes: a message of k bytes costs its
  /// per-byte terms (O_s, O_r, G, O_x, G_st) for the pages its send buffer spans, times
  /// page_bytes (commgauge's addition, chosen by loggp where the curves show it: over vader's
  /// single copy a transfer costs per page of the sender's buffer it maps, the same for 4097 B as
  /// for 8192 B from a page's start, one page more from 16 B past it; moving the receive buffer by
  /// 2048 B moved nothing). 0: billed by the byte, as in LogGP.
  std::uint64_t page_bytes = 0;
  /// What page_bytes may be: 0, or a power of two up to 1 GiB.
  static bool valid_page_bytes(std::uint64_t bytes) {
    return bytes == 0 || (bytes <= (std::uint64_t{1} << 30) && (bytes & (bytes - 1)) == 0);
  }
  /// The bytes a message of k bytes is billed for (k itself when page_bytes is 0): the pages
  /// its send buffer spans from `page_offset_bytes` bytes past a page's start (loggp's buffers
  /// start on one: 0), times page_bytes; for kUnknownPageOffset the mean over the starts
  /// kMallocAlignmentBytes apart, as malloc places a buffer.
  std::uint64_t billed_bytes(std::uint64_t k, std::uint64_t page_offset_bytes = 0) const;
  /// o' (seed 004) / O' (seed 001): sending and receiving a rendezvous control message
  /// (request, acknowledgement). Negative: not set, the range's o_s and o_r are used.
  double control_send_us = -1;
  double control_recv_us = -1;
  /// The plain LogGP model's own parameters for this range (no per-byte overheads, no
  /// hand-shake): loggp fits them to the measured curves under that structure. Negative: not
  /// set, the range's own values are used.
  struct LoggpView {
    double o_s_us = -1, o_r_us = -1, g_us = -1, G_us_per_byte = -1;
    bool operator==(const LoggpView&) const = default;
  } loggp;
  bool rendezvous = false;  ///< k in this range uses rendezvous (k >= S)
  /// Seed 001's Tm as measured by `commgauge overlap` ("T", "TA", "RAT", "RTA"); empty: the one
  /// the cost convention implies (T eager, RAT dependent, RTA independent).
  std::string transfer;
  Progress progress = Progress::independent;

  /// o'_s as the cost model reads it: control_send_us where set, else o_s.
  double control_send_or_default_us() const {
    return control_send_us >= 0 ? control_send_us : send_overhead_us;
  }
  /// Seed 001's Tm = TA: an eager send completes only when the receiver's acknowledgement of
  /// its data is back (Open MPI's shared memory returns each fragment above its inline size).
  bool acknowledged() const { return !rendezvous && transfer == "TA"; }
  /// Seed 001's DCP with Tm = RTA: a rendezvous whose receiver, inside a call with the receive
  /// posted, pulls the data itself and then sends the sender a FIN (Open MPI's RGET, e.g. vader's
  /// single copy); the send completes when the sender has taken the FIN.
  bool pulled() const { return rendezvous && transfer == "RTA" && progress == Progress::dependent; }
  /// The least a send of this range keeps its processor busy: bounds the send overlap omega.
  bool operator==(const LinkRange&) const = default;

  double least_send_overhead_us() const {
    return send_overhead_us < control_send_or_default_us() ? send_overhead_us
                                                           : control_send_or_default_us();
  }
};

/// A link: latency plus its protocol ranges, sorted by from_bytes.
struct LinkParams {
  double latency_us = 0;  ///< L; may be negative (o and L overlap on real hardware)
  /// omega: how long a send's overhead goes on after its message is on its way (seed 000 §3.4:
  /// where eel - o_s - o_r < 0, "o and L overlap"). A message reaches the receiver
  /// o_s - omega + L + (k-1) G after its send began: an exchange costs o_s + o_r where a one-way
  /// time costs omega less. Never negative, at most every range's o_s (and o'_s).
  double send_overlap_us = 0;
  /// L - omega: the latency of the cost convention (model/cost.hpp).
  double effective_latency_us() const { return latency_us - send_overlap_us; }
  /// A failed poll (MPI_Test of a pending receive) on this link's node, measured by profile;
  /// 0: not measured (the replay then charges failed polls nothing).
  double poll_us = 0;
  /// The library's local work to create a communicator, beyond the synchronisation the replay
  /// charges as messages over the parent, and to free one; 0: not measured (charged nothing).
  double comm_create_us = 0;
  double comm_free_us = 0;
  /// A collective call's own cost, beyond its messages and local work (profile: MPI_Barrier of
  /// two ranks less an exchange of 0 bytes, which is all the messages Open MPI's barrier of two
  /// sends): the collective framework's dispatch. The replay charges it once per collective call
  /// on each rank. 0: not measured (charged nothing).
  double collective_call_us = 0;
  /// A collective's local work on this link's node (profile: MPI_Reduce_local of doubles with
  /// MPI_SUM, and a memory copy, per byte); 0: not measured (the replay charges nothing).
  double reduce_us_per_byte = 0;
  double copy_us_per_byte = 0;
  /// A reduction's own cost per call, beyond its bytes (profile: MPI_Reduce_local of one double
  /// less its byte cost); the replay charges it once per collective step that combines. 0: not
  /// measured (charged nothing).
  double reduce_call_us = 0;
  /// A reduction into the buffer a rendezvous message has just been sent from (profile: after
  /// an exchange of 64 KiB): where the peer pulled it, writing it back costs more than warm.
  /// 0: not measured (reduce_us_per_byte is charged).
  double reduce_into_sent_us_per_byte = 0;
  /// A memory copy into the buffer a rendezvous message has just been sent from (profile: after
  /// an exchange of 64 KiB): the peer that pulled it holds its lines, and a copy (glibc's memcpy,
  /// as Open MPI's datatype engine copies) costs several times what a reduction into it does.
  /// The replay charges it where an allreduce that repeats the previous call copies into the
  /// result vector that call's ring or Rabenseifner allgather phase sent from. 0: not measured
  /// (copy_us_per_byte is charged).
  double copy_into_sent_us_per_byte = 0;
  /// What a pulled transfer (DCP with Tm = RTA) of data its sender has just written costs more
  /// per byte than one of data left unchanged since its last transfer (profile: exchanges of
  /// 64 KiB, each end writing its send buffer first): the receiver's copy reads lines modified
  /// in the sender's cache. The replay adds it to the transfer of a collective's steps that send
  /// what they copied, combined or received earlier in the call. 0: not measured (nothing added).
  double written_send_us_per_byte = 0;
  /// What a pulled transfer costs more per byte when its receiver takes it into the buffer it
  /// has just sent to that peer from (profile: 64 KiB each way, into that buffer against into
  /// another): the receiver's copy writes lines the peer has just read. The replay adds it to the
  /// transfers a collective's step receives so (Step::recv_into_sent). 0: not measured.
  double recv_into_sent_us_per_byte = 0;
  /// What a receive costs more per byte of its buffer in pages the process has never touched
  /// (profile: 256 KiB into fresh anonymous memory against into a touched buffer, on the
  /// receiver): the page faults that map them as the data is written. The tracer records such
  /// bytes per receive (Event::fresh_bytes); the replay adds them at this rate to the receiver's
  /// copy, or to a pulled transfer. 0: not measured (charged nothing).
  double fresh_memory_us_per_byte = 0;
  /// A memory copy between rendezvous exchanges, per byte (profile: what a copy of 64 KiB adds
  /// to a loop of 64 KiB exchanges): the exchanges' kernel entries leave the copy's lines cold
  /// and the copy slows the next exchange. The replay charges it, never below copy_us_per_byte,
  /// for a collective's own-data copy on a rank whose messages in that call are in a rendezvous
  /// range (in a loop of such calls every copy lies between two). 0: not measured (the warm copy
  /// is charged).
  double copy_after_rendezvous_us_per_byte = 0;
  /// What a process's first call of a function costs more than its later calls (the library's
  /// one-time work: code loaded on first use, frameworks initialized lazily), by MPI function
  /// name (profile: each function's first call right after MPI_Init less its second, on this
  /// link's node). The replay charges it once per rank, at the rank's first call of that
  /// function. Empty: not measured (charged nothing).
  std::map<std::string, double> first_call_us;
  /// What a message a rank sends itself costs, at the sizes profile measured it (MPI_Irecv from
  /// oneself, MPI_Isend to oneself, MPI_Waitall, per message), sizes increasing. Open MPI copies
  /// such a message within the process (its self BTL): no link, no latency, no gap, and it costs
  /// a fraction of a message between two ranks of one node (over vader on a 2-core VM 0.07 us at
  /// 8 B and 0.12 at 1 KiB, where an exchange between the two ranks took 0.19 us at 8 B). The
  /// replay charges the sender self_message_cost_us(bytes). Empty: not measured (a message to
  /// oneself is then costed as one over the node's link).
  struct SizeCost {
    std::uint64_t bytes = 0;
    double us = 0;
    bool operator==(const SizeCost&) const = default;
  };
  std::vector<SizeCost> self_message;
  /// self_message at `bytes`: linear between the measured sizes, the first size's cost below
  /// it, and beyond the last the last two sizes' slope (never below 0). Requires a measured cost.
  double self_message_cost_us(std::uint64_t bytes) const;
  std::vector<LinkRange> ranges;

  /// The range a message of `bytes` uses; size 0 uses the first range.
  const LinkRange& range_for(std::uint64_t bytes) const;
  /// Index of that range.
  std::size_t range_index(std::uint64_t bytes) const;
  /// Last byte count of range i (the next range's from_bytes - 1, or UINT64_MAX).
  std::uint64_t to_bytes(std::size_t i) const;
  /// The rendezvous threshold S: first size that uses rendezvous, 0 if none does.
  std::uint64_t rendezvous_threshold_bytes() const;
  /// True when L < 0 (allowed, but flagged wherever it is reported).
  bool latency_negative() const { return latency_us < 0; }
};

/// An acknowledgement (Tm = TA) is a control message of a few bytes: it costs what the shortest
/// range's message costs, so an acknowledged range takes `shortest`'s o_s and o_r as its o'_s
/// and o'_r (seed 004's o' for control messages). The curves would not tell o'_s from the same
/// range's o_r: the receiver pays them together. Other ranges are left as they are.
inline void price_acknowledgement(LinkRange& range, const LinkRange& shortest) {
  if (!range.acknowledged() || &range == &shortest) return;
  range.control_send_us = shortest.send_overhead_us;
  range.control_recv_us = shortest.recv_overhead_us;
}

/// Checks what a schema cannot: ranges present and increasing, the first starting at 0 or 1,
/// no negative overhead or gap, and a positive one-way time o_s + L + o_r in every range.
/// `where` names the source (a file) for the error; throws InputError naming the field.
void validate(const LinkParams& link, const std::string& where);

}  // namespace commgauge::model
