#include "trace/summary.hpp"
#include "trace/call_semantics.hpp"
#include "trace/json_fields.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trace/function_ids.hpp"

namespace commgauge::trace {

namespace {

void keep_largest(std::vector<MessageRecord>& largest, std::size_t k, const MessageRecord& m) {
  if (k == 0 || m.bytes == 0) return;
  auto smaller = [](const MessageRecord& a, const MessageRecord& b) { return a.bytes > b.bytes; };
  if (largest.size() < k) {
    largest.insert(std::upper_bound(largest.begin(), largest.end(), m, smaller), m);
  } else if (m.bytes > largest.back().bytes) {
    largest.pop_back();
    largest.insert(std::upper_bound(largest.begin(), largest.end(), m, smaller), m);
  }
}

}  // namespace

void add_bytes(std::uint64_t& total, std::uint64_t bytes) {
  if (__builtin_add_overflow(total, bytes, &total)) total = ~std::uint64_t{0};
}

std::size_t SizeHistogram::bin_of(std::uint64_t bytes) {
  return bytes == 0 ? 0 : static_cast<std::size_t>(std::bit_width(bytes));
}

std::uint64_t SizeHistogram::lowest(std::size_t bin) {
  return bin == 0 ? 0 : std::uint64_t{1} << (bin - 1);
}

std::uint64_t SizeHistogram::highest(std::size_t bin) {
  if (bin == 0) return 0;
  return bin == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bin) - 1;
}

void SizeHistogram::add(std::uint64_t bytes) {
  Traffic& b = bins[bin_of(bytes)];
  ++b.messages;
  add_bytes(b.bytes, bytes);
}

TraceSummary summarize(const TraceReader& trace, std::size_t largest_messages) {
  TraceSummary s;
  s.ranks = trace.ranks();
  s.missing_ranks = trace.missing_ranks();
  s.finished = s.missing_ranks.empty();
  Event e;
  for (std::uint32_t r = 0; r < trace.ranks(); ++r) {
    if (std::find(s.missing_ranks.begin(), s.missing_ranks.end(), r) != s.missing_ranks.end())
      continue;
    RankSummary rs;
    rs.rank = r;
    if (s.sent.size() < trace.ranks()) s.sent.resize(trace.ranks());
    auto& sent = s.sent[r];
    const auto count_send = [&](std::int32_t peer, std::uint64_t bytes) {
      if (peer < 0) return;  // MPI_PROC_NULL sends nothing
      Traffic& t = sent[peer];
      ++t.messages;
      add_bytes(t.bytes, bytes);
      s.point_to_point_sizes.add(bytes);
    };
    // Persistent sends: the request MPI_Send_init made -> its peer and bytes, sent at each start.
    std::map<std::uint64_t, std::pair<std::int32_t, std::uint64_t>> persistent_sends;
    std::optional<RankReader> opened;
    try {
      opened.emplace(trace.open_rank(r));
    } catch (const TraceError& error) {  // e.g. the rank met a full disk before its header
      rs.error = error.what();
      rs.end = RankEnd::truncated;
      s.finished = false;
      s.per_rank.push_back(std::move(rs));
      continue;
    }
    RankReader& reader = *opened;
    const ClockMap clock = clock_map(trace, reader);
    // The rank's modules (its `module` records) by number: what an event's site_module names.
    std::map<std::uint32_t, std::string> modules;
    std::map<CallSite, FunctionTotals> rank_sites;
    rs.host = json_field(reader.header(), "host", std::string());
    const double overhead_ticks =
        reader.header().contains("tracer")
            ? json_field(json_object(reader.header(), "tracer"), "overhead_ticks_per_event", 0.0)
            : 0.0;
    std::int64_t window_start = 0, window_end = 0, last_end = 0;
    bool have_start = false, have_end = false;
    std::int64_t mpi_ticks = 0;
    std::int64_t look_ticks = 0;  // the tracer's looks at receive buffers: its own time
    std::uint64_t recorded = 0;
    auto seconds = [&](std::int64_t ticks) { return clock.duration_ns(ticks) * 1e-9; };
    for (;;) {
      try {
        if (!reader.next(e)) break;
      } catch (const TraceError& error) {  // summarised up to the damage; trace-check says more
        rs.error = error.what();
        break;
      }
      last_end = std::max(last_end, e.end_tick);
      if (e.has(kLocal)) mpi_ticks += e.local_ticks;
      if (e.kind == RecordKind::poll_run) {
        ++rs.poll_runs;
        rs.polls += e.calls;
        mpi_ticks += e.in_mpi_ticks;
        auto& f = rs.functions[e.function];
        f.calls += e.calls;
        f.seconds += seconds(e.in_mpi_ticks);
        ++recorded;
        continue;
      }
      if (e.kind == RecordKind::module) {
        const auto j = nlohmann::json::parse(e.text, nullptr, false);
        if (j.is_object())
          modules[json_field(j, "module", std::uint32_t{0})] = json_field(j, "path", std::string());
        continue;
      }
      if (e.kind == RecordKind::end && !e.text.empty()) {
        const auto j = nlohmann::json::parse(e.text, nullptr, false);
        if (j.is_object() && j.contains("local") && j["local"].is_object()) {
          for (const auto& [name, v] : j["local"].items()) {
            const auto id = function_id(name);
            if (!id) continue;
            auto& f = rs.functions[*id];
            f.calls += json_field(v, "calls", std::uint64_t{0});
            const auto ticks = json_field(v, "ticks", std::int64_t{0});
            if (ticks < 0)
              throw TraceError(
                  fmt::format("rank {}: the end record's local time of {} is negative", r, name));
            f.seconds += seconds(ticks);
          }
        }
        continue;
      }
      if (e.kind != RecordKind::function) continue;
      ++recorded;
      // Init and Finalize bound the window; they are listed but not counted as MPI time.
      const bool init = e.function == fn::Init || e.function == fn::Init_thread;
      if (init || e.function == fn::Finalize) {
        (init ? window_start : window_end) = init ? e.end_tick : e.start_tick;
        (init ? have_start : have_end) = true;
        auto& f = rs.functions[e.function];
        ++f.calls;
        f.seconds += seconds(e.end_tick - e.start_tick);
        continue;
      }
      const std::int64_t duration = e.end_tick - e.start_tick;
      mpi_ticks += duration;
      if (e.has(kFreshBytes)) {
        ++rs.looked_receives;
        look_ticks += e.fresh_look_ticks;
        if (e.fresh_bytes > 0) ++rs.fresh_receives;
        add_bytes(rs.fresh_bytes, e.fresh_bytes);
      }
      auto& f = rs.functions[e.function];
      ++f.calls;
      add_bytes(f.bytes, e.bytes);
      f.seconds += seconds(duration);
      if (e.has(kSite)) {
        const auto module = modules.find(e.site_module);
        CallSite site{module != modules.end() ? module->second : std::string(), e.site_offset,
                      e.function};
        auto& t = rank_sites[std::move(site)];
        ++t.calls;
        add_bytes(t.bytes, e.bytes);
        t.seconds += seconds(duration);
      }
      const FunctionInfo* info = find_function(e.function);
      if (info != nullptr && info->function_class == FunctionClass::opaque)
        ++s.unmodeled[e.function];
      const CallSemantics& semantics = semantics_of(e.function);
      switch (semantics.kind) {
        case CallKind::send:
        case CallKind::isend:
        case CallKind::sendrecv:
          count_send(e.peer, e.bytes);
          break;
        case CallKind::send_init:
          // Request 0 is none (a failed Send_init, or a Start of a request the tracer did not
          // know records 0): it names no persistent send.
          if (e.request != 0) persistent_sends[e.request] = {e.peer, e.bytes};
          break;
        case CallKind::start:
          for (std::uint64_t id : e.requests) {
            const auto it = persistent_sends.find(id);
            if (it != persistent_sends.end()) count_send(it->second.first, it->second.second);
          }
          break;
        case CallKind::collective:
          s.collective_sizes.add(e.bytes);
          break;
        default:
          break;
      }
      // What is sent, once per message: a receive's posted size is not a message (listing it
      // too showed every message twice).
      const bool sends = (semantics.kind == CallKind::send || semantics.kind == CallKind::isend ||
                          semantics.kind == CallKind::sendrecv) &&
                         e.peer >= 0;  // a send to MPI_PROC_NULL sends nothing
      if (info != nullptr && e.has(kBytes) && (sends || semantics.collective)) {
        keep_largest(
            s.largest, largest_messages,
            {e.function, r, semantics.collective ? -1 : e.peer, e.bytes, reader.event_count() - 1});
      }
    }
    rs.end = reader.end();
    rs.events = reader.event_count();
    if (!have_end) window_end = last_end;
    if (!have_start) window_start = 0;
    rs.window_seconds = seconds(window_end - window_start);
    rs.mpi_seconds = seconds(mpi_ticks);
    rs.tracer_overhead_seconds = seconds(
        static_cast<std::int64_t>(overhead_ticks * static_cast<double>(recorded)) + look_ticks);
    rs.tracer_ns_per_event = overhead_ticks * clock.ns_per_tick();
    rs.computation_seconds =
        std::max(0.0, rs.window_seconds - rs.mpi_seconds - rs.tracer_overhead_seconds);
    if (rs.end != RankEnd::complete) s.finished = false;
    for (const auto& [id, f] : rs.functions) {
      auto& t = s.functions[id];
      t.calls += f.calls;
      add_bytes(t.bytes, f.bytes);
      t.seconds += f.seconds;
    }
    for (const auto& [site, f] : rank_sites) {
      auto& t = s.call_sites[site];
      t.totals.calls += f.calls;
      add_bytes(t.totals.bytes, f.bytes);
      t.totals.seconds += f.seconds;
      ++t.ranks;
    }
    s.per_rank.push_back(std::move(rs));
  }
  s.complete = s.finished && s.unmodeled.empty();
  s.trace_bytes = trace.bytes_on_disk();
  return s;
}

// Over 2-rank traces on a 2-core VM (2026-12-06, 36 traces): where both processors ran at full
// speed the two calibrations agreed within 1.14x (24 traces); in the two runs where one rank's
// whole program ran slower, every trace (12) had one rank at 1.48-1.86x the other.
std::string slowed_processor_note(const std::vector<double>& ns_per_event) {
  double least = 0;
  std::size_t calibrated = 0;
  for (const double ns : ns_per_event) {
    if (!(ns > 0)) continue;
    least = calibrated++ == 0 ? ns : std::min(least, ns);
  }
  if (calibrated < 2) return "";
  std::vector<std::string> named;
  std::size_t slowed = 0;
  double most = 0;
  for (std::size_t r = 0; r < ns_per_event.size(); ++r) {
    const double ns = ns_per_event[r];
    if (!(ns > kSlowedProcessorRatio * least)) continue;
    most = std::max(most, ns);
    if (++slowed <= 8) named.push_back(fmt::format("{} ({:.1f} ns, {:.2f}x)", r, ns, ns / least));
  }
  if (slowed == 0) return "";
  return fmt::format(
      "rank{} {}{} recorded each event more slowly than the fastest rank ({:.1f} ns per event, "
      "the tracer's calibration at MPI_Init): {} processor ran up to {:.2f} times slower while "
      "traced (shared, throttled or a slower core), and its MPI calls cost more than a profile "
      "of full-speed processors says",
      slowed > 1 ? "s" : "", fmt::join(named, ", "),
      slowed > named.size() ? fmt::format(" and {} more", slowed - named.size()) : "", least,
      slowed > 1 ? "their" : "its", most / least);
}

}  // namespace commgauge::trace
