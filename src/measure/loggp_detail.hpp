#pragma once
// Pieces of the loggp method shared by its measuring half (loggp.cpp) and its analysis half
// (loggp_analysis.cpp). Not a public interface.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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

/// Whether the late receive o_r(s) steps up at points[c] (the points [first, last] around a
/// candidate, c the right side's first): the 95 % intervals of points[c] and of points[c + 1]
/// (if within last) lie wholly above the top of points[c - 1]'s, carried on along the left
/// side's o_r slope. Eq. (5)'s max bends PRTT(n,0,s) and PRTT(n,d,s) where g + (s-1)G
/// overtakes o; o_r(s) has no such max, so a step in it is a change of parameters, not a bend.
bool late_receive_step(const std::vector<LoggpPoint>& points, std::size_t first, std::size_t c,
                       std::size_t last);

/// Why the bisection of a switch the probe called rendezvous between lo (eager) and hi does not
/// support a hand-shake there, or "" if it does. `first_probe_separated`: the probe's first
/// series (not only the curves) saw the sides apart; `curves_saw_it`: the sweep's curves read
/// a hand-shake there too (two methods agree); otherwise a verdict that ran trials must confirm
/// it.
std::string hand_shake_unsupported(const LoggpSwitch& sw, std::uint64_t lo, std::uint64_t hi,
                                   bool first_probe_separated, bool curves_saw_it);

/// Whether two parameter sets reproduce `points` curve points better than one by more than noise
/// would give the second set's `extra` parameters (6: o_s, o_r, O_s, O_r, g, G; 3 for a level
/// change, whose per-byte costs are the other side's): twice their number in units of the
/// two-set fit's chi-square per degree of freedom (an F-test in spirit), and at least 0.25 (a
/// 2.5 % relative residual at one point; standard errors are at least 5 % of a value in the fit)
/// where the fit is exact.
bool two_sets_needed(double chi_one, double chi_two, std::size_t points, std::size_t extra = 6);

/// Whether points[i] starts a range whose late receive pays a hand-shake (see loggp.hpp).
bool late_receive_jump(const std::vector<LoggpPoint>& points, std::size_t i);

/// The rendezvous test on late-receive costs and one-way times (PRTT(1,0,s)/2) below and above
/// a switch (medians, us), with `margin` for the noise. A late rendezvous receive answers the
/// request and then waits for the whole transfer (seed 004's T5 + T1 + T2 + T3); an eager one
/// only copies out data that has arrived (T3). So either the late receive jumps by more than the
/// one-way time below (the hand-shake dominates, as over shared memory), or its share of the
/// one-way time rises by more than 0.4 to above 0.6 from below 1 (the transfer dominates: now
/// the late receive holds nearly all of the one-way time, where it held only the copy-out).
bool hand_shake_jump(double late_below_us, double late_above_us, double one_way_below_us,
                     double one_way_above_us, double margin_us);

/// The late-receiver probe at one size: late receives and, interleaved with them, PRTT(1,0,s)
/// halves (the one-way time the late receive is compared with), both in microseconds.
struct ProbeSample {
  std::vector<double> late, one_way;
  std::uint32_t invalid = 0;  ///< late receives left out (the sender was late)
  /// Of the valid late receives, those whose send lasted at least half the receiver's delay:
  /// the send waited for the receive to be posted.
  std::uint32_t sender_waited = 0;
  void add(const ProbeSample& other);
};

/// Whether the late receive at `above` pays a hand-shake that it does not pay at `below`.
/// Each side is read at its low end (stats::floor_of): load only ever adds time to a trial, so
/// the low end is the protocol's cost; the median is not: on this 2-core machine with both
/// cores kept busy, a quarter to a half of the late receives were lifted, and the eager side's
/// median reached the rendezvous side's low end (docs/loggp.md, "The probe under load").
struct Separation {
  bool separated = false;    ///< significant (p_value <= alpha) and a hand-shake's size
  bool clearly_not = false;  ///< the low ends differ by less than a quarter of a one-way time
                             ///< and by less than a factor of 2
  double threshold = 0;      ///< between the low ends (their geometric mean)
  double below_us = 0, above_us = 0;  ///< the low end of each side's late receives
  double p_value = 1;                 ///< stats::precedence_p_value(below, above)
  bool jump = false;                  ///< the low ends differ by a hand-shake (hand_shake_jump)
  bool conclusive = false;            ///< at least 3 valid late receives on each side
  bool sender_free = false;           ///< `above`'s sends did not wait (sender_never_waited)
};

/// Whether the sends of a probed size returned before the late receive was posted: at least
/// kSenderFreeTrials valid trials, and at most a quarter of them with a send that waited. Such a
/// size pays no hand-shake, whatever its late receive does (a rendezvous send is synchronous).
/// A quarter leaves room for an eager send descheduled within itself under load; a rendezvous
/// send cannot return early, so its valid trials are all "waited" but for a reply delayed more
/// than d/2.
inline constexpr std::size_t kSenderFreeTrials = 5;
bool sender_never_waited(const ProbeSample& sample);

/// Whether `waited` of `trials` valid late receives say the sends wait for the receiver: at
/// least kSenderFreeTrials, three quarters of them or more (a send descheduled within itself
/// under load may lift a few eager trials; an acknowledged send cannot return early).
bool sends_wait(std::uint32_t waited, std::uint32_t trials);

/// Whether the sends change their transfer mechanism between two probed sizes: those of `below`
/// returned before the late receive was posted (sender_never_waited), those of `above` waited
/// for it (sends_wait). Seed 001's Tm: an eager message (T) against one whose send completes on
/// the receiver's acknowledgement (TA) or hand-shake. No parameter set of one range can give
/// both, and the difference is a millisecond (the receiver's delay) against a microsecond,
/// which load does not blur (vader's inline-send step at 257 B: 0 of 100 against 100 of 100).
bool sends_start_waiting(const ProbeSample& below, const ProbeSample& above);

/// Whether a candidate switch is an eager change of transfer mechanism (T -> TA) rather than a
/// rendezvous: the probe found no hand-shake (`found` not separated) and the sends start waiting
/// there (sends_start_waiting), and either the probe is sure there is none (`conclusive`), or
/// the curves did not read a hand-shake, or the probe's late receives rose by less than one
/// (`found.jump` false: an acknowledgement, not a hand-shake, against the curves' reading).
bool transfer_change_not_rendezvous(const Separation& found, bool sends_change, bool conclusive,
                                    bool curves_read_rendezvous);

/// The probe's verdict on two sides measured alternately: `above` must lie above `below`
/// (stats::precedence_p_value at most `alpha`) by a hand-shake (hand_shake_jump between the
/// low ends, against the least one-way times). Fewer than 3 valid late receives on a side is
/// inconclusive (neither separated nor clearly not). Where `above`'s sender never waited, the
/// sides are clearly not separated.
Separation separation(const ProbeSample& below, const ProbeSample& above, double alpha);

/// Whether the probe's "no hand-shake" (Separation::clearly_not) stands against the sweep: its
/// low end below the switch may not lie above the late receive the sweep measured at that size
/// (o_r(s) of `below`, a median over rounds) by more than a quarter of the one-way time there.
/// Under two busy loops a whole attempt's eager late receives at 4040 B were once lifted to
/// 4.49 us where the sweep had 1.67 us: lifted to the rendezvous side's 3.61 us, the two sides
/// passed for "no hand-shake" and vader's switch for eager.
bool no_hand_shake(const Separation& s, const LoggpPoint& below);

/// Whether the rendezvous end's late receives lie above the eager end's (the precedence test
/// at `alpha`): a bracket whose ends do not is no longer a bracket of the switch.
bool ends_apart(const ProbeSample& eager_end, const ProbeSample& rendezvous_end, double alpha);

/// Whether the late receive below candidate switch k already pays a hand-shake: a switch below
/// it that is not `dropped` is rendezvous and the probe confirmed it (LogGPS: every size from
/// the first rendezvous switch on). Above such a switch the probe cannot show a new hand-shake
/// (both sides pay one; the late receive grows with the transfer).
bool hand_shake_below(const std::vector<LoggpSwitch>& switches, const std::vector<bool>& dropped,
                      std::size_t k);

/// The switch hand_shake_below finds (the nearest such below k), or none.
std::optional<std::size_t> hand_shake_switch_below(const std::vector<LoggpSwitch>& switches,
                                                   const std::vector<bool>& dropped, std::size_t k);

/// Two hand-shakes in a row, the lower one seen by the probe alone and the upper one by the
/// curves as well: whether the lower one is the weaker reading. Its late receive rose by less
/// than the one-way time below it (`one_way_lower_us`, PRTT(1,0,s)/2 of the sweep), while the
/// upper one's probe rose by more than the one-way time below it and by more than twice the
/// lower's rise (floors, us). Over vader a fragment that is not sent inline costs a late
/// receiver 0.1-0.6 us more from 257 B, which the probe's precedence test at times read as a
/// hand-shake (4 of 100 runs on 2026-12-05), where the real switch above rose by 2.6-11 us.
bool lower_hand_shake_weaker(double lower_below_us, double lower_above_us, double one_way_lower_us,
                             double upper_below_us, double upper_above_us, double one_way_upper_us);

/// How many of `values` lie above `threshold`.
std::size_t count_above(const std::vector<double>& values, double threshold);

/// Bisection's midpoint test on the probe at the bracket's ends and its midpoint, measured
/// alternately. The ends were shown to differ by a hand-shake when the switch was confirmed;
/// the midpoint joins the end it resembles: eager when the rendezvous end lies above it
/// (stats::precedence_p_value at most `alpha`) and its low end lies in the lower half of the
/// gap between the ends' low ends, rendezvous in the mirror case; `between` when it lies
/// clearly above the eager end and below the rendezvous end, in the middle half of the gap (a
/// third level: the curve allows no finer bracket); undecided otherwise (more trials).
enum class Placement : std::uint8_t { undecided, eager, rendezvous, between };
Placement place_midpoint(const ProbeSample& eager_end, const ProbeSample& midpoint,
                         const ProbeSample& rendezvous_end, double alpha);

/// How far point x lies from each side's lines (stats::joint_distance over the four curves, in
/// units of its noise): the points [first, last] split at `split` (the right side's first
/// index), each side's lines fitted without x. {to_left, to_right}.
std::pair<double, double> side_distances(const std::vector<LoggpPoint>& points, std::size_t first,
                                         std::size_t last, std::size_t split, std::size_t x);

/// A point lies on a side's lines within this many noise units (joint distance over the four
/// curves).
inline constexpr double kOnTheLines = 6;

/// A curve bisection's bracket (points[split - 1], points[split]] checked at its ends: an end
/// on the other side's lines (within 6 noise units) and nearer them than its own side's by more
/// than 2 moves the split past it, one way only, while each side keeps 2 points besides the end
/// tested. An end far off both sides (measured in another latency mode) stays. Each end was placed
/// by one comparison when it was a midpoint; a wrong one sends every later step past the switch,
/// and the bracket still ends "exact" (quiet runs put vader's inline-send step, 257 B, at 310, 362
/// or 514 B). Returns the split.
std::size_t settle_bracket(const std::vector<LoggpPoint>& points, std::size_t first,
                           std::size_t last, std::size_t split);

/// Candidates that ended between the same two of `points` measured sizes (two candidates, say
/// the curves' and the probe scan's in neighbouring brackets, whose bisections or moves met at
/// one switch) are one switch: the reading that says most stays (a confirmed one, then a
/// rendezvous one, then the lower), the other is dropped with a note. Candidates outside the
/// sizes are dropped too, and the rest ordered by size, so that every range has a size (two
/// starts at one index leave a range without any).
/// `curve_only`, if given, runs in parallel with `switches`.
void merge_coinciding_switches(std::size_t points, std::vector<std::size_t>& changes,
                               std::vector<LoggpSwitch>& switches, std::vector<bool>* curve_only,
                               std::vector<std::string>& notes);

/// How far a curve bisection's midpoint lies from each side, judged on the rounds in which the
/// bracket's ends and the midpoint were measured together (the last `rounds` rounds of each):
/// per curve (o_s, o_r and G_all per round by eqs. (6)-(7), and PRTT(1,0,s)) the left side
/// predicts the midpoint from the end points[lo]'s median of those rounds along the left side's
/// slope, the right side from points[hi]'s along its slope (slopes through the 3 sweep points
/// nearest the bracket, [first, sweep_lo] and [sweep_hi, last]); distances in units of the
/// medians' standard errors and the slope's carried across, summed in quadrature over the
/// curves. Values from other rounds would mix the machine's latency modes: this machine moved
/// PRTT(1,0,256) from 1.53 us in the sweep to 0.78-1.09 us for points measured later in the same
/// run. In the same units (the two standard errors' mean per curve): `step`, the distance between
/// the two sides' predictions; `along`, where the midpoint projects onto it (0 at the left side's,
/// 1 at the right side's); `off_step`, the midpoint's distance from the segment between them.
struct StepDistances {
  double to_left = 0, to_right = 0;
  double step = 0, along = 0.5, off_step = 0;
  /// On neither side's lines, and farther from anything between the two sides than they lie
  /// apart: which side is nearer then says nothing about the step (the midpoint's rounds saw
  /// another latency mode: a 9 B midpoint at a third of 8 and 11 B's curves once put vader's
  /// 11 B step at (8, 9] B, "exact"). Midpoints here lay 1.2-3.9 units from their own side and
  /// 4.7-18.7 from the other (the 11 B step, 3 bisections in 40 quiet runs).
  bool off_the_step() const { return std::min(to_left, to_right) > kOnTheLines && off_step > step; }
  /// The two sides' predictions lie apart by at least kOnTheLines: only then does the nearer
  /// side say where the midpoint belongs. Vader's 11 B step is about 2 % of PRTT(1,0,s) in the
  /// machine's fast mode (16 % in the slow one); a step measured there read its sides 5.5 units
  /// apart on 6 rounds each, and its midpoint, 9 B, went right (5.2 against 1.8 units).
  bool sides_apart() const { return step >= kOnTheLines; }
};
/// What a curve bisection does with its midpoint, judged on `d` (after any re-measurement): join
/// the left or the right side; or keep the bracket it has (the midpoint off the step, the sides
/// not apart, or the midpoint on both alike); or, at the first step (`steps_taken` 0), drop the
/// switch where the sides are not apart or the midpoint fits both alike (the split did not show
/// where it was bisected), as the bisection always did for the latter.
enum class StepVerdict { left, right, keep_off_the_step, keep_sides_not_apart, keep_alike, drop };
StepVerdict judge_step(const StepDistances& d, int steps_taken);

StepDistances step_distances(const std::vector<LoggpPoint>& points, std::size_t first,
                             std::size_t sweep_lo, std::size_t sweep_hi, std::size_t last,
                             std::size_t lo, std::size_t mid, std::size_t hi, std::size_t rounds,
                             std::uint32_t n);

/// The curves judged together: PRTT(1,0,s), o_s(s), o_r(s) and G_all(s) with their noise.
std::vector<stats::Curve> curves_of(const std::vector<LoggpPoint>& points);
std::vector<double> sizes_of(const std::vector<LoggpPoint>& points);

/// Median, interval and noise of one series of per-round values.
PrttStat stat_of(const std::vector<double>& values, double ci_target);

}  // namespace commgauge::measure::detail
