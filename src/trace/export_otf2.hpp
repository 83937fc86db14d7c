#pragma once
// Export to OTF2 (the Open Trace Format 2 of Score-P, Vampir, Scalasca), through Debian's
// libotf2: an archive OUT/traces.otf2 (anchor), OUT/traces.def, OUT/traces/ as Score-P lays it
// out, read by otf2-print, python3-otf2 and Vampir.
//
// What is written (docs/trace-format.md, "OTF2"): one location per rank and thread, in a
// location group per rank under its host in the system tree; one region per MPI function used,
// with Enter/Leave around every call; the MPI events OTF2 defines for what the call did
// (MpiSend/MpiIsend/MpiIsendComplete, MpiRecv/MpiIrecvRequest/MpiIrecv, MpiRequestCancelled,
// MpiCollectiveBegin/End, NonBlockingCollectiveRequest/Complete; communicator creation and
// release as the collectives CREATE_HANDLE and DESTROY_HANDLE); every communicator with its
// members. Peers and roots are ranks in the event's communicator, as OTF2 requires; times are
// nanoseconds on rank 0's clock (the trace's clock synchronization).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "trace/reader.hpp"

namespace commgauge::trace {

/// False when this build has no libotf2 (the export then throws InputError saying so).
bool otf2_available();

struct Otf2ExportResult {
  std::uint32_t ranks = 0;
  std::uint64_t locations = 0;
  std::uint64_t events = 0;  ///< OTF2 events written
  std::uint64_t calls = 0;   ///< MPI calls (Enter/Leave pairs)
  std::uint64_t messages = 0;
  std::uint64_t collectives = 0;
  std::uint64_t communicators = 0;
  std::vector<std::string> notes;  ///< what the export left out, once per kind
};

/// Writes the archive into `out` (created). An archive named "traces" there already is refused,
/// or with `replace` replaced once the new one is whole (only traces.otf2, traces.def and the
/// traces directory, each of its kind; anything else of that name is refused).
/// Throws TraceError for a trace it cannot export faithfully (a truncated rank, a communicator
/// used before its creation, an intercommunicator).
Otf2ExportResult export_otf2(const TraceReader& trace, const std::filesystem::path& out,
                             bool replace = false);

}  // namespace commgauge::trace
