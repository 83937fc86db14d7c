#pragma once
// --timeline: the measured and the predicted run as Chrome trace-event JSON (the "JSON Array
// Format" with complete "X" events), which Perfetto and chrome://tracing open. One process per
// run (the trace, then each model), one thread per rank; times in microseconds from the end of
// each rank's MPI_Init. Written as the replay goes, so memory does not grow with the trace.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/text_file.hpp"

#include "sim/simulator.hpp"

namespace commgauge::report {

class TimelineWriter {
 public:
  /// Starts `path` (an AtomicFile: it appears only when finish() succeeds).
  explicit TimelineWriter(const std::filesystem::path& path);
  TimelineWriter(const TimelineWriter&) = delete;
  TimelineWriter& operator=(const TimelineWriter&) = delete;

  /// Names process `pid` ("measured (trace)", "predicted (loggps)").
  void process(int pid, const std::string& name);
  /// One span of `pid`; a rank's first span also names its thread ("rank N").
  void span(int pid, const sim::TimelineSpan& s);
  /// A message of `pid` as an arrow (a flow from the sender's slice to the receiver's).
  void message(int pid, const sim::TimelineMessage& m);
  /// Closes the JSON array and publishes the file; OutputError if it could not be written.
  void finish();

 private:
  void separator();
  AtomicFile file_;
  bool first_ = true;
  std::vector<std::vector<bool>> named_;  ///< per pid, per rank: thread named already
  std::uint64_t flows_ = 0;               ///< flow ids handed out
};

}  // namespace commgauge::report
