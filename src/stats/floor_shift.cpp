#include "stats/floor_shift.hpp"

#include <algorithm>
#include <stdexcept>

#include <gsl/gsl_cdf.h>

namespace commgauge::stats {

std::size_t floor_rank(std::size_t n) {
  return n / 10;
}

double floor_of(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("floor_of: no values");
  const auto k = static_cast<std::ptrdiff_t>(floor_rank(v.size()));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[static_cast<std::size_t>(k)];
}

double floor_shift_p_value(const std::vector<double>& below, const std::vector<double>& above) {
  if (below.empty() || above.empty()) {
    throw std::invalid_argument("floor_shift_p_value: an empty sample");
  }
  const double floor_above = floor_of(above);
  const auto reach = static_cast<double>(
      std::count_if(below.begin(), below.end(), [&](double x) { return x >= floor_above; }));
  const double q = (reach + 0.5) / (static_cast<double>(below.size()) + 1);
  const auto n = static_cast<unsigned>(above.size());
  const auto at_or_above = static_cast<unsigned>(above.size() - floor_rank(above.size()));
  // P(X >= m) = P(X > m - 1); at_or_above >= 1 for any non-empty sample.
  return gsl_cdf_binomial_Q(at_or_above - 1, q, n);
}

}  // namespace commgauge::stats
