#pragma once
// Output of the trace commands: the mpiP-style summary (text and JSON) and one event per line
// for trace-dump.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "report/text_table.hpp"
#include "trace/format.hpp"
#include "trace/summary.hpp"

namespace commgauge::report {

std::string trace_summary_text(const trace::TraceSummary& s, std::size_t max_rank_rows = 64,
                               TableSink* sink = nullptr);
/// {"ranks", "point_to_point": {"messages", "bytes", "pairs": [{"from", "to", "messages",
/// "bytes"}]}, "message_sizes": [{"from_bytes", "to_bytes", "point_to_point_messages",
/// "point_to_point_bytes", "collective_calls", "collective_bytes"}], "finished", "complete",
/// "functions": [{"name", "class", "calls", "bytes", "seconds"}], "unmodeled": [{"name",
/// "calls"}], "per_rank": [...], "largest_messages": [...]}
nlohmann::json trace_summary_json(const trace::TraceSummary& s);
/// The communication matrix as CSV: from,to,messages,bytes per pair that exchanged anything.
std::string traffic_csv(const trace::TraceSummary& s);
/// The communication matrix as a heatmap (PNG or SVG by extension): bytes sent per sender and
/// receiver; false (nothing written) when the trace has no point-to-point send.
/// Whether the trace has a point-to-point send for plot_traffic to draw.
bool has_traffic(const trace::TraceSummary& s);

bool plot_traffic(const std::filesystem::path& output, const trace::TraceSummary& s,
                  const std::string& title);

/// One event as text; `t_seconds` is its start on rank 0's clock relative to the trace origin,
/// `ns_per_tick` the rank's clock rate.
std::string event_text(const trace::Event& e, double t_seconds, double ns_per_tick);

}  // namespace commgauge::report
