#include "stats/linear_fit.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace commgauge::stats {

LineFit fit_line(std::span<const double> x, std::span<const double> y, std::span<const double> w) {
  const std::size_t n = x.size();
  if (y.size() != n || w.size() != n) throw std::invalid_argument("fit_line: sizes differ");
  if (n < 2) throw std::invalid_argument("fit_line: at least 2 points are needed");
  double sw = 0, swx = 0, swy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(w[i] > 0)) throw std::invalid_argument("fit_line: weights must be positive");
    sw += w[i];
    swx += w[i] * x[i];
    swy += w[i] * y[i];
  }
  const double mx = swx / sw;
  const double my = swy / sw;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += w[i] * (x[i] - mx) * (x[i] - mx);
    sxy += w[i] * (x[i] - mx) * (y[i] - my);
  }
  if (!(sxx > 0)) throw std::invalid_argument("fit_line: all x are equal");
  LineFit f;
  f.points = n;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  double sse_w = 0, sse = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = y[i] - f.at(x[i]);
    sse_w += w[i] * r * r;
    sse += r * r;
  }
  f.rms_residual = std::sqrt(sse / static_cast<double>(n));
  if (n == 2) {
    f.residual = 0;
    f.intercept_stderr = f.slope_stderr = std::numeric_limits<double>::quiet_NaN();
    return f;
  }
  // Residual variance per unit weight; with weights 1/variance its expectation is 1.
  const double s2 = sse_w / static_cast<double>(n - 2);
  f.residual = std::sqrt(s2);
  f.slope_stderr = std::sqrt(s2 / sxx);
  f.intercept_stderr = std::sqrt(s2 * (1.0 / sw + mx * mx / sxx));
  return f;
}

double slope_stderr_from_errors(std::span<const double> x, std::span<const double> y_stderr) {
  if (x.size() != y_stderr.size()) {
    throw std::invalid_argument("slope_stderr_from_errors: x and y_stderr differ in length");
  }
  if (x.empty()) return 0;
  double mean_x = 0;
  for (const double v : x)
    mean_x += v / static_cast<double>(x.size());
  double sxx = 0, var = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double dx = x[i] - mean_x;
    sxx += dx * dx;
    var += dx * dx * y_stderr[i] * y_stderr[i];
  }
  return sxx > 0 ? std::sqrt(var) / sxx : 0;
}

LineFit fit_line(std::span<const double> x, std::span<const double> y) {
  const std::vector<double> ones(x.size(), 1.0);
  return fit_line(x, y, ones);
}

double seed000_lsq(std::span<const double> x, std::span<const double> y, std::size_t k,
                   std::size_t l) {
  if (l >= x.size() || k >= l || l - k <= 2) {
    throw std::invalid_argument("seed000_lsq: needs l - k > 2 (the denominator l - k - 2)");
  }
  const LineFit f = fit_line(x.subspan(k, l - k + 1), y.subspan(k, l - k + 1));
  double sum = 0;
  for (std::size_t i = k; i <= l; ++i) {
    const double r = f.at(x[i]) - y[i];
    sum += r * r;
  }
  return sum / static_cast<double>(l - k - 2);
}

}  // namespace commgauge::stats
