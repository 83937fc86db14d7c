#pragma once
// Whether a measured link class can be trusted (issue 14): its calibrated set must describe the
// curves it was fitted to. A set that misses its own curves by more than a fifth in rms is no
// description of the link, however stable its bootstrap intervals are (they resample the same
// disturbed rounds). When it is not trusted, the verdict names what the data show: a machine that
// takes the measuring ranks' cores away (time slices) leaves one-way trials hundreds of times
// their size's median.

#include <string>
#include <vector>

#include "measure/latency.hpp"
#include "measure/loggp.hpp"

namespace commgauge::measure {

struct TrustOptions {
  /// The most the calibrated set may miss the curves by, rms over all sizes and curves.
  double max_rms_deviation = 0.20;
  /// A latency trial this many times its size's median is a stall: the rank lost its core.
  /// (A cache miss or an interrupt costs a few times the median, a time slice 100 to 10,000.)
  double stall_ratio = 100;
};

struct Trust {
  bool trusted = true;
  double rms_deviation = 0;  ///< the calibrated set's, from loggp's self-check
  std::size_t stalled_trials = 0, latency_trials = 0;  ///< over every latency size
  double worst_stall_us = 0;
  std::vector<std::string> reasons;  ///< empty when trusted
};

/// The verdict on one class from its loggp self-check and its latency trials (may be empty).
Trust assess_trust(const CurveCheck& calibrated_check, const std::vector<LatencyPoint>& latency,
                   const TrustOptions& options = {});

}  // namespace commgauge::measure
