#include "cli/trace_boundary.hpp"

#include <cstdio>

#include "trace/check.hpp"

namespace commgauge::cli {

void add_no_check_flag(CLI::App& cmd, bool& no_check) {
  cmd.add_flag("--no-check", no_check,
               "skip trace-check's validation before reading the trace (for a trace already "
               "checked: the check reads the whole trace once more; at 32 K ranks it costs about "
               "as much as the replay)");
}

bool trace_passes_check(const trace::TraceReader& trace, bool skip) {
  if (skip) return true;
  const trace::CheckResult r = trace::check_trace(trace);
  if (r.ok()) return true;
  std::fputs(trace::check_report(r, trace.ranks()).c_str(), stdout);
  std::fflush(stdout);
  return false;
}

}  // namespace commgauge::cli
