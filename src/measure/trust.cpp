#include "measure/trust.hpp"

#include <fmt/format.h>

namespace commgauge::measure {

Trust assess_trust(const CurveCheck& calibrated_check, const std::vector<LatencyPoint>& latency,
                   const TrustOptions& options) {
  Trust t;
  t.rms_deviation = calibrated_check.rms;
  for (const auto& p : latency) {
    const double limit = options.stall_ratio * p.stats.median;
    for (double us : p.one_way_us) {
      ++t.latency_trials;
      if (p.stats.median > 0 && us > limit) {
        ++t.stalled_trials;
        if (us > t.worst_stall_us) t.worst_stall_us = us;
      }
    }
  }
  if (t.rms_deviation <= options.max_rms_deviation) return t;
  t.trusted = false;
  t.reasons.push_back(fmt::format(
      "the calibrated set misses the measured curves by {:.1f} % rms (at most {:.0f} % is "
      "trusted; worst at {} B): its parameters do not describe this link",
      100 * t.rms_deviation, 100 * options.max_rms_deviation, calibrated_check.worst_size));
  if (t.stalled_trials > 0) {
    t.reasons.push_back(fmt::format(
        "time-sliced: {} of {} latency trials ({:.2g} %) took more than {:.0f} times their "
        "size's median, up to {:.0f} us: a measuring rank lost its core (a busy machine, or "
        "ranks that yield when idle, mpi_yield_when_idle); measure on idle cores",
        t.stalled_trials, t.latency_trials,
        100.0 * static_cast<double>(t.stalled_trials) / static_cast<double>(t.latency_trials),
        options.stall_ratio, t.worst_stall_us));
  }
  return t;
}

}  // namespace commgauge::measure
