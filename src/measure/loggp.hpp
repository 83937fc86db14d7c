#pragma once
// LogGP(S) assessment with the PRTT method of seed 000 (§3, Table 2), measured so that the
// numbers repeat run to run:
// * interleaved rounds: every round measures PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s) and the
//   server-delay PRTT at every size, all cells in a freshly shuffled order (the seed is kept in
//   the result), so drift and bursts of load fall on all sizes alike; a size's estimate is the
//   median over its rounds with the distribution-free 95 % interval; sizes whose interval is not
//   yet narrow get more rounds within the message, byte and time budgets;
// * switches found by two detectors - the joint segmentation of PRTT(1,0,s), o_s(s), o_r(s) and
//   G_all(s), and the late-receive test of rendezvous (below) - then confirmed by re-measuring
//   both sides alternately and narrowed by bisection, to one byte where the curve allows;
// * the seeds' estimators per range (o eq. (6), g and G eq. (7), L §3.4), none negative, each
//   with a bootstrap interval over the rounds and a verdict.
//
// Rendezvous (seed 004's T4, T5): the data moves only once the receive is posted. The
// server-delay PRTT makes every receive late, so o_r(s) there is what a late receive costs:
// the copy-out of data that already arrived (eager, T3), or the hand-shake plus the whole
// transfer (rendezvous, T5 + T1 + T2 + T3). At a rendezvous switch o_r(s) therefore jumps by
// more than the whole one-way time of the size below it; a late-receiver probe (one message,
// the receiver computes before posting, its receive timed) bisects that jump to one byte.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/progress.hpp"
#include "measure/prtt.hpp"
#include "model/calibration.hpp"
#include "model/link_params.hpp"
#include "net/page_aligned.hpp"
#include "net/transport.hpp"
#include "stats/linear_fit.hpp"

namespace commgauge::measure {

struct LoggpOptions {
  std::uint64_t min_size = 1;             ///< sweep start (bytes)
  std::uint64_t max_size = 256u << 10;    ///< sweep end (bytes)
  std::vector<std::uint64_t> sizes;       ///< explicit sizes; replace the sweep
  double points_per_octave = 2;           ///< geometric sweep density
  std::uint32_t n = 16;                   ///< messages per PRTT(n, ., s) (seed 000: 16)
  double delay_us = -1;                   ///< d; < 0: PRTT(1,0,s) per size (seed 000)
  std::string detector = "joint";         ///< joint | seed000 | none
  int lookahead = 4;                      ///< x of seed 000 §3.5
  double pfact = 2.0;                     ///< pfact of seed 000 §3.5
  bool refine = true;                     ///< bisect between the sizes around a switch
  double refine_tolerance = 0;            ///< stop bisecting at this fraction (0: one byte)
  double ci_target = 0.03;                ///< a size is stable when every PRTT's 95 % CI
                                          ///< half-width is within this fraction
  std::uint32_t min_rounds = 6;           ///< rounds every size gets (6: least for a 95 % CI)
  std::uint32_t max_rounds = 30;          ///< rounds a size may get in all
  double budget_s = 0;                    ///< bound on the whole run (0: none)
  std::uint64_t max_messages = 120'000;   ///< messages, both directions, whole run
  std::uint64_t max_bytes = 900'000'000;  ///< bytes, both directions, whole run
  std::uint64_t seed = 0;                 ///< order of the cells (0: drawn, then recorded)
  std::uint32_t bootstrap = 200;          ///< resamples of the rounds for the intervals
  bool calibrate = true;  ///< fit the calibrated set (else: the seeds' estimators only)
  /// Held-out cells (profile's validation), each joining every one of the first min_rounds
  /// rounds, shuffled with the sweep's cells so that drift and the machine's latency modes fall
  /// on both alike; never used in any fit or detection. Ping-pong: a PRTT(1,0,s) cell per size;
  /// collectives (MPI only): an MPI_Allreduce and an MPI_Alltoall cell per size; exchanges
  /// (every transport): an exchange cell per size (PrttKind::exchange).
  std::vector<std::uint64_t> heldout_sizes;
  std::vector<std::uint64_t> heldout_collective_sizes;
  std::vector<std::uint64_t> heldout_exchange_sizes;
  /// Exchanges to fit o_x and O_x to (LinkRange::crossing_recv_us): a cell per sweep size that
  /// is not a held-out exchange size, in each of the first min_rounds rounds.
  bool crossing_exchanges = true;
  /// Streams to fit G_st to (LinkRange::stream_gap_per_byte_us): a cell per sweep size of
  /// kStreamMessages nonblocking sends (PrttKind::stream), in each of the first min_rounds rounds;
  /// and, at their acknowledged ranges' sizes, send calls (PrttKind::send_call) for T1.
  bool streams = true;
  /// Pages the calibrated set may bill a range's per-byte costs by, where the curves favour that
  /// (LinkRange::page_bytes): the page the PRTT buffers start on, net::kPageBytes, or 0: always
  /// by the byte (the default: a program's buffers start anywhere in a page, and Open MPI's
  /// collectives copy through buffers of their own; docs/loggp.md).
  std::uint64_t page_bytes = 0;

  void validate() const;  ///< throws InputError naming the option
  /// The sizes of the initial sweep.
  std::vector<std::uint64_t> sweep_sizes() const;
};

void to_json(nlohmann::json& j, const LoggpOptions& o);
void from_json(const nlohmann::json& j, LoggpOptions& o);

/// Messages and bytes, both directions.
struct Traffic {
  double messages = 0, bytes = 0;
};

/// What a run of these options moves at least: its first min_rounds rounds with the pilot and
/// the warm-up. A run whose budgets do not allow that refuses to start.
Traffic first_rounds_traffic(const LoggpOptions& o);

/// Budgets that follow the sweep: o's max_messages (if `messages`) and max_bytes (if `bytes`)
/// become `reference`'s budgets scaled by how much more the first rounds of o's sweep move than
/// those of reference's, never less than reference's. A run asked for larger messages without
/// budgets of its own then gets as many rounds as the reference sweep gets within its budgets.
void scale_budgets_to_sweep(LoggpOptions& o, const LoggpOptions& reference, bool messages,
                            bool bytes);

/// A median over rounds and its distribution-free 95 % confidence interval.
struct PrttStat {
  double median_us = 0;
  double lower_us = 0;
  double upper_us = 0;
  std::uint32_t repetitions = 0;  ///< rounds
  bool converged = false;         ///< the CI target was met
  double noise_us() const;        ///< standard error of the median, from the CI
};

/// A size's PRTTs, one value per round (all four measured in the same rounds).
struct RoundValues {
  std::vector<double> prtt1, prtt_n0, prtt_nd, prtt_nr;
  std::size_t size() const { return prtt1.size(); }
};

/// Everything measured and derived at one message size.
struct LoggpPoint {
  std::uint64_t bytes = 0;
  RoundValues rounds;   ///< the raw per-round values everything below is derived from
  PrttStat prtt1;       ///< PRTT(1,0,s)
  PrttStat prtt_n0;     ///< PRTT(n,0,s)
  PrttStat prtt_nd;     ///< PRTT(n,d,s), client delay
  PrttStat prtt_nr;     ///< PRTT(n,d,s), server delay (o_r: every receive is late)
  double delay_us = 0;  ///< d (seed 000 §3.2: PRTT(1,0,s), or PRTT(2,0,s) if not above G_all)
  double o_s_us = 0;    ///< seed 000 eq. (6), median of the rounds' values
  double o_r_us = 0;    ///< the same with the server's delay: a late receive's cost
  double g_all_us = 0;  ///< seed 000 eq. (7): really max(o, G_all)
  double o_s_noise = 0, o_r_noise = 0, g_all_noise = 0;  ///< standard errors (from the CIs)
  /// 95 % order-statistic intervals of the rounds' medians of o_s, o_r and G_all ([min, max]
  /// with fewer than 6 rounds): the error bars of plots and the JSON.
  double o_s_lower_us = 0, o_s_upper_us = 0, o_r_lower_us = 0, o_r_upper_us = 0;
  double g_all_lower_us = 0, g_all_upper_us = 0;
  bool g_identifiable = true;  ///< false where o >= G_all hides the gap
  bool refined = false;        ///< measured by the bisection around a switch
  /// Its rounds measured in the interleaved sweep (run_rounds), where every size shares the
  /// machine's state of the moment. Rounds a confirmation adds later, and a refined point's,
  /// came at another time: a machine that changes its latency mode between phases (here one-way
  /// times of 0.3 and 0.6 us, in 5 of 10 quiet runs between the rounds and the confirmation)
  /// would tear the fitted curves apart there, so no fit or self-check reads them.
  std::size_t interleaved_rounds = 0;
  bool fitted() const { return interleaved_rounds > 0; }
  bool converged = false;  ///< every PRTT met the CI target
  std::size_t range = 0;
};

/// A parameter with its bootstrap 95 % interval over the rounds.
struct Interval {
  double lower = 0, upper = 0;
  bool known = false;  ///< false: not computed (too few rounds)
};

/// A range's parameters: o_s, o_r, O_s, O_r, g, G and o_u (kParameterNames).
inline constexpr std::size_t kParameterCount = 7;

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
  /// Bootstrap intervals of o_s, o_r, O_s, O_r, g, G, o_u (the order of kParameterNames).
  std::array<Interval, kParameterCount> intervals{};
  std::string verdict;  ///< "stable", or "unstable: ..." with the reason
  std::vector<std::string> notes;
};

/// The names of LoggpRange::intervals, in order.
inline constexpr std::array<const char*, kParameterCount> kParameterNames = {
    "o_s", "o_r", "O_s", "O_r", "g", "G", "o_u"};

/// How a switch between two protocol ranges was found and how sure it is.
struct LoggpSwitch {
  std::uint64_t first_bytes = 0;  ///< first size of the new range
  std::uint64_t below_bytes = 0;  ///< the largest size known to lie in the range below
  bool rendezvous = false;        ///< a hand-shake starts here: the late receive pays one from
                                  ///< here on and not below
  std::string found_by;           ///< "late-receive jump", "joint segmentation" or both
  /// The sweep's late-receive jump read a hand-shake here (not the probe, nor its scan): where it
  /// did not, a hand-shake needs the probe's verdict (detail::hand_shake_unsupported).
  bool curves_saw_hand_shake = false;
  /// Late-receive probe at below_bytes and first_bytes (undisturbed: a low order statistic of
  /// the trials, us) and how many of the alternating confirmation trials lay on their side of
  /// the threshold between them.
  double late_recv_below_us = 0, late_recv_above_us = 0;
  /// Of the probe's valid late receives at below_bytes and first_bytes, those whose send waited
  /// for the receive (ProbeSample::sender_waited): on an eager side, most waiting says its sends
  /// complete on the receiver's acknowledgement (Tm = TA).
  std::uint32_t waited_below = 0, late_below = 0, waited_above = 0, late_above = 0;
  std::uint32_t confirmations = 0, confirmation_trials = 0;
  bool confirmed = false;  ///< the last alternating trials still separated the sides
  bool exact = false;      ///< bracketed to one byte
  /// Placed by add_per_byte_changes where one parameter set per protocol range misses the
  /// curves: the per-byte cost changes (a copy routine's threshold, a cache level) and the
  /// protocol stays; not re-measured, bracketed by the sweep's sizes.
  bool per_byte_change = false;
  /// A per-byte change with a single fitted size on one side: the ranges either side share their
  /// per-byte costs (O_s, O_r, G), only the constant ones change (one size gives no slope).
  bool level_change = false;
  std::string verdict;  ///< "confirmed ..." or "bracketed ... : the curve allows no finer"
  /// One bisection step of a rendezvous switch: the bracket, how many attempts of the probe it
  /// took, the valid late receives pooled at each size, their low ends (stats::floor_of, us)
  /// and where the midpoint went (eager, rendezvous, between or undecided); or a step back to
  /// the bracket before ("back: ..." with that bracket), where a step went wrong. A change of
  /// transfer mechanism is bisected on the sends' waiting instead ("sends free", "sends wait").
  struct Step {
    std::uint64_t below_bytes = 0, mid_bytes = 0, above_bytes = 0;
    std::uint32_t attempts = 0;
    std::array<std::uint32_t, 3> trials{};
    double below_us = 0, mid_us = 0, above_us = 0;
    /// Of each size's valid trials, those whose send waited for the late receiver.
    std::array<std::uint32_t, 3> waited{};
    std::string placement;
  };
  std::vector<Step> steps;
};

/// How well one parameter set reproduces the curves it came from, at every size (the closed
/// forms, which the virtual network obeys to the picosecond).
struct CurveCheck {
  std::vector<std::array<double, 4>> deviation;  ///< per point: (model - measured) / measured
  std::array<double, 4> max_abs{};  ///< per curve: PRTT(1,0,s), (n,0,s), (n,d,s), server-delay
  double max_abs_all = 0;
  double rms = 0;
  std::uint64_t worst_size = 0;  ///< all three over the fitted points (LoggpPoint::fitted)
  /// The largest deviation at the points no fit read (the bisection's, measured later), and
  /// how many there are: a large one says the machine changed between the phases.
  double max_abs_unfitted = 0;
  std::size_t unfitted = 0;
  /// Over the fitted points' (curve, size) cells: how many there are, how many the set misses
  /// by more than kSelfCheckTarget, and how many of those lie outside the cell's own 95 %
  /// interval (a miss the measurement resolves, not one within its noise).
  std::size_t cells = 0, cells_off = 0, cells_off_outside_interval = 0;
  /// Those last cells, by size: which curve, at what size, by how much ((model - measured) /
  /// measured), so that a user sees where the set misses.
  struct Miss {
    std::uint64_t bytes = 0;
    std::size_t curve = 0;  ///< as max_abs
    double deviation = 0;
  };
  std::vector<Miss> missed;
};

/// The self-check's target miss per cell (issue 14 item 5: within 5 % of every curve at every
/// size).
inline constexpr double kSelfCheckTarget = 0.05;

/// The calibrated set: one parameter set per range fitted jointly to all four curves
/// (model/calibration.hpp), with bootstrap intervals and what the curves leave open.
struct CalibratedSet {
  model::LinkParams link;  ///< with each range's fitted LogGP view
  std::vector<std::array<Interval, kParameterCount>> intervals;  ///< per range, as kParameterNames
  Interval L_interval;
  Interval overlap_interval;  ///< the send overlap omega (model::LinkParams::send_overlap_us)
  struct Open {
    std::size_t range = 0;  ///< SIZE_MAX: L
    std::string parameter;
    double value = 0, lower = 0, upper = 0;  ///< upper may be infinite
    std::string why;                         ///< which equation cannot separate it
  };
  std::vector<Open> not_identifiable;
  bool converged = false;
  /// o_x and O_x per range (LinkRange::crossing_recv_us, crossing_recv_per_byte_us): what the
  /// exchanges measured exceed the model's exchange by, with 95 % intervals from resampled
  /// rounds; sizes: how many exchange sizes of the range they rest on (0: none measured there,
  /// o_x = O_x = 0).
  struct Crossing {
    Interval interval, per_byte_interval;
    std::size_t sizes = 0;
  };
  std::vector<Crossing> crossing;
  /// The model's exchange at each of LoggpResult::exchanges' sizes, with the fitted o_x.
  std::vector<double> exchange_model_us;
  /// The gap of each rendezvous or acknowledged range fitted to its streams (fit_stream_gap;
  /// elsewhere PRTT(n,0,s) shows the gap itself: eq. (7)): G_st's 95 % interval from resampled
  /// rounds;
  /// sizes: the range's stream sizes; slow: of them, how many the calibrated set put outside
  /// their measured median's 95 % interval (fitted only where at least half were, and the
  /// range's PRTTs stay within a percentage point of their worst miss before).
  struct StreamGap {
    Interval interval;
    std::size_t sizes = 0, slow = 0;
    bool fitted = false;  ///< g, G, O_r (acknowledged: O_s) and G_st come from its streams
    /// Where the streams' gap was refused: the range's worst PRTT miss (a fraction) with the
    /// calibrated values and with the gap (0: not refused for that).
    double prtt_miss_before = 0, prtt_miss_after = 0;
    /// Where it was refused because the streams came no closer: their median miss (a fraction)
    /// with the calibrated values and with the gap (0: not refused for that).
    double stream_miss_before = 0, stream_miss_after = 0;
  };
  std::vector<StreamGap> stream_gap;
  /// T1 = o_s + kO_s of each acknowledged range fitted to its send calls (fit_send_call): the
  /// fitted line with 95 % intervals from resampled rounds, the values the calibration had, and
  /// why it was refused where it was (the range's PRTTs would move).
  struct SendCall {
    std::size_t sizes = 0;
    bool fitted = false;
    double o_s_us = 0, O_s_us_per_byte = 0;  ///< the line through the cells
    Interval o_s_interval, O_s_interval;
    double calibrated_o_s_us = 0, calibrated_O_s_us_per_byte = 0;
    double prtt_miss_before = 0, prtt_miss_after = 0;  ///< where refused (fractions)
  };
  std::vector<SendCall> send_call;
  /// The model's send call at each of LoggpResult::send_calls' sizes, with the fitted T1.
  std::vector<double> send_call_model_us;
  /// The model's stream at each of LoggpResult::streams' sizes, with the fitted G_st.
  std::vector<double> stream_model_us;
};

/// A cell measured beside the sweep's PRTTs (held out, or the exchanges o_x is fitted to), its
/// value in each round it joined: a ping-pong's one-way time (kind client_delay: PRTT(1,0,s) /
/// 2), one collective call (kind allreduce, alltoall), one exchange (kind exchange), or a whole
/// stream of kStreamMessages sends and the 1-byte reply (kind stream).
struct CellSeries {
  PrttKind kind = PrttKind::client_delay;
  std::uint64_t bytes = 0;
  std::vector<double> rounds_us;
};

struct LoggpResult {
  std::vector<LoggpPoint> points;  ///< sorted by size
  /// The held-out ping-pong sizes, then the collectives, then the exchanges.
  std::vector<CellSeries> heldout;
  /// The exchanges o_x is fitted to (LoggpOptions::crossing_exchanges), one per size.
  std::vector<CellSeries> exchanges;
  /// The streams G_st is fitted to (LoggpOptions::streams), one per size: the round's time.
  std::vector<CellSeries> streams;
  /// The send calls an acknowledged range's T1 is fitted to (measured with the streams, at their
  /// sizes below the lowest rendezvous switch), one per size: the mean call in the round.
  std::vector<CellSeries> send_calls;
  std::vector<LoggpRange> ranges;
  std::vector<std::size_t> changes;   ///< indices into points where a range starts
  std::vector<LoggpSwitch> switches;  ///< one per change, same order
  model::LinkParams link;
  double eel_us = 0;         ///< PRTT(1,0,1)/2 (seed 000 §3.4)
  double L_equation_us = 0;  ///< eel - o_s(1) - o_r(1) as the equation gives it (may be < 0)
  bool L_negative = false;   ///< the equation gave L < 0; L is reported as 0
  Interval L_interval;
  std::optional<std::uint64_t> short_eager_bytes;  ///< LogGPS s
  std::optional<std::uint64_t> rendezvous_bytes;   ///< LogGPS S
  model::LinkParams seed_link;  ///< the seeds' estimators (what analyse_loggp derives)
  CalibratedSet calibrated;     ///< link is calibrated.link once calibrate_loggp ran
  CurveCheck seed_check, calibrated_check;
  net::Counters source_counters;
  net::Counters total_counters;  ///< both directions
  double seconds = 0;            ///< measuring (source's clock), the analysis after it not included
  /// Wall seconds per phase in order: warm-up and rounds, scan, confirmation, bootstrap,
  /// calibration.
  std::vector<std::pair<std::string, double>> phase_seconds;
  std::uint64_t seed = 0;    ///< the order of the cells was drawn from this
  std::uint32_t rounds = 0;  ///< rounds run (the most any size got)
  std::uint32_t stable_points = 0;
  bool budget_exhausted = false;  ///< a budget cut rounds or refinement short
  Traffic budget;                 ///< the budgets the run had (max_messages, max_bytes)
  std::vector<std::string> notes;
  /// Empty for a complete run; else the transport failure that ended it after `rounds` complete
  /// rounds (the result is their analysis; total_counters then count the source only).
  std::string interrupted;
};

/// Runs the method on either end; returns the result on the source, nothing on the dest. A
/// TransportError after at least one complete round returns the analysis of what was measured
/// with `interrupted` set; before that it propagates.
std::optional<LoggpResult> measure_loggp(net::Transport& transport, const LoggpOptions& options,
                                         ProgressSink* progress);

/// Per-size medians, intervals and eq. (6)/(7) values from the points' rounds.
void summarise_points(std::vector<LoggpPoint>& points, const LoggpOptions& options);

/// The analysis alone for points already summarised: detection unless `detect_changes` is
/// false (then result.changes and result.switches are kept), the seeds' estimators per range,
/// the LogGPS view. No intervals (see bootstrap_intervals).
void analyse_loggp(LoggpResult& result, const LoggpOptions& options, bool detect_changes);

/// Bootstrap intervals for every range parameter and L: the rounds of each size resampled
/// `options.bootstrap` times (seeded by result.seed), the analysis repeated with the switches
/// kept; then the verdict of every range.
void bootstrap_intervals(LoggpResult& result, const LoggpOptions& options);

/// The measured curves as the calibration reads them.
std::vector<model::PrttCurvePoint> curve_points(const std::vector<LoggpPoint>& points,
                                                std::uint32_t n);

/// Where one parameter set per range misses the curves (a cell off by more than
/// kSelfCheckTarget and outside its 95 % interval) and two sets reproduce them better than noise
/// would (detail::two_sets_needed), splits the range at the sweep size that fits best, at least
/// two fitted sizes on each side, up to three times (LoggpSwitch::per_byte_change); then the
/// analysis again. Returns how many it added.
std::size_t add_per_byte_changes(LoggpResult& result, const LoggpOptions& options);

/// Fits the calibrated set (LogGPS structure on the seeds' ranges, then each range's LogGP view
/// with L kept), its bootstrap intervals (`options.bootstrap` resamples of the rounds, at most
/// 60), what is not identifiable, and both sets' curve checks; sets result.link to it and the
/// verdicts of the ranges from its intervals.
void calibrate_loggp(LoggpResult& result, const LoggpOptions& options);

/// Which points the fits and the self-check read: those with interleaved rounds, and every
/// point of a range that has none (the bisection alone measured it, or points built by hand).
std::vector<bool> read_by_fits(const std::vector<LoggpPoint>& points);

/// Each point's rounds cut back to its interleaved ones (LoggpPoint::interleaved_rounds; a
/// refined point keeps the bisection's); returns how many rounds were set aside.
std::size_t keep_interleaved_rounds(std::vector<LoggpPoint>& points);

/// How `link` reproduces the points' curves (its summaries over the points the fits read).
CurveCheck check_curves(const model::LinkParams& link, const std::vector<LoggpPoint>& points,
                        std::uint32_t n);

}  // namespace commgauge::measure
