#pragma once
// Least-squares straight line y = intercept + slope * x (seed 000 §3.3 fits g and G this way),
// with the standard errors of both coefficients and the residual.

#include <span>

namespace commgauge::stats {

struct LineFit {
  double intercept = 0;  ///< value at x = 0
  double slope = 0;
  double intercept_stderr = 0;  ///< NaN with fewer than 3 points
  double slope_stderr = 0;      ///< NaN with fewer than 3 points
  double residual =
      0;  ///< residual standard error sqrt(sum w r^2 / (n - 2)) (weighted units); 0 for 2 points
  double rms_residual = 0;  ///< sqrt(mean of r^2), in units of y
  std::size_t points = 0;

  double at(double x) const { return intercept + slope * x; }
};

/// Ordinary least squares. Throws std::invalid_argument with fewer than 2 points, mismatched
/// spans, or all x equal.
LineFit fit_line(std::span<const double> x, std::span<const double> y);

/// Weighted least squares with weights w_i > 0 (1 / variance of y_i when known).
LineFit fit_line(std::span<const double> x, std::span<const double> y,
                 std::span<const double> weights);

/// The ordinary least-squares slope's standard error where each y_i has a known standard error
/// (not the residuals'): sqrt(sum (x_i - mean x)^2 se_i^2) / Sxx. 0 where all x are equal.
double slope_stderr_from_errors(std::span<const double> x, std::span<const double> y_stderr);

/// Seed 000 eq. (8): sum of squared deviations of points k..l from the line, divided by
/// (l - k - 2) as the paper writes it. Throws std::invalid_argument when l - k <= 2, where the
/// denominator is zero or negative.
double seed000_lsq(std::span<const double> x, std::span<const double> y, std::size_t k,
                   std::size_t l);

}  // namespace commgauge::stats
