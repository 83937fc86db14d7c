// The calibrated fit against curves computed from known links (the closed forms, which the
// virtual network obeys to the picosecond), and the non-negative least-squares solver under it.

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "link_fixtures.hpp"
#include "model/calibration.hpp"
#include "model/closed_forms.hpp"
#include "stats/nnls.hpp"

namespace commgauge {
namespace {

using commgauge::testing::loggp_link;
using commgauge::testing::loggps_link;
using namespace model::literals;

TEST(Nnls, ClampsTheNegativeCoordinate) {
  // min ||x - (1, -1)||: the unconstrained answer (1, -1) is infeasible; (1, 0) is optimal.
  const double a[] = {1, 0, 0, 1};
  const double b[] = {1, -1};
  const auto r = stats::nnls(a, 2, 2, b);
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.x[0], 1, 1e-12);
  EXPECT_EQ(r.x[1], 0);
  EXPECT_NEAR(r.residual_norm, 1, 1e-12);
}

TEST(Nnls, SolvesAnOverdeterminedSystemExactlyWhenTheSolutionIsFeasible) {
  // Rows of a line y = 2 + 3x at x = 0..3: (2, 3) is the exact, feasible solution.
  const double a[] = {1, 0, 1, 1, 1, 2, 1, 3};
  const double b[] = {2, 5, 8, 11};
  const auto r = stats::nnls(a, 4, 2, b);
  EXPECT_NEAR(r.x[0], 2, 1e-10);
  EXPECT_NEAR(r.x[1], 3, 1e-10);
}

TEST(Nnls, HandComputedActiveSet) {
  // min ||A x - b||, x >= 0, with A = [[1, 1], [1, -1]], b = (0, 2): unconstrained x = (1, -1);
  // with x2 = 0 the best x1 is (0 + 2) / 2 = 1, residual sqrt(1 + 1); that satisfies the KKT
  // conditions (gradient for x2: A2 . r = (1)(-1)... >= 0 side), so x = (1, 0).
  const double a[] = {1, 1, 1, -1};
  const double b[] = {0, 2};
  const auto r = stats::nnls(a, 2, 2, b);
  EXPECT_NEAR(r.x[0], 1, 1e-12);
  EXPECT_EQ(r.x[1], 0);
  EXPECT_NEAR(r.residual_norm, std::sqrt(2.0), 1e-12);
}

TEST(Nnls, AWarmStartReachesTheColdStartsOptimumWhateverTheGuess) {
  // Seeded random tall and square problems whose optimum has some coordinates at 0: from no
  // guess, the optimum's own positive set, every column, none and a random set, the same x.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0, 1);
  std::bernoulli_distribution coin(0.5);
  int clamped = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t cols = 2 + trial % 12, rows = trial % 3 == 0 ? cols : 3 * cols;
    std::vector<double> a(rows * cols), b(rows);
    for (double& x : a)
      x = normal(rng);
    for (double& x : b)
      x = normal(rng);
    const auto cold = stats::nnls(a, rows, cols, b);
    ASSERT_TRUE(cold.converged);
    std::vector<bool> exact(cols), every(cols, true), none(cols, false), random(cols);
    for (std::size_t j = 0; j < cols; ++j) {
      exact[j] = cold.x[j] > 0;
      random[j] = coin(rng);
      clamped += cold.x[j] == 0;
    }
    for (const auto* guess : {&exact, &every, &none, &random}) {
      const auto warm = stats::nnls(a, rows, cols, b, *guess);
      ASSERT_TRUE(warm.converged);
      EXPECT_NEAR(warm.residual_norm, cold.residual_norm, 1e-9 * (1 + cold.residual_norm));
      for (std::size_t j = 0; j < cols; ++j)
        EXPECT_NEAR(warm.x[j], cold.x[j], 1e-8 * (1 + std::abs(cold.x[j]))) << "trial " << trial;
    }
    // From the optimum's own positive set: one least-squares solve, no column added.
    EXPECT_EQ(stats::nnls(a, rows, cols, b, exact).iterations, 0) << "trial " << trial;
  }
  EXPECT_GT(clamped, 200);  // the bound is active often: the warm start's pruning is exercised
  const double a[] = {1, 0, 0, 1}, b[] = {1, -1};
  EXPECT_THROW(stats::nnls(a, 2, 2, b, std::vector<bool>(3, true)), std::invalid_argument);
}

std::vector<model::PrttCurvePoint> exact_points(const model::LinkParams& link,
                                                std::uint64_t max_bytes = 1u << 18) {
  const model::CostModel cost(link);
  std::vector<model::PrttCurvePoint> pts;
  for (double s = 1; s <= static_cast<double>(max_bytes); s *= std::sqrt(2.0)) {
    model::PrttCurvePoint p;
    p.bytes = static_cast<std::uint64_t>(std::llround(s));
    p.n = 16;
    // d = PRTT(1,0,s) as seed 000 chooses it.
    p.delay_us = model::to_microseconds(model::prtt(cost, 1, 0_ps, p.bytes));
    p.measured_us = model::prtt_curves(cost, p);
    pts.push_back(p);
  }
  return pts;
}

model::LinkParams perturbed(model::LinkParams link, double factor) {
  link.latency_us *= factor;
  for (auto& r : link.ranges) {
    r.send_overhead_us *= factor;
    r.recv_overhead_us *= 2 - factor;
    r.gap_us *= factor;
    r.gap_per_byte_us *= 2 - factor;
    r.send_overhead_per_byte_us *= factor;
    r.recv_overhead_per_byte_us *= factor;
  }
  return link;
}

void expect_rel(double got, double want, double tol, const std::string& what) {
  EXPECT_NEAR(got, want, tol * std::abs(want) + 1e-9) << what;
}

TEST(Calibration, RecoversAnEagerLinkFromPerturbedStart) {
  auto truth = loggps_link(model::Progress::independent);
  truth.ranges.resize(1);
  const auto pts = exact_points(truth);
  const auto c = model::calibrate(perturbed(truth, 1.3), pts, model::Structure::loggps);
  EXPECT_LT(c.max_abs_deviation, 1e-4);
  EXPECT_TRUE(c.unidentified.empty()) << c.unidentified.front().parameter;
  const auto& r = c.link.ranges[0];
  const auto& t = truth.ranges[0];
  expect_rel(c.link.latency_us, truth.latency_us, 1e-3, "L");
  expect_rel(r.send_overhead_us, t.send_overhead_us, 1e-3, "o_s");
  expect_rel(r.recv_overhead_us, t.recv_overhead_us, 1e-3, "o_r");
  expect_rel(r.send_overhead_per_byte_us, t.send_overhead_per_byte_us, 1e-3, "O_s");
  expect_rel(r.recv_overhead_per_byte_us, t.recv_overhead_per_byte_us, 1e-3, "O_r");
  expect_rel(r.gap_us, t.gap_us, 1e-3, "g");
  expect_rel(r.gap_per_byte_us, t.gap_per_byte_us, 1e-3, "G");
}

// A level change: a range whose single measured size (370728 B) sits 0.8 us above the line of
// the range below in o_s and 0.4 us in o_r, with the same per-byte costs. One size gives no
// slope: fitted free, its per-byte costs are open; taken from the range below
// (per_byte_as_below), the fit is exact and the truth comes back.
TEST(Calibration, ARangeWithOneSizeTakesThePerByteCostsOfTheRangeBelow) {
  const auto truth = commgauge::testing::leveled_link(300000, 0.8, 0.4);
  const model::LinkRange& level = truth.ranges[1];
  const auto pts = exact_points(truth, 400000);
  ASSERT_EQ(std::count_if(pts.begin(), pts.end(), [](const auto& p) { return p.bytes >= 300000; }),
            1);
  model::CalibrationOptions co;
  co.per_byte_as_below = {false, true};
  const auto c = model::calibrate(perturbed(truth, 1.3), pts, model::Structure::loggps, co);
  EXPECT_LT(c.max_abs_deviation, 1e-4);
  // Its per-byte costs are no coordinates of its own: never reported open.
  for (const auto& u : c.unidentified) {
    EXPECT_FALSE(u.range == 1 &&
                 (u.parameter == "O_s" || u.parameter == "O_r" || u.parameter == "G"))
        << u.parameter << " of the level range is reported open";
  }
  const auto& r = c.link.ranges[1];
  expect_rel(r.send_overhead_us, level.send_overhead_us, 1e-3, "o_s");
  expect_rel(r.recv_overhead_us, level.recv_overhead_us, 1e-3, "o_r");
  EXPECT_EQ(r.send_overhead_per_byte_us, c.link.ranges[0].send_overhead_per_byte_us);
  EXPECT_EQ(r.recv_overhead_per_byte_us, c.link.ranges[0].recv_overhead_per_byte_us);
  EXPECT_EQ(r.gap_per_byte_us, c.link.ranges[0].gap_per_byte_us);
  expect_rel(r.gap_per_byte_us, level.gap_per_byte_us, 1e-3, "G");
  // Free, the one size leaves its range's per-byte costs open.
  const auto free = model::calibrate(perturbed(truth, 1.3), pts, model::Structure::loggps);
  EXPECT_TRUE(std::any_of(free.unidentified.begin(), free.unidentified.end(), [](const auto& u) {
    return u.range == 1 && (u.parameter == "O_s" || u.parameter == "O_r" || u.parameter == "G");
  }));
}

TEST(Calibration, HiddenGapIsReportedWithABoundThatHoldsTheTruth) {
  // o = 2 > g = 0.5: eq. (7) measures o, the curves only bound g (seed 000 §4).
  const auto truth = loggp_link(0.5, 2.0, 0.5, 0.0001);
  const auto pts = exact_points(truth, 4096);
  const auto c = model::calibrate(perturbed(truth, 1.2), pts, model::Structure::loggps);
  EXPECT_LT(c.max_abs_deviation, 1e-4);
  const auto g = std::find_if(c.unidentified.begin(), c.unidentified.end(),
                              [](const auto& u) { return u.parameter == "g"; });
  ASSERT_NE(g, c.unidentified.end());
  EXPECT_LE(g->lower, 0.5);
  EXPECT_GE(g->upper, 0.5);
  EXPECT_LT(g->upper, 2.5);  // g + (s-1) G cannot exceed o without showing in PRTT(n,0,s)
  EXPECT_GE(g->value, g->lower);
  EXPECT_LE(g->value, g->upper);
}

// Every parameter is either recovered or reported with an interval that holds the truth.
void expect_recovered_or_bounded(const model::Calibration& c, const model::LinkParams& truth,
                                 double tolerance) {
  auto bounded = [&](std::size_t range, const char* name, double want) {
    for (const auto& u : c.unidentified) {
      if (u.range == range && u.parameter == name) {
        EXPECT_LE(u.lower, want * (1 + 1e-3) + 1e-9) << name << " range " << range;
        EXPECT_GE(u.upper, want * (1 - 1e-3) - 1e-9) << name << " range " << range;
        return true;
      }
    }
    return false;
  };
  for (std::size_t k = 0; k < truth.ranges.size(); ++k) {
    const auto& r = c.link.ranges[k];
    const auto& t = truth.ranges[k];
    const std::pair<const char*, std::pair<double, double>> params[] = {
        {"o_s", {r.send_overhead_us, t.send_overhead_us}},
        {"o_r", {r.recv_overhead_us, t.recv_overhead_us}},
        {"O_s", {r.send_overhead_per_byte_us, t.send_overhead_per_byte_us}},
        {"O_r", {r.recv_overhead_per_byte_us, t.recv_overhead_per_byte_us}},
        {"g", {r.gap_us, t.gap_us}},
        {"G", {r.gap_per_byte_us, t.gap_per_byte_us}}};
    for (const auto& [name, v] : params) {
      if (!bounded(k, name, v.second)) expect_rel(v.first, v.second, tolerance, name);
    }
  }
}

TEST(Calibration, RendezvousRangeIsRecoveredOrBounded) {
  const auto truth = loggps_link(model::Progress::dependent);
  const auto pts = exact_points(truth);
  const auto c = model::calibrate(perturbed(truth, 1.1), pts, model::Structure::loggps);
  EXPECT_LT(c.max_abs_deviation, 1e-4);
  expect_rel(c.link.ranges[1].gap_per_byte_us + c.link.ranges[1].recv_overhead_per_byte_us,
             truth.ranges[1].gap_per_byte_us + truth.ranges[1].recv_overhead_per_byte_us, 0.02,
             "G + O_r");
  expect_recovered_or_bounded(c, truth, 0.02);
}

TEST(Calibration, LogGPStructureFitsBetterThanDroppingThePerByteOverheads) {
  // Per-byte overheads exist, but the LogGP structure has none. Simply dropping them (what a
  // LogGP view of the LogGPS parameters does) loses their cost; the LogGP fit moves it into G
  // and the overheads and reproduces the curves better.
  auto truth = loggps_link(model::Progress::independent);
  truth.ranges.resize(1);
  const auto pts = exact_points(truth);
  auto dropped = truth;
  dropped.ranges[0].send_overhead_per_byte_us = dropped.ranges[0].recv_overhead_per_byte_us = 0;
  const auto baseline = model::evaluate(dropped, pts);
  const auto c = model::calibrate(dropped, pts, model::Structure::loggp);
  const auto& r = c.link.ranges[0];
  EXPECT_EQ(r.send_overhead_per_byte_us, 0);
  EXPECT_EQ(r.recv_overhead_per_byte_us, 0);
  EXPECT_GT(r.gap_per_byte_us, truth.ranges[0].gap_per_byte_us);  // carries per-byte cost
  EXPECT_LT(c.rms_deviation, baseline.rms_deviation);
  EXPECT_LT(c.max_abs_deviation, baseline.max_abs_deviation);
}

TEST(Calibration, NoParameterIsNegativeEvenWhenTheDataAskForIt) {
  // Curves of a link with a negative L (o and L overlap, seed 000 §3.4): the fit keeps L >= 0 and
  // carries the overlap as the send overlap omega = 0.5 us, which reproduces every curve.
  auto truth = loggp_link(-0.5, 2.0, 4.0, 0.001);
  const auto pts = exact_points(truth, 16384);
  const auto c = model::calibrate(loggp_link(0.1, 1.0, 1.0, 0.001), pts, model::Structure::loggps);
  EXPECT_EQ(c.link.latency_us, 0);
  EXPECT_NEAR(c.link.send_overlap_us, 0.5, 0.005);
  EXPECT_LT(c.max_abs_deviation, 0.002);
  // The same curves written with omega instead of a negative L are the same link.
  auto same = loggp_link(0.0, 2.0, 4.0, 0.001);
  same.send_overlap_us = 0.5;
  const auto again = model::evaluate(same, pts);
  EXPECT_LT(again.max_abs_deviation, 1e-9);
  for (const auto& r : c.link.ranges) {
    for (double v : {r.send_overhead_us, r.recv_overhead_us, r.gap_us, r.gap_per_byte_us,
                     r.send_overhead_per_byte_us, r.recv_overhead_per_byte_us})
      EXPECT_GE(v, 0);
  }
}

}  // namespace
}  // namespace commgauge
