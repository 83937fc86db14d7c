// The collective schedules, executed together for every member: they must complete (with
// buffered and with synchronous sends), agree on every message's size, move the bytes the
// algorithm moves, and carry every contribution to where the operation says it ends up.

#include <gtest/gtest.h>

#include <bitset>
#include <deque>
#include <map>

#include "collective_runner.hpp"
#include "collectives/algorithms.hpp"

namespace commgauge::collectives {

// Readable failures: {send_to, send_bytes, recv_from, recv_bytes[, reduce_bytes, copy_bytes]}.
void PrintTo(const Step& s, std::ostream* os) {
  *os << "{" << s.send_to << ", " << s.send_bytes << ", " << s.recv_from << ", " << s.recv_bytes;
  if (s.reduce_bytes != 0 || s.copy_bytes != 0)
    *os << ", " << s.reduce_bytes << ", " << s.copy_bytes;
  *os << "}";
}

namespace {

using testing::Knowledge;
using testing::make;
using testing::Outcome;

/// Runs every member's schedule of algorithm `a` (collective_runner.hpp).
Outcome execute(Collective base, Algorithm a, bool synchronous) {
  const std::size_t n = base.members.size();
  std::vector<std::vector<Step>> plans(n);
  for (std::size_t i = 0; i < n; ++i) {
    Collective c = base;
    c.me = i;
    plans[i] = schedule(c, a);
  }
  Outcome out = testing::run_schedules(plans, synchronous);
  EXPECT_TRUE(out.sizes_agree) << "a receive expected another size than was sent";
  EXPECT_EQ(out.unreceived, 0u) << "unreceived messages";
  return out;
}

Knowledge everyone(std::size_t n) {
  Knowledge k;
  for (std::size_t i = 0; i < n; ++i)
    k.set(i);
  return k;
}

class EveryAlgorithm : public ::testing::TestWithParam<Operation> {};

/// Blocks alltoall's modified Bruck moves: block i travels once per bit set in i.
std::uint64_t bruck_alltoall_blocks(std::size_t n) {
  std::uint64_t blocks = 0;
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t bits = i; bits != 0; bits &= bits - 1)
      ++blocks;
  return blocks;
}

TEST_P(EveryAlgorithm, CompletesAndAgreesForOneToSeventeenMembers) {
  const Operation op = GetParam();
  for (Algorithm a : algorithms_for(op)) {
    // Segment sizes (0: whole; 300: 4 segments of 1000 bytes) and fan-outs (0: the default;
    // 3: three chains, radix 3) matter to the segmented tree algorithms only.
    for (const auto& [segment, fanout] :
         {std::pair<std::uint64_t, int>{0, 0}, {300, 0}, {0, 3}, {300, 3}}) {
      for (std::size_t n = 1; n <= 17; ++n) {
        for (std::size_t root : {std::size_t{0}, n / 2, n - 1}) {
          Collective c = make(op, n, root, 1000);
          c.segment_bytes = segment;
          c.fanout = fanout;
          if (op == Operation::gatherv || op == Operation::scatterv ||
              op == Operation::allgatherv || op == Operation::reduce_scatter ||
              op == Operation::alltoallv || op == Operation::alltoallw) {
            for (std::size_t i = 0; i < n; ++i)
              c.counts.push_back(1000);  // sizes must agree across members: equal here
          }
          // Scatter-allgather bcasts re-send chunks a member already holds: at least the message.
          const bool resends = op == Operation::bcast && (a == Algorithm::scatter_allgather ||
                                                          a == Algorithm::scatter_allgather_ring);
          for (bool synchronous : {false, true}) {
            SCOPED_TRACE(std::string(to_string(op)) + "/" + std::string(to_string(a)) +
                         " n=" + std::to_string(n) + " root=" + std::to_string(root) + " segment=" +
                         std::to_string(segment) + " fanout=" + std::to_string(fanout) +
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
                  if (resends) {
                    EXPECT_GE(o.received[i], i == root ? 0u : 1000u) << "member " << i;
                  } else {
                    EXPECT_EQ(o.received[i], i == root ? 0u : 1000u * subtree) << "member " << i;
                  }
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
                  // (chunked: checked by their bytes in focused tests)
                  if (a != Algorithm::ring && a != Algorithm::segmented_ring) {
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
              if (op == Operation::alltoall && a == Algorithm::bruck) {
                EXPECT_EQ(o.received[i], 1000u * bruck_alltoall_blocks(n)) << "member " << i;
              } else if (op == Operation::allgather || op == Operation::allgatherv ||
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
  EXPECT_FALSE(parse_algorithm("no_such_algorithm").has_value());
  EXPECT_EQ(parse_algorithm("bruck"), Algorithm::bruck);
  Collective negative = make(Operation::bcast, 4, 0, 8);
  negative.fanout = -1;
  EXPECT_THROW(schedule(negative, Algorithm::chain), std::invalid_argument);
}

/// One member's messages (its local work and which sends carry written data are checked in the
/// LocalWork and WrittenSends tests below).
std::vector<Step> steps_of(Collective c, std::size_t me, Algorithm a) {
  c.me = me;
  auto steps = schedule(c, a);
  for (auto& s : steps) {
    s.reduce_bytes = s.copy_bytes = 0;
    s.send_written = s.recv_into_sent = false;
  }
  return steps;
}

/// Over all members: the bytes combined with the operation, and those copied.
std::pair<std::uint64_t, std::uint64_t> local_work(Collective c, Algorithm a) {
  std::uint64_t reduced = 0, copied = 0;
  for (std::size_t i = 0; i < c.members.size(); ++i) {
    c.me = i;
    for (const auto& s : schedule(c, a)) {
      reduced += s.reduce_bytes;
      copied += s.copy_bytes;
      if (s.reduce_bytes > 0) {
        EXPECT_EQ(s.reduce_bytes, s.recv_bytes) << "combines what it got";
      }
    }
  }
  return {reduced, copied};
}

// A reduction over n members needs n - 1 combinations of every byte of the vector: the
// algorithms that do no redundant work combine exactly (n - 1) x the vector, whatever the tree,
// segments or halving, and combine nothing in their distribution phases (allgather, bcast,
// gather of results, results handed back to folded members).
TEST(LocalWork, ReductionsCombineEachByteNMinusOneTimes) {
  const std::uint64_t bytes = 96;
  for (std::size_t n = 2; n <= 9; ++n) {
    SCOPED_TRACE(n);
    for (Algorithm a : algorithms_for(Operation::reduce)) {
      for (std::size_t root : {std::size_t{0}, n - 1}) {
        Collective c = make(Operation::reduce, n, root, bytes);
        c.segment_bytes = 40;
        EXPECT_EQ(local_work(c, a).first, (n - 1) * bytes) << to_string(a) << " root " << root;
      }
    }
    for (Algorithm a : {Algorithm::ring, Algorithm::segmented_ring, Algorithm::rabenseifner,
                        Algorithm::binomial, Algorithm::linear}) {
      Collective c = make(Operation::allreduce, n, 0, bytes);
      c.segment_bytes = 8;
      EXPECT_EQ(local_work(c, a),
                std::make_pair((n - 1) * bytes, a == Algorithm::binomial || a == Algorithm::linear
                                                    ? std::uint64_t{0}
                                                    : n * bytes))
          << to_string(a);
    }
    for (Algorithm a :
         {Algorithm::ring, Algorithm::linear, Algorithm::recursive_halving, Algorithm::butterfly}) {
      const Collective c = make(Operation::reduce_scatter_block, n, 0, 12);
      EXPECT_EQ(local_work(c, a).first, (n - 1) * 12 * n) << to_string(a);
    }
    EXPECT_EQ(local_work(make(Operation::scan, n, 0, bytes), Algorithm::chain).first,
              (n - 1) * bytes);
    // Recursive doubling is redundant: every member of the power-of-two core combines the
    // whole vector once per round; each folded pair adds one combination.
    std::size_t pof2 = 1, rounds = 0;
    while (pof2 * 2 <= n) {
      pof2 *= 2;
      ++rounds;
    }
    EXPECT_EQ(local_work(make(Operation::allreduce, n, 0, bytes), Algorithm::recursive_doubling),
              std::make_pair((pof2 * rounds + (n - pof2)) * bytes, n * bytes));
    // Data movement combines nothing; it copies each member's own block once.
    EXPECT_EQ(local_work(make(Operation::alltoall, n, 0, 10), Algorithm::pairwise),
              std::make_pair(std::uint64_t{0}, n * 10));
    EXPECT_EQ(local_work(make(Operation::allgather, n, 0, 10), Algorithm::ring),
              std::make_pair(std::uint64_t{0}, n * 10));
    EXPECT_EQ(local_work(make(Operation::bcast, n, 0, 10), Algorithm::binomial),
              std::make_pair(std::uint64_t{0}, std::uint64_t{0}));
  }
}

// Open MPI's recursive doubling sends from a temporary copy of the vector (tmpsend) and receives
// into the vector (tmprecv); the lower member of each pair combines into the buffer it received
// into and swaps the two. Where it swapped an even number of times (none included), the result
// is in the temporary buffer and is copied back into the vector after the last step
// ("tmpsend != rbuf"; worked out by hand from ompi_coll_base_allreduce_intra_recursivedoubling).
// 2 members: 0 swaps once, 1 never. 4: 0 swaps twice (partners 1, 2), 1 once (partners 0, 3), 2
// once (partners 3, 0), 3 never. 3 members (member 0 folds into 1): 1 swaps once against 2, 2
// never; the folded member receives the result into its vector. 5 (0 folds into 1): 1 swaps
// twice (partners 2, 3) and copies back after sending the result to 0, as Open MPI does; 2 once
// (partner 4), 3 once (partner 4), 4 never.
TEST(LocalWork, RecursiveDoublingCopiesBackWhereTheResultEndedInTheTemporaryBuffer) {
  constexpr std::uint64_t kBytes = 96;
  for (const auto& [n, copying] : std::vector<std::pair<std::size_t, std::vector<bool>>>{
           {2, {false, true}},
           {4, {true, false, false, true}},
           {3, {false, false, true}},
           {5, {false, true, false, false, true}}}) {
    Collective c = make(Operation::allreduce, n, 0, kBytes);
    for (std::size_t me = 0; me < n; ++me) {
      c.me = me;
      const auto steps = schedule(c, Algorithm::recursive_doubling);
      std::uint64_t copied_back = 0;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        copied_back += steps[i].copy_back_bytes;
        // Only after the last step: the doubling's last exchange, or the folded pair's send.
        if (steps[i].copy_back_bytes > 0) {
          EXPECT_EQ(i + 1, steps.size()) << n << me;
        }
      }
      EXPECT_EQ(copied_back, copying[me] ? kBytes : 0) << n << " members, member " << me;
    }
  }
  // Without a reduction (the same exchanges of an allgather) nothing is copied back.
  Collective g = make(Operation::allgather, 4, 0, kBytes);
  for (std::size_t me = 0; me < 4; ++me) {
    g.me = me;
    for (const auto& s : schedule(g, Algorithm::recursive_doubling))
      EXPECT_EQ(s.copy_back_bytes, 0u);
  }
}

// Open MPI's recursive doubling sends from the buffer that holds the result so far: its malloc'ed
// temporary at first, the vector after a lower member's odd number of swaps (by hand from
// ompi_coll_base_allreduce_intra_recursivedoubling, as above). Per member, each step's flag.
TEST(LocalWork, RecursiveDoublingSendsFromItsTemporaryUntilTheResultMovesToTheVector) {
  constexpr std::uint64_t kBytes = 96;
  for (const auto& [n, flags] : std::vector<std::pair<std::size_t, std::vector<std::vector<bool>>>>{
           {2, {{true}, {true}}},
           {4, {{true, false}, {true, true}, {true, false}, {true, true}}},
           // 3: member 0 folds into 1 (sends from its temporary, receives the result); 1
           // receives, exchanges with 2 from its temporary, swaps, and sends the result from
           // its vector.
           {3, {{true, false}, {false, true, false}, {true}}},
           // 5: 1 swaps against 2 and again against 3, so it sends the result from its
           // temporary; 3 swaps against 4 before its second exchange.
           {5,
            {{true, false},
             {false, true, false, true},
             {true, true},
             {true, false},
             {true, true}}}}) {
    Collective c = make(Operation::allreduce, n, 0, kBytes);
    for (std::size_t me = 0; me < n; ++me) {
      c.me = me;
      const auto steps = schedule(c, Algorithm::recursive_doubling);
      ASSERT_EQ(steps.size(), flags[me].size()) << n << " members, member " << me;
      for (std::size_t i = 0; i < steps.size(); ++i)
        EXPECT_EQ(steps[i].send_from_temporary, flags[me][i])
            << n << " members, member " << me << ", step " << i;
    }
  }
  // An allgather's exchanges send from the caller's buffers.
  Collective g = make(Operation::allgather, 4, 0, kBytes);
  for (std::size_t me = 0; me < 4; ++me) {
    g.me = me;
    for (const auto& s : schedule(g, Algorithm::recursive_doubling))
      EXPECT_FALSE(s.send_from_temporary);
  }
}

// Ring allreduce of 64 B on 2 members, by hand: copy the vector, swap halves and combine the
// half received, then swap the reduced halves.
TEST(LocalWork, TwoMemberRingAllreduceByHand) {
  Collective c = make(Operation::allreduce, 2, 0, 64);
  c.me = 0;
  // Both halves it sends are written in the call: the copy's, then the combined one; the
  // reduced half arrives into the half it sent first.
  EXPECT_EQ(schedule(c, Algorithm::ring),
            (std::vector<Step>{{101, 32, 101, 32, 32, 64, false, true, false},
                               {101, 32, 101, 32, 0, 0, false, true, true}}));
}

/// One member's `flag` on each step that has a `peer` (a send or a receive), in order.
std::vector<bool> flags_of(Collective c, std::size_t me, Algorithm a, std::int32_t Step::*peer,
                           bool Step::*flag) {
  c.me = me;
  std::vector<bool> out;
  for (const Step& s : schedule(c, a))
    if (s.*peer >= 0) out.push_back(s.*flag);
  return out;
}

// Which sends carry data the member wrote earlier in the call (a pulled transfer of it costs
// written_send_us_per_byte more): Open MPI's coll/base sends from the result vector after
// copying into it, forwards what it received, sends partial results; a root sends the caller's
// buffer, and pairwise/linear alltoall send every block from the caller's send buffer.
std::vector<bool> written_of(Collective c, std::size_t me, Algorithm a) {
  return flags_of(c, me, a, &Step::send_to, &Step::send_written);
}

// Which receives go into a block the member sent earlier in the call: an allreduce's allgather
// phase (ring, segmented ring, Rabenseifner); not a plain allgather's, nor recursive doubling's.
std::vector<bool> into_sent_of(Collective c, std::size_t me, Algorithm a) {
  return flags_of(c, me, a, &Step::recv_from, &Step::recv_into_sent);
}

TEST(ReceivesIntoSent, AreTheAllgatherPhaseOfAnAllreduce) {
  // Ring on 3: two reduce-scatter steps, then two allgather steps into the blocks sent.
  EXPECT_EQ(into_sent_of(make(Operation::allreduce, 3, 0, 96), 1, Algorithm::ring),
            (std::vector<bool>{false, false, true, true}));
  Collective segmented = make(Operation::allreduce, 2, 0, 64);
  segmented.segment_bytes = 16;  // two phases of the reduce-scatter, then the allgather
  EXPECT_EQ(into_sent_of(segmented, 0, Algorithm::segmented_ring),
            (std::vector<bool>{false, false, true}));
  // Rabenseifner on 4: two halving steps, two doubling steps back into what it gave away.
  EXPECT_EQ(into_sent_of(make(Operation::allreduce, 4, 0, 64), 2, Algorithm::rabenseifner),
            (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(into_sent_of(make(Operation::allreduce, 4, 0, 64), 2, Algorithm::recursive_doubling),
            (std::vector<bool>{false, false}));
  EXPECT_EQ(into_sent_of(make(Operation::allgather, 3, 0, 8), 1, Algorithm::ring),
            (std::vector<bool>{false, false}));
}

TEST(WrittenSends, FollowWhatTheMemberCopiedReceivedOrCombined) {
  // Recursive doubling allreduce on 4: the copy, then each combined result.
  EXPECT_EQ(written_of(make(Operation::allreduce, 4, 0, 64), 1, Algorithm::recursive_doubling),
            (std::vector<bool>{true, true}));
  // Binomial bcast from 0 on 4: the root sends the caller's buffer; 2 forwards what it received.
  EXPECT_EQ(written_of(make(Operation::bcast, 4, 0, 64), 0, Algorithm::binomial),
            (std::vector<bool>{false, false}));
  EXPECT_EQ(written_of(make(Operation::bcast, 4, 0, 64), 2, Algorithm::binomial),
            (std::vector<bool>{true}));
  // Binomial reduce to 0 on 4: a leaf sends its own vector, 2 its partial result.
  EXPECT_EQ(written_of(make(Operation::reduce, 4, 0, 64), 3, Algorithm::binomial),
            (std::vector<bool>{false}));
  EXPECT_EQ(written_of(make(Operation::reduce, 4, 0, 64), 2, Algorithm::binomial),
            (std::vector<bool>{true}));
  // Ring allgather: the own block after its copy into the result, then forwarded blocks.
  EXPECT_EQ(written_of(make(Operation::allgather, 3, 0, 8), 1, Algorithm::ring),
            (std::vector<bool>{true, true}));
  // Pairwise and linear alltoall: every block from the caller's buffer, although they copy and
  // receive; Bruck sends what it rotated into its temporary buffer.
  EXPECT_EQ(written_of(make(Operation::alltoall, 3, 0, 8), 0, Algorithm::pairwise),
            (std::vector<bool>{false, false}));
  EXPECT_EQ(written_of(make(Operation::alltoall, 3, 0, 8), 0, Algorithm::linear),
            (std::vector<bool>{false, false}));
  // A zero-byte invitation received writes nothing: linear_sync's members send their own data
  // (in its two segments).
  Collective gather = make(Operation::gather, 3, 0, 8);
  EXPECT_EQ(written_of(gather, 1, Algorithm::linear_sync), (std::vector<bool>{false, false}));
}

/// Each member's total bytes received when all run together.
std::vector<std::uint64_t> received_by_all(const Collective& c, Algorithm a) {
  const Outcome o = execute(c, a, true);
  EXPECT_TRUE(o.completed);
  return o.received;
}

// The Open MPI coll/base algorithms, hand-computed on small cases (members are ranks 100 + i).

TEST(Collectives, SplitBinaryTreeSendsHalvesDownTheSubtreesThenTwinsSwap) {
  // n = 4: tree 0 -> {1, 2}, 1 -> {3}; halves of 5 bytes; 1 <-> 2 swap; 3 gets half 1 from 0.
  const Collective c = make(Operation::bcast, 4, 0, 10);
  EXPECT_EQ(steps_of(c, 0, Algorithm::split_binary_tree),
            (std::vector<Step>{{101, 5, -1, 0}, {102, 5, -1, 0}, {103, 5, -1, 0}}));
  EXPECT_EQ(steps_of(c, 1, Algorithm::split_binary_tree),
            (std::vector<Step>{{-1, 0, 100, 5}, {103, 5, -1, 0}, {102, 5, 102, 5}}));
  EXPECT_EQ(steps_of(c, 3, Algorithm::split_binary_tree),
            (std::vector<Step>{{-1, 0, 101, 5}, {-1, 0, 100, 5}}));
  // Odd halves (11 bytes: 6 + 5) and an odd size: everyone but the root swaps.
  const Collective odd = make(Operation::bcast, 5, 0, 11);
  EXPECT_EQ(steps_of(odd, 4, Algorithm::split_binary_tree),
            (std::vector<Step>{{-1, 0, 102, 5}, {103, 5, 103, 6}}));
}

TEST(Collectives, PipelineForwardsSegmentSWhileReceivingSegmentSPlusOne) {
  Collective c = make(Operation::bcast, 3, 0, 10);
  c.segment_bytes = 4;  // segments 4, 4, 2
  EXPECT_EQ(
      steps_of(c, 1, Algorithm::pipeline),
      (std::vector<Step>{{-1, 0, 100, 4}, {102, 4, 100, 4}, {102, 4, 100, 2}, {102, 2, -1, 0}}));
  EXPECT_EQ(steps_of(c, 0, Algorithm::pipeline),
            (std::vector<Step>{{101, 4, -1, 0}, {101, 4, -1, 0}, {101, 2, -1, 0}}));
  // Reduce: the inner member sends segment s - 1 up while receiving segment s.
  c.op = Operation::reduce;
  EXPECT_EQ(
      steps_of(c, 1, Algorithm::pipeline),
      (std::vector<Step>{{-1, 0, 102, 4}, {100, 4, 102, 4}, {100, 4, 102, 2}, {100, 2, -1, 0}}));
}

TEST(Collectives, OpenMpiTreesHaveTheShapesOfCollBaseTopo) {
  auto first_sends = [](const std::vector<Step>& steps) {
    std::vector<std::int32_t> to;
    for (const Step& s : steps)
      if (s.send_to >= 0) to.push_back(s.send_to - 100);
    return to;
  };
  // k-nomial, radix 4, n = 10 (the example in coll_base_topo.c): 0 -> 4 8 1 2 3, 4 -> 5 6 7.
  const Collective ten = make(Operation::bcast, 10, 0, 8);
  EXPECT_EQ(first_sends(steps_of(ten, 0, Algorithm::knomial)),
            (std::vector<std::int32_t>{4, 8, 1, 2, 3}));
  EXPECT_EQ(first_sends(steps_of(ten, 4, Algorithm::knomial)),
            (std::vector<std::int32_t>{5, 6, 7}));
  EXPECT_EQ(first_sends(steps_of(ten, 8, Algorithm::knomial)), (std::vector<std::int32_t>{9}));
  // Open MPI's binomial, n = 8: 0 -> 1 2 4 (nearest first), 1 -> 3 5, 3 -> 7.
  const Collective eight = make(Operation::bcast, 8, 0, 8);
  EXPECT_EQ(first_sends(steps_of(eight, 0, Algorithm::ompi_binomial)),
            (std::vector<std::int32_t>{1, 2, 4}));
  EXPECT_EQ(first_sends(steps_of(eight, 1, Algorithm::ompi_binomial)),
            (std::vector<std::int32_t>{3, 5}));
  EXPECT_EQ(first_sends(steps_of(eight, 3, Algorithm::ompi_binomial)),
            (std::vector<std::int32_t>{7}));
  EXPECT_EQ(steps_of(eight, 6, Algorithm::ompi_binomial), (std::vector<Step>{{-1, 0, 102, 8}}));
  // Binary tree (level order), n = 7: 0 -> 1 2, 1 -> 3 5, 2 -> 4 6.
  const Collective seven = make(Operation::bcast, 7, 0, 8);
  EXPECT_EQ(first_sends(steps_of(seven, 1, Algorithm::binary_tree)),
            (std::vector<std::int32_t>{3, 5}));
  EXPECT_EQ(first_sends(steps_of(seven, 2, Algorithm::binary_tree)),
            (std::vector<std::int32_t>{4, 6}));
  // Three chains from the root, n = 8: 7 members in chains 1-2-3, 4-5, 6-7.
  Collective chains = make(Operation::bcast, 8, 0, 8);
  chains.fanout = 3;
  EXPECT_EQ(first_sends(steps_of(chains, 0, Algorithm::chain)),
            (std::vector<std::int32_t>{1, 4, 6}));
  EXPECT_EQ(first_sends(steps_of(chains, 3, Algorithm::chain)), (std::vector<std::int32_t>{}));
  EXPECT_EQ(steps_of(chains, 5, Algorithm::chain), (std::vector<Step>{{-1, 0, 104, 8}}));
  // In-order binary reduce, n = 4, root 0: 3 <- {2, 1}, 1 <- 0; then 3 hands the result to 0.
  const Collective reduce = make(Operation::reduce, 4, 0, 8);
  EXPECT_EQ(steps_of(reduce, 3, Algorithm::in_order_binary),
            (std::vector<Step>{{-1, 0, 102, 8}, {-1, 0, 101, 8}, {100, 8, -1, 0}}));
  EXPECT_EQ(steps_of(reduce, 0, Algorithm::in_order_binary),
            (std::vector<Step>{{101, 8, -1, 0}, {-1, 0, 103, 8}}));
}

TEST(Collectives, RabenseifnerHalvesThenDoubles) {
  // n = 4, 8 bytes: keep 4 / give 4 with 1, keep 2 / give 2 with 2, then back.
  const Collective four = make(Operation::allreduce, 4, 0, 8);
  EXPECT_EQ(
      steps_of(four, 0, Algorithm::rabenseifner),
      (std::vector<Step>{{101, 4, 101, 4}, {102, 2, 102, 2}, {102, 2, 102, 2}, {101, 4, 101, 4}}));
  // n = 3: member 1 hands member 0 half the vector, sits out, gets the result at the end.
  const Collective three = make(Operation::allreduce, 3, 0, 8);
  EXPECT_EQ(steps_of(three, 1, Algorithm::rabenseifner),
            (std::vector<Step>{{100, 4, 100, 4}, {100, 4, -1, 0}, {-1, 0, 100, 8}}));
  EXPECT_EQ(
      steps_of(three, 0, Algorithm::rabenseifner),
      (std::vector<Step>{
          {101, 4, 101, 4}, {-1, 0, 101, 4}, {102, 4, 102, 4}, {102, 4, 102, 4}, {101, 8, -1, 0}}));
  // Below p' bytes Open MPI falls back to the linear allreduce.
  const Collective tiny = make(Operation::allreduce, 4, 0, 3);
  EXPECT_EQ(steps_of(tiny, 2, Algorithm::rabenseifner), steps_of(tiny, 2, Algorithm::linear));
  // Reduce to a root that sat out (n = 3, root 1): member 0 hands it its part, and member 2
  // sends to the root in member 0's place.
  Collective reduce = make(Operation::reduce, 3, 1, 8);
  EXPECT_EQ(
      steps_of(reduce, 1, Algorithm::rabenseifner),
      (std::vector<Step>{{100, 4, 100, 4}, {100, 4, -1, 0}, {-1, 0, 100, 4}, {-1, 0, 102, 4}}));
  EXPECT_EQ(
      steps_of(reduce, 0, Algorithm::rabenseifner),
      (std::vector<Step>{{101, 4, 101, 4}, {-1, 0, 101, 4}, {102, 4, 102, 4}, {101, 4, -1, 0}}));
  EXPECT_EQ(steps_of(reduce, 2, Algorithm::rabenseifner),
            (std::vector<Step>{{100, 4, 100, 4}, {101, 4, -1, 0}}));
}

TEST(Collectives, SegmentedRingCutsEachBlockIntoPhases) {
  // 12 bytes, n = 3, 2-byte segments: 2 phases of 2-byte slices, then the 4-byte blocks.
  Collective c = make(Operation::allreduce, 3, 0, 12);
  c.segment_bytes = 2;
  EXPECT_EQ(steps_of(c, 0, Algorithm::segmented_ring), (std::vector<Step>{{101, 2, 102, 2},
                                                                          {101, 2, 102, 2},
                                                                          {101, 2, 102, 2},
                                                                          {101, 2, 102, 2},
                                                                          {101, 4, 102, 4},
                                                                          {101, 4, 102, 4}}));
  // Without segments (what the tuned rules pass) it is the plain ring.
  c.segment_bytes = 0;
  EXPECT_EQ(steps_of(c, 1, Algorithm::segmented_ring), steps_of(c, 1, Algorithm::ring));
}

TEST(Collectives, BruckAndNeighborExchangeMoveEachBlockOnce) {
  Collective v = make(Operation::allgatherv, 5, 0, 0);
  v.counts = {1, 2, 3, 4, 5};
  // Member 0: at distance 1 its block to 4 and block 1 from 1; at 2 blocks 0-1 to 3 and 2-3
  // from 2; at 4 block 0 to 1 and block 4 from 4.
  EXPECT_EQ(steps_of(v, 0, Algorithm::bruck),
            (std::vector<Step>{{104, 1, 101, 2}, {103, 3, 102, 7}, {101, 1, 104, 5}}));
  const auto got = received_by_all(v, Algorithm::bruck);
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_EQ(got[i], 15u - v.counts[i]) << i;
  Collective even = make(Operation::allgatherv, 4, 0, 0);
  even.counts = {1, 2, 3, 4};
  EXPECT_EQ(steps_of(even, 0, Algorithm::neighbor_exchange),
            (std::vector<Step>{{101, 1, 101, 2}, {103, 3, 103, 7}}));
  EXPECT_EQ(steps_of(even, 3, Algorithm::neighbor_exchange),
            (std::vector<Step>{{102, 4, 102, 3}, {100, 7, 100, 3}}));
  const auto pairs = received_by_all(even, Algorithm::neighbor_exchange);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(pairs[i], 10u - even.counts[i]) << i;
  // Modified Bruck alltoall, n = 4: blocks 1 and 3 at distance 1, blocks 2 and 3 at 2.
  const Collective all = make(Operation::alltoall, 4, 0, 10);
  EXPECT_EQ(steps_of(all, 0, Algorithm::bruck),
            (std::vector<Step>{{101, 20, 103, 20}, {102, 20, 102, 20}}));
}

TEST(Collectives, ReduceScatterHalvingAndButterflyOnThreeMembers) {
  Collective c = make(Operation::reduce_scatter, 3, 0, 6);
  c.counts = {1, 2, 3};
  // Member 0 hands its vector to 1 and gets block 0 back; 1 and 2 split blocks {0, 1} / {2}.
  EXPECT_EQ(steps_of(c, 0, Algorithm::recursive_halving),
            (std::vector<Step>{{101, 6, -1, 0}, {-1, 0, 101, 1}}));
  EXPECT_EQ(steps_of(c, 1, Algorithm::recursive_halving),
            (std::vector<Step>{{-1, 0, 100, 6}, {102, 3, 102, 3}, {100, 1, -1, 0}}));
  EXPECT_EQ(steps_of(c, 0, Algorithm::butterfly),
            (std::vector<Step>{{101, 6, -1, 0}, {-1, 0, 101, 1}}));
  EXPECT_EQ(steps_of(c, 1, Algorithm::butterfly),
            (std::vector<Step>{{-1, 0, 100, 6}, {102, 3, 102, 3}, {100, 1, -1, 0}}));
  EXPECT_EQ(steps_of(c, 2, Algorithm::butterfly), (std::vector<Step>{{101, 3, 101, 3}}));
  // reduce_scatter_block, n = 4, 3-byte blocks: the butterfly halves 12 bytes twice; recursive
  // doubling exchanges all but the two subtrees' blocks: 3 blocks, then 2.
  const Collective block = make(Operation::reduce_scatter_block, 4, 0, 3);
  EXPECT_EQ(steps_of(block, 1, Algorithm::butterfly),
            (std::vector<Step>{{100, 6, 100, 6}, {103, 3, 103, 3}}));
  EXPECT_EQ(steps_of(block, 0, Algorithm::recursive_doubling),
            (std::vector<Step>{{101, 9, 101, 9}, {102, 6, 102, 6}}));
}

TEST(Collectives, LinearSyncGatherInvitesEachMemberInTurn) {
  Collective c = make(Operation::gather, 3, 0, 10);
  c.segment_bytes = 4;  // the first segment
  EXPECT_EQ(steps_of(c, 1, Algorithm::linear_sync),
            (std::vector<Step>{{-1, 0, 100, 0}, {100, 4, -1, 0}, {100, 6, -1, 0}}));
  EXPECT_EQ(
      steps_of(c, 0, Algorithm::linear_sync),
      (std::vector<Step>{{101, 0, 101, 4}, {102, 0, 102, 4}, {-1, 0, 101, 6}, {-1, 0, 102, 6}}));
}

TEST(Collectives, ScatterAllgatherBcastScattersChunksThenDoubles) {
  // n = 4, 8 bytes: 2-byte chunks; the root sends chunks 2-3 to 2 and chunk 1 to 1.
  const Collective c = make(Operation::bcast, 4, 0, 8);
  EXPECT_EQ(
      steps_of(c, 0, Algorithm::scatter_allgather),
      (std::vector<Step>{{102, 4, -1, 0}, {101, 2, -1, 0}, {101, 2, 101, 2}, {102, 4, 102, 4}}));
  EXPECT_EQ(
      steps_of(c, 2, Algorithm::scatter_allgather),
      (std::vector<Step>{{-1, 0, 100, 4}, {103, 2, -1, 0}, {103, 2, 103, 2}, {100, 4, 100, 4}}));
  EXPECT_EQ(
      steps_of(c, 1, Algorithm::scatter_allgather_ring),
      (std::vector<Step>{{-1, 0, 100, 2}, {102, 2, 100, 2}, {102, 2, 100, 2}, {102, 2, 100, 2}}));
}

TEST(Collectives, SegmentsDoNotChangeTheDefaultBinomialWithoutThem) {
  // One segment: the MPICH trees exactly as before; several: the same tree, segment by segment.
  Collective c = make(Operation::bcast, 6, 2, 9);
  for (std::size_t me = 0; me < 6; ++me) {
    Collective whole = c;
    whole.segment_bytes = 9;
    EXPECT_EQ(steps_of(whole, me, Algorithm::binomial), steps_of(c, me, Algorithm::binomial));
  }
  c.segment_bytes = 5;  // 5 + 4; root 2's children, largest subtree first: 0 (+4), 4 (+2), 3 (+1)
  EXPECT_EQ(steps_of(c, 2, Algorithm::binomial), (std::vector<Step>{{100, 5, -1, 0},
                                                                    {104, 5, -1, 0},
                                                                    {103, 5, -1, 0},
                                                                    {100, 4, -1, 0},
                                                                    {104, 4, -1, 0},
                                                                    {103, 4, -1, 0}}));
}

}  // namespace
}  // namespace commgauge::collectives
