#pragma once
// Ping-pong latency of seed 002 §3.2-3.4: barrier and hand-shake before each trial, npp
// ping-pongs per timing loop (npp chosen from the timer resolution), full statistics.

#include <cstdint>
#include <optional>
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
  std::uint64_t npp = 0;           ///< ping-pongs per timing loop; 0: estimate (seed 002 §3.3)
  double res_npp = 50;             ///< res_npp of seed 002
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
  double median_ppt_us = 0;        ///< median round trip per ping-pong in the npp estimate
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
