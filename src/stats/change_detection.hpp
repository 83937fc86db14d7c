#pragma once
// Protocol-change detection (seed 000 §3.5) on curves measured at increasing message sizes.
//
// Two detectors:
// * `detect_changes_seed000`: the paper's method on one curve: the mean least-squares deviation
//   lsq(lastchange, current) of eq. (8) is compared with lsq(lastchange, current + j) for the x
//   look-ahead points; a change is declared at `current` when all of them exceed it by pfact.
//   Eq. (8)'s denominator (l - k - 2) is undefined for ranges of 3 points or fewer; there a
//   direct step test is used instead: the next x points all lie more than pfact x noise off the
//   line (or the level) of the current range.
// * `detect_changes_joint`: commgauge's robust variant. Several curves are judged together
//   (e.g. PRTT(1,0,s), o(s) and G_all(s)), each point weighted by its measured noise, and the
//   whole curve is segmented at once (binary segmentation: split where the drop in the joint
//   chi-square is largest, recursively) instead of a single left-to-right pass. A split is kept
//   when its drop exceeds pfact^2 x 9 per curve (a 3 pfact-sigma step; or in all, for callers
//   that confirm each split by measuring again), and the x points after
//   it must agree (look-ahead), and the first point after it must already be off the old line
//   (a step, not a bend) by 3 pfact noise units (2 pfact for callers that confirm: a step
//   whose first point misses the stricter bar is otherwise read one point later, where the
//   line through the points before it straddles the step). A point's noise is the larger of its own
//   (from its repetitions) and the curve's measured scatter around a locally straight line (robust:
//   a median), with a tiny relative floor so exact data does not turn rounding error into switches.
//   Segments may be as narrow as 2 points.

#include <cstddef>
#include <span>
#include <vector>

namespace commgauge::stats {

/// One measured curve: values at the sizes of the series and their standard errors.
struct Curve {
  std::vector<double> value;
  std::vector<double> noise;  ///< standard error of each value (> 0 after the floor)
};

struct ChangeOptions {
  int lookahead = 4;   ///< x of seed 000 (3-5)
  double pfact = 2.0;  ///< sensitivity factor of seed 000
  std::size_t min_segment = 2;
  double relative_noise_floor = 1e-6;
  /// The joint split's chi-square gain must exceed pfact^2 x 9 per curve and its first point
  /// lie 3 pfact noise units off the old line (true), or the gain in all and the point 2 pfact
  /// off (false: a more sensitive first pass, for callers that confirm every split by measuring
  /// again).
  bool threshold_per_curve = true;
};

/// Indices i at which a new range starts (i > 0), ascending.
std::vector<std::size_t> detect_changes_seed000(std::span<const double> size, const Curve& curve,
                                                const ChangeOptions& options);

std::vector<std::size_t> detect_changes_joint(std::span<const double> size,
                                              std::span<const Curve> curves,
                                              const ChangeOptions& options);

/// The curve with each point's noise raised to the curve's measured scatter (see above).
Curve with_scatter_noise(std::span<const double> size, const Curve& curve);

/// The chi-square of the weighted line fit of every curve over points [first, last], summed.
double joint_chi2(std::span<const double> size, std::span<const Curve> curves, std::size_t first,
                  std::size_t last, double relative_noise_floor);

/// How far point `i` lies from the line fitted to points [first, last] (extrapolated), in units
/// of its noise, summed in quadrature over the curves. Used to place refinement points.
double joint_distance(std::span<const double> size, std::span<const Curve> curves,
                      std::size_t first, std::size_t last, std::size_t i,
                      double relative_noise_floor);

}  // namespace commgauge::stats
