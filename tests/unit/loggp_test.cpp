// The LogGP(S) assessment against the virtual network, whose parameters are the known truth.

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "failing_transport.hpp"
#include "link_fixtures.hpp"
#include "measure/call_costs.hpp"
#include "measure/loggp.hpp"
#include "measure/loggp_detail.hpp"
#include "model/models.hpp"
#include "net/virtual_network.hpp"
#include "profile/link_params_json.hpp"
#include "report/loggp_report.hpp"

namespace commgauge::measure {
namespace {

using commgauge::testing::FailAt;
using commgauge::testing::FailingTransport;
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

// loggp over `link` with the source's transport failing once progress reports `at`; the
// source's result (the dest's own error, its peer gone, is expected and dropped).
std::optional<LoggpResult> run_failing_at(const model::LinkParams& link, const std::string& at,
                                          LoggpOptions o = {}) {
  net::VirtualNetwork net(link);
  std::optional<LoggpResult> result;
  bool fail = false;
  FailAt sink(at, fail);
  try {
    net.run([&](net::Transport& t) {
      if (t.role() == net::Role::dest) {
        measure_loggp(t, o, nullptr);
        return;
      }
      FailingTransport failing(t, fail);
      result = measure_loggp(failing, o, &sink);
    });
  } catch (const TransportError&) {
  }
  return result;
}

TEST(LoggpInterrupted, AfterCompleteRoundsKeepsTheirAnalysis) {
  const double L = 5, o = 1.5, g = 4, G = 0.001;
  LoggpOptions opts;
  const auto r = run_failing_at(loggp_link(L, o, g, G), "loggp round 3", opts);
  ASSERT_TRUE(r.has_value()) << "nothing kept";
  EXPECT_THAT(r->interrupted, ::testing::HasSubstr("did not respond"));
  EXPECT_EQ(r->rounds, 2u);
  ASSERT_EQ(r->ranges.size(), 1u);
  // The virtual network is exact: two rounds already give the truth.
  expect_rel(r->link.ranges[0].send_overhead_us, o, 0.01, "o_s");
  expect_rel(r->link.ranges[0].gap_per_byte_us, G, 0.01, "G");
  EXPECT_THAT(r->notes, ::testing::Contains(::testing::HasSubstr("interrupted after 2 complete")));
  EXPECT_EQ(r->total_counters.messages, r->source_counters.messages);
}

TEST(LoggpInterrupted, WhileConfirmingKeepsTheRoundsSwitchesUnconfirmed) {
  // Two ranges (eager, then rendezvous from 12289 B): the failure comes while the switch is
  // bisected, after every round.
  const auto link = loggps_link(model::Progress::independent);
  const auto r = run_failing_at(link, "loggp: switch in");
  ASSERT_TRUE(r.has_value()) << "nothing kept";
  EXPECT_FALSE(r->interrupted.empty());
  EXPECT_GE(r->ranges.size(), 2u);
  EXPECT_THAT(r->notes, ::testing::Contains(::testing::HasSubstr("unconfirmed")));
}

TEST(LoggpInterrupted, DuringTheStreamsKeepsTheConfirmedResultWithoutThem) {
  // The failure comes during the streams, after the confirmation: the switch stays confirmed,
  // no stream is kept, and the rendezvous range keeps its calibrated gap.
  const auto link = loggps_link(model::Progress::independent);
  const auto r = run_failing_at(link, "loggp streams, round 2");
  ASSERT_TRUE(r.has_value()) << "nothing kept";
  EXPECT_FALSE(r->interrupted.empty());
  ASSERT_FALSE(r->switches.empty());
  EXPECT_TRUE(r->switches[0].confirmed);
  EXPECT_TRUE(r->streams.empty());
  for (const auto& st : r->calibrated.stream_gap)
    EXPECT_FALSE(st.fitted);
  EXPECT_THAT(r->notes,
              ::testing::Contains(::testing::HasSubstr("interrupted during the streams")));
}

TEST(LoggpInterrupted, DuringTheScanKeepsTheRoundsResult) {
  // The failure comes as the late-receiver probe scans every size, after every round: the
  // result is the rounds' own, the scan's time kept and named.
  const auto link = loggps_link(model::Progress::independent);
  const auto whole = run_failing_at(link, "never reported");
  const auto r = run_failing_at(link, "loggp: scan for hand-shakes");
  ASSERT_TRUE(whole.has_value() && r.has_value()) << "nothing kept";
  EXPECT_TRUE(whole->interrupted.empty());
  EXPECT_FALSE(r->interrupted.empty());
  EXPECT_EQ(r->rounds, whole->rounds);
  EXPECT_GE(r->ranges.size(), 2u);
  EXPECT_THAT(r->notes, ::testing::Contains(
                            ::testing::HasSubstr("interrupted during the scan for hand-shakes")));
  EXPECT_FALSE(r->budget_exhausted) << "the rounds fit the budgets";
  EXPECT_TRUE(std::any_of(r->phase_seconds.begin(), r->phase_seconds.end(),
                          [](const auto& p) { return p.first == "scan"; }));
  EXPECT_LT(r->source_counters.messages, whole->source_counters.messages);
}

TEST(LoggpInterrupted, AfterABudgetCutTheScanSaysOnlyWhatCutTheRounds) {
  // A message budget that the rounds fit but the scan for hand-shakes does not (80 % of what the
  // unbounded run moves; at 70 % the rounds no longer fit): the whole run says a budget cut
  // refinement short. A run that then fails as the confirmation starts keeps the rounds' own
  // result, which no budget cut, and must not say so.
  const auto link = loggps_link(model::Progress::independent);
  LoggpOptions o;
  o.seed = 7;
  o.crossing_exchanges = false;  // their cells would move the first rounds' share past 80 %
  const auto unbounded = run_failing_at(link, "never reported", o);
  ASSERT_TRUE(unbounded.has_value());
  ASSERT_FALSE(unbounded->budget_exhausted);
  o.max_messages = unbounded->total_counters.messages * 8 / 10;
  const auto bounded = run_failing_at(link, "never reported", o);
  ASSERT_TRUE(bounded.has_value());
  ASSERT_TRUE(bounded->budget_exhausted) << "the budget must cut the refinement short";
  ASSERT_EQ(bounded->rounds, unbounded->rounds) << "the rounds must fit the budget";
  // The table names the budgets that cut it, so that the user knows what to raise.
  EXPECT_THAT(report::loggp_table(*bounded, nullptr),
              ::testing::HasSubstr(fmt::format(
                  "\na budget cut extra rounds short: {} messages and {:.3g} GB allowed\n",
                  o.max_messages, static_cast<double>(o.max_bytes) / 1e9)));
  const auto at_scan = run_failing_at(link, "loggp: scan for hand-shakes", o);
  ASSERT_TRUE(at_scan.has_value());
  ASSERT_TRUE(at_scan->interrupted.empty()) << "the budget must cut the scan before it begins";
  const auto cut = run_failing_at(link, "loggp: switch in", o);
  ASSERT_TRUE(cut.has_value()) << "nothing kept";
  EXPECT_FALSE(cut->interrupted.empty());
  EXPECT_EQ(cut->rounds, unbounded->rounds);
  EXPECT_FALSE(cut->budget_exhausted) << "the rounds' own result held no cut refinement";
  EXPECT_THAT(cut->notes, ::testing::Not(::testing::Contains(::testing::HasSubstr("a budget"))));
}

TEST(LoggpInterrupted, BeforeTheFirstCompleteRoundIsAnError) {
  net::VirtualNetwork net(loggp_link(5, 1.5, 4, 0.001));
  bool fail = false;
  FailAt sink("loggp round 1", fail);
  EXPECT_THROW(net.run([&](net::Transport& t) {
    if (t.role() == net::Role::dest) {
      measure_loggp(t, LoggpOptions{}, nullptr);
      return;
    }
    FailingTransport failing(t, fail);
    measure_loggp(failing, LoggpOptions{}, &sink);
  }),
               TransportError);
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

TEST(LoggpOnVirtualNetwork, TheSelfCheckCountsCellsOffTargetAndThoseItsIntervalsResolve) {
  // The exact curves of a virtual link, then two cells lifted by 10 %: one whose interval is
  // narrow (the model lies outside it), one whose interval is wide enough to hold the model.
  LoggpResult r = run(loggp_link(5, 1.5, 4, 0.001));
  ASSERT_EQ(r.calibrated_check.cells_off, 0u);
  const auto fitted = std::count_if(r.points.begin(), r.points.end(),
                                    [](const LoggpPoint& p) { return p.fitted(); });
  EXPECT_EQ(r.calibrated_check.cells, 4 * static_cast<std::size_t>(fitted));
  auto points = r.points;
  PrttStat& narrow = points[1].prtt1;
  narrow.median_us *= 1.1;
  narrow.lower_us = narrow.median_us * 0.99;
  narrow.upper_us = narrow.median_us * 1.01;
  PrttStat& wide = points[2].prtt_n0;
  wide.median_us *= 1.1;
  wide.lower_us = wide.median_us * 0.8;
  wide.upper_us = wide.median_us * 1.2;
  const CurveCheck c = check_curves(r.link, points, LoggpOptions{}.n);
  EXPECT_EQ(c.cells, r.calibrated_check.cells);
  EXPECT_EQ(c.cells_off, 2u);
  EXPECT_EQ(c.cells_off_outside_interval, 1u);
  EXPECT_NEAR(c.max_abs_all, 1 - 1 / 1.1, 1e-3);  // the model is 1/1.1 of the lifted cells
  // The one the measurement resolves is named: PRTT(1,0,s) at the second size, 9.1 % low.
  ASSERT_EQ(c.missed.size(), 1u);
  EXPECT_EQ(c.missed[0].bytes, points[1].bytes);
  EXPECT_EQ(c.missed[0].curve, 0u);
  EXPECT_NEAR(c.missed[0].deviation, 1 / 1.1 - 1, 1e-3);
  // ... in the table and in --json.
  r.points = points;
  r.calibrated_check = c;
  EXPECT_THAT(
      report::loggp_table(r),
      ::testing::HasSubstr(fmt::format("    it is: PRTT(1,0,s) at {} B -9.1 %", points[1].bytes)));
  const auto json =
      report::loggp_json(r, LoggpOptions{}, nlohmann::json::object(), nlohmann::json::object());
  ASSERT_EQ(json["self_check"]["calibrated"]["cells_missed"].size(), 1u);
  EXPECT_EQ(json["self_check"]["calibrated"]["cells_missed"][0]["curve"], "PRTT(1,0,s)");
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

// A receive posted after its data arrived costs o_r + o_u (the unexpected path). On vader the
// server-delay PRTT's receives read o_r 0.04-0.15 us above PRTT(n,0,s)'s cycle in 29 of 30 runs,
// which no single o_r can give (eq. (5): that cycle bounds the receive of an early message).
// This link has it: o_s 0.19, g 0.2, o_r 0.18, o_u 0.15 (o_r(s) below g + (s-1)G at every size,
// so PRTT(n,0,s)'s receives are never late). The calibrated set follows all four
// curves; the late receive's whole cost o_r + o_u is recovered, and PRTT(n,0,s)'s cycle bounds
// o_r (the curves do not split o_r from L further: both enter only the one-way time).
TEST(LoggpOnVirtualNetwork, AReceivePostedLateCostsOuAndTheCalibratedSetFollowsEveryCurve) {
  model::LinkParams link;
  link.latency_us = 0.15;
  model::LinkRange r;
  r.send_overhead_us = 0.19;
  r.recv_overhead_us = 0.18;
  r.gap_us = 0.2;
  r.gap_per_byte_us = 0.0007;
  r.recv_overhead_per_byte_us = 0.0001;
  r.unexpected_recv_us = 0.15;
  link.ranges = {r};
  LoggpOptions o;
  o.max_size = 4096;
  const LoggpResult res = run(link, o);
  ASSERT_EQ(res.link.ranges.size(), 1u);
  const auto& c = res.link.ranges[0];
  std::printf("calibrated: L %.4f o_s %.4f o_r %.4f o_u %.4f g %.4f; self-check %.2e\n",
              res.link.effective_latency_us(), c.send_overhead_us, c.recv_overhead_us,
              c.unexpected_recv_us, c.gap_us, res.calibrated_check.max_abs_all);
  EXPECT_LT(res.calibrated_check.max_abs_all, 1e-3)
      << res.calibrated_check.max_abs[0] << " " << res.calibrated_check.max_abs[1] << " "
      << res.calibrated_check.max_abs[2] << " " << res.calibrated_check.max_abs[3] << " at "
      << res.calibrated_check.worst_size << " O_r " << c.recv_overhead_per_byte_us << " G "
      << c.gap_per_byte_us << " O_s " << c.send_overhead_per_byte_us;
  expect_rel(c.recv_overhead_us + c.unexpected_recv_us, 0.33, 0.01, "o_r + o_u");
  EXPECT_LE(c.recv_overhead_us, 0.2 * 1.01);  // eq. (5): PRTT(n,0,s)'s cycle bounds it
  EXPECT_GE(c.unexpected_recv_us, 0.13 * 0.99);
  expect_rel(c.send_overhead_us, 0.19, 0.01, "o_s");
  // The one-way time at 1 B, which both splits of o_r and L keep.
  expect_rel(c.send_overhead_us + res.link.effective_latency_us() + c.recv_overhead_us +
                 c.recv_overhead_per_byte_us,
             0.19 + 0.15 + 0.18 + 0.0001, 0.01, "one-way");
}

// The eager-to-eager link of the next two tests: ranges 0 and 1 as `link` below gives them.
void expect_the_eager_step(const model::LinkRange& p0, const model::LinkRange& p1) {
  expect_rel(p0.gap_us, 2.0, 0.02, "g0");
  expect_rel(p0.gap_per_byte_us, 0.0008, 0.01, "G0");
  expect_rel(p1.gap_us, 9.0, 0.02, "g1");
  expect_rel(p1.gap_per_byte_us, 0.0005, 0.01, "G1");
  expect_rel(p1.send_overhead_us, 2.5, 0.01, "o_s1");
  expect_rel(p1.recv_overhead_us, 2.0, 0.01, "o_r1");
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
  expect_the_eager_step(r.ranges[0].params, r.ranges[1].params);
  EXPECT_FALSE(r.ranges[1].params.rendezvous);
  EXPECT_EQ(r.short_eager_bytes, right.from_bytes);  // LogGPS s
  EXPECT_FALSE(r.rendezvous_bytes.has_value());
}

// Changes the virtual network's link at the first progress report after the interleaved
// rounds (the scan's): a machine that changes its latency mode between the phases.
class ModeChange final : public ProgressSink {
 public:
  ModeChange(net::VirtualNetwork& net, model::LinkParams later)
      : net_(net), later_(std::move(later)) {}
  void update(std::string_view label, double) override {
    if (!changed_ && label.find("round") == std::string_view::npos) {
      net_.change_link(later_);
      changed_ = true;
    }
  }
  void done() override {}
  bool changed() const { return changed_; }

 private:
  net::VirtualNetwork& net_;
  model::LinkParams later_;
  bool changed_ = false;
};

TEST(LoggpOnVirtualNetwork, AModeChangeAfterTheRoundsDoesNotReachTheFit) {
  // The eager-to-eager switch at 12289 B, bisected with full points after the rounds; by then
  // every per-message time (L, o, g) has grown by 60 %, as this machine's shared memory does
  // between its latency modes. The fits read only the rounds (one state of the machine): each
  // range as it was then, the bisection's points reported as missed, not fitted.
  auto link = loggps_link(model::Progress::independent);
  link.ranges[1].rendezvous = false;
  link.ranges[1].gap_us = 9.0;
  link.ranges[1].gap_per_byte_us = 0.0005;
  auto slower = link;
  slower.latency_us *= 1.6;
  for (auto& r : slower.ranges) {
    r.send_overhead_us *= 1.6;
    r.recv_overhead_us *= 1.6;
    r.gap_us *= 1.6;
  }
  net::VirtualNetwork net(link);
  ModeChange sink(net, slower);
  LoggpResult r;
  net.run([&](net::Transport& t) {
    auto got = measure_loggp(t, LoggpOptions{}, t.role() == net::Role::source ? &sink : nullptr);
    if (got) r = std::move(*got);
  });
  ASSERT_TRUE(sink.changed());
  ASSERT_EQ(r.ranges.size(), 2u);
  ASSERT_EQ(r.switches.size(), 1u);
  // The switch lies within the sweep's bracket (11585, 16384] B; the bisection, measured in
  // the other mode, may place it anywhere in there.
  EXPECT_GT(r.ranges[1].from_bytes, 11585u);
  EXPECT_LE(r.ranges[1].from_bytes, 16384u);
  const auto unfitted = std::count_if(r.points.begin(), r.points.end(),
                                      [](const LoggpPoint& p) { return !p.fitted(); });
  EXPECT_GT(unfitted, 0);
  EXPECT_EQ(r.calibrated_check.unfitted, static_cast<std::size_t>(unfitted));
  // The rounds' curves are reproduced exactly, the later points are 20 % and more off.
  EXPECT_LT(r.calibrated_check.max_abs_all, 1e-4);
  EXPECT_GT(r.calibrated_check.max_abs_unfitted, 0.2);
  const auto& p0 = r.link.ranges[0];
  expect_rel(r.link.effective_latency_us() + p0.send_overhead_us + p0.recv_overhead_us,
             3.0 + 1.0 + 1.4, 0.01, "o_s + L + o_r");
  expect_the_eager_step(p0, r.link.ranges[1]);
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
  // A link billed by the byte stays so, although both ranges span several pages and the
  // calibrated set may bill by pages.
  LoggpOptions by_pages;
  by_pages.page_bytes = net::kPageBytes;
  for (const auto& range : run(link, by_pages).link.ranges)
    EXPECT_EQ(range.page_bytes, 0u);
}

// A rendezvous range whose per-byte costs are billed by whole pages (as vader's single copy
// maps the sender's buffer page by page): its curves are a staircase, which the calibrated set,
// allowed to (--bill-by-pages), bills by pages of the buffers' 4 KiB and then reproduces exactly;
// the eager range, by the byte on three page counts, stays by the byte. By default the same
// curves are fitted with a line and missed. (The rendezvous switch is the probe's; without noise
// the curves' segmentation would read each page's step as a split, which on vader, a step of
// 0.2 us per page, it does not.)
TEST(LoggpOnVirtualNetwork, ARangeBilledByPagesIsFoundAndReproduced) {
  auto link = loggps_link(model::Progress::dependent);
  link.ranges[1].page_bytes = 4096;
  LoggpOptions by_pages;
  by_pages.page_bytes = net::kPageBytes;
  by_pages.detector = "none";
  const LoggpResult r = run(link, by_pages);
  ASSERT_EQ(r.ranges.size(), 2u) << ::testing::PrintToString(r.notes);
  EXPECT_EQ(r.ranges[1].from_bytes, 12289u);
  EXPECT_EQ(r.link.ranges[0].page_bytes, 0u);
  EXPECT_EQ(r.link.ranges[1].page_bytes, 4096u);
  EXPECT_THAT(r.ranges[1].notes,
              ::testing::Contains(::testing::HasSubstr("billed by whole pages of 4096 B")));
  EXPECT_LT(r.calibrated_check.max_abs_all, 1e-3);
  EXPECT_EQ(r.calibrated_check.cells_off, 0u);
  const auto& rv = r.link.ranges[1];
  expect_rel(rv.send_overhead_us, 2.5, 0.01, "o_s");
  expect_rel(rv.send_overhead_per_byte_us, 0.0001, 0.01, "O_s");
  expect_rel(rv.gap_per_byte_us + rv.recv_overhead_per_byte_us, 0.0009, 0.01, "G + O_r");
  // In the link-parameter document, as the simulator reads it.
  EXPECT_EQ(profile::link_params_to_json(r.link)["ranges"][1]["page_bytes"], 4096);
  LoggpOptions by_byte;
  by_byte.detector = "none";
  const LoggpResult line = run(link, by_byte);
  for (const auto& range : line.link.ranges)
    EXPECT_EQ(range.page_bytes, 0u);
  EXPECT_GT(line.calibrated_check.max_abs_all, 0.01);  // a line misses a staircase
  EXPECT_GT(line.calibrated_check.max_abs_all, 10 * r.calibrated_check.max_abs_all);
}

// The source's side of a virtual link whose sends start 5 ms late (a sender descheduled by
// load) while `late` is set: every late-receiver trial then outlasts the receiver's delay and
// says nothing.
class LateSender final : public testing::ForwardingTransport {
 public:
  LateSender(net::Transport& t, const bool& late) : ForwardingTransport(t), late_(late) {}
  void send(std::size_t bytes) override {
    if (late_) compute(5000);
    ForwardingTransport::send(bytes);
  }
  net::Request isend(std::size_t bytes) override {
    if (late_) compute(5000);
    return ForwardingTransport::isend(bytes);
  }

 private:
  const bool& late_;
};

// loggp over `link` with a sender that is late while `late` holds (which `sink` sets from the
// progress labels).
LoggpResult measure_with_late_sender(const model::LinkParams& link, const bool& late,
                                     ProgressSink& sink) {
  net::VirtualNetwork net(link);
  LoggpResult r;
  net.run([&](net::Transport& t) {
    if (t.role() == net::Role::dest) {
      measure_loggp(t, {}, nullptr);
      return;
    }
    LateSender sender(t, late);
    auto got = measure_loggp(sender, {}, &sink);
    if (got) r = std::move(*got);
  });
  return r;
}

// Late from the first probe of a switch until it is probed again.
class LateUntilProbedAgain final : public ProgressSink {
 public:
  explicit LateUntilProbedAgain(bool& late) : late_(late) {}
  void update(std::string_view label, double) override {
    if (label.find("loggp: probing the switch") == std::string_view::npos) return;
    late_ = label.find(" again") == std::string_view::npos;
  }
  void done() override {}

 private:
  bool& late_;
};

// A probe that could not tell (every trial of its first series outlasted the receiver's
// delay) is asked once more with fresh trials: the switch is still found rendezvous, to the
// byte, and its record says so.
TEST(LoggpOnVirtualNetwork, AProbeThatCouldNotTellIsAskedAgain) {
  const auto link = loggps_link(model::Progress::dependent);
  bool late = false;
  LateUntilProbedAgain sink(late);
  const LoggpResult r = measure_with_late_sender(link, late, sink);
  ASSERT_EQ(r.switches.size(), 1u);
  const auto& sw = r.switches[0];
  EXPECT_TRUE(sw.rendezvous) << sw.found_by << " / " << sw.verdict;
  EXPECT_TRUE(sw.confirmed) << sw.verdict;
  EXPECT_TRUE(sw.exact) << sw.verdict;
  EXPECT_EQ(sw.first_bytes, 12289u);
  EXPECT_THAT(sw.found_by, ::testing::HasSubstr("the probe was inconclusive (load), asked again"));
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_TRUE(r.ranges[1].params.rendezvous);
}

// Late through the first switch's first probe only; records every probe's label in order.
class LateThroughTheFirstProbe final : public ProgressSink {
 public:
  explicit LateThroughTheFirstProbe(bool& late) : late_(late) {}
  void update(std::string_view label, double) override {
    if (label.find("loggp: probing the switch") == std::string_view::npos) return;
    if (labels.empty() || labels.back() != label) labels.emplace_back(label);
    late_ = labels.size() == 1;
  }
  void done() override {}
  std::vector<std::string> labels;

 private:
  bool& late_;
};

// A second try waits until every candidate had its first: over loggp's default sweep, second
// tries at false eager candidates once spent the message budget before vader's 8 KiB switch
// was probed. An eager step at 1500 B below the rendezvous switch at 12289 B; the eager
// step's first probe says nothing.
TEST(LoggpOnVirtualNetwork, ASecondTryWaitsForEveryFirstTry) {
  auto link = loggps_link(model::Progress::dependent);
  model::LinkRange middle = link.ranges[0];
  middle.from_bytes = 1500;
  middle.send_overhead_us = 1.8;
  middle.gap_per_byte_us = 0.0005;
  link.ranges.insert(link.ranges.begin() + 1, middle);
  bool late = false;
  LateThroughTheFirstProbe sink(late);
  const LoggpResult r = measure_with_late_sender(link, late, sink);
  ASSERT_EQ(sink.labels.size(), 3u) << ::testing::PrintToString(sink.labels);
  EXPECT_THAT(sink.labels[1], ::testing::Not(::testing::HasSubstr("again")));
  EXPECT_EQ(sink.labels[2], sink.labels[0] + " again");
  ASSERT_EQ(r.switches.size(), 2u);
  EXPECT_EQ(r.switches[0].first_bytes, 1500u);
  EXPECT_FALSE(r.switches[0].rendezvous);
  EXPECT_THAT(r.switches[0].found_by,
              ::testing::HasSubstr("the probe was inconclusive (load), asked again"));
  EXPECT_EQ(r.switches[1].first_bytes, 12289u);
  EXPECT_TRUE(r.switches[1].rendezvous);
  EXPECT_TRUE(r.switches[1].exact);
}

// The dest's side of a virtual link whose late receives (the probe's) of `bytes` take `extra_us`
// longer, the first `budget` of them after each "probing the switch" label: the probe's first
// attempt at a bracket ending there sees a hand-shake, which neither the bisection nor the verdict
// sees again.
class HandShakeOnFirstSight final : public testing::ForwardingTransport {
 public:
  HandShakeOnFirstSight(net::Transport& t, const std::atomic<int>& left, std::uint64_t bytes,
                        double extra_us)
      : ForwardingTransport(t),
        left_(const_cast<std::atomic<int>&>(left)),
        bytes_(bytes),
        extra_us_(extra_us) {}
  void compute(double us) override {
    ForwardingTransport::compute(us);
    late_ = true;  // a receive right after the dest's delay is the probe's late receive
  }
  void recv(std::size_t bytes) override {
    ForwardingTransport::recv(bytes);
    const bool late = late_;
    late_ = false;
    if (late && bytes == bytes_ && left_.load() > 0) {
      --left_;
      ForwardingTransport::compute(extra_us_);
    }
  }

 private:
  bool late_ = false;
  std::atomic<int>& left_;
  std::uint64_t bytes_;
  double extra_us_;
};

class ArmAtEachProbe final : public ProgressSink {
 public:
  ArmAtEachProbe(std::atomic<int>& left, int budget) : left_(left), budget_(budget) {}
  void update(std::string_view label, double) override {
    if (label.find("loggp: probing the switch") != std::string_view::npos) left_ = budget_;
  }
  void done() override {}

 private:
  std::atomic<int>& left_;
  int budget_;
};

// An eager step at 1500 B, bracketed (1448, 2048] B by the sweep. At each try, the probe finds
// no hand-shake there, looks next to it and, two brackets up, sees one at (2896, 4096] B in its
// first attempt only (its 10 late receives of 4096 B take 30 us longer), so the hand-shake is
// not confirmed. The curves then decide where they saw the
// step: found at 1500 B, eager. (Before, they were asked at (2896, 4096] B, where they do not
// split, and the step was dropped; over vader so went the 257 B step once in 15 loaded runs.)
TEST(LoggpOnVirtualNetwork, AHandShakeNextToACandidateThatDoesNotHoldLeavesItToTheCurves) {
  auto link = loggps_link(model::Progress::independent);
  link.ranges.resize(1);
  // The sends wait for a late receiver on both sides, as vader's do above 256 B (else the
  // sends' change alone settles the step: SendsThatStartWaitingAreAChangeOfTransferMechanism).
  link.ranges[0].transfer = "TA";
  link.ranges[0].progress = model::Progress::dependent;
  model::LinkRange upper = link.ranges[0];
  upper.from_bytes = 1500;
  upper.send_overhead_us = 1.8;
  upper.gap_per_byte_us = 0.0005;
  upper.recv_overhead_per_byte_us = 0;  // a late receive costs the same at every size there
  // Its acknowledgement costs what the short range's message does (price_acknowledgement).
  model::price_acknowledgement(upper, link.ranges[0]);
  link.ranges.push_back(upper);
  const LoggpOptions o;
  net::VirtualNetwork net(link);
  std::atomic<int> left{0};
  ArmAtEachProbe sink(left, 10);
  LoggpResult r;
  net.run([&](net::Transport& t) {
    if (t.role() == net::Role::dest) {
      HandShakeOnFirstSight dest(t, left, 4096, 30.0);
      measure_loggp(dest, o, nullptr);
      return;
    }
    auto got = measure_loggp(t, o, &sink);
    if (got) r = std::move(*got);
  });
  ASSERT_EQ(r.switches.size(), 1u) << ::testing::PrintToString(r.notes);
  const auto& sw = r.switches[0];
  EXPECT_THAT(sw.found_by, ::testing::HasSubstr("the probe finds the hand-shake in (2896, 4096]"));
  EXPECT_THAT(sw.found_by, ::testing::HasSubstr("in their own bracket (1448, 2048] B"));
  EXPECT_FALSE(sw.rendezvous);
  EXPECT_EQ(sw.first_bytes, 1500u);
  EXPECT_TRUE(sw.exact);
  // Two ranges, and the calibrated set reproduces the rounds' curves.
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_LT(r.calibrated_check.max_abs_all, 1e-3);
}

// vader's inline-send step, as a virtual link: from 257 B the sends complete on the receiver's
// acknowledgement (Tm = TA, priced as loggp reads it) and the overheads barely change.
model::LinkParams vader_step_link() {
  auto link = loggps_link(model::Progress::independent);
  link.ranges.resize(1);
  model::LinkRange upper = link.ranges[0];
  upper.from_bytes = 257;
  upper.send_overhead_us *= 1.05;
  upper.transfer = "TA";
  upper.progress = model::Progress::dependent;
  model::price_acknowledgement(upper, link.ranges[0]);
  link.ranges.push_back(upper);
  return link;
}

// On vader_step_link the probe sees the sends start
// waiting for the late receiver there (0 of n against n of n) and bisects on that alone, to the
// byte; the ranges' mechanisms are told apart, and no other switch is reported.
TEST(LoggpOnVirtualNetwork, SendsThatStartWaitingAreAChangeOfTransferMechanism) {
  const LoggpResult r = run(vader_step_link());
  ASSERT_EQ(r.switches.size(), 1u) << ::testing::PrintToString(r.notes);
  const auto& sw = r.switches[0];
  EXPECT_THAT(sw.found_by, ::testing::HasSubstr("the transfer mechanism changes")) << sw.found_by;
  EXPECT_FALSE(sw.rendezvous);
  EXPECT_TRUE(sw.confirmed) << sw.verdict;
  EXPECT_TRUE(sw.exact) << sw.verdict;
  EXPECT_EQ(sw.first_bytes, 257u);
  EXPECT_EQ(sw.waited_below, 0u);
  EXPECT_EQ(sw.waited_above, sw.late_above);
  ASSERT_FALSE(sw.steps.empty());
  for (const auto& step : sw.steps)
    EXPECT_THAT(step.placement, ::testing::AnyOf("sends free", "sends wait"));
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_FALSE(r.ranges[0].params.acknowledged());
  EXPECT_TRUE(r.ranges[1].params.acknowledged());
}

// In a range whose sends complete on the receiver's acknowledgement (Tm = TA) every blocking
// PRTT waits for the acknowledgement's round trip, T1 + T2 + o'_s + L + o'_r = 2.3 + 0.001k us
// here against a gap of 2 + 0.0008k: PRTT(n,0,s) shows the round trip, not the gap, and the
// one-way time and the round trip both see only O_s + G. The streams of nonblocking sends,
// measured from the switch on, show the gap (the receiver's handling, o'_s + T3 = 1.2 +
// 0.0003k us a message, keeps up, and so do the send calls, T1 = 0.6 + 0.0002k): g comes from
// them, and G with O_s + G kept.
TEST(LoggpOnVirtualNetwork, AnAcknowledgedRangesGapIsFittedToStreams) {
  const model::LinkParams link = [] {
    model::LinkParams l = commgauge::testing::acknowledged_link(model::Progress::dependent);
    l.ranges.resize(2);
    // The acknowledgement priced as loggp reads it: the short range's message.
    l.ranges[0].send_overhead_us = 0.3;
    l.ranges[0].recv_overhead_us = 0.4;
    model::price_acknowledgement(l.ranges[1], l.ranges[0]);
    return l;
  }();
  LoggpOptions o;
  o.seed = 29;
  const LoggpResult r = run(link, o);
  ASSERT_EQ(r.link.ranges.size(), 2u) << ::testing::PrintToString(r.notes);
  ASSERT_TRUE(r.link.ranges[1].acknowledged());
  const auto sweep = o.sweep_sizes();
  EXPECT_EQ(r.streams.size(),
            static_cast<std::size_t>(std::count_if(sweep.begin(), sweep.end(),
                                                   [](std::uint64_t s) { return s >= 257; })));
  ASSERT_EQ(r.calibrated.stream_gap.size(), 2u);
  EXPECT_EQ(r.calibrated.stream_gap[0].sizes, 0u) << "eager, not acknowledged: not fitted";
  const auto& st = r.calibrated.stream_gap[1];
  EXPECT_GE(st.sizes, 3u);
  EXPECT_TRUE(st.fitted) << st.slow << " of " << st.sizes;
  const auto& got = r.link.ranges[1];
  const auto& want = link.ranges[1];
  EXPECT_NEAR(got.gap_us, want.gap_us, 0.02 * want.gap_us);
  EXPECT_NEAR(got.gap_per_byte_us, want.gap_per_byte_us, 0.02 * want.gap_per_byte_us);
  EXPECT_NEAR(got.gap_per_byte_us + got.send_overhead_per_byte_us,
              want.gap_per_byte_us + want.send_overhead_per_byte_us, 0.02 * 0.001);
  EXPECT_LT(got.stream_gap_per_byte_us, 0.02 * want.gap_per_byte_us);
  ASSERT_EQ(r.calibrated.stream_model_us.size(), r.streams.size());
  for (std::size_t i = 0; i < r.streams.size(); ++i) {
    EXPECT_NEAR(r.calibrated.stream_model_us[i], r.streams[i].rounds_us[0],
                0.01 * r.streams[i].rounds_us[0])
        << r.streams[i].bytes;
  }
  EXPECT_LT(r.calibrated_check.max_abs_all, 0.05);
}

// An acknowledged range whose receiver does most of its work before it acknowledges (o'_s =
// 0.9 us) and whose sender little (o_s = 0.1): every PRTT holds T1 + o'_s and T1 + T2 + o'_s
// together, and the calibration, which prices o'_s as the short range's o_s (0.3), leaves the
// rest in o_s (0.59 us here), and in o_u what a late receive's o'_s + T3 + o_u needs. The send
// calls, MPI_Isend timed alone, give T1: o_s and O_s come back within 2 %, o'_s takes what o_s
// gave up and o_u gives it back, every PRTT as before.
TEST(LoggpOnVirtualNetwork, AnAcknowledgedRangesSendOverheadComesFromItsSendCalls) {
  const model::LinkParams link = [] {
    model::LinkParams l = commgauge::testing::acknowledged_link(model::Progress::dependent);
    l.ranges.resize(2);
    l.ranges[0].send_overhead_us = 0.3;
    l.ranges[0].recv_overhead_us = 0.4;
    l.ranges[1].send_overhead_us = 0.1;
    l.ranges[1].control_send_us = 0.9;
    l.ranges[1].control_recv_us = 0.4;
    return l;
  }();
  LoggpOptions o;
  o.seed = 31;
  const LoggpResult r = run(link, o);
  ASSERT_EQ(r.link.ranges.size(), 2u) << ::testing::PrintToString(r.notes);
  ASSERT_TRUE(r.link.ranges[1].acknowledged());
  const auto sweep = o.sweep_sizes();
  EXPECT_EQ(r.send_calls.size(),
            static_cast<std::size_t>(std::count_if(sweep.begin(), sweep.end(),
                                                   [](std::uint64_t s) { return s >= 257; })));
  ASSERT_EQ(r.calibrated.send_call.size(), 2u);
  EXPECT_EQ(r.calibrated.send_call[0].sizes, 0u) << "not acknowledged: not fitted";
  const auto& sc = r.calibrated.send_call[1];
  EXPECT_TRUE(sc.fitted) << sc.prtt_miss_before << " -> " << sc.prtt_miss_after;
  EXPECT_GT(sc.calibrated_o_s_us, 0.3) << "the calibration alone puts o'_s into o_s";
  const auto& got = r.link.ranges[1];
  const auto& want = link.ranges[1];
  EXPECT_NEAR(got.send_overhead_us, want.send_overhead_us, 0.02 * want.send_overhead_us);
  EXPECT_NEAR(got.send_overhead_per_byte_us, want.send_overhead_per_byte_us,
              0.02 * want.send_overhead_per_byte_us);
  // A late receive's handling o'_s + T3 + o_u (here 0.9 + T3) is what the server-delay PRTT
  // shows; how it splits between o'_s and o_u follows how the calibration split T1 + T2.
  EXPECT_NEAR(got.control_send_us + got.unexpected_recv_us, 0.9, 0.02 * 0.9);
  EXPECT_GT(got.control_send_us, 0.3 + 0.5 * (sc.calibrated_o_s_us - got.send_overhead_us));
  ASSERT_TRUE(sc.o_s_interval.known);
  EXPECT_LE(sc.o_s_interval.lower, got.send_overhead_us + 1e-9);
  EXPECT_GE(sc.o_s_interval.upper, got.send_overhead_us - 1e-9);
  ASSERT_EQ(r.calibrated.send_call_model_us.size(), r.send_calls.size());
  for (std::size_t i = 0; i < r.send_calls.size(); ++i) {
    EXPECT_NEAR(r.calibrated.send_call_model_us[i], r.send_calls[i].rounds_us[0],
                0.01 * r.send_calls[i].rounds_us[0])
        << r.send_calls[i].bytes;
  }
  EXPECT_LT(r.calibrated_check.max_abs_all, 0.05);
}

// A candidate settled at its first try while the one below it waited for its second is judged
// again once that one's hand-shake is confirmed: it lies above a hand-shake, and only the
// curves decide there. A rendezvous switch at 12289 B whose first probe says nothing, and a
// second rendezvous range from 98305 B whose late receive is 148 us later (o_r 2 -> 150 us, more
// than the one-way time): the probe alone calls that one a hand-shake too (two rendezvous
// switches before this was judged again).
TEST(LoggpOnVirtualNetwork, ACandidateAboveASecondTrysHandShakeIsJudgedAboveIt) {
  auto link = loggps_link(model::Progress::dependent);
  model::LinkRange upper = link.ranges[1];
  upper.from_bytes = 98305;
  upper.recv_overhead_us = 150.0;
  link.ranges.push_back(upper);
  bool late = false;
  LateThroughTheFirstProbe sink(late);
  const LoggpResult r = measure_with_late_sender(link, late, sink);
  ASSERT_GE(sink.labels.size(), 3u) << ::testing::PrintToString(sink.labels);
  EXPECT_EQ(sink.labels[2], sink.labels[0] + " again");
  ASSERT_EQ(r.switches.size(), 2u);
  EXPECT_EQ(r.switches[0].first_bytes, 12289u);
  EXPECT_TRUE(r.switches[0].rendezvous) << r.switches[0].found_by;
  EXPECT_TRUE(r.switches[0].exact);
  EXPECT_FALSE(r.switches[1].rendezvous) << r.switches[1].found_by;
  EXPECT_THAT(r.switches[1].found_by, ::testing::HasSubstr("above a confirmed rendezvous switch"));
  ASSERT_EQ(r.ranges.size(), 3u);
  EXPECT_NEAR(r.ranges[2].params.recv_overhead_us, 150.0, 1.5);
}

// The source's side of a virtual link whose sends of the first bisection midpoint start 5 ms
// late for its first 8 probe attempts (each sends it 20 times: 10 late receives, 10 ping-pongs),
// from the first probe of a switch on: that midpoint's trials all say nothing while its bracket's
// ends still separate. (A size outside the sweep is a bisection midpoint there.)
class LateMidpoint final : public testing::ForwardingTransport {
 public:
  LateMidpoint(net::Transport& t, const bool& probing, std::vector<std::uint64_t> sweep)
      : ForwardingTransport(t), probing_(probing), sweep_(std::move(sweep)) {}
  void send(std::size_t bytes) override {
    delay(bytes);
    ForwardingTransport::send(bytes);
  }
  net::Request isend(std::size_t bytes) override {
    delay(bytes);
    return ForwardingTransport::isend(bytes);
  }

 private:
  void delay(std::size_t bytes) {
    if (!probing_ || std::find(sweep_.begin(), sweep_.end(), bytes) != sweep_.end()) return;
    if (midpoint_ == 0) midpoint_ = bytes;
    if (bytes == midpoint_ && late_left_ > 0) {
      --late_left_;
      compute(5000);
    }
  }
  const bool& probing_;
  std::vector<std::uint64_t> sweep_;
  std::uint64_t midpoint_ = 0;
  int late_left_ = 8 * 20;
};

class ProbingFrom final : public ProgressSink {
 public:
  explicit ProbingFrom(bool& probing) : probing_(probing) {}
  void update(std::string_view label, double) override {
    if (label.find("loggp: probing the switch") != std::string_view::npos) probing_ = true;
  }
  void done() override {}

 private:
  bool& probing_;
};

// A bisection midpoint the probe cannot place in 8 attempts, between ends that still lie apart,
// gets 8 more with fresh trials instead of stopping the bisection there.
TEST(LoggpOnVirtualNetwork, AnUnplacedMidpointIsProbedAgainWithFreshTrials) {
  const auto link = loggps_link(model::Progress::dependent);
  const LoggpOptions o;
  net::VirtualNetwork net(link);
  LoggpResult r;
  bool probing = false;
  ProbingFrom sink(probing);
  net.run([&](net::Transport& t) {
    if (t.role() == net::Role::dest) {
      measure_loggp(t, o, nullptr);
      return;
    }
    LateMidpoint sender(t, probing, o.sweep_sizes());
    auto got = measure_loggp(sender, o, &sink);
    if (got) r = std::move(*got);
  });
  ASSERT_EQ(r.switches.size(), 1u);
  const auto& sw = r.switches[0];
  EXPECT_TRUE(sw.rendezvous) << sw.found_by << " / " << sw.verdict;
  EXPECT_TRUE(sw.exact) << sw.verdict;
  EXPECT_EQ(sw.first_bytes, 12289u);
  EXPECT_THAT(sw.found_by, ::testing::Not(::testing::HasSubstr("asked again")));
  ASSERT_FALSE(sw.steps.empty());
  // The first pool's 8 attempts and the fresh pool's first, which placed it.
  EXPECT_EQ(sw.steps[0].attempts, 9u);
  EXPECT_TRUE(sw.steps[0].placement == "eager" || sw.steps[0].placement == "rendezvous")
      << sw.steps[0].placement;
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

// o_x + kO_x, what a receive costs more when its message crossed one its receiver had sent the
// same peer, shows only in exchanges (none of the PRTTs has a crossing): fitted per range to the
// exchange cells loggp measures at its sweep's sizes, after the rest. Recovered on eager and
// rendezvous ranges, with a part per byte (the emulated cluster's TCP exchanges) where the link
// has one and none where it has not, and 0 where the link has no crossing cost. In a TA range
// the PRTTs do not separate O_s from G (the sender waits for the ack either way; here G 0.00024
// and O_s 0.00076 us/B against 0.0008 and 0.0002): the exchange, which does, then differs from
// the model by more than the crossing, and the crossing takes up what it can (never below 0).
// Only the range below is checked there.
TEST(LoggpOnVirtualNetwork, AnExchangesCrossingIsFittedAsOxAndOx) {
  struct Case {
    const char* name;
    model::LinkParams link;
    std::vector<double> o_x, O_x;
  };
  const Case cases[] = {
      {"loggps", loggps_link(model::Progress::dependent), {0.3, 0.7}, {0, 0}},
      {"loggps without", loggps_link(model::Progress::dependent), {0, 0}, {0, 0}},
      {"loggps per byte", loggps_link(model::Progress::dependent), {0.3, 0.7}, {0, 0.002}},
      {"acknowledged", vader_step_link(), {0.12, 0.25}, {0, 0}}};
  const std::size_t checked[] = {2, 2, 2, 1};  // ranges whose crossing is recovered
  for (std::size_t ci = 0; ci < std::size(cases); ++ci) {
    const Case& c = cases[ci];
    model::LinkParams link = c.link;
    for (std::size_t k = 0; k < link.ranges.size(); ++k) {
      link.ranges[k].crossing_recv_us = c.o_x[k];
      link.ranges[k].crossing_recv_per_byte_us = c.O_x[k];
    }
    LoggpOptions o;
    o.seed = 17;
    const LoggpResult r = run(link, o);
    ASSERT_EQ(r.link.ranges.size(), link.ranges.size()) << c.name;
    ASSERT_FALSE(r.exchanges.empty());
    // An exchange at every size of the sweep (none is held out here).
    EXPECT_EQ(r.exchanges.size(), o.sweep_sizes().size()) << c.name;
    EXPECT_EQ(r.exchanges.back().bytes, o.max_size) << c.name;
    ASSERT_EQ(r.calibrated.crossing.size(), link.ranges.size());
    for (std::size_t k = 0; k < checked[ci]; ++k) {
      const auto& x = r.calibrated.crossing[k];
      const auto& got = r.link.ranges[k];
      EXPECT_GE(x.sizes, 2u) << c.name << " range " << k;
      EXPECT_NEAR(got.crossing_recv_us, c.o_x[k], 0.01 + 0.02 * c.o_x[k])
          << c.name << " range " << k;
      // The per-byte part within 2 %; where there is none, less than a nanosecond at the
      // largest size.
      if (c.O_x[k] > 0) {
        EXPECT_NEAR(got.crossing_recv_per_byte_us, c.O_x[k], 0.02 * c.O_x[k])
            << c.name << " range " << k;
      } else {
        EXPECT_LT(got.crossing_recv_per_byte_us * static_cast<double>(o.max_size), 1e-3)
            << c.name << " range " << k;
      }
      ASSERT_TRUE(x.interval.known);
      EXPECT_LE(x.interval.lower, got.crossing_recv_us + 1e-9);
      EXPECT_GE(x.interval.upper, got.crossing_recv_us - 1e-9);
      EXPECT_LE(x.per_byte_interval.lower, got.crossing_recv_per_byte_us + 1e-12);
      EXPECT_GE(x.per_byte_interval.upper, got.crossing_recv_per_byte_us - 1e-12);
    }
    // The model's exchange, with the fitted crossing, is the measured one (the virtual
    // network's, to the calibration's precision) wherever the crossing is recovered.
    ASSERT_EQ(r.calibrated.exchange_model_us.size(), r.exchanges.size());
    for (std::size_t i = 0; i < r.exchanges.size(); ++i) {
      if (r.link.range_index(r.exchanges[i].bytes) >= checked[ci]) continue;
      ASSERT_EQ(r.exchanges[i].rounds_us.size(), o.min_rounds);
      EXPECT_NEAR(r.calibrated.exchange_model_us[i], r.exchanges[i].rounds_us[0],
                  0.01 * r.exchanges[i].rounds_us[0])
          << c.name << " " << r.exchanges[i].bytes;
    }
    // The rest of the calibrated set follows its curves as without a crossing.
    EXPECT_LT(r.calibrated_check.max_abs_all, 0.05) << c.name;
  }
}

// A rendezvous range's gap hides from every PRTT (each blocking send waits for its own
// hand-shake; G and O_r enter only as their sum) and shows in the streams of nonblocking sends
// loggp measures at its sweep's sizes above the switch: g and the gap per byte are fitted there
// after the rest.
// Without G_st (the gap's per-byte part beyond G) g, G and O_r come back as they are; with it
// (small enough that PRTT(n,0,s) still waits for the hand-shake, not the gap) the gap per byte
// G + G_st does, while G and G_st alone are not separable (G takes what G + O_r allows).
// The eager range (where PRTT(n,0,s) shows the gap itself) is left as calibrated.
TEST(LoggpOnVirtualNetwork, ARendezvousRangesGapIsFittedToStreams) {
  for (const double truth : {0.0, 0.00015}) {
    const model::LinkParams link = [&] {
      model::LinkParams l = loggps_link(model::Progress::independent);
      l.ranges[1].stream_gap_per_byte_us = truth;
      return l;
    }();
    LoggpOptions o;
    o.seed = 23;
    const LoggpResult r = run(link, o);
    ASSERT_EQ(r.link.ranges.size(), 2u) << truth;
    // Streams only from the rendezvous switch on, where the hand-shake hides the gap.
    const auto sweep = o.sweep_sizes();
    EXPECT_EQ(r.streams.size(),
              static_cast<std::size_t>(std::count_if(sweep.begin(), sweep.end(),
                                                     [](std::uint64_t s) { return s >= 12289; })))
        << truth;
    for (const auto& st : r.streams)
      EXPECT_EQ(st.rounds_us.size(), o.min_rounds) << st.bytes;
    ASSERT_EQ(r.calibrated.stream_gap.size(), 2u);
    EXPECT_EQ(r.calibrated.stream_gap[0].sizes, 0u) << "eager: not fitted";
    EXPECT_EQ(r.link.ranges[0].stream_gap_per_byte_us, 0) << truth;
    const auto& st = r.calibrated.stream_gap[1];
    EXPECT_GE(st.sizes, 3u) << truth;
    EXPECT_EQ(st.slow, st.sizes) << "the calibrated set alone misses every stream";
    const auto& got = r.link.ranges[1];
    const auto& want = link.ranges[1];
    EXPECT_NEAR(got.gap_us, want.gap_us, 0.02 * want.gap_us) << truth;
    const double per_byte = want.gap_per_byte_us + truth;
    EXPECT_NEAR(got.gap_per_byte_us + got.stream_gap_per_byte_us, per_byte, 0.02 * per_byte)
        << truth;
    const double wire = want.gap_per_byte_us + want.recv_overhead_per_byte_us;
    EXPECT_NEAR(got.gap_per_byte_us + got.recv_overhead_per_byte_us, wire, 1e-9) << truth;
    if (truth == 0) {
      EXPECT_NEAR(got.gap_per_byte_us, want.gap_per_byte_us, 0.02 * want.gap_per_byte_us);
      EXPECT_LT(got.stream_gap_per_byte_us, 0.02 * want.gap_per_byte_us);
    }
    ASSERT_TRUE(st.interval.known);
    EXPECT_LE(st.interval.lower, got.stream_gap_per_byte_us + 1e-9);
    EXPECT_GE(st.interval.upper, got.stream_gap_per_byte_us - 1e-9);
    // The model's stream, with the fitted gap, is the measured one in the rendezvous range.
    ASSERT_EQ(r.calibrated.stream_model_us.size(), r.streams.size());
    for (std::size_t i = 0; i < r.streams.size(); ++i) {
      if (r.link.range_index(r.streams[i].bytes) != 1) continue;
      EXPECT_NEAR(r.calibrated.stream_model_us[i], r.streams[i].rounds_us[0],
                  0.01 * r.streams[i].rounds_us[0])
          << truth << " " << r.streams[i].bytes;
    }
    // Every PRTT as before: the streams moved only what the PRTTs cannot see.
    EXPECT_LT(r.calibrated_check.max_abs_all, 0.05) << truth;
  }
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

// A per-byte cost that changes inside a protocol range (a copy routine's threshold, a cache
// level) where the curves' detectors are off (--detector none): the calibrated set of one range
// misses the curves, so the calibration splits the range between the sweep's sizes around the
// change, the protocol stays, and the two sets reproduce every curve.
TEST(LoggpOnVirtualNetwork, APerByteChangeTheOneSetMissesSplitsTheRange) {
  auto link = loggps_link(model::Progress::independent);
  link.ranges.resize(1);
  model::LinkRange slower = link.ranges[0];
  slower.from_bytes = 12289;
  slower.gap_per_byte_us = 0.0016;
  slower.recv_overhead_per_byte_us = 0.0006;
  link.ranges.push_back(slower);
  LoggpOptions o;
  o.detector = "none";
  o.seed = 3;
  const LoggpResult r = run(link, o);
  ASSERT_EQ(r.switches.size(), 1u) << ::testing::PrintToString(r.notes);
  const auto& sw = r.switches[0];
  EXPECT_TRUE(sw.per_byte_change);
  EXPECT_FALSE(sw.rendezvous);
  EXPECT_EQ(sw.below_bytes, 11585u);  // the sweep's sizes around 12289 B
  EXPECT_EQ(sw.first_bytes, 16384u);
  EXPECT_THAT(sw.verdict, ::testing::HasSubstr("not of protocol"));
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(r.ranges[1].protocol, r.ranges[0].protocol);
  EXPECT_FALSE(r.short_eager_bytes.has_value());  // no eager-to-eager protocol change (LogGPS s)
  EXPECT_EQ(r.calibrated_check.cells_off, 0u);
  EXPECT_LT(r.calibrated_check.max_abs_all, 1e-3);
  expect_rel(r.link.ranges[1].gap_per_byte_us + r.link.ranges[1].recv_overhead_per_byte_us,
             0.0016 + 0.0006, 0.01, "upper side's per-byte cost");
  // Listed with the switches as what it is, in the table and in --json.
  const std::string table = report::loggp_table(r);
  EXPECT_THAT(table, ::testing::ContainsRegex("16384 B +per-byte change \\(eager as below\\) +- "));
  const auto json = report::loggp_switches_json(r);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["per_byte_change"], true);
  EXPECT_EQ(json[0]["rendezvous"], false);
  // One range where one set reproduces the curves: nothing is split.
  const LoggpResult plain = run(loggp_link(5, 1.5, 4, 0.001), o);
  EXPECT_TRUE(plain.switches.empty());
  EXPECT_EQ(plain.ranges.size(), 1u);
}

// The source's side of a virtual link whose sends of one size (a curve bisection's first
// midpoint) each start `extra_us` late: that size's curves lie far off both sides' lines.
class SlowSize final : public testing::ForwardingTransport {
 public:
  SlowSize(net::Transport& t, std::uint64_t bytes, double extra_us)
      : ForwardingTransport(t), bytes_(bytes), extra_us_(extra_us) {}
  void send(std::size_t bytes) override {
    if (bytes == bytes_) compute(extra_us_);
    ForwardingTransport::send(bytes);
  }
  net::Request isend(std::size_t bytes) override {
    if (bytes == bytes_) compute(extra_us_);
    return ForwardingTransport::isend(bytes);
  }

 private:
  std::uint64_t bytes_;
  double extra_us_;
};

// A curve bisection's midpoint that lies on neither side's lines, also measured again, stops the
// bisection where it stands: a level step down at 1500 B (o_s 0.5 us and o_r 0.6 us less),
// bracketed (1448, 2048] B by the sweep; the first midpoint, 1748 B, each send 3 us late (as
// vader's 9 B once measured at a third of 8 and 11 B's curves: another latency mode). Nearer
// the higher left side, it once moved the bracket to (1748, 2048] B and the bisection ended
// "exact" at 1749 B; now the switch keeps the sweep's bracket and says why.
TEST(LoggpOnVirtualNetwork, ABisectionMidpointOnNeitherSidesLinesLeavesTheBracket) {
  const auto link = commgauge::testing::leveled_link(1500, -0.5, -0.6);
  LoggpOptions o;
  o.max_size = 8192;
  const auto sweep = o.sweep_sizes();
  ASSERT_TRUE(std::find(sweep.begin(), sweep.end(), 1748u) == sweep.end());
  // Undisturbed: the step, exact.
  const LoggpResult plain = run(link, o);
  ASSERT_EQ(plain.switches.size(), 1u) << ::testing::PrintToString(plain.notes);
  EXPECT_EQ(plain.switches[0].first_bytes, 1500u);
  EXPECT_TRUE(plain.switches[0].exact);
  net::VirtualNetwork net(link);
  LoggpResult r;
  net.run([&](net::Transport& t) {
    if (t.role() == net::Role::dest) {
      measure_loggp(t, o, nullptr);
      return;
    }
    SlowSize source(t, 1748, 3.0);
    auto got = measure_loggp(source, o, nullptr);
    if (got) r = std::move(*got);
  });
  ASSERT_EQ(r.switches.size(), 1u) << ::testing::PrintToString(r.notes);
  const auto& sw = r.switches[0];
  EXPECT_FALSE(sw.rendezvous);
  EXPECT_TRUE(sw.confirmed) << sw.verdict;
  EXPECT_FALSE(sw.exact) << sw.verdict;
  EXPECT_EQ(sw.below_bytes, 1448u) << sw.verdict;
  EXPECT_EQ(sw.first_bytes, 2048u) << sw.verdict;
  EXPECT_THAT(sw.verdict, ::testing::HasSubstr("the midpoint 1748 B lies on neither side's lines"));
  EXPECT_THAT(sw.verdict, ::testing::HasSubstr("measured 2 times more"));
}

// A change of constant costs at the same per-byte costs with a single sweep size above it (the
// sweep ends at 16384 B, the change is at 12289 B: only 16384 B lies above it): two sizes a side
// cannot be had, so the calibration splits with a level change, the upper range's per-byte costs
// those of the range below and its o_s and o_r its own.
TEST(LoggpOnVirtualNetwork, AChangeWithOneSizeOnASideIsALevelChange) {
  const auto link = commgauge::testing::leveled_link(12289, 1.5, 1.5);
  const model::LinkRange& higher = link.ranges[1];
  LoggpOptions o;
  o.detector = "none";
  o.seed = 3;
  o.max_size = 16384;
  const LoggpResult r = run(link, o);
  ASSERT_EQ(r.switches.size(), 1u) << ::testing::PrintToString(r.notes);
  const auto& sw = r.switches[0];
  EXPECT_TRUE(sw.per_byte_change);
  EXPECT_TRUE(sw.level_change);
  EXPECT_EQ(sw.below_bytes, 11585u);
  EXPECT_EQ(sw.first_bytes, 16384u);
  EXPECT_THAT(sw.verdict, ::testing::HasSubstr("constant costs at the same per-byte costs"));
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(r.calibrated_check.cells_off, 0u);
  EXPECT_LT(r.calibrated_check.max_abs_all, 1e-3);
  const auto& lo = r.link.ranges[0];
  const auto& hi = r.link.ranges[1];
  EXPECT_EQ(hi.send_overhead_per_byte_us, lo.send_overhead_per_byte_us);
  EXPECT_EQ(hi.recv_overhead_per_byte_us, lo.recv_overhead_per_byte_us);
  EXPECT_EQ(hi.gap_per_byte_us, lo.gap_per_byte_us);
  // What the curves see of the two ranges at 16384 B: 3 us more in o_s + o_r.
  const double s = 16384;
  expect_rel(
      (hi.send_overhead_us + hi.recv_overhead_us) - (lo.send_overhead_us + lo.recv_overhead_us),
      3.0, 0.02, "the level's step in o_s + o_r");
  expect_rel(hi.send_overhead_us + hi.recv_overhead_us +
                 s * (hi.send_overhead_per_byte_us + hi.recv_overhead_per_byte_us),
             higher.send_overhead_us + higher.recv_overhead_us +
                 s * (higher.send_overhead_per_byte_us + higher.recv_overhead_per_byte_us),
             0.01, "o_s(s) + o_r(s) at the single size");
  // The seeds' estimators take the same per-byte costs for the single size's range.
  EXPECT_EQ(r.seed_link.ranges[1].gap_per_byte_us, r.seed_link.ranges[0].gap_per_byte_us);
  const std::string table = report::loggp_table(r);
  EXPECT_THAT(table, ::testing::ContainsRegex("16384 B +level change \\(eager as below\\) +- "));
  EXPECT_EQ(report::loggp_switches_json(r)[0]["level_change"], true);
}

TEST(LoggpOnVirtualNetwork, BudgetTooSmallForTheFirstRoundsIsAClearError) {
  LoggpOptions o;
  o.max_bytes = 1'000'000;
  net::VirtualNetwork net(loggp_link());
  EXPECT_THROW(net.run([&](net::Transport& t) { measure_loggp(t, o, nullptr); }), InputError);
}

// The collective call's own cost is charged only where its interval is above 0: both parameter
// sets carry the median then, neither does when the interval reaches 0 (a difference of two
// timings that may be nothing), nor when it was not measured.
TEST(CallCosts, ACollectiveCallCostWhoseIntervalReachesZeroIsNotCharged) {
  const auto adopted = [](std::optional<PrttStat> stat) {
    LoggpResult r;
    CallCosts c;
    c.collective_call = stat;
    adopt_call_costs(r, c);
    EXPECT_EQ(r.link.collective_call_us, r.seed_link.collective_call_us);
    return r.link.collective_call_us;
  };
  EXPECT_DOUBLE_EQ(adopted(PrttStat{0.042, 0.031, 0.051}), 0.042);
  EXPECT_EQ(adopted(PrttStat{39.4, 0, 40.0}), 0.0);
  EXPECT_EQ(adopted(std::nullopt), 0.0);
  CallCosts shown, reaching_zero;
  shown.collective_call = PrttStat{0.042, 0.031, 0.051};
  reaching_zero.collective_call = PrttStat{0.01, 0, 0.03};
  EXPECT_TRUE(collective_call_shown(shown));
  EXPECT_FALSE(collective_call_shown(reaching_zero));
  EXPECT_FALSE(collective_call_shown(CallCosts{}));
}

// A first call's extra is its first time less its second, never below 0, in both parameter
// sets; a function whose probe two ranks lost their cores during is not charged at all.
TEST(CallCosts, AFirstCallIsChargedItsFirstLessItsSecondUnlessPreempted) {
  LoggpResult r;
  CallCosts c;
  c.first_calls = {{"MPI_Cart_create", 633.5, 7.5, false},
                   {"MPI_Bcast", 1.0, 2.0, false},
                   {"MPI_Comm_split", 11920.0, 12.0, true}};
  adopt_call_costs(r, c);
  EXPECT_EQ(r.link.first_call_us, r.seed_link.first_call_us);
  EXPECT_EQ(r.link.first_call_us,
            (std::map<std::string, double>{{"MPI_Bcast", 0.0}, {"MPI_Cart_create", 626.0}}));
  LoggpResult untouched;
  adopt_call_costs(untouched, CallCosts{});
  EXPECT_TRUE(untouched.link.first_call_us.empty());
}

// What the first rounds move is what a run refuses to start without: a budget of exactly that
// starts, one a byte (a message) short is refused before anything is measured.
TEST(LoggpOnVirtualNetwork, TheFirstRoundsTrafficIsTheLeastBudgetARunStartsWith) {
  LoggpOptions o;
  o.max_size = 16u << 10;
  o.calibrate = false;
  o.refine = false;
  const Traffic first = first_rounds_traffic(o);
  ASSERT_GT(first.messages, 0);
  ASSERT_GT(first.bytes, 0);
  LoggpOptions exact = o;
  exact.max_messages = static_cast<std::uint64_t>(std::ceil(first.messages));
  exact.max_bytes = static_cast<std::uint64_t>(std::ceil(first.bytes));
  EXPECT_NO_THROW(run(loggp_link(), exact));
  LoggpOptions fewer_bytes = exact;
  fewer_bytes.max_bytes = static_cast<std::uint64_t>(std::floor(first.bytes)) - 1;
  EXPECT_THROW(run(loggp_link(), fewer_bytes), InputError);
  LoggpOptions fewer_messages = exact;
  fewer_messages.max_messages = static_cast<std::uint64_t>(std::floor(first.messages)) - 1;
  EXPECT_THROW(run(loggp_link(), fewer_messages), InputError);
}

// Budgets that follow the sweep: a sweep to 2 MiB gets the default budgets times what its first
// rounds move against the default sweep's, so it starts (the defaults refuse it); a smaller
// sweep keeps the defaults; a budget the caller set is left alone.
TEST(LoggpOnVirtualNetwork, BudgetsNotGivenAreScaledToTheSweep) {
  const LoggpOptions reference;
  LoggpOptions big;
  big.max_size = 2u << 20;
  const Traffic ref = first_rounds_traffic(reference), want = first_rounds_traffic(big);
  ASSERT_GT(want.bytes, static_cast<double>(reference.max_bytes))
      << "the default budget must refuse a 2 MiB sweep for this test to mean anything";
  EXPECT_THROW(run(loggp_link(), big), InputError);
  LoggpOptions scaled = big;
  scale_budgets_to_sweep(scaled, reference, true, true);
  EXPECT_NEAR(static_cast<double>(scaled.max_bytes),
              static_cast<double>(reference.max_bytes) * want.bytes / ref.bytes, 1.0);
  EXPECT_NEAR(static_cast<double>(scaled.max_messages),
              static_cast<double>(reference.max_messages) * want.messages / ref.messages, 1.0);
  scaled.calibrate = false;
  const LoggpResult r = run(loggp_link(), scaled);
  EXPECT_EQ(r.points.back().bytes, 2u << 20);
  EXPECT_GE(r.rounds, reference.min_rounds);

  LoggpOptions only_messages = big;
  only_messages.max_bytes = 123'000'000'000;
  scale_budgets_to_sweep(only_messages, reference, true, false);
  EXPECT_EQ(only_messages.max_bytes, 123'000'000'000u);
  EXPECT_EQ(only_messages.max_messages, scaled.max_messages);

  LoggpOptions small;
  small.max_size = 1024;
  scale_budgets_to_sweep(small, reference, true, true);
  EXPECT_EQ(small.max_bytes, reference.max_bytes);
  EXPECT_EQ(small.max_messages, reference.max_messages);
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

// A run over the rate-limited lab link (tbf 200 Mbit/s, MTU 1500: 23.91 MB/s of TCP goodput)
// while two busy loops kept both cores busy: per size the medians and standard errors of eq. (7)
// G_all, eq. (6) o_s and o_r, and PRTT(1,0,s) with its 95 % interval. o_s's intervals are wide
// (sends blocked on a full socket buffer): at most sizes below the top its median is under G_all
// but not by two standard errors. Counted as hidden, those sizes left eq. (7) two points and the
// ping-pong slope less O_s and O_r (+- 0.002 us/B) read 1/G as 1095 MB/s in CI.
// One size of a recorded run: medians and standard errors of eq. (7) G_all, eq. (6) o_s and o_r,
// and PRTT(1,0,s) with its 95 % interval.
struct RecordedSize {
  std::uint64_t bytes;
  double g_all, g_all_se, o_s, o_s_se, o_r, o_r_se, prtt1, prtt1_lo, prtt1_hi;
};

LoggpResult analyse_recorded(const std::vector<RecordedSize>& table) {
  LoggpResult r;
  for (const auto& row : table) {
    LoggpPoint p;
    p.bytes = row.bytes;
    p.g_all_us = row.g_all;
    p.g_all_noise = row.g_all_se;
    p.o_s_us = row.o_s;
    p.o_s_noise = row.o_s_se;
    p.o_r_us = row.o_r;
    p.o_r_noise = row.o_r_se;
    p.prtt1.median_us = row.prtt1;
    p.prtt1.lower_us = row.prtt1_lo;
    p.prtt1.upper_us = row.prtt1_hi;
    r.points.push_back(p);
  }
  analyse_loggp(r, LoggpOptions{}, false);
  return r;
}

TEST(LoggpAnalysis, UndecidedSizesDoNotEndTheGapAndANarrowerEq7Wins) {
  const std::vector<RecordedSize> rows = {
      {1, 8.7, 4.2, 173.6, 22.0, 11.1, 8.2, 431.7, 429.9, 452.9},
      {2, 6.9, 3.8, 178.3, 34.2, 13.3, 3.3, 259.1, 238.7, 432.0},
      {3, 8.0, 4.7, 144.1, 50.5, 9.1, 3.7, 434.1, 428.9, 451.1},
      {4, 22.7, 6.0, 134.6, 37.1, 10.8, 2.7, 429.7, 250.3, 447.0},
      {6, 19.2, 8.4, 94.6, 37.1, 10.9, 8.8, 280.7, 231.0, 431.7},
      {8, 7.1, 2.4, 136.0, 29.1, 6.6, 3.7, 449.9, 427.9, 458.4},
      {11, 9.5, 3.9, 139.1, 25.7, 16.1, 3.5, 429.8, 240.8, 447.4},
      {16, 9.7, 6.5, 149.9, 23.8, 17.6, 10.8, 429.3, 243.2, 445.5},
      {23, 21.6, 6.6, 162.0, 35.1, 14.3, 2.1, 369.8, 234.2, 432.1},
      {32, 11.2, 4.7, 129.4, 49.8, 15.3, 3.1, 429.8, 241.5, 431.9},
      {45, 14.7, 8.2, 223.6, 30.1, 4.8, 4.0, 430.9, 303.9, 449.5},
      {64, 13.3, 6.4, 136.7, 33.9, 15.6, 6.8, 252.8, 224.6, 449.8},
      {91, 10.0, 3.8, 131.1, 41.9, 14.0, 4.3, 270.2, 18.5, 431.2},
      {128, 11.9, 7.9, 135.1, 30.1, 21.5, 5.6, 429.5, 240.9, 441.4},
      {181, 16.5, 7.1, 172.0, 32.1, 17.9, 9.0, 431.6, 241.0, 443.0},
      {256, 12.9, 5.8, 125.0, 26.4, 12.4, 4.4, 431.8, 242.5, 448.3},
      {362, 13.7, 3.5, 154.7, 31.5, 12.9, 7.2, 429.6, 235.7, 445.3},
      {512, 21.2, 3.6, 195.8, 55.1, 32.7, 7.8, 279.7, 234.2, 446.0},
      {724, 34.5, 3.5, 167.0, 30.2, 24.7, 7.9, 337.0, 224.5, 447.6},
      {1024, 37.6, 12.4, 121.1, 18.9, 30.4, 14.2, 431.0, 241.5, 449.2},
      {1448, 56.3, 2.9, 190.2, 34.4, 47.7, 7.8, 348.0, 252.4, 435.9},
      {2048, 77.7, 4.5, 181.6, 26.3, 29.4, 6.8, 433.5, 245.5, 452.7},
      {2896, 119.6, 4.3, 226.8, 27.4, 41.1, 8.3, 255.7, 243.6, 435.0},
      {4096, 174.8, 35.1, 313.0, 26.3, 62.7, 10.5, 402.2, 334.4, 540.4},
      {5793, 251.3, 7.8, 297.2, 22.0, 87.8, 15.5, 464.8, 418.6, 623.1},
      {8192, 347.4, 10.2, 407.0, 25.8, 104.8, 23.0, 492.0, 470.2, 641.4},
      {11585, 491.8, 14.3, 532.0, 25.4, 108.3, 26.6, 788.7, 770.5, 814.9},
      {16384, 699.6, 35.5, 748.3, 93.0, 123.4, 47.9, 1148.0, 1119.6, 1191.0},
      {23170, 972.6, 36.1, 850.1, 109.2, 175.9, 72.5, 1776.3, 1752.8, 4394.6},
      {32768, 1381.3, 38.1, 1194.2, 274.6, 100.6, 33.3, 2540.8, 2527.0, 2729.7},
      {46341, 1954.9, 54.7, 1603.7, 264.6, 194.1, 67.9, 3742.3, 3665.3, 6136.1},
      {65536, 2808.8, 82.4, 1504.1, 404.9, 40.9, 98.6, 5625.8, 5362.8, 8925.6},
      {92682, 3885.9, 68.9, 2774.0, 785.4, 299.5, 147.7, 7981.7, 7547.0, 8227.0},
      {131072, 5541.4, 206.8, 4707.8, 969.4, 296.3, 135.1, 10821.8, 10743.8, 15996.9},
      {185364, 7753.6, 76.2, 2717.3, 968.4, 306.6, 1419.2, 15772.7, 15412.1, 16051.3},
      {262144, 11137.9, 157.9, 3848.2, 604.5, 552.3, 156.9, 21967.8, 21772.0, 23915.4},
  };
  const double goodput_bytes_per_us = 200.0 / 8 * 1448 / 1514;
  {
    const LoggpResult r = analyse_recorded(rows);
    ASSERT_EQ(r.ranges.size(), 1u);
    const auto& range = r.ranges[0];
    EXPECT_TRUE(range.g_identifiable);
    std::printf("all sizes: %zu fitted, 1/G = %.3f MB/s\n", range.fit_points,
                1 / range.params.gap_per_byte_us);
    EXPECT_GE(range.fit_points, 3u);
    EXPECT_NEAR(1 / range.params.gap_per_byte_us, goodput_bytes_per_us,
                0.05 * goodput_bytes_per_us);
  }
  {
    // The same with the gap hidden (o_s = G_all) below the two largest sizes: eq. (7) through
    // those two, with their own error, is narrower than the fallback and is taken.
    auto hidden = rows;
    for (std::size_t i = 0; i + 2 < hidden.size(); ++i)
      hidden[i].o_s = hidden[i].g_all;
    const LoggpResult r = analyse_recorded(hidden);
    ASSERT_EQ(r.ranges.size(), 1u);
    const auto& range = r.ranges[0];
    EXPECT_TRUE(range.g_identifiable);
    EXPECT_EQ(range.fit_points, 2u);
    const double span = static_cast<double>(rows[35].bytes - rows[34].bytes);
    const double two_point = (rows[35].g_all - rows[34].g_all) / span;
    EXPECT_NEAR(range.params.gap_per_byte_us, two_point, 1e-12);
    EXPECT_NEAR(range.G_stderr_us_per_byte, std::hypot(rows[35].g_all_se, rows[34].g_all_se) / span,
                1e-12);
    EXPECT_THAT(range.notes, ::testing::Contains(::testing::HasSubstr("2 largest sizes")));
  }
}

// Another run over the same link and load (2026-12-03, CI of that day): o_s's intervals even
// wider, so the gap shows only at the two largest sizes, whose eq. (7) slope has a wide error
// (G_all's standard error 1836 us at 185364 B); the ping-pong slope less O_s and O_r, narrower,
// read G = 0.0012 us/B (1/G = 841 MB/s): o_s(s) of sends blocked on the socket buffer carried
// the wire's per-byte cost. Eq. (5) refutes it: at 262144 B the gap shows and G_all(s) - min
// G_all leaves at least 0.040 us/B.
TEST(LoggpAnalysis, AFallbackBelowTheLeastGTheShownGapAllowsDoesNotWin) {
  const std::vector<RecordedSize> rows = {
      {1, 20.9, 3.7, 169.7, 43.0, 19.3, 6.7, 338.3, 222.4, 443.2},
      {2, 22.8, 6.5, 105.7, 43.8, 15.4, 4.7, 243.7, 25.5, 437.0},
      {3, 10.8, 4.2, 126.8, 47.5, 13.7, 2.9, 432.3, 222.0, 447.2},
      {4, 12.0, 6.5, 59.8, 47.2, 12.7, 4.1, 432.3, 238.5, 447.1},
      {6, 12.1, 4.0, 141.2, 37.4, 12.7, 4.6, 428.3, 231.6, 446.6},
      {8, 18.8, 7.1, 21.5, 8.2, 11.8, 7.4, 339.3, 235.9, 446.2},
      {11, 12.2, 3.5, 186.1, 26.6, 10.9, 4.1, 430.4, 242.9, 440.9},
      {16, 10.0, 1.6, 110.4, 67.1, 11.3, 2.3, 434.7, 227.3, 449.2},
      {23, 15.7, 7.2, 130.3, 36.4, 11.8, 6.3, 435.9, 228.7, 447.9},
      {32, 8.3, 1.6, 120.8, 44.6, 13.6, 3.8, 432.1, 241.6, 449.2},
      {45, 14.8, 4.9, 84.4, 45.6, 10.8, 2.3, 430.5, 231.2, 434.9},
      {64, 19.6, 4.1, 107.1, 45.6, 11.3, 3.8, 364.9, 233.4, 445.1},
      {91, 10.7, 3.8, 124.8, 47.8, 15.7, 4.4, 243.5, 234.2, 433.3},
      {128, 22.3, 6.5, 160.4, 55.3, 14.1, 5.6, 338.4, 228.1, 445.4},
      {181, 21.9, 4.8, 143.2, 37.1, 14.9, 8.4, 341.0, 28.0, 437.6},
      {256, 11.7, 3.8, 143.1, 38.3, 15.7, 7.3, 427.8, 243.9, 446.2},
      {362, 21.5, 3.5, 206.2, 47.8, 16.3, 4.5, 434.9, 228.5, 444.0},
      {512, 17.7, 3.8, 158.0, 29.9, 20.1, 5.4, 340.5, 241.2, 434.3},
      {724, 28.1, 2.6, 171.1, 33.5, 21.9, 6.9, 232.6, 26.2, 433.1},
      {1024, 40.9, 6.0, 155.8, 50.8, 27.9, 11.3, 255.4, 26.6, 440.9},
      {1448, 53.6, 8.6, 214.0, 28.8, 24.4, 7.0, 445.5, 252.8, 461.7},
      {2048, 84.5, 5.8, 216.6, 31.7, 16.9, 6.8, 250.9, 92.5, 263.9},
      {2896, 100.6, 5.2, 184.7, 41.5, 16.1, 5.9, 437.4, 262.8, 454.3},
      {4096, 172.8, 6.1, 264.4, 27.4, 50.1, 11.4, 356.2, 170.5, 541.9},
      {5793, 241.1, 9.2, 302.8, 45.9, 57.9, 9.9, 469.1, 359.9, 585.9},
      {8192, 346.4, 15.5, 396.9, 36.9, 42.4, 8.4, 568.3, 543.6, 592.7},
      {11585, 492.0, 6.3, 499.1, 73.1, 63.6, 15.5, 758.4, 736.5, 772.7},
      {16384, 704.8, 42.8, 763.7, 140.2, 63.3, 22.5, 1134.5, 1119.6, 1156.8},
      {23170, 1077.7, 70.8, 895.4, 91.5, 41.9, 25.8, 1750.2, 1721.2, 2870.0},
      {32768, 1498.7, 51.3, 1181.3, 287.5, 51.6, 32.1, 2551.5, 2538.3, 2673.7},
      {46341, 2031.4, 77.6, 2053.2, 693.5, 252.7, 124.7, 3698.8, 3676.1, 3870.0},
      {65536, 2950.5, 173.6, 2119.5, 459.8, 52.8, 180.4, 5402.9, 5318.2, 7984.0},
      {92682, 4002.6, 1725.7, 2649.4, 745.5, 186.4, 108.6, 8099.9, 7567.3, 9784.6},
      {131072, 5430.3, 119.0, 3617.8, 2370.8, 75.6, 672.4, 15977.5, 10777.3, 16007.8},
      {185364, 7834.8, 1835.9, 2910.6, 1077.5, 418.0, 131.0, 15989.0, 15326.7, 18085.3},
      {262144, 11019.0, 278.0, 3769.1, 691.0, 280.4, 1128.0, 24061.5, 21753.3, 26181.6},
  };
  const LoggpResult r = analyse_recorded(rows);
  ASSERT_EQ(r.ranges.size(), 1u);
  const auto& range = r.ranges[0];
  // The bound by hand: g <= G_all(32 B) + 2 x 1.6 = 11.5 us; at 262144 B the gap shows, so
  // G >= (11019.0 - 2 x 278.0 - 11.5) / 262143 = 0.03987 us/B.
  const double floor = (11019.0 - 2 * 278.0 - (8.3 + 2 * 1.6)) / 262143;
  EXPECT_TRUE(range.g_identifiable);
  EXPECT_EQ(range.fit_points, 2u);
  const double two_point = (11019.0 - 7834.8) / (262144.0 - 185364.0);
  EXPECT_NEAR(range.params.gap_per_byte_us, two_point, 1e-12);
  EXPECT_GE(range.params.gap_per_byte_us, floor);
  EXPECT_THAT(range.notes, ::testing::Contains(::testing::HasSubstr("below the least G")));
  const double goodput_bytes_per_us = 200.0 / 8 * 1448 / 1514;
  EXPECT_NEAR(1 / range.params.gap_per_byte_us, goodput_bytes_per_us, 0.05 * goodput_bytes_per_us);
  // With only one size where the gap shows, eq. (7) has no slope: G is raised to the bound.
  auto one_shown = rows;
  one_shown[34].o_s = one_shown[34].g_all;
  const LoggpResult one = analyse_recorded(one_shown);
  ASSERT_EQ(one.ranges.size(), 1u);
  EXPECT_FALSE(one.ranges[0].g_identifiable);
  EXPECT_NEAR(one.ranges[0].params.gap_per_byte_us, floor, 1e-9);
  EXPECT_THAT(one.ranges[0].notes, ::testing::Contains(::testing::HasSubstr("G is that bound")));
}

// o_r's step across a candidate, on the late receives measured under two busy loops at vader's
// 8 KiB limit (o_r 1.64 [1.45, 1.92] us at 5793 B, 5.13 [3.92, 5.47] us at 8192 B), where the
// one-range fit matched the noisy curves as well as two and the switch was dropped as a bend.
std::vector<LoggpPoint> late_receives(const std::vector<std::array<double, 4>>& rows) {
  std::vector<LoggpPoint> pts;
  for (const auto& [bytes, o_r, lower, upper] : rows) {
    LoggpPoint p;
    p.bytes = static_cast<std::uint64_t>(bytes);
    p.o_r_us = o_r;
    p.o_r_lower_us = lower;
    p.o_r_upper_us = upper;
    pts.push_back(p);
  }
  return pts;
}

LoggpSwitch::Step bisection_step(std::uint64_t below, std::uint64_t mid, std::uint64_t above,
                                 const std::string& placement) {
  LoggpSwitch::Step st;
  st.below_bytes = below;
  st.mid_bytes = mid;
  st.above_bytes = above;
  st.placement = placement;
  return st;
}

// The switch record of a CI failure (2026-11-29, TCP over a tbf link under two busy loops): the
// probe's first series said hand-shake in (1024, 1448] B, every midpoint it placed fell on the
// eager side (late receive 1.69 -> 1.89 us over the bracket: a slope), three brackets did not
// separate, and the budget ran out before the end was confirmed. Kept rendezvous, its range took
// 1/G = 50 MB/s where tbf allowed 24. No hand-shake is supported there.
// A switch the probe called rendezvous in (below, first] B, not confirmed at the end.
LoggpSwitch unconfirmed_rendezvous(std::uint64_t below, std::uint64_t first,
                                   std::vector<LoggpSwitch::Step> steps) {
  LoggpSwitch sw;
  sw.below_bytes = below;
  sw.first_bytes = first;
  sw.rendezvous = true;
  sw.confirmed = false;
  sw.steps = std::move(steps);
  return sw;
}

TEST(LoggpAnalysis, AHandShakePlacedAtNoMidpointAndNotConfirmedIsNotSupported) {
  using detail::hand_shake_unsupported;
  const LoggpSwitch sw = unconfirmed_rendezvous(
      1395, 1448,
      {bisection_step(1024, 1236, 1448, "eager"), bisection_step(1236, 1342, 1448, "eager"),
       bisection_step(1342, 1395, 1448, "eager"), bisection_step(1395, 1421, 1448, "undecided"),
       bisection_step(1342, 0, 1448, "back: (1395, 1448] B did not separate"),
       bisection_step(1342, 1395, 1448, "undecided"),
       bisection_step(1236, 0, 1448, "back: (1342, 1448] B did not separate"),
       bisection_step(1236, 1342, 1448, "undecided"),
       bisection_step(1024, 0, 1448, "back: (1236, 1448] B did not separate"),
       bisection_step(1024, 1236, 1448, "eager"), bisection_step(1236, 1342, 1448, "eager"),
       bisection_step(1342, 1395, 1448, "eager"), bisection_step(1395, 1421, 1448, "undecided")});
  EXPECT_THAT(hand_shake_unsupported(sw, 1024, 1448, true, true),
              ::testing::HasSubstr("placed at no midpoint and not confirmed"));
  // A midpoint placed on the rendezvous side is a step seen: bracketed, still rendezvous.
  auto seen = sw;
  seen.steps.push_back(bisection_step(1395, 1421, 1448, "rendezvous"));
  EXPECT_EQ(hand_shake_unsupported(seen, 1024, 1448, true, true), "");
  // Confirmed at the end with every midpoint eager: the switch is at the bracket's top.
  auto confirmed = sw;
  confirmed.confirmed = true;
  EXPECT_EQ(hand_shake_unsupported(confirmed, 1024, 1448, true, true), "");
  // The other reasons, as before.
  auto unmoved = sw;
  unmoved.below_bytes = 1024;
  EXPECT_THAT(hand_shake_unsupported(unmoved, 1024, 1448, true, true),
              ::testing::HasSubstr("did not hold when re-measured"));
  EXPECT_THAT(hand_shake_unsupported(seen, 1024, 1448, false, true),
              ::testing::HasSubstr("neither at first nor at the end"));
  auto undecided = confirmed;
  undecided.steps = {bisection_step(1024, 1236, 1448, "undecided")};
  EXPECT_THAT(hand_shake_unsupported(undecided, 1024, 1448, true, true),
              ::testing::HasSubstr("placed no midpoint"));
}

// Under two busy loops the probe alone (the curves read an eager split) once put a rendezvous
// switch at (2684, 2790] B below vader's 8 KiB one: one midpoint placed on the rendezvous side,
// the bracket's ends not apart when re-measured, and the bisection spent the verdict's attempts
// too. With the verdict's attempts kept, it runs trials; where the two methods disagree, only
// its confirmation keeps the hand-shake.
TEST(LoggpAnalysis, AHandShakeOnlyTheProbeSawNeedsTheEndsConfirmation) {
  using detail::hand_shake_unsupported;
  LoggpSwitch sw = unconfirmed_rendezvous(
      2684, 2790,
      {bisection_step(2048, 2472, 2896, "eager"), bisection_step(2472, 2684, 2896, "eager"),
       bisection_step(2684, 2790, 2896, "rendezvous"),
       bisection_step(2684, 2737, 2790, "undecided")});
  sw.confirmations = 27;
  sw.confirmation_trials = 50;
  EXPECT_THAT(hand_shake_unsupported(sw, 2048, 2896, true, false),
              ::testing::HasSubstr("the curves saw no hand-shake"));
  // Both methods saw it: a midpoint on the rendezvous side is enough, as before.
  EXPECT_EQ(hand_shake_unsupported(sw, 2048, 2896, true, true), "");
  // The probe alone, confirmed at the end: kept.
  auto confirmed = sw;
  confirmed.confirmed = true;
  EXPECT_EQ(hand_shake_unsupported(confirmed, 2048, 2896, true, false), "");
  // No verdict trials at all (the session's message budget ran out, as it can over a slow TCP
  // link, where only the probe sees the hand-shake): the older rules judge, and a midpoint on
  // the rendezvous side keeps it.
  auto starved = sw;
  starved.confirmations = starved.confirmation_trials = 0;
  EXPECT_EQ(hand_shake_unsupported(starved, 2048, 2896, true, false), "");
}

TEST(LoggpAnalysis, AStepInTheLateReceiveIsAChangeOfParameters) {
  using detail::late_receive_step;
  const auto measured = late_receives({{2896, 1.06, 1.02, 1.22},
                                       {4096, 1.16, 1.12, 1.23},
                                       {5793, 1.64, 1.45, 1.92},
                                       {8192, 5.13, 3.92, 5.47},
                                       {11585, 5.5, 4.4, 6.0}});
  EXPECT_TRUE(late_receive_step(measured, 0, 3, 4));
  // Not a step: the intervals overlap across the bracket.
  auto overlapping = measured;
  overlapping[3].o_r_lower_us = 1.9;
  EXPECT_FALSE(late_receive_step(overlapping, 0, 3, 4));
  // A spike at one size is no step: the next size is back below.
  auto spike = measured;
  spike[4] = late_receives({{11585, 1.8, 1.6, 2.1}})[0];
  EXPECT_FALSE(late_receive_step(spike, 0, 3, 4));
  // The last point of the range needs no next one.
  EXPECT_TRUE(late_receive_step(measured, 0, 3, 3));
  // The left side's slope carried on: 1 us per KiB from 2896 B reaches 7.2 us at 8192 B.
  const auto steep = late_receives({{2896, 1.0, 1.0, 1.0},
                                    {4096, 2.2, 2.2, 2.2},
                                    {5793, 3.9, 3.9, 3.9},
                                    {8192, 6.2, 6.2, 6.2},
                                    {11585, 9.5, 9.5, 9.5}});
  EXPECT_FALSE(late_receive_step(steep, 0, 3, 4));
  // Exact data (the virtual network) on one line: no step; off it by a change of o_r: a step.
  auto exact = late_receives(
      {{1024, 1.0, 1.0, 1.0}, {2048, 1.1, 1.1, 1.1}, {4096, 1.3, 1.3, 1.3}, {8192, 1.7, 1.7, 1.7}});
  EXPECT_FALSE(late_receive_step(exact, 0, 2, 3));
  exact[2] = late_receives({{4096, 2.3, 2.3, 2.3}})[0];
  exact[3] = late_receives({{8192, 2.7, 2.7, 2.7}})[0];
  EXPECT_TRUE(late_receive_step(exact, 0, 2, 3));
  // Out of range: no point on the left.
  EXPECT_FALSE(late_receive_step(measured, 3, 3, 4));
}

// Eqs. (6) and (7) per round, then the median and its 95 % order-statistic interval, by hand:
// 9 rounds give [x_(2), x_(8)] (coverage 1 - 2 (1 + 9) / 512).
TEST(LoggpAnalysis, EachPointCarriesTheIntervalOfItsRoundsMedians) {
  LoggpOptions o;
  o.n = 3;  // (PRTT(n,...) - PRTT(1,0,s)) / (n - 1) halves the differences below
  LoggpPoint p;
  p.bytes = 64;
  p.delay_us = 1;
  for (int k = 1; k <= 9; ++k) {
    const double x = k;  // a different order per curve, so that no value is paired by accident
    p.rounds.prtt1.push_back(10);
    p.rounds.prtt_n0.push_back(10 + 2 * x);               // G_all = x
    p.rounds.prtt_nd.push_back(10 + 2 * (1 + (10 - x)));  // o_s = (1 + 10 - x) - d = 10 - x
    p.rounds.prtt_nr.push_back(10 + 2 * (1 + 3 * x));     // o_r = 3 x
  }
  std::vector<LoggpPoint> pts = {p};
  summarise_points(pts, o);
  EXPECT_DOUBLE_EQ(pts[0].g_all_us, 5);
  EXPECT_DOUBLE_EQ(pts[0].g_all_lower_us, 2);
  EXPECT_DOUBLE_EQ(pts[0].g_all_upper_us, 8);
  EXPECT_DOUBLE_EQ(pts[0].o_s_us, 5);
  EXPECT_DOUBLE_EQ(pts[0].o_s_lower_us, 2);
  EXPECT_DOUBLE_EQ(pts[0].o_s_upper_us, 8);
  EXPECT_DOUBLE_EQ(pts[0].o_r_us, 15);
  EXPECT_DOUBLE_EQ(pts[0].o_r_lower_us, 6);
  EXPECT_DOUBLE_EQ(pts[0].o_r_upper_us, 24);
}

// A curve bisection's bracket whose end lies on the other side's lines moves back to the step:
// ten sizes, every curve a line with a step of 1 us from the fifth point (500 B), noise 0.01 us.
TEST(LoggpAnalysis, ABracketEndOnTheOtherSidesLinesMovesTheSwitchBackToTheStep) {
  std::vector<LoggpPoint> pts;
  for (int i = 1; i <= 10; ++i) {
    LoggpPoint p;
    p.bytes = static_cast<std::uint64_t>(100 * i);
    const double s = static_cast<double>(p.bytes);
    const double step = i >= 5 ? 1.0 : 0.0;
    p.prtt1.median_us = 2 + 0.002 * s + step;
    p.prtt1.lower_us = p.prtt1.median_us - 0.02;
    p.prtt1.upper_us = p.prtt1.median_us + 0.02;
    p.o_s_us = 0.5 + 0.0005 * s + step;
    p.o_r_us = 0.4 + 0.0004 * s + step;
    p.g_all_us = 1 + 0.001 * s + step;
    p.o_s_noise = p.o_r_noise = p.g_all_noise = 0.01;
    pts.push_back(p);
  }
  ASSERT_GT(pts[4].prtt1.noise_us(), 0);
  // The step starts at index 4 (500 B): a bracket placed there stands.
  EXPECT_EQ(measure::detail::settle_bracket(pts, 0, 9, 4), 4u);
  // Placed too high, (600, 700] B: 600 B fits the right side's lines, the split moves down.
  EXPECT_EQ(measure::detail::settle_bracket(pts, 0, 9, 6), 4u);
  // Placed too low, (200, 300] B: 300 B fits the left side's lines, the split moves up.
  EXPECT_EQ(measure::detail::settle_bracket(pts, 0, 9, 2), 4u);
  // An end far off both sides' lines (a bisection point measured after the machine changed its
  // latency mode): 400 B 3 us above the left side's lines and 2 us above the right side's, nearer
  // the right by far but on neither. It stays where the bisection put it (it would have moved the
  // split to (300, 400] B).
  std::vector<LoggpPoint> shifted = pts;
  LoggpPoint& far = shifted[3];
  far.prtt1.median_us += 3;
  far.prtt1.lower_us += 3;
  far.prtt1.upper_us += 3;
  far.o_s_us += 3;
  far.o_r_us += 3;
  far.g_all_us += 3;
  const auto [l3, r3] = measure::detail::side_distances(shifted, 0, 9, 4, 3);
  ASSERT_LT(r3 + 2, l3);  // nearer the right side's lines
  ASSERT_GT(r3, 6);       // but not on them
  EXPECT_EQ(measure::detail::settle_bracket(shifted, 0, 9, 4), 4u);
  // The midpoint test's distances: 500 B lies on the right side's lines, 400 B on the left's.
  const auto [l5, r5] = measure::detail::side_distances(pts, 0, 9, 5, 4);
  EXPECT_LT(r5 + 2, l5);
  const auto [l4, r4] = measure::detail::side_distances(pts, 0, 9, 4, 3);
  EXPECT_LT(l4 + 2, r4);
}

// Two candidates whose bisections (or the probe's moves) end between the same two measured
// sizes are one switch: an unconfirmed eager reading of the curves at index 5 and a rendezvous
// switch the probe bisected to 4097 B, placed at index 5 as well. Before the merge they gave a
// range with no size, and the analysis read past an empty vector (a segfault in a lab run).
TEST(LoggpAnalysis, CandidatesThatMeetInOneBracketAreOneSwitch) {
  LoggpSwitch curves;
  curves.first_bytes = 4096;
  curves.found_by = "joint segmentation";
  LoggpSwitch probe;
  probe.first_bytes = 4097;
  probe.rendezvous = probe.confirmed = true;
  probe.found_by = "late-receive jump";
  LoggpSwitch upper;
  upper.first_bytes = 65536;
  upper.found_by = "joint segmentation";
  std::vector<std::size_t> changes = {5, 5, 9};
  std::vector<LoggpSwitch> switches = {curves, probe, upper};
  std::vector<bool> curve_only = {true, false, true};
  std::vector<std::string> notes;
  detail::merge_coinciding_switches(12, changes, switches, &curve_only, notes);
  EXPECT_EQ(changes, (std::vector<std::size_t>{5, 9}));
  ASSERT_EQ(switches.size(), 2u);
  EXPECT_EQ(switches[0].first_bytes, 4097u);  // the confirmed rendezvous reading
  EXPECT_TRUE(switches[0].rendezvous);
  EXPECT_EQ(switches[1].first_bytes, 65536u);
  EXPECT_EQ(curve_only, (std::vector<bool>{false, true}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], ::testing::HasSubstr("at 4097 B and at 4096 B: one switch"));

  // Out of order (a probe moved one past its neighbour) they are put in order, switch with
  // index; one outside the sizes (index 0, or past the last) is dropped.
  changes = {9, 0, 5, 12};
  switches = {upper, curves, probe, curves};
  notes.clear();
  detail::merge_coinciding_switches(12, changes, switches, nullptr, notes);
  EXPECT_EQ(changes, (std::vector<std::size_t>{5, 9}));
  ASSERT_EQ(switches.size(), 2u);
  EXPECT_EQ(switches[0].first_bytes, 4097u);
  EXPECT_EQ(switches[1].first_bytes, 65536u);
  EXPECT_EQ(notes.size(), 2u);

  // Left as it was, the analysis refuses it with a clear error instead of reading past the end.
  LoggpResult r = analyse_recorded({{64, 1, 0.01, 0.5, 0.01, 0.5, 0.01, 2, 1.9, 2.1},
                                    {128, 1.1, 0.01, 0.5, 0.01, 0.5, 0.01, 2.1, 2, 2.2},
                                    {256, 1.2, 0.01, 0.5, 0.01, 0.5, 0.01, 2.2, 2.1, 2.3},
                                    {512, 1.4, 0.01, 0.6, 0.01, 0.6, 0.01, 2.4, 2.3, 2.5}});
  r.changes = {2, 2};
  curves.first_bytes = 256;
  probe.first_bytes = 200;
  r.switches = {curves, probe};
  EXPECT_THROW(analyse_loggp(r, LoggpOptions{}, false), std::logic_error);
  detail::merge_coinciding_switches(r.points.size(), r.changes, r.switches, nullptr, notes);
  EXPECT_NO_THROW(analyse_loggp(r, LoggpOptions{}, false));
  EXPECT_EQ(r.ranges.size(), 2u);
}

// The points of a curve bisection step, each round's four PRTTs made from its curves (PRTT(1,0,s),
// o_s, o_r, G_all) = curves(bytes, sweep round?, k): the sweep (100-400 B, 800-1000 B, 30 rounds
// each) and the step's rounds (400, 600 and 800 B, 10 more; 600 B is the midpoint). Indices:
// 400 B = 3, 600 B = 4, 800 B = 5.
std::vector<LoggpPoint> bisection_step_points(
    std::uint32_t n, const std::function<std::array<double, 4>(std::uint64_t, bool, int)>& curves) {
  std::vector<LoggpPoint> pts;
  for (const std::uint64_t b : {100, 200, 300, 400, 600, 800, 900, 1000}) {
    LoggpPoint p;
    p.bytes = b;
    const int sweep_rounds = b == 600 ? 0 : 30;
    const int step_rounds = (b == 400 || b == 600 || b == 800) ? 10 : 0;
    for (int k = 0; k < sweep_rounds + step_rounds; ++k) {
      const auto [prtt1, o_s, o_r, g_all] = curves(b, k < sweep_rounds, k);
      p.rounds.prtt1.push_back(prtt1);
      p.rounds.prtt_nd.push_back(prtt1 + (n - 1) * o_s);
      p.rounds.prtt_nr.push_back(prtt1 + (n - 1) * o_r);
      p.rounds.prtt_n0.push_back(prtt1 + (n - 1) * g_all);
    }
    pts.push_back(p);
  }
  LoggpOptions o;
  o.n = n;
  measure::summarise_points(pts, o);
  return pts;
}

// A bisection step judged on the rounds its three points were measured in together. Every curve
// is a line with a step of 0.3 us from 500 B; the sweep ran in one latency mode, the step in
// another, 0.5 us faster. The midpoint, 600 B, lies on the right side: read against lines through
// the points' medians over all their rounds it fits the left side better (the step's mode pulls
// it down), read on the step's own rounds it fits the right.
TEST(LoggpAnalysis, ABisectionStepIsJudgedOnTheRoundsItsPointsShare) {
  constexpr std::uint32_t n = 16;
  const auto pts = bisection_step_points(n, [](std::uint64_t bytes, bool sweep, int k) {
    const double s = static_cast<double>(bytes);
    const double step = bytes >= 500 ? 0.3 : 0.0;
    const double level = step + (sweep ? 0.0 : -0.5) + 0.002 * ((k % 5) - 2);  // scatter median 0
    return std::array<double, 4>{2 + 0.002 * s + level, 0.5 + 0.0005 * s + level,
                                 0.4 + 0.0004 * s + level, 1 + 0.001 * s + level};
  });
  const auto [old_left, old_right] = measure::detail::side_distances(pts, 0, 7, 5, 4);
  EXPECT_LT(old_left, old_right);  // the lines through all rounds' medians: the wrong side
  const auto d = measure::detail::step_distances(pts, 0, 3, 5, 7, 3, 4, 5, 10, n);
  EXPECT_LT(d.to_right + 2, d.to_left);  // the step's own rounds: the right side, clearly
  EXPECT_NEAR(d.along, 1, 0.2);          // on the step, at the right side's end
  EXPECT_FALSE(d.off_the_step());
}

// A slope carried across a bracket brings its own error. The curves are flat with a step of
// 0.015 us from 700 B; the sweep's medians at 200, 300 and 400 B sit above, at and below the
// level by chance (each median's standard error about 0.01 us), so the left side's slope,
// carried 200 B to the midpoint (600 B, left of the step), predicts 0.02 below it. Without the
// slope's error that miss outweighed the step and the midpoint went right, 72 against 100 noise
// units (vader's 11 B step once went to (8, 9] B so); with it the step is too small against what
// the sides can predict to place the midpoint.
TEST(LoggpAnalysis, ASlopeCarriedAcrossTheBracketBringsItsError) {
  constexpr std::uint32_t n = 16;
  const auto pts = bisection_step_points(n, [](std::uint64_t bytes, bool sweep, int k) {
    // In the step's rounds (the three measured alternately) the true level, little scatter.
    const double bias = !sweep ? 0.0 : bytes == 200 ? 0.02 : bytes == 400 ? -0.02 : 0.0;
    const double scatter = sweep ? 0.03 : 0.0005;
    const double level = (bytes >= 700 ? 0.015 : 0.0) + bias + scatter * ((k % 5) - 2);
    return std::array<double, 4>{2 + level, 0.5 + level, 0.4 + level, 1 + level};
  });
  ASSERT_GT(pts[2].o_s_noise, 0.004);  // the sweep's medians scatter
  const auto d = measure::detail::step_distances(pts, 0, 3, 5, 7, 3, 4, 5, 10, n);
  // On both sides' lines alike: not placed (the bisection measures the three again, and stops
  // there if they still cannot tell).
  EXPECT_LT(std::abs(d.to_left - d.to_right), 2) << d.to_left << " " << d.to_right;
  EXPECT_LT(std::max(d.to_left, d.to_right), measure::detail::kOnTheLines);
  EXPECT_FALSE(d.off_the_step());
}

// A step the sweep saw (0.3 us from 500 B) that the bisection step's rounds hardly show (0.005
// us, the rounds scattering 0.01 us: the machine's other latency mode, where vader's 11 B step is
// about 2 % instead of 16 %): the sides' predictions lie too near each other to place the
// midpoint, whichever side it happens to be nearer.
TEST(LoggpAnalysis, EndsThatDoNotSeparateInTheStepsRoundsPlaceNoMidpoint) {
  constexpr std::uint32_t n = 16;
  const auto pts = bisection_step_points(n, [](std::uint64_t bytes, bool sweep, int k) {
    const double step = bytes >= 500 ? (sweep ? 0.3 : 0.005) : 0.0;
    const double level = step + (sweep ? 0.002 : 0.01) * ((k % 5) - 2);
    return std::array<double, 4>{2 + level, 0.5 + level, 0.4 + level, 1 + level};
  });
  const auto d = measure::detail::step_distances(pts, 0, 3, 5, 7, 3, 4, 5, 10, n);
  EXPECT_LT(d.step, measure::detail::kOnTheLines);
  EXPECT_FALSE(d.sides_apart());
  // The same points with the step showing in its rounds too: apart.
  const auto shown = bisection_step_points(n, [](std::uint64_t bytes, bool sweep, int k) {
    const double level = (bytes >= 500 ? 0.3 : 0.0) + (sweep ? 0.002 : 0.01) * ((k % 5) - 2);
    return std::array<double, 4>{2 + level, 0.5 + level, 0.4 + level, 1 + level};
  });
  const auto apart = measure::detail::step_distances(shown, 0, 3, 5, 7, 3, 4, 5, 10, n);
  EXPECT_TRUE(apart.sides_apart()) << apart.step;
  EXPECT_LT(apart.to_right + 2, apart.to_left);
}

// What a bisection step does with its midpoint: placed only where it is nearer one side by 2
// noise units, the sides lie 6 apart and it is not off the step; otherwise the bracket stays,
// and at the first step a split that does not show (sides not apart, or the midpoint on both
// alike) drops the switch, as an alike midpoint always did.
TEST(LoggpAnalysis, ABisectionStepPlacesKeepsOrDropsByItsDistances) {
  using measure::detail::judge_step;
  using measure::detail::StepDistances;
  using measure::detail::StepVerdict;
  const auto distances = [](double to_left, double to_right, double step, double off_step) {
    StepDistances d;
    d.to_left = to_left;
    d.to_right = to_right;
    d.step = step;
    d.off_step = off_step;
    return d;
  };
  EXPECT_EQ(judge_step(distances(1.0, 8.0, 8.0, 1.0), 0), StepVerdict::left);
  EXPECT_EQ(judge_step(distances(8.0, 1.0, 8.0, 1.0), 3), StepVerdict::right);
  // The fast mode's 9 B: nearer the right by 3.4 units, but the sides only 5.5 apart.
  EXPECT_EQ(judge_step(distances(5.2, 1.8, 5.5, 2.0), 2), StepVerdict::keep_sides_not_apart);
  EXPECT_EQ(judge_step(distances(5.2, 1.8, 5.5, 2.0), 0), StepVerdict::drop);
  // On both alike.
  EXPECT_EQ(judge_step(distances(3.0, 3.5, 7.0, 3.0), 1), StepVerdict::keep_alike);
  EXPECT_EQ(judge_step(distances(3.0, 3.5, 7.0, 3.0), 0), StepVerdict::drop);
  // Far off both, farther from the step than its length: kept at any step (an outlier is no
  // evidence against a split the sweep and its re-measurement showed).
  EXPECT_EQ(judge_step(distances(40.0, 30.0, 8.0, 29.0), 0), StepVerdict::keep_off_the_step);
  EXPECT_EQ(judge_step(distances(40.0, 30.0, 8.0, 29.0), 2), StepVerdict::keep_off_the_step);
  // Far off the nearer side too, but along the step (a mode change that moves both ends alike):
  // placed.
  EXPECT_EQ(judge_step(distances(650.0, 69.0, 640.0, 69.0), 0), StepVerdict::right);
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
  o = {};
  o.page_bytes = 3000;  // pages are a power of two
  EXPECT_THROW(o.validate(), InputError);
  o.page_bytes = 4096;
  EXPECT_NO_THROW(o.validate());
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
