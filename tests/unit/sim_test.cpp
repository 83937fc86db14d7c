// The simulator against known truth: golden tests exact to the picosecond (closed forms of the
// one cost convention, or recurrences written out by hand), determinism and deadlocks.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "link_fixtures.hpp"
#include "model/closed_forms.hpp"
#include "model/models.hpp"
#include "sim/cluster.hpp"
#include "sim/simulator.hpp"
#include "sim_builder.hpp"
#include "synth/synth.hpp"

namespace commgauge::testing {
namespace {

using model::Picoseconds;
using namespace model::literals;
using ::testing::HasSubstr;

model::LinkParams link(std::uint64_t rendezvous_from = 0,
                       model::Progress progress = model::Progress::independent) {
  model::LinkParams l;
  l.latency_us = 5.0;
  model::LinkRange eager;
  eager.from_bytes = 1;
  eager.send_overhead_us = 1.5;
  eager.recv_overhead_us = 2.0;
  eager.gap_us = 3.0;
  eager.gap_per_byte_us = 0.01;
  l.ranges.push_back(eager);
  if (rendezvous_from > 0) {
    model::LinkRange r = eager;
    r.from_bytes = rendezvous_from;
    r.send_overhead_us = 2.5;
    r.recv_overhead_us = 3.0;
    r.gap_per_byte_us = 0.002;
    r.control_send_us = 0.7;
    r.control_recv_us = 0.9;
    r.rendezvous = true;
    r.progress = progress;
    l.ranges.push_back(r);
  }
  return l;
}

struct Run {
  sim::Result result;
  model::CostModel cost;
};

Run simulate(const std::filesystem::path& path, const model::LinkParams& l,
             const std::string& model_name = "loggpo", sim::Options options = {}) {
  trace::TraceReader trace(path);
  const auto nodes = std::vector<std::uint32_t>(trace.ranks(), 0);
  const sim::Network net(model_name, {{"intra_node", l}}, sim::cluster_of_placement(nodes), nodes);
  auto result = sim::simulate(trace, net, options);
  return {std::move(result), net.model_of_class(true)->cost()};
}

Picoseconds rank_end(const Run& run, std::size_t rank) {
  return run.result.per_rank[rank].predicted_ps;
}

TEST(SimGolden, PingPongIsTwoOneWayTimesPerRound) {
  for (const std::uint64_t k : {1u, 100u, 4000u}) {
    TraceBuilder b(2);
    constexpr int kRounds = 5;
    for (int i = 0; i < kRounds; ++i) {
      b.send(0, 1, k).recv(0, 1, k);
      b.recv(1, 0, k).send(1, 0, k);
    }
    const auto run = simulate(b.write("pingpong"), link());
    const Picoseconds one_way = model::one_way(run.cost, k);
    const Picoseconds round = model::round_trip(run.cost, k);
    std::printf("k=%llu: expected %d x round trip = %lld ps, simulated %lld ps\n",
                static_cast<unsigned long long>(k), kRounds,
                static_cast<long long>((kRounds * round).count()),
                static_cast<long long>(run.result.predicted_ps.count()));
    EXPECT_EQ(rank_end(run, 0), kRounds * round);
    EXPECT_EQ(round, 2 * one_way);  // the gap does not bind a ping-pong with these parameters
    // Rank 1's last send ends one send overhead after its last receive.
    EXPECT_EQ(rank_end(run, 1),
              (kRounds - 1) * round + one_way + run.cost.message(k).send_overhead);
    EXPECT_EQ(run.result.messages, 2u * kRounds);
  }
}

// A run of failed polls (the tracer folds N failed MPI_Test calls into one record): its time
// outside MPI is computation, replayed as recorded, and every failed call costs the profile's
// poll time inside MPI: N x poll_us, to the picosecond. Under model none it costs nothing, and
// without a measured poll time (poll_us 0) nothing either.
TEST(SimGolden, FailedPollsCostThePollTimeEach) {
  constexpr std::uint64_t kCalls = 1000;
  constexpr Picoseconds kOutside{7'000'000};  // 7 us of computation between the polls
  TraceBuilder b(1);
  b.compute(0, 3'000'000_ps);
  b.call(0, trace::fn::Testany, [&](trace::Event& e) {
    e.kind = trace::RecordKind::poll_run;
    e.start_tick = 3'000'000;
    e.end_tick =
        3'000'000 + kOutside.count() + 50'000'000;  // 50 us inside MPI on the traced machine
    e.set(trace::kPoll);
    e.calls = kCalls;
    e.in_mpi_ticks = 50'000'000;
  });
  const auto path = b.write("polls");
  auto l = link();
  l.poll_us = 0.021;
  const auto run = simulate(path, l, "loggps");
  EXPECT_EQ(run.result.predicted_ps, 3'000'000_ps + kOutside + Picoseconds{kCalls * 21'000});
  EXPECT_EQ(run.result.per_rank[0].predicted.overhead, Picoseconds{kCalls * 21'000});
  {
    trace::TraceReader trace(path);
    const std::vector<std::uint32_t> nodes = {0};
    const sim::Network none("none", {}, sim::cluster_of_placement(nodes), nodes);
    EXPECT_EQ(sim::simulate(trace, none, {}).predicted_ps, 3'000'000_ps + kOutside);
  }
  l.poll_us = 0;
  EXPECT_EQ(simulate(path, l, "loggps").result.predicted_ps, 3'000'000_ps + kOutside);
}

// Messages larger than the largest size their class was measured at are counted, point to point
// and collectives' steps alike: 2 ranks send 1 KiB and 4 KiB one way each and run an allreduce of
// 8 KiB (recursive doubling there: one exchange of 8 KiB, 2 messages), with intra_node measured
// up to 2 KiB: 1 + 2 messages beyond, the largest 8192 B. The costs do not change; a class
// whose largest size is not known counts nothing.
TEST(SimGolden, MessagesBeyondTheMeasuredSizesAreCounted) {
  TraceBuilder b(2);
  b.send(0, 1, 1024).recv(1, 0, 1024).send(0, 1, 4096).recv(1, 0, 4096);
  for (std::uint32_t r = 0; r < 2; ++r)
    b.collective(r, trace::fn::Allreduce, 8192);
  const trace::TraceReader trace(b.write("beyond"));
  const std::vector<std::uint32_t> nodes = {0, 0};
  sim::Network net("loggps", {{"intra_node", link()}}, sim::cluster_of_placement(nodes), nodes);
  const auto unknown = sim::simulate(trace, net, {});
  EXPECT_EQ(unknown.beyond_measured.messages, 0u);
  net.set_measured_max_bytes({{"intra_node", 2048}, {"inter_node", 1}});
  const auto counted = sim::simulate(trace, net, {});
  EXPECT_EQ(counted.messages, 4u);
  EXPECT_EQ(counted.beyond_measured.messages, 3u);
  EXPECT_EQ(counted.beyond_measured.largest_bytes, 8192u);
  EXPECT_EQ(counted.predicted_ps, unknown.predicted_ps);
}

// A communicator made from a parent costs the library's local work (comm_create_us), then the
// members' agreement replayed as messages over the parent: Comm_split is an Allgather of two
// ints and an Allreduce of one int; Comm_dup the Allreduce alone; Comm_free its local work
// (comm_free_us). The same trace written with those collectives instead (and no Comm_free)
// predicts exactly comm_create_us + comm_free_us less on every rank.
TEST(SimGolden, CommunicatorCreationIsItsLocalCostAndTheAgreementOverTheParent) {
  constexpr std::uint32_t kRanks = 4;
  constexpr Picoseconds kLocal{12'300'000}, kFree{2'250'000};
  // A collective over world of `count` ints per member.
  auto ints = [](std::uint64_t count, bool commutative) {
    return [=](trace::Event& e) {
      e.set(trace::kComm);
      e.set(trace::kBytes);
      e.bytes = 4 * count;
      e.set(trace::kRecvBytes);
      e.recv_bytes = 4 * count;
      e.set(trace::kCount);
      e.count = count;
      if (commutative) {
        e.set(trace::kFlags);
        e.flags = trace::kCommutative;
      }
    };
  };
  auto agreement = [&](TraceBuilder& b, std::uint32_t r, bool split) {
    if (split) b.call(r, trace::fn::Allgather, ints(2, false));
    b.call(r, trace::fn::Allreduce, ints(1, true));
  };
  for (const bool split : {true, false}) {
    TraceBuilder made(kRanks), written(kRanks);
    for (std::uint32_t r = 0; r < kRanks; ++r) {
      made.compute(r, 1'000'000_ps * r);
      written.compute(r, 1'000'000_ps * r);
      made.call(r, split ? trace::fn::Comm_split : trace::fn::Comm_dup,
                [](trace::Event& e) { e.set(trace::kComm); });
      made.call(r, trace::fn::Comm_free, [](trace::Event&) {});
      agreement(written, r, split);
    }
    auto l = link();
    l.comm_create_us = 12.3;
    l.comm_free_us = 2.25;
    const auto a = simulate(made.write(split ? "split" : "dup"), l, "loggps");
    const auto b = simulate(written.write(split ? "split-as" : "dup-as"), l, "loggps");
    for (std::uint32_t r = 0; r < kRanks; ++r)
      EXPECT_EQ(rank_end(a, r), rank_end(b, r) + kLocal + kFree) << (split ? "split" : "dup") << r;
    EXPECT_GT(rank_end(b, 0), 0_ps);
    l.comm_create_us = l.comm_free_us = 0;  // not measured: the agreement alone
    const auto c = simulate(made.write(split ? "split0" : "dup0"), l, "loggps");
    EXPECT_EQ(c.result.predicted_ps, b.result.predicted_ps);
  }
}

// An intercommunicator broadcast (groups A = {0, 2}, B = {1, 3}, root world rank 2) runs as Open
// MPI's coll/inter does: the root sends to B's first member, which broadcasts inside B; A's other
// member does nothing. The same trace written as those point-to-point messages predicts the same
// times, whichever group's ranks read the intercommunicator's record first (the replay once took
// the member order from the first reader and the root from each rank's own view, and deadlocked).
TEST(SimGolden, IntercommBcastIsRootToTheFirstRemoteMemberThenABcastInside) {
  constexpr std::uint64_t kInter = 0x5eed;
  constexpr std::uint64_t kBytes = 1000;
  const std::vector<std::int32_t> from_a = {0, 2, 1, 3}, from_b = {1, 3, 0, 2};
  for (const bool a_first : {true, false}) {
    TraceBuilder inter(4), p2p(4);
    for (std::uint32_t r = 0; r < 4; ++r) {
      const bool in_a = r % 2 == 0;
      const Picoseconds late = in_a == a_first ? 0_ps : 5'000'000_ps;
      inter.compute(r, late);
      p2p.compute(r, late);
      inter.comm_create(r, kInter, in_a ? from_a : from_b, 2);
      const std::int32_t root = r == 2 ? trace::kRootSelf : r == 0 ? trace::kProcNull : 2;
      inter.collective(r, trace::fn::Bcast, kBytes, root, kInter, true);
    }
    p2p.send(2, 1, kBytes).recv(1, 2, kBytes).send(1, 3, kBytes).recv(3, 1, kBytes);
    const std::string name = a_first ? "inter-a" : "inter-b";
    const auto a = simulate(inter.write(name), link(), "loggps");
    const auto b = simulate(p2p.write(name + "-p2p"), link(), "loggps");
    for (std::uint32_t r = 0; r < 4; ++r)
      EXPECT_EQ(rank_end(a, r), rank_end(b, r)) << name << " rank " << r;
    EXPECT_GT(rank_end(a, 3), rank_end(a, 1));
  }
}

// A collective call's own cost (collective_call_us) is charged once per collective call on each
// rank, before its messages: 3 ranks (so that no collective is a single exchange), each calling
// Barrier, Allreduce of 8 B, Bcast of 1 KiB and Alltoall of 64 B, end exactly 4 x 1.25 us later
// than without it; a communicator's creation (comm_create_us, measured as a dup less an
// allreduce that held this cost) is charged it once too; model none charges nothing.
TEST(SimGolden, EveryCollectiveCallPaysTheCollectiveCallCostOnce) {
  constexpr Picoseconds kCall{1'250'000};
  TraceBuilder b(3), dup(3);
  for (std::uint32_t r = 0; r < 3; ++r) {
    b.collective(r, trace::fn::Barrier, 0);
    b.collective(r, trace::fn::Allreduce, 8);
    b.collective(r, trace::fn::Bcast, 1024, 0);
    b.collective(r, trace::fn::Alltoall, 64);
    dup.call(r, trace::fn::Comm_dup, [](trace::Event& e) { e.set(trace::kComm); });
  }
  auto l = link();
  const auto without = simulate(b.write("calls"), l, "loggps");
  const auto dup_without = simulate(dup.write("dup"), l, "loggps");
  l.collective_call_us = 1.25;
  const auto with = simulate(b.write("calls-charged"), l, "loggps");
  const auto dup_with = simulate(dup.write("dup-charged"), l, "loggps");
  for (std::uint32_t r = 0; r < 3; ++r) {
    EXPECT_EQ(rank_end(with, r), rank_end(without, r) + 4 * kCall) << "rank " << r;
    EXPECT_EQ(rank_end(dup_with, r), rank_end(dup_without, r) + kCall) << "rank " << r;
  }
  const trace::TraceReader calls(b.write("calls-none"));
  const std::vector<std::uint32_t> nodes(3, 0);
  const sim::Network none("none", {{"intra_node", l}}, sim::cluster_of_placement(nodes), nodes);
  EXPECT_EQ(sim::simulate(calls, none, {}).predicted_ps, 0_ps) << "model none charges nothing";
}

// A process's first call of a function (first_call_us) costs its one-time work once per rank,
// inside that first call: 3 ranks each calling Bcast twice, Allreduce, Comm_dup twice and Barrier
// (no first-call cost given) end exactly 42 + 5 + 600 us later than without; a name the trace
// format does not know is an error naming it; model none charges nothing.
TEST(SimGolden, AFirstCallPaysItsOneTimeCostOncePerRank) {
  TraceBuilder b(3);
  for (std::uint32_t r = 0; r < 3; ++r) {
    b.collective(r, trace::fn::Bcast, 8, 0);
    b.collective(r, trace::fn::Allreduce, 8);
    b.collective(r, trace::fn::Bcast, 8, 0);
    b.call(r, trace::fn::Comm_dup, [](trace::Event& e) { e.set(trace::kComm); });
    b.call(r, trace::fn::Comm_dup, [](trace::Event& e) { e.set(trace::kComm); });
    b.collective(r, trace::fn::Barrier, 0);
  }
  auto l = link();
  const auto without = simulate(b.write("first-without"), l, "loggps");
  l.first_call_us = {{"MPI_Bcast", 42.0},
                     {"MPI_Allreduce", 5.0},
                     {"MPI_Comm_dup", 600.0},
                     {"MPI_Cart_create", 900.0}};
  const auto with = simulate(b.write("first-with"), l, "loggps");
  for (std::uint32_t r = 0; r < 3; ++r)
    EXPECT_EQ(rank_end(with, r), rank_end(without, r) + Picoseconds{647'000'000}) << "rank " << r;
  const trace::TraceReader calls(b.write("first-none"));
  const std::vector<std::uint32_t> nodes(3, 0);
  const sim::Network none("none", {{"intra_node", l}}, sim::cluster_of_placement(nodes), nodes);
  EXPECT_EQ(sim::simulate(calls, none, {}).predicted_ps, 0_ps) << "model none charges nothing";
  l.first_call_us = {{"MPI_Not_a_function", 1.0}};
  try {
    const sim::Network unknown("loggps", {{"intra_node", l}}, sim::cluster_of_placement(nodes),
                               nodes);
    ADD_FAILURE() << "an unknown function was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("MPI_Not_a_function is no MPI function"));
  }
}

// A collective's local work: 2 ranks, starting together, are symmetric, so the local work each
// does shifts both alike. Ring allreduce of 32 KiB (the tuned rules' choice on 2 ranks):
// copy the 32 KiB vector, combine the 16 KiB half received; recursive doubling of 8 B (its
// choice there): copy the vector, combine the 8 B received, and on rank 1 (the higher of the
// pair, which combined into its temporary buffer) copy the result back; alltoall of 8 KiB per
// peer: copy the own block. At 100 ps per byte copied, 200 per byte combined and 5,000 per
// combining step. Rank 0's, then rank 1's local work:
TEST(SimGolden, CollectivesChargeTheirCopiesAndReductions) {
  struct Case {
    std::uint32_t f;
    std::uint64_t bytes;
    Picoseconds local[2];
  };
  constexpr Picoseconds kRing{32768 * 100 + 16384 * 200 + 5000};
  for (const Case& c :
       {Case{trace::fn::Allreduce, 32768, {kRing, kRing}},
        Case{trace::fn::Allreduce,
             8,
             {Picoseconds{8 * 100 + 8 * 200 + 5000}, Picoseconds{16 * 100 + 8 * 200 + 5000}}},
        Case{trace::fn::Alltoall, 8192, {Picoseconds{8192 * 100}, Picoseconds{8192 * 100}}}}) {
    TraceBuilder b(2);
    for (std::uint32_t r = 0; r < 2; ++r)
      b.collective(r, c.f, c.bytes);
    const std::string name =
        fmt::format("{}-{}", c.f == trace::fn::Allreduce ? "allreduce" : "alltoall", c.bytes);
    auto l = link();
    const auto without = simulate(b.write(name), l, "loggps");
    l.copy_us_per_byte = 0.0001;
    l.reduce_us_per_byte = 0.0002;
    l.reduce_call_us = 0.005;
    const auto with = simulate(b.write(name + "-local"), l, "loggps");
    for (std::uint32_t r = 0; r < 2; ++r)
      EXPECT_EQ(rank_end(with, r), rank_end(without, r) + c.local[r]) << name << " rank " << r;
  }
}

// Open MPI's recursive doubling (its choice for an allreduce of 8 KiB on 2 ranks): rank 0
// combines into the buffer it received into, rank 1 into the buffer it has just sent from.
// Where that message was rendezvous, rank 1's combination costs reduce_into_sent_us_per_byte
// (500 ps a byte against 200): it ends 8192 x 300 ps later, rank 0 as before; over an eager link
// (no rendezvous range) nothing changes.
TEST(SimGolden, ARecursiveDoublingReductionIntoTheBufferJustSentCostsItsOwnRate) {
  constexpr std::uint64_t kBytes = 8192;
  for (const std::uint64_t rendezvous_from : {std::uint64_t{4096}, std::uint64_t{0}}) {
    TraceBuilder b(2);
    for (std::uint32_t r = 0; r < 2; ++r)
      b.collective(r, trace::fn::Allreduce, kBytes);
    const std::string name = rendezvous_from > 0 ? "rd-rendezvous" : "rd-eager";
    auto l = link(rendezvous_from);
    l.copy_us_per_byte = 0.0001;
    l.reduce_us_per_byte = 0.0002;
    const auto warm = simulate(b.write(name), l, "loggps");
    l.reduce_into_sent_us_per_byte = 0.0005;
    const auto into_sent = simulate(b.write(name + "-into-sent"), l, "loggps");
    const Picoseconds extra{rendezvous_from > 0 ? static_cast<std::int64_t>(kBytes) * 300 : 0};
    EXPECT_EQ(rank_end(into_sent, 0), rank_end(warm, 0)) << name;
    EXPECT_EQ(rank_end(into_sent, 1), rank_end(warm, 1) + extra) << name;
  }
}

// A rendezvous range billed by pages (G = 2 ns a byte): a send of 8192 B from a buffer on a
// page's start spans 2 pages; from a traced program's buffer, whose start is unknown, the mean
// over malloc's starts, 12288 - 16 B: rank 1 receives (12271 - 8191) x 2 ns later. An allreduce
// of 8 KiB on 2 ranks (recursive doubling) sends from Open MPI's temporary, unknown either way.
TEST(SimGolden, APagedRangeChargesThePagesTheSendBufferSpans) {
  auto l = link(4096);
  l.ranges.back().page_bytes = 4096;
  sim::Options aligned;
  aligned.page_aligned_buffers = true;
  TraceBuilder p2p(2);
  p2p.send(0, 1, 8192);
  p2p.recv(1, 0, 8192);
  const auto from_page = simulate(p2p.write("paged-aligned"), l, "loggps", aligned);
  const auto unknown = simulate(p2p.write("paged-unknown"), l, "loggps");
  EXPECT_EQ(rank_end(unknown, 1), rank_end(from_page, 1) + Picoseconds{(12271 - 8191) * 2000});
  TraceBuilder ar(2);
  for (std::uint32_t r = 0; r < 2; ++r)
    ar.collective(r, trace::fn::Allreduce, 8192);
  const auto ar_aligned = simulate(ar.write("paged-ar-aligned"), l, "loggps", aligned);
  const auto ar_unknown = simulate(ar.write("paged-ar-unknown"), l, "loggps");
  for (std::size_t r = 0; r < 2; ++r)
    EXPECT_EQ(rank_end(ar_aligned, r), rank_end(ar_unknown, r)) << r;
  // A traced send that carries its start (send_page_offset) is billed from it, whatever the
  // policy: 16 B past a page's start, 8192 B span 3 pages.
  TraceBuilder traced(2);
  traced.send(0, 1, 8192, 0, trace::fn::Send, 16).recv(1, 0, 8192);
  EXPECT_EQ(rank_end(simulate(traced.write("paged-traced"), l, "loggps", aligned), 1),
            rank_end(from_page, 1) + Picoseconds{(12287 - 8191) * 2000});
  // Billed by the byte, the start does not matter.
  l.ranges.back().page_bytes = 0;
  EXPECT_EQ(rank_end(simulate(p2p.write("bytes-aligned"), l, "loggps", aligned), 1),
            rank_end(simulate(p2p.write("bytes-unknown"), l, "loggps"), 1));
}

// The start reaches the paged range from an MPI_Isend and an MPI_Sendrecv too: 16 B past a page's
// start each 8192 B message spans 3 pages instead of 2, delivered (12287 - 8191) x 2 ns later.
TEST(SimGolden, IsendAndSendrecvBillTheirRecordedStart) {
  auto l = link(4096);
  l.ranges.back().page_bytes = 4096;
  sim::Options aligned;
  aligned.page_aligned_buffers = true;
  const auto isend = [&](std::optional<std::uint64_t> start, const std::string& name) {
    TraceBuilder b(2);
    const std::uint64_t id = b.isend(0, 1, 8192, 0, start);
    b.waitall(0, {{id, -1, -1, 0, 0, false}});
    b.recv(1, 0, 8192);
    return simulate(b.write(name), l, "loggps", aligned);
  };
  const auto sendrecv = [&](std::optional<std::uint64_t> start, const std::string& name) {
    TraceBuilder b(2);
    b.sendrecv(0, 1, 1, 8192, 0, start).sendrecv(1, 0, 0, 8192, 0, start);
    return simulate(b.write(name), l, "loggps", aligned);
  };
  const Picoseconds later{(12287 - 8191) * 2000};
  EXPECT_EQ(rank_end(isend(16, "isend-16"), 1), rank_end(isend({}, "isend-none"), 1) + later);
  const auto from_16 = sendrecv(16, "sendrecv-16");
  const auto none = sendrecv({}, "sendrecv-none");
  for (std::size_t r = 0; r < 2; ++r)
    EXPECT_EQ(rank_end(from_16, r), rank_end(none, r) + later) << r;
}

// A collective's step that sends what the rank wrote earlier in the call (the ring allreduce of
// 32 KiB on 2 ranks: the copied vector's half, then the combined half) costs
// written_send_us_per_byte more per byte where the receiver pulls it (DCP with Tm = RTA): each
// of the two exchanges of 16 KiB ends 16384 x 400 ps later on both ranks. Not where the
// rendezvous is not pulled, and not for pairwise alltoall, which sends the caller's buffer.
TEST(SimGolden, APulledTransferOfDataWrittenInTheCallCostsItsOwnRate) {
  struct Case {
    std::uint32_t f;
    bool pulled;
    std::int64_t extra_ps;
  };
  for (const Case& c : {Case{trace::fn::Allreduce, true, 2 * 16384 * 400},
                        Case{trace::fn::Allreduce, false, 0}, Case{trace::fn::Alltoall, true, 0}}) {
    TraceBuilder b(2);
    for (std::uint32_t r = 0; r < 2; ++r)
      b.collective(r, c.f, c.f == trace::fn::Allreduce ? 32768 : 16384);
    const std::string name = std::string(c.f == trace::fn::Allreduce ? "ar" : "a2a") +
                             (c.pulled ? "-pulled" : "-pushed");
    auto l = link(4096, c.pulled ? model::Progress::dependent : model::Progress::independent);
    if (c.pulled) l.ranges.back().transfer = "RTA";
    ASSERT_EQ(l.ranges.back().pulled(), c.pulled);
    const auto clean = simulate(b.write(name), l, "loggps");
    l.written_send_us_per_byte = 0.0004;
    const auto written = simulate(b.write(name + "-written"), l, "loggps");
    for (std::uint32_t r = 0; r < 2; ++r)
      EXPECT_EQ(rank_end(written, r), rank_end(clean, r) + Picoseconds{c.extra_ps})
          << name << " rank " << r;
  }
}

// The ring allreduce's second exchange takes the reduced half into the half each rank sent in
// the first: where it is pulled, that transfer costs recv_into_sent_us_per_byte more per byte
// (16384 x 300 ps later on both ranks); over a range that is not pulled, nothing.
TEST(SimGolden, APulledTransferIntoTheBlockJustSentCostsItsOwnRate) {
  for (const bool pulled : {true, false}) {
    TraceBuilder b(2);
    for (std::uint32_t r = 0; r < 2; ++r)
      b.collective(r, trace::fn::Allreduce, 32768);
    const std::string name = pulled ? "ring-pulled" : "ring-pushed";
    auto l = link(4096, pulled ? model::Progress::dependent : model::Progress::independent);
    if (pulled) l.ranges.back().transfer = "RTA";
    const auto before = simulate(b.write(name), l, "loggps");
    l.recv_into_sent_us_per_byte = 0.0003;
    const auto after = simulate(b.write(name + "-into-sent"), l, "loggps");
    const Picoseconds extra{pulled ? 16384 * 300 : 0};
    for (std::uint32_t r = 0; r < 2; ++r)
      EXPECT_EQ(rank_end(after, r), rank_end(before, r) + extra) << name << " rank " << r;
  }
}

// A ring allreduce that repeats the previous call (same communicator and size) copies its vector
// into the result whose reduced half the peer pulled in that call's allgather phase: where a copy
// into such a vector is measured (copy_into_sent_us_per_byte, 600 ps a byte against 100), each
// call after the first ends 16384 x 500 ps later on both ranks, 3 calls of 32 KiB: 2 x that. Not
// where the ranges are not pulled, and not where the calls alternate sizes (no call repeats).
TEST(SimGolden, ARepeatedRingAllreduceCopiesIntoTheHalfThePeerPulled) {
  struct Case {
    bool pulled;
    bool same_size;
    std::int64_t extra_ps;
  };
  for (const Case& c :
       {Case{true, true, 2 * 16384 * 500}, Case{false, true, 0}, Case{true, false, 0}}) {
    TraceBuilder b(2);
    for (std::uint32_t r = 0; r < 2; ++r)
      for (const std::uint64_t bytes : {32768, 40960, 32768})
        b.collective(r, trace::fn::Allreduce, c.same_size ? 32768 : bytes);
    const std::string name =
        std::string("repeat-") + (c.pulled ? "pulled" : "pushed") + (c.same_size ? "" : "-sizes");
    auto l = link(4096, c.pulled ? model::Progress::dependent : model::Progress::independent);
    if (c.pulled) l.ranges.back().transfer = "RTA";
    l.copy_us_per_byte = 0.0001;
    const auto warm = simulate(b.write(name), l, "loggps");
    l.copy_into_sent_us_per_byte = 0.0006;
    const auto into_pulled = simulate(b.write(name + "-into-pulled"), l, "loggps");
    for (std::uint32_t r = 0; r < 2; ++r)
      EXPECT_EQ(rank_end(into_pulled, r), rank_end(warm, r) + Picoseconds{c.extra_ps})
          << name << " rank " << r;
  }
}

// A collective's own-data copy between rendezvous transfers is charged what a copy adds to a loop
// of rendezvous exchanges (copy_after_rendezvous_us_per_byte: 8192 x 300 ps against the warm
// 8192 x 100 ps), on both ranks of an alltoall of 8 KiB per peer whose messages are rendezvous:
// each of 3 calls ends 8192 x 200 ps later. Not where the messages are eager (1 KiB), and never
// below the warm copy (a measured 10 ps a byte charges the warm 100 ps).
TEST(SimGolden, AnAlltoallsOwnBlockCopiedBetweenRendezvousTransfersCostsTheMeasuredCopy) {
  struct Case {
    std::uint64_t bytes;
    double per_byte_us;
    std::int64_t extra_ps;
  };
  for (const Case& c :
       {Case{8192, 0.0003, 3 * 8192 * 200}, Case{1024, 0.0003, 0}, Case{8192, 0.00001, 0}}) {
    TraceBuilder b(2);
    for (std::uint32_t r = 0; r < 2; ++r)
      for (int call = 0; call < 3; ++call)
        b.collective(r, trace::fn::Alltoall, c.bytes);
    const std::string name = fmt::format("copy-after-{}-{}", c.bytes, c.per_byte_us);
    auto l = link(4096, model::Progress::independent);
    l.copy_us_per_byte = 0.0001;
    const auto warm = simulate(b.write(name), l, "loggps");
    l.copy_after_rendezvous_us_per_byte = c.per_byte_us;
    const auto between = simulate(b.write(name + "-measured"), l, "loggps");
    for (std::uint32_t r = 0; r < 2; ++r)
      EXPECT_EQ(rank_end(between, r), rank_end(warm, r) + Picoseconds{c.extra_ps})
          << name << " rank " << r;
  }
}

// An MPI_Sendrecv of a rendezvous message whose peer comes late: the late rank's receive finds the
// early one's request waiting and answers it, but its own send has gone first, so both transfers
// run at once and each rank ends no more than the lateness later than when both came together,
// and no more than a request's flight (o'_s + L) earlier than that: the early request was there
// already (over vader a 2 MB MPI_Sendrecv with the peer 5-60 us late took that lateness plus one
// transfer). Receive first, the late rank's pull (65.5 us of its CPU here) would hold its send
// back and the pulls would follow each other: 66-69 us more. Under the pulled transfer (DCP with
// Tm = RTA, where the answer is the receiver's copy) and the hand-shake with independent progress
// alike.
TEST(SimGolden, ASendrecvWhosePeerComesLateCostsTheLatenessNotASecondTransfer) {
  constexpr std::uint64_t kBytes = 65536;
  constexpr Picoseconds kLate{40'000'000};  // 40 us: the early request has long arrived
  for (const bool pulled : {true, false}) {
    auto l = link(4096, pulled ? model::Progress::dependent : model::Progress::independent);
    if (pulled) {
      l.ranges.back().transfer = "RTA";
      l.ranges.back().send_overhead_per_byte_us = 0.001;  // the pull: 65.5 us of the receiver's CPU
    }
    const std::string name = pulled ? "sendrecv-late-pulled" : "sendrecv-late";
    auto run = [&](Picoseconds late) {
      TraceBuilder b(2);
      b.compute(1, late);
      b.sendrecv(0, 1, 1, kBytes).sendrecv(1, 0, 0, kBytes);
      return simulate(b.write(name + std::to_string(late.count())), l, "loggps");
    };
    const auto together = run(Picoseconds{0});
    const auto late = run(kLate);
    const Picoseconds flight =
        model::to_picoseconds(l.ranges.back().control_send_us + l.latency_us);
    for (std::size_t r = 0; r < 2; ++r) {
      EXPECT_LE(rank_end(late, r), rank_end(together, r) + kLate) << name << " rank " << r;
      EXPECT_GE(rank_end(late, r) + flight, rank_end(together, r) + kLate) << name << " rank " << r;
    }
  }
}

// A receive into memory its process never touched pays the page faults as its data is written:
// fresh_bytes x fresh_memory_us_per_byte (8192 B x 1000 ps = 8.192 us). An eager message (1000 B)
// is copied by its receiver: the receiver ends that much later, the sender (done when its message
// left) not at all, whether the receive blocks or is an MPI_Irecv waited for. A pulled rendezvous
// (8192 B, DCP with Tm = RTA) carries it in its transfer: the sender, waiting for the FIN after
// the pull, ends that much later too. Without the rate measured, or under model none, nothing.
TEST(SimGolden, AReceiveIntoMemoryNeverTouchedPaysItsPageFaults) {
  struct Case {
    const char* name;
    std::uint64_t bytes;
    bool nonblocking;
    std::int64_t sender_extra_ps;
  };
  constexpr std::uint64_t kFresh = 8192;
  constexpr std::int64_t kExtra = 8192 * 1000;
  for (const Case& c : {Case{"eager", 1000, false, 0}, Case{"eager-irecv", 1000, true, 0},
                        Case{"pulled", 8192, false, kExtra}}) {
    TraceBuilder b(2);
    b.compute(0, 1'000'000_ps).send(0, 1, c.bytes);
    if (c.nonblocking) {
      const std::uint64_t id = b.irecv(1, 0, c.bytes, 0, kFresh);
      b.waitall(1, {{id, -1, 0, 0, c.bytes, false}});
    } else {
      b.recv(1, 0, c.bytes, 0, kFresh);
    }
    auto l = link(4096, model::Progress::dependent);
    l.ranges.back().transfer = "RTA";
    const std::string name = std::string("fresh-") + c.name;
    const auto warm = simulate(b.write(name), l, "loggps");
    l.fresh_memory_us_per_byte = 0.001;
    const auto fresh = simulate(b.write(name + "-measured"), l, "loggps");
    EXPECT_EQ(rank_end(fresh, 1), rank_end(warm, 1) + Picoseconds{kExtra}) << c.name;
    EXPECT_EQ(rank_end(fresh, 0), rank_end(warm, 0) + Picoseconds{c.sender_extra_ps}) << c.name;
  }
  auto l = link();
  l.fresh_memory_us_per_byte = 0.001;
  const std::vector<std::uint32_t> nodes = {0, 0};
  const auto cluster = sim::cluster_of_placement(nodes);
  EXPECT_EQ(sim::Network("loggps", {{"intra_node", l}}, cluster, nodes).fresh_memory(0, 1, kFresh),
            Picoseconds{kExtra});
  EXPECT_EQ(sim::Network("none", {{"intra_node", l}}, cluster, nodes).fresh_memory(0, 1, kFresh),
            Picoseconds{0});
  // Across nodes the receive is charged the rate of the class that carried its message (the
  // kernel's socket reads fault its pages, not a single copy): 8192 B x 4000 ps.
  auto between = link();
  between.fresh_memory_us_per_byte = 0.004;
  const std::vector<std::uint32_t> apart = {0, 1};
  const sim::Network two_nodes("loggps", {{"intra_node", l}, {"inter_node", between}},
                               sim::cluster_of_placement(apart), apart);
  EXPECT_EQ(two_nodes.fresh_memory(0, 1, kFresh), Picoseconds{8192 * 4000});
}

// A message a rank sends itself costs the sender the measured self message, interpolated at its
// size, and nothing more: no latency, gap or receive overhead (Open MPI copies it within the
// process). Not measured, it is costed as a message over the node's link.
TEST(SimGolden, AMessageToOneselfCostsTheMeasuredSelfMessage) {
  constexpr std::uint64_t kBytes = 1536;  // halfway between the measured 1024 and 2048 B
  TraceBuilder b(1);
  const std::uint64_t in = b.irecv(0, 0, kBytes);
  const std::uint64_t out = b.isend(0, 0, kBytes);
  b.waitall(0, {{in, -1, 0, 0, kBytes, false}, {out, -1, -1, 0, 0, false}});
  const auto path = b.write("self-message");
  auto l = link();
  const auto over_link = simulate(path, l, "loggps");
  EXPECT_EQ(rank_end(over_link, 0), model::one_way(over_link.cost, kBytes));
  l.self_message = {{8, 0.1}, {1024, 0.2}, {2048, 0.4}};
  for (const char* m : {"loggp", "loggps", "loggpo"})
    EXPECT_EQ(rank_end(simulate(path, l, m), 0), 300'000_ps) << m;  // 0.2 + 0.5 x 0.2 us
  const std::vector<std::uint32_t> nodes = {0};
  const sim::Network none("none", {{"intra_node", l}}, sim::cluster_of_placement(nodes), nodes);
  EXPECT_EQ(none.message(0, 0, kBytes, 0).send_overhead, 0_ps);
}

// The tracer's clock-sync ping-pong at MPI_Init (0 B from rank 0, 8 B back) against the round
// trip the profile's model gives for it: the ratio is reported, and a note says when the trace's
// took more than 2.4 times the model's or less than 0.7 times.
TEST(SimGolden, TheTracersPingPongAtInitChecksTheMachinesState) {
  const auto l = link();
  const model::CostModel cost(l);
  const double model_us =
      model::to_microseconds(model::one_way(cost, 0) + model::one_way(cost, 8));  // 17.07 us
  EXPECT_NEAR(model_us, 2 * (1.5 + 5 + 2.0) + 7 * 0.01, 1e-9);
  struct Case {
    double factor;
    const char* note;  // nullptr: none
  };
  for (const Case c : {Case{1.2, nullptr}, Case{2.3, nullptr}, Case{0.75, nullptr},
                       Case{3.0, "the machine was slower when traced"},
                       Case{0.6, "the machine was faster when traced"}}) {
    TraceBuilder b(3);
    const auto ns = static_cast<std::int64_t>(std::llround(model_us * 1000 * c.factor));
    b.init_round_trip(1, ns).init_round_trip(2, ns);
    b.send(0, 1, 8).recv(1, 0, 8);
    const auto run = simulate(b.write(fmt::format("state-{}", c.factor)), l, "loggps");
    ASSERT_TRUE(run.result.state_check.has_value()) << c.factor;
    EXPECT_EQ(run.result.state_check->pairs, 2u);
    EXPECT_NEAR(run.result.state_check->ratio, c.factor, 1e-4);
    EXPECT_NEAR(run.result.state_check->model_round_trip_us, model_us, 1e-9);
    bool noted = false;
    for (const auto& n : run.result.notes)
      noted = noted || n.find("ping-pongs at MPI_Init") != std::string::npos;
    if (c.note == nullptr) {
      EXPECT_FALSE(noted) << c.factor;
    } else {
      EXPECT_THAT(fmt::format("{}", fmt::join(run.result.notes, "\n")), HasSubstr(c.note));
    }
  }
  // Without the index's syncs (or under model none) there is nothing to check.
  TraceBuilder b(2);
  b.send(0, 1, 8).recv(1, 0, 8);
  EXPECT_FALSE(simulate(b.write("state-none"), l, "loggps").result.state_check.has_value());
}

// The tracer's look at a receive buffer (before the call) is its own time, not the program's: a
// rank that computed 3 us and whose tracer looked for 1 us of that replays as one that computed
// 2 us.
TEST(SimGolden, TheTracersLookAtAReceiveBufferIsKeptOutOfTheComputation) {
  Picoseconds ends[2][2] = {};
  for (int looked = 0; looked < 2; ++looked) {
    TraceBuilder b(2);
    b.compute(0, 2'000'000_ps).send(0, 1, 100000);
    b.compute(1, looked ? 3'000'000_ps : 2'000'000_ps)
        .recv(1, 0, 100000, 0, 0, looked ? 1'000'000 : 0);
    const auto run = simulate(b.write(looked ? "look" : "no-look"), link(), "loggps");
    ends[looked][0] = rank_end(run, 0);
    ends[looked][1] = rank_end(run, 1);
  }
  EXPECT_EQ(ends[1][0], ends[0][0]);
  EXPECT_EQ(ends[1][1], ends[0][1]);
  EXPECT_GT(ends[1][1], 2'000'000_ps);
}

// MPI_Init_thread starts a rank like MPI_Init (one call semantics: trace-check always took it
// so, the replay refused such traces with "before MPI_Init").
TEST(SimGolden, InitThreadStartsARankLikeInit) {
  Picoseconds ends[2] = {};
  for (int i = 0; i < 2; ++i) {
    TraceBuilder b(2, i == 0 ? trace::fn::Init : trace::fn::Init_thread);
    b.compute(0, 2'000'000_ps).send(0, 1, 100).recv(1, 0, 100);
    const auto run = simulate(b.write(i == 0 ? "init" : "init-thread"), link(), "loggps");
    ends[i] = rank_end(run, 1);
  }
  EXPECT_GT(ends[0], 2'000'000_ps);
  EXPECT_EQ(ends[1], ends[0]);
}

// --critical-path on a ping-pong with computation on both sides: rank 0 computes C0 and sends,
// rank 1 receives, computes C1 and answers. Every wait is for the partner, so the path to rank
// 0's MPI_Finalize alternates: C0 on rank 0, one way (o_s + L + (k-1)G + o_r, from the send's
// post to the receive's completion) as network, C1 on rank 1, one way back. Over N rounds:
// computation N (C0 + C1), network 2N one-way, nothing else, and the length is the prediction.
TEST(SimGolden, CriticalPathOfAPingPongAlternatesBetweenTheRanks) {
  const std::uint64_t k = 1000;
  const Picoseconds c0{7'000'000}, c1{3'000'000};
  constexpr int kRounds = 6;
  TraceBuilder b(2);
  for (int i = 0; i < kRounds; ++i) {
    b.compute(0, c0).send(0, 1, k).recv(0, 1, k);
    b.recv(1, 0, k).compute(1, c1).send(1, 0, k);
  }
  sim::Options o;
  o.critical_path = true;
  const auto run = simulate(b.write("pingpong-path"), link(), "loggpo", o);
  const Picoseconds one_way = model::one_way(run.cost, k);
  ASSERT_TRUE(run.result.critical_path.has_value());
  const sim::CriticalPath& p = *run.result.critical_path;
  std::printf(
      "path: compute %lld, network %lld, mpi %lld ps; expected %lld, %lld, 0; length %lld, "
      "predicted %lld\n",
      static_cast<long long>(p.compute.count()), static_cast<long long>(p.network.count()),
      static_cast<long long>(p.mpi.count()), static_cast<long long>((kRounds * (c0 + c1)).count()),
      static_cast<long long>((2 * kRounds * one_way).count()),
      static_cast<long long>(p.length().count()),
      static_cast<long long>(run.result.predicted_ps.count()));
  EXPECT_EQ(run.result.critical_path_rank, 0);
  EXPECT_EQ(p.compute, kRounds * (c0 + c1));
  EXPECT_EQ(p.network, 2 * kRounds * one_way);
  EXPECT_EQ(p.mpi, 0_ps);
  EXPECT_EQ(p.length(), run.result.predicted_ps);
  EXPECT_EQ(p.ranks[0].key, 0);
  EXPECT_EQ(p.ranks[0].time, kRounds * c0);
  EXPECT_EQ(p.ranks[1].key, 1);
  EXPECT_EQ(p.ranks[1].time, kRounds * c1);
  // The last steps, oldest first: ... C1 on rank 1, network back to rank 0.
  const auto last = p.last_steps();
  ASSERT_EQ(last.size(), sim::CriticalPath::kSlots);
  EXPECT_EQ(last.back().function, sim::CriticalPath::kNetwork);
  EXPECT_EQ(last.back().rank, 0);
  EXPECT_EQ(last.back().end, run.result.predicted_ps);
  EXPECT_EQ(last[last.size() - 2].function, sim::CriticalPath::kCompute);
  EXPECT_EQ(last[last.size() - 2].rank, 1);
  // Off by default: nothing is carried.
  EXPECT_FALSE(simulate(b.write("pingpong-path"), link()).result.critical_path.has_value());
}

// --denoise: each computation replays as the least recorded at its site (previous call, call).
// Rank 0 computes 3, 8, 5, 6 us before four sends: site (Init, Send) has 3 us, site (Send,
// Send) 8, 5, 6 -> 5 us each: 3 + 3 x 5 = 18 us of computation instead of 22 us.
TEST(SimGolden, DenoiseReplaysTheLeastComputationPerSite) {
  TraceBuilder b(2);
  for (const Picoseconds c : {3'000'000_ps, 8'000'000_ps, 5'000'000_ps, 6'000'000_ps}) {
    b.compute(0, c).send(0, 1, 8);
    b.recv(1, 0, 8);
  }
  const auto raw = simulate(b.write("denoise"), link());
  sim::Options o;
  o.denoise = true;
  const auto denoised = simulate(b.write("denoise"), link(), "loggpo", o);
  const Picoseconds raw_compute = raw.result.per_rank[0].predicted.compute;
  const Picoseconds denoised_compute = denoised.result.per_rank[0].predicted.compute;
  std::printf("computation on rank 0: raw %lld ps, denoised %lld ps (expected 22 and 18 us)\n",
              static_cast<long long>(raw_compute.count()),
              static_cast<long long>(denoised_compute.count()));
  EXPECT_EQ(raw_compute, 22'000'000_ps);
  EXPECT_EQ(denoised_compute, 18'000'000_ps);
  EXPECT_EQ(rank_end(raw, 0) - rank_end(denoised, 0), 4'000'000_ps);
}

// --noise adds, to each computation that is not empty, the documented draw (noise_ps) for the
// rank and record; empty computations and time inside MPI stay as they were.
TEST(SimGolden, NoiseAddsTheSeededDrawsToComputationsOnly) {
  TraceBuilder b(2);
  for (int i = 0; i < 400; ++i) {
    b.compute(0, 3'000'000_ps).send(0, 1, 8);
    b.recv(1, 0, 8);  // rank 1 computes nothing: it only waits
  }
  const auto path = b.write("noise");
  const auto quiet = simulate(path, link());
  sim::Options o;
  o.noise = sim::parse_noise("exponential:5:42");
  EXPECT_EQ(o.noise.mean_us, 5.0);
  EXPECT_EQ(o.noise.seed, 42u);
  const auto noisy = simulate(path, link(), "loggpo", o);
  // Rank 0's records are MPI_Init's successors: the sends are records 0..399 (Init is not one).
  Picoseconds expected{};
  for (std::uint64_t k = 0; k < 400; ++k)
    expected += sim::noise_ps(o.noise, 0, k);
  const Picoseconds added =
      noisy.result.per_rank[0].predicted.compute - quiet.result.per_rank[0].predicted.compute;
  std::printf("noise on rank 0: %lld ps added over 400 computations (mean %.3f us, asked 5)\n",
              static_cast<long long>(added.count()), static_cast<double>(added.count()) / 400e6);
  EXPECT_EQ(added, expected);
  EXPECT_EQ(noisy.result.per_rank[1].predicted.compute, 0_ps);
  EXPECT_EQ(noisy.result.per_rank[0].predicted.overhead,
            quiet.result.per_rank[0].predicted.overhead);
  // The draws are exponential of mean 5 us: over 400 of them the mean is within 4 standard
  // errors (5 / 20 us each) of 5 us, for this seed and for another.
  EXPECT_NEAR(static_cast<double>(added.count()) / 400e6, 5.0, 1.0);
  sim::Noise other = o.noise;
  other.seed = 7;
  Picoseconds other_sum{};
  for (std::uint64_t k = 0; k < 400; ++k)
    other_sum += sim::noise_ps(other, 0, k);
  EXPECT_NEAR(static_cast<double>(other_sum.count()) / 400e6, 5.0, 1.0);
  EXPECT_NE(other_sum, expected);
  EXPECT_NE(sim::noise_ps(o.noise, 0, 0), sim::noise_ps(o.noise, 1, 0));  // ranks differ
  // The same seed, the same replay.
  EXPECT_EQ(simulate(path, link(), "loggpo", o).result.per_rank[0].predicted_ps,
            noisy.result.per_rank[0].predicted_ps);
  for (const char* bad : {"exponential", "exponential:", "exponential:-1", "exponential:0",
                          "normal:5", "exponential:5:x", "exponential:5:", "exponential:nan"})
    EXPECT_THROW(sim::parse_noise(bad), InputError) << bad;
}

TEST(SimGolden, BackToBackMessagesFollowTheGapAndTheReceiverOverhead) {
  // n eager sends in a row: send i starts at max(end of send i-1, start i-1 + g + (k-1)G),
  // arrives T1 + T2 later, and is copied T3 after max(arrival, previous copy).
  for (const std::uint64_t k : {8u, 2000u}) {
    constexpr int n = 7;
    TraceBuilder b(2);
    for (int i = 0; i < n; ++i) {
      b.send(0, 1, k);
      b.recv(1, 0, k);
    }
    const auto run = simulate(b.write("backtoback"), link());
    const auto m = run.cost.message(k);
    Picoseconds start{}, sender_free{}, copied{};
    for (int i = 0; i < n; ++i) {
      const Picoseconds s = std::max(sender_free, i == 0 ? 0_ps : start + m.gap);
      start = s;
      sender_free = s + m.send_overhead;
      const Picoseconds arrival = sender_free + m.transfer;
      copied = std::max(arrival, copied) + m.recv_overhead;
    }
    std::printf("k=%llu: receiver expected %lld ps, simulated %lld; sender %lld / %lld\n",
                static_cast<unsigned long long>(k), static_cast<long long>(copied.count()),
                static_cast<long long>((rank_end(run, 1)).count()),
                static_cast<long long>(sender_free.count()),
                static_cast<long long>((rank_end(run, 0)).count()));
    EXPECT_EQ(rank_end(run, 1), copied);
    EXPECT_EQ(rank_end(run, 0), sender_free);
  }
}

TEST(SimGolden, NonblockingSendsWaitForTheGapOutsideTheProcessor) {
  // n MPI_Isend in a row, a computation C, MPI_Waitall: each Isend costs the processor o_s
  // alone; message i leaves at s_i + o_s with s_i = max(posted_i, s_(i-1) + g + (k-1)G), as the
  // blocking sends above; the Waitall ends when the last has left (eager: local completion).
  constexpr std::uint64_t k = 8;
  constexpr int n = 3;
  for (const Picoseconds c : {1'000'000_ps, 9'000'000_ps}) {  // shorter, longer than the gaps
    TraceBuilder b(2);
    std::vector<trace::Completion> sends;
    for (int i = 0; i < n; ++i) {
      sends.push_back({b.isend(0, 1, k, i), 0, -1, -1, 0, false});
      b.recv(1, 0, k, i);
    }
    b.compute(0, c);
    b.waitall(0, sends);
    const auto run = simulate(b.write("isend-gap"), link());
    const auto m = run.cost.message(k);
    Picoseconds cpu{}, start{}, left{}, copied{};
    for (int i = 0; i < n; ++i) {
      start = i == 0 ? cpu : std::max(cpu, start + m.gap);
      cpu += m.send_overhead;
      left = start + m.send_overhead;
      copied = std::max(left + m.transfer, copied) + m.recv_overhead;
    }
    const Picoseconds waited = std::max(Picoseconds{}, left - (cpu + c));
    EXPECT_EQ(run.result.functions.at("MPI_Isend").predicted_ps, n * m.send_overhead);
    EXPECT_EQ(run.result.functions.at("MPI_Waitall").predicted_ps, waited);
    EXPECT_EQ(rank_end(run, 0), cpu + c + waited);
    EXPECT_EQ(rank_end(run, 1), copied);
    if (c == 1'000'000_ps) {
      EXPECT_GT(waited, Picoseconds{}) << "the gap outlasts the computation";
    }
  }
}

TEST(SimGolden, BufferedSendsReturnWhileTheirMessagesWaitForTheGap) {
  // MPI_Bsend copies the message and returns: three in a row cost o_s each, while MPI_Send ends
  // when its message has left (the third at 2 (g + (k-1)G) + o_s); the receiver is the same.
  constexpr std::uint64_t k = 8;
  for (const std::uint32_t function : {trace::fn::Bsend, trace::fn::Send}) {
    TraceBuilder b(2);
    for (int i = 0; i < 3; ++i) {
      b.send(0, 1, k, i, function);
      b.recv(1, 0, k, i);
    }
    const auto run = simulate(b.write("bsend-gap"), link());
    const auto m = run.cost.message(k);
    const Picoseconds left = 2 * m.gap + m.send_overhead;
    EXPECT_EQ(rank_end(run, 0), function == trace::fn::Bsend ? 3 * m.send_overhead : left);
    Picoseconds copied{};
    for (int i = 0; i < 3; ++i)
      copied = std::max(i * m.gap + m.send_overhead + m.transfer, copied) + m.recv_overhead;
    EXPECT_EQ(rank_end(run, 1), copied);
  }
}

TEST(SimNotes, ARankTracedOnASlowedProcessorIsNamedWithItsCalibration) {
  // The tracer's calibration per event: 28 ns on rank 0, 47.6 ns on rank 1 (1.7x); then both at
  // 28 ns: no note.
  for (const std::int64_t slow_ps : {47'600, 28'000}) {
    TraceBuilder b(2);
    b.tracer_overhead(0, 28'000).tracer_overhead(1, slow_ps);
    b.compute(0, 1'000'000_ps).send(0, 1, 8).recv(1, 0, 8);
    const auto run = simulate(b.write("slowed"), link());
    bool named = false;
    for (const auto& note : run.result.notes)
      named = named || note.find("rank 1 (47.6 ns, 1.70x)") != std::string::npos;
    EXPECT_EQ(named, slow_ps == 47'600);
  }
}

// The server-delay PRTT(n,d,s) as a trace (rank 0 the client, rank 1 the server computing d
// before each receive after the first), replayed under loggps.
Run replay_server_delay_prtt(const model::LinkParams& l, std::uint32_t n, Picoseconds d,
                             std::uint64_t k, const char* name) {
  TraceBuilder b(2);
  for (std::uint32_t i = 0; i < n; ++i) {
    b.send(0, 1, k);
    if (i > 0) b.compute(1, d);
    b.recv(1, 0, k);
  }
  b.send(1, 0, k);
  b.recv(0, 1, k);
  return simulate(b.write(name), l, "loggps");
}

// o_u: the replay charges a receive posted after its eager data arrived o_r + o_u, as the
// closed forms (and the virtual network they are tested against) do: seed 000's PRTT(n,0,s) and
// commgauge's server-delay PRTT replayed from traces equal their closed forms to the
// picosecond, with a receiver as fast as the sends (no late receive) and one slower (all late).
TEST(SimGolden, AReceivePostedAfterItsDataArrivedCostsOu) {
  int late_cases = 0;
  for (const double extra_o_r : {0.0, 4.0}) {
    auto l = link();
    l.ranges[0].recv_overhead_us += extra_o_r;
    l.ranges[0].unexpected_recv_us = 0.37;
    for (const std::uint64_t k : {8u, 2000u}) {
      for (const double d_us : {0.0, 10.0}) {
        constexpr std::uint32_t n = 6;
        const Picoseconds d = model::to_picoseconds(d_us);
        const auto run = replay_server_delay_prtt(l, n, d, k, "unexpected");
        const auto expected = model::prtt_server_delay(run.cost, n, d, k);
        EXPECT_EQ(rank_end(run, 0), expected)
            << "k=" << k << " d=" << d_us << " +o_r " << extra_o_r;
        auto no_ou = l;
        no_ou.ranges[0].unexpected_recv_us = 0;
        // Late when the server, computing d before each receive, is slower than the sends.
        const auto m = run.cost.message(k);
        const bool late = std::max(m.send_overhead, m.gap) < d + m.recv_overhead;
        late_cases += late ? 1 : 0;
        EXPECT_EQ(expected - model::prtt_server_delay(model::CostModel(no_ou), n, d, k),
                  late ? model::to_picoseconds(0.37 * (n - 1)) : Picoseconds{})
            << "k=" << k << " d=" << d_us << " +o_r " << extra_o_r;
      }
    }
  }
  EXPECT_EQ(late_cases, 3);  // 8 B: a delay or a slower receiver makes the receives late
}

// A rendezvous request that came before its receive was posted (the server computing d before
// each receive) costs its answer o_u more, as in the closed forms: pushed (ICP and DCP) and
// pulled rendezvous, the replayed server-delay PRTT equal to the picosecond, and o_u charged
// once per late receive.
TEST(SimGolden, ARendezvousRequestThatCameBeforeItsReceiveCostsOu) {
  for (auto l : {link(4096, model::Progress::independent), link(4096, model::Progress::dependent),
                 pulled_link()}) {
    constexpr std::uint64_t k = 20000;
    constexpr std::uint32_t n = 6;
    for (auto& r : l.ranges)
      r.unexpected_recv_us = 0.37;
    auto no_ou = l;
    for (auto& r : no_ou.ranges)
      r.unexpected_recv_us = 0;
    for (const double d_us : {0.0, 30.0}) {
      const Picoseconds d = model::to_picoseconds(d_us);
      const auto run = replay_server_delay_prtt(l, n, d, k, "late-request");
      ASSERT_TRUE(run.cost.message(k).rendezvous);
      const auto expected = model::prtt_server_delay(run.cost, n, d, k);
      EXPECT_EQ(rank_end(run, 0), expected) << "d=" << d_us;
      // Every request but the first comes before its receive, at d = 0 too: the next one
      // arrives while the server still waits for the data (T2 + T3 > o'_s + L).
      EXPECT_EQ(expected - model::prtt_server_delay(model::CostModel(no_ou), n, d, k),
                model::to_picoseconds(0.37 * (n - 1)))
          << "d=" << d_us;
    }
  }
}

// o_x: a receive whose message crossed the receiver's latest send to the same peer (each posted
// before the other arrived) costs o_x more; nothing else does. An exchange (Isend, Irecv,
// Waitall on both ends) ends exactly o_x later on each end, per exchange, eager and rendezvous;
// a ping-pong and a 3-rank ring (each sends right and receives from the left: no pair crosses)
// cost what they cost without it.
TEST(SimGolden, AMessageThatCrossedTheReceiversOwnCostsOx) {
  auto with = link(4096, model::Progress::dependent);
  with.ranges[0].crossing_recv_us = 0.3;
  with.ranges[1].crossing_recv_us = 0.8;
  const auto without = link(4096, model::Progress::dependent);
  for (const std::uint64_t k : {8u, 20000u}) {
    const double o_x = k < 4096 ? 0.3 : 0.8;
    constexpr std::uint32_t n = 3;
    TraceBuilder exchange(2);
    for (std::uint32_t i = 0; i < n; ++i) {
      for (std::uint32_t r = 0; r < 2; ++r) {
        const auto out = exchange.isend(r, 1 - static_cast<std::int32_t>(r), k);
        const auto in = exchange.irecv(r, 1 - static_cast<std::int32_t>(r), k);
        exchange.waitall(r, {{out, -1, -1, 0, 0, false},
                             {in, -1, 1 - static_cast<std::int32_t>(r), 0, k, false}});
      }
    }
    const auto path = exchange.write("crossing-exchange");
    for (const std::string model : {"loggps", "loggpo"}) {
      const auto a = simulate(path, with, model), b = simulate(path, without, model);
      for (std::size_t r = 0; r < 2; ++r)
        EXPECT_EQ(rank_end(a, r) - rank_end(b, r), model::to_picoseconds(o_x * n))
            << model << " k=" << k << " rank " << r;
      // The plain LogGP model has no o_x.
      EXPECT_EQ(rank_end(simulate(path, with, "loggp"), 0),
                rank_end(simulate(path, without, "loggp"), 0));
    }
    TraceBuilder pingpong(2);
    for (std::uint32_t i = 0; i < n; ++i) {
      pingpong.send(0, 1, k).recv(1, 0, k);
      pingpong.send(1, 0, k).recv(0, 1, k);
    }
    const auto pp = pingpong.write("crossing-pingpong");
    EXPECT_EQ(rank_end(simulate(pp, with), 0), rank_end(simulate(pp, without), 0)) << k;
    EXPECT_GT(rank_end(simulate(pp, with), 0), Picoseconds{});
    TraceBuilder ring(3);
    for (std::uint32_t r = 0; r < 3; ++r) {
      const auto out = ring.isend(r, static_cast<std::int32_t>((r + 1) % 3), k);
      const auto left = static_cast<std::int32_t>((r + 2) % 3);
      const auto in = ring.irecv(r, left, k);
      ring.waitall(r, {{out, -1, -1, 0, 0, false}, {in, -1, left, 0, k, false}});
    }
    const auto rp = ring.write("crossing-ring");
    for (std::size_t r = 0; r < 3; ++r)
      EXPECT_EQ(rank_end(simulate(rp, with), r), rank_end(simulate(rp, without), r)) << k;
  }
}

// Which calls progress (trace::progresses): as in Open MPI, MPI_Isend and MPI_Irecv do not take
// arrived messages, waits and blocking calls do; a posting call handles only what its rank has
// seen, by having been in a progressing call since it arrived.
TEST(SimGolden, OnlyCallsThatProgressTakeArrivedMessages) {
  const auto l = link();
  constexpr std::uint64_t k = 8;
  const auto function_ps = [](const sim::Result& result, const std::string& name) {
    const auto it = result.functions.find(name);
    return it == result.functions.end() ? Picoseconds{-1} : it->second.predicted_ps;
  };
  {  // Data that arrived while the receiver computed: its MPI_Irecv costs nothing, its Wait the
     // copy (o_r + o_u: it came before the receive was posted).
    auto late = l;
    late.ranges[0].unexpected_recv_us = 0.37;
    TraceBuilder b(2);
    b.send(0, 1, k);
    b.compute(1, model::to_picoseconds(20.0));
    const auto r = b.irecv(1, 0, k);
    b.compute(1, model::to_picoseconds(5.0)).waitall(1, {{r, -1, 0, 0, k, false}});
    const auto run = simulate(b.write("progress-unseen"), late, "loggps");
    const auto m = run.cost.message(k);
    EXPECT_EQ(function_ps(run.result, "MPI_Irecv"), Picoseconds{});
    EXPECT_EQ(function_ps(run.result, "MPI_Wait"), m.recv_overhead + m.unexpected_recv);
    EXPECT_EQ(rank_end(run, 1), model::to_picoseconds(25.0) + m.recv_overhead + m.unexpected_recv);
  }
  {  // The copy of data that arrived during computation waits for the Wait, not the MPI_Isend
     // before it: the reply leaves at once.
    TraceBuilder b(2);
    b.send(0, 1, k).recv(0, 1, k);
    const auto r = b.irecv(1, 0, k);
    b.compute(1, model::to_picoseconds(20.0));
    const auto s = b.isend(1, 0, k);
    b.waitall(1, {{s, -1, -1, 0, 0, false}, {r, -1, 0, 0, k, false}});
    const auto run = simulate(b.write("progress-isend"), l, "loggps");
    const auto m = run.cost.message(k);
    const Picoseconds sent = model::to_picoseconds(20.0) + m.send_overhead;
    EXPECT_EQ(function_ps(run.result, "MPI_Isend"), m.send_overhead);
    EXPECT_EQ(rank_end(run, 1), sent + m.recv_overhead);
    EXPECT_EQ(rank_end(run, 0), sent + m.transfer + m.recv_overhead);
  }
  {  // Data that arrived while the receiver waited in MPI_Recv for another message was seen
     // there: the MPI_Irecv posted after it takes it at once (o_r + o_u: unexpected).
    auto late = l;
    late.ranges[0].unexpected_recv_us = 0.37;
    TraceBuilder b(2);
    b.send(0, 1, k, 2).compute(0, model::to_picoseconds(30.0)).send(0, 1, k, 1);
    b.recv(1, 0, k, 1);
    const auto r = b.irecv(1, 0, k, 2);
    b.compute(1, model::to_picoseconds(5.0)).waitall(1, {{r, -1, 0, 2, k, false}});
    const auto run = simulate(b.write("progress-seen"), late, "loggps");
    const auto m = run.cost.message(k);
    EXPECT_EQ(function_ps(run.result, "MPI_Irecv"), m.recv_overhead + m.unexpected_recv);
    EXPECT_EQ(function_ps(run.result, "MPI_Wait"), Picoseconds{});
  }
}

TEST(SimGolden, RendezvousSendWithEarlyAndLateReceiverIsSeed004Table4) {
  const std::uint64_t k = 10000;
  for (const Picoseconds t_r : {Picoseconds{0}, Picoseconds{2'000'000}, Picoseconds{40'000'000}}) {
    TraceBuilder b(2);
    b.send(0, 1, k);
    b.compute(1, t_r).recv(1, 0, k);
    const auto run = simulate(b.write("rendezvous"), link(1024), "loggps");
    const Picoseconds send = model::loggps_send_time(run.cost, k, 0_ps, t_r);
    const Picoseconds recv = t_r + model::loggps_recv_time(run.cost, k, 0_ps, t_r);
    std::printf(
        "t_r=%lld: MPI_Send expected %lld simulated %lld; MPI_Recv ends expected %lld "
        "simulated %lld\n",
        static_cast<long long>(t_r.count()), static_cast<long long>(send.count()),
        static_cast<long long>((rank_end(run, 0)).count()), static_cast<long long>(recv.count()),
        static_cast<long long>((rank_end(run, 1)).count()));
    EXPECT_EQ(rank_end(run, 0), send);
    EXPECT_EQ(rank_end(run, 1), recv);
    if (t_r > 10'000'000_ps) {
      EXPECT_GT(run.result.per_rank[0].predicted.late_receiver, 0_ps);
    }
  }
}

TEST(SimGolden, IsendComputeWaitEqualsTheLogGPOClosedFormForEveryAcceptedCombination) {
  struct Case {
    std::uint64_t k;
    model::Progress progress;
    const char* transfer = "";
  };
  for (const Case c :
       {Case{100, model::Progress::independent}, Case{10000, model::Progress::dependent},
        Case{10000, model::Progress::independent},
        Case{10000, model::Progress::dependent, "RTA"}}) {
    for (const Picoseconds t_r :
         {Picoseconds{0}, Picoseconds{3'000'000}, Picoseconds{90'000'000}}) {
      const Picoseconds comp{50'000'000};
      TraceBuilder b(2);
      const auto s = b.isend(0, 1, c.k);
      b.compute(0, comp).waitall(0, {{s, -1, -1, 0, 0, false}});
      b.compute(1, t_r);
      const auto r = b.irecv(1, 0, c.k);
      b.compute(1, comp).waitall(1, {{r, -1, 0, 0, c.k, false}});
      model::LinkParams l = link(1024, c.progress);
      l.ranges.back().transfer = c.transfer;  // RTA under DCP: the receiver pulls
      const auto run = simulate(b.write("overlap"), l, "loggpo");
      const auto closed = model::isend_compute_wait(run.cost, c.k, comp, t_r);
      std::printf(
          "%s k=%llu t_r=%lld: sender expected %lld simulated %lld, receiver expected "
          "%lld simulated %lld\n",
          c.k < 1024
              ? "eager T"
              : (c.progress == model::Progress::dependent ? (*c.transfer ? "DCP/RTA" : "DCP/RAT")
                                                          : "ICP/RTA"),
          static_cast<unsigned long long>(c.k), static_cast<long long>(t_r.count()),
          static_cast<long long>(closed.sender_done.count()),
          static_cast<long long>((rank_end(run, 0)).count()),
          static_cast<long long>(closed.receiver_done.count()),
          static_cast<long long>((rank_end(run, 1)).count()));
      EXPECT_EQ(rank_end(run, 0), closed.sender_done);
      EXPECT_EQ(rank_end(run, 1), closed.receiver_done);
    }
  }
}

TEST(SimGolden, DisseminationBarrierIsCeilLog2RoundsOfZeroByteMessages) {
  for (const std::uint32_t p : {2u, 4u, 5u, 8u}) {
    TraceBuilder b(p);
    for (std::uint32_t r = 0; r < p; ++r)
      b.collective(r, trace::fn::Barrier, 0);
    sim::Options o;
    o.algorithms[collectives::Operation::barrier] = collectives::Algorithm::dissemination;
    const auto run = simulate(b.write("barrier"), link(), "loggpo", o);
    int rounds = 0;
    while ((1u << rounds) < p)
      ++rounds;
    const Picoseconds expected = rounds * model::one_way(run.cost, 0);
    std::printf("P=%u: expected %d x one-way(0) = %lld ps, simulated %lld\n", p, rounds,
                static_cast<long long>(expected.count()),
                static_cast<long long>(run.result.predicted_ps.count()));
    for (std::uint32_t r = 0; r < p; ++r)
      EXPECT_EQ(rank_end(run, r), expected) << "rank " << r;
    ASSERT_EQ(run.result.collectives.size(), 1u);
    EXPECT_EQ(run.result.collectives[0].operation, "barrier");
    EXPECT_EQ(run.result.collectives[0].algorithm, "dissemination");
    EXPECT_EQ(run.result.collectives[0].note, "chosen with --coll");
  }
}

TEST(SimGolden, RecursiveDoublingAllreduceIsLog2SymmetricExchanges) {
  const std::uint64_t k = 800;
  TraceBuilder b(8);
  for (std::uint32_t r = 0; r < 8; ++r)
    b.collective(r, trace::fn::Allreduce, k);
  sim::Options o;
  o.algorithms[collectives::Operation::allreduce] = collectives::Algorithm::recursive_doubling;
  const auto run = simulate(b.write("allreduce-rd"), link(), "loggpo", o);
  const Picoseconds expected = 3 * model::one_way(run.cost, k);
  std::printf("expected 3 x one-way(%llu) = %lld ps, simulated %lld\n",
              static_cast<unsigned long long>(k), static_cast<long long>(expected.count()),
              static_cast<long long>(run.result.predicted_ps.count()));
  for (std::uint32_t r = 0; r < 8; ++r)
    EXPECT_EQ(rank_end(run, r), expected);
}

// Without --coll the replay runs what Open MPI 4.1's tuned fixed rules choose
// (coll_tuned_decision_fixed.c, commutative allreduce): 8 members, 800 bytes (< 8192) ->
// recursive doubling (3), log2(8) = 3 exchanges of the whole vector; 4 members, 2 bytes (< 16)
// -> ring (4), which Open MPI itself replaces by recursive doubling for fewer elements than
// members: 2 exchanges.
TEST(SimGolden, DefaultAllreduceFollowsOpenMPITunedRules) {
  struct Case {
    std::uint32_t ranks;
    std::uint64_t bytes;
    int exchanges;
    const char* openmpi;
  };
  for (const Case c :
       {Case{8, 800, 3, "tuned:recursive_doubling (3)"}, Case{4, 2, 2, "tuned:ring (4)"}}) {
    TraceBuilder b(c.ranks);
    for (std::uint32_t r = 0; r < c.ranks; ++r)
      b.collective(r, trace::fn::Allreduce, c.bytes);
    const auto run = simulate(b.write("allreduce-tuned"), link(), "loggpo", sim::Options{});
    const Picoseconds expected = c.exchanges * model::one_way(run.cost, c.bytes);
    std::printf("P=%u k=%llu: expected %d x one-way(k) = %lld ps, simulated %lld\n", c.ranks,
                static_cast<unsigned long long>(c.bytes), c.exchanges,
                static_cast<long long>(expected.count()),
                static_cast<long long>(run.result.predicted_ps.count()));
    for (std::uint32_t r = 0; r < c.ranks; ++r)
      EXPECT_EQ(rank_end(run, r), expected);
    ASSERT_EQ(run.result.collectives.size(), 1u);
    const auto& use = run.result.collectives[0];
    EXPECT_EQ(use.operation, "allreduce");
    EXPECT_EQ(use.algorithm, "recursive_doubling");
    EXPECT_EQ(use.calls, c.ranks);
    EXPECT_TRUE(use.exact);
    EXPECT_EQ(use.openmpi, c.openmpi);
    if (c.ranks == 4) {
      EXPECT_NE(use.note.find("falls back"), std::string::npos) << use.note;
    }
  }
}

TEST(SimGolden, RingAllreduceIsTwoPMinusOneStepsOfOneChunk) {
  const std::uint32_t p = 4;
  const std::uint64_t k = 4000;  // chunks of 1000 bytes
  TraceBuilder b(p);
  for (std::uint32_t r = 0; r < p; ++r)
    b.collective(r, trace::fn::Allreduce, k);
  sim::Options o;
  o.algorithms[collectives::Operation::allreduce] = collectives::Algorithm::ring;
  const auto run = simulate(b.write("allreduce-ring"), link(), "loggpo", o);
  const Picoseconds expected = 2 * (p - 1) * model::one_way(run.cost, k / p);
  std::printf("expected 6 x one-way(1000) = %lld ps, simulated %lld\n",
              static_cast<long long>(expected.count()),
              static_cast<long long>(run.result.predicted_ps.count()));
  for (std::uint32_t r = 0; r < p; ++r)
    EXPECT_EQ(rank_end(run, r), expected);
}

TEST(SimGolden, BinomialBcastOfFourRanks) {
  // Root 0 sends to 2, then to 1 (as soon as the gap allows); 2 forwards to 3 once it has the data.
  const std::uint64_t k = 1000;
  TraceBuilder b(4);
  for (std::uint32_t r = 0; r < 4; ++r)
    b.collective(r, trace::fn::Bcast, k, 0);
  sim::Options o;
  o.algorithms[collectives::Operation::bcast] = collectives::Algorithm::binomial;
  const auto run = simulate(b.write("bcast"), link(), "loggpo", o);
  const auto m = run.cost.message(k);
  const Picoseconds ow = m.send_overhead + m.transfer + m.recv_overhead;
  const Picoseconds second_send = std::max(m.send_overhead, m.gap);
  std::printf(
      "root %lld (expected %lld), rank 2 %lld (expected %lld), rank 1 %lld (expected "
      "%lld), rank 3 %lld (expected %lld)\n",
      static_cast<long long>((rank_end(run, 0)).count()),
      static_cast<long long>((second_send + m.send_overhead).count()),
      static_cast<long long>((rank_end(run, 2)).count()),
      static_cast<long long>((ow + m.send_overhead).count()),
      static_cast<long long>((rank_end(run, 1)).count()),
      static_cast<long long>((second_send + ow).count()),
      static_cast<long long>((rank_end(run, 3)).count()), static_cast<long long>((2 * ow).count()));
  EXPECT_EQ(rank_end(run, 0), second_send + m.send_overhead);
  EXPECT_EQ(rank_end(run, 2), ow + m.send_overhead);
  EXPECT_EQ(rank_end(run, 1), second_send + ow);
  EXPECT_EQ(rank_end(run, 3), 2 * ow);
}

TEST(SimGolden, ModelNoneLeavesOnlyComputation) {
  TraceBuilder b(2);
  b.compute(0, 7'000'000_ps).send(0, 1, 100).compute(0, 1'000'000_ps);
  b.recv(1, 0, 100).compute(1, 2'000'000_ps);
  const auto path = b.write("none");
  trace::TraceReader trace(path);
  const std::vector<std::uint32_t> nodes(2, 0);
  const sim::Network net("none", {}, sim::cluster_of_placement(nodes), nodes);
  const auto r = sim::simulate(trace, net, {});
  EXPECT_EQ(r.per_rank[0].predicted_ps, 8'000'000_ps);
  EXPECT_EQ(r.per_rank[1].predicted_ps, 9'000'000_ps);  // waits 7 us for the send: late sender
  EXPECT_EQ(r.per_rank[1].predicted.late_sender, 7'000'000_ps);
  EXPECT_DOUBLE_EQ(r.measured_ns, 8000.0);  // the trace's own times: rank 0's 7 + 1 us
}

TEST(SimDeadlock, UnmatchedReceiveIsAReplayArtefact) {
  TraceBuilder b(2);
  b.recv(0, 1, 8, 5);
  const auto path = b.write("unmatched");
  try {
    simulate(path, link());
    FAIL() << "expected a deadlock";
  } catch (const sim::DeadlockError& e) {
    std::printf("%s\n", e.what());
    EXPECT_EQ(e.classification(), "replay");
    EXPECT_THAT(e.what(), HasSubstr("rank 0: event"));
    EXPECT_THAT(e.what(), HasSubstr("receive from rank 1, tag 5: no matching send posted"));
  }
}

TEST(SimDeadlock, SendSendDeadlocksOnlyWithASmallRendezvousThreshold) {
  // Both ranks send first, then receive: fine while k < S (eager), a deadlock for k >= S.
  TraceBuilder b(2);
  b.send(0, 1, 4096).recv(0, 1, 4096);
  b.send(1, 0, 4096).recv(1, 0, 4096);
  const auto path = b.write("sendsend");
  EXPECT_NO_THROW(simulate(path, link(65536), "loggps"));
  try {
    simulate(path, link(1024), "loggps");
    FAIL() << "expected a deadlock";
  } catch (const sim::DeadlockError& e) {
    std::printf("%s\n", e.what());
    EXPECT_EQ(e.classification(), "protocol");
    EXPECT_THAT(e.what(), HasSubstr("rendezvous, no matching receive posted"));
  }
}

// A cancelled wildcard receive stays withdrawn when its cancelled completion is read (hpcc's
// MPIRandomAccess ends each phase so): it used to be re-posted with source -1, and once its
// operation was reused, a later message matched the stale entry and the replay deadlocked.
TEST(SimSemantics, CancelledWildcardReceiveIsNotRepostedAtItsCompletion) {
  TraceBuilder b(2);
  const std::uint64_t wildcard = b.irecv(0, trace::kAnySource, 8);
  b.call(0, trace::fn::Cancel, [&](trace::Event& e) {
    e.set(trace::kRequests);
    e.requests = {wildcard};
  });
  b.waitall(0, {{wildcard, -1, -1, -1, 0, true}});
  // The operation is free again: an Isend takes it, then two exchanges with rank 1.
  const std::uint64_t s = b.isend(0, 1, 8);
  b.recv(0, 1, 8).waitall(0, {{s, -1, -1, -1, 0, false}});
  b.recv(1, 0, 8).send(1, 0, 8);
  const auto run = simulate(b.write("cancelled-wildcard"), link());
  EXPECT_EQ(run.result.messages, 2u);
  const Picoseconds one_way = model::one_way(run.cost, 8);
  std::printf("rank 0 ends at %lld ps; two one-way times are %lld ps\n",
              static_cast<long long>((rank_end(run, 0)).count()),
              static_cast<long long>((2 * one_way).count()));
  EXPECT_GE(rank_end(run, 0), 2 * one_way);
}

// A send whose sends complete on the receiver's acknowledgement (Tm = TA, DCP), cancelled after
// its data arrived at a receiver busy computing: the receiver's acknowledge action stays pending
// until it enters a call, and the cancelled operation is kept until then (reused earlier, a
// later send would have taken its pending acknowledgement). The next send's acknowledgement
// leaves when the receiver enters its receive at 100 us: rank 1 acks (o'_s), then copies (T3);
// rank 0's send ends when it has taken the ack, L later (o'_r).
TEST(SimSemantics, CancelledAcknowledgedSendKeepsItsPendingAcknowledgement) {
  auto l = link();
  l.ranges[0].transfer = "TA";
  l.ranges[0].progress = model::Progress::dependent;
  TraceBuilder b(2);
  const std::uint64_t s = b.isend(0, 1, 8);
  b.compute(0, 10'000'000_ps);
  b.call(0, trace::fn::Cancel, [&](trace::Event& e) {
    e.set(trace::kRequests);
    e.requests = {s};
  });
  b.waitall(0, {{s, -1, -1, -1, 0, true}});
  b.send(0, 1, 8);
  b.compute(1, 100'000'000_ps).recv(1, 0, 8);
  const auto run = simulate(b.write("cancelled-acknowledged"), l);
  const auto m = run.cost.message(8);
  ASSERT_TRUE(m.acknowledged);
  EXPECT_EQ(rank_end(run, 1), 100'000'000_ps + m.control_send + m.recv_overhead);
  EXPECT_EQ(rank_end(run, 0), 100'000'000_ps + m.control_send + m.latency + m.control_recv);
}

// A wildcard receive is matched when its completion is read; a rendezvous send waiting for it
// is answered then, not at the receive's post (that put the acknowledgement before the
// simulated present: hpcc's MPIRandomAccess under LogGPS). Rank 0 posts Irecv(ANY_SOURCE) at
// 0, computes 100 us, then waits; rank 1's 8000-byte send (S = 4096, independent progress) is
// answered at rank 0's Wait: its completion follows at 100 us + o' + o' + L + o' + o_s.
TEST(SimSemantics, LateResolvedWildcardAnswersARendezvousAtTheReceiversPresent) {
  TraceBuilder b(2);
  const std::uint64_t r = b.irecv(0, trace::kAnySource, 8000);
  b.compute(0, 100'000'000_ps).waitall(0, {{r, -1, 1, 0, 8000, false}});
  b.send(1, 0, 8000);
  const auto run = simulate(b.write("late-wildcard"), link(4096));
  const auto cost = run.cost.message(8000);
  ASSERT_TRUE(cost.rendezvous);
  const Picoseconds answered = 100'000'000_ps + cost.control_recv + cost.control_send;
  const Picoseconds send_done = answered + cost.latency + cost.control_recv + cost.send_overhead;
  std::printf("send completes at %lld ps (expected %lld)\n",
              static_cast<long long>((rank_end(run, 1)).count()),
              static_cast<long long>(send_done.count()));
  EXPECT_EQ(rank_end(run, 1), send_done);
  EXPECT_TRUE(run.result.notes.empty()) << "no event was computed before the present";
}

// A blocking MPI_Probe waits inside MPI_Probe until its message has arrived; the MPI_Recv
// after it only copies. Rank 1 computes 50 us and sends 8 bytes; rank 0 probes at once:
// MPI_Probe lasts o_s + L + (k-1)G after the 50 us, MPI_Recv lasts o_r.
TEST(SimSemantics, ProbeWaitsForItsMessage) {
  TraceBuilder b(2);
  b.call(0, trace::fn::Probe, [](trace::Event& e) {
    e.set(trace::kPeer);
    e.set(trace::kTag);
    e.set(trace::kComm);
    e.peer = 1;
    e.tag = 0;
    e.set(trace::kCompletions);
    e.completions.push_back({0, -1, 1, 0, 8, false});
  });
  b.recv(0, 1, 8);
  b.compute(1, 50'000'000_ps).send(1, 0, 8);
  const auto run = simulate(b.write("probe"), link());
  const auto cost = run.cost.message(8);
  const Picoseconds arrival = 50'000'000_ps + cost.send_overhead + cost.transfer;
  const auto& probe = run.result.functions.at("MPI_Probe");
  const auto& recv = run.result.functions.at("MPI_Recv");
  std::printf("MPI_Probe %lld ps (expected %lld), MPI_Recv %lld ps (expected o_r %lld)\n",
              static_cast<long long>(probe.predicted_ps.count()),
              static_cast<long long>(arrival.count()),
              static_cast<long long>(recv.predicted_ps.count()),
              static_cast<long long>(cost.recv_overhead.count()));
  EXPECT_EQ(probe.predicted_ps, arrival);
  EXPECT_EQ(recv.predicted_ps, cost.recv_overhead);
  EXPECT_EQ(rank_end(run, 0), arrival + cost.recv_overhead);
  // The wait is the sender's lateness.
  EXPECT_EQ(run.result.per_rank[0].predicted.late_sender, 50'000'000_ps);
}

TEST(SimErrors, TruncatedRankIsAClearError) {
  TraceBuilder b(1);
  auto path = b.write("truncated-src");
  // Rewrite rank 0 without its Finalize/end: a crashed run.
  const auto out = path.parent_path() / "truncated.cgtc";
  {
    trace::ContainerWriter w(out, 1);
    trace::BlockEncoder enc(0, w);
    enc.write_header(
        R"({"format":"commgauge-trace","version":1,"rank":0,"size":1,"clock":{"ticks_per_second":1e12}})");
    trace::Event init;
    init.function = trace::fn::Init;
    enc.append(init);
    enc.flush();
    w.finish(R"({"format":"commgauge-trace","version":1,"ranks":1})");
  }
  EXPECT_THROW(simulate(out, link()), trace::TraceError);
}

TEST(SimDeterminism, TheSameTraceGivesTheSamePicoseconds) {
  TraceBuilder b(6);
  for (std::uint32_t r = 0; r < 6; ++r) {
    b.compute(r, 1000_ps * (r + 1));
    const auto s = b.isend(r, static_cast<std::int32_t>((r + 1) % 6), 3000);
    const auto v = b.irecv(r, static_cast<std::int32_t>((r + 5) % 6), 3000);
    b.waitall(r, {{s, 0, -1, 0, 0, false},
                  {v, 1, static_cast<std::int32_t>((r + 5) % 6), 0, 3000, false}});
    b.collective(r, trace::fn::Allreduce, 64);
  }
  const auto path = b.write("determinism");
  const auto a = simulate(path, link(2048));
  const auto c = simulate(path, link(2048));
  ASSERT_EQ(a.result.per_rank.size(), c.result.per_rank.size());
  for (std::size_t r = 0; r < a.result.per_rank.size(); ++r) {
    EXPECT_EQ(a.result.per_rank[r].predicted_ps, c.result.per_rank[r].predicted_ps);
    EXPECT_EQ(a.result.per_rank[r].predicted.total(), a.result.per_rank[r].predicted_ps)
        << "the breakdown adds up to the rank's time";
  }
}

// Debug and Release (and the sanitizer build, which is Debug) must replay to the same
// picoseconds: -ffp-contract=off, integer time, no reliance on unspecified order. The digest of
// every rank's predicted time and breakdown over four synthetic programs (each model, each
// contention model, rendezvous with dependent progress, wildcard receives) is pinned: CI runs
// this test in the Release and in the ASan (Debug) build, so both must print this number.
TEST(SimDeterminism, ReleaseAndDebugBuildsGiveTheSameDigest) {
  struct Case {
    const char* pattern;
    std::uint32_t ranks, ranks_per_node;
    const char* model;
    const char* contention;
    std::uint64_t rendezvous_from;
  };
  const Case cases[] = {{"halo3d", 64, 4, "loggp", "fair", 0},
                        {"master-worker", 17, 1, "loggps", "none", 2048},
                        {"allreduce", 24, 4, "loggpo", "gige", 0},
                        {"alltoall", 12, 3, "loggp", "myrinet", 0}};
  std::uint64_t digest = 1469598103934665603ull;  // FNV-1a
  auto mix = [&digest](std::int64_t v) {
    for (int b = 0; b < 8; ++b) {
      digest ^= static_cast<std::uint64_t>(v >> (8 * b)) & 0xff;
      digest *= 1099511628211ull;
    }
  };
  for (const Case& c : cases) {
    synth::SynthOptions o;
    o.pattern = c.pattern;
    o.ranks = c.ranks;
    o.ranks_per_node = c.ranks_per_node;
    o.iterations = 3;
    o.bytes = 4096;
    o.compute_us = 20;
    const auto path = std::filesystem::temp_directory_path() /
                      ("commgauge-digest-" + std::to_string(getpid()) + "-" + c.pattern + ".cgtc");
    synth::write_synthetic_trace(o, path, true);
    const trace::TraceReader trace(path);
    const auto nodes = sim::recorded_placement(trace.index(), trace.ranks());
    const auto l = link(c.rendezvous_from, model::Progress::dependent);
    const sim::Network net(c.model, {{"intra_node", l}, {"inter_node", l}},
                           sim::cluster_of_placement(nodes), nodes);
    sim::Options options;
    options.contention = c.contention;
    const sim::Result r = sim::simulate(trace, net, options);
    std::filesystem::remove(path);
    for (const auto& rank : r.per_rank) {
      mix(rank.predicted_ps.count());
      const auto& b = rank.predicted;
      for (const Picoseconds part : {b.compute, b.overhead, b.transfer, b.late_sender,
                                     b.late_receiver, b.synchronization, b.opaque})
        mix(part.count());
      mix(static_cast<std::int64_t>(rank.forced_completions));
    }
    std::printf("%s (%u ranks, %s, contention %s): slowest %lld ps\n", c.pattern, c.ranks, c.model,
                c.contention, static_cast<long long>(r.predicted_ps.count()));
  }
  std::printf("digest %016llx\n", static_cast<unsigned long long>(digest));
  EXPECT_EQ(digest, 0xdb95005372b09cffull);
}

// --placement recorded holds the cluster to what the trace did: its nodes must exist and each
// must have cores for the ranks it held (a 1-core node took 2 ranks; a 2-node cluster was said to
// meet a trace of "3 nodes" when it had 8).
TEST(Placement, RecordedPlacementMustFitTheClusterNodesAndCores) {
  sim::Cluster one_core;
  one_core.nodes = 8;
  one_core.cores_per_node = 1;
  try {
    sim::place_ranks("recorded", 2, one_core, {0, 0});
    ADD_FAILURE() << "two ranks on a 1-core node";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("more than 1 ranks on its node 0"));
  }
  sim::Cluster two_nodes;
  two_nodes.nodes = 2;
  two_nodes.cores_per_node = 4;
  try {
    sim::place_ranks("recorded", 8, two_nodes, {0, 1, 2, 3, 4, 5, 6, 7});
    ADD_FAILURE() << "8 nodes on 2";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the trace uses 8 nodes"));
  }
  EXPECT_EQ(sim::place_ranks("recorded", 4, two_nodes, {0, 0, 1, 1}),
            (std::vector<std::uint32_t>{0, 0, 1, 1}));
}

}  // namespace
}  // namespace commgauge::testing
