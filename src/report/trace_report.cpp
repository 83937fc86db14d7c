#include "report/trace_report.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/plot.hpp"
#include "report/text_table.hpp"

namespace commgauge::report {

namespace {

std::string class_name(std::uint32_t id) {
  const trace::FunctionInfo* f = trace::find_function(id);
  return f != nullptr ? std::string(trace::to_string(f->function_class)) : "unknown";
}

std::string bytes_text(std::uint64_t b) {
  if (b >= (1ULL << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(b) / (1 << 30));
  if (b >= (1ULL << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
  if (b >= (1ULL << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(b) / (1 << 10));
  return fmt::format("{} B", b);
}

std::string end_text(trace::RankEnd e) {
  switch (e) {
    case trace::RankEnd::complete:
      return "finished";
    case trace::RankEnd::truncated:
      return "TRUNCATED";
    case trace::RankEnd::reading:
      return "?";
  }
  return "?";
}

std::string peer_text(std::int32_t p) {
  if (p == trace::kAnySource) return "any";
  if (p == trace::kProcNull) return "null";
  if (p == trace::kRootSelf) return "root";
  return std::to_string(p);
}

std::string size_range(std::size_t bin) {
  const std::uint64_t lo = trace::SizeHistogram::lowest(bin),
                      hi = trace::SizeHistogram::highest(bin);
  return lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi);
}

struct Pair {
  std::int32_t from = 0, to = 0;
  trace::Traffic traffic;
};

std::vector<Pair> pairs_of(const trace::TraceSummary& s) {
  std::vector<Pair> out;
  for (std::size_t from = 0; from < s.sent.size(); ++from)
    for (const auto& [to, t] : s.sent[from])
      out.push_back({static_cast<std::int32_t>(from), to, t});
  return out;
}

// The traffic table: the whole matrix when it is small, else the pairs that moved most.
constexpr std::size_t kMatrixRanks = 16;
constexpr std::size_t kTopPairs = 16;

std::string traffic_text(const trace::TraceSummary& s, TableSink* sink) {
  const std::vector<Pair> pairs = pairs_of(s);
  if (pairs.empty()) return "";
  trace::Traffic all;
  for (const auto& p : pairs) {
    all.messages += p.traffic.messages;
    trace::add_bytes(all.bytes, p.traffic.bytes);
  }
  std::string out = fmt::format(
      "\nPoint-to-point traffic (what the send calls passed): {} messages, {} between {} pairs of "
      "ranks\n",
      all.messages, bytes_text(all.bytes), pairs.size());
  if (s.ranks <= kMatrixRanks) {
    out += "bytes sent, sender (row) to receiver (column)\n";
    std::vector<std::string> header = {"from\\to"};
    for (std::uint32_t r = 0; r < s.ranks; ++r)
      header.push_back(std::to_string(r));
    TextTable matrix(header);
    static const std::map<std::int32_t, trace::Traffic> kNone;
    for (std::uint32_t from = 0; from < s.ranks; ++from) {
      std::vector<std::string> row = {std::to_string(from)};
      // A reference, not a copy of the rank's map per cell (a ternary with a temporary copies).
      const auto& m = from < s.sent.size() ? s.sent[from] : kNone;
      for (std::uint32_t to = 0; to < s.ranks; ++to) {
        const auto it = m.find(static_cast<std::int32_t>(to));
        row.push_back(it == m.end() ? "-" : std::to_string(it->second.bytes));
      }
      matrix.add_row(row);
    }
    out += render(matrix, sink, "traffic_matrix");
    return out;
  }
  std::vector<Pair> top = pairs;
  const std::size_t k = std::min(kTopPairs, top.size());
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(k), top.end(),
                    [](const Pair& a, const Pair& b) {
                      if (a.traffic.bytes != b.traffic.bytes)
                        return a.traffic.bytes > b.traffic.bytes;
                      return a.from != b.from ? a.from < b.from : a.to < b.to;
                    });
  out += fmt::format(
      "the {} pairs with the most bytes (the JSON and CSV outputs have every pair)\n", k);
  TextTable table({"from", "to", "messages", "bytes"});
  for (std::size_t i = 0; i < k; ++i)
    table.add_row({std::to_string(top[i].from), std::to_string(top[i].to),
                   std::to_string(top[i].traffic.messages), std::to_string(top[i].traffic.bytes)});
  out += render(table, sink, "traffic_pairs");
  return out;
}

std::string sizes_text(const trace::TraceSummary& s, TableSink* sink) {
  TextTable table({"size_B", "p2p_messages", "p2p_bytes", "collective_calls", "collective_bytes"});
  bool any = false;
  for (std::size_t b = 0; b < s.point_to_point_sizes.bins.size(); ++b) {
    const auto& p = s.point_to_point_sizes.bins[b];
    const auto& c = s.collective_sizes.bins[b];
    if (p.messages == 0 && c.messages == 0) continue;
    any = true;
    table.add_row({size_range(b), std::to_string(p.messages), std::to_string(p.bytes),
                   std::to_string(c.messages), std::to_string(c.bytes)});
  }
  if (!any) return "";
  return "\nMessage sizes (point-to-point sends; collective calls by what each rank passes)\n" +
         render(table, sink, "message_sizes");
}

/// Where a call site is: "ring.c:31" when addr2line found the line, else the object's name and
/// the address in it ("ring+0x1234"); the absolute address for an object loaded after Init.
std::string site_text(const trace::TraceSummary& s, const trace::CallSite& site) {
  const auto it = s.site_locations.find({site.module, site.offset});
  if (it != s.site_locations.end() && !it->second.file.empty())
    return fmt::format("{}:{}", std::filesystem::path(it->second.file).filename().string(),
                       it->second.line);
  if (site.module.empty()) return fmt::format("{:#x}", site.offset);
  return fmt::format("{}+{:#x}", std::filesystem::path(site.module).filename().string(),
                     site.offset);
}

std::string caller_text(const trace::TraceSummary& s, const trace::CallSite& site) {
  const auto it = s.site_locations.find({site.module, site.offset});
  return it != s.site_locations.end() && !it->second.function.empty() ? it->second.function : "?";
}

/// Call sites by time inside MPI, as mpiP lists them.
std::string call_sites_text(const trace::TraceSummary& s, double mpi_seconds, TableSink* sink) {
  if (s.call_sites.empty()) return "";
  constexpr std::size_t kRows = 20;
  std::vector<const std::pair<const trace::CallSite, trace::CallSiteTotals>*> rows;
  for (const auto& entry : s.call_sites)
    rows.push_back(&entry);
  std::sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->second.totals.seconds > b->second.totals.seconds;
  });
  TextTable table({"function", "site", "caller", "ranks", "calls", "bytes", "seconds", "%mpi"});
  for (std::size_t i = 0; i < rows.size() && i < kRows; ++i) {
    const auto& [site, t] = *rows[i];
    table.add_row({std::string(trace::function_name(site.function)), site_text(s, site),
                   caller_text(s, site), std::to_string(t.ranks), std::to_string(t.totals.calls),
                   std::to_string(t.totals.bytes), number(t.totals.seconds),
                   number(mpi_seconds > 0 ? 100 * t.totals.seconds / mpi_seconds : 0, 3)});
  }
  std::string out =
      "\nCall sites (all ranks, by time inside MPI)\n" + render(table, sink, "call_sites");
  if (rows.size() > kRows)
    out += fmt::format("(first {} of {} call sites shown; --json has all)\n", kRows, rows.size());
  return out;
}

}  // namespace

std::string trace_summary_text(const trace::TraceSummary& s, std::size_t max_rank_rows,
                               TableSink* sink) {
  std::string out =
      fmt::format("trace: {} ranks, {}, {}; {} on disk\n", s.ranks,
                  s.finished ? "every rank finished" : "NOT every rank finished (see per-rank end)",
                  s.complete ? "complete (every communicating call is modeled)"
                             : "INCOMPLETE (see unmodeled calls)",
                  bytes_text(s.trace_bytes));
  if (!s.missing_ranks.empty()) {
    out += "missing ranks:";
    for (auto r : s.missing_ranks)
      out += fmt::format(" {}", r);
    out += "\n";
  }
  std::vector<double> ns_per_event(s.ranks, 0.0);  // by rank (a missing rank has none)
  for (const auto& r : s.per_rank)
    if (r.rank < ns_per_event.size()) ns_per_event[r.rank] = r.tracer_ns_per_event;
  if (const std::string note = trace::slowed_processor_note(ns_per_event); !note.empty())
    out += "note: " + note + "\n";
  out += "\nPer rank (window: end of MPI_Init to start of MPI_Finalize)\n";
  TextTable ranks({"rank", "host", "end", "window_s", "mpi_s", "mpi_%", "computation_s", "events",
                   "poll_runs", "polls"});
  double window = 0, mpi = 0, comp = 0;
  std::uint64_t events = 0, runs = 0, polls = 0;
  for (const auto& r : s.per_rank) {
    window = std::max(window, r.window_seconds);
    mpi += r.mpi_seconds;
    comp += r.computation_seconds;
    events += r.events;
    runs += r.poll_runs;
    polls += r.polls;
    if (s.per_rank.size() > max_rank_rows && r.rank >= max_rank_rows) continue;
    ranks.add_row({std::to_string(r.rank), r.host, end_text(r.end), number(r.window_seconds),
                   number(r.mpi_seconds),
                   number(r.window_seconds > 0 ? 100 * r.mpi_seconds / r.window_seconds : 0, 3),
                   number(r.computation_seconds), std::to_string(r.events),
                   std::to_string(r.poll_runs), std::to_string(r.polls)});
  }
  ranks.add_row({"all", "", "", number(window), number(mpi), "", number(comp),
                 std::to_string(events), std::to_string(runs), std::to_string(polls)});
  out += render(ranks, sink, "ranks");
  if (s.per_rank.size() > max_rank_rows)
    out += fmt::format("(first {} of {} ranks shown; --json has all)\n", max_rank_rows,
                       s.per_rank.size());
  std::uint64_t looked = 0, fresh = 0, fresh_bytes = 0;
  for (const auto& r : s.per_rank) {
    looked += r.looked_receives;
    fresh += r.fresh_receives;
    fresh_bytes =
        r.fresh_bytes > UINT64_MAX - fresh_bytes ? UINT64_MAX : fresh_bytes + r.fresh_bytes;
  }
  if (fresh > 0)
    out += fmt::format(
        "receives into memory never touched: {} of the {} the tracer looked at, {} in such pages "
        "(their page faults: simulate charges the profile's fresh_memory_us_per_byte)\n",
        fresh, looked, bytes_text(fresh_bytes));
  for (const auto& r : s.per_rank)
    if (!r.error.empty()) out += fmt::format("rank {}: read up to damage: {}\n", r.rank, r.error);

  out += "\nMPI functions (all ranks; bytes: count x type size as passed)\n";
  std::vector<std::pair<std::uint32_t, trace::FunctionTotals>> rows(s.functions.begin(),
                                                                    s.functions.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  TextTable functions({"function", "class", "calls", "bytes", "seconds", "%mpi"});
  for (const auto& [id, f] : rows)
    functions.add_row({std::string(trace::function_name(id)), class_name(id),
                       std::to_string(f.calls), std::to_string(f.bytes), number(f.seconds),
                       class_name(id) == "special"
                           ? "-"  // outside the window
                           : number(mpi > 0 ? 100 * f.seconds / mpi : 0, 3)});
  out += render(functions, sink, "functions");
  out += call_sites_text(s, mpi, sink);
  out += traffic_text(s, sink);
  out += sizes_text(s, sink);

  if (!s.largest.empty()) {
    out += "\nLargest messages (sends and collective calls, by what the rank passed)\n";
    TextTable largest({"function", "rank", "peer", "bytes", "event"});
    for (const auto& m : s.largest)
      largest.add_row({std::string(trace::function_name(m.function)), std::to_string(m.rank),
                       m.peer == -1 ? "(collective)" : peer_text(m.peer), std::to_string(m.bytes),
                       std::to_string(m.event)});
    out += render(largest, sink, "largest_messages");
  }
  if (!s.unmodeled.empty()) {
    out +=
        "\nUnmodeled communicating calls (recorded as opaque events; a replay takes their "
        "recorded time):\n";
    for (const auto& [id, calls] : s.unmodeled)
      out += fmt::format("  {} x{}\n", trace::function_name(id), calls);
  }
  return out;
}

nlohmann::json trace_summary_json(const trace::TraceSummary& s) {
  nlohmann::json functions = nlohmann::json::array();
  for (const auto& [id, f] : s.functions)
    functions.push_back({{"name", trace::function_name(id)},
                         {"class", class_name(id)},
                         {"calls", f.calls},
                         {"bytes", f.bytes},
                         {"seconds", f.seconds}});
  nlohmann::json unmodeled = nlohmann::json::array();
  for (const auto& [id, calls] : s.unmodeled)
    unmodeled.push_back({{"name", trace::function_name(id)}, {"calls", calls}});
  nlohmann::json per_rank = nlohmann::json::array();
  for (const auto& r : s.per_rank) {
    nlohmann::json f = nlohmann::json::array();
    for (const auto& [id, t] : r.functions)
      f.push_back({{"name", trace::function_name(id)},
                   {"calls", t.calls},
                   {"bytes", t.bytes},
                   {"seconds", t.seconds}});
    per_rank.push_back({{"rank", r.rank},
                        {"host", r.host},
                        {"finished", r.end == trace::RankEnd::complete},
                        {"window_seconds", r.window_seconds},
                        {"mpi_seconds", r.mpi_seconds},
                        {"computation_seconds", r.computation_seconds},
                        {"tracer_overhead_seconds", r.tracer_overhead_seconds},
                        {"tracer_ns_per_event", r.tracer_ns_per_event},
                        {"events", r.events},
                        {"poll_runs", r.poll_runs},
                        {"polls", r.polls},
                        {"looked_receives", r.looked_receives},
                        {"fresh_receives", r.fresh_receives},
                        {"fresh_bytes", r.fresh_bytes},
                        {"functions", f},
                        {"error", r.error}});
  }
  nlohmann::json largest = nlohmann::json::array();
  for (const auto& m : s.largest)
    largest.push_back({{"function", trace::function_name(m.function)},
                       {"rank", m.rank},
                       {"peer", m.peer},
                       {"bytes", m.bytes},
                       {"event", m.event}});
  nlohmann::json pairs = nlohmann::json::array();
  trace::Traffic all;
  for (const auto& p : pairs_of(s)) {
    pairs.push_back({{"from", p.from},
                     {"to", p.to},
                     {"messages", p.traffic.messages},
                     {"bytes", p.traffic.bytes}});
    all.messages += p.traffic.messages;
    trace::add_bytes(all.bytes, p.traffic.bytes);
  }
  nlohmann::json sizes = nlohmann::json::array();
  for (std::size_t b = 0; b < s.point_to_point_sizes.bins.size(); ++b) {
    const auto& p = s.point_to_point_sizes.bins[b];
    const auto& c = s.collective_sizes.bins[b];
    if (p.messages == 0 && c.messages == 0) continue;
    sizes.push_back({{"from_bytes", trace::SizeHistogram::lowest(b)},
                     {"to_bytes", trace::SizeHistogram::highest(b)},
                     {"point_to_point_messages", p.messages},
                     {"point_to_point_bytes", p.bytes},
                     {"collective_calls", c.messages},
                     {"collective_bytes", c.bytes}});
  }
  nlohmann::json sites = nlohmann::json::array();
  for (const auto& [site, t] : s.call_sites) {
    nlohmann::json j = {{"function", trace::function_name(site.function)},
                        {"module", site.module},
                        {"offset", site.offset},
                        {"ranks", t.ranks},
                        {"calls", t.totals.calls},
                        {"bytes", t.totals.bytes},
                        {"seconds", t.totals.seconds}};
    const auto it = s.site_locations.find({site.module, site.offset});
    if (it != s.site_locations.end()) {
      j["caller"] = it->second.function;
      j["file"] = it->second.file;
      j["line"] = it->second.line;
    }
    sites.push_back(std::move(j));
  }
  return {{"ranks", s.ranks},
          {"call_sites", sites},
          {"point_to_point", {{"messages", all.messages}, {"bytes", all.bytes}, {"pairs", pairs}}},
          {"message_sizes", sizes},
          {"finished", s.finished},
          {"complete", s.complete},
          {"missing_ranks", s.missing_ranks},
          {"trace_bytes", s.trace_bytes},
          {"functions", functions},
          {"unmodeled", unmodeled},
          {"per_rank", per_rank},
          {"largest_messages", largest}};
}

std::string traffic_csv(const trace::TraceSummary& s) {
  std::string out = "from,to,messages,bytes\n";
  for (const auto& p : pairs_of(s))
    out += fmt::format("{},{},{},{}\n", p.from, p.to, p.traffic.messages, p.traffic.bytes);
  return out;
}

bool has_traffic(const trace::TraceSummary& s) {
  return !pairs_of(s).empty();
}

bool plot_traffic(const std::filesystem::path& output, const trace::TraceSummary& s,
                  const std::string& title) {
  const std::vector<Pair> pairs = pairs_of(s);
  if (pairs.empty()) return false;
  std::string data = "# receiver sender bytes\n";
  for (const auto& p : pairs)
    data += fmt::format("{} {} {}\n", p.to, p.from, p.traffic.bytes);
  const double edge = static_cast<double>(std::max<std::uint32_t>(s.ranks, 1)) - 0.5;
  const std::string script = fmt::format(
      "set title {}\nset xlabel 'receiver (world rank)'\nset ylabel 'sender (world rank)'\n"
      "set cblabel 'bytes sent'\nset cbrange [0:*]\nset xrange [-0.5:{}]\nset yrange "
      "[{}:-0.5]\nset size square\n"
      "set palette defined (0 '#fff5eb', 1 '#fd8d3c', 2 '#7f2704')\nset style fill solid\n"
      "unset key\nplot 'traffic.dat' using 1:2:(0.5):(0.5):3 with boxxyerror lc palette",
      gnuplot_string(title), edge, edge);
  run_gnuplot(output, script, {{"traffic.dat", data}});
  return true;
}

std::string event_text(const trace::Event& e, double t_seconds, double ns_per_tick) {
  using trace::RecordKind;
  const double duration_us = static_cast<double>(e.end_tick - e.start_tick) * ns_per_tick * 1e-3;
  std::string out = fmt::format("{:14.9f} {:>10.3f}us ", t_seconds, duration_us);
  switch (e.kind) {
    case RecordKind::function:
      out += std::string(trace::function_name(e.function));
      break;
    case RecordKind::poll_run:
      out += fmt::format("poll_run {} x{} in_mpi={:.3f}us", trace::function_name(e.function),
                         e.calls, static_cast<double>(e.in_mpi_ticks) * ns_per_tick * 1e-3);
      break;
    case RecordKind::comm_create:
      out += "comm_create";
      break;
    case RecordKind::clock_sync:
      out += "clock_sync";
      break;
    case RecordKind::end:
      out += "end";
      break;
    case RecordKind::marker:
      out += "marker";
      break;
    case RecordKind::module:
      out += "module";
      break;
  }
  if (e.has(trace::kPeer)) out += " peer=" + peer_text(e.peer);
  if (e.has(trace::kTag)) out += fmt::format(" tag={}", e.tag);
  if (e.has(trace::kComm)) out += fmt::format(" comm={:#x}", e.comm);
  if (e.has(trace::kNewComm)) out += fmt::format(" new_comm={:#x}", e.new_comm);
  if (e.has(trace::kRoot)) out += " root=" + peer_text(e.root);
  if (e.has(trace::kCount)) out += fmt::format(" count={}", e.count);
  if (e.has(trace::kBytes)) out += fmt::format(" bytes={}", e.bytes);
  if (e.has(trace::kRecvBytes)) out += fmt::format(" recv_bytes={}", e.recv_bytes);
  if (e.has(trace::kRequest)) out += fmt::format(" request={}", e.request);
  if (e.has(trace::kRequests)) out += fmt::format(" requests={}", fmt::join(e.requests, ","));
  if (e.has(trace::kCounts)) out += fmt::format(" counts={}", fmt::join(e.counts, ","));
  if (e.has(trace::kRecvCounts))
    out += fmt::format(" recv_counts={}", fmt::join(e.recv_counts, ","));
  if (e.has(trace::kMembers)) {
    out += fmt::format(" members={}", fmt::join(e.members, ","));
    if (e.remote_size > 0) out += fmt::format(" (remote: last {})", e.remote_size);
  }
  for (const auto& c : e.completions)  // source -1: a send's completion (no status source)
    out += fmt::format(" done[req={} idx={} src={} tag={} bytes={}{}]", c.request, c.index,
                       c.source == -1 ? "-" : peer_text(c.source), c.tag, c.bytes,
                       c.cancelled ? " cancelled" : "");
  if (e.flags != 0) {
    static const std::pair<std::uint32_t, const char*> kNames[] = {
        {trace::kWildcardSource, "any_source"}, {trace::kWildcardTag, "any_tag"},
        {trace::kCommutative, "commutative"},   {trace::kPersistent, "persistent"},
        {trace::kSuccess, "success"},           {trace::kInPlace, "in_place"},
        {trace::kIntercomm, "intercomm"},       {trace::kFortran, "fortran"},
        {trace::kCommNull, "comm_null"},        {trace::kError, "error"}};
    for (const auto& [bit, name] : kNames)
      if (e.flags & bit) out += fmt::format(" {}", name);
  }
  if (e.has(trace::kLocal)) out += fmt::format(" local_calls={}", e.local_calls);
  if (e.has(trace::kThread)) out += fmt::format(" thread={} seq={}", e.thread, e.sequence);
  if (e.has(trace::kCpu)) out += fmt::format(" cpu={:.6f}s", static_cast<double>(e.cpu_ns) * 1e-9);
  if (e.has(trace::kSite)) out += fmt::format(" site={}:{:#x}", e.site_module, e.site_offset);
  if (e.has(trace::kFreshBytes) && e.fresh_bytes > 0)
    out += fmt::format(" fresh_bytes={}", e.fresh_bytes);
  if (e.has(trace::kSendPageOffset))
    out += fmt::format(" send_page_offset={}", e.send_page_offset_bytes);
  if (e.has(trace::kText)) out += " " + e.text;
  return out;
}

}  // namespace commgauge::report
