#pragma once
// Reading OTF2 traces written by other tools (Score-P, or anything that writes OTF2's MPI
// records), through Debian's libotf2: the archive is converted into a commgauge trace container,
// which every trace command then reads as it reads its own traces.
//
// What an OTF2 trace must contain for replay (README, "Traces from other tools"): one location
// group of type process per MPI rank and a COMM_LOCATIONS group mapping ranks to locations (or
// location groups numbered as the ranks); Enter/Leave of regions named as the MPI functions
// (MPI_Send, MPI_Allreduce...); inside them the MPI records: MpiSend/MpiIsend, MpiRecv,
// MpiIrecvRequest with its MpiIrecv completion, MpiIsendComplete, MpiCollectiveEnd (operation,
// communicator, root, sizes), NonBlockingCollectiveRequest/Complete; the communicators with
// their groups. Regions that are not MPI functions are computation. What OTF2 does not hold is
// reconstructed and said: a receive's source and tag as asked for (taken from its completion),
// per-peer counts of v-collectives (spread evenly over the totals), persistent requests (each
// start becomes MPI_Isend/MPI_Irecv).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace commgauge::trace {

/// The anchor file when `path` is an OTF2 archive: a file NAME.otf2, or a directory holding
/// exactly one (Score-P's experiment directory holds traces.otf2); else empty.
std::filesystem::path otf2_anchor(const std::filesystem::path& path);

struct Otf2ImportResult {
  std::uint32_t ranks = 0;
  std::uint64_t locations = 0;
  std::uint64_t calls = 0;  ///< MPI calls written
  std::uint64_t messages = 0;
  std::uint64_t collectives = 0;
  std::string creator;
  std::vector<std::string> notes;  ///< what was reconstructed or left out, once per kind
};

/// Converts the archive at `anchor` into a commgauge trace container at `container`. Throws
/// TraceError for what cannot be converted (no MPI ranks, an MPI record outside an MPI call),
/// InputError when this build has no libotf2.
Otf2ImportResult import_otf2(const std::filesystem::path& anchor,
                             const std::filesystem::path& container);

}  // namespace commgauge::trace
