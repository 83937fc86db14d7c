#include "stats/descriptive.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace commgauge::stats {

double median_in_place(std::span<double> samples) {
  if (samples.empty()) throw std::invalid_argument("median of no samples");
  const std::size_t n = samples.size();
  const auto upper = samples.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(samples.begin(), upper, samples.end());
  if (n % 2 == 1) return *upper;
  // After nth_element every element before `upper` is <= *upper: the lower middle is their max.
  const double lower = *std::max_element(samples.begin(), upper);
  return lower + (*upper - lower) / 2;
}

double median(std::span<const double> samples) {
  std::vector<double> copy(samples.begin(), samples.end());
  return median_in_place(copy);
}

Summary summarize(std::span<const double> samples, std::vector<double>& scratch) {
  if (samples.empty()) throw std::invalid_argument("statistics of no samples");
  Summary s;
  s.count = samples.size();
  s.min = samples[0];
  s.max = samples[0];
  double sum = 0;
  for (double x : samples) {
    sum += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  const auto n = static_cast<double>(s.count);
  s.mean = sum / n;
  if (s.count == 1) {
    s.median = samples[0];
    s.variance = s.sd = s.cv_percent = s.se = s.rse = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  // Two-pass variance: numerically stable for timings that sit far from zero.
  double squares = 0;
  double residual = 0;
  for (double x : samples) {
    const double d = x - s.mean;
    squares += d * d;
    residual += d;
  }
  s.variance = (squares - residual * residual / n) / (n - 1);
  s.variance = std::max(s.variance, 0.0);
  s.sd = std::sqrt(s.variance);
  s.cv_percent = 100.0 * s.sd / s.mean;
  s.se = s.sd / std::sqrt(n);
  s.rse = s.se / s.mean;
  scratch.assign(samples.begin(), samples.end());
  s.median = median_in_place(scratch);
  return s;
}

Summary summarize(std::span<const double> samples) {
  std::vector<double> scratch;
  return summarize(samples, scratch);
}

double nearest_rank(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile of no samples");
  if (!(q > 0 && q <= 1)) throw std::invalid_argument("quantile outside (0, 1]");
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::ceil(q * n - 1e-9));  // 1-based
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace commgauge::stats
