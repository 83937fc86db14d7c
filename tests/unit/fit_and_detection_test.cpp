// Least squares, the median's confidence interval and protocol-change detection on data whose
// answer is known.

#include <cmath>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "stats/change_detection.hpp"
#include "stats/linear_fit.hpp"
#include "stats/median_ci.hpp"

namespace commgauge::stats {
namespace {

TEST(LineFit, ExactLine) {
  const std::vector<double> x = {0, 1, 2, 3};
  const std::vector<double> y = {1, 3, 5, 7};
  const LineFit f = fit_line(x, y);
  EXPECT_DOUBLE_EQ(f.intercept, 1);
  EXPECT_DOUBLE_EQ(f.slope, 2);
  EXPECT_DOUBLE_EQ(f.residual, 0);
  EXPECT_DOUBLE_EQ(f.slope_stderr, 0);
}

TEST(LineFit, HandComputedStandardErrors) {
  // x = 0,1,2; y = 0,2,1: slope 0.5, intercept 0.5, residuals -0.5, 1, -0.5; SSE 1.5,
  // s^2 = 1.5 / 1; Sxx = 2: se(slope) = sqrt(0.75), se(intercept) = sqrt(1.5 (1/3 + 1/2)).
  const std::vector<double> x = {0, 1, 2};
  const std::vector<double> y = {0, 2, 1};
  const LineFit f = fit_line(x, y);
  EXPECT_DOUBLE_EQ(f.slope, 0.5);
  EXPECT_DOUBLE_EQ(f.intercept, 0.5);
  EXPECT_NEAR(f.slope_stderr, std::sqrt(0.75), 1e-12);
  EXPECT_NEAR(f.intercept_stderr, std::sqrt(1.5 * (1.0 / 3 + 0.5)), 1e-12);
  EXPECT_NEAR(f.rms_residual, std::sqrt(1.5 / 3), 1e-12);
}

// Hand-computed: x = 1, 2, 3 (Sxx = 2); errors 1, 1, 1: sqrt(1 + 0 + 1) / 2; errors 0.1, 0.2,
// 0.3: sqrt(0.01 + 0.09) / 2 (the middle point does not move the slope).
TEST(LineFit, SlopeStandardErrorFromKnownErrors) {
  const std::vector<double> x = {1, 2, 3};
  EXPECT_DOUBLE_EQ(stats::slope_stderr_from_errors(x, std::vector<double>{1, 1, 1}),
                   std::sqrt(2.0) / 2);
  EXPECT_DOUBLE_EQ(stats::slope_stderr_from_errors(x, std::vector<double>{0.1, 0.2, 0.3}),
                   std::sqrt(0.1) / 2);
  EXPECT_EQ(stats::slope_stderr_from_errors(std::vector<double>{4, 4}, std::vector<double>{1, 1}),
            0.0);
  EXPECT_THROW(stats::slope_stderr_from_errors(x, std::vector<double>{1}), std::invalid_argument);
}

TEST(LineFit, WeightsPullTheLine) {
  const std::vector<double> x = {0, 1, 2};
  const std::vector<double> y = {0, 1, 5};
  const std::vector<double> w = {1e6, 1e6, 1e-6};  // the last point hardly counts
  const LineFit f = fit_line(x, y, w);
  EXPECT_NEAR(f.slope, 1, 1e-5);
  EXPECT_NEAR(f.intercept, 0, 1e-5);
}

TEST(LineFit, RejectsDegenerateInput) {
  EXPECT_THROW(fit_line(std::vector<double>{1}, std::vector<double>{1}), std::invalid_argument);
  EXPECT_THROW(fit_line(std::vector<double>{2, 2}, std::vector<double>{1, 3}),
               std::invalid_argument);
}

TEST(Seed000Lsq, DenominatorIsLMinusKMinus2) {
  // Points 0..3 around y = x: residuals known; eq. (8) divides by l - k - 2 = 1.
  const std::vector<double> x = {0, 1, 2, 3};
  const std::vector<double> y = {0, 1, 2, 4};
  const LineFit f = fit_line(x, y);
  double sse = 0;
  for (std::size_t i = 0; i < 4; ++i)
    sse += std::pow(f.at(x[i]) - y[i], 2);
  EXPECT_NEAR(seed000_lsq(x, y, 0, 3), sse / 1, 1e-12);
  EXPECT_THROW(seed000_lsq(x, y, 0, 2), std::invalid_argument);  // 3 points: 0 / 0
}

TEST(MedianInterval, OrderStatisticsAt95Percent) {
  // n = 6: [x(1), x(6)] covers the median with 1 - 2/64 = 96.9 %, [x(2), x(5)] with 78 %.
  const std::vector<double> x = {6, 1, 5, 2, 4, 3};
  const MedianInterval m = median_interval(x, 0.95);
  EXPECT_DOUBLE_EQ(m.median, 3.5);
  EXPECT_DOUBLE_EQ(m.lower, 1);
  EXPECT_DOUBLE_EQ(m.upper, 6);
  EXPECT_NEAR(m.confidence, 1 - 2.0 / 64, 1e-12);
  EXPECT_NEAR(m.relative_half_width, 5.0 / 7.0, 1e-12);
}

TEST(MedianInterval, TooFewSamplesHaveNoInterval) {
  const std::vector<double> x = {1, 2, 3, 4, 5};  // n = 5: best coverage 93.75 % < 95 %
  const MedianInterval m = median_interval(x, 0.95);
  EXPECT_TRUE(std::isinf(m.relative_half_width));
  EXPECT_NEAR(m.confidence, 1 - 2.0 / 32, 1e-12);
}

TEST(SignTest, ExactBinomialTailsByHand) {
  // P(X >= 9) for X ~ Bin(11, 1/2) = (C(11,9) + C(11,10) + C(11,11)) / 2^11 = 67 / 2048.
  EXPECT_NEAR(sign_test_p_value(11, 9), 67.0 / 2048, 1e-12);
  EXPECT_NEAR(sign_test_p_value(11, 8), 232.0 / 2048, 1e-12);  // + C(11,8) = 165
  EXPECT_NEAR(sign_test_p_value(22, 22), std::pow(0.5, 22), 1e-18);
  EXPECT_DOUBLE_EQ(sign_test_p_value(5, 0), 1.0);
  EXPECT_THROW(sign_test_p_value(3, 4), std::invalid_argument);
}

TEST(MedianInterval, LargeSamplesTakeTheExactOrderStatistics) {
  // The samples are 1..n, so the interval's ends are the order statistics' ranks. j and the
  // coverage 1 - 2 sum_{i<j} C(n,i) / 2^n summed in exact integers (Python): n = 1,000: j = 469,
  // 0.95370880; n = 10,000: j = 4,902, 0.95116705; n = 10,001: j = 4,902, 0.95229076.
  struct Case {
    std::size_t n, j;
    double coverage;
  };
  for (const Case c : {Case{1000, 469, 0.9537088026}, Case{10000, 4902, 0.9511670501},
                       Case{10001, 4902, 0.9522907612}}) {
    std::vector<double> x(c.n);
    for (std::size_t i = 0; i < c.n; ++i)
      x[i] = static_cast<double>(c.n - i);  // descending: the interval sorts
    const MedianInterval m = median_interval(x, 0.95);
    EXPECT_DOUBLE_EQ(m.lower, static_cast<double>(c.j)) << c.n;
    EXPECT_DOUBLE_EQ(m.upper, static_cast<double>(c.n + 1 - c.j)) << c.n;
    EXPECT_NEAR(m.confidence, c.coverage, 1e-9) << c.n;
  }
}

TEST(MedianInterval, NarrowsWithMoreSamples) {
  std::vector<double> x;
  for (int i = 0; i < 101; ++i)
    x.push_back(100 + (i % 10));
  const MedianInterval m = median_interval(x, 0.95);
  EXPECT_GE(m.confidence, 0.95);
  EXPECT_LT(m.relative_half_width, 0.03);
}

// Curves sampled at geometric sizes from a piecewise-linear truth.
struct Series {
  std::vector<double> size;
  std::vector<Curve> curves;
};

Series make_series(std::vector<double> sizes, const std::vector<double (*)(double)>& truths,
                   double relative_noise) {
  Series s;
  s.size = std::move(sizes);
  unsigned state = 12345;
  auto noise = [&] {  // deterministic pseudo-noise in [-1, 1]
    state = state * 1103515245u + 12345u;
    return static_cast<double>((state >> 8) % 2001) / 1000.0 - 1.0;
  };
  for (auto truth : truths) {
    Curve c;
    for (double x : s.size) {
      const double v = truth(x);
      c.value.push_back(v * (1 + relative_noise * noise()));
      c.noise.push_back(std::max(relative_noise * v, 1e-12));
    }
    s.curves.push_back(c);
  }
  return s;
}

std::vector<double> geometric(double lo, double hi, double per_octave) {
  std::vector<double> out;
  for (double x = lo; x <= hi; x *= std::pow(2.0, 1.0 / per_octave)) {
    if (out.empty() || std::round(x) != out.back()) out.push_back(std::round(x));
  }
  return out;
}

double p1_step(double s) {
  return s < 12289 ? 10 + 0.002 * s : 25 + 0.002 * s;
}
double gall_flat(double s) {
  return 2 + 0.0008 * s;
}
double gall_step(double s) {
  return s < 12289 ? 2 + 0.0008 * s : 20 + 0.0005 * s;
}

TEST(JointDetection, FindsAStepInOneCurve) {
  const Series s = make_series(geometric(1, 1 << 20, 2), {p1_step, gall_flat}, 0.01);
  const auto changes = detect_changes_joint(s.size, s.curves, {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_GT(s.size[changes[0]], 12289 * 0.7);
  EXPECT_LE(s.size[changes[0] - 1], 12289);
}

TEST(Seed000Detection, WatchingOnlyGallMissesAPrtt1Step) {
  // seed 000's detector looks at G_all only; the step here is in PRTT(1,0,s) alone.
  const Series s = make_series(geometric(1, 1 << 20, 2), {p1_step, gall_flat}, 0.0);
  EXPECT_TRUE(detect_changes_seed000(s.size, s.curves[1], {}).empty());
}

TEST(Seed000Detection, FindsAGallStep) {
  const Series s = make_series(geometric(1, 1 << 20, 3), {gall_step}, 0.0);
  const auto changes = detect_changes_seed000(s.size, s.curves[0], {});
  ASSERT_FALSE(changes.empty());
  EXPECT_GE(s.size[changes[0]], 12289);
  EXPECT_LE(s.size[changes[0] - 1], 12289);
}

double smooth_bend(double s) {
  return 5 + 3 * std::sqrt(s);
}  // curvature, no protocol change

TEST(JointDetection, ABendIsNotASwitch) {
  const Series s = make_series(geometric(1, 1 << 20, 2), {smooth_bend}, 0.005);
  EXPECT_TRUE(detect_changes_joint(s.size, s.curves, {}).empty());
}

TEST(JointDetection, ASingleOutlierIsNotASwitch) {
  Series s = make_series(geometric(1, 1 << 20, 2), {gall_flat}, 0.005);
  s.curves[0].value[20] *= 3;
  EXPECT_TRUE(detect_changes_joint(s.size, s.curves, {}).empty());
}

TEST(JointDetection, ExactDataNeedsNoNoise) {
  // Noise-free data (the virtual network): rounding error must not become a switch, a real
  // step must still be found.
  const Series flat = make_series(geometric(1, 1 << 20, 2), {gall_flat}, 0.0);
  EXPECT_TRUE(detect_changes_joint(flat.size, flat.curves, {}).empty());
  const Series step = make_series(geometric(1, 1 << 20, 2), {gall_step}, 0.0);
  EXPECT_EQ(detect_changes_joint(step.size, step.curves, {}).size(), 1u);
}

TEST(JointDetection, AConfirmedFirstPassPutsAStepAtItsFirstSizeNotOneLater) {
  // PRTT(1,0,s), o_s, o_r and G_all (us; value and standard error) of a loggp run over vader on
  // this machine (2026-12-04), whose 11 B step other runs bisected exact to one byte. The step's
  // first point lies 4-6 noise units off the line before it; at the stricter bar (6) the split
  // is not found here, and in 6 of 48 runs' data it went to 23 B, where the line through 8, 11
  // and 16 B straddles the step (the bisection cannot find it inside (16, 23]); at 4, 46 of 48
  // split at 11 B and none elsewhere below 64 B.
  const std::vector<double> size = {1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256};
  const std::vector<Curve> curves = {
      {{0.9315, 0.9415, 0.9170, 0.9470, 0.9470, 0.9365, 1.0520, 1.0670, 1.0775, 1.0570, 1.0920,
        1.0670, 1.0870, 1.1025, 1.0970, 1.1320},
       {0.0202, 0.0153, 0.0179, 0.0283, 0.0181, 0.0156, 0.0102, 0.0153, 0.0199, 0.0153, 0.0151,
        0.0179, 0.0128, 0.0306, 0.0230, 0.0125}},
      {{0.0660, 0.0672, 0.0654, 0.0657, 0.0672, 0.0660, 0.0710, 0.0676, 0.0706, 0.0736, 0.0711,
        0.0736, 0.0751, 0.0724, 0.0835, 0.0865},
       {0.0020, 0.0025, 0.0034, 0.0032, 0.0031, 0.0047, 0.0038, 0.0023, 0.0029, 0.0026, 0.0052,
        0.0027, 0.0045, 0.0026, 0.0025, 0.0037}},
      {{0.1587, 0.1638, 0.1748, 0.1774, 0.1770, 0.1744, 0.1914, 0.1997, 0.1790, 0.1883, 0.1890,
        0.1769, 0.1998, 0.2355, 0.2071, 0.2575},
       {0.0074, 0.0085, 0.0071, 0.0062, 0.0078, 0.0124, 0.0127, 0.0150, 0.0087, 0.0092, 0.0102,
        0.0052, 0.0179, 0.0141, 0.0079, 0.0101}},
      {{0.1536, 0.1653, 0.1691, 0.1657, 0.1740, 0.1723, 0.2001, 0.2034, 0.2097, 0.2304, 0.2081,
        0.2457, 0.2255, 0.2184, 0.2495, 0.2715},
       {0.0066, 0.0091, 0.0084, 0.0040, 0.0064, 0.0091, 0.0053, 0.0078, 0.0095, 0.0094, 0.0079,
        0.0065, 0.0096, 0.0036, 0.0041, 0.0059}}};
  ChangeOptions confirmed;  // as loggp calls it: every split is measured again
  confirmed.threshold_per_curve = false;
  const auto changes = detect_changes_joint(size, curves, confirmed);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(size[changes[0]], 11);
  // The strict pass (no confirmation) reads it one size later: why the first pass is sensitive.
  const auto strict = detect_changes_joint(size, curves, {});
  EXPECT_TRUE(strict.empty() || size[strict[0]] > 11);
}

double two_steps(double s) {
  return s < 256 ? 1 : (s < 362 ? 3 : 6);
}

TEST(JointDetection, NarrowRangesAreAllowed) {
  // A range only two sweep points wide (256 and 300) between two switches.
  const std::vector<double> size = {16, 32, 64, 128, 200, 256, 300, 362, 512, 724, 1024, 2048};
  Series s = make_series(size, {two_steps}, 0.0);
  const auto changes = detect_changes_joint(s.size, s.curves, {});
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(s.size[changes[0]], 256);
  EXPECT_EQ(s.size[changes[1]], 362);
}

}  // namespace
}  // namespace commgauge::stats
