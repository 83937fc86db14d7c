#pragma once
// --timeline: the measured and the predicted run as Chrome trace-event JSON (the "JSON Array
// Format" with complete "X" events), which Perfetto and chrome://tracing open. One process per
// run (the trace, then each model), one thread per rank; times in microseconds from the end of
// each rank's MPI_Init. Written as the replay goes, so memory does not grow with the trace.

#include <cstdio>
#include <filesystem>
#include <string>

#include "sim/simulator.hpp"

namespace commgauge::report {

class TimelineWriter {
 public:
  /// Creates `path` (InputError if it cannot).
  explicit TimelineWriter(const std::filesystem::path& path);
  ~TimelineWriter();
  TimelineWriter(const TimelineWriter&) = delete;
  TimelineWriter& operator=(const TimelineWriter&) = delete;

  /// Names process `pid` ("measured (trace)", "predicted (loggps)").
  void process(int pid, const std::string& name);
  /// One span of `pid`.
  void span(int pid, const sim::TimelineSpan& s);
  /// Closes the JSON array; throws InputError if the file could not be written completely.
  void finish();

 private:
  void separator();
  std::filesystem::path path_;
  std::FILE* out_ = nullptr;
  bool first_ = true;
};

}  // namespace commgauge::report
