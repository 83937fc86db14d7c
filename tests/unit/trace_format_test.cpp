// The trace format: encodings, blocks, rank files, containers, and a reader that fails with a
// file and offset on damaged data and reads a crashed writer's file up to its last block.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "trace/format.hpp"
#include "trace/function_ids.hpp"
#include "trace/functions.hpp"
#include "trace/reader.hpp"
#include "trace/writer.hpp"

namespace commgauge::trace {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/commgauge-trace-test-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

Event full_event() {
  Event e;
  e.kind = RecordKind::function;
  e.function = fn::Alltoallw;
  e.start_tick = 1'000'000'000'000;
  e.end_tick = 1'000'000'004'321;
  e.fields = kKnownFields & ~(kMembers | kText);
  e.peer = kAnySource;
  e.tag = 77;
  e.comm = 0xDEADBEEFCAFEULL;
  e.bytes = 1ULL << 40;
  e.root = 3;
  e.request = 12345;
  e.completions = {{1, 0, 2, 7, 800, false}, {2, 3, kProcNull, -1, 0, true}};
  e.counts = {0, 8, 1ULL << 33};
  e.recv_bytes = 99;
  e.recv_counts = {5, 6};
  e.requests = {10, 11, 12};
  e.flags = kWildcardSource | kCommutative | kFortran;
  e.calls = 17'000'000;
  e.in_mpi_ticks = 4000;  // at most the run's length (format 8.3)
  e.count = 42;
  e.thread = 2;
  e.sequence = 999;
  e.cpu_ns = 5'000'000;
  e.new_comm = 88;
  e.local_calls = 4;
  e.local_ticks = 400;
  e.site_module = 3;
  e.site_offset = 0x7f12'3456'789aULL;
  e.fresh_bytes = 3ULL << 20;
  e.fresh_look_ticks = 1400;
  e.send_page_offset_bytes = 4095;
  return e;
}

Event send_event(std::int64_t start, std::int32_t peer, std::uint64_t bytes) {
  Event e;
  e.function = fn::Send;
  e.start_tick = start;
  e.end_tick = start + 500;
  e.fields = kPeer | kTag | kComm | kBytes;
  e.peer = peer;
  e.tag = 1;
  e.bytes = bytes;
  return e;
}

std::string header(std::uint32_t rank, std::uint32_t size, std::uint32_t version = kVersion) {
  return nlohmann::json{{"format", "commgauge-trace"},
                        {"version", version},
                        {"rank", rank},
                        {"size", size},
                        {"host", "h"},
                        {"clock", {{"source", "monotonic"}, {"ticks_per_second", 1e9}}}}
      .dump();
}

/// Writes one rank file with `n` sends and, if `complete`, an end record.
void write_rank_file(const fs::path& path, std::uint32_t rank, std::uint32_t size, int n,
                     bool complete = true) {
  MappedRankFile file(path);
  BlockEncoder encoder(rank, file);
  encoder.write_header(header(rank, size));
  for (int i = 0; i < n; ++i)
    encoder.append(send_event(1000 + 1000 * i, static_cast<std::int32_t>((rank + 1) % size),
                              static_cast<std::uint64_t>(i)));
  if (complete) {
    Event end;
    end.kind = RecordKind::end;
    end.start_tick = end.end_tick = 1000 + 1000 * n;
    encoder.append(end);
  }
  encoder.flush();
  file.close();
}

std::vector<Event> read_all(RankReader& reader) {
  std::vector<Event> events;
  Event e;
  while (reader.next(e))
    events.push_back(e);
  return events;
}

TEST(TraceEncoding, VarintsAndZigzagRoundTrip) {
  for (std::int64_t v :
       std::initializer_list<std::int64_t>{0, 1, -1, 63, -64, std::int64_t{1} << 40,
                                           -(std::int64_t{1} << 40), INT64_MAX, INT64_MIN})
    EXPECT_EQ(unzigzag(zigzag(v)), v);
  std::vector<unsigned char> out;
  put_varint(out, 300);  // 300 = 0b10'0101100: 0xAC 0x02 (protobuf's example)
  EXPECT_THAT(out, ::testing::ElementsAre(0xAC, 0x02));
}

TEST(TraceEncoding, Crc32cMatchesTheStandardCheckValue) {
  const std::string text = "123456789";
  EXPECT_EQ(crc32c(reinterpret_cast<const unsigned char*>(text.data()), text.size()), 0xE3069283u);
  // Longer than one 8-byte step, and not a multiple of 8 (RFC 3720 B.4: 32 bytes of zeros).
  const std::vector<unsigned char> zeros(32, 0);
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  const std::vector<unsigned char> ones(32, 0xFF);
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62A8AB43u);
}

TEST(TraceEncoding, EventWithEveryFieldRoundTrips) {
  const Event e = full_event();
  std::vector<unsigned char> out;
  encode_event(e, 999'999'000'000, out);
  std::size_t pos = 0;
  Event back;
  decode_event(out, pos, 999'999'000'000, back);
  EXPECT_EQ(pos, out.size());
  EXPECT_EQ(back, e);

  Event members;
  members.kind = RecordKind::comm_create;
  members.fields = kComm | kMembers | kText;
  members.comm = 5;
  members.members = {4, 6, 8, 1, 3};
  members.remote_size = 2;
  members.text = "x";
  out.clear();
  encode_event(members, 0, out);
  pos = 0;
  decode_event(out, pos, 0, back);
  EXPECT_EQ(back, members);
}

TEST(TraceEncoding, SmallSendsTakeAFewBytes) {
  std::vector<unsigned char> out;
  encode_event(send_event(1500, 1, 800), 1000, out);
  // kind 1, fields 1, function id > 127: 2, start delta 500: 2, duration 500: 2, peer 1, tag 1,
  // comm 1, bytes 800: 2.
  EXPECT_EQ(out.size(), 13u);
}

TEST(TraceEncoding, MalformedEventsThrowWithTheirOffset) {
  std::vector<unsigned char> out;
  encode_event(full_event(), 0, out);
  for (std::size_t cut = 0; cut < out.size(); ++cut) {
    std::vector<unsigned char> part(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(cut));
    std::size_t pos = 0;
    Event e;
    EXPECT_THROW(decode_event(part, pos, 0, e), FormatError) << "cut at " << cut;
  }
  std::vector<unsigned char> bad = {9, 0};  // record kind 9 does not exist
  std::size_t pos = 0;
  Event e;
  try {
    decode_event(bad, pos, 0, e);
    FAIL();
  } catch (const FormatError& error) {
    EXPECT_EQ(error.offset(), 0u);
    EXPECT_THAT(error.what(), HasSubstr("unknown record kind 9"));
  }
}

TEST(TraceEncoding, OverflowingTimesAreMalformedNotUndefined) {
  // Found by the fuzzer: a start delta that overflows the previous start.
  Event huge = send_event(0, 1, 8);
  huge.start_tick = INT64_MAX;
  huge.end_tick = INT64_MAX;
  std::vector<unsigned char> out;
  encode_event(huge, 0, out);
  std::size_t pos = 0;
  Event back;
  EXPECT_THROW(decode_event(out, pos, 1, back), FormatError);
}

TEST(TraceEncoding, AnEventThatEndsBeforeItStartsIsMalformed) {
  // Found by a red-team run: trace-check warned, the summary printed -100 % inside MPI and the
  // replay charged the negative time; now every reader refuses it where it is decoded.
  Event backwards = send_event(0, 1, 8);
  backwards.start_tick = 1000;
  backwards.end_tick = 995;
  std::vector<unsigned char> out;
  encode_event(backwards, 0, out);
  std::size_t pos = 0;
  Event back;
  try {
    decode_event(out, pos, 0, back);
    ADD_FAILURE() << "a negative duration was decoded";
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("ends before it starts"));
  }
  backwards.end_tick = 1000;  // a zero duration is fine
  out.clear();
  encode_event(backwards, 0, out);
  pos = 0;
  decode_event(out, pos, 0, back);
  EXPECT_EQ(back.end_tick, 1000);
}

// A red-team pass (2026-12-05) gave an event negative local time, a poll run a negative time
// inside MPI or one longer than the run: trace-check said OK, the summary printed negative MPI
// time and the replay predicted 477 s for a 1.3 ms trace. Every reader refuses them where decoded.
TEST(TraceEncoding, TimesInsideAnEventAreWithinIt) {
  const auto refused = [](const Event& e, const std::string& says) {
    std::vector<unsigned char> out;
    encode_event(e, 0, out);
    std::size_t pos = 0;
    Event back;
    try {
      decode_event(out, pos, 0, back);
      ADD_FAILURE() << "decoded: " << says;
    } catch (const FormatError& error) {
      EXPECT_THAT(error.what(), ::testing::HasSubstr(says));
    }
  };
  Event local = send_event(0, 1, 8);
  local.fields |= kLocal;
  local.local_calls = 1;
  local.local_ticks = -1'000'000'000'000;
  refused(local, "negative time of local calls");
  // A send's page offset is less than a page, and pages reach 1 GiB at most.
  Event start = send_event(0, 1, 8);
  start.fields |= kSendPageOffset;
  start.send_page_offset_bytes = kPageOffsetLimitBytes;
  refused(start, "a send's page offset past 1 GiB");
  Event poll = send_event(0, 1, 8);
  poll.kind = RecordKind::poll_run;
  poll.fields |= kPoll;
  poll.start_tick = 100;
  poll.end_tick = 1100;
  poll.calls = 3;
  poll.in_mpi_ticks = -5;
  refused(poll, "a poll run's time inside MPI is outside its run");
  poll.in_mpi_ticks = 1001;
  refused(poll, "a poll run's time inside MPI is outside its run");
  poll.in_mpi_ticks = 1000;  // the whole run inside MPI is fine
  std::vector<unsigned char> out;
  encode_event(poll, 0, out);
  std::size_t pos = 0;
  Event back;
  decode_event(out, pos, 0, back);
  EXPECT_EQ(back.in_mpi_ticks, 1000);
}

// Syncs that map ticks backwards (finalize before init) gave negative durations everywhere.
TEST(TraceClock, SyncsThatRunBackwardsAreRefused) {
  const ClockMap::Sync init{2'000'000, 1'000'000, 1000, 50};
  const ClockMap::Sync finalize{2'000'000 - 1'000'000'000, 1'000'000 + 1'000'000'000, 3000, 60};
  EXPECT_THROW(ClockMap(1e9, &init, &finalize), TraceError);
}

TEST(TraceFunctions, TableMatchesTheGeneratedIds) {
  EXPECT_EQ(function_name(fn::Send), "MPI_Send");
  EXPECT_EQ(function_id("MPI_Waitall"), fn::Waitall);
  EXPECT_EQ(find_function(fn::Isend)->function_class, FunctionClass::modeled);
  EXPECT_EQ(find_function(fn::Isend)->pattern, "isend");
  EXPECT_EQ(find_function(fn::Comm_rank)->function_class, FunctionClass::local);
  EXPECT_EQ(find_function(fn::Put)->function_class, FunctionClass::opaque);
  EXPECT_EQ(find_function(fn::Init)->function_class, FunctionClass::special);
  EXPECT_EQ(find_function(0), nullptr);
  EXPECT_EQ(function_name(100000), "function#100000");
  // Every MPI-3.1 C function but the handle conversions, Wtime and Wtick, plus 10 Fortran-only.
  EXPECT_EQ(function_table().size(), 391u);
}

TEST(TraceFiles, RankFilesRoundTripInBlocksOfAboutOneKilobyte) {
  TempDir dir;
  write_rank_file(dir.path() / rank_file_name(0), 0, 2, 1000);
  write_rank_file(dir.path() / rank_file_name(1), 1, 2, 10);
  TraceReader trace(dir.path());
  EXPECT_TRUE(trace.index_rebuilt());  // no index.json
  ASSERT_EQ(trace.ranks(), 2u);
  RankReader r0 = trace.open_rank(0);
  EXPECT_EQ(r0.header()["host"], "h");
  const auto events = read_all(r0);
  ASSERT_EQ(events.size(), 1001u);
  EXPECT_EQ(events[500], send_event(501000, 1, 500));
  EXPECT_EQ(r0.end(), RankEnd::complete);
  // 1000 sends of about 9 bytes: about 9 blocks of 1 KiB, none much larger.
  const auto size = fs::file_size(dir.path() / rank_file_name(0));
  EXPECT_GT(size, 8000u);
  EXPECT_LT(size, 14000u);
}

// Found by the fuzzer (UBSan): a container whose last field reads 2^64 - 1 as an offset; the
// windowed read added the read's length to it, wrapped, and copied from before its window. Now a
// read past what a file can hold gets nothing, and the trace is refused with a TraceError.
TEST(TraceFiles, AnOffsetPastAnyFileReadsNothing) {
  TempDir dir;
  const auto path = dir.path() / "trace.cgtc";
  const unsigned char bytes[] = {0x43, 0x47, 0x54, 0x43, 0x01, 0x00, 0x00, 0x00, 0x43, 0x47, 0x42,
                                 0x4b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, 0x12, 0x06,
                                 0x00, 0x08, 0x01, 0x4f, 0xf0, 0x01, 0x02, 0x0e, 0x00, 0x08, 0x01,
                                 0x4f, 0x22, 0x42, 0x4b, 0x04, 0x43, 0x47, 0x54, 0x46, 0x01, 0x00,
                                 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
  }
  std::size_t events = 0;
  try {
    const TraceReader trace(path);
    for (std::uint32_t r = 0; r < trace.ranks() && r < 4; ++r) {
      RankReader reader = trace.open_rank(r);
      Event e;
      while (reader.next(e))
        ++events;
    }
  } catch (const TraceError&) {
    // refused: what a malformed container must give
  }
  EXPECT_EQ(events, 0u);
}

TEST(TraceFiles, ContainerHoldsEveryRankAndIsReadThroughOneFile) {
  TempDir dir;
  const auto path = dir.path() / "trace.cgtc";
  constexpr std::uint32_t kRanks = 50;
  {
    ContainerWriter container(path, kRanks);
    for (std::uint32_t r = 0; r < kRanks; ++r) {
      BlockEncoder encoder(r, container);
      encoder.write_header(header(r, kRanks));
      for (int i = 0; i < 200; ++i)
        encoder.append(send_event(i * 10, static_cast<std::int32_t>((r + 1) % kRanks), r));
      Event end;
      end.kind = RecordKind::end;
      encoder.append(end);
      encoder.flush();
    }
    container.finish(
        nlohmann::json{{"format", "commgauge-trace"}, {"version", 1}, {"ranks", kRanks}}.dump());
  }
  TraceReader trace(path);
  EXPECT_TRUE(trace.is_container());
  EXPECT_FALSE(trace.index_rebuilt());
  ASSERT_EQ(trace.ranks(), kRanks);
  for (std::uint32_t r : {0u, 17u, 49u}) {
    RankReader reader = trace.open_rank(r);
    const auto events = read_all(reader);
    ASSERT_EQ(events.size(), 201u);
    EXPECT_EQ(events[3].bytes, r);
    EXPECT_EQ(reader.end(), RankEnd::complete);
  }
  // Without its footer (a writer that did not finish) the blocks are found by scanning.
  fs::resize_file(path, fs::file_size(path) - kFooterBytes);
  TraceReader scanned(path);
  EXPECT_TRUE(scanned.index_rebuilt());
  ASSERT_EQ(scanned.ranks(), kRanks);
  RankReader last = scanned.open_rank(49);
  EXPECT_EQ(read_all(last).size(), 201u);
}

TEST(TraceFiles, AKilledWriterLeavesAFileReadableUpToItsLastBlock) {
  TempDir dir;
  const auto path = dir.path() / rank_file_name(0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MappedRankFile file(path);
    BlockEncoder encoder(0, file);
    encoder.write_header(header(0, 1));
    for (int i = 0; i < 1000; ++i)
      encoder.append(send_event(i, 0, 8));
    raise(SIGKILL);  // no flush, no close: the mapping is all that is left
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  TraceReader trace(dir.path());
  RankReader reader = trace.open_rank(0);
  const auto events = read_all(reader);
  EXPECT_EQ(reader.end(), RankEnd::truncated);
  // Whole blocks only: the events of the unfinished last block are lost, no more.
  EXPECT_GT(events.size(), 850u);
  EXPECT_LT(events.size(), 1000u);
  EXPECT_EQ(events.back(), send_event(static_cast<std::int64_t>(events.size() - 1), 0, 8));
}

TEST(TraceFiles, DamagedFilesFailWithFileAndOffset) {
  TempDir dir;
  const auto path = dir.path() / rank_file_name(0);
  write_rank_file(path, 0, 1, 500);
  const auto size = fs::file_size(path);

  {  // cut in the middle of a block
    fs::copy_file(path, dir.path() / "cut.cgt");
    fs::resize_file(dir.path() / "cut.cgt", size - 300);
    auto file = std::make_shared<const TraceFile>(dir.path() / "cut.cgt");
    RankReader reader(file, {Extent{0, file->size()}}, 0);
    Event e;
    try {
      while (reader.next(e)) {
      }
      FAIL() << "a cut file must not read as complete";
    } catch (const TraceError& error) {
      EXPECT_THAT(error.what(), HasSubstr("cut.cgt: offset "));
      EXPECT_THAT(error.what(), HasSubstr("runs past the end"));
    }
  }
  {  // one flipped byte in the middle
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    char c = 0;
    f.seekg(static_cast<std::streamoff>(size / 2));
    f.get(c);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put(static_cast<char>(c ^ 0x10));
  }
  TraceReader trace(dir.path());
  RankReader reader = trace.open_rank(0);
  Event e;
  try {
    while (reader.next(e)) {
    }
    FAIL() << "a flipped byte must be detected";
  } catch (const TraceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("rank-0.cgt: offset "));
    EXPECT_THAT(error.what(),
                ::testing::AnyOf(HasSubstr("checksum mismatch"), HasSubstr("bad magic"),
                                 HasSubstr("runs past the end"), HasSubstr("block ")));
  }
}

TEST(TraceFiles, UnknownVersionsAreRejected) {
  TempDir dir;
  {
    MappedRankFile file(dir.path() / rank_file_name(0));
    BlockEncoder encoder(0, file);
    encoder.write_header(header(0, 1, 7));
    encoder.flush();
    file.close();
  }
  try {
    TraceReader trace(dir.path());
    FAIL();
  } catch (const TraceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("rank-0.cgt: offset 0: trace format version 7"));
  }
  std::ofstream(dir.path() / "index.json")
      << R"({"format":"commgauge-trace","version":2,"ranks":1})";
  EXPECT_THROW(TraceReader{dir.path()}, TraceError);
  EXPECT_THROW(TraceReader{dir.path() / "nothing-here"}, TraceError);
}

// A FIFO named like a trace (a container or a rank file) is refused at once: opening it for
// reading would wait for a writer that never comes (red-team, 2026-12-05: simulate, trace-check
// and trace-summary hung on one).
TEST(TraceFiles, AFifoIsNoTraceAndIsRefusedWithoutWaiting) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir.path() / "trace.cgtc").c_str(), 0600), 0);
  try {
    TraceReader trace(dir.path() / "trace.cgtc");
    FAIL();
  } catch (const TraceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("trace.cgtc: not a regular file"));
  }
  fs::create_directories(dir.path() / "ranks");
  ASSERT_EQ(::mkfifo((dir.path() / "ranks" / rank_file_name(0)).c_str(), 0600), 0);
  try {
    TraceReader trace(dir.path() / "ranks");
    FAIL();
  } catch (const TraceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("rank-0.cgt: not a regular file"));
  }
}

// A replay reads only a header's essentials (simdjson); the document reader (nlohmann) must
// agree with it on every header, good or bad.
TEST(TraceFiles, HeaderEssentialsAgreeWithTheDocument) {
  struct Case {
    std::string header;
    double ticks_per_second;  // expected, when the header is accepted
    std::int64_t overhead_ticks;
    const char* error;  // expected in the message, or nullptr
  };
  const std::vector<Case> cases = {
      {R"({"version":1,"rank":0,"clock":{"ticks_per_second":2.5e9},)"
       R"("tracer":{"overhead_ticks_per_event":37}})",
       2.5e9, 37, nullptr},
      {R"({"version":1,"clock":{"ticks_per_second":"fast"},"tracer":{"overhead_ticks_per_event":[1]}})",
       1e9, 0, nullptr},  // wrong types: the fallbacks
      {R"({"version":1,"clock":{"ticks_per_second":1000},"tracer":{"overhead_ticks_per_event":12.9}})",
       1000, 12, nullptr},
      {R"({"version":1,"rank":0.0,"clock":{"ticks_per_second":1e6},"clock":{"ticks_per_second":3e6}})",
       3e6, 0, nullptr},  // of duplicated keys the last counts
      {R"({"version":1,"rank":1})", 0, 0, "header of rank 1 where rank 0 was expected"},
      {R"({"version":1,"rank":"0"})", 0, 0, R"(header of rank "0" where rank 0)"},
      {R"({"version":2})", 0, 0, "trace format version 2 is not supported"},
      {R"({"version":-1})", 0, 0, "the rank header has no version"},
      {R"({"rank":0})", 0, 0, "the rank header has no version"},
      {R"([1,2])", 0, 0, "not a JSON object"},
      {R"({"version":1,)", 0, 0, "not a JSON object"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    TempDir dir;
    const auto path = dir.path() / rank_file_name(0);
    {
      MappedRankFile file(path);
      BlockEncoder encoder(0, file);
      encoder.write_header(c.header);
      encoder.append(send_event(1000, 0, 8));
      encoder.flush();
      file.close();
    }
    auto file = std::make_shared<const TraceFile>(path);
    for (const HeaderMode mode : {HeaderMode::document, HeaderMode::essentials}) {
      SCOPED_TRACE(mode == HeaderMode::document ? "document" : "essentials");
      if (c.error != nullptr) {
        try {
          RankReader reader(file, {Extent{0, file->size()}}, 0, mode);
          FAIL() << "accepted";
        } catch (const TraceError& error) {
          EXPECT_THAT(error.what(), HasSubstr("rank-0.cgt: offset 0: "));
          EXPECT_THAT(error.what(), HasSubstr(c.error));
        }
        continue;
      }
      RankReader reader(file, {Extent{0, file->size()}}, 0, mode);
      EXPECT_EQ(reader.essentials().ticks_per_second, c.ticks_per_second);
      EXPECT_EQ(reader.essentials().overhead_ticks_per_event, c.overhead_ticks);
      EXPECT_EQ(reader.header().is_null(), mode == HeaderMode::essentials);
      Event e;
      ASSERT_TRUE(reader.next(e));  // the block read with the header
      EXPECT_EQ(e, send_event(1000, 0, 8));
    }
  }
}

// A replay of very many ranks keeps only a window of each block: the events read (and read
// again) must be those of whole blocks, including events longer than the window.
TEST(TraceFiles, WindowedReadingGivesTheSameEvents) {
  TempDir dir;
  const auto path = dir.path() / rank_file_name(0);
  std::vector<Event> written;
  {
    MappedRankFile file(path);
    BlockEncoder encoder(0, file);
    encoder.write_header(header(0, 1));
    for (int i = 0; i < 400; ++i) {
      Event e = send_event(1000 + 1000 * i, 0, static_cast<std::uint64_t>(i) << (i % 40));
      if (i % 37 == 5) {  // a Waitall of 90 requests: about 600 bytes
        e.function = fn::Waitall;
        e.set(kCompletions);
        for (std::int32_t k = 0; k < 90; ++k)
          e.completions.push_back({1000u + static_cast<std::uint64_t>(k), k, k, 7, 4096, false});
      }
      encoder.append(e);
      written.push_back(e);
    }
    Event end;
    end.kind = RecordKind::end;
    end.start_tick = end.end_tick = 500000;
    encoder.append(end);
    written.push_back(end);
    encoder.flush();
    file.close();
  }
  auto file = std::make_shared<const TraceFile>(path);
  for (const std::size_t window :
       {std::size_t{0}, std::size_t{64}, std::size_t{256}, std::size_t{700}}) {
    SCOPED_TRACE(window);
    RankReader reader(file, {Extent{0, file->size()}}, 0, HeaderMode::essentials, window);
    Event e, again;
    std::size_t n = 0;
    while (reader.next(e)) {
      ASSERT_LT(n, written.size());
      EXPECT_EQ(e, written[n]) << "event " << n;
      reader.reread(again);
      EXPECT_EQ(again, e) << "event " << n;
      ++n;
    }
    EXPECT_EQ(n, written.size());
    EXPECT_EQ(reader.end(), RankEnd::complete);
  }
}

TEST(TraceClock, MapsTicksToRankZeroByLinearInterpolation) {
  // Ticks at 2 GHz (0.5 ns each); rank 0's clock is 1000 ns ahead at Init, 3000 ns at Finalize.
  const ClockMap::Sync init{2'000'000, 1'000'000, 1000, 50};
  const ClockMap::Sync finalize{2'000'000 + 2'000'000'000, 1'000'000 + 1'000'000'000, 3000, 60};
  const ClockMap map(1.9e9, &init, &finalize);  // the estimate is superseded by the syncs
  EXPECT_TRUE(map.has_finalize());
  EXPECT_DOUBLE_EQ(map.root_ns(init.tick), 1'001'000.0);
  EXPECT_DOUBLE_EQ(map.root_ns(finalize.tick), 1'001'003'000.0);
  // Halfway: 0.5 s later locally, offset halfway between 1000 and 3000.
  EXPECT_DOUBLE_EQ(map.root_ns(init.tick + 1'000'000'000), 1'000'000 + 500'000'000 + 2000.0);
  EXPECT_DOUBLE_EQ(map.duration_ns(2000), 1000.0);
  const ClockMap init_only(1e9, &init, nullptr);
  EXPECT_FALSE(init_only.has_finalize());
  EXPECT_DOUBLE_EQ(init_only.root_ns(init.tick + 10), 1'001'010.0);
}

TEST(TraceClock, AnOffsetChangeWithinTheSyncsErrorsIsNoDrift) {
  // A pipeline's trace under two busy loops (ticks at 1 GHz here): Init synced with a 1714 ns
  // round trip (offset 24 ns), Finalize 189.37 ms later with a 6.14 ms one (offset 924229 ns).
  // The change lies within the errors (857 + 15 + 3071836 + 14 ns): the Init offset holds
  // throughout, and intervals keep their local length.
  const ClockMap::Sync init{1'000'000, 1'000'000, 24, 1714, 15};
  const ClockMap::Sync finalize{1'000'000 + 189'370'000, 1'000'000 + 189'370'000, 924'229,
                                6'143'673, 14};
  const ClockMap map(1e9, &init, &finalize);
  EXPECT_TRUE(map.has_finalize());
  EXPECT_DOUBLE_EQ(map.root_ns(init.tick), 1'000'024.0);
  EXPECT_DOUBLE_EQ(map.root_ns(finalize.tick), 1'000'000 + 189'370'000 + 24.0);
  EXPECT_DOUBLE_EQ(map.root_ns(init.tick + 46'000'000) - map.root_ns(init.tick), 46'000'000.0);
  // The bound: the worse sync's, plus how far the other offset lies.
  EXPECT_DOUBLE_EQ(map.error_bound_ns(), 3'071'836.5 + 14 + (924'229 - 24));
  // The other way round (Finalize the better sync): its offset holds.
  const ClockMap::Sync loaded_init{1'000'000, 1'000'000, 924'229, 6'143'673, 14};
  const ClockMap::Sync quiet_finalize{1'000'000 + 189'370'000, 1'000'000 + 189'370'000, 24, 1714,
                                      15};
  const ClockMap other(1e9, &loaded_init, &quiet_finalize);
  EXPECT_DOUBLE_EQ(other.root_ns(loaded_init.tick), 1'000'024.0);
  EXPECT_DOUBLE_EQ(other.root_ns(quiet_finalize.tick), 1'000'000 + 189'370'000 + 24.0);
  // A change larger than both errors is drift, interpolated (as above).
  const ClockMap::Sync drifted{1'000'000 + 189'370'000, 1'000'000 + 189'370'000, 24 + 10'000, 1714,
                               15};
  const ClockMap linear(1e9, &init, &drifted);
  EXPECT_DOUBLE_EQ(linear.root_ns(drifted.tick), 1'000'000 + 189'370'000 + 10'024.0);
  EXPECT_DOUBLE_EQ(linear.error_bound_ns(), 857 + 15);
}

TEST(TraceClock, ErrorBoundIsTheLargerSyncsHalfRoundTripPlusPairing) {
  // Init synced quietly (round trip 400 ns, pairing 30 ns); Finalize under load (round trip
  // 9000 ns, the tick read 2000 ns apart from its time): the mapping errs up to 4500 + 2000 ns.
  const ClockMap::Sync init{1000, 1000, 0, 400, 30};
  const ClockMap::Sync finalize{1'000'001'000, 1'000'001'000, 0, 9000, 2000};
  EXPECT_DOUBLE_EQ(ClockMap(1e9, &init, &finalize).error_bound_ns(), 6500.0);
  EXPECT_DOUBLE_EQ(ClockMap(1e9, &init, nullptr).error_bound_ns(), 230.0);
  EXPECT_DOUBLE_EQ(ClockMap(1e9, nullptr, nullptr).error_bound_ns(), 0.0);
  // Written before pairing_ns existed: read as 0.
  EXPECT_EQ(
      ClockMap::parse_sync(R"({"tick":1,"local_ns":2,"offset_ns":3,"round_trip_ns":4})").pairing_ns,
      0);
  EXPECT_EQ(ClockMap::parse_sync(R"({"tick":1,"local_ns":2,"offset_ns":3,"round_trip_ns":4,)"
                                 R"("pairing_ns":5})")
                .pairing_ns,
            5);
}

}  // namespace
}  // namespace commgauge::trace
