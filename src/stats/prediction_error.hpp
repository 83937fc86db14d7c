#pragma once
// The prediction errors of seed 003 §VI-B, in one place: E_rel = (predicted - measured) /
// measured per point, and E_abs = the mean of |E_rel| over the points. Fractions (1 = 100 %).

#include <optional>
#include <span>

namespace commgauge::stats {

/// E_rel; nothing where the measurement is not a positive time (or either is not finite).
std::optional<double> relative_error(double predicted, double measured);

/// E_abs over `relative_errors`; nothing when there are none.
std::optional<double> mean_absolute_error(std::span<const double> relative_errors);

}  // namespace commgauge::stats
