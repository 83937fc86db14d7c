// A profile class's trust verdict (issue 14): hand-made self-checks and latency trials whose
// verdict and stall counts are counted by hand, and the verdict's way through a profile file.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "link_fixtures.hpp"
#include "measure/trust.hpp"
#include "profile/link_params_json.hpp"
#include "profile/profile.hpp"
#include "stats/descriptive.hpp"

namespace commgauge::measure {
namespace {

using ::testing::HasSubstr;

CurveCheck check_with_rms(double rms, std::uint64_t worst_size) {
  CurveCheck c;
  c.rms = rms;
  c.worst_size = worst_size;
  return c;
}

LatencyPoint point(std::uint64_t bytes, std::vector<double> one_way_us) {
  LatencyPoint p;
  p.size_bytes = bytes;
  p.one_way_us = std::move(one_way_us);
  p.stats = stats::summarize(p.one_way_us);
  return p;
}

TEST(Trust, ACalibratedSetCloseToItsCurvesIsTrustedWhateverItsLatencyTrials) {
  // 1 B: median 2 us, one trial of 1800 us (900 x, a stall) and one of 150 us (75 x, not one).
  const std::vector<LatencyPoint> latency{point(1, {2, 2, 2, 150, 1800, 2, 2}),
                                          point(8, {3, 3, 3})};
  const Trust t = assess_trust(check_with_rms(0.12, 257), latency);
  EXPECT_TRUE(t.trusted);
  EXPECT_TRUE(t.reasons.empty());
  EXPECT_EQ(t.stalled_trials, 1u);
  EXPECT_EQ(t.latency_trials, 10u);
  EXPECT_DOUBLE_EQ(t.worst_stall_us, 1800);
  EXPECT_DOUBLE_EQ(t.rms_deviation, 0.12);
  // The bound itself is trusted: at most a fifth.
  EXPECT_TRUE(assess_trust(check_with_rms(0.20, 257), latency).trusted);
}

TEST(Trust, ASetThatMissesItsCurvesIsNotTrustedAndTheStallsAreNamed) {
  const std::vector<LatencyPoint> latency{point(1, {2.5, 2.5, 2.6, 1877, 2.4}),
                                          point(16, {2.6, 2100, 2.6, 2.7})};
  const Trust t = assess_trust(check_with_rms(0.6163, 1024), latency);
  EXPECT_FALSE(t.trusted);
  ASSERT_EQ(t.reasons.size(), 2u);
  EXPECT_THAT(t.reasons[0], HasSubstr("61.6 % rms"));
  EXPECT_THAT(t.reasons[0], HasSubstr("worst at 1024 B"));
  EXPECT_EQ(t.stalled_trials, 2u);
  EXPECT_EQ(t.latency_trials, 9u);
  EXPECT_DOUBLE_EQ(t.worst_stall_us, 2100);
  EXPECT_THAT(t.reasons[1], HasSubstr("time-sliced: 2 of 9 latency trials (22 %)"));
  EXPECT_THAT(t.reasons[1], HasSubstr("up to 2100 us"));
  // Without stalls the verdict says only what the self-check shows.
  const Trust quiet = assess_trust(check_with_rms(0.35, 8), {point(1, {2.5, 2.6, 3.0})});
  EXPECT_FALSE(quiet.trusted);
  EXPECT_EQ(quiet.reasons.size(), 1u);
  EXPECT_EQ(quiet.stalled_trials, 0u);
}

nlohmann::json profile_with_trust(const nlohmann::json& trust) {
  return {{"format", "commgauge-profile"},
          {"version", 1},
          {"link_classes",
           {{"intra_node",
             {{"link", profile::link_params_to_json(commgauge::testing::loggp_link())},
              {"source", {{"kind", "measured"}, {"link", "local"}}},
              {"loggp", {{"switches", nlohmann::json::array()}, {"trust", trust}}}}}}}};
}

TEST(Trust, AProfileCarriesTheVerdictToItsReaders) {
  const auto untrusted = profile_with_trust(
      {{"trusted", false}, {"rms_deviation", 0.5}, {"reasons", {"misses its curves"}}});
  const auto p = profile::profile_from_json(untrusted, "p.json");
  EXPECT_EQ(p.classes.at("intra_node").distrust, std::vector<std::string>{"misses its curves"});
  EXPECT_EQ(
      profile::untrusted_classes(untrusted, "p.json"),
      (std::map<std::string, std::vector<std::string>>{{"intra_node", {"misses its curves"}}}));
  const auto trusted = profile_with_trust(
      {{"trusted", true}, {"rms_deviation", 0.05}, {"reasons", nlohmann::json::array()}});
  EXPECT_TRUE(profile::untrusted_classes(trusted, "p.json").empty());
  // The schema wants the verdict itself.
  try {
    profile::profile_from_json(
        profile_with_trust({{"rms_deviation", 0.05}, {"reasons", nlohmann::json::array()}}),
        "p.json");
    ADD_FAILURE() << "a trust section without \"trusted\" was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("trusted"));
  }
}

}  // namespace
}  // namespace commgauge::measure
