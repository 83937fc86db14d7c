// The collective schedules, executed together for every member: they must complete (with
// buffered and with synchronous sends), agree on every message's size, move the bytes the
// algorithm moves, and carry every contribution to where the operation says it ends up.

#include <gtest/gtest.h>

#include <bitset>
#include <deque>
#include <map>

#include "collectives/algorithms.hpp"

namespace commgauge::collectives {
namespace {

using Knowledge = std::bitset<64>;

struct Outcome {
  bool completed = false;
  std::vector<Knowledge> knows;         ///< contributions each member has seen
  std::vector<std::uint64_t> received;  ///< bytes each member received
};

struct Message {
  std::uint64_t bytes;
  Knowledge knows;
  std::size_t sender_step;
  bool consumed = false;
};

/// Runs every member's schedule. Members are world ranks 100 + index (not their index, to
/// catch a mix-up). `synchronous`: a send completes only once its receiver took it.
Outcome execute(Collective base, Algorithm a, bool synchronous) {
  const std::size_t n = base.members.size();
  std::vector<std::vector<Step>> plans(n);
  for (std::size_t i = 0; i < n; ++i) {
    Collective c = base;
    c.me = i;
    plans[i] = schedule(c, a);
  }
  auto index_of = [&](std::int32_t rank) { return static_cast<std::size_t>(rank - 100); };
  Outcome out;
  out.knows.resize(n);
  out.received.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    out.knows[i].set(i);
  std::map<std::pair<std::size_t, std::size_t>, std::deque<std::shared_ptr<Message>>> channels;
  std::vector<std::size_t> pos(n, 0);
  std::vector<bool> started(n, false), received(n, false);
  std::vector<std::shared_ptr<Message>> sent(n);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (pos[i] >= plans[i].size()) continue;
      const Step& s = plans[i][pos[i]];
      if (!started[i]) {
        started[i] = true;
        received[i] = s.recv_from < 0;
        sent[i] = nullptr;
        if (s.send_to >= 0) {
          sent[i] = std::make_shared<Message>(Message{s.send_bytes, out.knows[i], pos[i]});
          channels[{i, index_of(s.send_to)}].push_back(sent[i]);
        }
        progress = true;
      }
      if (!received[i]) {
        auto& q = channels[{index_of(s.recv_from), i}];
        if (!q.empty()) {
          auto m = q.front();
          q.pop_front();
          EXPECT_EQ(m->bytes, s.recv_bytes) << "member " << i << " step " << pos[i];
          m->consumed = true;
          out.knows[i] |= m->knows;
          out.received[i] += m->bytes;
          received[i] = true;
          progress = true;
        }
      }
      const bool send_done = !synchronous || sent[i] == nullptr || sent[i]->consumed;
      if (received[i] && send_done) {
        ++pos[i];
        started[i] = false;
        progress = true;
      }
    }
  }
  out.completed = true;
  for (std::size_t i = 0; i < n; ++i)
    out.completed = out.completed && pos[i] == plans[i].size();
  for (const auto& [key, q] : channels)
    EXPECT_TRUE(q.empty()) << "unreceived message " << key.first << " -> " << key.second;
  return out;
}

Collective make(Operation op, std::size_t n, std::size_t root, std::uint64_t bytes) {
  Collective c;
  c.op = op;
  for (std::size_t i = 0; i < n; ++i)
    c.members.push_back(100 + static_cast<std::int32_t>(i));
  c.root = root;
  c.bytes = bytes;
  return c;
}

Knowledge everyone(std::size_t n) {
  Knowledge k;
  for (std::size_t i = 0; i < n; ++i)
    k.set(i);
  return k;
}

class EveryAlgorithm : public ::testing::TestWithParam<Operation> {};

TEST_P(EveryAlgorithm, CompletesAndAgreesForOneToSeventeenMembers) {
  const Operation op = GetParam();
  for (Algorithm a : algorithms_for(op)) {
    for (std::size_t n = 1; n <= 17; ++n) {
      for (std::size_t root : {std::size_t{0}, n / 2, n - 1}) {
        Collective c = make(op, n, root, 1000);
        if (op == Operation::gatherv || op == Operation::scatterv || op == Operation::allgatherv ||
            op == Operation::reduce_scatter || op == Operation::alltoallv ||
            op == Operation::alltoallw) {
          for (std::size_t i = 0; i < n; ++i)
            c.counts.push_back(1000);  // sizes must agree across members: equal here
        }
        for (bool synchronous : {false, true}) {
          SCOPED_TRACE(std::string(to_string(op)) + "/" + std::string(to_string(a)) +
                       " n=" + std::to_string(n) + " root=" + std::to_string(root) +
                       (synchronous ? " synchronous" : " buffered"));
          const Outcome o = execute(c, a, synchronous);
          ASSERT_TRUE(o.completed) << "deadlock";
          const Knowledge all = everyone(n);
          for (std::size_t i = 0; i < n; ++i) {
            switch (op) {
              case Operation::bcast:
              case Operation::scatter:
              case Operation::scatterv: {
                EXPECT_TRUE(o.knows[i].test(root)) << "member " << i;
                // A binomial scatter passes a subtree's blocks through its top: member vr
                // (relative to the root) heads min(lowest set bit of vr, n - vr) members.
                const std::size_t vr = (i + n - root) % n;
                const std::size_t subtree =
                    op == Operation::scatter && a == Algorithm::binomial && vr != 0
                        ? std::min(vr & (~vr + 1), n - vr)
                        : 1;
                EXPECT_EQ(o.received[i], i == root ? 0u : 1000u * subtree) << "member " << i;
                break;
              }
              case Operation::reduce:
              case Operation::gather:
              case Operation::gatherv:
                if (i == root) {
                  EXPECT_EQ(o.knows[i], all);
                }
                break;
              case Operation::barrier:
              case Operation::allgather:
              case Operation::allgatherv:
              case Operation::alltoall:
              case Operation::alltoallv:
              case Operation::alltoallw:
              case Operation::reduce_scatter:
              case Operation::reduce_scatter_block:
                EXPECT_EQ(o.knows[i], all) << "member " << i;
                break;
              case Operation::allreduce:
                if (a != Algorithm::ring) {  // (chunked: checked by its bytes below)
                  EXPECT_EQ(o.knows[i], all) << "member " << i;
                }
                break;
              case Operation::scan:
              case Operation::exscan: {
                Knowledge prefix;
                for (std::size_t k = 0; k <= i; ++k)
                  prefix.set(k);
                EXPECT_EQ(o.knows[i], prefix) << "member " << i;
                break;
              }
            }
            if (op == Operation::allgather || op == Operation::allgatherv ||
                op == Operation::alltoall || op == Operation::alltoallv ||
                op == Operation::alltoallw) {
              EXPECT_EQ(o.received[i], 1000u * (n - 1)) << "member " << i;
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Collectives, EveryAlgorithm,
    ::testing::Values(Operation::barrier, Operation::bcast, Operation::reduce, Operation::allreduce,
                      Operation::reduce_scatter, Operation::reduce_scatter_block, Operation::scan,
                      Operation::exscan, Operation::gather, Operation::gatherv, Operation::scatter,
                      Operation::scatterv, Operation::allgather, Operation::allgatherv,
                      Operation::alltoall, Operation::alltoallv, Operation::alltoallw),
    [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST(Collectives, RingAllreduceMovesTwiceTheVectorLessTwoChunks) {
  // 10 bytes in 4 chunks of 3, 3, 2, 2: member i misses chunk i in the reduce-scatter and chunk
  // i + 1 in the allgather.
  const std::uint64_t chunks[4] = {3, 3, 2, 2};
  const Outcome o = execute(make(Operation::allreduce, 4, 0, 10), Algorithm::ring, true);
  ASSERT_TRUE(o.completed);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(o.received[i], 20 - chunks[i] - chunks[(i + 1) % 4]) << i;
}

TEST(Collectives, BinomialGatherMessagesGrowTowardsTheRoot) {
  Collective c = make(Operation::gather, 8, 0, 10);
  c.me = 0;
  const auto root_steps = schedule(c, Algorithm::binomial);
  ASSERT_EQ(root_steps.size(), 3u);  // from 1 (1 block), 2 (2 blocks), 4 (4 blocks)
  EXPECT_EQ(root_steps[0], (Step{-1, 0, 101, 10}));
  EXPECT_EQ(root_steps[1], (Step{-1, 0, 102, 20}));
  EXPECT_EQ(root_steps[2], (Step{-1, 0, 104, 40}));
}

TEST(Collectives, UnevenVectorSizesTravelAsRecorded) {
  Collective c = make(Operation::alltoallv, 3, 0, 0);
  // Member 1 sends 5 to member 2 and 7 to member 0; receives 11 from 0 and 13 from 2.
  c.me = 1;
  c.counts = {7, 0, 5};
  c.recv_counts = {11, 0, 13};
  const auto steps = schedule(c, Algorithm::pairwise);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0], (Step{102, 5, 100, 11}));
  EXPECT_EQ(steps[1], (Step{100, 7, 102, 13}));
}

TEST(Collectives, UnknownCombinationsAreRejected) {
  Collective c = make(Operation::gatherv, 4, 0, 8);
  c.counts = {8, 8, 8, 8};
  EXPECT_THROW(schedule(c, Algorithm::binomial), std::invalid_argument);
  EXPECT_THROW(schedule(make(Operation::bcast, 4, 9, 8), Algorithm::binomial),
               std::invalid_argument);
  EXPECT_EQ(parse_algorithm("recursive_doubling"), Algorithm::recursive_doubling);
  EXPECT_EQ(parse_operation("alltoallw"), Operation::alltoallw);
  EXPECT_FALSE(parse_algorithm("bruck").has_value());
}

}  // namespace
}  // namespace commgauge::collectives
