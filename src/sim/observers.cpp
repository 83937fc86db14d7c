// Observers of the replay: the critical path (seed 001's "what determines the run time") and
// the timeline. The engine calls them only when they are on.

#include <algorithm>

#include "sim/engine.hpp"

namespace commgauge::sim {

void CriticalPath::add(std::int32_t rank, std::uint32_t function, model::Picoseconds start,
                       model::Picoseconds end) {
  const model::Picoseconds d = end - start;
  if (d <= model::Picoseconds{}) return;
  (function == kCompute ? compute : function == kNetwork ? network : mpi) += d;
  auto slot = [d](std::array<Slot, kSlots>& slots, model::Picoseconds& other, std::int64_t key) {
    for (Slot& s : slots) {
      if (s.key == key || s.key < 0) {
        s.key = key;
        s.time += d;
        return;
      }
    }
    other += d;
  };
  if (function != kNetwork) slot(ranks, other_ranks, rank);
  slot(functions, other_functions, function);
  last[steps % kSlots] = {rank, function, start, end};
  ++steps;
}

std::vector<CriticalPath::Step> CriticalPath::last_steps() const {
  std::vector<Step> out;
  const std::uint32_t n = std::min<std::uint32_t>(steps, kSlots);
  for (std::uint32_t i = steps - n; i < steps; ++i)
    out.push_back(last[i % kSlots]);
  return out;
}

}  // namespace commgauge::sim

namespace commgauge::sim::detail {
namespace {  // one unit with the other parts (CMake unity group "engine")

// ---- critical path ---------------------------------------------------------------------------

void PathTracker::grow(std::int32_t rank, std::uint32_t function, Picoseconds t) {
  const auto i = static_cast<std::size_t>(rank);
  rank_path_[i].add(rank, function, mark_[i], t);
  mark_[i] = std::max(mark_[i], t);
}

void PathTracker::keep_with(std::uint32_t op, std::int32_t rank, std::uint32_t function,
                            Picoseconds t) {
  grow(rank, function, t);
  if (op >= op_path_.size()) op_path_.resize(std::max<std::size_t>(op + 1, 2 * op_path_.size()));
  op_path_[op] = rank_path_[static_cast<std::size_t>(rank)];
}

void PathTracker::through_partner(std::int32_t owner, std::uint32_t partner_op, Picoseconds t) {
  const CriticalPath& partner = op_path_[partner_op];
  const auto i = static_cast<std::size_t>(owner);
  if (t < mark_[i] || partner.length() > t) return;
  rank_path_[i] = partner;
  rank_path_[i].add(owner, CriticalPath::kNetwork, partner.length(), t);
  mark_[i] = t;
}

void Engine::emit_timeline(const Rank& r, Picoseconds call_ps) {
  const CallRecord& e = r.ev;
  const auto rank = static_cast<std::uint32_t>(&r - ranks_.data());
  const double call_start_ns = static_cast<double>(r.call_start.count()) * 1e-3;
  const double compute_ns = static_cast<double>(r.call_compute.count()) * 1e-3;
  if (compute_ns > 0) policy_.timeline({rank, 0, true, call_start_ns - compute_ns, compute_ns});
  const TimelineArguments* arguments = &timeline_arguments_[rank];
  policy_.timeline({rank, e.function, true, call_start_ns,
                    static_cast<double>(call_ps.count()) * 1e-3, arguments});
  const double measured_start = r.duration_ns(e.start_tick - r.init_end_tick);
  const double measured_gap = r.duration_ns(e.start_tick - r.call_previous_end_tick);
  if (measured_gap > 0)
    policy_.timeline({rank, 0, false, measured_start - measured_gap, measured_gap});
  policy_.timeline({rank, e.function, false, measured_start,
                    r.duration_ns(e.end_tick - e.start_tick), arguments});
}

}  // namespace
}  // namespace commgauge::sim::detail
