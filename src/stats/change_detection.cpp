#include "stats/change_detection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "stats/linear_fit.hpp"

namespace commgauge::stats {

namespace {

double floored(double noise, double value, double floor_fraction) {
  return std::max(noise, floor_fraction * std::abs(value) + 1e-12);
}

// Weighted fit of one curve over [first, last]; a single point is a level.
LineFit fit_segment(std::span<const double> size, const Curve& c, std::size_t first,
                    std::size_t last, double floor_fraction) {
  const std::size_t n = last - first + 1;
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double s = floored(c.noise[first + i], c.value[first + i], floor_fraction);
    w[i] = 1.0 / (s * s);
  }
  if (n == 1) {
    LineFit f;
    f.intercept = c.value[first];
    f.points = 1;
    return f;
  }
  return fit_line(size.subspan(first, n), std::span<const double>(c.value).subspan(first, n), w);
}

double segment_chi2(std::span<const double> size, const Curve& c, std::size_t first,
                    std::size_t last, double floor_fraction) {
  if (last - first < 2) return 0;  // two points fit a line exactly
  const LineFit f = fit_segment(size, c, first, last, floor_fraction);
  double chi2 = 0;
  for (std::size_t i = first; i <= last; ++i) {
    const double r = (c.value[i] - f.at(size[i])) / floored(c.noise[i], c.value[i], floor_fraction);
    chi2 += r * r;
  }
  return chi2;
}

void check(std::span<const double> size, std::span<const Curve> curves) {
  for (const auto& c : curves) {
    if (c.value.size() != size.size() || c.noise.size() != size.size()) {
      throw std::invalid_argument("change detection: curve and size lengths differ");
    }
  }
}

// A split at c is a protocol change when the curve steps there: the first point of the new
// range is off the line through the (up to 3) points before it, and most of the look-ahead
// points are off the old range's line too. A bend (the slope changing smoothly, e.g. caches)
// passes the local test point by point, so it is not a switch.
bool is_step(std::span<const double> size, std::span<const Curve> curves, std::size_t first,
             std::size_t last, std::size_t c, const ChangeOptions& o) {
  const std::size_t local_first = c >= first + 3 ? c - 3 : first;
  const double off_line = o.pfact * (o.threshold_per_curve ? 3 : 2);
  if (joint_distance(size, curves, local_first, c - 1, c, o.relative_noise_floor) <= off_line) {
    return false;
  }
  const std::size_t ahead =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(o.lookahead, 1)), last - c + 1);
  std::size_t off = 0;
  for (std::size_t j = 0; j < ahead; ++j) {
    if (joint_distance(size, curves, local_first, c - 1, c + j, o.relative_noise_floor) >
        off_line) {
      ++off;
    }
  }
  return 2 * off > ahead;
}

}  // namespace

double joint_chi2(std::span<const double> size, std::span<const Curve> curves, std::size_t first,
                  std::size_t last, double relative_noise_floor) {
  double total = 0;
  for (const auto& c : curves)
    total += segment_chi2(size, c, first, last, relative_noise_floor);
  return total;
}

double joint_distance(std::span<const double> size, std::span<const Curve> curves,
                      std::size_t first, std::size_t last, std::size_t i,
                      double relative_noise_floor) {
  double sum = 0;
  for (const auto& c : curves) {
    const LineFit f = fit_segment(size, c, first, last, relative_noise_floor);
    const double r =
        (c.value[i] - f.at(size[i])) / floored(c.noise[i], c.value[i], relative_noise_floor);
    sum += r * r;
  }
  return std::sqrt(sum);
}

std::vector<std::size_t> detect_changes_seed000(std::span<const double> size, const Curve& curve,
                                                const ChangeOptions& o) {
  const Curve curves[] = {curve};
  check(size, curves);
  const std::size_t n = size.size();
  const auto x = static_cast<std::size_t>(std::max(o.lookahead, 1));
  std::vector<std::size_t> changes;
  std::size_t last_change = 0;
  for (std::size_t current = 1; current + x < n; ++current) {
    bool change = true;
    if (current - last_change > 2) {
      // eq. (8) is defined: compare the look-ahead deviations with the current one.
      const double base = seed000_lsq(size, curve.value, last_change, current);
      const double floor_value = o.relative_noise_floor * std::abs(curve.value[current]) + 1e-300;
      for (std::size_t j = 1; j <= x && change; ++j) {
        change = seed000_lsq(size, curve.value, last_change, current + j) >
                 std::max(base, floor_value * floor_value) * o.pfact;
      }
    } else {
      // Too few points for eq. (8): a direct step test against the current range's line/level.
      for (std::size_t j = 1; j <= x && change; ++j) {
        change = joint_distance(size, curves, last_change, current, current + j,
                                o.relative_noise_floor) > o.pfact * 3;
      }
    }
    if (change) {
      changes.push_back(current + 1);
      last_change = current + 1;
      current = last_change;  // the new range needs points of its own before the next test
    }
  }
  return changes;
}

Curve with_scatter_noise(std::span<const double> size, const Curve& c) {
  // Points scatter around a locally straight curve by more than their own repetitions show
  // (cache effects, drift): measure that scatter robustly (1.4826 x the median relative
  // deviation of each interior point from the line through its neighbours) and use it as a
  // floor for every point's noise. A few real steps do not move a median.
  Curve out = c;
  std::vector<double> rel;
  for (std::size_t i = 1; i + 1 < size.size(); ++i) {
    const double t = (size[i] - size[i - 1]) / (size[i + 1] - size[i - 1]);
    const double between = c.value[i - 1] + t * (c.value[i + 1] - c.value[i - 1]);
    if (c.value[i] != 0) rel.push_back(std::abs(c.value[i] - between) / std::abs(c.value[i]));
  }
  if (rel.size() < 3) return out;
  std::nth_element(rel.begin(), rel.begin() + static_cast<std::ptrdiff_t>(rel.size() / 2),
                   rel.end());
  const double scatter = 1.4826 * rel[rel.size() / 2];
  for (std::size_t i = 0; i < out.noise.size(); ++i) {
    out.noise[i] = std::max(out.noise[i], scatter * std::abs(out.value[i]));
  }
  // A single point far off the line through its neighbours, whose neighbours agree with each
  // other, is an outlier, not a step (seed 000's look-ahead exists for this): it is given so
  // much noise that it no longer pulls any fit.
  for (std::size_t i = 1; i + 1 < size.size(); ++i) {
    const double t = (size[i] - size[i - 1]) / (size[i + 1] - size[i - 1]);
    const double between = c.value[i - 1] + t * (c.value[i + 1] - c.value[i - 1]);
    const double off = std::abs(c.value[i] - between);
    const double neighbours = std::abs(c.value[i + 1] - c.value[i - 1]);
    if (off > 10 * out.noise[i] && off > 3 * neighbours)
      out.noise[i] = std::max(out.noise[i], off * 100);
  }
  return out;
}

std::vector<std::size_t> detect_changes_joint(std::span<const double> size,
                                              std::span<const Curve> raw_curves,
                                              const ChangeOptions& o) {
  check(size, raw_curves);
  std::vector<Curve> scattered;
  for (const auto& c : raw_curves)
    scattered.push_back(with_scatter_noise(size, c));
  const std::span<const Curve> curves(scattered);
  const std::size_t n = size.size();
  const std::size_t m = std::max<std::size_t>(o.min_segment, 1);
  const double threshold =
      o.pfact * o.pfact * 9.0 * (o.threshold_per_curve ? static_cast<double>(curves.size()) : 1.0);
  std::vector<std::size_t> changes;
  // Segments still to examine: [first, last].
  std::vector<std::pair<std::size_t, std::size_t>> todo;
  if (n >= 2 * m) todo.emplace_back(0, n - 1);
  while (!todo.empty()) {
    const auto [first, last] = todo.back();
    todo.pop_back();
    if (last - first + 1 < 2 * m) continue;
    const double whole = joint_chi2(size, curves, first, last, o.relative_noise_floor);
    std::vector<std::pair<double, std::size_t>> candidates;  // (gain, split)
    for (std::size_t c = first + m; c + m <= last + 1; ++c) {
      const double gain = whole - joint_chi2(size, curves, first, c - 1, o.relative_noise_floor) -
                          joint_chi2(size, curves, c, last, o.relative_noise_floor);
      if (gain > threshold) candidates.emplace_back(gain, c);
    }
    std::sort(candidates.rbegin(), candidates.rend());
    std::size_t best = 0;
    for (const auto& [gain, c] : candidates) {
      if (is_step(size, curves, first, last, c, o)) {
        best = c;
        break;
      }
    }
    if (best == 0) continue;
    changes.push_back(best);
    todo.emplace_back(first, best - 1);
    todo.emplace_back(best, last);
  }
  std::sort(changes.begin(), changes.end());
  return changes;
}

}  // namespace commgauge::stats
