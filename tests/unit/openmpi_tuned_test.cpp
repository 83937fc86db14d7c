// Open MPI 4.1's coll/tuned fixed rules (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c,
// v4.1.x): every threshold is probed on both sides, against a second transcription of the
// source written branch by branch below; then spot checks, the byte quantities, the mapping
// onto commgauge's algorithms, and the composed schedules executed for every member.

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <set>

#include "collective_runner.hpp"
#include "collectives/openmpi_tuned.hpp"

namespace commgauge::collectives {
namespace {

constexpr std::size_t kElse = 0;  // the final `else` of a communicator-size chain
constexpr std::size_t kTwo = 1;   // `if (communicator_size == 2)`

/// `if (communicator_size < comm) { if (total_dsize < s0) alg = a0; else if ... else alg = z; }`
struct Branch {
  std::size_t comm;
  std::vector<std::pair<std::uint64_t, int>> sizes;  // (s_i, a_i), in the source's order
  int otherwise;
};

struct Rule {
  const char* where;  // the decision function and branch in coll_tuned_decision_fixed.c
  Operation op;
  bool commutative;
  std::vector<Branch> branches;
};

// Transcribed from the if-chains of the v4.1.x source, one Branch per `communicator_size` test.
// clang-format off
const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {"ompi_coll_tuned_allreduce_intra_dec_fixed, if (!ompi_op_is_commute(op))",
       Operation::allreduce,
       false,
       {{4, {{131072, 3}}, 1},
        {8, {}, 3},
        {16, {{1048576, 3}}, 2},
        {128, {}, 3},
        {256, {{131072, 2}, {524288, 3}}, 2},
        {512, {{4096, 2}, {524288, 3}}, 2},
        {kElse, {{2048, 2}}, 3}}},
      {"ompi_coll_tuned_allreduce_intra_dec_fixed, else (commutative)",
       Operation::allreduce,
       true,
       {{4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}}, 6},
        {8, {{16, 4}, {8192, 3}}, 6},
        {16, {{8192, 3}}, 6},
        {32, {{64, 5}, {4096, 3}}, 6},
        {64, {{128, 5}}, 6},
        {128, {{262144, 3}}, 6},
        {256, {{131072, 2}, {262144, 3}}, 6},
        {512, {{4096, 2}}, 6},
        {2048, {{2048, 2}, {16384, 3}}, 6},
        {4096, {{2048, 2}, {4096, 5}, {16384, 3}}, 6},
        {kElse, {{2048, 2}, {16384, 5}, {32768, 3}}, 6}}},
      {"ompi_coll_tuned_alltoall_intra_dec_fixed",
       Operation::alltoall,
       true,
       {{kTwo, {{2, 2}, {4, 5}, {16, 2}, {64, 5}, {256, 2}, {4096, 5}, {32768, 2}, {262144, 4}, {1048576, 5}}, 2},
        {8, {{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}}, 1},
        {16, {{262144, 4}}, 1},
        {32, {{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}}, 4},
        {64, {{512, 3}, {524288, 1}}, 4},
        {128, {{1024, 3}, {2048, 1}, {4096, 4}, {262144, 1}}, 2},
        {256, {{1024, 3}, {2048, 4}, {262144, 1}}, 2},
        {512, {{1024, 3}, {8192, 4}, {32768, 1}}, 2},
        {1024, {{512, 3}, {8192, 4}, {16384, 1}, {131072, 4}, {262144, 1}}, 2},
        {2048, {{512, 3}, {1024, 4}, {2048, 1}, {16384, 4}, {262144, 1}}, 4},
        {4096, {{1024, 3}, {4096, 4}, {8192, 1}, {131072, 4}}, 1},
        {kElse, {{2048, 3}, {8192, 4}, {16384, 1}, {32768, 4}, {65536, 1}}, 4}}},
      {"ompi_coll_tuned_alltoallv_intra_dec_fixed (communicator size only)",
       Operation::alltoallv,
       true,
       {{4, {}, 2}, {64, {}, 1}, {128, {}, 2}, {256, {}, 1}, {1024, {}, 2}, {kElse, {}, 1}}},
      {"ompi_coll_tuned_barrier_intra_dec_fixed (communicator size only)",
       Operation::barrier,
       true,
       {{4, {}, 3}, {8, {}, 1}, {64, {}, 3}, {256, {}, 4}, {512, {}, 6}, {1024, {}, 4}, {4096, {}, 6}, {kElse, {}, 4}}},
      {"ompi_coll_tuned_bcast_intra_dec_fixed",
       Operation::bcast,
       true,
       {{4, {{32, 3}, {256, 5}, {512, 3}, {1024, 7}, {32768, 1}, {131072, 5}, {262144, 2}, {524288, 1}, {1048576, 6}}, 5},
        {8, {{64, 5}, {128, 6}, {2048, 5}, {8192, 6}, {1048576, 1}}, 2},
        {16, {{8, 7}, {64, 5}, {4096, 7}, {16384, 5}, {32768, 6}}, 1},
        {32, {{4096, 7}, {1048576, 6}}, 8},
        {64, {{2048, 6}}, 7},
        {128, {}, 7},
        {256, {{2, 6}, {16384, 5}, {32768, 1}, {65536, 5}}, 7},
        {1024, {{16384, 7}, {32768, 4}}, 7},
        {2048, {{524288, 7}}, 8},
        {4096, {{262144, 7}}, 8},
        {kElse, {{8192, 7}, {16384, 5}, {262144, 7}}, 8}}},
      {"ompi_coll_tuned_reduce_intra_dec_fixed, if (!ompi_op_is_commute(op))",
       Operation::reduce,
       false,
       {{4, {{8, 6}}, 1},
        {8, {}, 1},
        {16, {{1024, 6}, {8192, 1}, {16384, 6}, {262144, 1}}, 6},
        {128, {}, 6},
        {256, {{512, 6}, {1024, 1}}, 6},
        {kElse, {}, 6}}},
      {"ompi_coll_tuned_reduce_intra_dec_fixed, else (commutative)",
       Operation::reduce,
       true,
       {{4, {{8, 7}, {16, 4}, {32, 3}, {262144, 1}, {524288, 3}, {1048576, 2}}, 3},
        {8, {{4096, 4}, {65536, 2}, {262144, 5}, {524288, 1}, {1048576, 5}}, 1},
        {16, {{8192, 4}}, 5},
        {32, {{4096, 4}}, 5},
        {256, {}, 5},
        {512, {{8192, 5}, {16384, 6}}, 5},
        {2048, {}, 5},
        {4096, {{512, 5}, {1024, 6}, {8192, 5}, {16384, 6}}, 5},
        {kElse, {{16, 5}, {32, 6}, {1024, 5}, {2048, 6}, {8192, 5}, {16384, 6}}, 5}}},
      {"ompi_coll_tuned_reduce_scatter_intra_dec_fixed, if (!ompi_op_is_commute(op)) alg = 1",
       Operation::reduce_scatter,
       false,
       {{kElse, {}, 1}}},
      {"ompi_coll_tuned_reduce_scatter_intra_dec_fixed, else (commutative)",
       Operation::reduce_scatter,
       true,
       {{4, {{65536, 3}, {131072, 4}}, 3},
        {8, {{8, 1}, {262144, 2}}, 3},
        {32, {{262144, 2}}, 3},
        {64, {{64, 1}, {2048, 2}, {524288, 4}}, 3},
        {128, {{256, 1}, {512, 2}, {2048, 4}, {4096, 2}}, 4},
        {256, {{256, 1}, {512, 2}}, 4},
        {512, {{256, 1}, {1024, 2}}, 4},
        {1024, {{512, 1}, {2048, 2}, {8192, 4}, {16384, 2}}, 4},
        {2048, {{512, 1}, {4096, 2}, {16384, 4}, {32768, 2}}, 4},
        {4096, {{512, 1}, {4096, 2}}, 4},
        {kElse, {{1024, 1}, {8192, 2}}, 4}}},
      {"ompi_coll_tuned_reduce_scatter_block_intra_dec_fixed, if (!ompi_op_is_commute(op)) alg = 1",
       Operation::reduce_scatter_block,
       false,
       {{kElse, {}, 1}}},
      {"ompi_coll_tuned_reduce_scatter_block_intra_dec_fixed, else (commutative)",
       Operation::reduce_scatter_block,
       true,
       {{4, {{4, 2}, {8, 4}, {16, 3}, {128, 4}, {256, 3}, {4096, 4}, {8192, 3}, {131072, 4}}, 1},
        {8, {{8, 3}, {32, 2}, {256, 4}, {8192, 3}, {16384, 4}, {1048576, 3}}, 1},
        {16, {{4, 1}, {32, 3}, {128, 4}, {524288, 3}, {4194304, 1}}, 4},
        {32, {{32, 1}, {524288, 3}, {2097152, 1}, {4194304, 3}}, 4},
        {kElse, {{4, 3}, {16, 1}, {65536, 4}, {262144, 1}}, 4}}},
      {"ompi_coll_tuned_allgather_intra_dec_fixed",
       Operation::allgather,
       true,
       {{kTwo, {}, 6},
        {32, {}, 3},
        {64, {{1024, 3}, {65536, 5}}, 4},
        {128, {{512, 3}, {65536, 5}}, 4},
        {256, {{512, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4},
        {512, {{32, 3}, {128, 2}, {1024, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4},
        {1024, {{64, 3}, {256, 2}, {2048, 3}}, 5},
        {2048, {{4, 3}, {8, 2}, {16, 3}, {32, 2}, {256, 3}, {512, 2}, {4096, 3}}, 5},
        {4096, {{32, 2}, {128, 3}, {512, 2}, {4096, 3}}, 5},
        {kElse, {{2, 3}, {8, 2}, {16, 3}, {512, 2}, {4096, 3}}, 5}}},
      {"ompi_coll_tuned_allgatherv_intra_dec_fixed (per_rank_dsize)",
       Operation::allgatherv,
       true,
       {{kTwo, {{2048, 3}, {4096, 5}, {8192, 3}}, 5},
        {8, {{256, 1}, {4096, 4}, {8192, 3}, {16384, 4}, {262144, 2}}, 4},
        {16, {{1024, 1}}, 2},
        {32, {{128, 1}, {262144, 2}}, 3},
        {64, {{256, 1}, {8192, 2}}, 3},
        {128, {{256, 1}, {4096, 2}}, 3},
        {256, {{1024, 2}, {65536, 4}}, 3},
        {512, {{1024, 2}}, 3},
        {1024, {{512, 2}, {1024, 1}, {4096, 2}, {1048576, 4}}, 3},
        {kElse, {{4096, 2}}, 4}}},
      {"ompi_coll_tuned_gather_intra_dec_fixed",
       Operation::gather,
       true,
       {{4, {{2, 3}, {4, 1}, {32768, 2}, {65536, 1}, {131072, 2}}, 3},
        {8, {{1024, 2}, {8192, 1}, {32768, 2}, {262144, 1}}, 3},
        {256, {}, 2},
        {512, {{2048, 2}, {8192, 1}}, 2},
        {kElse, {}, 2}}},
      {"ompi_coll_tuned_scatter_intra_dec_fixed",
       Operation::scatter,
       true,
       {{4, {{2, 3}, {131072, 1}, {262144, 3}}, 1},
        {8, {{2048, 2}, {4096, 1}, {8192, 2}, {32768, 1}, {1048576, 3}}, 1},
        {16, {{16384, 2}, {1048576, 3}}, 1},
        {32, {{16384, 2}, {32768, 1}}, 3},
        {64, {{512, 2}, {8192, 3}, {16384, 2}}, 3},
        {kElse, {{512, 2}}, 3}}},
  };
  return r;
}

// clang-format on

int expected(const Branch& b, std::uint64_t bytes) {
  for (const auto& [below, alg] : b.sizes)
    if (bytes < below) return alg;
  return b.otherwise;
}

TEST(OpenMpiTuned, EveryThresholdOnBothSides) {
  std::size_t probes = 0;
  for (const Rule& rule : rules()) {
    std::size_t lo = 2;  // communicators of one member are coll/self's
    for (const Branch& b : rule.branches) {
      const std::size_t hi = b.comm == kElse ? 8192 : b.comm == kTwo ? 3 : b.comm;  // exclusive
      std::set<std::uint64_t> bytes = {0, 1, std::uint64_t{1} << 40};
      for (const auto& [below, alg] : b.sizes) {
        bytes.insert(below - 1);
        bytes.insert(below);
      }
      for (std::size_t n : {lo, hi - 1}) {  // both ends of the branch's communicator sizes
        for (std::uint64_t m : bytes) {
          const TunedDecision d = openmpi_tuned_decision(rule.op, n, m, rule.commutative);
          EXPECT_EQ(d.algorithm_id, expected(b, m))
              << rule.where << ": communicator_size " << n << ", total_dsize " << m;
          EXPECT_EQ(d.segment_bytes, 0u);  // every rule calls *_do_this(..., 0, 0)
          ++probes;
        }
      }
      lo = hi;
    }
  }
  EXPECT_GT(probes, 1500u);
}

// Single points, read off the source by hand.
TEST(OpenMpiTuned, SpotChecks) {
  auto id = [](Operation op, std::size_t n, std::uint64_t bytes, bool commutative = true) {
    return openmpi_tuned_decision(op, n, bytes, commutative).algorithm_id;
  };
  // allreduce, commutative, communicator_size < 32: total_dsize < 64 -> 5, < 4096 -> 3, else 6.
  EXPECT_EQ(id(Operation::allreduce, 16, 63), 5);
  EXPECT_EQ(id(Operation::allreduce, 16, 4095), 3);
  EXPECT_EQ(id(Operation::allreduce, 16, 4096), 6);
  EXPECT_EQ(openmpi_tuned_decision(Operation::allreduce, 16, 4096, true).openmpi_name,
            "rabenseifner");
  // allreduce, non-commutative, communicator_size < 4 and total_dsize >= 131072: basic_linear.
  EXPECT_EQ(id(Operation::allreduce, 3, 131072, false), 1);
  // bcast, communicator_size < 128 (from 64): knomial whatever the size, radix 4.
  EXPECT_EQ(id(Operation::bcast, 100, 1), 7);
  EXPECT_EQ(openmpi_tuned_decision(Operation::bcast, 100, 1, true).fanout, 4);
  // bcast, communicator_size < 32, total_dsize >= 1048576: scatter_allgather.
  EXPECT_EQ(id(Operation::bcast, 24, 1048576), 8);
  // reduce, commutative, communicator_size < 4, total_dsize < 8: rabenseifner.
  EXPECT_EQ(id(Operation::reduce, 2, 7), 7);
  EXPECT_EQ(openmpi_tuned_decision(Operation::reduce, 40, 100, false).openmpi_name,
            "in-order_binary");
  // alltoall, communicator_size == 2 alternates pairwise / two_proc by size.
  EXPECT_EQ(id(Operation::alltoall, 2, 3), 5);
  EXPECT_EQ(id(Operation::alltoall, 2, 200000), 4);  // < 262144: linear_sync
  EXPECT_EQ(id(Operation::alltoall, 2, 300000), 5);  // < 1048576: two_proc
  // barrier: 4..7 members linear, 256..511 tree.
  EXPECT_EQ(id(Operation::barrier, 5, 0), 1);
  EXPECT_EQ(id(Operation::barrier, 300, 0), 6);
  // Non-commutative reduce_scatter(_block): always algorithm 1.
  EXPECT_EQ(id(Operation::reduce_scatter, 64, 1 << 20, false), 1);
  EXPECT_EQ(id(Operation::reduce_scatter_block, 64, 1 << 20, false), 1);
  // Not coll/tuned's: scan, exscan, gatherv, scatterv, alltoallw.
  for (Operation op : {Operation::scan, Operation::exscan, Operation::gatherv, Operation::scatterv,
                       Operation::alltoallw}) {
    EXPECT_EQ(id(op, 8, 100), 0) << to_string(op);
  }
}

TEST(OpenMpiTuned, ByteQuantitiesOfTheCall) {
  Collective c;
  c.members = {0, 1, 2, 3};
  // reduce_scatter decides on the sum of the blocks (dsize * sum(rcounts)).
  c.op = Operation::reduce_scatter;
  c.counts = {100, 100, 100, 0};  // 300: communicator_size < 8 -> recursive_halving
  EXPECT_EQ(openmpi_tuned_decision(c, true).algorithm_id, 2);
  c.counts = {1, 2, 3, 1};  // 7 < 8 -> non-overlapping
  EXPECT_EQ(openmpi_tuned_decision(c, true).algorithm_id, 1);
  // allgatherv decides on the average contribution (per_rank_dsize = total / size).
  c.op = Operation::allgatherv;
  c.counts = {0, 0, 0, 1020};  // 255 < 256 -> default; each contribution alone would say neighbor
  EXPECT_EQ(openmpi_tuned_decision(c, true).algorithm_id, 1);
  c.counts = {0, 0, 0, 1024};  // 256 -> neighbor
  EXPECT_EQ(openmpi_tuned_decision(c, true).algorithm_id, 4);
  // alltoall decides on one peer's block, not the whole buffer.
  EXPECT_EQ(openmpi_tuned_decision(Operation::alltoall, 64, 511, true).algorithm_id, 3);
}

TEST(OpenMpiTuned, EveryDecisionMapsOntoAnImplementedAlgorithm) {
  const std::vector<Operation> ops = {
      Operation::barrier,   Operation::bcast,          Operation::reduce,
      Operation::allreduce, Operation::reduce_scatter, Operation::reduce_scatter_block,
      Operation::scan,      Operation::exscan,         Operation::gather,
      Operation::gatherv,   Operation::scatter,        Operation::scatterv,
      Operation::allgather, Operation::allgatherv,     Operation::alltoall,
      Operation::alltoallv, Operation::alltoallw};
  for (Operation op : ops) {
    for (std::size_t n = 2; n < 5000; n = n * 3 / 2 + 1) {
      for (std::uint64_t m = 1; m < (std::uint64_t{1} << 24); m *= 3) {
        for (bool commutative : {true, false}) {
          const TunedDecision d = openmpi_tuned_decision(op, n, m, commutative);
          const auto nearest = nearest_algorithm(op, d, n);
          ASSERT_TRUE(nearest.has_value()) << to_string(op) << " " << d.algorithm_id;
          const auto available = algorithms_for(op);
          EXPECT_NE(std::find(available.begin(), available.end(), nearest->algorithm),
                    available.end())
              << to_string(op) << " " << d.openmpi_name;
        }
      }
    }
  }
  EXPECT_FALSE(nearest_algorithm(Operation::bcast, 10, 8).has_value());
  // Exactness that depends on the communicator size.
  EXPECT_TRUE(nearest_algorithm(Operation::barrier, 3, 16)->exact);
  EXPECT_FALSE(nearest_algorithm(Operation::barrier, 3, 24)->exact);
  EXPECT_EQ(nearest_algorithm(Operation::allgather, 3, 24)->algorithm, Algorithm::bruck);
  EXPECT_EQ(nearest_algorithm(Operation::allgather, 3, 16)->algorithm,
            Algorithm::recursive_doubling);
  EXPECT_FALSE(nearest_algorithm(Operation::allreduce, 2, 300)->exact);
}

// ---- the composed schedules, executed ----

Collective call(Operation op, std::size_t n, std::uint64_t bytes, std::size_t root = 0) {
  return testing::make(op, n, root, bytes);
}

/// Runs every member's openmpi_tuned_schedule with synchronous sends; false on a deadlock or a
/// size disagreement. `received`: bytes each member received.
bool runs(Collective base, bool commutative, std::uint64_t element_bytes,
          std::vector<std::uint64_t>* received = nullptr) {
  const std::size_t n = base.members.size();
  std::vector<std::vector<Step>> plans(n);
  for (std::size_t i = 0; i < n; ++i) {
    base.me = i;
    plans[i] = openmpi_tuned_schedule(base, commutative, element_bytes);
  }
  const testing::Outcome out = testing::run_schedules(plans, true);
  if (received) *received = out.received;
  return out.completed && out.sizes_agree;
}

TEST(OpenMpiTuned, SchedulesCompleteForEveryOperationAndSize) {
  const std::vector<Operation> ops = {
      Operation::barrier,   Operation::bcast,          Operation::reduce,
      Operation::allreduce, Operation::reduce_scatter, Operation::reduce_scatter_block,
      Operation::scan,      Operation::exscan,         Operation::gather,
      Operation::gatherv,   Operation::scatter,        Operation::scatterv,
      Operation::allgather, Operation::allgatherv,     Operation::alltoall,
      Operation::alltoallv, Operation::alltoallw};
  for (Operation op : ops) {
    for (std::size_t n : {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 24, 33, 64, 130}) {
      for (std::uint64_t bytes : {1u, 7u, 100u, 3000u, 70000u, 600000u}) {
        for (bool commutative : {true, false}) {
          Collective c = call(op, n, bytes, n / 2);
          if (op == Operation::gatherv || op == Operation::scatterv ||
              op == Operation::allgatherv || op == Operation::reduce_scatter ||
              op == Operation::alltoallv || op == Operation::alltoallw) {
            c.counts.assign(n, bytes);
          }
          EXPECT_TRUE(runs(c, commutative, 4))
              << to_string(op) << " n=" << n << " bytes=" << bytes << " commutative=" << commutative
              << " (" << openmpi_tuned_decision(c, commutative).openmpi_name << ")";
        }
      }
    }
  }
}

TEST(OpenMpiTuned, ComposedAlgorithmsAreTheirParts) {
  auto steps = [](Collective c, std::size_t me, Algorithm a) {
    c.me = me;
    return schedule(c, a);
  };
  // allreduce, 256 members, 1 KiB, commutative: nonoverlapping = the tuned reduce to 0
  // (communicator_size < 512, < 8192: binomial) + the tuned bcast from 0 (< 1024, < 16384:
  // knomial, radix 4).
  Collective all = call(Operation::allreduce, 256, 1024);
  ASSERT_EQ(openmpi_tuned_decision(all, true).openmpi_name, "nonoverlapping");
  Collective reduce = call(Operation::reduce, 256, 1024);
  Collective bcast = call(Operation::bcast, 256, 1024);
  bcast.fanout = 4;
  for (std::size_t me : {std::size_t{0}, std::size_t{5}, std::size_t{255}}) {
    std::vector<Step> expect = steps(reduce, me, Algorithm::binomial);
    const auto down = steps(bcast, me, Algorithm::knomial);
    expect.insert(expect.end(), down.begin(), down.end());
    mark_written_sends(expect, false);  // the bcast sends the reduced vector: written
    all.me = me;
    EXPECT_EQ(openmpi_tuned_schedule(all, true), expect) << me;
  }
  // reduce_scatter_block basic_linear (2..3 members, >= 128 KiB blocks): a tuned reduce of the
  // whole vector then a tuned scatter.
  Collective rsb = call(Operation::reduce_scatter_block, 3, 200000);
  ASSERT_EQ(openmpi_tuned_decision(rsb, true).algorithm_id, 1);
  std::vector<std::uint64_t> got;
  ASSERT_TRUE(runs(rsb, true, 1, &got));
  // The reduce of 600000 B on 3 members is a chain (< 1048576), fan-out 0 = one chain
  // 0 <- 1 <- 2, which member 2 starts; the scatter of 200000 B is linear_nb (< 262144):
  // member 2 receives only its block.
  EXPECT_EQ(got[2], 200000u);
  // allgatherv default (4..7 members, < 256 B each): linear gatherv to 0, tuned bcast of all.
  Collective v = call(Operation::allgatherv, 5, 0);
  v.counts = {10, 20, 30, 40, 50};
  ASSERT_EQ(openmpi_tuned_decision(v, true).openmpi_name, "default");
  ASSERT_TRUE(runs(v, true, 1, &got));
  EXPECT_EQ(got[0], 140u);  // the others' blocks; the bcast of 150 B (binary tree) starts at 0
  EXPECT_EQ(got[3], 150u);  // the whole vector from the bcast
}

TEST(OpenMpiTuned, FallbacksInsideTheAlgorithmsCountElements) {
  // allreduce, 3 members, 4 bytes, commutative: ring (total_dsize < 8); one 4-byte element is
  // fewer than 3 members, so Open MPI's ring runs recursive doubling.
  Collective c = call(Operation::allreduce, 3, 4);
  ASSERT_EQ(openmpi_tuned_decision(c, true).openmpi_name, "ring");
  c.me = 2;
  EXPECT_EQ(openmpi_tuned_schedule(c, true, 4), schedule(c, Algorithm::recursive_doubling));
  EXPECT_EQ(openmpi_tuned_schedule(c, true, 1), schedule(c, Algorithm::ring));
  // allgather recursive doubling on 6 members: Open MPI runs Bruck.
  Collective g = call(Operation::allgather, 6, 64);
  g.me = 1;
  EXPECT_EQ(openmpi_tuned_schedule(g, true), schedule(g, Algorithm::bruck));
  // bcast scatter_allgather below one element per member: basic linear.
  Collective b = call(Operation::bcast, 24, 1 << 20);
  b.me = 3;
  EXPECT_EQ(openmpi_tuned_schedule(b, true, 1 << 20), schedule(b, Algorithm::linear));
  EXPECT_EQ(openmpi_tuned_schedule(b, true, 8), schedule(b, Algorithm::scatter_allgather));
}

}  // namespace
}  // namespace commgauge::collectives
