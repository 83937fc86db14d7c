// The LogGP(S) assessment against the virtual network, whose parameters are the known truth.

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "link_fixtures.hpp"
#include "measure/loggp.hpp"
#include "measure/loggp_detail.hpp"
#include "model/models.hpp"
#include "net/virtual_network.hpp"
#include "profile/link_params_json.hpp"

namespace commgauge::measure {
namespace {

using commgauge::testing::loggp_link;
using commgauge::testing::loggps_link;

LoggpResult run(const model::LinkParams& link, LoggpOptions o = {}) {
  net::VirtualNetwork net(link);
  LoggpResult result;
  net.run([&](net::Transport& t) {
    auto r = measure_loggp(t, o, nullptr);
    if (r) result = std::move(*r);
  });
  return result;
}

void expect_rel(double got, double want, double tol, const char* what) {
  EXPECT_NEAR(got, want, tol * std::abs(want)) << what;
}

TEST(LoggpOnVirtualNetwork, RecoversPlainLogGP) {
  const double L = 5, o = 1.5, g = 4, G = 0.001;
  const LoggpResult r = run(loggp_link(L, o, g, G));
  ASSERT_EQ(r.ranges.size(), 1u);
  const auto& p = r.ranges[0].params;
  expect_rel(p.send_overhead_us, o, 0.01, "o_s");
  expect_rel(p.recv_overhead_us, o, 0.01, "o_r");
  expect_rel(p.gap_per_byte_us, G, 0.01, "G");
  expect_rel(p.gap_us, g, 0.02, "g");
  EXPECT_TRUE(r.ranges[0].g_identifiable);
  EXPECT_FALSE(p.rendezvous);
  EXPECT_NEAR(r.link.latency_us, L, 1e-6);
  EXPECT_NEAR(r.eel_us, L + 2 * o, 1e-6);  // PRTT(1,0,1)/2
  EXPECT_LT(r.seed_check.max_abs[1], 1e-9);
  EXPECT_LT(r.calibrated_check.max_abs_all, 1e-4);
  expect_rel(r.link.ranges[0].send_overhead_us, o, 0.001, "calibrated o_s");
  expect_rel(r.link.ranges[0].gap_per_byte_us, G, 0.001, "calibrated G");
}

TEST(LoggpOnVirtualNetwork, SeparatesSendAndReceiveOverheads) {
  auto link = loggps_link(model::Progress::independent);
  link.ranges.resize(1);  // eager: o_s 1.0, o_r 1.4, O_s 0.0002, O_r 0.0003, g 2, G 0.0008
  const LoggpResult r = run(link);
  ASSERT_EQ(r.ranges.size(), 1u);
  const auto& p = r.ranges[0].params;
  expect_rel(p.send_overhead_us, 1.0, 0.01, "o_s");
  expect_rel(p.recv_overhead_us, 1.4, 0.01, "o_r");
  expect_rel(p.send_overhead_per_byte_us, 0.0002, 0.01, "O_s");
  expect_rel(p.recv_overhead_per_byte_us, 0.0003, 0.01, "O_r");
  expect_rel(p.gap_per_byte_us, 0.0008, 0.01, "G");
  expect_rel(p.gap_us, 2.0, 0.02, "g");
}

TEST(LoggpOnVirtualNetwork, FindsAProtocolChangeAndFitsEachRange) {
  // Eager to eager at 12289 B: g, G and the overheads all change (seed 000 Table 2's switch).
  auto link = loggps_link(model::Progress::independent);
  link.ranges[1].rendezvous = false;
  link.ranges[1].gap_us = 9.0;
  link.ranges[1].gap_per_byte_us = 0.0005;
  const LoggpResult r = run(link);
  ASSERT_EQ(r.ranges.size(), 2u);
  // Within one sweep step: the refined bracket contains the switch and is within 3 %.
  // Bisected to one byte: the midpoint joins the side whose lines it fits (exact data).
  const auto& right = r.ranges[1];
  EXPECT_EQ(right.from_bytes, 12289u);
  ASSERT_EQ(r.switches.size(), 1u);
  EXPECT_TRUE(r.switches[0].exact);
  EXPECT_FALSE(r.switches[0].rendezvous);
  const auto& p0 = r.ranges[0].params;
  const auto& p1 = r.ranges[1].params;
  expect_rel(p0.gap_us, 2.0, 0.02, "g0");
  expect_rel(p0.gap_per_byte_us, 0.0008, 0.01, "G0");
  expect_rel(p1.gap_us, 9.0, 0.02, "g1");
  expect_rel(p1.gap_per_byte_us, 0.0005, 0.01, "G1");
  expect_rel(p1.send_overhead_us, 2.5, 0.01, "o_s1");
  expect_rel(p1.recv_overhead_us, 2.0, 0.01, "o_r1");
  EXPECT_FALSE(p1.rendezvous);
  EXPECT_EQ(r.short_eager_bytes, right.from_bytes);  // LogGPS s
  EXPECT_FALSE(r.rendezvous_bytes.has_value());
}

TEST(LoggpOnVirtualNetwork, RendezvousRangeIsMarkedAndNetOfTheHandshake) {
  const auto link = loggps_link(model::Progress::dependent);
  const LoggpResult r = run(link);
  ASSERT_EQ(r.ranges.size(), 2u);
  const auto& rv = r.ranges[1];
  EXPECT_TRUE(rv.params.rendezvous);
  EXPECT_EQ(rv.protocol, "rendezvous");
  // The late-receiver probe bisects the hand-shake's jump to the byte.
  EXPECT_EQ(rv.from_bytes, 12289u);
  ASSERT_EQ(r.switches.size(), 1u);
  EXPECT_TRUE(r.switches[0].rendezvous);
  EXPECT_TRUE(r.switches[0].exact);
  EXPECT_EQ(r.switches[0].confirmations, r.switches[0].confirmation_trials);
  EXPECT_EQ(r.rendezvous_bytes, rv.from_bytes);  // LogGPS S
  expect_rel(rv.params.send_overhead_us, 2.5, 0.01, "o_s");
  expect_rel(rv.params.recv_overhead_us, 2.0, 0.01, "o_r");
  expect_rel(rv.params.send_overhead_per_byte_us, 0.0001, 0.01, "O_s");
  expect_rel(rv.params.gap_per_byte_us + rv.params.recv_overhead_per_byte_us, 0.0009, 0.01,
             "G + O_r");
  // Both sets reproduce the measured PRTT curves (the calibrated one exactly here).
  EXPECT_LT(r.seed_check.max_abs_all, 0.03);
  EXPECT_LT(r.calibrated_check.max_abs_all, 1e-4);
}

// Held-out ping-pong cells ride in the first rounds: each is the link's one-way time, one value
// per first round, and nothing fitted changes (the virtual network is deterministic, so the
// ranges, switch and calibrated link must equal a run without them).
TEST(LoggpOnVirtualNetwork, HeldOutCellsAreMeasuredBesideTheSweepAndNeverFitted) {
  const auto link = loggps_link(model::Progress::dependent);
  LoggpOptions o;
  o.seed = 11;
  const LoggpResult plain = run(link, o);
  o.heldout_sizes = {3, 700, 12288, 12289, 50000};  // both sides of the rendezvous switch
  const LoggpResult r = run(link, o);
  ASSERT_EQ(r.heldout.size(), o.heldout_sizes.size());
  const auto m = model::make_model("loggps", link);
  for (std::size_t i = 0; i < r.heldout.size(); ++i) {
    EXPECT_EQ(r.heldout[i].bytes, o.heldout_sizes[i]);
    ASSERT_EQ(r.heldout[i].rounds_us.size(), o.min_rounds);
    for (double v : r.heldout[i].rounds_us)
      EXPECT_NEAR(v, model::to_microseconds(m.round_trip(r.heldout[i].bytes)) / 2, 1e-6);
  }
  ASSERT_EQ(r.ranges.size(), plain.ranges.size());
  EXPECT_EQ(r.rendezvous_bytes, plain.rendezvous_bytes);
  // Equal up to rounding (the cells' order, drawn from one generator, differs).
  const auto a = profile::link_params_to_json(r.link), b = profile::link_params_to_json(plain.link);
  EXPECT_NEAR(a["L_us"].get<double>(), b["L_us"].get<double>(), 1e-9);
  ASSERT_EQ(a["ranges"].size(), b["ranges"].size());
  for (std::size_t k = 0; k < a["ranges"].size(); ++k) {
    for (const auto& [field, value] : a["ranges"][k].items()) {
      if (value.is_number_float()) {
        EXPECT_NEAR(value.get<double>(), b["ranges"][k][field].get<double>(),
                    1e-9 * std::max(1.0, std::abs(value.get<double>())))
            << field;
      } else {
        EXPECT_EQ(value, b["ranges"][k][field]) << field;
      }
    }
  }
  EXPECT_GT(r.total_counters.messages, plain.total_counters.messages);
}

TEST(LoggpOnVirtualNetwork, OverheadAboveGapIsNotReportedAsGap) {
  // o = 2 > g + (s-1) G up to s = 15000 (a polling network): below that eq. (7) measures o, so
  // g is marked, not reported as o.
  LoggpOptions small;
  small.max_size = 8192;
  const LoggpResult r = run(loggp_link(0.5, 2.0, 0.5, 0.0001), small);
  ASSERT_GE(r.ranges.size(), 1u);
  EXPECT_FALSE(r.ranges[0].g_identifiable);
  EXPECT_NE(r.ranges[0].params.gap_us, 2.0);
  EXPECT_THAT(r.ranges[0].notes, ::testing::Contains(::testing::HasSubstr("not identifiable")));
  expect_rel(r.ranges[0].params.send_overhead_us, 2.0, 0.01, "o_s");
}

TEST(LoggpOnVirtualNetwork, GapShowingAtTheTopOfTheRangeIsFitted) {
  // The same link swept to 256 KiB: above 15 kB the gap wins eq. (5)'s max, and eq. (7) over
  // the top of the range recovers g and G although most small sizes hide them.
  const LoggpResult r = run(loggp_link(0.5, 2.0, 0.5, 0.0001));
  ASSERT_EQ(r.ranges.size(), 1u);
  EXPECT_TRUE(r.ranges[0].g_identifiable);
  expect_rel(r.ranges[0].params.gap_us, 0.5, 0.01, "g");
  expect_rel(r.ranges[0].params.gap_per_byte_us, 0.0001, 0.01, "G");
}

TEST(LoggpOnVirtualNetwork, ReproducesItsOwnOutputThroughTheJsonDocument) {
  // loggp -> JSON -> --virtual-net -> loggp: PRTTs within 3 % of the first measurement.
  const LoggpResult first = run(loggps_link(model::Progress::independent));
  const model::LinkParams again_link =
      profile::link_params_from_json(profile::link_params_to_json(first.link), "round-trip");
  LoggpOptions o;
  for (const auto& p : first.points)
    o.sizes.push_back(p.bytes);
  o.refine = false;
  const LoggpResult second = run(again_link, o);
  ASSERT_EQ(second.points.size(), first.points.size());
  for (std::size_t i = 0; i < first.points.size(); ++i) {
    const auto& a = first.points[i];
    const auto& b = second.points[i];
    EXPECT_NEAR(b.prtt1.median_us, a.prtt1.median_us, 0.03 * a.prtt1.median_us) << a.bytes;
    EXPECT_NEAR(b.prtt_n0.median_us, a.prtt_n0.median_us, 0.03 * a.prtt_n0.median_us) << a.bytes;
    EXPECT_NEAR(b.prtt_nd.median_us, a.prtt_nd.median_us, 0.03 * a.prtt_nd.median_us) << a.bytes;
  }
}

TEST(LoggpOnVirtualNetwork, DefaultSweepStaysFarBelowTheReferenceTool) {
  // The reference tool's default LogGP run: 460,800 messages and 29 GB. commgauge's default
  // 1 B - 256 KiB sweep must move at most 1/30 of its bytes and still find the switch.
  LoggpOptions o;
  o.seed = 42;
  const LoggpResult r = run(loggps_link(model::Progress::independent), o);
  EXPECT_LE(r.total_counters.bytes, 970'000'000u);
  EXPECT_LE(r.total_counters.messages, 120'000u);
  EXPECT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(r.seed, 42u);
  // Deterministic on the virtual network for one seed: the same counts every time.
  const LoggpResult again = run(loggps_link(model::Progress::independent), o);
  EXPECT_EQ(again.total_counters.messages, r.total_counters.messages);
  EXPECT_EQ(again.total_counters.bytes, r.total_counters.bytes);
}

TEST(LoggpOnVirtualNetwork, OneRangeNetworkShowsNoSwitchWhateverTheOrder) {
  // Ten random cell orders over a one-range network: no false switch in any.
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    LoggpOptions o;
    o.seed = seed;
    o.max_size = 16u << 10;
    const LoggpResult r = run(loggp_link(5, 1.5, 4, 0.001), o);
    EXPECT_EQ(r.ranges.size(), 1u) << "seed " << seed;
    EXPECT_TRUE(r.switches.empty()) << "seed " << seed;
  }
}

TEST(LoggpOnVirtualNetwork, BudgetTooSmallForTheFirstRoundsIsAClearError) {
  LoggpOptions o;
  o.max_bytes = 1'000'000;
  net::VirtualNetwork net(loggp_link());
  EXPECT_THROW(net.run([&](net::Transport& t) { measure_loggp(t, o, nullptr); }), InputError);
}

TEST(LoggpOnVirtualNetwork, EveryParameterHasAnIntervalAndEveryRangeAVerdict) {
  LoggpOptions o;
  o.seed = 7;
  const LoggpResult r = run(loggps_link(model::Progress::dependent), o);
  for (const auto& range : r.ranges) {
    EXPECT_EQ(range.verdict, "stable");
    for (const auto& in : range.intervals) {
      EXPECT_TRUE(in.known);
      EXPECT_LE(in.lower, in.upper);
    }
  }
  // Exact data: every round agrees, so the intervals collapse onto the estimates.
  const auto& p = r.ranges[0].params;
  EXPECT_NEAR(r.ranges[0].intervals[0].lower, p.send_overhead_us, 1e-6);
  EXPECT_NEAR(r.ranges[0].intervals[0].upper, p.send_overhead_us, 1e-6);
}

TEST(LoggpOnVirtualNetwork, Seed000DetectorAlsoFindsAGapChange) {
  auto link = loggps_link(model::Progress::independent);
  link.ranges[1].rendezvous = false;
  link.ranges[1].gap_us = 9.0;
  LoggpOptions o;
  o.detector = "seed000";
  const LoggpResult r = run(link, o);
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_LE(static_cast<double>(r.ranges[1].from_bytes), 12289 * 1.03);
  EXPECT_GE(r.ranges[1].from_bytes, 12289u);
}

TEST(LoggpOptions, BadInput) {
  LoggpOptions o;
  o.min_size = 1024;
  o.max_size = 8;
  EXPECT_THROW(o.validate(), InputError);
  o = {};
  o.n = 1;
  EXPECT_THROW(o.validate(), InputError);
  o = {};
  o.delay_us = -5;
  EXPECT_THROW(o.validate(), InputError);
  o = {};
  o.detector = "magic";
  EXPECT_THROW(o.validate(), InputError);
}

TEST(LoggpOptions, SweepIsGeometric) {
  LoggpOptions o;
  o.min_size = 1;
  o.max_size = 16;
  o.points_per_octave = 1;
  EXPECT_EQ(o.sweep_sizes(), (std::vector<std::uint64_t>{1, 2, 4, 8, 16}));
}

}  // namespace
}  // namespace commgauge::measure
