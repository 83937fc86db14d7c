#pragma once
// A distribution-free confidence interval for the median from order statistics, and the
// stopping rule built on it: repeat a measurement until the interval is narrow enough.

#include <cstddef>
#include <span>

namespace commgauge::stats {

struct MedianInterval {
  double median = 0;
  double lower = 0;  ///< order statistic x_(j)
  double upper = 0;  ///< order statistic x_(k)
  double confidence =
      0;  ///< the exact coverage of [x_(j), x_(k)], >= the requested level if possible
  /// (upper - lower) / (2 |median|): the relative half-width. Infinite if there is no interval.
  double relative_half_width = 0;
};

/// The narrowest symmetric order-statistic interval [x_(j), x_(n+1-j)] whose binomial coverage
/// is at least `level` (e.g. 0.95). With too few samples for that level (n < 6 at 95 %), the
/// widest interval [min, max] is returned with its lower coverage and an infinite width.
MedianInterval median_interval(std::span<const double> samples, double level = 0.95);

/// The exact one-sided sign test: P(X >= k) for X ~ Binomial(n, 1/2), the chance that at least
/// k of n trials fall on one side if either side were as likely. Throws std::invalid_argument
/// when k > n.
double sign_test_p_value(std::size_t n, std::size_t k);

}  // namespace commgauge::stats
