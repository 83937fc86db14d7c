// Intercommunicator collectives (collectives/intercomm.hpp): every member's parts expanded into
// steps and executed together by the collective runner, with synchronous sends (the strictest
// rule); what each member learns and receives is checked against MPI's definition of the call.

#include <gtest/gtest.h>

#include <stdexcept>

#include "collective_runner.hpp"
#include "collectives/intercomm.hpp"

namespace commgauge::collectives::testing {
namespace {

// Group A: world ranks 100, 102, 104, 106; group B: 101, 103, 105 (interleaved, to catch a mix-up
// of group rank and world rank).
const std::vector<std::int32_t> kA = {100, 102, 104, 106};
const std::vector<std::int32_t> kB = {101, 103, 105};
constexpr std::size_t kRanks = 7;

bool in_a(std::int32_t world) {
  return world % 2 == 0;
}

// Every member's steps. For rooted operations the root is A's member root_in_a.
std::vector<std::vector<Step>> plans(Operation op, std::uint64_t bytes, std::size_t root_in_a = 1) {
  std::vector<std::vector<Step>> out(kRanks);
  for (std::int32_t world = kFirstRank; world < kFirstRank + static_cast<std::int32_t>(kRanks);
       ++world) {
    InterCollective c;
    c.op = op;
    c.local = in_a(world) ? kA : kB;
    c.remote = in_a(world) ? kB : kA;
    c.me = static_cast<std::size_t>(std::find(c.local.begin(), c.local.end(), world) -
                                    c.local.begin());
    c.bytes = bytes;
    if (in_a(world)) {
      c.role = c.me == root_in_a ? InterRole::root : InterRole::idle;
    } else {
      c.role = InterRole::receiver;
      c.root_world = kA[root_in_a];
    }
    auto& steps = out[static_cast<std::size_t>(world - kFirstRank)];
    for (const InterPart& part : intercomm_parts(c)) {
      if (!part.local) {
        steps.insert(steps.end(), part.steps.begin(), part.steps.end());
        continue;
      }
      Collective local;
      local.op = part.op;
      local.members = c.local;
      local.me = c.me;
      local.root = 0;
      local.bytes = part.bytes;
      const auto s = schedule(local, algorithms_for(part.op).front());
      steps.insert(steps.end(), s.begin(), s.end());
    }
  }
  return out;
}

std::size_t at(std::int32_t world) {
  return static_cast<std::size_t>(world - kFirstRank);
}

// Whether member `who` has seen the contribution of every member of `group`.
bool knows_all(const Outcome& o, std::int32_t who, const std::vector<std::int32_t>& group) {
  for (const std::int32_t m : group)
    if (!o.knows[at(who)].test(at(m))) return false;
  return true;
}

void expect_clean(const Outcome& o) {
  EXPECT_TRUE(o.completed);
  EXPECT_TRUE(o.sizes_agree);
  EXPECT_EQ(o.unreceived, 0u);
}

TEST(Intercomm, BcastReachesEveryMemberOfTheOtherGroupAndNoOneElse) {
  const auto p = plans(Operation::bcast, 1000, 1);
  const Outcome o = run_schedules(p, true);
  expect_clean(o);
  for (const std::int32_t m : kB) {
    EXPECT_TRUE(o.knows[at(m)].test(at(kA[1]))) << m;
    EXPECT_EQ(o.received[at(m)], 1000u) << m;  // once each: the root's message, then the tree
  }
  // The root sends one message, to B's first member; its group's other members do nothing.
  ASSERT_EQ(p[at(kA[1])].size(), 1u);
  EXPECT_EQ(p[at(kA[1])][0].send_to, kB[0]);
  for (const std::size_t i : {0u, 2u, 3u})
    EXPECT_TRUE(p[at(kA[i])].empty()) << kA[i];
}

TEST(Intercomm, AllreduceAndBarrierGiveEveryMemberTheOtherGroup) {
  for (const Operation op : {Operation::allreduce, Operation::barrier}) {
    const Outcome o = run_schedules(plans(op, 64), true);
    expect_clean(o);
    for (const std::int32_t m : kA)
      EXPECT_TRUE(knows_all(o, m, kB)) << to_string(op) << " " << m;
    for (const std::int32_t m : kB)
      EXPECT_TRUE(knows_all(o, m, kA)) << to_string(op) << " " << m;
  }
}

TEST(Intercomm, BarrierIsAnAllreduceOfOneInt) {
  const auto p = plans(Operation::barrier, 0);
  // The first members swap 4 bytes; nothing else crosses between the groups.
  std::uint64_t across = 0;
  for (std::size_t i = 0; i < kRanks; ++i) {
    for (const Step& s : p[i]) {
      if (s.send_to >= 0 && in_a(s.send_to) != in_a(kFirstRank + static_cast<std::int32_t>(i))) {
        EXPECT_EQ(s.send_bytes, 4u);
        ++across;
      }
    }
  }
  EXPECT_EQ(across, 2u);
}

TEST(Intercomm, ReduceAndGatherBringTheOtherGroupToTheRoot) {
  for (const Operation op : {Operation::reduce, Operation::gather}) {
    const auto p = plans(op, 100, 2);
    const Outcome o = run_schedules(p, true);
    expect_clean(o);
    EXPECT_TRUE(knows_all(o, kA[2], kB)) << to_string(op);
    // The root receives one message from B's first member: the vector, or all three blocks.
    ASSERT_EQ(p[at(kA[2])].size(), 1u);
    EXPECT_EQ(p[at(kA[2])][0].recv_from, kB[0]);
    EXPECT_EQ(p[at(kA[2])][0].recv_bytes, op == Operation::reduce ? 100u : 300u);
    EXPECT_TRUE(p[at(kA[0])].empty());
  }
}

TEST(Intercomm, ScatterGivesEveryMemberOfTheOtherGroupItsBlock) {
  const auto p = plans(Operation::scatter, 100, 0);
  const Outcome o = run_schedules(p, true);
  expect_clean(o);
  EXPECT_EQ(p[at(kA[0])].size(), 1u);
  EXPECT_EQ(p[at(kA[0])][0].send_bytes, 300u);
  for (const std::int32_t m : kB)
    EXPECT_TRUE(o.knows[at(m)].test(at(kA[0]))) << m;
  // B's first member receives all three blocks from the root, then passes on the others'.
  EXPECT_GE(o.received[at(kB[0])], 300u);
}

TEST(Intercomm, AllgatherAndAlltoallGiveEveryMemberTheOtherGroup) {
  for (const Operation op : {Operation::allgather, Operation::alltoall}) {
    const Outcome o = run_schedules(plans(op, 10), true);
    expect_clean(o);
    for (const std::int32_t m : kA)
      EXPECT_TRUE(knows_all(o, m, kB)) << to_string(op) << " " << m;
    for (const std::int32_t m : kB)
      EXPECT_TRUE(knows_all(o, m, kA)) << to_string(op) << " " << m;
  }
  // Alltoall: one block from every member of the other group, directly.
  const Outcome o = run_schedules(plans(Operation::alltoall, 10), true);
  for (const std::int32_t m : kA)
    EXPECT_EQ(o.received[at(m)], 30u) << m;
  for (const std::int32_t m : kB)
    EXPECT_EQ(o.received[at(m)], 40u) << m;
}

TEST(Intercomm, RefusesWhatItDoesNotImplementAndARootOutsideTheOtherGroup) {
  InterCollective c;
  c.op = Operation::scan;
  c.local = kA;
  c.remote = kB;
  EXPECT_THROW(intercomm_parts(c), std::invalid_argument);
  c.op = Operation::bcast;
  c.role = InterRole::receiver;
  c.root_world = kA[0];  // in the caller's own group
  EXPECT_THROW(intercomm_parts(c), std::invalid_argument);
  c.remote.clear();
  EXPECT_THROW(intercomm_parts(c), std::invalid_argument);
}

}  // namespace
}  // namespace commgauge::collectives::testing
