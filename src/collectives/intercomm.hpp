#pragma once
// Collectives on an intercommunicator as Open MPI 4.1 runs them: coll/inter (bcast, reduce,
// allreduce, gather, scatter, allgather: a collective inside the local group rooted at its first
// member, and one message between the groups' first members or with the root) and coll/basic
// (barrier: an allreduce of one int, ompi_coll_basic_barrier_inter_lin; alltoall: every member
// with every member of the other group). MPICH's intercommunicator bcast, reduce, gather and
// scatter take the same path (root to or from the remote group's first member, then the local
// collective).
//
// A call is cut into parts, run in order: a collective on the caller's local group (its steps
// come from the intracommunicator schedules, so coll/tuned's rules or --coll apply inside the
// group), or point-to-point steps across the groups (world ranks; the step rule of
// algorithms.hpp: receive, then send, both complete before the next step).

#include <cstdint>
#include <vector>

#include "collectives/algorithms.hpp"

namespace commgauge::collectives {

/// The caller's part in a rooted intercommunicator collective (MPI 4.0 §6.2.2).
enum class InterRole {
  root,      ///< passed MPI_ROOT: the root, in the root's group
  idle,      ///< passed MPI_PROC_NULL: the root's group, not the root
  receiver,  ///< passed the root's rank: the other group (root_world says who)
};

struct InterCollective {
  Operation op = Operation::barrier;
  std::vector<std::int32_t> local;       ///< the caller's group, world ranks in group rank order
  std::vector<std::int32_t> remote;      ///< the other group, world ranks in group rank order
  std::size_t me = 0;                    ///< the caller's index in `local`
  InterRole role = InterRole::receiver;  ///< rooted operations only
  std::int32_t root_world = -1;          ///< role receiver: the root's world rank
  /// Bytes as Collective::bytes counts them, from the caller's record: the message (bcast),
  /// the vector (reduce, allreduce), the caller's contribution or, at the root, one member's
  /// block (gather, allgather), one member's block (scatter), per peer (alltoall).
  std::uint64_t bytes = 0;
};

struct InterPart {
  /// A collective on the local group rooted at its first member (`op`, `bytes` as
  /// Collective::bytes counts them); otherwise `steps` across the groups.
  bool local = false;
  Operation op = Operation::barrier;
  std::uint64_t bytes = 0;
  std::vector<Step> steps;
};

/// The caller's parts, in order. Throws std::invalid_argument for an operation Open MPI has no
/// intercommunicator algorithm for here (scan, exscan: not defined on intercommunicators; the
/// v and w variants and reduce_scatter: not implemented) or an inconsistent call.
std::vector<InterPart> intercomm_parts(const InterCollective& c);

}  // namespace commgauge::collectives
