#pragma once
// An mpiP-style profile of a trace: per rank and in total, time in computation and in MPI,
// calls, bytes and time by function, the largest messages, the unmodeled calls, poll runs, the
// point-to-point traffic between ranks (communication matrix) and the message sizes.
// Ranks are read one after the other, each streamed.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/functions.hpp"
#include "trace/reader.hpp"

namespace commgauge::trace {

struct FunctionTotals {
  std::uint64_t calls = 0;
  std::uint64_t bytes = 0;  ///< count x type size as passed (sends: sent; collectives: sent)
  double seconds = 0;       ///< time inside the calls (poll runs: the estimated in-MPI part)
};

struct RankSummary {
  std::uint32_t rank = 0;
  std::string host;
  RankEnd end = RankEnd::reading;
  /// From the end of MPI_Init to the start of MPI_Finalize (or the last event if none).
  double window_seconds = 0;
  double mpi_seconds = 0;          ///< recorded calls + poll runs' in-MPI part + local calls
  double computation_seconds = 0;  ///< window minus MPI, minus the tracer's own overhead
  double tracer_overhead_seconds = 0;
  double tracer_ns_per_event = 0;  ///< the tracer's calibration at MPI_Init (0: none)
  std::uint64_t events = 0;
  std::uint64_t poll_runs = 0;
  std::uint64_t polls = 0;  ///< failed Test/Iprobe calls folded into the runs
  /// Receives whose buffer the tracer looked at (Event::fresh_bytes), those with pages never
  /// touched, and those pages' bytes.
  std::uint64_t looked_receives = 0;
  std::uint64_t fresh_receives = 0;
  std::uint64_t fresh_bytes = 0;
  std::map<std::uint32_t, FunctionTotals> functions;
  std::string error;  ///< why the rank's data could not be read to its end (TraceError)
};

struct MessageRecord {
  std::uint32_t function = 0;
  std::uint32_t rank = 0;
  std::int32_t peer = 0;  ///< world rank, or -1 for collectives
  std::uint64_t bytes = 0;
  std::uint64_t event = 0;
};

/// Messages and their bytes.
/// total += bytes, saturating at 2^64 - 1 instead of wrapping (19 messages of 10^18 bytes once
/// summed to 1.1e18): a total at the maximum reads as "at least this".
void add_bytes(std::uint64_t& total, std::uint64_t bytes);

struct Traffic {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

/// Sizes by powers of two: bin 0 holds 0 bytes, bin k >= 1 the sizes in [2^(k-1), 2^k).
struct SizeHistogram {
  std::array<Traffic, 65> bins{};

  void add(std::uint64_t bytes);
  static std::size_t bin_of(std::uint64_t bytes);
  static std::uint64_t lowest(std::size_t bin);   ///< smallest size in the bin
  static std::uint64_t highest(std::size_t bin);  ///< largest size in the bin
};

/// A place in the program that calls an MPI function: the object file and the address of the
/// call instruction in it (module "" : an absolute address in an object loaded after MPI_Init).
struct CallSite {
  std::string module;
  std::uint64_t offset = 0;
  std::uint32_t function = 0;
  auto operator<=>(const CallSite&) const = default;
};

struct CallSiteTotals {
  FunctionTotals totals;
  std::uint32_t ranks = 0;  ///< ranks that called from here
};

/// What addr2line says about an address: the enclosing function and the source line.
struct SourceLocation {
  std::string function;  ///< empty if unknown
  std::string file;      ///< empty if the object has no line information
  std::uint32_t line = 0;
};

struct TraceSummary {
  std::uint32_t ranks = 0;
  bool finished = false;  ///< every rank reached MPI_Finalize
  bool complete = false;  ///< finished, and no unmodeled (opaque) calls
  std::vector<std::uint32_t> missing_ranks;
  std::vector<RankSummary> per_rank;
  std::map<std::uint32_t, FunctionTotals> functions;  ///< over all ranks
  std::map<std::uint32_t, std::uint64_t> unmodeled;   ///< opaque calls by function
  std::vector<MessageRecord> largest;                 ///< the largest, descending
  /// Point-to-point sends as the calls passed them (Send family, Isend family, Sendrecv's send,
  /// each start of a persistent send), by sending rank (index) and destination world rank:
  /// sparse, so that a trace of many ranks costs what its pairs cost.
  std::vector<std::map<std::int32_t, Traffic>> sent;
  SizeHistogram point_to_point_sizes;  ///< the same sends by size
  SizeHistogram collective_sizes;      ///< collective calls by what the rank sends (as passed)
  /// MPI calls by call site over all ranks (traces that record sites; Init and Finalize, which
  /// bound the window, and poll runs are not counted).
  std::map<CallSite, CallSiteTotals> call_sites;
  /// Where resolve_call_sites() found them in the source; empty until it runs.
  std::map<std::pair<std::string, std::uint64_t>, SourceLocation> site_locations;
  std::uint64_t trace_bytes = 0;
};

/// Reads the whole trace once. Throws TraceError on damaged data.
TraceSummary summarize(const TraceReader& trace, std::size_t largest_messages = 10);

/// Fills summary.site_locations with binutils' addr2line (one run per module, at most
/// `time_limit_s` each). Sites whose object is gone or has no symbols stay unresolved; without
/// addr2line nothing is resolved. Returns how many sites were resolved to a function or line.
std::size_t resolve_call_sites(TraceSummary& summary, double time_limit_s = 60);

/// A rank whose tracer calibration (its cost per recorded event, a fixed CPU-bound workload timed
/// at MPI_Init) exceeds the least over the ranks by kSlowedProcessorRatio: its processor ran
/// slower while traced (shared with another process, a hypervisor's steal time, a slower core).
inline constexpr double kSlowedProcessorRatio = 1.3;
/// The note naming such ranks (at most 8 named, then how many more), with the figures; empty
/// where none is, or fewer than two ranks carry a calibration (0: none, as in imported traces).
std::string slowed_processor_note(const std::vector<double>& ns_per_event);

}  // namespace commgauge::trace
