// commgauge synth: every pattern read back through the trace reader, event by event against
// sequences built here independently, checked by trace-check, and bad input refused.

#include <gmock/gmock.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"
#include "measure/share.hpp"
#include "model/scheme.hpp"
#include "synth/synth.hpp"
#include "trace/check.hpp"
#include "trace/export_simgrid.hpp"
#include "trace/function_ids.hpp"
#include "trace/output_directory.hpp"
#include "trace/reader.hpp"
#include "trace/summary.hpp"

namespace commgauge::synth {
namespace {

namespace fs = std::filesystem;
namespace fn = trace::fn;
using ::testing::HasSubstr;
using trace::Completion;
using trace::Event;

constexpr std::int64_t kTicksPerUs = 1'000'000;  // picoseconds

// ---- expected events, written from docs/trace-format.md §5.4 ----

Event at(std::uint32_t function, std::int64_t t) {
  Event e;
  e.function = function;
  e.start_tick = e.end_tick = t;
  return e;
}

Event p2p(std::uint32_t function, std::int64_t t, std::int32_t peer, std::int32_t tag,
          std::uint64_t bytes, std::uint64_t request = 0) {
  Event e = at(function, t);
  e.fields = trace::kPeer | trace::kTag | trace::kComm | trace::kBytes | trace::kCount;
  e.peer = peer;
  e.tag = tag;
  e.bytes = e.count = bytes;
  if (request != 0) {
    e.fields |= trace::kRequest;
    e.request = request;
  }
  return e;
}

Event recv(std::int64_t start, std::int64_t end, std::int32_t asked, std::int32_t asked_tag,
           std::uint64_t posted, std::int32_t source, std::int32_t tag, std::uint64_t bytes) {
  Event e = p2p(fn::Recv, start, asked, asked_tag, posted);
  e.end_tick = end;
  e.fields |= trace::kCompletions;
  e.completions = {{0, -1, source, tag, bytes, false}};
  if (asked == trace::kAnySource) e.flags |= trace::kWildcardSource;
  if (asked_tag == -1) e.flags |= trace::kWildcardTag;
  if (e.flags != 0) e.fields |= trace::kFlags;
  return e;
}

Event waitall(std::int64_t t, std::vector<Completion> completions) {
  Event e = at(fn::Waitall, t);
  e.fields = trace::kCount | trace::kCompletions;
  e.count = completions.size();
  e.completions = std::move(completions);
  return e;
}

Event end_record(std::int64_t t) {
  Event e = at(0, t);
  e.kind = trace::RecordKind::end;
  e.fields = trace::kText;
  e.text = R"({"incomplete":false,"local":{}})";
  return e;
}

/// Init, the body, Finalize and the end record at the body's last time.
std::vector<Event> framed(std::vector<Event> body, std::int64_t end) {
  std::vector<Event> all = {at(fn::Init, 0)};
  all.insert(all.end(), body.begin(), body.end());
  all.push_back(at(fn::Finalize, end));
  all.push_back(end_record(end));
  return all;
}

std::vector<Event> read_rank(const trace::TraceReader& trace, std::uint32_t rank) {
  trace::RankReader reader = trace.open_rank(rank);
  std::vector<Event> events;
  Event e;
  while (reader.next(e))
    events.push_back(e);
  EXPECT_EQ(reader.end(), trace::RankEnd::complete) << "rank " << rank;
  return events;
}

std::string describe(const Event& e) {
  std::string s = fmt::format(
      "{}#{} [{}, {}] fields {:#x} peer {} tag {} bytes {} count {} "
      "request {} recv_bytes {} flags {:#x} completions",
      static_cast<int>(e.kind), e.function, e.start_tick, e.end_tick, e.fields, e.peer, e.tag,
      e.bytes, e.count, e.request, e.recv_bytes, e.flags);
  for (const auto& c : e.completions)
    s += fmt::format(" {{{} {} {} {} {}}}", c.request, c.index, c.source, c.tag, c.bytes);
  return s;
}

void expect_events(const std::vector<Event>& got, const std::vector<Event>& want,
                   const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i] == want[i]) << what << " event " << i << "\n got  " << describe(got[i])
                                   << "\n want " << describe(want[i]);
  }
}

/// Point-to-point messages per (source, destination, tag): sends from the send calls, receives
/// from the completions (statuses) of receive calls.
struct MessageCounts {
  std::map<std::tuple<int, int, int>, int> sent, received;
};

MessageCounts count_messages(const trace::TraceReader& trace) {
  MessageCounts m;
  for (std::uint32_t r = 0; r < trace.ranks(); ++r) {
    std::map<std::uint64_t, bool> is_recv;
    for (const Event& e : read_rank(trace, r)) {
      const auto me = static_cast<int>(r);
      if (e.function == fn::Send || e.function == fn::Isend) ++m.sent[{me, e.peer, e.tag}];
      if (e.function == fn::Irecv) is_recv[e.request] = true;
      if (e.function == fn::Recv) ++m.received[{e.completions[0].source, me, e.completions[0].tag}];
      if (e.function == fn::Waitall)
        for (const auto& c : e.completions)
          if (is_recv[c.request]) ++m.received[{c.source, me, c.tag}];
    }
  }
  return m;
}

class Synth : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/commgauge-synth-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Writes the trace, then checks what every pattern must satisfy.
  SynthResult write(const SynthOptions& o, const std::string& name = "trace") {
    const SynthResult r = write_synthetic_trace(o, dir_ / name, false);
    trace_ = std::make_unique<trace::TraceReader>(dir_ / name);
    EXPECT_EQ(trace_->ranks(), o.ranks);
    EXPECT_TRUE(trace_->missing_ranks().empty());
    check_ = trace::check_trace(*trace_);
    std::string issues;
    for (const auto& i : check_.issues)
      issues += fmt::format("rank {} event {}: {}\n", i.rank, i.event, i.message);
    EXPECT_EQ(check_.errors, 0u) << issues;
    EXPECT_EQ(check_.warnings, 0u) << issues;
    const MessageCounts m = count_messages(*trace_);
    EXPECT_EQ(m.sent, m.received);
    return r;
  }

  fs::path dir_;
  std::unique_ptr<trace::TraceReader> trace_;
  trace::CheckResult check_;
};

SynthOptions options(const std::string& pattern, std::uint32_t ranks, std::uint32_t iterations,
                     std::uint64_t bytes, double compute_us) {
  SynthOptions o;
  o.pattern = pattern;
  o.ranks = ranks;
  o.iterations = iterations;
  o.bytes = bytes;
  o.compute_us = compute_us;
  return o;
}

TEST_F(Synth, RingIsIsendIrecvWaitallAfterEachComputation) {
  const SynthResult r = write(options("ring", 4, 3, 100, 5));
  EXPECT_EQ(r.events, 4u * (1 + 3 * 3 + 2));
  for (std::uint32_t rank = 0; rank < 4; ++rank) {
    const auto right = static_cast<std::int32_t>((rank + 1) % 4);
    const auto left = static_cast<std::int32_t>((rank + 3) % 4);
    std::vector<Event> body;
    for (std::uint64_t i = 0; i < 3; ++i) {
      const std::int64_t t = static_cast<std::int64_t>(i + 1) * 5 * kTicksPerUs;
      body.push_back(p2p(fn::Isend, t, right, 0, 100, 2 * i + 1));
      body.push_back(p2p(fn::Irecv, t, left, 0, 100, 2 * i + 2));
      body.push_back(
          waitall(t, {{2 * i + 1, 0, -1, -1, 0, false}, {2 * i + 2, 1, left, 0, 100, false}}));
    }
    expect_events(read_rank(*trace_, rank), framed(body, 15 * kTicksPerUs),
                  "rank " + std::to_string(rank));
  }
  EXPECT_EQ(check_.messages_matched, 12u);
  EXPECT_EQ(check_.requests_completed, 24u);
  // The gaps are computation, the calls take no time.
  const trace::TraceSummary s = trace::summarize(*trace_);
  EXPECT_NEAR(s.per_rank[2].computation_seconds, 15e-6, 1e-12);
  EXPECT_EQ(s.per_rank[2].mpi_seconds, 0.0);
}

TEST_F(Synth, HeadersAndIndexLookRecorded) {
  SynthOptions o = options("ring", 6, 1, 8, 0);
  o.ranks_per_node = 4;
  write(o);
  trace::RankReader r5 = trace_->open_rank(5);
  const auto& h = r5.header();
  EXPECT_EQ(h.at("format"), "commgauge-trace");
  EXPECT_EQ(h.at("version"), trace::kVersion);
  EXPECT_EQ(h.at("rank"), 5);
  EXPECT_EQ(h.at("size"), 6);
  EXPECT_EQ(h.at("host"), "node-1");
  EXPECT_EQ(h.at("pid"), 0);
  EXPECT_EQ(h.at("clock").at("source"), "synthetic");
  EXPECT_EQ(h.at("clock").at("ticks_per_second"), 1e12);
  EXPECT_EQ(h.at("clock").at("resolution_ns"), 0.001);
  EXPECT_EQ(h.at("thread_level"), "single");
  EXPECT_EQ(h.at("language"), "c");
  EXPECT_EQ(h.at("tracer").at("overhead_ticks_per_event"), 0);
  EXPECT_EQ(h.at("tracer").at("cpu_time"), false);
  EXPECT_EQ(h.at("synthetic").at("pattern"), "ring");
  EXPECT_EQ(h.at("synthetic").at("bytes"), 8);
  const auto& index = trace_->index();
  EXPECT_EQ(index.at("ranks"), 6);
  EXPECT_EQ(index.at("finished"), true);
  EXPECT_EQ(index.at("complete"), true);
  EXPECT_TRUE(index.at("unmodeled").empty());
  EXPECT_EQ(index.at("hosts"), nlohmann::json({"node-0", "node-1"}));
  EXPECT_EQ(index.at("placement"), nlohmann::json({0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(index.at("synthetic").at("nodes"), 2);
  EXPECT_FALSE(index.contains("rank_info"));
  // No clock_sync records: the header's tick rate maps ticks, from 0 on every rank.
  const trace::ClockMap map = trace::clock_map(*trace_, r5);
  EXPECT_DOUBLE_EQ(map.root_ns(5'000'000), 5000.0);
}

TEST_F(Synth, ContainerFileOutputAndForce) {
  const fs::path file = dir_ / "sub" / "t.cgtc";
  write_synthetic_trace(options("allreduce", 3, 1, 8, 0), file, false);
  EXPECT_EQ(trace::TraceReader(file).ranks(), 3u);
  EXPECT_THROW(write_synthetic_trace(options("allreduce", 5, 1, 8, 0), file, false), InputError);
  write_synthetic_trace(options("allreduce", 5, 1, 8, 0), file, true);
  EXPECT_EQ(trace::TraceReader(file).ranks(), 5u);
  EXPECT_FALSE(fs::exists(dir_ / "sub" / "t.cgtc.tmp"));
}

// A container file: its temporary is a new file of ours, so a symlink or a user's file named
// like the old temporary (t.cgtc.tmp) is neither written through nor consumed; --force replaces
// only a trace container (not a user's file, not a symlink); an unwritable directory is an
// input error.
TEST_F(Synth, ContainerFileNeverWritesThroughAUsersNames) {
  const fs::path file = dir_ / "c" / "t.cgtc";
  fs::create_directories(file.parent_path());
  std::ofstream(dir_ / "victim.txt") << "precious";
  fs::create_symlink(dir_ / "victim.txt", dir_ / "c" / "t.cgtc.tmp");
  write_synthetic_trace(options("ring", 2, 1, 8, 0), file, false);
  EXPECT_EQ(trace::TraceReader(file).ranks(), 2u);
  std::ifstream victim(dir_ / "victim.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(victim), {}), "precious");
  EXPECT_TRUE(fs::is_symlink(dir_ / "c" / "t.cgtc.tmp"));
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(file.parent_path()))
    ++files;
  EXPECT_EQ(files, 2u) << "the trace and the user's symlink, no temporary left";

  const fs::path notes = dir_ / "c" / "notes.cgtc";
  std::ofstream(notes) << "my notes";
  try {
    write_synthetic_trace(options("ring", 2, 1, 8, 0), notes, true);
    ADD_FAILURE() << "--force replaced a user's file";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is not a commgauge trace"));
  }
  std::ifstream in(notes);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "my notes");
  const fs::path link = dir_ / "c" / "link.cgtc";
  fs::create_symlink(file, link);
  EXPECT_THROW(write_synthetic_trace(options("ring", 3, 1, 8, 0), link, true), InputError);
  EXPECT_EQ(trace::TraceReader(file).ranks(), 2u) << "the symlink's target untouched";

  if (::geteuid() != 0) {  // root writes into a directory without write permission
    const fs::path ro = dir_ / "ro";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_THROW(write_synthetic_trace(options("ring", 2, 1, 8, 0), ro / "t.cgtc", false),
                 InputError);
    fs::permissions(ro, fs::perms::owner_all);
  }
}

TEST_F(Synth, Halo2dExchangesWithFourNeighboursOfTheMostSquareGrid) {
  write(options("halo2d", 12, 2, 64, 1));  // 4 x 3
  EXPECT_EQ(trace_->index().at("synthetic").at("grid"), nlohmann::json({4, 3}));
  // Rank 4 is (1, 1): row neighbours 1 and 7, column neighbours 3 and 5.
  const std::int32_t neighbour[4] = {1, 7, 3, 5};
  std::vector<Event> body;
  std::uint64_t id = 0;
  for (int i = 0; i < 2; ++i) {
    const std::int64_t t = (i + 1) * kTicksPerUs;
    std::vector<Completion> done;
    for (int k = 0; k < 4; ++k) {
      body.push_back(p2p(fn::Irecv, t, neighbour[k], k ^ 1, 64, ++id));
      done.push_back({id, k, neighbour[k], k ^ 1, 64, false});
    }
    for (int k = 0; k < 4; ++k) {
      body.push_back(p2p(fn::Isend, t, neighbour[k], k, 64, ++id));
      done.push_back({id, 4 + k, -1, -1, 0, false});
    }
    body.push_back(waitall(t, done));
  }
  expect_events(read_rank(*trace_, 4), framed(body, 2 * kTicksPerUs), "rank 4");
  EXPECT_EQ(check_.messages_matched, 12u * 4 * 2);
}

TEST_F(Synth, Halo3dOnAGivenGridIncludingDimensionsOfTwoAndOne) {
  SynthOptions o = options("halo3d", 8, 1, 16, 0);
  o.grid = "4x2x1";
  write(o);
  // Rank 3 is (1, 1, 0): 1 and 5 along the first dimension, 2 twice, itself twice.
  const std::int32_t neighbour[6] = {1, 5, 2, 2, 3, 3};
  std::vector<Event> body;
  std::vector<Completion> done;
  for (std::uint64_t k = 0; k < 6; ++k) {
    const auto tag = static_cast<std::int32_t>(k ^ 1);
    body.push_back(p2p(fn::Irecv, 0, neighbour[k], tag, 16, k + 1));
    done.push_back({k + 1, static_cast<std::int32_t>(k), neighbour[k], tag, 16, false});
  }
  for (std::uint64_t k = 0; k < 6; ++k) {
    body.push_back(p2p(fn::Isend, 0, neighbour[k], static_cast<std::int32_t>(k), 16, k + 7));
    done.push_back({k + 7, static_cast<std::int32_t>(6 + k), -1, -1, 0, false});
  }
  body.push_back(waitall(0, done));
  expect_events(read_rank(*trace_, 3), framed(body, 0), "rank 3");
  EXPECT_EQ(check_.messages_matched, 8u * 6);
}

TEST_F(Synth, AllreduceAndAlltoallAreRecordedAsTheTracerDoes) {
  write(options("allreduce", 5, 2, 4096, 2), "allreduce");
  std::vector<Event> body;
  for (int i = 1; i <= 2; ++i) {
    Event e = at(fn::Allreduce, 2 * i * kTicksPerUs);
    e.fields = trace::kComm | trace::kBytes | trace::kCount | trace::kFlags;
    e.bytes = e.count = 4096;
    e.flags = trace::kCommutative;
    body.push_back(e);
  }
  for (std::uint32_t r = 0; r < 5; ++r)
    expect_events(read_rank(*trace_, r), framed(body, 4 * kTicksPerUs), "allreduce");
  EXPECT_EQ(check_.collectives_checked, 10u);

  write(options("alltoall", 3, 1, 100, 0), "alltoall");
  Event a = at(fn::Alltoall, 0);
  a.fields = trace::kComm | trace::kBytes | trace::kCount | trace::kRecvBytes;
  a.bytes = a.count = a.recv_bytes = 100;
  expect_events(read_rank(*trace_, 1), framed({a}, 0), "alltoall");
  EXPECT_EQ(check_.collectives_checked, 3u);
}

TEST_F(Synth, MasterWorkerHandsOutTasksAndTakesResultsFromAnySourceInRankOrder) {
  write(options("master-worker", 4, 2, 512, 10));
  const std::int64_t c = 10 * kTicksPerUs;
  std::vector<Event> master;
  for (int w = 1; w <= 3; ++w)
    master.push_back(p2p(fn::Send, 0, w, kTaskTag, 512));
  for (int k = 1; k <= 2; ++k) {
    for (int w = 1; w <= 3; ++w) {
      // The first receive of a round waits for the round's computation.
      const std::int64_t start = w == 1 ? (k - 1) * c : k * c;
      master.push_back(recv(start, k * c, trace::kAnySource, kResultTag, 512, w, kResultTag, 512));
      master.push_back(k < 2 ? p2p(fn::Send, k * c, w, kTaskTag, 512)
                             : p2p(fn::Send, k * c, w, kStopTag, 0));
    }
  }
  expect_events(read_rank(*trace_, 0), framed(master, 2 * c), "master");
  const std::vector<Event> worker = {
      recv(0, 0, 0, -1, 512, 0, kTaskTag, 512), p2p(fn::Send, c, 0, kResultTag, 512),
      recv(c, c, 0, -1, 512, 0, kTaskTag, 512), p2p(fn::Send, 2 * c, 0, kResultTag, 512),
      recv(2 * c, 2 * c, 0, -1, 512, 0, kStopTag, 0)};
  for (std::uint32_t w = 1; w < 4; ++w)
    expect_events(read_rank(*trace_, w), framed(worker, 2 * c), "worker " + std::to_string(w));
  EXPECT_EQ(check_.messages_matched, 3u * (2 + 2 + 1));
}

/// Share's placement of `ranks` ranks on `nodes` emulated nodes (cmd_share.cpp, --nodes N).
std::vector<int> share_nodes(int ranks, int nodes, const std::string& placement) {
  std::vector<int> out;
  const int per_node = (ranks + nodes - 1) / nodes;
  for (int r = 0; r < ranks; ++r)
    out.push_back(placement == "rrp" ? r / per_node : r % nodes);
  return out;
}

void expect_share_placement(const SynthPlan& p, std::uint32_t ranks, std::uint32_t per_node) {
  const int nodes = static_cast<int>((ranks + per_node - 1) / per_node);
  const std::vector<int> node_of = share_nodes(static_cast<int>(ranks), nodes, p.placement);
  for (std::uint32_t r = 0; r < ranks; ++r)
    ASSERT_EQ(p.node_of(r), static_cast<std::uint32_t>(node_of[r])) << "rank " << r;
  const measure::TaskPlan share = measure::plan_tasks(p.scheme, node_of);
  ASSERT_EQ(p.sender_rank.size(), share.sender_rank.size());
  for (std::size_t i = 0; i < share.sender_rank.size(); ++i)
    EXPECT_EQ(p.sender_rank[i], static_cast<std::uint32_t>(share.sender_rank[i]));
  ASSERT_EQ(p.receiver_rank.size(), share.receiver_rank.size());
  for (const auto& [node, rank] : share.receiver_rank)
    EXPECT_EQ(p.receiver_rank.at(node), static_cast<std::uint32_t>(rank));
}

TEST_F(Synth, SchemeTasksArePlacedAsShareDoesAndSendAfterABarrier) {
  SynthOptions o = options("scheme", 21, 2, 0, 3);
  o.bytes.reset();
  o.scheme = fs::path(COMMGAUGE_SOURCE_DIR) / "examples/schemes/fig4.sch";
  o.ranks_per_node = 3;  // node 0 has three senders
  const SynthPlan plan = plan_synthetic(o);
  expect_share_placement(plan, 21, 3);
  write(o);
  EXPECT_EQ(check_.messages_matched, 6u * 2);
  EXPECT_EQ(check_.collectives_checked, 21u * 2);
  // rrn over 7 nodes: a (0 -> 1) is sent by rank 0 to node 1's receiver, rank 1.
  const std::int64_t c = 3 * kTicksPerUs;
  constexpr std::uint64_t kMiB4 = 4u << 20;
  EXPECT_EQ(plan.sender_rank[0], 0u);
  EXPECT_EQ(plan.receiver_rank.at(1), 1u);
  std::vector<Event> sender;
  for (int i = 1; i <= 2; ++i) {
    Event b = at(fn::Barrier, i * c);
    b.fields = trace::kComm;
    sender.push_back(b);
    sender.push_back(p2p(fn::Send, i * c, 1, 0, kMiB4));
  }
  expect_events(read_rank(*trace_, 0), framed(sender, 2 * c), "sender of a");
  // Node 3 receives c, e and f (senders 14, 4, 5 under rrn), in the scheme's order.
  const std::uint32_t receiver = plan.receiver_rank.at(3);
  std::vector<Event> got = read_rank(*trace_, receiver);
  std::vector<Event> want;
  for (int i = 1; i <= 2; ++i) {
    Event b = at(fn::Barrier, i * c);
    b.fields = trace::kComm;
    want.push_back(b);
    for (std::size_t k : {2u, 4u, 5u}) {
      const auto source = static_cast<std::int32_t>(plan.sender_rank[k]);
      want.push_back(recv(i * c, i * c, trace::kAnySource, 0, kMiB4, source, 0, kMiB4));
    }
  }
  expect_events(got, framed(want, 2 * c), "receiver of node 3");
  // Ranks without a task only take part in the barriers.
  EXPECT_EQ(read_rank(*trace_, 20).size(), 1u + 2 + 2);
}

TEST_F(Synth, SchemeRrpPlacementAndBytesOverrideAndShortfall) {
  const fs::path scheme = dir_ / "rrp.sch";
  std::ofstream(scheme) << "placement rrp\na: 0 -> 1 1MiB\nb: 0 -> 1 2MiB\nc: 2 -> 1 1MiB\n";
  SynthOptions o = options("scheme", 9, 1, 64, 0);
  o.scheme = scheme;
  o.ranks_per_node = 3;
  const SynthPlan plan = plan_synthetic(o);
  expect_share_placement(plan, 9, 3);
  EXPECT_EQ(plan.scheme.communications[1].bytes, 64u);
  write(o);
  o.ranks = 4;  // rrp over 2 nodes: node 2 has no rank
  o.ranks_per_node = 2;
  try {
    plan_synthetic(o);
    ADD_FAILURE() << "expected a shortfall error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("node 2 needs 1 (1 sender(s)) and has 0"));
    EXPECT_THAT(e.what(), HasSubstr("--ranks 6 --ranks-per-node 2"));
  }
}

TEST_F(Synth, MostSquareGrids) {
  EXPECT_EQ(most_square_grid(12, 2), (std::vector<std::uint32_t>{4, 3}));
  EXPECT_EQ(most_square_grid(7, 2), (std::vector<std::uint32_t>{7, 1}));
  EXPECT_EQ(most_square_grid(16, 2), (std::vector<std::uint32_t>{4, 4}));
  EXPECT_EQ(most_square_grid(24, 3), (std::vector<std::uint32_t>{4, 3, 2}));
  EXPECT_EQ(most_square_grid(1'000'000, 3), (std::vector<std::uint32_t>{100, 100, 100}));
  EXPECT_EQ(most_square_grid(1, 3), (std::vector<std::uint32_t>{1, 1, 1}));
}

TEST_F(Synth, HundredThousandRankRing) {
  const auto start = std::chrono::steady_clock::now();
  const SynthResult r = write_synthetic_trace(options("ring", 100'000, 1, 8, 1), dir_, false);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.ranks, 100'000u);
  EXPECT_EQ(r.events, 100'000u * 6);
  const trace::TraceReader trace(dir_);
  ASSERT_EQ(trace.ranks(), 100'000u);
  EXPECT_TRUE(trace.missing_ranks().empty());
  EXPECT_EQ(trace.index().at("placement").size(), 100'000u);
  for (std::uint32_t rank : {0u, 99'999u}) {
    const auto right = static_cast<std::int32_t>((rank + 1) % 100'000);
    const auto left = static_cast<std::int32_t>((rank + 99'999) % 100'000);
    const std::int64_t t = kTicksPerUs;
    expect_events(read_rank(trace, rank),
                  framed({p2p(fn::Isend, t, right, 0, 8, 1), p2p(fn::Irecv, t, left, 0, 8, 2),
                          waitall(t, {{1, 0, -1, -1, 0, false}, {2, 1, left, 0, 8, false}})},
                         t),
                  "rank " + std::to_string(rank));
    EXPECT_EQ(trace.open_rank(rank).header().at("host"), fmt::format("node-{}", rank));
  }
  RecordProperty("seconds", std::to_string(seconds));
}

TEST_F(Synth, BadInputIsRefused) {
  auto fails = [&](const SynthOptions& o, const std::string& part, const fs::path& out) {
    try {
      write_synthetic_trace(o, out, false);
      ADD_FAILURE() << "expected an error containing " << part;
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr(part));
    }
  };
  const fs::path out = dir_ / "out";
  // Options are named as in SynthOptions; the CLI shows them as its flags (--ranks).
  fails(options("ring", 0, 1, 8, 0), "ranks: must be at least 1", out);
  fails(options("spiral", 4, 1, 8, 0), "unknown pattern \"spiral\"", out);
  fails(options("ring", 4, 0, 8, 0), "iterations: must be at least 1", out);
  fails(options("ring", 4, 1, 8, -1), "compute_us: must be a non-negative number", out);
  fails(options("master-worker", 1, 1, 8, 0), "at least 2 ranks", out);
  SynthOptions grid = options("halo2d", 12, 1, 8, 0);
  grid.grid = "5x3";
  fails(grid, "holds 15 ranks, not --ranks 12", out);
  grid.grid = "4x3x1";
  fails(grid, "halo2d needs 2", out);
  grid.grid = "4xx3";
  fails(grid, "positive integers", out);
  grid.pattern = "ring";
  grid.grid = "4x3";
  fails(grid, "applies to halo2d and halo3d only", out);
  fails(options("scheme", 4, 1, 8, 0), "needs a scheme file", out);
  EXPECT_FALSE(fs::exists(out));  // nothing is created for bad options

  fs::create_directories(out);
  std::ofstream(out / "notes.txt") << "mine";
  fails(options("ring", 4, 1, 8, 0), "is not empty", out);
  try {
    write_synthetic_trace(options("ring", 4, 1, 8, 0), out, true);
    ADD_FAILURE() << "--force must not remove a file that is not part of a trace";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("notes.txt"));
  }
  fs::remove(out / "notes.txt");
  write_synthetic_trace(options("ring", 4, 1, 8, 0), out, false);
  fails(options("ring", 4, 1, 8, 0), "is not empty", out);
  write_synthetic_trace(options("ring", 6, 1, 8, 0), out, true);
  EXPECT_EQ(trace::TraceReader(out).ranks(), 6u);
}

// --force clears a trace's files by what they hold, not by their names alone: a user's file
// named like one (text in trace.cgtc, a JSON of another kind in index.json, text in a rank
// file, a symlink named like a rank file) makes it refuse, and nothing is removed. A crashed
// writer's leftovers (an empty .tmp, a rank file whose first block never committed) are ours.
TEST_F(Synth, ForceRefusesAUsersFileThatOnlyHasATracesName) {
  const fs::path out = dir_ / "named";
  struct Case {
    std::string name, content;
  };
  const std::vector<Case> users = {{"trace.cgtc", "my notes"},
                                   {"index.json", R"({"format": "my-own"})"},
                                   {"index.json", "not json"},
                                   {"rank-0.cgt", "my data"},
                                   {"trace.cgtc.tmp", "my notes"}};
  for (const auto& c : users) {
    fs::remove_all(out);
    write_synthetic_trace(options("ring", 2, 1, 8, 0), out, false);
    std::ofstream(out / c.name, std::ios::trunc) << c.content;
    try {
      write_synthetic_trace(options("ring", 4, 1, 8, 0), out, true);
      ADD_FAILURE() << "--force removed a user's " << c.name;
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.name + ", which is not part of a trace")) << c.name;
    }
    std::ifstream in(out / c.name);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), c.content) << c.name;
  }
  fs::remove_all(out);
  write_synthetic_trace(options("ring", 2, 1, 8, 0), out, false);
  std::ofstream(dir_ / "mine.cgt") << "mine";
  fs::create_symlink(dir_ / "mine.cgt", out / "rank-7.cgt");
  EXPECT_THROW(write_synthetic_trace(options("ring", 4, 1, 8, 0), out, true), InputError);
  EXPECT_TRUE(fs::is_symlink(out / "rank-7.cgt"));
  // Leftovers of a crashed writer are cleared with the trace.
  fs::remove(out / "rank-7.cgt");
  std::ofstream(out / "index.json.tmp").flush();
  std::ofstream(out / "rank-3.cgt", std::ios::binary).write("\0\0\0\0\0\0\0\0", 8);
  write_synthetic_trace(options("ring", 4, 1, 8, 0), out, true);
  EXPECT_EQ(trace::TraceReader(out).ranks(), 4u);
  EXPECT_FALSE(fs::exists(out / "index.json.tmp"));
}

// --force removes the old trace only when the new one exists: a run that fails (no rank traced,
// a write error) leaves the old trace whole and no staging directory behind. On commit, rank
// files the new trace does not have go with the old trace, and so does a crashed run's staging.
TEST_F(Synth, ForceKeepsTheOldTraceUntilTheNewOneIsWhole) {
  const fs::path out = dir_ / "kept";
  write_synthetic_trace(options("ring", 4, 1, 8, 0), out, false);
  const auto before = fs::file_size(out / "trace.cgtc");
  const auto listing = [&out] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(out))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  const auto files_before = listing();
  {
    trace::OutputDirectory failed(out, true);
    EXPECT_NE(failed.recording_dir(), out) << "an old trace is replaced from a staging directory";
    EXPECT_EQ(failed.recording_dir().parent_path(), out);
    std::ofstream(failed.recording_dir() / "rank-0.cgt") << "CGBKnew";
    // Not committed: as a run that ended with an error.
  }
  EXPECT_EQ(trace::TraceReader(out).ranks(), 4u);
  EXPECT_EQ(fs::file_size(out / "trace.cgtc"), before);
  EXPECT_EQ(listing(), files_before);

  // A rank-file trace with 3 ranks replaced by one of 2 (as commgauge trace records them); a
  // crashed run's staging directory holding a rank file goes too.
  fs::remove_all(out);
  fs::create_directories(out / ".commgauge-new-crashd");
  for (const std::string name : {"rank-0.cgt", "rank-1.cgt", "rank-2.cgt"})
    std::ofstream(out / name) << "CGBKold";
  std::ofstream(out / ".commgauge-new-crashd" / "rank-0.cgt") << "CGBKold";
  std::ofstream(out / "index.json") << R"({"format": "commgauge-trace", "ranks": 3})";
  {
    trace::OutputDirectory output(out, true);
    std::ofstream(output.recording_dir() / "rank-0.cgt") << "CGBKnew";
    std::ofstream(output.recording_dir() / "rank-1.cgt") << "CGBKnew";
    std::ofstream(output.recording_dir() / "index.json") << R"({"format": "commgauge-trace"})";
    EXPECT_EQ(std::ifstream(out / "rank-0.cgt").get(), 'C');
    output.commit();
  }
  EXPECT_EQ(listing(), (std::vector<std::string>{"index.json", "rank-0.cgt", "rank-1.cgt"}));
  std::ifstream rank0(out / "rank-0.cgt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(rank0), {}), "CGBKnew");

  // A staging-named directory that holds a user's file is not ours.
  fs::create_directories(out / ".commgauge-new-mine");
  std::ofstream(out / ".commgauge-new-mine" / "notes.txt") << "mine";
  EXPECT_THROW(trace::OutputDirectory(out, true), InputError);
  EXPECT_TRUE(fs::exists(out / ".commgauge-new-mine" / "notes.txt"));
}

// platform.xml is well-formed XML: no "--" inside a comment (it named a flag there, and xmllint
// and Python's expat refused the file; smpirun happened to accept it).
TEST_F(Synth, TheExportedPlatformIsWellFormedXml) {
  write_synthetic_trace(options("ring", 4, 1, 8, 0), dir_ / "ring", false);
  trace::export_simgrid_ti(trace::TraceReader(dir_ / "ring"), dir_ / "export", {});
  std::ifstream in(dir_ / "export" / "platform.xml");
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t comments = 0;
  for (std::size_t open = xml.find("<!--"); open != std::string::npos;
       open = xml.find("<!--", open + 4)) {
    const std::size_t close = xml.find("-->", open + 4);
    ASSERT_NE(close, std::string::npos);
    EXPECT_EQ(xml.substr(open + 4, close - open - 4).find("--"), std::string::npos)
        << xml.substr(open, close - open + 3);
    ++comments;
  }
  EXPECT_GE(comments, 1u);
}

}  // namespace
}  // namespace commgauge::synth
