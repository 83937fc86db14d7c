#pragma once
// The algorithm Open MPI 4.1 runs for a blocking collective on an intra-communicator: the fixed
// decision rules of its coll/tuned component (ompi_coll_tuned_<op>_intra_dec_fixed in
// ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, v4.1.x, the tables measured with
// ompi-collectives-tuning in 2020), mapped onto the algorithms of algorithms.hpp.
// docs/openmpi-tuned-rules.md has the tables and what maps exactly.
//
// Assumes what Open MPI does by default: coll/tuned is the selected component (no hcoll, ucc,
// han), coll_tuned_use_dynamic_rules is off. coll/tuned does not decide scan, exscan, gatherv,
// scatterv and alltoallw (coll/basic's linear algorithms serve them), nor nonblocking
// collectives (coll/libnbc).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "collectives/algorithms.hpp"

namespace commgauge::collectives {

/// One decision of the fixed rules.
struct TunedDecision {
  int algorithm_id = 0;  ///< Open MPI's number (coll_tuned_<op>_algorithm); 0: not coll/tuned's
  std::string_view openmpi_name;  ///< Open MPI's name of that algorithm ("recursive_doubling")
  /// The segment size the algorithm runs with: the 4.1 rules pass segsize 0 (no segmentation).
  std::uint64_t segment_bytes = 0;
  /// The fan-out the algorithm runs with: 0 (chains: one chain) except knomial bcast, whose
  /// radix is the MCA default coll_tuned_bcast_knomial_radix = 4.
  int fanout = 0;
};

/// The fixed rules' choice. `bytes` as Collective::bytes means it (algorithms.hpp): the message
/// (bcast), the vector (reduce, allreduce, and reduce_scatter: the whole vector, as the trace
/// records it), this member's contribution (gather, allgather, allgatherv: taken as every
/// member's), per peer (alltoall), one block (reduce_scatter_block, scatter); ignored by barrier
/// and alltoallv. The 4.1 rules compare exactly these quantities (none is multiplied by the
/// communicator size), except allgatherv (the average contribution) and reduce_scatter (the sum
/// of the blocks, = the vector). `commutative` matters to reduce, allreduce,
/// reduce_scatter(_block).
TunedDecision openmpi_tuned_decision(Operation op, std::size_t comm_size, std::uint64_t bytes,
                                     bool commutative);

/// The same from a collective call, taking the sums from `counts` (reduce_scatter, allgatherv).
TunedDecision openmpi_tuned_decision(const Collective& c, bool commutative);

struct NearestAlgorithm {
  Algorithm algorithm;
  /// True when commgauge's schedule sends the same messages (peers, bytes, order of dependent
  /// steps) as Open MPI's algorithm with the decision's segment size and fan-out.
  bool exact = false;
};

/// The algorithms.hpp algorithm nearest to Open MPI's algorithm `algorithm_id` for `op`
/// (comm_size: some Open MPI algorithms switch by it, e.g. allgather recursive doubling becomes
/// Bruck on non-powers of two). nullopt for an id Open MPI does not have.
std::optional<NearestAlgorithm> nearest_algorithm(Operation op, int algorithm_id,
                                                  std::size_t comm_size);
std::optional<NearestAlgorithm> nearest_algorithm(Operation op, const TunedDecision& decision,
                                                  std::size_t comm_size);

/// This member's steps as Open MPI 4.1 would run the call: the decision, Open MPI's fallbacks
/// inside the algorithms that depend on the element count (`element_bytes`: the datatype's
/// size; 1 counts bytes), and the algorithms made of other collectives (allreduce
/// nonoverlapping = tuned reduce + tuned bcast, reduce_scatter nonoverlapping = tuned reduce +
/// linear scatterv, reduce_scatter_block basic_linear = tuned reduce + tuned scatter, allgatherv
/// default = linear gatherv + tuned bcast) composed from their parts.
/// What openmpi_tuned_schedule ran, for the simulator's per-collective report.
struct TunedChoice {
  TunedDecision decision;
  /// The algorithm whose schedule ran (after Open MPI's own fallbacks); for a composed decision
  /// the first part's operation runs under its own tuned choice.
  Algorithm used = Algorithm::linear;
  bool exact = false;     ///< as NearestAlgorithm::exact
  bool fallback = false;  ///< Open MPI's algorithm falls back by element count (used differs)
  bool composed = false;  ///< made of other collectives (e.g. allreduce = reduce + bcast)
};

std::vector<Step> openmpi_tuned_schedule(const Collective& c, bool commutative,
                                         std::uint64_t element_bytes = 1,
                                         TunedChoice* choice = nullptr);

}  // namespace commgauge::collectives
