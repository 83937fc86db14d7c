#pragma once
// Ping-pong latency of seed 002 §3.2-3.4: barrier and hand-shake before each trial, npp
// ping-pongs per timing loop (npp chosen from the timer resolution), full statistics.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/progress.hpp"
#include "measure/timer.hpp"
#include "net/transport.hpp"
#include "stats/descriptive.hpp"
#include "stats/filtering.hpp"
#include "stats/tables.hpp"

namespace commgauge::measure {

/// The hand-shake message: one double precision element, as in seed 002.
inline constexpr std::size_t kHandshakeBytes = 8;

struct LatencyOptions {
  std::vector<std::uint64_t> sizes{8};  ///< message sizes in bytes
  /// ntrial per size at most; a size stops earlier once its median is known to rse_target.
  std::uint64_t trials = 10000;
  std::uint64_t min_trials = 100;  ///< trials every size gets
  /// Stop a size when the relative standard error of its median (from the distribution-free
  /// 95 % interval) is at most this; 0: always run `trials` (seed 002's fixed count).
  double rse_target = 0.01;
  std::uint64_t npp = 0;  ///< ping-pongs per timing loop; 0: estimate (seed 002 §3.3)
  double res_npp = 50;    ///< res_npp of seed 002
  /// The relative bias the hand-shake may put on a trial: the first ping-pong after it costs
  /// more than the next ones (measured here 10-20 % at 8 B), so npp grows until that extra cost
  /// spread over the loop is at most this share of the one-way time. 0: seed 002's npp alone.
  double handshake_bias = 0.005;
  std::uint64_t npp_init = 10;     ///< ping-pongs per loop while estimating npp
  std::uint64_t npp_trials = 200;  ///< npptrial: loops timed while estimating npp
  double cut_coef = 2.0;           ///< filter trials above cut_coef x median
  double bin_width_us = 0;         ///< distribution bin width; 0: automatic
  int max_bins = 50;
  double frequency_quantum_us = 0.001;
  int max_frequency_rows = 100;
  void validate() const;  ///< throws InputError naming the option
};

void to_json(nlohmann::json& j, const LatencyOptions& o);
void from_json(const nlohmann::json& j, LatencyOptions& o);

/// Communication rates in MB/s (10^6 bytes per second) from the min/median/mean/max times.
struct Rates {
  double from_min = 0, from_median = 0, from_mean = 0, from_max = 0;
};

struct LatencyPoint {
  std::uint64_t size_bytes = 0;
  std::uint64_t npp_calculated = 0;
  std::uint64_t npp_used = 0;
  double median_ppt_us = 0;  ///< median round trip per ping-pong in the npp estimate
  /// What the first ping-pong after the hand-shake costs beyond the others (round trip, >= 0),
  /// from loops of 1 and of npp_init ping-pongs timed alternately; and the npp that keeps its
  /// share of a trial within handshake_bias (npp_used is the larger of this and npp_calculated).
  double handshake_penalty_us = 0;
  std::uint64_t npp_for_handshake_bias = 1;
  std::vector<double> one_way_us;  ///< every trial: (t2 - t1 - min_ov) / (2 npp)
  stats::Summary stats;
  Rates rates;
  stats::Filtered filtered;
  std::optional<stats::Summary> filtered_stats;  ///< absent if filtering removed everything
  std::optional<Rates> filtered_rates;
  stats::Distribution distribution;
  stats::Frequency frequency;
  double p50_us = 0, p90_us = 0, p99_us = 0;  ///< percentiles of the one-way times
  double median_rse = 0;  ///< relative standard error of the median when the size stopped
  double median_lower_us = 0, median_upper_us = 0;  ///< its distribution-free 95 % interval
  bool reached_target = false;  ///< median_rse <= rse_target (else the trial cap stopped it)
  double seconds = 0;           ///< wall time of this size
};

struct LatencyResult {
  std::vector<LatencyPoint> points;
  net::Counters counters;  ///< messages and bytes the source sent
  double seconds = 0;
  /// Why the sweep ended before its last size (a transport failure), empty if it did not: the
  /// sizes measured until then are kept, to be saved before the error is reported.
  std::string interrupted;
};

/// npp = nint(max(1, res_npp * res_timing / median_ppt)) (seed 002 §3.3); nint rounds half away
/// from zero like Fortran's. A clock with res_timing 0 (the virtual one) gives 1.
std::uint64_t npp_from_estimate(double res_timing_us, double median_ppt_us, double res_npp);

/// The hand-shake's penalty from loops timed in pairs, one of a single ping-pong (w + p) and one
/// of n (w + p / n per ping-pong): p = d n / (n - 1), d from the pairs' differences. With at
/// least kPairsForPointEstimate pairs (the sizes whose estimate ran in full: short ping-pongs) d
/// is their median; with fewer (sizes whose estimate stopped after 10 loops) the lower end of its
/// distribution-free 95 % interval, so that noise in 10 pairs at 1 MiB cannot multiply the bytes
/// moved. 0 when d is not positive, with fewer than 6 pairs (no 95 % interval) or n = 1.
inline constexpr std::size_t kPairsForPointEstimate = 50;
double handshake_penalty(std::span<const double> single_us, std::span<const double> per_pingpong_us,
                         std::uint64_t n);

/// The smallest npp whose loop spreads a penalty of `penalty_us` so that it is at most `bias`
/// of the time: penalty / (npp round_trip) <= bias, at least 1 and at most kMaxNppForBias (a
/// loop that long already holds the penalty below the timer's own noise). 1 when bias is 0.
inline constexpr std::uint64_t kMaxNppForBias = 1000;
std::uint64_t npp_for_handshake_bias(double penalty_us, double round_trip_us, double bias);

/// Rates in MB/s for `bytes` from the summary's times (0 where a time is not positive).
Rates rates_from(const stats::Summary& s, std::uint64_t bytes);

/// Runs the method on either end; returns the result on the source, nothing on the dest. A
/// TransportError after at least one size was measured returns those sizes with `interrupted`
/// set on the source (the caller saves them, then reports the error); before that it propagates.
/// `timer` is the source's timer characterization (ignored on the dest).
std::optional<LatencyResult> measure_latency(net::Transport& transport,
                                             const LatencyOptions& options,
                                             const TimerCharacterization& timer,
                                             ProgressSink* progress);

}  // namespace commgauge::measure
