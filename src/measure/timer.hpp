#pragma once
// Timer characterization of seed 002 §3.1: back-to-back timer pairs give the resolution
// (minimum positive difference) and the overhead (minimum non-negative difference).

#include <cstdint>
#include <string>

#include "net/clock.hpp"
#include "stats/descriptive.hpp"
#include "stats/tables.hpp"

namespace commgauge::measure {

struct TimerOptions {
  std::uint64_t trials = std::uint64_t{1} << 24;  ///< seed 002 uses 2^24
  double bin_width_us = 0;                        ///< distribution bin width; 0: automatic
  int max_bins = 50;
  double frequency_quantum_us = 0.001;  ///< distinct values are rounded to this (1 ns)
  int max_frequency_rows = 100;         ///< 1 to kMaxFrequencyRows
  void validate() const;                ///< throws InputError
};

struct TimerCharacterization {
  std::string clock;
  std::uint64_t trials = 0;
  double res_timing_us = 0;    ///< minimum positive difference; 0 if there is none (seed 002)
  double min_ov_us = 0;        ///< minimum non-negative difference
  std::uint64_t negative = 0;  ///< differences below zero (a clock that stepped back)
  stats::Summary summary;      ///< of all differences, microseconds
  stats::Distribution distribution;
  stats::Frequency frequency;
  double seconds = 0;  ///< wall time the characterization took
};

/// Runs the timing loop of seed 002 §3.1 on `clock`.
TimerCharacterization characterize_timer(const net::Clock& clock, const TimerOptions& options);

}  // namespace commgauge::measure
