#pragma once
// What MPI calls that move no message data cost, for the replay to charge them:
// * a failed poll: a call of the Test or Probe family that finds nothing (MPI_Test of a receive
//   still pending). Programs that poll in a loop spend real time in these calls, which the
//   trace folds into poll runs (calls, time inside MPI); the replay charges each failed call
//   this cost. Measured on the source while its receive is pending (the dest holds the message
//   back until told), in rounds of back-to-back calls.
// * a communicator's creation: MPI_Comm_dup of the pair, less an MPI_Allreduce of 4 bytes
//   measured alike (the replay charges that synchronisation through the model, as an allreduce
//   over the parent communicator): what is left is the library's local work (context id,
//   collective modules), which a model of messages does not contain; and MPI_Comm_free.
// * a collective call's own cost: MPI_Barrier of the pair less an exchange of 0 bytes (MPI_Isend,
//   MPI_Irecv, both waited for) measured alike. Open MPI's barrier of two ranks sends just such an
//   exchange (coll/base's sendrecv of nothing), so what it costs more is the collective call's
//   own: the framework's dispatch and its send through a posted receive and a blocking send,
//   which every collective's steps use and the nonblocking exchange does not (on one 2-core VM
//   0 us, on another 0.001-0.057 us, where the held-out collectives of two ranks were predicted
//   0.03-0.06 us low at 8-512 B and their exchanges right).
// * a collective's local work per byte: a reduction (MPI_Reduce_local of doubles with MPI_SUM)
//   and a memory copy, each timed at 64 KiB and at 4 KiB in the same rounds (which goes first
//   alternates), the difference per byte: the per-call cost drops out. Measured in a tight loop
//   (warm caches), on the source only.
// * a reduction's own cost per call, whatever its size: MPI_Reduce_local of one double in rounds
//   of back-to-back calls, less that double's per-byte cost. A reduction step of Open MPI's
//   coll/base calls the operation once per step (ompi_op_reduce); at 8 B that call is most of
//   the step's local work (0.014-0.015 us over vader on a 2-core VM, where 8 bytes at the
//   per-byte rate cost 0.0001 us).
// * a reduction into the buffer a 64 KiB exchange has just sent from, per byte (where the
//   transport reduces: MPI): what Open MPI's recursive doubling does on the higher rank of each
//   pair. Where the peer pulls the data with a single copy (vader's rendezvous) it has just read
//   those lines, and writing them costs an invalidation each (docs/measurements.md: 6-13 times
//   the warm rate over vader on a 2-core VM). Both ends exchange; the source times only the
//   reduction after each exchange.
// * a memory copy into that buffer, per byte, measured alike: what coll/base does when an
//   allreduce copies the caller's vector into the result the previous call's ring sent from. On a
//   2-core AMD EPYC VM over vader glibc's memcpy there cost 0.25-1.5 us per KiB against 0.03 into a
//   private buffer, several times a reduction into it (docs/measurements.md, "A copy into what the
//   peer pulled").
// * a transfer of data its sender has just written, per byte (where the transport can write its
//   send buffer: MPI): exchanges of 64 KiB whose send buffers each end writes first, less the
//   same exchanges of buffers left as they are. Where the receiver pulls the data with a single
//   copy (vader's rendezvous) it reads lines modified in the sender's cache, not lines it may
//   hold itself from the last pull of an unchanged buffer, as a ping-pong's are: about 0.06-0.07
//   us per KiB more over vader on a 2-core VM, nearly doubling a 64 KiB transfer
//   (docs/measurements.md, "Data its sender has just written"). A collective's steps send such
//   data (what they copied, combined or received earlier in the call).
// * a transfer into the buffer its receiver has just sent from, per byte (MPI): the dest sends
//   64 KiB to the source, then receives 64 KiB from it into that same buffer, against into its
//   receive buffer. Where the receiver pulls, its copy then writes lines the peer has just read
//   (0.05-0.06 us per KiB more over vader on a 2-core VM); the ring allreduce's allgather phase
//   receives every block into the one it sent during its reduce-scatter.
// * a receive into memory never touched, per byte (MPI): the dest receives 256 KiB into anonymous
//   memory mapped for it (page faults as the data is written) against into its receive buffer,
//   timed on the dest from the barrier after which the source sends. On a 2-core VM (Firecracker)
//   a fresh 2 MB receive over vader took 5.5-8 ms where the same receive again took 0.1-0.4 ms;
//   HPCC's first receives of 2 MB took 6 ms each (docs/measurements.md, "Receives into memory
//   never touched").
// * a message a rank sends itself (where the transport can: MPI), at 8 B, 1, 4, 16 and 64 KiB:
//   MPI_Irecv from oneself, MPI_Isend to oneself, MPI_Waitall, in rounds of kSelfCalls per size
//   (the sizes' order rotating by round), on the source only. Open MPI copies it within the
//   process (its self BTL); the replay had costed it as a message over the node's link, 30 times
//   what a traced loop of them took over vader on a 2-core VM (docs/measurements.md, "Messages a
//   rank sends itself"). Its cost is no line in the size (one quiet profile: 0.070 us at 8 B, 0.121
//   at 1 KiB, 0.223 at 16 KiB, 0.714 at 64 KiB).
// Each: the median per call (per byte) over the rounds with its distribution-free 95 % interval.

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/latency_mode.hpp"
#include "measure/loggp.hpp"
#include "net/transport.hpp"

namespace commgauge::measure {

struct CallCostOptions {
  std::uint32_t poll_calls = 2000;  ///< failed tests per round (at most 100 ms), timed together
  std::uint32_t comm_calls = 100;   ///< dups, frees and allreduces per round
  std::uint32_t local_calls = 40;   ///< reductions and copies per size and round
  std::uint32_t rounds = 15;
  /// loggp's latency mode (latency_mode.hpp): the phase is measured where a probe lies in it
  /// before and after; none: no probes.
  std::optional<LatencyModeBand> mode;
  double mode_wait_s = kModeWait_s;             ///< at most this long in all waiting for it
  std::uint32_t mode_attempts = kModeAttempts;  ///< at most this many measurements of the phase
  void validate() const;                        ///< throws InputError
};

void to_json(nlohmann::json& j, const CallCostOptions& o);
void from_json(const nlohmann::json& j, CallCostOptions& o);

struct CallCosts {
  PrttStat poll;                            ///< microseconds per failed test
  std::uint64_t poll_calls_timed = 0;       ///< over every round (a round may end early)
  std::optional<PrttStat> comm_create;      ///< microseconds per dup, less an allreduce
                                            ///< (where the transport has communicators: MPI)
  std::optional<PrttStat> comm_free;        ///< microseconds per MPI_Comm_free
  std::optional<PrttStat> collective_call;  ///< microseconds per MPI_Barrier of the pair, less
                                            ///< an exchange of 0 bytes (where the transport
                                            ///< has collectives: MPI)
  std::optional<PrttStat> reduce_per_byte;  ///< microseconds per byte (where the transport
                                            ///< reduces: MPI)
  std::optional<PrttStat> reduce_per_call;  ///< microseconds per reduction, beyond its bytes
                                            ///< (where the transport reduces: MPI)
  PrttStat copy_per_byte;                   ///< microseconds per byte
  /// Microseconds per byte of a reduction into the buffer an exchange of 64 KiB has just sent
  /// from (where the transport reduces: MPI).
  std::optional<PrttStat> reduce_into_sent_per_byte;
  /// Microseconds per byte of a memory copy into that buffer (where the transport can: MPI).
  std::optional<PrttStat> copy_into_sent_per_byte;
  /// Microseconds per byte a 64 KiB exchange costs more when each end has just written the data
  /// it sends (where the transport can write its send buffer: MPI).
  std::optional<PrttStat> written_send_per_byte;
  /// Microseconds per byte a 64 KiB transfer costs more when the receiver takes it into the
  /// buffer it has just sent from to the same peer (where the transport can: MPI).
  std::optional<PrttStat> recv_into_sent_per_byte;
  /// Microseconds per byte a receive of 256 KiB costs more into memory never touched than into
  /// a touched buffer, on the receiver (where the transport can: MPI).
  std::optional<PrttStat> fresh_memory_per_byte;
  /// Microseconds per byte a memory copy of 64 KiB adds to a loop of 64 KiB exchanges (every
  /// transport).
  std::optional<PrttStat> copy_after_rendezvous_per_byte;
  /// A message to oneself, per message, by size (where the transport can: MPI), sizes increasing.
  struct SizedStat {
    std::uint64_t bytes = 0;
    PrttStat stat;
  };
  std::vector<SizedStat> self_message;
  /// The process's first calls against their second (where the transport has them: MPI,
  /// measured when it initialized MPI). One process, one first call each: no interval.
  std::vector<net::FirstCall> first_calls;
  /// How the phase kept to loggp's latency mode (where CallCostOptions::mode was given).
  std::optional<PhaseModeCheck> mode;
};

/// Runs on either end; returns the result on the source. Not on the virtual network, whose
/// calls cost only what its model charges (a test there lets virtual time advance): throws
/// InputError.
std::optional<CallCosts> measure_call_costs(net::Transport& transport,
                                            const CallCostOptions& options);

/// Whether the collective call's own cost is shown: measured, and its 95 % interval above 0. A
/// difference of two timings whose interval reaches 0 is not charged: over TCP under two busy
/// loops one profile read 39.4 us [0, 40.0] per call, which the replay would have added to every
/// collective call.
bool collective_call_shown(const CallCosts& costs);

/// Carries the costs into both of the result's parameter sets (the calibrated link and the seeds'
/// estimators), each as its median; a cost not measured leaves its field as it was, and the
/// collective call's own cost is carried only where collective_call_shown. A first call's extra
/// (first less second, never below 0) goes into first_call_us.
void adopt_call_costs(LoggpResult& result, const CallCosts& costs);

/// The local-work part alone, on this end (measure_call_costs runs it on the source).
void measure_local_work(net::Transport& transport, const CallCostOptions& options,
                        CallCosts& result);

}  // namespace commgauge::measure
