// The summary's communication matrix and message-size histogram against traces whose traffic
// is known by construction: synthetic patterns and hand-built calls.

#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "report/trace_report.hpp"
#include "sim_builder.hpp"
#include "synth/synth.hpp"
#include "trace/reader.hpp"
#include "trace/summary.hpp"

namespace commgauge::trace {
namespace {

class Traffic_ : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("commgauge-traffic-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  TraceSummary synthetic(const std::string& pattern, std::uint32_t ranks, std::uint32_t iterations,
                         std::uint64_t bytes) {
    synth::SynthOptions o;
    o.pattern = pattern;
    o.ranks = ranks;
    o.iterations = iterations;
    o.bytes = bytes;
    const auto written = synth::write_synthetic_trace(o, dir_, true);
    return summarize(TraceReader(written.file));
  }

  std::filesystem::path dir_;
};

TEST(SizeHistogram, BinsArePowersOfTwo) {
  EXPECT_EQ(SizeHistogram::bin_of(0), 0u);
  EXPECT_EQ(SizeHistogram::bin_of(1), 1u);
  EXPECT_EQ(SizeHistogram::bin_of(2), 2u);
  EXPECT_EQ(SizeHistogram::bin_of(3), 2u);
  EXPECT_EQ(SizeHistogram::bin_of(4), 3u);
  EXPECT_EQ(SizeHistogram::bin_of(1023), 10u);
  EXPECT_EQ(SizeHistogram::bin_of(1024), 11u);
  EXPECT_EQ(SizeHistogram::bin_of(std::uint64_t{1} << 63), 64u);
  EXPECT_EQ(SizeHistogram::bin_of(std::numeric_limits<std::uint64_t>::max()), 64u);
  for (std::size_t b = 1; b <= 64; ++b) {
    EXPECT_EQ(SizeHistogram::bin_of(SizeHistogram::lowest(b)), b);
    EXPECT_EQ(SizeHistogram::bin_of(SizeHistogram::highest(b)), b);
  }
  EXPECT_EQ(SizeHistogram::lowest(11), 1024u);
  EXPECT_EQ(SizeHistogram::highest(11), 2047u);
  SizeHistogram h;
  h.add(0);
  h.add(1000);
  h.add(600);
  EXPECT_EQ(h.bins[0].messages, 1u);
  EXPECT_EQ(h.bins[10].messages, 2u);
  EXPECT_EQ(h.bins[10].bytes, 1600u);
}

TEST_F(Traffic_, RingSendsEachIterationToTheRightNeighbourOnly) {
  const TraceSummary s = synthetic("ring", 6, 3, 100);
  ASSERT_EQ(s.sent.size(), 6u);
  for (std::int32_t r = 0; r < 6; ++r) {
    ASSERT_EQ(s.sent[r].size(), 1u) << "rank " << r;
    const auto& [to, t] = *s.sent[r].begin();
    EXPECT_EQ(to, (r + 1) % 6);
    EXPECT_EQ(t.messages, 3u);
    EXPECT_EQ(t.bytes, 300u);
  }
  // The largest messages are the sends, each once: a receive's posted size is no message.
  ASSERT_EQ(s.largest.size(), 10u);
  for (const auto& m : s.largest)
    EXPECT_EQ(m.function, fn::Isend);
  // 18 messages of 100 B: bin [64, 127]; no collective.
  EXPECT_EQ(s.point_to_point_sizes.bins[7].messages, 18u);
  EXPECT_EQ(s.point_to_point_sizes.bins[7].bytes, 1800u);
  std::uint64_t collectives = 0;
  for (const auto& b : s.collective_sizes.bins)
    collectives += b.messages;
  EXPECT_EQ(collectives, 0u);
}

// Found by a red-team run: 19 sends of 10^18 bytes per rank summed to 1.1e18 (wrapped). Totals
// saturate at 2^64 - 1; a single message's bytes and the message counts stay exact.
TEST_F(Traffic_, ByteTotalsSaturateInsteadOfWrapping) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const TraceSummary s = synthetic("ring", 2, 19, 1'000'000'000'000'000'000);
  ASSERT_EQ(s.sent.size(), 2u);
  for (std::int32_t r = 0; r < 2; ++r) {
    const auto& t = s.sent[r].at(1 - r);
    EXPECT_EQ(t.messages, 19u);
    EXPECT_EQ(t.bytes, kMax) << "rank " << r;
  }
  EXPECT_EQ(s.functions.at(fn::Isend).calls, 38u);
  EXPECT_EQ(s.functions.at(fn::Isend).bytes, kMax);
  EXPECT_EQ(s.largest.front().bytes, 1'000'000'000'000'000'000u);
  std::uint64_t total = 5;
  add_bytes(total, 7);
  EXPECT_EQ(total, 12u);
  add_bytes(total, kMax - 11);
  EXPECT_EQ(total, kMax);
}

TEST_F(Traffic_, MasterWorkerTasksResultsAndStops) {
  // Rank 0 sends each worker a first task, 2 more tasks and a 0-byte stop; each worker sends 3
  // results of 1000 B.
  const TraceSummary s = synthetic("master-worker", 5, 3, 1000);
  ASSERT_EQ(s.sent.size(), 5u);
  ASSERT_EQ(s.sent[0].size(), 4u);
  for (std::int32_t w = 1; w < 5; ++w) {
    EXPECT_EQ(s.sent[0].at(w).messages, 4u);
    EXPECT_EQ(s.sent[0].at(w).bytes, 3000u);
    ASSERT_EQ(s.sent[w].size(), 1u);
    EXPECT_EQ(s.sent[w].at(0).messages, 3u);
    EXPECT_EQ(s.sent[w].at(0).bytes, 3000u);
  }
  EXPECT_EQ(s.point_to_point_sizes.bins[0].messages, 4u);    // the stops
  EXPECT_EQ(s.point_to_point_sizes.bins[10].messages, 24u);  // 1000 B: [512, 1023]
  const std::string csv = report::traffic_csv(s);
  EXPECT_EQ(csv.rfind("from,to,messages,bytes\n0,1,4,3000\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("\n4,0,3,3000\n"), std::string::npos) << csv;
  const nlohmann::json j = report::trace_summary_json(s);
  EXPECT_EQ(j.at("point_to_point").at("messages"), 28);
  EXPECT_EQ(j.at("point_to_point").at("bytes"), 24000);
  EXPECT_EQ(j.at("point_to_point").at("pairs").size(), 8u);
  ASSERT_EQ(j.at("message_sizes").size(), 2u);
  EXPECT_EQ(j.at("message_sizes")[1].at("from_bytes"), 512);
  EXPECT_EQ(j.at("message_sizes")[1].at("to_bytes"), 1023);
  EXPECT_EQ(j.at("message_sizes")[1].at("point_to_point_messages"), 24);
}

TEST_F(Traffic_, CollectivesAreCountedBySizeNotAsPairs) {
  const TraceSummary s = synthetic("allreduce", 4, 5, 64);
  for (const auto& m : s.sent)
    EXPECT_TRUE(m.empty());
  EXPECT_EQ(s.collective_sizes.bins[7].messages, 20u);  // 64 B: [64, 127], 4 ranks x 5 calls
  EXPECT_EQ(s.collective_sizes.bins[7].bytes, 1280u);
  EXPECT_EQ(report::traffic_csv(s), "from,to,messages,bytes\n");
}

TEST(Traffic, SendrecvPersistentStartsAndProcNull) {
  // Rank 0: a Sendrecv of 10 B to 1 receiving 20 B from 2 (only the send half counts), a
  // persistent send of 300 B to 1 started twice (Start, then Startall with it), a send to
  // MPI_PROC_NULL (nothing). Rank 1: a Bsend of 7 B to 0.
  testing::TraceBuilder b(3);
  b.call(0, fn::Sendrecv, [](Event& e) {
    e.fields |= kPeer | kTag | kComm | kBytes | kRoot | kRecvBytes;
    e.peer = 1;
    e.bytes = 10;
    e.root = 2;
    e.recv_bytes = 20;
  });
  b.call(0, fn::Send_init, [](Event& e) {
    e.fields |= kPeer | kTag | kComm | kBytes | kRequest;
    e.peer = 1;
    e.bytes = 300;
    e.request = 41;
  });
  b.call(0, fn::Start, [](Event& e) {
    e.fields |= kRequests;
    e.requests = {41};
  });
  b.call(0, fn::Startall, [](Event& e) {
    e.fields |= kRequests;
    e.requests = {41, 99};  // 99: not a persistent send this rank made
  });
  b.send(0, kProcNull, 5000);
  b.send(1, 0, 7, 0, fn::Bsend);
  const auto path = b.write("traffic-calls");
  const TraceSummary s = summarize(TraceReader(path));
  ASSERT_EQ(s.sent.size(), 3u);
  EXPECT_TRUE(s.sent[2].empty());
  ASSERT_EQ(s.sent[0].size(), 1u);
  EXPECT_EQ(s.sent[0].at(1).messages, 3u);
  EXPECT_EQ(s.sent[0].at(1).bytes, 610u);
  ASSERT_EQ(s.sent[1].size(), 1u);
  EXPECT_EQ(s.sent[1].at(0).bytes, 7u);
  EXPECT_EQ(s.point_to_point_sizes.bins[9].messages, 2u);  // 300 B: [256, 511]
  EXPECT_EQ(s.point_to_point_sizes.bins[4].messages, 1u);  // 10 B: [8, 15]
  EXPECT_EQ(s.point_to_point_sizes.bins[3].messages, 1u);  // 7 B: [4, 7]
  EXPECT_EQ(s.point_to_point_sizes.bins[5].messages, 0u);  // the 20 B received count nothing
  // The largest messages: the Sendrecv's and the Bsend's; not the send to MPI_PROC_NULL.
  ASSERT_EQ(s.largest.size(), 2u);
  EXPECT_EQ(s.largest[0].function, fn::Sendrecv);
  EXPECT_EQ(s.largest[0].bytes, 10u);
  EXPECT_EQ(s.largest[1].function, fn::Bsend);
  std::filesystem::remove(path);
}

TEST_F(Traffic_, TheTextShowsTheMatrixWhenSmallAndTheTopPairsOtherwise) {
  const std::string small = report::trace_summary_text(synthetic("ring", 3, 2, 8));
  EXPECT_NE(small.find("Point-to-point traffic (what the send calls passed): 6 messages, 48 B "
                       "between 3 pairs of ranks"),
            std::string::npos)
      << small;
  EXPECT_NE(small.find("from\\to   0   1   2\n"), std::string::npos) << small;
  EXPECT_NE(small.find("\n0         -  16   -\n"), std::string::npos) << small;
  const std::string large = report::trace_summary_text(synthetic("ring", 40, 1, 8));
  EXPECT_NE(
      large.find("the 16 pairs with the most bytes (the JSON and CSV outputs have every pair)"),
      std::string::npos)
      << large;
  EXPECT_EQ(large.find("from\\to"), std::string::npos);
}

// The tracer's calibration per rank (ns per recorded event): a rank above 1.3 times the least
// is named with its figures; below, or with fewer than two calibrated ranks, nothing is said.
TEST(SlowedProcessor, RanksAboveTheRatioToTheFastestAreNamed) {
  EXPECT_EQ(slowed_processor_note({27.7, 31.0}), "");  // 1.12x: as quiet runs here
  EXPECT_EQ(slowed_processor_note({47.2}), "");
  EXPECT_EQ(slowed_processor_note({0.0, 47.2}), "") << "0: no calibration (imported traces)";
  const std::string one = slowed_processor_note({28.0, 47.6});
  EXPECT_NE(one.find("rank 1 (47.6 ns, 1.70x)"), std::string::npos) << one;
  EXPECT_NE(one.find("(28.0 ns per event"), std::string::npos) << one;
  EXPECT_NE(one.find("1.70 times slower"), std::string::npos) << one;
  EXPECT_EQ(one.find("rank 0"), std::string::npos) << one;
  // 1.3x exactly is not above the ratio; 1.31x is.
  EXPECT_EQ(slowed_processor_note({10.0, 13.0}), "");
  EXPECT_NE(slowed_processor_note({10.0, 13.1}), "");
  // Ten slowed ranks: eight named, then how many more; the largest ratio is the one stated.
  std::vector<double> many(12, 10.0);
  for (std::size_t r = 2; r < 12; ++r)
    many[r] = 14.0 + static_cast<double>(r);
  const std::string ten = slowed_processor_note(many);
  EXPECT_NE(ten.find("ranks 2 (16.0 ns, 1.60x)"), std::string::npos) << ten;
  EXPECT_NE(ten.find("9 (23.0 ns, 2.30x) and 2 more"), std::string::npos) << ten;
  EXPECT_NE(ten.find("2.50 times slower"), std::string::npos) << ten;
  EXPECT_EQ(ten.find("10 ("), std::string::npos) << ten;
}

}  // namespace
}  // namespace commgauge::trace
