#include "stats/prediction_error.hpp"

#include <cmath>

namespace commgauge::stats {

std::optional<double> relative_error(double predicted, double measured) {
  if (!(measured > 0) || !std::isfinite(measured) || !std::isfinite(predicted)) {
    return std::nullopt;
  }
  return (predicted - measured) / measured;
}

std::optional<double> mean_absolute_error(std::span<const double> relative_errors) {
  if (relative_errors.empty()) return std::nullopt;
  double sum = 0;
  for (double e : relative_errors)
    sum += std::abs(e);
  return sum / static_cast<double>(relative_errors.size());
}

}  // namespace commgauge::stats
