#include "measure/heldout.hpp"

#include <cmath>

#include "measure/loggp_detail.hpp"

namespace commgauge::measure {

std::string to_string(HeldOutKind k) {
  switch (k) {
    case HeldOutKind::pingpong:
      return "pingpong";
    case HeldOutKind::allreduce:
      return "allreduce";
    case HeldOutKind::alltoall:
      return "alltoall";
    case HeldOutKind::exchange:
      return "exchange";
  }
  return "?";
}

std::vector<std::uint64_t> midpoints(const std::vector<std::uint64_t>& sizes) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    const auto m = static_cast<std::uint64_t>(
        std::llround(std::sqrt(static_cast<double>(sizes[i]) * static_cast<double>(sizes[i + 1]))));
    if (m > sizes[i] && m < sizes[i + 1]) out.push_back(m);
  }
  return out;
}

HeldOutResult heldout_of(const LoggpResult& loggp) {
  HeldOutResult r;
  r.seed = loggp.seed;
  for (const auto& h : loggp.heldout) {
    if (h.rounds_us.empty()) continue;
    HeldOutPoint p;
    switch (h.kind) {
      case PrttKind::allreduce:
        p.kind = HeldOutKind::allreduce;
        r.collectives = true;
        break;
      case PrttKind::alltoall:
        p.kind = HeldOutKind::alltoall;
        r.collectives = true;
        break;
      case PrttKind::exchange:
        p.kind = HeldOutKind::exchange;
        break;
      default:
        p.kind = HeldOutKind::pingpong;
    }
    p.bytes = h.bytes;
    p.rounds_us = h.rounds_us;
    p.time = detail::stat_of(h.rounds_us, 1);
    r.points.push_back(std::move(p));
  }
  return r;
}

}  // namespace commgauge::measure
