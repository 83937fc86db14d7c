#pragma once
// Pieces of the loggp method shared by its measuring half (loggp.cpp) and its analysis half
// (loggp_analysis.cpp). Not a public interface.

#include <cstddef>
#include <vector>

#include "measure/loggp.hpp"
#include "stats/change_detection.hpp"

namespace commgauge::measure::detail {

/// Relative noise floor: exact virtual-network data must not turn rounding into switches.
inline constexpr double kRelativeFloor = 1e-6;

/// A switch candidate: the index of the first point of the new range, and who saw it.
struct Candidate {
  std::size_t index = 0;
  bool late_receive = false;  ///< o_r(s) jumps by more than the one-way time below it
  bool joint = false;         ///< the joint segmentation split here
};

/// Both detectors over the summarised points, merged (a late-receive jump and a joint split at
/// neighbouring indices are one candidate, placed where the late receive jumps).
std::vector<Candidate> detect_candidates(const std::vector<LoggpPoint>& points,
                                         const LoggpOptions& options);

/// Whether points[i] starts a range whose late receive pays a hand-shake (see loggp.hpp).
bool late_receive_jump(const std::vector<LoggpPoint>& points, std::size_t i);

/// The rendezvous test on late-receive costs and one-way times (PRTT(1,0,s)/2) below and above
/// a switch (medians, us), with `margin` for the noise. A late rendezvous receive answers the
/// request and then waits for the whole transfer (seed 004's T5 + T1 + T2 + T3); an eager one
/// only copies out data that has arrived (T3). So either the late receive jumps by more than the
/// one-way time below (the hand-shake dominates, as over shared memory), or its share of the
/// one-way time rises by more than 0.4 to above 0.6 (the transfer dominates: now the late
/// receive holds nearly all of the one-way time, where it held only the copy-out).
bool hand_shake_jump(double late_below_us, double late_above_us, double one_way_below_us,
                     double one_way_above_us, double margin_us);

/// Bisection's midpoint test: of a binomial count `slow_mid` of `n_mid` trials, the log of how
/// much likelier it is under the share of slow trials above the switch than under the share
/// below it (each share estimated from its side's counts with a half-trial continuity
/// correction, so no count of 0 or n makes a side impossible). Positive: the midpoint is on
/// the rendezvous side.
double side_log_likelihood_ratio(std::size_t slow_below, std::size_t n_below, std::size_t slow_mid,
                                 std::size_t n_mid, std::size_t slow_above, std::size_t n_above);

/// The curves judged together: PRTT(1,0,s), o_s(s), o_r(s) and G_all(s) with their noise.
std::vector<stats::Curve> curves_of(const std::vector<LoggpPoint>& points);
std::vector<double> sizes_of(const std::vector<LoggpPoint>& points);

/// Median, interval and noise of one series of per-round values.
PrttStat stat_of(const std::vector<double>& values, double ci_target);

}  // namespace commgauge::measure::detail
