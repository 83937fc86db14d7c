// The streaming histogram against hand-computed statistics and against the whole-sample
// functions it replaces for the timer.

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "stats/histogram.hpp"

namespace commgauge::stats {
namespace {

TEST(Histogram, HandComputedSmallSample) {
  // 1, 2, 2, 3, 7 (quantum 1): mean 3, median 2, variance (4+1+1+0+16)/4 = 5.5.
  Histogram h(1.0, 4);  // 7 lands in the map part
  for (double x : {2.0, 7.0, 1.0, 3.0, 2.0})
    h.add(x);
  const Summary s = h.summary();
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 7);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.variance, 5.5);
  EXPECT_DOUBLE_EQ(h.quantile(0.5), 2);
  EXPECT_DOUBLE_EQ(h.quantile(0.9), 7);  // nearest rank: ceil(4.5) = 5th value
  EXPECT_DOUBLE_EQ(h.min_positive(), 1);
  const auto f = h.frequency(10);
  ASSERT_EQ(f.rows.size(), 4u);
  EXPECT_EQ(f.rows[1].count, 2u);  // the value 2
}

TEST(Histogram, ZeroAndNegativeDifferencesAsATimerMakesThem) {
  Histogram h(0.001);
  for (double x : {0.0, 0.0, 0.02, 0.04, -0.001})
    h.add(x);
  EXPECT_NEAR(h.min_positive(), 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(h.min_non_negative(), 0.0);
  EXPECT_EQ(h.negative(), 1u);
}

TEST(Histogram, AgreesWithTheWholeSampleStatisticsOnQuantizedData) {
  std::mt19937_64 rng(3);
  std::geometric_distribution<int> ticks(0.3);
  std::vector<double> v;
  Histogram h(0.001);
  for (int i = 0; i < 100001; ++i) {
    const double x = 0.02 * ticks(rng) + (i % 1000 == 0 ? 500.0 : 0.0);  // a few outliers
    v.push_back(x);
    h.add(x);
  }
  const Summary a = summarize(v), b = h.summary();
  EXPECT_EQ(a.count, b.count);
  EXPECT_DOUBLE_EQ(a.min, b.min);
  EXPECT_DOUBLE_EQ(a.max, b.max);
  EXPECT_NEAR(a.median, b.median, 1e-12);
  EXPECT_NEAR(a.mean, b.mean, 1e-9 * a.mean);
  EXPECT_NEAR(a.variance, b.variance, 1e-9 * a.variance);
  const auto da = distribution(v, 0.05, 50), db = h.distribution(0.05, 50);
  ASSERT_EQ(da.bins.size(), db.bins.size());
  for (std::size_t i = 0; i < da.bins.size(); ++i)
    EXPECT_EQ(da.bins[i].count, db.bins[i].count) << i;
}

}  // namespace
}  // namespace commgauge::stats
