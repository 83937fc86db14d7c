#include "stats/median_ci.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "stats/descriptive.hpp"

namespace commgauge::stats {

namespace {
// P(X <= k) for X ~ Binomial(n, 1/2), in log space for large n.
double binomial_cdf_half(std::size_t n, std::size_t k) {
  double total = 0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  for (std::size_t i = 0; i <= k; ++i) {
    const double log_choose = std::lgamma(static_cast<double>(n) + 1) -
                              std::lgamma(static_cast<double>(i) + 1) -
                              std::lgamma(static_cast<double>(n - i) + 1);
    total += std::exp(log_choose + log_half_n);
  }
  return std::min(total, 1.0);
}
}  // namespace

double sign_test_p_value(std::size_t n, std::size_t k) {
  if (k > n) throw std::invalid_argument("sign test: more trials on one side than in all");
  return binomial_cdf_half(n, n - k);  // P(X >= k) = P(X <= n - k) by symmetry, summed exactly
}

MedianInterval median_interval(std::span<const double> samples, double level) {
  if (samples.empty()) throw std::invalid_argument("median interval of no samples");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  MedianInterval m;
  m.median = median(sorted);
  // [x_(j), x_(n+1-j)] (1-based) covers the median with probability 1 - 2 P(X <= j - 1).
  std::size_t best_j = 0;
  for (std::size_t j = 1; 2 * j <= n; ++j) {
    const double coverage = 1 - 2 * binomial_cdf_half(n, j - 1);
    if (coverage >= level) {
      best_j = j;
      m.confidence = coverage;
    } else {
      break;
    }
  }
  if (best_j == 0) {
    m.lower = sorted.front();
    m.upper = sorted.back();
    m.confidence = n >= 2 ? 1 - 2 * binomial_cdf_half(n, 0) : 0;
    m.relative_half_width = std::numeric_limits<double>::infinity();
    return m;
  }
  m.lower = sorted[best_j - 1];
  m.upper = sorted[n - best_j];
  const double scale = std::abs(m.median);
  m.relative_half_width = scale > 0
                              ? (m.upper - m.lower) / (2 * scale)
                              : (m.upper > m.lower ? std::numeric_limits<double>::infinity() : 0);
  return m;
}

}  // namespace commgauge::stats
