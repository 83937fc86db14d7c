#include "stats/floor_shift.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <gsl/gsl_sf_gamma.h>

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

double precedence_p_value(const std::vector<double>& below, const std::vector<double>& above) {
  if (below.empty() || above.empty()) {
    throw std::invalid_argument("precedence_p_value: an empty sample");
  }
  const double order_statistic = floor_of(above);
  const auto n1 = static_cast<unsigned>(below.size());
  const auto n2 = static_cast<unsigned>(above.size());
  const unsigned r = static_cast<unsigned>(floor_rank(above.size())) + 1;
  const auto before = static_cast<unsigned>(
      std::count_if(below.begin(), below.end(), [&](double x) { return x < order_statistic; }));
  const double log_total = gsl_sf_lnchoose(n1 + n2, n1);
  double p = 0;
  for (unsigned k = before; k <= n1; ++k) {
    p += std::exp(gsl_sf_lnchoose(k + r - 1, k) + gsl_sf_lnchoose(n1 - k + n2 - r, n1 - k) -
                  log_total);
  }
  return std::min(1.0, p);
}

}  // namespace commgauge::stats
