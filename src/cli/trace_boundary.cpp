#include "cli/trace_boundary.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "cli/options.hpp"
#include "common/error.hpp"
#include "trace/check.hpp"
#include "trace/import_otf2.hpp"

namespace commgauge::cli {

trace::TraceReader open_trace(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path anchor = trace::otf2_anchor(path);
  if (anchor.empty()) return trace::TraceReader(path);
  const char* tmp = std::getenv("TMPDIR");
  std::string name =
      (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "commgauge-otf2-XXXXXX").string();
  const int fd = mkstemp(name.data());
  if (fd < 0)
    throw OutputError(name, "cannot create a scratch file for the OTF2 conversion (TMPDIR)");
  ::close(fd);
  struct Remove {
    std::string file;
    ~Remove() { std::remove(file.c_str()); }
  } remove{name};
  const trace::Otf2ImportResult r = trace::import_otf2(anchor, name);
  warn(fmt::format("{}: OTF2 archive{}{}, {} ranks, {} MPI calls converted\n", anchor.string(),
                   r.creator.empty() ? "" : " written by ", r.creator, r.ranks, r.calls));
  for (const auto& n : r.notes)
    warn("note: " + n + "\n");
  // Open, then unlinked by `remove`: the reader holds the file's descriptor.
  return trace::TraceReader(name);
}

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
