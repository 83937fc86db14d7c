// OTF2 both ways: the collective totals against Score-P's count worked by hand, and commgauge
// traces exported to OTF2 and read back, call for call.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

#include "synth/synth.hpp"
#include "trace/check.hpp"
#include "trace/export_otf2.hpp"
#include "trace/function_ids.hpp"
#include "trace/import_otf2.hpp"
#include "trace/otf2_sizes.hpp"
#include "trace/reader.hpp"
#include "trace/summary.hpp"

namespace commgauge::trace {
namespace {

namespace fs = std::filesystem;
using O = collectives::Operation;

Event buffers(std::uint64_t bytes, std::uint64_t recv_bytes = 0, bool in_place = false) {
  Event e;
  e.bytes = bytes;
  e.recv_bytes = recv_bytes;
  if (in_place) e.flags = kInPlace;
  return e;
}

void expect_totals(CollectiveBytes got, std::uint64_t sent, std::uint64_t received,
                   const char* what) {
  EXPECT_EQ(got.sent, sent) << what;
  EXPECT_EQ(got.received, received) << what;
}

// Four members, 8-byte blocks, as Score-P's adapter counts (every peer's block, one's own
// included unless in place).
TEST(Otf2Sizes, TotalsFollowScorePsCount) {
  expect_totals(collective_bytes(O::allreduce, buffers(8), 4, 1, 0), 32, 32, "allreduce");
  expect_totals(collective_bytes(O::allreduce, buffers(8, 0, true), 4, 1, 0), 24, 24,
                "allreduce in place");
  expect_totals(collective_bytes(O::bcast, buffers(8), 4, 2, 2), 32, 8, "bcast at the root");
  expect_totals(collective_bytes(O::bcast, buffers(8), 4, 1, 2), 0, 8, "bcast elsewhere");
  expect_totals(collective_bytes(O::reduce, buffers(8), 4, 0, 0), 8, 32, "reduce at the root");
  expect_totals(collective_bytes(O::reduce, buffers(8), 4, 3, 0), 8, 0, "reduce elsewhere");
  expect_totals(collective_bytes(O::gather, buffers(8, 8), 4, 0, 0), 8, 32, "gather at the root");
  expect_totals(collective_bytes(O::gather, buffers(8, 8, true), 4, 0, 0), 0, 24,
                "gather in place");
  expect_totals(collective_bytes(O::scatter, buffers(8, 8), 4, 0, 0), 32, 8, "scatter root");
  expect_totals(collective_bytes(O::scatter, buffers(0, 8), 4, 1, 0), 0, 8, "scatter elsewhere");
  expect_totals(collective_bytes(O::alltoall, buffers(8, 8), 4, 1, 0), 32, 32, "alltoall");
  expect_totals(collective_bytes(O::allgather, buffers(8, 8), 4, 1, 0), 32, 32, "allgather");
  expect_totals(collective_bytes(O::scan, buffers(8), 4, 1, 0), 24, 16, "scan at rank 1");
  expect_totals(collective_bytes(O::exscan, buffers(8), 4, 1, 0), 16, 8, "exscan at rank 1");
  expect_totals(collective_bytes(O::barrier, buffers(0), 4, 1, 0), 0, 0, "barrier");
  Event v;
  v.counts = {1, 2, 3, 4};
  v.recv_counts = {5, 6, 7, 8};
  expect_totals(collective_bytes(O::alltoallv, v, 4, 1, 0), 10, 26, "alltoallv");
  v.flags = kInPlace;
  expect_totals(collective_bytes(O::alltoallv, v, 4, 1, 0), 20, 20, "alltoallv in place");
  Event rs;
  rs.recv_counts = {4, 8, 12, 16};
  expect_totals(collective_bytes(O::reduce_scatter, rs, 4, 1, 0), 40, 32, "reduce_scatter");
}

// Where the totals determine the blocks, the way back gives the blocks the call passed.
TEST(Otf2Sizes, BlocksComeBackFromTheTotals) {
  struct Case {
    O op;
    std::uint64_t me, root;
    Event e;
  };
  const std::vector<Case> cases = {
      {O::allreduce, 1, 0, buffers(24)},
      {O::bcast, 0, 0, buffers(24)},
      {O::bcast, 2, 0, buffers(24)},
      {O::reduce, 0, 0, buffers(24, 24)},
      {O::reduce, 1, 0, buffers(24)},
      {O::gather, 0, 0, buffers(24, 24)},
      {O::gather, 3, 0, buffers(24)},
      {O::scatter, 0, 0, buffers(24, 24)},
      {O::scatter, 2, 0, buffers(0, 24)},
      {O::alltoall, 1, 0, buffers(24, 24)},
      {O::allgather, 1, 0, buffers(24, 24)},
      {O::scan, 2, 0, buffers(24)},
      {O::exscan, 2, 0, buffers(24)},
      {O::exscan, 3, 0, buffers(24)},
      {O::reduce_scatter_block, 1, 0, buffers(24)},
  };
  for (const Case& c : cases) {
    Event back;
    collective_buffers(c.op, collective_bytes(c.op, c.e, 4, c.me, c.root), 4, c.me, c.root, back);
    EXPECT_EQ(back.bytes, c.e.bytes) << static_cast<int>(c.op) << " at " << c.me;
    EXPECT_EQ(back.recv_bytes, c.e.recv_bytes) << static_cast<int>(c.op) << " at " << c.me;
  }
  // v-collectives: the totals survive, spread evenly, the remainder on the last peer.
  Event v;
  v.counts = {1, 2, 3, 5};
  v.recv_counts = {4, 4, 4, 4};
  Event back;
  collective_buffers(O::alltoallv, collective_bytes(O::alltoallv, v, 4, 0, 0), 4, 0, 0, back);
  EXPECT_EQ(back.counts, (std::vector<std::uint64_t>{2, 2, 2, 5}));
  EXPECT_EQ(back.recv_counts, v.recv_counts);
}

class Otf2RoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/commgauge-otf2-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A synthetic trace of `pattern`, exported to OTF2 and imported back.
  void round_trip(const std::string& pattern, std::uint32_t ranks, std::uint64_t bytes) {
    synth::SynthOptions o;
    o.pattern = pattern;
    o.ranks = ranks;
    o.iterations = 3;
    o.bytes = bytes;
    o.compute_us = 7;
    o.ranks_per_node = 2;
    const fs::path original = dir_ / pattern;
    synth::write_synthetic_trace(o, original, false);
    const TraceReader a(original);
    const Otf2ExportResult exported = export_otf2(a, dir_ / (pattern + "-otf2"));
    EXPECT_EQ(exported.ranks, ranks);
    EXPECT_EQ(exported.locations, ranks);
    ASSERT_TRUE(fs::exists(dir_ / (pattern + "-otf2") / "traces.otf2"));
    const fs::path anchor = otf2_anchor(dir_ / (pattern + "-otf2"));
    ASSERT_EQ(anchor, dir_ / (pattern + "-otf2") / "traces.otf2");
    const Otf2ImportResult imported = import_otf2(anchor, dir_ / (pattern + ".cgtc"));
    EXPECT_EQ(imported.ranks, ranks);
    EXPECT_EQ(imported.messages, exported.messages);
    EXPECT_EQ(imported.collectives, exported.collectives);
    EXPECT_THAT(imported.creator, ::testing::StartsWith("commgauge "));
    const TraceReader b(dir_ / (pattern + ".cgtc"));
    const CheckResult check = check_trace(b);
    EXPECT_TRUE(check.ok()) << check_report(check, b.ranks());
    expect_same_calls(a, b, pattern);
    // Hosts come back from the system tree.
    EXPECT_EQ(b.index()["hosts"].size(), (ranks + 1) / 2);
    const TraceSummary sa = summarize(a), sb = summarize(b);
    for (std::uint32_t r = 0; r < ranks; ++r) {
      EXPECT_NEAR(sb.per_rank[r].computation_seconds, sa.per_rank[r].computation_seconds, 1e-8);
      EXPECT_NEAR(sb.per_rank[r].mpi_seconds, sa.per_rank[r].mpi_seconds, 1e-8);
    }
  }

  static std::vector<std::pair<Event, double>> calls(const TraceReader& t, std::uint32_t rank) {
    RankReader reader = t.open_rank(rank);
    const ClockMap clock = clock_map(t, reader);
    std::vector<std::pair<Event, double>> out;
    Event e;
    while (reader.next(e))
      if (e.kind == RecordKind::function) out.emplace_back(e, clock.root_ns(e.start_tick));
    return out;
  }

  static void expect_same_calls(const TraceReader& a, const TraceReader& b,
                                const std::string& what) {
    const double a0 = calls(a, 0).front().second, b0 = calls(b, 0).front().second;
    for (std::uint32_t r = 0; r < a.ranks(); ++r) {
      const auto x = calls(a, r), y = calls(b, r);
      ASSERT_EQ(x.size(), y.size()) << what << " rank " << r;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const Event& e = x[i].first;
        const Event& f = y[i].first;
        const std::string where =
            fmt::format("{} rank {} call {} ({})", what, r, i, function_name(e.function));
        EXPECT_EQ(f.function, e.function) << where;
        EXPECT_NEAR(y[i].second - b0, x[i].second - a0, 1.0) << where << ": start, ns";
        if (e.has(kPeer) && !e.flag(kWildcardSource)) {
          EXPECT_EQ(f.peer, e.peer) << where;
        }
        if (e.has(kTag) && !e.flag(kWildcardTag)) {
          EXPECT_EQ(f.tag, e.tag) << where;
        }
        if (e.has(kComm)) {
          EXPECT_EQ(f.comm, e.comm) << where;
        }
        // A receive's posted size is not in OTF2: it comes back as the size received.
        if (e.has(kBytes) && e.function != fn::Recv && e.function != fn::Irecv) {
          EXPECT_EQ(f.bytes, e.bytes) << where;
        }
        if (e.has(kRequest)) {
          EXPECT_EQ(f.request, e.request + 1) << where;
        }
        ASSERT_EQ(f.completions.size(), e.completions.size()) << where;
        for (std::size_t k = 0; k < e.completions.size(); ++k) {
          const Completion& c = e.completions[k];
          const Completion& d = f.completions[k];
          if (c.request != 0) {
            EXPECT_EQ(d.request, c.request + 1) << where;
          }
          EXPECT_EQ(d.source, c.source) << where;
          if (c.source >= 0) {
            EXPECT_EQ(d.tag, c.tag) << where;
            EXPECT_EQ(d.bytes, c.bytes) << where;
          }
        }
      }
    }
  }

  fs::path dir_;
};

TEST_F(Otf2RoundTrip, RingOfNonblockingMessages) {
  round_trip("ring", 4, 100);
}

TEST_F(Otf2RoundTrip, Halo2dWithWaitall) {
  round_trip("halo2d", 6, 4096);
}

TEST_F(Otf2RoundTrip, Allreduce) {
  round_trip("allreduce", 4, 64);
}

TEST_F(Otf2RoundTrip, Alltoall) {
  round_trip("alltoall", 3, 1000);
}

TEST_F(Otf2RoundTrip, MasterWorkerWithWildcardReceives) {
  round_trip("master-worker", 3, 256);
}

TEST_F(Otf2RoundTrip, AnExistingArchiveIsNotOverwritten) {
  synth::SynthOptions o;
  o.pattern = "ring";
  o.ranks = 2;
  synth::write_synthetic_trace(o, dir_ / "t", false);
  const TraceReader a(dir_ / "t");
  export_otf2(a, dir_ / "out");
  try {
    export_otf2(a, dir_ / "out");
    FAIL() << "a second export into the same directory must be refused";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("holds an OTF2 archive"));
  }
  // A failed export leaves no scratch directory behind.
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(::testing::StartsWith(".")));
  // With replace (trace-export --force) the archive of a 4-rank trace replaces the 2-rank one.
  o.ranks = 4;
  synth::write_synthetic_trace(o, dir_ / "t4", false);
  const TraceReader b(dir_ / "t4");
  EXPECT_EQ(export_otf2(b, dir_ / "out", true).ranks, 4u);
  import_otf2(dir_ / "out" / "traces.otf2", dir_ / "back.cgtc");
  EXPECT_EQ(TraceReader(dir_ / "back.cgtc").ranks(), 4u) << "the archive read back is the new one";
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(::testing::StartsWith(".")));
  // Never a user's file that only has an archive's name.
  fs::remove_all(dir_ / "out" / "traces");
  std::ofstream(dir_ / "out" / "traces") << "my notes";
  EXPECT_THROW(export_otf2(b, dir_ / "out", true), InputError);
  std::ifstream mine(dir_ / "out" / "traces");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(mine), {}), "my notes");
}

TEST(Otf2Anchor, FindsTheArchiveInAFileOrADirectory) {
  char pattern[] = "/tmp/commgauge-otf2-anchor-XXXXXX";
  const fs::path dir = ::mkdtemp(pattern);
  EXPECT_TRUE(otf2_anchor(dir).empty());
  std::ofstream(dir / "traces.otf2") << "x";
  EXPECT_EQ(otf2_anchor(dir), dir / "traces.otf2");
  EXPECT_EQ(otf2_anchor(dir / "traces.otf2"), dir / "traces.otf2");
  std::ofstream(dir / "other.otf2") << "x";
  EXPECT_TRUE(otf2_anchor(dir).empty()) << "two archives: the user names one";
  std::ofstream(dir / "index.json") << "{}";
  EXPECT_TRUE(otf2_anchor(dir / "index.json").empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace commgauge::trace
