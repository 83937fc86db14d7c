#include "stats/filtering.hpp"

#include <stdexcept>

#include "stats/descriptive.hpp"

namespace commgauge::stats {

Filtered filter_above_median(std::span<const double> samples, double cut_coef) {
  if (!(cut_coef > 0)) throw std::invalid_argument("cut_coef must be positive");
  Filtered f;
  f.cut_coef = cut_coef;
  f.threshold = cut_coef * median(samples);
  f.kept.reserve(samples.size());
  for (double x : samples) {
    if (x > f.threshold) {
      ++f.removed;
    } else {
      f.kept.push_back(x);
    }
  }
  return f;
}

}  // namespace commgauge::stats
