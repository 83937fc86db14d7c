#pragma once
// Outlier filtering of seed 002 §3.4: drop every trial larger than cut_coef times the median.

#include <cstddef>
#include <span>
#include <vector>

namespace commgauge::stats {

struct Filtered {
  double cut_coef = 0;
  double threshold = 0;      ///< cut_coef * median of the unfiltered samples
  std::size_t removed = 0;   ///< number of samples above the threshold
  std::vector<double> kept;  ///< the remaining samples, in their original order
};

/// Keeps the samples <= cut_coef * median(samples). Throws std::invalid_argument on empty
/// input or a cut_coef that is not positive.
Filtered filter_above_median(std::span<const double> samples, double cut_coef);

}  // namespace commgauge::stats
