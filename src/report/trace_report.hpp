#pragma once
// Output of the trace commands: the mpiP-style summary (text and JSON) and one event per line
// for trace-dump.

#include <string>

#include <nlohmann/json.hpp>

#include "trace/format.hpp"
#include "trace/summary.hpp"

namespace commgauge::report {

std::string trace_summary_text(const trace::TraceSummary& s, std::size_t max_rank_rows = 64);
/// {"ranks", "finished", "complete", "functions": [{"name", "class", "calls", "bytes",
/// "seconds"}], "unmodeled": [{"name", "calls"}], "per_rank": [...], "largest_messages": [...]}
nlohmann::json trace_summary_json(const trace::TraceSummary& s);

/// One event as text; `t_seconds` is its start on rank 0's clock relative to the trace origin,
/// `ns_per_tick` the rank's clock rate.
std::string event_text(const trace::Event& e, double t_seconds, double ns_per_tick);

}  // namespace commgauge::report
