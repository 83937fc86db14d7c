#pragma once
// An mpiP-style profile of a trace: per rank and in total, time in computation and in MPI,
// calls, bytes and time by function, the largest messages, the unmodeled calls, poll runs.
// Ranks are read one after the other, each streamed.

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
  std::uint64_t events = 0;
  std::uint64_t poll_runs = 0;
  std::uint64_t polls = 0;  ///< failed Test/Iprobe calls folded into the runs
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

struct TraceSummary {
  std::uint32_t ranks = 0;
  bool finished = false;  ///< every rank reached MPI_Finalize
  bool complete = false;  ///< finished, and no unmodeled (opaque) calls
  std::vector<std::uint32_t> missing_ranks;
  std::vector<RankSummary> per_rank;
  std::map<std::uint32_t, FunctionTotals> functions;  ///< over all ranks
  std::map<std::uint32_t, std::uint64_t> unmodeled;   ///< opaque calls by function
  std::vector<MessageRecord> largest;                 ///< the largest, descending
  std::uint64_t trace_bytes = 0;
};

/// Reads the whole trace once. Throws TraceError on damaged data.
TraceSummary summarize(const TraceReader& trace, std::size_t largest_messages = 10);

}  // namespace commgauge::trace
