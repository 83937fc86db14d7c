#include "report/timeline.hpp"

#include <fmt/ostream.h>

#include "trace/format.hpp"
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
  const auto p = static_cast<std::size_t>(pid);
  if (named_.size() <= p) named_.resize(p + 1);
  auto& named = named_[p];
  if (named.size() <= s.rank) named.resize(static_cast<std::size_t>(s.rank) + 1, false);
  if (!named[s.rank]) {
    named[s.rank] = true;
    separator();
    fmt::print(file_.stream(),
               R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"rank {}"}}}})",
               pid, s.rank, s.rank);
  }
  separator();
  const bool compute = s.function == 0;
  // Microseconds with nanosecond digits: the format's unit.
  fmt::print(file_.stream(),
             R"({{"ph":"X","pid":{},"tid":{},"name":"{}","cat":"{}","ts":{:.3f},"dur":{:.3f})", pid,
             s.rank, compute ? std::string_view("computation") : trace::function_name(s.function),
             compute ? "compute" : "mpi", s.start_ns * 1e-3, s.duration_ns * 1e-3);
  if (s.arguments != nullptr && s.arguments->fields != 0) {
    // The call's arguments as recorded (world ranks, the trace's communicator ids), shown when
    // a slice is selected.
    const sim::TimelineArguments& a = *s.arguments;
    std::string args;
    const auto add = [&args](std::string_view name, auto value) {
      args += fmt::format(R"({}"{}":{})", args.empty() ? "" : ",", name, value);
    };
    if (a.fields & trace::kPeer) add("peer", a.peer);
    if (a.fields & trace::kTag) add("tag", a.tag);
    if (a.fields & trace::kRoot) add("root", a.root);
    if (a.fields & trace::kComm) add("comm", a.comm);
    if (a.fields & trace::kBytes) add("bytes", a.bytes);
    fmt::print(file_.stream(), R"(,"args":{{{}}})", args);
  }
  file_.stream() << '}';
}

void TimelineWriter::message(int pid, const sim::TimelineMessage& m) {
  // A flow: "s" binds to the sender's slice enclosing the post, "f" (binding point "e") to the
  // receiver's slice enclosing the completion.
  const std::uint64_t id = ++flows_;
  separator();
  fmt::print(
      file_.stream(),
      R"({{"ph":"s","id":{},"pid":{},"tid":{},"name":"message","cat":"message","ts":{:.3f},"args":{{"bytes":{}}}}})",
      id, pid, m.from, m.sent_ns * 1e-3, m.bytes);
  separator();
  fmt::print(
      file_.stream(),
      R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"name":"message","cat":"message","ts":{:.3f}}})",
      id, pid, m.to, m.received_ns * 1e-3);
}

void TimelineWriter::finish() {
  file_.write("\n]}\n");
  file_.commit();
}

}  // namespace commgauge::report
