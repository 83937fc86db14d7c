#pragma once
// One validation at the boundary: simulate and trace-export read a trace only after the same
// check trace-check runs, and refuse it with trace-check's own report and exit status.

#include <CLI/CLI.hpp>

#include "trace/reader.hpp"

namespace commgauge::cli {

/// Opens the trace a command names: a commgauge trace (directory or container file), or an OTF2
/// archive (an anchor file NAME.otf2, or a directory holding one), which is converted into a
/// container in the temporary directory first (removed once open; what the conversion had to
/// reconstruct is printed on stderr).
trace::TraceReader open_trace(const std::string& path);

/// Adds --no-check to a command that reads a trace.
void add_no_check_flag(CLI::App& cmd, bool& no_check);

/// Runs trace-check's check on `trace` unless `skip`; on errors prints trace-check's report to
/// stdout and returns false (the command then exits 1, as trace-check does).
bool trace_passes_check(const trace::TraceReader& trace, bool skip);

}  // namespace commgauge::cli
