#include "report/timeline.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/error.hpp"
#include "trace/functions.hpp"

namespace commgauge::report {

TimelineWriter::TimelineWriter(const std::filesystem::path& path) : path_(path) {
  out_ = std::fopen(path.c_str(), "w");
  if (out_ == nullptr)
    throw InputError("timeline",
                     fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out_);
}

TimelineWriter::~TimelineWriter() {
  if (out_ != nullptr) std::fclose(out_);
}

void TimelineWriter::separator() {
  if (!first_) std::fputs(",\n", out_);
  first_ = false;
}

void TimelineWriter::process(int pid, const std::string& name) {
  separator();
  fmt::print(out_, R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"{}"}}}})", pid,
             name);
}

void TimelineWriter::span(int pid, const sim::TimelineSpan& s) {
  separator();
  const bool compute = s.function == 0;
  // Microseconds with nanosecond digits: the format's unit.
  fmt::print(
      out_, R"({{"ph":"X","pid":{},"tid":{},"name":"{}","cat":"{}","ts":{:.3f},"dur":{:.3f}}})",
      pid, s.rank, compute ? std::string_view("computation") : trace::function_name(s.function),
      compute ? "compute" : "mpi", s.start_ns * 1e-3, s.duration_ns * 1e-3);
}

void TimelineWriter::finish() {
  std::fputs("\n]}\n", out_);
  const bool failed = std::ferror(out_) != 0;
  const int closed = std::fclose(out_);
  out_ = nullptr;
  if (failed || closed != 0)
    throw InputError("timeline", "could not write " + path_.string() + " completely");
}

}  // namespace commgauge::report
