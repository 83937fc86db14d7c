#include "measure/timer.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::measure {

void TimerOptions::validate() const {
  if (trials == 0) throw InputError("--timer-trials", "must be at least 1");
  if (bin_width_us < 0) throw InputError("--bin-width", "must be positive (or 0 for automatic)");
}

TimerCharacterization characterize_timer(const net::Clock& clock, const TimerOptions& options) {
  options.validate();
  const auto wall_start = std::chrono::steady_clock::now();
  std::vector<double> diffs(options.trials);
  for (double& d : diffs) {
    const double t1 = clock.now_us();
    const double t2 = clock.now_us();
    d = t2 - t1;
  }

  TimerCharacterization t;
  t.clock = clock.name();
  t.trials = options.trials;
  double min_positive = std::numeric_limits<double>::infinity();
  double min_non_negative = std::numeric_limits<double>::infinity();
  for (double d : diffs) {
    if (d > 0 && d < min_positive) min_positive = d;
    if (d >= 0 && d < min_non_negative) min_non_negative = d;
    if (d < 0) ++t.negative;
  }
  // seed 002: if no difference is positive, res_timing is defined to be zero.
  t.res_timing_us = std::isinf(min_positive) ? 0.0 : min_positive;
  t.min_ov_us = std::isinf(min_non_negative) ? 0.0 : min_non_negative;
  t.summary = stats::summarize(diffs);
  const double width =
      options.bin_width_us > 0
          ? options.bin_width_us
          : stats::nice_bin_width(t.summary.min, 2 * t.summary.median + t.res_timing_us,
                                  options.max_bins);
  t.distribution = stats::distribution(diffs, width, options.max_bins);
  t.frequency = stats::frequency(diffs, options.frequency_quantum_us, options.max_frequency_rows);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return t;
}

}  // namespace commgauge::measure
