#include "measure/timer.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "measure/limits.hpp"
#include "stats/histogram.hpp"

namespace commgauge::measure {

void TimerOptions::validate() const {
  if (trials == 0) throw InputError("timer_trials", "must be at least 1");
  if (!(bin_width_us == 0 || bin_width_us >= kMinBinWidth_us))
    throw InputError("bin_width", "must be 0 (automatic) or at least 1e-06 us (a picosecond)");
  if (max_bins < 1 || max_bins > kMaxBins)
    throw InputError("max_bins", fmt::format("must be 1 to {}", kMaxBins));
  // 0 or fewer rows reached the frequency table as a length error (exit 1, a red-team find).
  if (max_frequency_rows < 1 || max_frequency_rows > kMaxFrequencyRows)
    throw InputError("max_frequency_rows", fmt::format("must be 1 to {}", kMaxFrequencyRows));
}

TimerCharacterization characterize_timer(const net::Clock& clock, const TimerOptions& options) {
  options.validate();
  const auto wall_start = std::chrono::steady_clock::now();
  // Streamed: the differences go into a histogram at the frequency table's quantum (1 ns), never
  // into memory one by one (2^24 of them were 128 MiB).
  stats::Histogram h(options.frequency_quantum_us);
  for (std::uint64_t i = 0; i < options.trials; ++i) {
    const double t1 = clock.now_us();
    const double t2 = clock.now_us();
    h.add(t2 - t1);
  }
  TimerCharacterization t;
  t.clock = clock.name();
  t.trials = options.trials;
  // seed 002: if no difference is positive, res_timing is defined to be zero.
  t.res_timing_us = h.min_positive();
  t.min_ov_us = h.min_non_negative();
  t.negative = h.negative();
  t.summary = h.summary();
  const double width =
      options.bin_width_us > 0
          ? options.bin_width_us
          : stats::nice_bin_width(t.summary.min, 2 * t.summary.median + t.res_timing_us,
                                  options.max_bins);
  t.distribution = h.distribution(width, options.max_bins);
  t.frequency = h.frequency(options.max_frequency_rows);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return t;
}

}  // namespace commgauge::measure
