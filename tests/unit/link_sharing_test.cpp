// sim::LinkSharing: transfers sharing the nodes' links over time (seed 003's models), checked
// against hand computation and, on random start/finish sequences, against the model evaluated on
// the whole active set after every step.

#include <cmath>
#include <cstdio>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "model/sharing.hpp"
#include "sim/link_sharing.hpp"

namespace commgauge::sim {
namespace {

using namespace model::literals;

using Changes = std::vector<LinkSharing::Change>;

LinkSharing make(const std::string& name) {
  return LinkSharing(model::make_sharing_model(name, {}));
}

/// The change reported for `flow` (fails the test if there is none).
LinkSharing::Change change_of(const Changes& changes, std::uint32_t flow) {
  for (const auto& c : changes) {
    if (c.flow == flow) return c;
  }
  ADD_FAILURE() << "no change for flow " << flow;
  return {flow, Picoseconds{-1}, 0};
}

std::set<std::uint32_t> flows_in(const Changes& changes) {
  std::set<std::uint32_t> s;
  for (const auto& c : changes)
    s.insert(c.flow);
  return s;
}

TEST(LinkSharing, SingleFlowEndsAfterItsWork) {
  LinkSharing ls = make("fair");
  Changes ch;
  ls.start(7, 0, 1, 1000_ps, 50_ps, ch);
  ASSERT_EQ(ch.size(), 1u);
  EXPECT_EQ(ch[0].flow, 7u);
  EXPECT_EQ(ch[0].end, 1050_ps);
  EXPECT_EQ(ls.rate(7), 1.0);
  EXPECT_EQ(ls.active(), 1u);
  EXPECT_TRUE(ls.finish(7, ch[0].version, 1050_ps, ch));
  EXPECT_TRUE(ch.empty());
  EXPECT_EQ(ls.active(), 0u);
  EXPECT_FALSE(ls.is_active(7));
}

TEST(LinkSharing, FairTwoFlowsFromOneSourceEqualWork) {
  LinkSharing ls = make("fair");
  Changes ch;
  const Picoseconds w{1000};
  ls.start(0, 0, 1, w, 0_ps, ch);
  const std::uint64_t first_version = ch.at(0).version;
  ls.start(1, 0, 2, w, 0_ps, ch);
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ls.rate(0), 0.5);
  EXPECT_EQ(ls.rate(1), 0.5);
  EXPECT_EQ(change_of(ch, 0).end, 2 * w);
  EXPECT_EQ(change_of(ch, 1).end, 2 * w);
  EXPECT_GT(change_of(ch, 0).version, first_version);
  // Flow 0 ends at 2W; flow 1 is then alone with no work left: same end, new version.
  const std::uint64_t v1 = change_of(ch, 1).version;
  ASSERT_TRUE(ls.finish(0, change_of(ch, 0).version, 2 * w, ch));
  ASSERT_EQ(ch.size(), 1u);
  EXPECT_EQ(ch[0].flow, 1u);
  EXPECT_EQ(ch[0].end, 2 * w);
  EXPECT_NE(ch[0].version, v1);
  EXPECT_EQ(ls.rate(1), 1.0);
  const std::uint64_t v1_new = ch[0].version;
  EXPECT_FALSE(ls.finish(1, v1, 2 * w, ch));  // the event scheduled before flow 0 finished
  EXPECT_TRUE(ls.finish(1, v1_new, 2 * w, ch));
  EXPECT_EQ(ls.active(), 0u);
}

TEST(LinkSharing, FairUnequalWorkIsDynamic) {
  LinkSharing ls = make("fair");
  Changes ch;
  const Picoseconds w1{1000}, w2{3000};
  ls.start(0, 0, 1, w1, 0_ps, ch);
  ls.start(1, 0, 2, w2, 0_ps, ch);
  EXPECT_EQ(change_of(ch, 0).end, 2 * w1);
  EXPECT_EQ(change_of(ch, 1).end, 2 * w2);  // the static prediction at rate 1/2
  ASSERT_TRUE(ls.finish(0, change_of(ch, 0).version, 2 * w1, ch));
  // Flow 1 did W1 at rate 1/2 during 2 W1, then runs alone: 2 W1 + (W2 - W1).
  ASSERT_EQ(ch.size(), 1u);
  EXPECT_EQ(ch[0].end, 2 * w1 + (w2 - w1));
  EXPECT_EQ(ls.rate(1), 1.0);
}

TEST(LinkSharing, IncomingLinkIsSharedToo) {
  LinkSharing ls = make("fair");
  Changes ch;
  ls.start(0, 1, 0, 800_ps, 0_ps, ch);
  ls.start(1, 2, 0, 800_ps, 0_ps, ch);
  EXPECT_EQ(ls.rate(0), 0.5);
  EXPECT_EQ(change_of(ch, 1).end, 1600_ps);
}

TEST(LinkSharing, LaterFlowStretchesAnEarlierOne) {
  LinkSharing ls = make("fair");
  Changes ch;
  ls.start(0, 0, 1, 1000_ps, 0_ps, ch);  // alone: would end at 1000
  EXPECT_EQ(ch.at(0).end, 1000_ps);
  // At 400, A has 600 left; B (300) shares node 0's outgoing link: both at 1/2.
  ls.start(1, 0, 2, 300_ps, 400_ps, ch);
  EXPECT_EQ(change_of(ch, 0).end, Picoseconds{400 + 2 * 600});  // 1600
  EXPECT_EQ(change_of(ch, 1).end, Picoseconds{400 + 2 * 300});  // 1000
  EXPECT_DOUBLE_EQ(ls.remaining_ps(0, 1000_ps), 300);
  // B ends at 1000: A did 300 more at 1/2, has 300 left alone: 1300, 300 later than alone.
  ASSERT_TRUE(ls.finish(1, change_of(ch, 1).version, 1000_ps, ch));
  ASSERT_EQ(ch.size(), 1u);
  EXPECT_EQ(ch[0].flow, 0u);
  EXPECT_EQ(ch[0].end, 1300_ps);
}

TEST(LinkSharing, FairIsMaxMin) {
  // Node 0 sends three flows (1/3 each); 4 -> 3 shares node 3's incoming link with 0 -> 3 and
  // takes what that one leaves: 2/3.
  LinkSharing ls = make("fair");
  Changes ch;
  ls.start(0, 0, 1, 3000_ps, 0_ps, ch);
  ls.start(1, 0, 2, 3000_ps, 0_ps, ch);
  ls.start(2, 0, 3, 3000_ps, 0_ps, ch);
  ls.start(3, 4, 3, 2000_ps, 0_ps, ch);
  for (std::uint32_t f : {0u, 1u, 2u})
    EXPECT_NEAR(ls.rate(f), 1.0 / 3, 1e-12);
  EXPECT_NEAR(ls.rate(3), 2.0 / 3, 1e-12);
  EXPECT_EQ(ls.end(0), 9000_ps);
  EXPECT_EQ(ls.end(3), 3000_ps);
}

TEST(LinkSharing, StaleAndUnknownVersionsAreRejected) {
  LinkSharing ls = make("fair");
  Changes ch;
  ls.start(0, 0, 1, 1000_ps, 0_ps, ch);
  const std::uint64_t old = ch.at(0).version;
  ls.start(1, 0, 2, 1000_ps, 10_ps, ch);  // reschedules flow 0
  const std::uint64_t current = change_of(ch, 0).version;
  EXPECT_FALSE(ls.finish(0, old, 1000_ps, ch));
  EXPECT_TRUE(ch.empty());
  EXPECT_EQ(ls.active(), 2u);
  EXPECT_FALSE(ls.finish(5, 1, 1000_ps, ch));      // never started
  EXPECT_FALSE(ls.finish(99999, 1, 1000_ps, ch));  // beyond the ids seen
  EXPECT_TRUE(ls.finish(0, current, ls.end(0), ch));
  EXPECT_FALSE(ls.finish(0, current, ls.end(1), ch));  // already finished
  EXPECT_EQ(ls.stats().stale_finishes, 4u);
  // A reused id gets a fresh version: its old events stay stale.
  ls.start(0, 3, 4, 10_ps, ls.end(1), ch);
  EXPECT_NE(ch.at(0).version, current);
  EXPECT_NE(ch.at(0).version, old);
}

TEST(LinkSharing, BadCallsThrow) {
  LinkSharing ls = make("fair");
  Changes ch;
  EXPECT_THROW(ls.start(0, 2, 2, 10_ps, 0_ps, ch), std::invalid_argument);
  EXPECT_THROW(ls.start(0, -1, 2, 10_ps, 0_ps, ch), std::invalid_argument);
  EXPECT_THROW(ls.start(0, 1, 2, Picoseconds{-10}, 0_ps, ch), std::invalid_argument);
  ls.start(0, 1, 2, 10_ps, 100_ps, ch);
  EXPECT_THROW(ls.start(0, 1, 3, 10_ps, 100_ps, ch), std::invalid_argument);  // active
  EXPECT_THROW(ls.start(1, 1, 3, 10_ps, 99_ps, ch), std::invalid_argument);   // back in time
  EXPECT_THROW(ls.rate(1), std::out_of_range);
  EXPECT_THROW(LinkSharing(nullptr), std::invalid_argument);
  EXPECT_EQ(ls.active(), 1u);
}

TEST(LinkSharing, OtherComponentsAreNeverChanged) {
  LinkSharing ls = make("fair");
  Changes ch;
  ls.start(0, 0, 1, 1000_ps, 0_ps, ch);
  ls.start(1, 2, 3, 1000_ps, 0_ps, ch);
  ls.start(2, 5, 3, 1000_ps, 0_ps, ch);  // component {1, 2} through node 3's incoming link
  const std::uint64_t v1 = ls.version(1), v2 = ls.version(2);
  ls.start(3, 0, 4, 500_ps, 100_ps, ch);  // joins flow 0 only
  EXPECT_EQ(flows_in(ch), (std::set<std::uint32_t>{0, 3}));
  ASSERT_TRUE(ls.finish(3, ls.version(3), ls.end(3), ch));
  EXPECT_EQ(flows_in(ch), (std::set<std::uint32_t>{0}));
  EXPECT_EQ(ls.version(1), v1);
  EXPECT_EQ(ls.version(2), v2);
  EXPECT_EQ(ls.stats().largest_component, 2u);
}

TEST(LinkSharing, GigeTwoOutgoingFlowsGetTheModelPenalty) {
  const model::GigeModel gige({});
  LinkSharing ls(std::make_unique<model::GigeModel>(model::GigeParams{}));
  Changes ch;
  const Picoseconds w{3000};
  ls.start(0, 0, 1, w, 0_ps, ch);
  ls.start(1, 0, 2, w, 0_ps, ch);
  const std::vector<model::Flow> flows = {{0, 1}, {0, 2}};
  const std::vector<double> p = gige.model_penalties(flows);
  // seed 003 Definition 1: Delta_o = 2, both strongly slow (card 2): 2 beta = 1.5.
  EXPECT_DOUBLE_EQ(p[0], 2 * 0.75);
  EXPECT_DOUBLE_EQ(p[0], gige.penalties(flows)[0]);
  for (std::uint32_t f : {0u, 1u}) {
    EXPECT_EQ(ls.rate(f), gige.rates(flows)[f]);
    EXPECT_EQ(change_of(ch, f).end,
              Picoseconds{std::llround(static_cast<double>(w.count()) * p[f])});
    EXPECT_EQ(change_of(ch, f).end, 4500_ps);
  }
}

TEST(LinkSharing, GigeComponentReachesBeyondSharedNodes) {
  // a: 0 -> 1 and b: 0 -> 2 share node 0. c: 3 -> 2 shares nothing with a, but raises
  // Delta_i(2), which makes b the only strongly slow member of a's C_o: a's penalty drops from
  // 1.5 to 2 beta (1 - gamma_o / 1) (seed 003 Definition 1). So c's start must reschedule a.
  LinkSharing ls = make("gige");
  Changes ch;
  const Picoseconds w{4000};
  ls.start(0, 0, 1, w, 0_ps, ch);
  ls.start(1, 0, 2, w, 0_ps, ch);
  ls.start(2, 3, 2, w, 0_ps, ch);
  EXPECT_EQ(flows_in(ch), (std::set<std::uint32_t>{0, 1, 2}));
  const double beta = 0.75, go = 0.115, gi = 0.036;
  const double pa = 2 * beta * (1 - go / 1);                  // 1.3275: non-member of C_o^m
  const double pb = std::max(2 * beta * (1 + go * (2 - 1)),   // 1.6725: member, card 1
                             2 * beta * (1 + gi * (2 - 1)));  // 1.554 on the incoming side
  const double pc = 2 * beta * (1 - gi / 1);                  // 1.446: non-member of C_i^m
  EXPECT_DOUBLE_EQ(1 / ls.rate(0), pa);
  EXPECT_DOUBLE_EQ(1 / ls.rate(1), pb);
  EXPECT_DOUBLE_EQ(1 / ls.rate(2), pc);
  EXPECT_EQ(ls.end(0), 5310_ps);
  EXPECT_EQ(ls.end(1), 6690_ps);
  EXPECT_EQ(ls.end(2), 5784_ps);
}

TEST(LinkSharing, MyrinetFig5EqualsThePaper) {
  // seed 003 Figs. 5-6 (examples/schemes/fig5.sch): penalties 5, 5, 5, 2.5, 2.5, 2.5.
  const std::vector<model::Flow> flows = {{0, 3}, {0, 1}, {0, 2}, {1, 3}, {2, 3}, {1, 4}};
  LinkSharing ls = make("myrinet");
  Changes ch;
  const Picoseconds w{1000};
  for (std::uint32_t f = 0; f < flows.size(); ++f)
    ls.start(f, flows[f].source, flows[f].destination, w, 0_ps, ch);
  const std::vector<double> p = model::MyrinetModel().penalties(flows);
  const std::vector<double> paper = {5, 5, 5, 2.5, 2.5, 2.5};
  for (std::uint32_t f = 0; f < flows.size(); ++f) {
    EXPECT_EQ(1 / ls.rate(f), p[f]) << f;
    EXPECT_EQ(p[f], paper[f]) << f;
    EXPECT_EQ(ls.end(f), Picoseconds{std::llround(static_cast<double>(w.count()) * paper[f])}) << f;
  }
}

TEST(LinkSharing, MyrinetLimitErrorPropagatesAndLeavesStateIntact) {
  // Three flows from one node: three sets of states, past a limit of 2.
  LinkSharing ls(std::make_unique<model::MyrinetModel>(2));
  Changes ch;
  ls.start(0, 0, 1, 1000_ps, 0_ps, ch);
  ls.start(1, 0, 2, 1000_ps, 0_ps, ch);
  const std::uint64_t v0 = ls.version(0);
  EXPECT_THROW(ls.start(2, 0, 3, 1000_ps, 10_ps, ch), InputError);
  EXPECT_EQ(ls.active(), 2u);
  EXPECT_FALSE(ls.is_active(2));
  EXPECT_EQ(ls.rate(0), 0.5);
  EXPECT_EQ(ls.version(0), v0);
  EXPECT_EQ(ls.end(0), 2000_ps);
  EXPECT_TRUE(ls.finish(0, v0, 2000_ps, ch));
  EXPECT_EQ(ch.at(0).end, 2000_ps);
}

// ---- the incremental property: after every step, rates = model on the whole active set ----

struct Shadow {
  Picoseconds work{};
  double done = 0;      ///< integrated from the reference rates
  double ref_rate = 0;  ///< the reference model's rate, whole set, since the last step
  double ls_rate = 0;   ///< LinkSharing's rate after the last step
  Picoseconds end{};
  std::uint64_t version = 0;
};

void random_sequence(const std::string& name, int nodes, std::size_t max_active, int steps,
                     std::uint64_t seed) {
  SCOPED_TRACE(name + " nodes " + std::to_string(nodes));
  const auto reference = model::make_sharing_model(name, {});
  LinkSharing ls = make(name);
  std::mt19937_64 rng(seed);
  using Event = std::tuple<Picoseconds, std::uint32_t, std::uint64_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::map<std::uint32_t, Shadow> shadow;
  std::vector<std::uint32_t> free_ids;
  std::uint32_t next_id = 0;
  Picoseconds now{};
  Changes ch;
  std::size_t finished = 0, stale = 0;
  for (int step = 0; step < steps; ++step) {  // stale events do not count as steps
    const bool do_start = events.empty() || (shadow.size() < max_active &&
                                             std::uniform_int_distribution<int>(0, 1)(rng) == 0);
    Picoseconds t =
        do_start ? now + Picoseconds{std::uniform_int_distribution<std::int64_t>(0, 1500)(rng)}
                 : std::get<0>(events.top());
    if (!events.empty()) t = std::min(t, std::get<0>(events.top()));
    for (auto& [id, s] : shadow)
      s.done += s.ref_rate * static_cast<double>((t - now).count());
    now = t;
    if (do_start) {
      std::uint32_t id = next_id;
      if (!free_ids.empty()) {
        id = free_ids.back();
        free_ids.pop_back();
      } else {
        ++next_id;
      }
      const int src = std::uniform_int_distribution<int>(0, nodes - 1)(rng);
      int dst = std::uniform_int_distribution<int>(0, nodes - 2)(rng);
      if (dst >= src) ++dst;
      const Picoseconds work{std::uniform_int_distribution<std::int64_t>(0, 5000)(rng)};
      ls.start(id, src, dst, work, now, ch);
      shadow[id] = Shadow{work, 0, 0, 0, Picoseconds{-1}, 0};
      ASSERT_TRUE(flows_in(ch).count(id));
    } else {
      const auto [end, id, version] = events.top();
      events.pop();
      const auto it = shadow.find(id);
      const bool current = it != shadow.end() && it->second.version == version;
      ASSERT_EQ(ls.finish(id, version, now, ch), current);
      if (!current) {
        ++stale;
        ASSERT_TRUE(ch.empty());
        --step;
        continue;
      }
      // The flow did its work at the whole-set rates, to the end's rounding.
      EXPECT_NEAR(it->second.done, static_cast<double>(it->second.work.count()), 1.0);
      shadow.erase(it);
      free_ids.push_back(id);
      ++finished;
    }
    const std::set<std::uint32_t> changed = flows_in(ch);
    ASSERT_EQ(changed.size(), ch.size()) << "a flow reported twice";
    for (const auto& c : ch) {
      ASSERT_TRUE(shadow.count(c.flow));
      EXPECT_GE(c.end, now);
      Shadow& s = shadow[c.flow];
      EXPECT_GT(c.version, s.version);
      s.end = c.end;
      s.version = c.version;
      events.emplace(c.end, c.flow, c.version);
    }
    // Whole-set evaluation.
    const std::vector<std::uint32_t> ids = ls.active_flows();
    ASSERT_EQ(ids.size(), shadow.size());
    std::vector<model::Flow> all;
    for (std::uint32_t id : ids)
      all.push_back(ls.endpoints(id));
    const std::vector<double> ref = reference->rates(all);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const std::uint32_t id = ids[k];
      Shadow& s = shadow.at(id);
      const double r = ls.rate(id);
      if (name == "fair") {
        // Progressive filling over the whole set interleaves other components' steps: the
        // same max-min rates, up to the last bits.
        EXPECT_NEAR(r, ref[k], 1e-12 * ref[k]) << id;
      } else {
        EXPECT_EQ(r, ref[k]) << id;
      }
      if (changed.count(id)) {
        EXPECT_NE(r, s.ls_rate) << "reported without a rate change: " << id;
      } else {
        EXPECT_EQ(r, s.ls_rate) << "rate changed, not reported: " << id;
        EXPECT_EQ(ls.end(id), s.end);
        EXPECT_EQ(ls.version(id), s.version);
      }
      s.ls_rate = r;
      s.ref_rate = ref[k];
    }
    if (::testing::Test::HasFailure()) return;
  }
  // The sequence exercised what it is meant to: finishes, stale events (about as many as
  // finishes: every rescheduling leaves one), and components that grow, merge and split.
  EXPECT_GT(finished, static_cast<std::size_t>(steps / 4));
  EXPECT_GT(stale, 0u);
  EXPECT_GE(ls.stats().largest_component, 4u);
  EXPECT_LE(ls.stats().largest_component, max_active);
  std::printf("[ %-7s ] nodes %d: %zu finished, %zu stale, largest component %zu\n", name.c_str(),
              nodes, finished, stale, ls.stats().largest_component);
}

TEST(LinkSharing, IncrementalEqualsWholeSetFair) {
  random_sequence("fair", 6, 14, 4000, 1);    // one dense component, merging and splitting
  random_sequence("fair", 300, 60, 4000, 2);  // many small components
}

TEST(LinkSharing, IncrementalEqualsWholeSetGige) {
  random_sequence("gige", 6, 14, 4000, 3);
  random_sequence("gige", 300, 60, 4000, 4);
}

TEST(LinkSharing, IncrementalEqualsWholeSetMyrinet) {
  random_sequence("myrinet", 6, 10, 3000, 5);
  random_sequence("myrinet", 12, 16, 2000, 6);
  random_sequence("myrinet", 300, 60, 3000, 7);
}

}  // namespace
}  // namespace commgauge::sim
