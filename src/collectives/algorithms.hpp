#pragma once
// Collective operations expanded into point-to-point steps by named algorithms (binomial tree,
// recursive doubling, ring, pairwise exchange, dissemination, linear, and the algorithms of
// Open MPI's coll/base that its tuned component chooses: see openmpi_tuned.hpp), with world
// ranks. Used by the trace exporters and by the simulator.
//
// A schedule is what one member does, in order. Each step posts its receive, then its send,
// and completes both before the next step starts; the schedules of all members together are
// deadlock-free under that rule (tests/unit/collectives_test.cpp executes them). Algorithms that
// post many operations at once in MPI (linear ones) are serialised by this rule.
//
// Where an algorithm works on element counts in Open MPI (halving a vector, chunks of
// ceil(count / n)), the schedules count bytes, as if the datatype were MPI_BYTE.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commgauge::collectives {

enum class Operation {
  barrier,
  bcast,
  reduce,
  allreduce,
  reduce_scatter,
  reduce_scatter_block,
  scan,
  exscan,
  gather,
  gatherv,
  scatter,
  scatterv,
  allgather,
  allgatherv,
  alltoall,
  alltoallv,
  alltoallw,
};

enum class Algorithm {
  linear,              ///< everyone with the root directly (rooted); post all, wait all (alltoall)
  binomial,            ///< binomial tree rooted at the root (bcast, reduce, gather, scatter)
  recursive_doubling,  ///< pairwise exchanges at distance 2^k (allreduce, allgather, barrier)
  ring,                ///< n-1 steps to the right neighbour (allgather(v), allreduce,
                       ///< reduce_scatter)
  pairwise,            ///< step k: send to me+k, receive from me-k (alltoall(v,w))
  dissemination,       ///< barrier: round k signals me+2^k
  chain,               ///< a pipeline along the ranks (scan, exscan); bcast, reduce: Open MPI's
                       ///< chain topology, `fanout` chains from the root (0: one), in segments
  // Open MPI coll/base algorithms (ompi/mca/coll/base/coll_base_*.c), picked by coll/tuned:
  pipeline,                ///< bcast, reduce: one chain through all members, in segments
  binary_tree,             ///< bcast, reduce: Open MPI's level-order binary tree, in segments
  split_binary_tree,       ///< bcast: each half of the message down one subtree, then pairs swap
  ompi_binomial,           ///< bcast: Open MPI's binomial tree (children set bits above the highest
                           ///< set bit; `binomial` is MPICH's, = Open MPI's in-order binomial)
  knomial,                 ///< bcast: k-nomial tree, radix `fanout` (default 4), in segments
  scatter_allgather,       ///< bcast: binomial scatter, then recursive-doubling allgather
  scatter_allgather_ring,  ///< bcast: binomial scatter, then ring allgather
  in_order_binary,         ///< reduce: in-order binary tree rooted at the last member (keeps the
                           ///< order for non-commutative operations), which then sends to the root
  rabenseifner,            ///< allreduce: recursive-halving reduce-scatter + recursive-doubling
                           ///< allgather; reduce: the same reduce-scatter + binomial gather
  segmented_ring,     ///< allreduce: ring reduce-scatter in phases of `segment_bytes`, then ring
                      ///< allgather (plain ring when the vector is below n segments)
  bruck,              ///< allgather(v): log2(n) rounds at distance 2^k; alltoall: modified Bruck
  neighbor_exchange,  ///< allgather(v): n/2 exchanges with alternating neighbours (odd n: ring)
  linear_sync,        ///< gather: the root invites each member in turn with a zero-byte message
  recursive_halving,  ///< reduce_scatter(_block): halving exchanges at distance n/2, n/4, ...
  butterfly,          ///< reduce_scatter(_block): Traff's butterfly, doubling distances
};

/// Whether the operation has a root (bcast, reduce, gather(v), scatter(v)); a root recorded
/// for any other operation means nothing and is ignored by every reader.
bool rooted(Operation op);

std::string_view to_string(Operation op);
std::string_view to_string(Algorithm a);
std::optional<Operation> parse_operation(std::string_view name);
std::optional<Algorithm> parse_algorithm(std::string_view name);

/// One member's view of one collective call.
struct Collective {
  Operation op = Operation::barrier;
  std::vector<std::int32_t> members;  ///< world ranks in communicator order
  std::size_t me = 0;                 ///< this rank's index in members
  std::size_t root = 0;               ///< index in members (rooted operations)
  /// Bytes as the trace records them: the message (bcast), the vector (reduce, allreduce,
  /// scan), this member's contribution (gather, allgather), per peer (alltoall), one block
  /// (reduce_scatter_block, scatter).
  std::uint64_t bytes = 0;
  /// Per member, in member order: what this rank sends to each (scatterv at the root,
  /// alltoallv/w), or every member's block (gatherv at the root, allgatherv, reduce_scatter).
  std::vector<std::uint64_t> counts;
  /// alltoallv/w: what this rank receives from each member.
  std::vector<std::uint64_t> recv_counts;
  /// Segmented algorithms (chain, pipeline, trees, segmented_ring; binomial bcast/reduce too):
  /// the segment size in bytes, one step per segment; 0: the whole message in one segment.
  /// gather linear_sync: the first segment's size (0: all of it).
  std::uint64_t segment_bytes = 0;
  /// chain: the number of chains; knomial: the radix; 0: the algorithm's default.
  int fanout = 0;
};

/// One step: receive from `recv_from` (if >= 0), send to `send_to` (if >= 0), both world ranks.
/// Local work, where Open MPI's coll/base does it (the caller's buffers not MPI_IN_PLACE):
/// `copy_bytes` copied before the step (the caller's own data into the result: allreduce's
/// vector, the own block of alltoall(v,w) and allgather(v)), `reduce_bytes` combined with the
/// operation after it (what a reduction step receives); `reduce_into_sent`: the combination
/// is written into the buffer this step has just sent from (Open MPI's recursive doubling, on
/// the higher rank of each pair), which a peer that pulled it has just read. `send_written`:
/// the data sent is what this member copied, combined or received earlier in the call (a
/// forwarded block, a partial result, the result vector after its copy), written in its cache,
/// not the caller's send buffer as it was passed. `recv_into_sent`: the step receives into the
/// block this member sent earlier in the call (the allgather phase of Open MPI's ring,
/// segmented ring and Rabenseifner allreduce), whose lines a peer that pulled it has read.
/// `copy_back_bytes`: copied after the step (and its combination) into the result vector (Open
/// MPI's recursive doubling, on a member whose result ended in its temporary buffer).
/// `copy_into_sent_bytes`: of `copy_bytes`, those copied into a vector a peer pulled in the
/// previous call; not a schedule's, the replay sets it from the member's history.
/// `copy_after_rendezvous`: `copy_bytes` lie between kernel entries of rendezvous transfers (the
/// member's messages in the call are in a rendezvous range); not a schedule's, the replay sets it.
/// `send_from_temporary`: the step sends from a buffer the library allocated (Open MPI's
/// recursive doubling allreduce), whose start within its page nobody knows; the other
/// algorithms' steps count as sent from the caller's buffers (their temporaries not marked).
struct Step {
  std::int32_t send_to = -1;
  std::uint64_t send_bytes = 0;
  std::int32_t recv_from = -1;
  std::uint64_t recv_bytes = 0;
  std::uint64_t reduce_bytes = 0;
  std::uint64_t copy_bytes = 0;
  bool reduce_into_sent = false;
  bool send_written = false;
  bool recv_into_sent = false;
  std::uint64_t copy_back_bytes = 0;
  std::uint64_t copy_into_sent_bytes = 0;
  bool copy_after_rendezvous = false;
  bool send_from_temporary = false;
  bool operator==(const Step&) const = default;
};

/// Sets send_written on every step that sends after this member has copied (in the step or
/// before), received or combined anything in the call; `from_callers_buffer`: the algorithm
/// sends every block straight from the caller's send buffer whatever it received (Open MPI's
/// pairwise and linear alltoall(v,w)), so no step is marked. schedule() calls it; a caller that
/// concatenates schedules (a composed algorithm) calls it again on the whole.
void mark_written_sends(std::vector<Step>& steps, bool from_callers_buffer);

/// The algorithms implemented for an operation, the first being the default.
std::vector<Algorithm> algorithms_for(Operation op);

/// This member's steps. Throws std::invalid_argument for an algorithm the operation does not
/// have (see algorithms_for) or an inconsistent Collective (root out of range...).
std::vector<Step> schedule(const Collective& c, Algorithm a);

}  // namespace commgauge::collectives
