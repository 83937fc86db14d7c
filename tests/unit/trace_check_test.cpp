// trace-check on synthetic traces whose defects are known: each defect must be found, with the
// rank and event, and a correct trace must pass.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "trace/check.hpp"
#include "trace/function_ids.hpp"
#include "trace/writer.hpp"

namespace commgauge::trace {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

Event call(std::uint32_t function, std::int64_t start, std::int64_t end = -1) {
  Event e;
  e.function = function;
  e.start_tick = start;
  e.end_tick = end < 0 ? start + 10 : end;
  return e;
}

Event send(std::int64_t t, std::int32_t peer, std::int32_t tag, std::uint64_t bytes,
           std::uint32_t function = fn::Send) {
  Event e = call(function, t);
  e.fields = kPeer | kTag | kComm | kBytes;
  e.peer = peer;
  e.tag = tag;
  e.bytes = bytes;
  return e;
}

Event recv(std::int64_t t, std::int32_t asked, std::int32_t tag, std::int32_t source,
           std::uint64_t bytes, std::uint64_t posted) {
  Event e = call(fn::Recv, t, t + 100);
  e.fields = kPeer | kTag | kComm | kBytes | kCompletions;
  e.peer = asked;
  e.tag = tag;
  e.bytes = posted;
  e.completions = {{0, -1, source, tag < 0 ? 0 : tag, bytes, false}};
  if (asked == kAnySource) {
    e.fields |= kFlags;
    e.flags = kWildcardSource;
  }
  return e;
}

Event irecv(std::int64_t t, std::int32_t asked, std::int32_t tag, std::uint64_t posted) {
  Event e = call(fn::Irecv, t);
  e.fields = kPeer | kTag | kComm | kBytes;
  e.peer = asked;
  e.tag = tag;
  e.bytes = posted;
  return e;
}

Event with_request(Event e, std::uint64_t id) {
  e.fields |= kRequest;
  e.request = id;
  return e;
}

Event wait(std::int64_t t, Completion c) {
  Event e = call(fn::Wait, t);
  e.fields = kCompletions;
  e.completions = {c};
  return e;
}

Event collective(std::uint32_t function, std::int64_t t, std::uint64_t comm, std::int32_t root,
                 std::uint64_t bytes) {
  Event e = call(function, t);
  e.fields = kComm | kRoot | kBytes;
  e.comm = comm;
  e.root = root;
  e.bytes = bytes;
  return e;
}

Event comm_create(std::uint64_t id, std::vector<std::int32_t> members) {
  Event e;
  e.kind = RecordKind::comm_create;
  e.fields = kComm | kMembers;
  e.comm = id;
  e.members = std::move(members);
  return e;
}

struct Rank {
  std::vector<Event> events;
  bool finished = true;
};

class TraceCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/commgauge-check-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CheckResult check(const std::vector<Rank>& ranks) {
    for (std::uint32_t r = 0; r < ranks.size(); ++r) {
      MappedRankFile file(dir_ / rank_file_name(r));
      BlockEncoder encoder(r, file);
      encoder.write_header(
          nlohmann::json{{"version", kVersion}, {"rank", r}, {"size", ranks.size()}}.dump());
      // Every rank opens with MPI_Init (event 0) and a finished one ends with MPI_Finalize,
      // as the replay needs: the events given are events 1, 2, ...
      encoder.append(call(fn::Init, 0));
      for (const Event& e : ranks[r].events)
        encoder.append(e);
      if (ranks[r].finished) {
        encoder.append(call(fn::Finalize, 900'000));
        Event end;
        end.kind = RecordKind::end;
        end.start_tick = end.end_tick = 1'000'000;
        encoder.append(end);
      }
      encoder.flush();
      file.close();
    }
    return check_trace(TraceReader(dir_));
  }

  static std::string messages(const CheckResult& r) {
    std::string all;
    for (const auto& i : r.issues)
      all += "rank " + std::to_string(i.rank) + " event " + std::to_string(i.event) + ": " +
             (i.severity == CheckIssue::Severity::error ? "error: " : "warning: ") + i.message +
             "\n";
    return all;
  }

  fs::path dir_;
};

TEST_F(TraceCheck, ACorrectExchangePasses) {
  const auto r = check({{{send(100, 1, 5, 800), recv(300, 1, 6, 1, 16, 16)}},
                        {{recv(50, kAnySource, 5, 0, 800, 1000), send(250, 0, 6, 16)}}});
  EXPECT_TRUE(r.ok()) << messages(r);
  EXPECT_EQ(r.messages_matched, 2u);
  EXPECT_EQ(r.warnings, 0u) << messages(r);
}

TEST_F(TraceCheck, NonblockingMessagesMatchThroughTheirCompletions) {
  const auto r = check(
      {{{with_request(send(100, 1, 1, 64, fn::Isend), 1), wait(120, {1, -1, -1, -1, 0, false})}},
       {{with_request(irecv(10, kAnySource, 1, 64), 7), wait(200, {7, -1, 0, 1, 64, false})}}});
  EXPECT_TRUE(r.ok()) << messages(r);
  EXPECT_EQ(r.messages_matched, 1u);
  EXPECT_EQ(r.requests_completed, 2u);
}

TEST_F(TraceCheck, ReceivesMatchInPostingOrderHoweverTheyComplete) {
  // Rank 0 sends 100 then 200 bytes on one channel; rank 1 posts two receives for it (the
  // first for 100, the second for 200) and completes the second first (Waitany, as hypre's AMG
  // does). MPI matched them in posting order: no error, sizes agree. Then a wildcard receive
  // posted before a specific one on the same channel, completed after it, still comes first.
  const auto r = check(
      {{{send(100, 1, 3, 100), send(110, 1, 3, 200), send(120, 1, 4, 8), send(130, 1, 4, 16)}},
       {{with_request(irecv(10, 0, 3, 100), 1), with_request(irecv(20, 0, 3, 200), 2),
         wait(300, {2, -1, 0, 3, 200, false}), wait(310, {1, -1, 0, 3, 100, false}),
         with_request(irecv(30, kAnySource, 4, 8), 3), with_request(irecv(40, 0, 4, 16), 4),
         wait(320, {4, -1, 0, 4, 16, false}), wait(330, {3, -1, 0, 4, 8, false})}}});
  EXPECT_TRUE(r.ok()) << messages(r);
  EXPECT_EQ(r.messages_matched, 4u);
  EXPECT_EQ(r.requests_completed, 4u);
}

TEST_F(TraceCheck, AnUnreceivedSendIsAnError) {
  const auto r = check({{{send(100, 1, 5, 8), send(110, 1, 5, 8)}}, {{recv(200, 0, 5, 0, 8, 8)}}});
  EXPECT_EQ(r.errors, 1u);
  ASSERT_FALSE(r.issues.empty());
  EXPECT_EQ(r.issues[0].rank, 0);
  EXPECT_EQ(r.issues[0].event, 2);  // the second send: MPI's order matches the first
  EXPECT_THAT(r.issues[0].message, HasSubstr("was never received"));
}

TEST_F(TraceCheck, SizesMustAgree) {
  const auto r = check({{{send(100, 1, 5, 800)}}, {{recv(200, 0, 5, 0, 8, 8)}}});
  EXPECT_THAT(messages(r), HasSubstr("rank 1 event 1: error: received 8 bytes, but the matching "
                                     "send (rank 0 event 1 (MPI_Send)) sent 800"));
  EXPECT_THAT(messages(r), HasSubstr("truncation"));
}

TEST_F(TraceCheck, ARequestNeverCompletedIsAnError) {
  const auto r =
      check({{{with_request(send(100, 1, 1, 8, fn::Isend), 3)}}, {{recv(200, 0, 1, 0, 8, 8)}}});
  EXPECT_THAT(messages(r), HasSubstr("request 3 (created at rank 0 event 1 (MPI_Isend)) was "
                                     "never completed"));
  const auto twice = check({{{wait(100, {9, -1, -1, -1, 0, false})}}, {{}}});
  EXPECT_THAT(messages(twice), HasSubstr("completes request 9, which is not active"));
}

TEST_F(TraceCheck, CollectivesMustBeCalledAlike) {
  const auto r =
      check({{{collective(fn::Bcast, 10, 0, 0, 64)}}, {{collective(fn::Bcast, 10, 0, 1, 64)}}});
  EXPECT_THAT(messages(r), HasSubstr("MPI_Bcast with root 1 here but root 0"));
  const auto kinds =
      check({{{collective(fn::Bcast, 10, 0, 0, 64)}}, {{collective(fn::Reduce, 10, 0, 0, 64)}}});
  EXPECT_THAT(messages(kinds), HasSubstr("is MPI_Reduce here but MPI_Bcast"));
  const auto sizes = check(
      {{{collective(fn::Allreduce, 10, 0, 0, 64)}}, {{collective(fn::Allreduce, 10, 0, 0, 32)}}});
  EXPECT_THAT(messages(sizes), HasSubstr("of 32 bytes here but 64 bytes"));
  const auto missing = check({{{collective(fn::Barrier, 10, 0, 0, 0)}}, {{}}});
  EXPECT_THAT(messages(missing), HasSubstr("was called by 1 of 2 members"));
}

// An end record's local time below 0 made the summary's MPI time negative; trace-check, where
// every reader's verdict is given, refuses it too.
TEST_F(TraceCheck, AnEndRecordsLocalTimeIsNotNegative) {
  Event end;
  end.kind = RecordKind::end;
  end.fields = kText;
  end.start_tick = end.end_tick = 1000;
  end.text = R"({"local": {"MPI_Comm_rank": {"calls": 1, "ticks": -1000000000000}}})";
  const auto r = check({{{end}}});
  EXPECT_THAT(messages(r), HasSubstr("the end record's local time of MPI_Comm_rank is negative"));
  end.text = R"({"local": {"MPI_Comm_rank": {"calls": 1, "ticks": 250}}})";
  EXPECT_THAT(messages(check({{{end}}})), ::testing::Not(HasSubstr("end record")));
}

TEST_F(TraceCheck, CommunicatorsNeedAgreeingRecords) {
  // Members in the communicator's rank order (here world rank 1 is its rank 0), alike on both.
  const auto ok = check({{{comm_create(77, {1, 0}), collective(fn::Barrier, 10, 77, 0, 0)}},
                         {{comm_create(77, {1, 0}), collective(fn::Barrier, 10, 77, 0, 0)}}});
  EXPECT_TRUE(ok.ok()) << messages(ok);
  // The same members in another order are another communicator's ranks (the OTF2 export refused
  // such a trace that this check had passed).
  const auto reversed = check({{{comm_create(77, {0, 1})}}, {{comm_create(77, {1, 0})}}});
  EXPECT_THAT(messages(reversed), HasSubstr("has other members here than at rank 0 (ids must "
                                            "agree across members, in the same order)"));
  // Rank 1 recording the communicator as an intercommunicator whose remote group is itself: the
  // OTF2 export then dropped half of its messages.
  Event inter = comm_create(77, {0, 1});
  inter.remote_size = 1;
  const auto outside = check({{{comm_create(77, {0, 1})}}, {{inter}}});
  EXPECT_THAT(messages(outside), HasSubstr("without this rank among its local group's members"));
  EXPECT_THAT(messages(outside), HasSubstr("is an intercommunicator here but an "
                                           "intracommunicator at rank 0"));
  const auto differ = check({{{comm_create(77, {0, 1})}}, {{comm_create(77, {1, 2})}}, {{}}});
  EXPECT_THAT(messages(differ), HasSubstr("has other members here than at rank 0"));
  const auto unknown = check({{{collective(fn::Barrier, 10, 55, 0, 0)}}});
  EXPECT_THAT(messages(unknown), HasSubstr("before any comm_create record"));
}

TEST_F(TraceCheck, AReceiveBeforeItsSendIsAWarning) {
  // No clock syncs: ticks are nanoseconds on one clock. The receive ends 10 us before.
  const auto r = check({{{send(20'000, 1, 5, 8)}}, {{recv(9'000, 0, 5, 0, 8, 8)}}});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.warnings, 1u);
  EXPECT_THAT(messages(r), HasSubstr("ended 10.900 us before its send"));
}

// One thread's calls follow each other; two threads of a rank may overlap.
TEST_F(TraceCheck, ACallStartingBeforeItsThreadsPreviousCallEndedIsAWarning) {
  // Rank 0's receive (ticks 300-400) starts 2.5 us before its send (100-2800) ended.
  Event long_send = send(100, 1, 5, 8);
  long_send.end_tick = 2'800;
  const auto r = check(
      {{{long_send, recv(300, 1, 6, 1, 8, 8)}}, {{recv(50, 0, 5, 0, 8, 8), send(200, 0, 6, 8)}}});
  EXPECT_TRUE(r.ok()) << messages(r);
  EXPECT_EQ(r.warnings, 1u) << messages(r);
  EXPECT_THAT(messages(r), HasSubstr("rank 0 event 2: warning: starts 2.500 us before the "
                                     "previous call of its thread (thread 0) ended"));
  // The same calls on two threads: no warning.
  Event on_thread = recv(300, 1, 6, 1, 8, 8);
  on_thread.fields |= kThread;
  on_thread.thread = 1;
  on_thread.sequence = 2;
  const auto threads =
      check({{{long_send, on_thread}}, {{recv(50, 0, 5, 0, 8, 8), send(200, 0, 6, 8)}}});
  EXPECT_TRUE(threads.ok()) << messages(threads);
  EXPECT_EQ(threads.warnings, 0u) << messages(threads);
}

// What the replay needs of a rank's life: MPI_Init first, MPI_Finalize (or MPI_Abort) last.
TEST_F(TraceCheck, CallsOutsideInitAndFinalizeAreErrors) {
  const auto r = check({{{send(100, 1, 5, 8)}}, {{recv(200, 0, 5, 0, 8, 8)}}});
  EXPECT_TRUE(r.ok()) << messages(r);
  // A send after MPI_Finalize, and a rank whose data ends (complete) without it.
  const auto late =
      check({{{call(fn::Finalize, 50), send(100, 1, 5, 8)}}, {{recv(200, 0, 5, 0, 8, 8)}}});
  EXPECT_THAT(messages(late), HasSubstr("rank 0 event 2: error: MPI_Send after MPI_Finalize"));
  // A send's tag is 0 or more.
  const auto tag = check({{{send(100, 1, -1, 8)}}, {{recv(200, 0, -1, 0, 8, 8)}}});
  EXPECT_THAT(messages(tag), HasSubstr("send with tag -1"));
}

TEST_F(TraceCheck, TruncatedRanksAreErrorsAndTheirPartnersOnlyWarn) {
  Rank cut{{send(100, 1, 5, 8)}, false};
  const auto r = check({cut, {{recv(200, 0, 5, 0, 8, 8), recv(300, 0, 6, 0, 8, 8)}}});
  EXPECT_EQ(r.errors, 1u) << messages(r);
  EXPECT_THAT(messages(r), HasSubstr("rank 0 event 2: error: truncated"));
  EXPECT_THAT(messages(r), HasSubstr("warning: receive from rank 0 (tag 6"));
}

}  // namespace
}  // namespace commgauge::trace
