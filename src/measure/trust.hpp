#pragma once
// Whether a measured link class can be trusted (issue 14): its calibrated set must describe the
// curves it was fitted to. A set that misses its own curves by more than a fifth in rms is no
// description of the link, however stable its bootstrap intervals are (they resample the same
// disturbed rounds). When it is not trusted, the verdict names what the data show: a machine that
// takes the measuring ranks' cores away (time slices) leaves one-way trials hundreds of times
// their size's median. Where the MPI library reports the eager limit of the path between the
// measured pair (MPI_T), that limit is the truth for the rendezvous switch: a class whose loggp
// found no rendezvous switch there is not trusted either, however well its set fits (a fit with
// one protocol over both sides can stay within a fifth). Nor is a set that misses the held-out
// ping-pong by more than a fifth (median): the held-out cells are measured in the first rounds,
// and a machine that changes its speed during the rounds (this VM's two latency modes) leaves a
// set that fits its own curves and describes neither time (2026-12-06: one loaded profile of 8
// within 5.8 % rms of its curves predicted its held-out ping-pong 136 % too slow, measured at
// 0.18 us one-way while its latency method read 0.42).

#include <cstdint>
#include <optional>
#include <span>
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
  /// How far below the library's eager limit its rendezvous switch may lie: the limit counts
  /// the protocol's header with the payload (Open MPI's ob1: 55 B on vader and TCP here), and no
  /// header is this long.
  std::uint64_t header_allowance_bytes = 256;
};

/// The eager limit the MPI library reports (MPI_T) for the path the measured pair's messages
/// take: Open MPI's ob1 with one shared-memory BTL between ranks of one host, or else the one
/// network BTL. None where the context cannot tell (another PML, several candidate BTLs, MPICH,
/// TCP or the virtual network).
struct LibraryEagerLimit {
  std::string component;  ///< the BTL, e.g. "vader" or "tcp"
  std::uint64_t bytes = 0;
};
std::optional<LibraryEagerLimit> library_eager_limit(const nlohmann::json& transport_context);

/// The loggp result the verdict reads besides its self-check: the switches, the sizes swept and
/// how well the calibrated set (model loggps) predicts the held-out ping-pong, its median |E_rel|
/// (none where nothing was held out).
struct SwitchEvidence {
  std::span<const LoggpSwitch> switches;
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::optional<double> heldout_pingpong_error;
};

struct Trust {
  bool trusted = true;
  double rms_deviation = 0;  ///< the calibrated set's, from loggp's self-check
  std::size_t stalled_trials = 0, latency_trials = 0;  ///< over every latency size
  double worst_stall_us = 0;
  /// The library's eager limit when known and inside the sizes swept, and whether loggp found
  /// a rendezvous switch at it (within the header allowance below it).
  std::optional<LibraryEagerLimit> eager_limit;
  bool switch_at_eager_limit = false;
  std::optional<double> heldout_pingpong_error;  ///< as given (SwitchEvidence)
  std::vector<std::string> reasons;              ///< empty when trusted
};

/// The verdict on one class from its loggp self-check, its latency trials (may be empty) and,
/// where the library reports its eager limit, loggp's switches.
Trust assess_trust(const CurveCheck& calibrated_check, const std::vector<LatencyPoint>& latency,
                   const std::optional<LibraryEagerLimit>& eager_limit = std::nullopt,
                   const SwitchEvidence& evidence = {}, const TrustOptions& options = {});

}  // namespace commgauge::measure
