#pragma once
// A collective's sent and received bytes as OTF2's MpiCollectiveEnd carries them, and back.
//
// The commgauge trace records a collective's buffers as the call passed them (bytes per block,
// per-peer counts); OTF2 carries one total per direction. The totals follow Score-P's count
// (its MPI adapter, scorep_mpi_coll_bytes_*), the convention readers of OTF2 traces expect:
// every peer's block, the rank's own included unless MPI_IN_PLACE was passed. The way back
// recovers the blocks where the totals determine them; per-peer counts of the v-collectives are
// spread evenly (the totals do not hold them).

#include <cstdint>
#include <string_view>

#include "collectives/algorithms.hpp"
#include "trace/format.hpp"

namespace commgauge::trace {

struct CollectiveBytes {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
};

/// The operation a collective call performs: its recorder pattern's, except MPI_Scan and
/// MPI_Exscan (and their I-forms), which the trace records with allreduce's pattern.
collectives::Operation collective_operation(collectives::Operation op,
                                            std::string_view function_name);

/// Totals of the event `e` of a rank at position `me` among `n` members, root at `root`
/// (ignored where the operation has none).
CollectiveBytes collective_bytes(collectives::Operation op, const Event& e, std::uint64_t n,
                                 std::uint64_t me, std::uint64_t root);

/// The buffers back from the totals into `e` (fields kBytes, kRecvBytes, kCounts, kRecvCounts).
void collective_buffers(collectives::Operation op, CollectiveBytes totals, std::uint64_t n,
                        std::uint64_t me, std::uint64_t root, Event& e);

}  // namespace commgauge::trace
