#pragma once
// Descriptive statistics of seed 002 §3.4: min, median, mean, max, variance, standard deviation,
// coefficient of variation, standard error and relative standard error.

#include <cstddef>
#include <span>
#include <vector>

namespace commgauge::stats {

/// The statistics seed 002 reports for a set of timings. Units are those of the samples,
/// except `cv_percent` (percent) and `rse` (a fraction), which follow seed 002 Appendix C.
struct Summary {
  std::size_t count = 0;
  double min = 0;
  double median = 0;
  double mean = 0;
  double max = 0;
  double variance = 0;    ///< sample variance, divisor n - 1; NaN for one sample
  double sd = 0;          ///< standard deviation, sqrt(variance)
  double cv_percent = 0;  ///< coefficient of variation, 100 * sd / mean
  double se = 0;          ///< standard error of the mean, sd / sqrt(n)
  double rse = 0;         ///< relative standard error, se / mean
};

/// Median of the samples (mean of the two middle values for an even count).
/// Throws std::invalid_argument on empty input.
double median(std::span<const double> samples);

/// Median that may reorder `samples` in place (no copy); O(n).
double median_in_place(std::span<double> samples);

/// The nearest-rank q-quantile (0 < q <= 1) of samples sorted in ascending order: the value at
/// 1-based rank ceil(q n). Throws std::invalid_argument on empty input or q outside (0, 1].
double nearest_rank(std::span<const double> sorted, double q);

/// All statistics of `samples`. Throws std::invalid_argument on empty input.
/// With one sample the spread statistics (variance, sd, cv, se, rse) are NaN: undefined.
Summary summarize(std::span<const double> samples);

/// Same, reusing `scratch` for the median so that repeated calls do not allocate.
Summary summarize(std::span<const double> samples, std::vector<double>& scratch);

}  // namespace commgauge::stats
