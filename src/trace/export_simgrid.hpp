#pragma once
// Export to SimGrid 3.32's time-independent trace format, as its replayer (smpirun -replay)
// accepts it: one action file per rank plus a file listing them, a platform and a host file.
//
// What the replayer needs and how the export provides it (docs/trace-format.md, "SimGrid"):
// - sizes in bytes, no datatype code (the replayer's default type is then MPI_BYTE);
// - computation as `compute <flops>` = the recorded gap between MPI calls (less local MPI
//   calls and the tracer's overhead) x --host-speed, which the platform file also declares;
// - the replayer knows a request by (source, destination, tag), so every message gets an
//   exported tag that also counts the messages of its channel (communicator, source,
//   destination, MPI tag): sender and receiver number them alike by MPI's non-overtaking rule,
//   and two requests in flight never share a key;
// - wildcards become the matched source and tag; every completed request becomes one
//   `wait src dst tag` (Waitall, Waitany, Waitsome, Test*...); Sendrecv becomes
//   irecv + send + wait; Start becomes isend/irecv;
// - collectives on MPI_COMM_WORLD map to the replayer's actions where it has them; the others
//   (sub-communicators, scan, exscan, reduce_scatter_block, alltoallw) are lowered to
//   point-to-point steps by the algorithms of collectives/; nonblocking collectives are
//   replayed, blocking, where the trace completes them.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "collectives/algorithms.hpp"
#include "trace/reader.hpp"

namespace commgauge::trace {

struct SimgridExportOptions {
  double host_speed_flops = 1e9;  ///< flops per second of every host
  double bandwidth_bytes_per_s = 1.25e9;
  double latency_s = 1e-6;
  /// Algorithms for lowered collectives (default: the first of algorithms_for()).
  std::map<collectives::Operation, collectives::Algorithm> algorithms;
};

struct SimgridExportResult {
  std::uint32_t ranks = 0;
  std::uint64_t actions = 0;
  std::uint64_t messages = 0;
  std::uint64_t world_collectives = 0;    ///< exported as SimGrid collective actions
  std::uint64_t lowered_collectives = 0;  ///< exported as point-to-point steps
  double compute_seconds = 0;
  std::uint64_t hosts = 0;
  std::vector<std::string> notes;  ///< what the export approximated, once per kind
};

/// Writes OUT/trace.txt (the list), OUT/rank-<r>.txt, OUT/platform.xml, OUT/hostfile.txt.
/// Throws TraceError for a trace it cannot export faithfully (a truncated rank, an unmatched
/// request, a v or w collective or reduce_scatter on an intercommunicator).
SimgridExportResult export_simgrid_ti(const TraceReader& trace, const std::filesystem::path& out,
                                      const SimgridExportOptions& options);

}  // namespace commgauge::trace
