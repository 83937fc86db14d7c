#pragma once
// LogGP(S) assessment with the PRTT method of seed 000 (§3, Table 2), with commgauge's
// additions: the receive overhead o_r, identifiability of g/G, robust protocol-change detection
// with bisection refinement, a stopping rule for repetitions, a LogGPS view, and a self-check
// that the reported parameters reproduce the measured PRTT curves on the virtual network.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/progress.hpp"
#include "model/link_params.hpp"
#include "net/transport.hpp"
#include "stats/linear_fit.hpp"

namespace commgauge::measure {

struct LoggpOptions {
  std::uint64_t min_size = 1;          ///< sweep start (bytes)
  std::uint64_t max_size = 1u << 20;   ///< sweep end (bytes)
  std::vector<std::uint64_t> sizes;    ///< explicit sizes; replace the sweep
  double points_per_octave = 2;        ///< geometric sweep density
  std::uint32_t n = 16;                ///< messages per PRTT(n, ., s) (seed 000: 16)
  double delay_us = -1;                ///< d; < 0: PRTT(1,0,s) per size (seed 000)
  std::string detector = "joint";      ///< joint | seed000 | none
  int lookahead = 4;                   ///< x of seed 000 §3.5
  double pfact = 2.0;                  ///< pfact of seed 000 §3.5
  bool refine = true;                  ///< bisect between the sizes around a switch
  double refine_tolerance = 0.03;      ///< stop when the switch is bracketed this tightly
  double ci_target = 0.03;             ///< stop repeating when the median's 95 % CI is this narrow
  std::uint32_t min_repetitions = 6;   ///< first batch (6 is the least for a 95 % CI)
  std::uint32_t max_repetitions = 24;  ///< stop repeating here even if the CI is wider
  double budget_s = 0;                 ///< bound on the whole run (0: none)
  std::uint64_t max_messages = 40000;  ///< repetitions beyond the first batch stay within this
  std::uint64_t max_bytes = 2'500'000'000;  ///< ... and this (both directions, whole run)
  bool self_check = true;                   ///< replay the result on the virtual network

  void validate() const;  ///< throws InputError naming the option
  /// The sizes of the initial sweep.
  std::vector<std::uint64_t> sweep_sizes() const;
};

void to_json(nlohmann::json& j, const LoggpOptions& o);
void from_json(const nlohmann::json& j, LoggpOptions& o);

/// One PRTT measured repeatedly: its median and the 95 % confidence interval of the median.
struct PrttStat {
  double median_us = 0;
  double lower_us = 0;
  double upper_us = 0;
  std::uint32_t repetitions = 0;
  bool converged = false;   ///< the CI target was met (else a cap or the budget stopped it)
  double noise_us() const;  ///< standard error of the median, from the CI
};

/// Everything measured and derived at one message size.
struct LoggpPoint {
  std::uint64_t bytes = 0;
  PrttStat prtt1;                 ///< PRTT(1,0,s)
  PrttStat prtt_n0;               ///< PRTT(n,0,s)
  PrttStat prtt_nd;               ///< PRTT(n,d,s), client delay
  PrttStat prtt_nr;               ///< PRTT(n,d,s), server delay (o_r)
  std::optional<PrttStat> prtt2;  ///< PRTT(2,0,s) when d = PRTT(1,0,s) was not above G_all
  double delay_us = 0;
  double o_s_us = 0;    ///< seed 000 eq. (6)
  double o_r_us = 0;    ///< the same with the server's delay
  double g_all_us = 0;  ///< seed 000 eq. (7): really max(o, G_all)
  double o_s_noise = 0, o_r_noise = 0, g_all_noise = 0;
  bool g_identifiable = true;  ///< false where o >= G_all hides the gap
  bool refined = false;        ///< measured by the bisection around a switch
  std::uint32_t remeasured = 0;
  std::size_t range = 0;
};

struct LoggpRange {
  std::uint64_t from_bytes = 0;
  std::uint64_t to_bytes = 0;  ///< last size of the range (UINT64_MAX for the last one)
  std::uint64_t first_measured = 0, last_measured = 0;
  model::LinkRange params;
  bool g_identifiable = true;
  double g_stderr_us = 0;
  double G_stderr_us_per_byte = 0;
  double fit_residual_us = 0;  ///< rms residual of the g/G fit
  std::size_t fit_points = 0;
  std::string protocol;  ///< short | eager | rendezvous (the LogGPS view)
  /// PRTT(1,0,s) and G_all step up here by about a small-message round trip or more: the
  /// synchronisation of a rendezvous protocol (seed 004's S), whether or not the parameters
  /// are reported net of a hand-shake (params.rendezvous).
  bool synchronizing_step = false;
  std::vector<std::string> notes;
};

struct LoggpSelfCheck {
  double max_deviation_prtt1 = 0;  ///< largest |virtual - measured| / measured
  double max_deviation_prtt_n0 = 0;
  double max_deviation_prtt_nd = 0;
  std::uint64_t worst_size = 0;
  std::vector<std::array<double, 3>> virtual_us;  ///< per point: PRTT(1,0,s), (n,0,s), (n,d,s)
};

struct LoggpResult {
  std::vector<LoggpPoint> points;  ///< sorted by size
  std::vector<LoggpRange> ranges;
  std::vector<std::size_t> changes;  ///< indices into points where a range starts
  model::LinkParams link;
  double eel_us = 0;  ///< PRTT(1,0,1)/2 (seed 000 §3.4)
  bool L_negative = false;
  std::optional<std::uint64_t> short_eager_bytes;  ///< LogGPS s
  std::optional<std::uint64_t> rendezvous_bytes;   ///< LogGPS S
  std::optional<LoggpSelfCheck> self_check;
  net::Counters source_counters;
  net::Counters total_counters;  ///< both directions
  double seconds = 0;
  bool budget_exhausted = false;
  bool refinement_stopped_by_budget = false;
  std::uint32_t remeasured_points = 0;
  std::vector<std::string> notes;
};

/// Runs the method on either end; returns the result on the source, nothing on the dest.
std::optional<LoggpResult> measure_loggp(net::Transport& transport, const LoggpOptions& options,
                                         ProgressSink* progress);

/// The analysis alone (detection unless `detect_changes` is false, fits, LogGPS view), for
/// points already measured; with detect_changes false, result.changes is kept as it is.
void analyse_loggp(LoggpResult& result, const LoggpOptions& options, bool detect_changes);

/// Replays PRTT(1,0,s), PRTT(n,0,s) and PRTT(n,d,s) of every point on a virtual network built
/// from `link`, and compares them with the measurement.
LoggpSelfCheck self_check(const LoggpResult& result, const model::LinkParams& link,
                          std::uint32_t n);

}  // namespace commgauge::measure
