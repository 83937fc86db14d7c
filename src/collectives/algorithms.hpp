#pragma once
// Collective operations expanded into point-to-point steps by named algorithms (binomial tree,
// recursive doubling, ring, pairwise exchange, dissemination, linear), with world ranks. Used
// by the trace exporters and by the simulator.
//
// A schedule is what one member does, in order. Each step posts its receive, then its send,
// and completes both before the next step starts; the schedules of all members together are
// deadlock-free under that rule (tests/unit/collectives_test.cpp executes them).

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
  chain,               ///< a pipeline along the ranks (scan, exscan)
};

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
};

/// One step: receive from `recv_from` (if >= 0), send to `send_to` (if >= 0), both world ranks.
struct Step {
  std::int32_t send_to = -1;
  std::uint64_t send_bytes = 0;
  std::int32_t recv_from = -1;
  std::uint64_t recv_bytes = 0;
  bool operator==(const Step&) const = default;
};

/// The algorithms implemented for an operation, the first being the default.
std::vector<Algorithm> algorithms_for(Operation op);

/// This member's steps. Throws std::invalid_argument for an algorithm the operation does not
/// have (see algorithms_for) or an inconsistent Collective (root out of range...).
std::vector<Step> schedule(const Collective& c, Algorithm a);

}  // namespace commgauge::collectives
