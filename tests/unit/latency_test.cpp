// The latency method of seed 002 and its npp rule, checked on the virtual network (exact
// truth) and against hand-computed values.

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/json_text.hpp"
#include "link_fixtures.hpp"
#include "measure/latency.hpp"
#include "measure/timer.hpp"
#include "net/virtual_network.hpp"
#include "report/latency_report.hpp"

namespace commgauge::measure {
namespace {

using commgauge::testing::loggp_link;
using commgauge::testing::loggps_link;

TEST(Npp, Seed002Example) {
  // res_timing 1 us, round trip 2 us, res_npp 50: npp = 25 (seed 002 §3.3).
  EXPECT_EQ(npp_from_estimate(1.0, 2.0, 50), 25u);
}

TEST(Npp, BelowOneGivesOne) {
  EXPECT_EQ(npp_from_estimate(0.02, 10.0, 50), 1u);  // 0.1 -> max(1, 0.1) = 1
  EXPECT_EQ(npp_from_estimate(0.0, 10.0, 50), 1u);   // the virtual clock
}

TEST(Npp, RoundsToNearestHalfAwayFromZero) {
  EXPECT_EQ(npp_from_estimate(1.0, 4.0, 10), 3u);   // 2.5 -> 3 (Fortran nint)
  EXPECT_EQ(npp_from_estimate(1.0, 4.0, 9), 2u);    // 2.25 -> 2
  EXPECT_EQ(npp_from_estimate(1.0, 4.0, 11), 3u);   // 2.75 -> 3
  EXPECT_EQ(npp_from_estimate(1.0, 1.3, 50), 38u);  // 38.46 -> 38
}

TEST(Rates, MegabytesPerSecondFromMicroseconds) {
  stats::Summary s;
  s.min = 1.2451;  // seed 002 Appendix C: 8 B / 1.2451 us = 6.425 MB/s
  s.median = 2;
  s.mean = 4;
  s.max = 0;
  const Rates r = rates_from(s, 8);
  EXPECT_NEAR(r.from_min, 6.4252, 1e-4);
  EXPECT_DOUBLE_EQ(r.from_median, 4);
  EXPECT_DOUBLE_EQ(r.from_mean, 2);
  EXPECT_DOUBLE_EQ(r.from_max, 0);  // not a positive time
}

LatencyResult run_on_virtual(const model::LinkParams& link, const std::vector<std::uint64_t>& sizes,
                             std::uint64_t npp = 0) {
  net::VirtualNetwork net(link);
  net::VirtualClock clock;
  TimerOptions timer_options;
  timer_options.trials = 1000;
  const TimerCharacterization timer = characterize_timer(clock, timer_options);
  LatencyOptions options;
  options.sizes = sizes;
  options.trials = 40;
  options.npp_trials = 5;
  options.npp = npp;
  LatencyResult result;
  net.run([&](net::Transport& t) {
    auto r = measure_latency(t, options, timer, nullptr);
    if (r) result = *r;
  });
  return result;
}

// Median one-way time equals o_s + kO_s + L + (k-1)G + o_r + kO_r (+ the rendezvous handshake).
void expect_closed_form(const model::LinkParams& link, const std::vector<std::uint64_t>& sizes) {
  const model::CostModel cost(link);
  const LatencyResult r = run_on_virtual(link, sizes);
  ASSERT_EQ(r.points.size(), sizes.size());
  for (const auto& p : r.points) {
    const double expected = model::to_microseconds(cost.blocking_one_way(p.size_bytes));
    EXPECT_NEAR(p.stats.median, expected, 1e-3 * expected) << p.size_bytes << " bytes";
    EXPECT_EQ(p.npp_calculated, 1u);  // the virtual clock has res_timing 0
    // LogGP(S) has no cost for a first message: the hand-shake adds nothing, npp stays 1.
    EXPECT_NEAR(p.handshake_penalty_us, 0, 1e-6) << p.size_bytes << " bytes";
    EXPECT_EQ(p.npp_used, 1u);
    EXPECT_EQ(p.stats.count, 40u);
    EXPECT_EQ(p.filtered.removed, 0u);
  }
}

TEST(LatencyOnVirtualNetwork, PlainLogGP) {
  expect_closed_form(loggp_link(), {0, 1, 8, 1024, 65536});
}

TEST(LatencyOnVirtualNetwork, SendAndReceiveOverheadsDiffer) {
  auto link = loggps_link(model::Progress::independent);
  link.ranges.resize(1);  // eager only, o_s = 1.0 != o_r = 1.4, per-byte overheads
  expect_closed_form(link, {8, 4096, 100000});
}

TEST(LatencyOnVirtualNetwork, RendezvousRangeIncludesHandshake) {
  expect_closed_form(loggps_link(model::Progress::independent), {8, 12288, 12289, 262144});
  expect_closed_form(loggps_link(model::Progress::dependent), {12289, 1048576});
}

TEST(LatencyOnVirtualNetwork, FixedNppIsUsedAndCountersAreExact) {
  const LatencyResult r = run_on_virtual(loggp_link(), {8}, 3);
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].npp_used, 3u);
  EXPECT_EQ(r.points[0].npp_calculated, 1u);
  // npp estimate: 5 loops x 10 ping-pongs and 5 of one (one chunk: with npp given, the source
  // stops the estimate after it) and its stop value; the npp value; trials: 40 x 3 (one batch:
  // the cap is below min_trials) and its stop value.
  EXPECT_EQ(r.counters.messages, 5u * 10 + 5 + 1 + 1 + 40u * 3 + 1);
  EXPECT_EQ(r.counters.bytes, (5u * 10 + 5 + 40u * 3) * 8 + 3 * 8);
}

TEST(LatencyHandshake, PenaltyFromLoopsOfOneAndOfN) {
  // Loops of 10: per ping-pong w + p / 10. Differences single - per of 8 pairs, sorted:
  // 0.16 0.17 0.18 0.18 0.18 0.19 0.20 0.25; n = 8 has its 95 % interval at [x(1), x(8)]
  // (coverage 1 - 2 / 256), so d = 0.16 and p = 0.16 * 10 / 9.
  const std::vector<double> per = {1.02, 1.02, 1.03, 1.01, 1.02, 1.02, 1.04, 1.02};
  const std::vector<double> single = {1.20, 1.22, 1.20, 1.19, 1.18, 1.27, 1.20, 1.21};
  EXPECT_NEAR(handshake_penalty(single, per, 10), 0.16 * 10 / 9, 1e-12);
  EXPECT_EQ(handshake_penalty(single, per, 1), 0.0);  // loops of one cannot tell w from p
  // Differences of either sign: the interval's lower end is negative, no penalty for sure.
  const std::vector<double> mixed = {1.00, 1.05, 1.00, 1.03, 1.00, 1.06, 1.01, 1.02};
  EXPECT_EQ(handshake_penalty(mixed, per, 10), 0.0);
  // 5 pairs have no 95 % interval: no penalty, however large the differences.
  EXPECT_EQ(handshake_penalty(std::span(single).first(5), std::span(per).first(5), 10), 0.0);
}

TEST(LatencyHandshake, ManyPairsTakeTheMedianDifference) {
  // 60 pairs (at least kPairsForPointEstimate): differences 0.01, 0.02, ..., 0.60 around a noisy
  // penalty; their median (0.30 + 0.31) / 2 = 0.305 counts although the 95 % interval's lower
  // end is far lower, so p = 0.305 * 10 / 9.
  std::vector<double> single, per;
  for (int i = 1; i <= 60; ++i) {
    per.push_back(1.0);
    single.push_back(1.0 + 0.01 * ((i * 37) % 60 + 1));  // a permutation of 1..60 hundredths
  }
  EXPECT_NEAR(handshake_penalty(single, per, 10), 0.305 * 10 / 9, 1e-12);
}

TEST(LatencyHandshake, NppSpreadsThePenaltyBelowTheBias) {
  // p / (npp w) <= b: 0.2 / (npp 1.0) <= 0.005 from npp = 40 on; 0.2 / 0.9 / 0.005 = 44.4 -> 45.
  EXPECT_EQ(npp_for_handshake_bias(0.2, 1.0, 0.005), 40u);
  EXPECT_EQ(npp_for_handshake_bias(0.2, 0.9, 0.005), 45u);
  EXPECT_EQ(npp_for_handshake_bias(0.001, 1.0, 0.005), 1u);  // already below the bias
  EXPECT_EQ(npp_for_handshake_bias(0.2, 1.0, 0.0), 1u);      // 0: seed 002's npp alone
  EXPECT_EQ(npp_for_handshake_bias(0.0, 1.0, 0.005), 1u);
  EXPECT_EQ(npp_for_handshake_bias(100, 1.0, 0.005), kMaxNppForBias);
}

TEST(LatencyOnVirtualNetwork, ExactTimesStopAtTheFewestTrials) {
  // Every trial equal: the median's interval collapses, so each size stops at min_trials.
  net::VirtualNetwork net(loggp_link());
  net::VirtualClock clock;
  const TimerCharacterization timer = characterize_timer(clock, TimerOptions{1000});
  LatencyOptions options;
  options.sizes = {8, 4096};
  options.min_trials = 60;
  LatencyResult r;
  net.run([&](net::Transport& t) {
    if (auto x = measure_latency(t, options, timer, nullptr)) r = std::move(*x);
  });
  for (const auto& p : r.points) {
    EXPECT_EQ(p.stats.count, 60u);
    EXPECT_TRUE(p.reached_target);
    EXPECT_LT(p.median_rse, 1e-9);
    EXPECT_DOUBLE_EQ(p.p50_us, p.stats.median);
    EXPECT_DOUBLE_EQ(p.p99_us, p.stats.max);
  }
}

TEST(LatencyOptions, RejectBadValues) {
  LatencyOptions o;
  o.trials = 0;
  EXPECT_THROW(o.validate(), InputError);
  o = {};
  o.sizes.clear();
  EXPECT_THROW(o.validate(), InputError);
  o = {};
  o.cut_coef = 0;
  EXPECT_THROW(o.validate(), InputError);
}

TEST(LatencyOptions, JsonRoundTrip) {
  LatencyOptions o;
  o.sizes = {1, 2, 3};
  o.trials = 17;
  o.npp = 4;
  const LatencyOptions back = nlohmann::json(o).get<LatencyOptions>();
  EXPECT_EQ(back.sizes, o.sizes);
  EXPECT_EQ(back.trials, 17u);
  EXPECT_EQ(back.npp, 4u);
}

// A clock that replays scripted readings.
class ScriptedClock final : public net::Clock {
 public:
  explicit ScriptedClock(std::vector<double> readings) : readings_(std::move(readings)) {}
  double now_us() const override { return readings_[next_++ % readings_.size()]; }
  std::string name() const override { return "scripted"; }

 private:
  std::vector<double> readings_;
  mutable std::size_t next_ = 0;
};

TEST(Timer, ResolutionAndOverheadFromScriptedPairs) {
  // Pairs: (0, 0) -> 0; (1, 2) -> 1; (5, 5.25) -> 0.25; (7, 6.5) -> -0.5 (stepped back).
  ScriptedClock clock({0, 0, 1, 2, 5, 5.25, 7, 6.5});
  TimerOptions o;
  o.trials = 4;
  const TimerCharacterization t = characterize_timer(clock, o);
  EXPECT_DOUBLE_EQ(t.res_timing_us, 0.25);  // minimum positive difference
  EXPECT_DOUBLE_EQ(t.min_ov_us, 0.0);       // minimum non-negative difference
  EXPECT_EQ(t.negative, 1u);
  EXPECT_DOUBLE_EQ(t.summary.max, 1.0);
  EXPECT_DOUBLE_EQ(t.summary.median, 0.125);
}

TEST(Timer, AllZeroDifferencesGiveZeroResolution) {
  net::VirtualClock clock;
  TimerOptions o;
  o.trials = 100;
  const TimerCharacterization t = characterize_timer(clock, o);
  EXPECT_EQ(t.res_timing_us, 0.0);  // seed 002: no positive time -> res_timing = 0
  EXPECT_EQ(t.min_ov_us, 0.0);
  EXPECT_EQ(t.clock, "virtual");
}

TEST(Timer, SteadyClockHasPositiveResolution) {
  net::SteadyClock clock;
  TimerOptions o;
  o.trials = 100000;
  const TimerCharacterization t = characterize_timer(clock, o);
  EXPECT_GT(t.res_timing_us, 0.0);
  EXPECT_LE(t.min_ov_us, t.summary.median);
  EXPECT_EQ(t.negative, 0u);  // steady_clock never steps back
}

TEST(LatencyJson, TextMadeOneSizeAtATimeIsTheWholeDocumentsText) {
  LatencyResult r = run_on_virtual(loggp_link(), {0, 8, 1024, 65536});
  ASSERT_EQ(r.points.size(), 4u);
  const LatencyOptions options;
  const TimerCharacterization timer;
  const nlohmann::json context = {{"transport", "virtual"}, {"note", "a \"results\": [] inside"}};
  auto expect_same = [&] {
    const std::string whole = json_text(report::latency_json(r, options, timer, context), 2) + "\n";
    EXPECT_EQ(report::latency_json_text(r, options, timer, context), whole);
  };
  expect_same();
  r.interrupted = "the peer died";  // a key after "results"
  expect_same();
  r.points.resize(1);
  expect_same();
  r.points.clear();
  expect_same();
}

}  // namespace
}  // namespace commgauge::measure
