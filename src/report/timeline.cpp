#include "report/timeline.hpp"

#include <fmt/ostream.h>

#include "trace/functions.hpp"

namespace commgauge::report {

TimelineWriter::TimelineWriter(const std::filesystem::path& path) : file_(path) {
  file_.write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
}

void TimelineWriter::separator() {
  if (!first_) file_.write(",\n");
  first_ = false;
}

void TimelineWriter::process(int pid, const std::string& name) {
  separator();
  fmt::print(file_.stream(),
             R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"{}"}}}})", pid, name);
}

void TimelineWriter::span(int pid, const sim::TimelineSpan& s) {
  separator();
  const bool compute = s.function == 0;
  // Microseconds with nanosecond digits: the format's unit.
  fmt::print(file_.stream(),
             R"({{"ph":"X","pid":{},"tid":{},"name":"{}","cat":"{}","ts":{:.3f},"dur":{:.3f}}})",
             pid, s.rank,
             compute ? std::string_view("computation") : trace::function_name(s.function),
             compute ? "compute" : "mpi", s.start_ns * 1e-3, s.duration_ns * 1e-3);
}

void TimelineWriter::finish() {
  file_.write("\n]}\n");
  file_.commit();
}

}  // namespace commgauge::report
