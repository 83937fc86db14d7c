// model::Picoseconds: a strong type whose arithmetic never wraps. Values by hand; every
// overflow is a TimeRangeError that says what passed the range.

#include <cstdint>
#include <limits>
#include <sstream>
#include <type_traits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "link_fixtures.hpp"
#include "model/closed_forms.hpp"
#include "model/cost.hpp"
#include "model/picoseconds.hpp"

namespace commgauge::model {
namespace {

using ::testing::HasSubstr;

TEST(Picoseconds, IsNotAnInteger) {
  // No implicit conversion either way: a byte count or a tick count cannot pass for a time.
  static_assert(!std::is_convertible_v<std::int64_t, Picoseconds>);
  static_assert(!std::is_convertible_v<Picoseconds, std::int64_t>);
  static_assert(!std::is_convertible_v<Picoseconds, double>);
  static_assert(sizeof(Picoseconds) == sizeof(std::int64_t));
  static_assert(std::is_trivially_copyable_v<Picoseconds>);
  EXPECT_EQ(Picoseconds{}.count(), 0);
  EXPECT_EQ(Picoseconds::zero(), 0_ps);
}

TEST(Picoseconds, ArithmeticByHand) {
  EXPECT_EQ(1500_ps + 2500_ps, 4000_ps);
  EXPECT_EQ(1500_ps - 2500_ps, Picoseconds{-1000});
  EXPECT_EQ(-(1500_ps), Picoseconds{-1500});
  EXPECT_EQ(3 * 1500_ps, 4500_ps);
  EXPECT_EQ(1500_ps * 3, 4500_ps);
  EXPECT_EQ(4501_ps / 2, 2250_ps);  // toward zero, as integers
  EXPECT_EQ(4501_ps / 1500_ps, 3);
  EXPECT_EQ(4501_ps % 1500_ps, 1_ps);
  Picoseconds t = 10_ps;
  t += 5_ps;
  t -= 3_ps;
  t *= 4;
  EXPECT_EQ(t, 48_ps);
  EXPECT_LT(1_ps, 2_ps);
  EXPECT_EQ(std::max(3_ps, 7_ps), 7_ps);
  std::ostringstream os;
  os << 12345_ps;
  EXPECT_EQ(os.str(), "12345 ps");
}

TEST(Picoseconds, OverflowIsATimeRangeErrorNotAWrappedTime) {
  const Picoseconds top = Picoseconds::max();
  EXPECT_EQ((top - 1_ps) + 1_ps, top);  // the last representable time is fine
  EXPECT_THROW((void)(top + 1_ps), TimeRangeError);
  EXPECT_THROW((void)(Picoseconds::min() - 1_ps), TimeRangeError);
  EXPECT_THROW((void)(-Picoseconds::min()), TimeRangeError);
  EXPECT_THROW((void)(Picoseconds{std::int64_t{1} << 62} * 2), TimeRangeError);
  EXPECT_THROW((void)(4 * Picoseconds{std::int64_t{1} << 61}), TimeRangeError);
  Picoseconds t = top;
  EXPECT_THROW(t += 1_ps, TimeRangeError);
  EXPECT_EQ(t, top) << "a failed operation leaves the value as it was";
  try {
    (void)(top + 5_ps);
    FAIL() << "no error";
  } catch (const TimeRangeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("9223372036854775807 ps + 5"));
    EXPECT_THAT(e.what(), HasSubstr("range of the simulated clock"));
  }
}

// PRTT(n,d,s) = PRTT(1,0,s) + (n-1) max(o + d, G_all) (seed 000 eq. (5)): with n - 1 = 2^32 - 2
// rounds of d = 2^40 ps (about 1.1 s) each the product passes 2^63 ps. As a bare int64 it
// wrapped into a negative time; now it is an error.
TEST(Picoseconds, ClosedFormPastTheClockIsAnError) {
  const CostModel c(testing::loggp_link(5, 1.5, 4, 0.001));
  const Picoseconds d{std::int64_t{1} << 40};
  EXPECT_GT(prtt(c, 1000, d, 8), 999 * d);
  EXPECT_THROW((void)prtt(c, std::numeric_limits<std::uint32_t>::max(), d, 8), TimeRangeError);
  EXPECT_THROW((void)prtt_server_delay(c, std::numeric_limits<std::uint32_t>::max(), d, 8),
               TimeRangeError);
}

// Found by a red-team run: --receiver-late-us 1e13 rounded past 2^63 (undefined; Orw read
// 9.2e12 us), --compute-scale 1e12 named a time of -2^63 ps. A time past the simulated clock
// either way, or NaN, is its range error naming what it was; below it the rounding is exact.
TEST(Picoseconds, ConversionsFromDoublesStayInsideTheClock) {
  EXPECT_EQ(to_picoseconds(1.5), Picoseconds{1'500'000});
  EXPECT_EQ(to_picoseconds(-0.25), Picoseconds{-250'000});
  EXPECT_EQ(checked_picoseconds(2.5, "x"), Picoseconds{3});  // halves away from zero
  const double limit_us = static_cast<double>(kMaxSimulatedTimePs.count()) / 1e6;
  EXPECT_EQ(to_picoseconds(limit_us), kMaxSimulatedTimePs);
  for (double us : {1e13, -1e13, 2 * limit_us, std::numeric_limits<double>::infinity(),
                    std::numeric_limits<double>::quiet_NaN()}) {
    try {
      (void)to_picoseconds(us, "--receiver-late-us");
      ADD_FAILURE() << us << " us was converted";
    } catch (const TimeRangeError& e) {
      EXPECT_THAT(e.what(), HasSubstr("--receiver-late-us of ")) << us;
      EXPECT_THAT(e.what(), HasSubstr("passes the range of the simulated clock")) << us;
    }
  }
  EXPECT_THROW((void)checked_picoseconds(5e12 * 1e6, "a scaled computation"), TimeRangeError);
}

}  // namespace
}  // namespace commgauge::model
