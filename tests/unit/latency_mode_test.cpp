// The latency mode profile's later phases are measured in (measure/latency_mode.hpp): Tukey's
// fences of loggp's rounds worked by hand, and the probe on the virtual network, whose one-way time
// is the model's to the picosecond.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "link_fixtures.hpp"
#include "measure/call_costs.hpp"
#include "measure/latency_mode.hpp"
#include "model/cost.hpp"
#include "net/virtual_network.hpp"
#include "profile/link_params_json.hpp"
#include "profile/profile.hpp"
#include "report/latency_mode_report.hpp"

namespace commgauge::measure {
namespace {

using ::testing::HasSubstr;

TEST(LatencyMode, TukeysFencesOfTheRounds) {
  // Nearest rank of 8: Q1 is the 2nd value, Q3 the 6th; IQR 4, so 2 - 6 and 6 + 6.
  const LatencyModeBand b = tukey_fences({8, 1, 7, 2, 6, 3, 5, 4}, 1);
  EXPECT_DOUBLE_EQ(b.low_us, 0);  // 2 - 6 < 0: a time is never below 0
  EXPECT_DOUBLE_EQ(b.high_us, 12);
  // 0.13-0.16 us one way: Q1 0.14 (2nd of 6), Q3 0.15 (5th), IQR 0.01.
  const LatencyModeBand fast = tukey_fences({0.16, 0.13, 0.14, 0.15, 0.145, 0.15}, 1);
  EXPECT_NEAR(fast.low_us, 0.125, 1e-12);
  EXPECT_NEAR(fast.high_us, 0.165, 1e-12);
  EXPECT_TRUE(fast.contains(0.13));
  EXPECT_FALSE(fast.contains(0.38));  // the slow mode's one-way time
  EXPECT_THROW(tukey_fences({1, 2, 3}, 1), InputError);
}

TEST(LatencyMode, TheBandComesFromLoggpsRoundsAtItsSmallestSizeHalved) {
  LoggpResult r;
  EXPECT_FALSE(latency_mode_band(r, 0.001));
  r.points.resize(2);
  r.points[0].bytes = 1;
  r.points[1].bytes = 8;
  r.points[0].rounds.prtt1 = {0.32, 0.26, 0.28, 0.30, 0.29, 0.30};  // round trips
  r.points[1].rounds.prtt1 = {9, 9, 9, 9, 9, 9};
  const auto b = latency_mode_band(r, 0.001);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->bytes, 1u);
  EXPECT_NEAR(b->low_us, 0.1245, 1e-12);  // the fences of 0.13-0.16 above, half a tick wider
  EXPECT_NEAR(b->high_us, 0.1655, 1e-12);
  // A clock of 0.04 us quantizes every round alike (IQR 0): the fences reach half of it.
  r.points[0].rounds.prtt1 = {0.28, 0.28, 0.28, 0.28, 0.28, 0.28};
  const auto coarse = latency_mode_band(r, 0.04);
  ASSERT_TRUE(coarse);
  EXPECT_NEAR(coarse->low_us, 0.12, 1e-12);
  EXPECT_NEAR(coarse->high_us, 0.16, 1e-12);
  r.points[0].rounds.prtt1.resize(3);  // too few rounds to tell a mode
  EXPECT_FALSE(latency_mode_band(r, 0.001));
}

// Probes on the virtual network: one in the band ends the wait at once; none in it lasts the
// budget (wall time: the virtual clock stands still while the pair idles).
TEST(LatencyMode, AProbeReadsTheOneWayTimeAndWaitsOnlyOutsideTheBand) {
  const model::LinkParams link = commgauge::testing::loggp_link();
  const double one_way = model::to_microseconds(model::CostModel(link).blocking_one_way(1));
  auto run = [&](LatencyModeBand band, double budget_s) {
    net::VirtualNetwork net(link);
    std::vector<ModeProbe> on_source, on_dest;
    net.run([&](net::Transport& t) {
      auto probes = await_latency_mode(t, band, budget_s, Wall::clock::now());
      (t.role() == net::Role::source ? on_source : on_dest) = probes;
    });
    EXPECT_TRUE(on_dest.empty());
    return on_source;
  };
  const auto in = run({1, one_way * 0.9, one_way * 1.1}, 10);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_NEAR(in[0].one_way_us, one_way, 1e-6);
  EXPECT_TRUE(in[0].in_band);
  const auto out = run({1, one_way * 2, one_way * 3}, 0.25);
  ASSERT_GE(out.size(), 1u);
  for (const auto& p : out) {
    EXPECT_FALSE(p.in_band);
    EXPECT_NEAR(p.one_way_us, one_way, 1e-6);
  }
  EXPECT_GE(out.back().at_s, 0.25);  // it stopped only when the budget was spent
  EXPECT_LT(out.size(), 5u);         // a probe every 100 ms at most
  EXPECT_EQ(run({1, one_way * 2, one_way * 3}, 0).size(), 1u);
}

// A boundary between phases: without a band nothing is probed (the dest learns it from the
// source), with one the pair probes at the band's size.
TEST(LatencyMode, ABoundaryProbesOnlyWithABand) {
  const model::LinkParams link = commgauge::testing::loggp_link();
  const double one_way = model::to_microseconds(model::CostModel(link).blocking_one_way(64));
  auto run = [&](std::optional<LatencyModeBand> band) {
    net::VirtualNetwork net(link);
    std::vector<ModeProbe> on_source;
    net.run([&](net::Transport& t) {
      // The dest never holds the band (as under MPI, where only the source has loggp's result).
      const bool source = t.role() == net::Role::source;
      auto probes = wait_for_latency_mode(t, {source ? band : std::nullopt, 0});
      if (source) on_source = probes;
    });
    return on_source;
  };
  EXPECT_TRUE(run(std::nullopt).empty());
  const auto probes = run(LatencyModeBand{64, 0, one_way * 2});
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_NEAR(probes[0].one_way_us, one_way, 1e-6);  // the band's 64 B, not a default size
  EXPECT_THROW(ModeWaitOptions({LatencyModeBand{0, 0, 1}, 0}).validate(), InputError);
}

PhaseModeCheck two_attempts() {
  PhaseModeCheck c;
  c.band = {1, 0.125, 0.165};
  c.probes = {{{0.38, false, 0.0}, 1, false},
              {{0.14, true, 0.1}, 1, false},
              {{0.39, false, 0.9}, 1, true},
              {{0.15, true, 1.0}, 2, false},
              {{0.145, true, 1.8}, 2, true}};
  c.attempts = 2;
  c.waited_s = 0.2;
  c.held = true;
  return c;
}

TEST(LatencyMode, TheLineNamesTheLastAttemptsProbesAndTheWait) {
  PhaseModeCheck c = two_attempts();
  const std::string held = report::latency_mode_line("call_costs", c);
  EXPECT_THAT(held, HasSubstr("the call costs were measured in loggp's (probes 0.15 us before and "
                              "0.145 after"));
  EXPECT_THAT(held, HasSubstr("0.125-0.165 us one way"));
  EXPECT_THAT(held, HasSubstr("2 of 5 probes outside it, 0.2 s of waiting, measured 2 times"));
  c.held = false;
  EXPECT_THAT(report::latency_mode_line("call_costs", c),
              HasSubstr("the call costs were NOT measured in loggp's mode"));
  EXPECT_THAT(report::latency_mode_line("call_costs", c), HasSubstr("the profile mixes two modes"));
  PhaseModeCheck quiet;
  quiet.band = {1, 0.125, 0.165};
  quiet.probes = {{{0.14, true, 0}, 1, false}, {{0.15, true, 0.5}, 1, true}};
  quiet.attempts = 1;
  quiet.held = true;
  EXPECT_EQ(report::latency_mode_line("latency", quiet),
            "latency mode: the latency part was measured in loggp's (probes 0.14 us before and "
            "0.15 after; loggp's rounds at 1 B: 0.125-0.165 us one way (Tukey's fences))\n");
  // A phase measured once after a wait, with no probe after it.
  const PhaseModeCheck once =
      phase_mode_check(quiet.band, {{0.38, false, 0}, {0.14, true, 0.1}}, 0.1);
  EXPECT_EQ(once.probes.size(), 2u);
  EXPECT_EQ(once.attempts, 1u);
  EXPECT_TRUE(once.held);
  EXPECT_EQ(report::latency_mode_line("overlap", once),
            "latency mode: overlap (LogGPO) was measured after a probe in loggp's (0.14 us; "
            "loggp's rounds at 1 B: 0.125-0.165 us one way (Tukey's fences); 1 of 2 probes "
            "outside it, 0.1 s of waiting, measured 1 time)\n");
  const PhaseModeCheck waited_out = phase_mode_check(quiet.band, {{0.38, false, 10}}, 10);
  EXPECT_FALSE(waited_out.held);
  EXPECT_THAT(report::latency_mode_line("latency", waited_out),
              HasSubstr("the latency part was NOT measured in loggp's mode (probe 0.38 us before"));
}

// The profile keeps every probe; its schema refuses what is not one.
TEST(LatencyMode, TheProfileKeepsTheCheckAndItsSchemaRefusesAMalformedOne) {
  nlohmann::json doc = {
      {"format", "commgauge-profile"},
      {"version", 1},
      {"link_classes",
       {{"intra_node",
         {{"link", profile::link_params_to_json(commgauge::testing::loggp_link())},
          {"source", {{"kind", "measured"}, {"link", "local"}}},
          {"latency_mode", report::latency_mode_json(
                               {{"overlap", two_attempts()}, {"call_costs", two_attempts()}})}}}}}};
  const profile::Profile p = profile::profile_from_json(doc, "p.json");
  const nlohmann::json back = profile::profile_to_json(p);
  const nlohmann::json& mode = back["link_classes"]["intra_node"]["latency_mode"];
  EXPECT_EQ(mode["band"]["high_us"], 0.165);
  const nlohmann::json& calls = mode["phases"]["call_costs"];
  EXPECT_EQ(calls["probes"].size(), 5u);
  EXPECT_EQ(calls["probes"][2]["after"], true);
  EXPECT_EQ(calls["attempts"], 2);
  EXPECT_TRUE(mode["phases"].contains("overlap"));
  doc["link_classes"]["intra_node"]["latency_mode"]["phases"]["call_costs"]["held"] = "yes";
  try {
    profile::profile_from_json(doc, "p.json");
    ADD_FAILURE() << "a malformed latency_mode was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("latency_mode"));
  }
}

// The options a job sends keep the band on the source: the dest learns the probe's size from
// agree_band (LatencyMode.ABoundaryProbesOnlyWithABand), and the source alone judges a probe.
TEST(LatencyMode, CallCostOptionsKeepTheBandOnTheSourceAndRefuseNoAttempt) {
  CallCostOptions o;
  o.mode = LatencyModeBand{1, 0.1, 0.2};
  o.mode_attempts = 2;
  const nlohmann::json sent = o;
  EXPECT_FALSE(sent.contains("mode"));
  const CallCostOptions back = sent.get<CallCostOptions>();
  EXPECT_FALSE(back.mode);
  EXPECT_EQ(back.mode_attempts, 2u);
  EXPECT_FALSE(nlohmann::json(ModeWaitOptions{o.mode, 1.5}).contains("band"));
  EXPECT_DOUBLE_EQ(nlohmann::json(ModeWaitOptions{o.mode, 1.5}).get<ModeWaitOptions>().wait_s, 1.5);
  o.mode_attempts = 3;
  o.mode_attempts = 0;
  EXPECT_THROW(o.validate(), InputError);
  o.mode_attempts = 1;
  o.mode_wait_s = -1;
  EXPECT_THROW(o.validate(), InputError);
  o.mode_wait_s = 10;
  o.mode->bytes = 0;  // the dest would take a probe of 0 bytes for "no probes"
  EXPECT_THROW(o.validate(), InputError);
  o.mode = LatencyModeBand{1, 0.2, 0.1};
  EXPECT_THROW(o.validate(), InputError);
}

}  // namespace
}  // namespace commgauge::measure
