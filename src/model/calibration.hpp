#pragma once
// One calibrated parameter set per protocol range, fitted jointly to every PRTT curve measured:
// PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) and the server-delay PRTT (seed 000's Listing 1 and
// commgauge's o_r variant), through the same closed forms the virtual network and the simulator
// obey (closed_forms.hpp). Weighted least squares on the curves, each point weighted by its
// standard error, at least 5 % of its value: relative error, every curve alike, unless a point
// is noisier than that; with
// every parameter >= 0: damped Gauss-Newton steps, each a non-negative least-squares problem.
//
// Where the curves cannot separate parameters (g hidden by o, seed 000 §4; G and O_r in a
// rendezvous range, which enter every PRTT only as their sum), the Jacobian at the solution is
// rank-deficient, or a profile finds the fit as good elsewhere: those parameters are reported
// "not identifiable" with the interval of equally good fits (a profile bound), and keep about the
// value they started from (the seeds' estimators) within it.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/cost.hpp"
#include "model/link_params.hpp"

namespace commgauge::model {

/// The four PRTT curves at one message size, as measured (medians) with their standard errors.
struct PrttCurvePoint {
  std::uint64_t bytes = 0;
  std::uint32_t n = 16;                 ///< messages of PRTT(n, ., s)
  double delay_us = 0;                  ///< d of PRTT(n,d,s) and of the server-delay PRTT
  std::array<double, 4> measured_us{};  ///< PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s), server-delay
  std::array<double, 4> noise_us{};     ///< standard errors (0: unknown)
  /// The server-delay PRTT's receive cost beyond what eq. (5) allows an early receive
  /// (o_r(s) - G_all(s), in PRTT units): the fit of every parameter but o_u counts it as that
  /// curve's error there; o_u, fitted afterwards with the others held, takes it up.
  double late_receive_excess_us = 0;
  /// How much of the size axis the point stands for (1: one sweep step; a cluster of bisection
  /// points shares one step's weight, so it cannot outweigh whole octaves).
  double weight = 1;
};

/// Weights for points sorted by size: each point's share of the log-size axis (half the
/// distance to each neighbour), relative to `step` (the sweep's step, log2 units).
void weigh_by_size_axis(std::span<PrttCurvePoint> points, double step);

/// The curves' names, in the order of PrttCurvePoint::measured_us.
inline constexpr std::array<const char*, 4> kPrttCurveNames = {"PRTT(1,0,s)", "PRTT(n,0,s)",
                                                               "PRTT(n,d,s)", "server-delay"};

/// The four PRTTs of `point` under the link, in microseconds (closed_forms.hpp).
std::array<double, 4> prtt_curves(const CostModel& cost, const PrttCurvePoint& point);

/// Which structure is fitted: LogGPS (per-byte overheads O_s and O_r, rendezvous ranges as the
/// start link has them) or plain LogGP (O_s = O_r = 0, no rendezvous hand-shake).
enum class Structure { loggps, loggp };

/// A parameter the curves do not determine, with the interval over which the fit stays as good.
struct Unidentified {
  std::size_t range = 0;  ///< index into link.ranges; SIZE_MAX for L (or L - omega: may be < 0)
  std::string parameter;  ///< o_s, o_r, O_s, O_r, g, G, L or L - omega
  double value = 0;       ///< what the link carries (within the interval)
  double lower = 0;
  double upper = 0;  ///< infinity: no upper bound
};

struct Calibration {
  LinkParams link;
  std::vector<std::array<double, 4>> model_us;   ///< per point, the fitted curves
  std::vector<std::array<double, 4>> deviation;  ///< per point, (model - measured) / measured
  double max_abs_deviation = 0;
  double rms_deviation = 0;
  double chi2 = 0;  ///< the weighted sum of squares the fit minimised
  std::vector<Unidentified> unidentified;
  int iterations = 0;
  bool converged = false;
};

/// The deviations of `link`'s curves from the measured ones (the self-check of any link).
Calibration evaluate(const LinkParams& link, std::span<const PrttCurvePoint> points);

struct CalibrationOptions {
  bool identifiability = true;  ///< search which parameters the curves leave open (profiles)
  bool extra_starts = true;     ///< also start from the start link scaled by 0.5 and 2
  bool fixed_latency = false;   ///< keep the start's L and send overlap (fit the ranges only)
  /// Fit the send overlap omega (else L >= 0 alone, omega as the start has it).
  bool fit_overlap = true;
  std::vector<LinkParams> more_starts;  ///< further starting points (same ranges as the start)
  /// Per range: keep the start's g and G (measured directly elsewhere, e.g. by eq. (7)).
  std::vector<bool> fixed_gap;
  /// Per range: its per-byte costs (O_s, O_r, G) are those of the range below, fitted to both
  /// ranges' points; only its constant costs are its own (a level change, where one side of a
  /// split has a single size: one size gives no slope).
  std::vector<bool> per_byte_as_below;
  /// Fit o_u after the others (LogGPS). Off where only the first fit's chi-square is read (a
  /// candidate switch's one-range against two-range test): it costs two more full fits.
  bool fit_late_receives = true;
  /// The start is itself a calibrated set (a bootstrap resample's refit): one fit of every
  /// coordinate, o_u included, from it, in place of the two stages (a third of the time); no
  /// extra starts, no identifiability profiles.
  bool start_is_calibrated = false;
};

/// Fits the link's parameters (L or the send overlap omega, and per range o_s, o_r, O_s, O_r, g,
/// G; LogGP: not O_s, O_r) with o_u = 0, and then (LogGPS) all of them again with each range's
/// o_u free as well, from that point: a receive posted after its eager data (or its rendezvous
/// request) arrived is seen only in the server-delay PRTT, where it trades against o_r and L, so
/// o_u is what that curve leaves once the others have spoken; fitted to the points, keeping the
/// ranges' sizes, rendezvous flags and progress of `start`, which is also the starting point. Needs
/// at least one point.
Calibration calibrate(const LinkParams& start, std::span<const PrttCurvePoint> points,
                      Structure structure, const CalibrationOptions& options = {});

}  // namespace commgauge::model
