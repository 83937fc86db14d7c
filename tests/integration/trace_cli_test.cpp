// commgauge trace for real: the C and Fortran programs that call every modeled function (their
// own counters are the truth the summary must equal), trace-check on their traces, crashes
// (MPI_Abort, SIGKILL, a hang ended by SIGTERM), damaged traces, and bad input.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "process.hpp"

namespace commgauge::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("commgauge-trace-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "counts");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// commgauge trace -o DIR/trace --json DIR/summary.json -- mpirun -np N program args...
  // `limit` follows from the work: a small test program takes under a second when the machine
  // is quiet; HPCC takes 5 s on 2 ranks and, under load, up to 2 minutes on 4 oversubscribed
  // ranks (its RandomAccess runs against a 60 s time bound).
  Outcome trace(int ranks, const std::vector<std::string>& program,
                const std::vector<std::string>& options = {},
                std::chrono::seconds limit = std::chrono::seconds(100)) {
    std::vector<std::string> argv = {commgauge(), "trace",
                                     "-o",        (dir_ / "trace").string(),
                                     "--json",    (dir_ / "summary.json").string()};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", "mpirun", "--allow-run-as-root", "--oversubscribe"});
    // More ranks than cores: a rank that busy-polls holds the core its peer needs.
    if (ranks > 2) argv.insert(argv.end(), {"--mca", "mpi_yield_when_idle", "1"});
    argv.insert(argv.end(), {"-np", std::to_string(ranks)});
    argv.insert(argv.end(), program.begin(), program.end());
    return run(argv, limit);
  }

  Outcome check() { return run({commgauge(), "trace-check", (dir_ / "trace").string()}); }

  /// The trace replayed one rank per node on the network seed 000 measured MPICH2 on.
  Outcome simulate_one_rank_per_node() {
    std::ofstream(dir_ / "cluster.json") << R"({"nodes": 4, "cores_per_node": 1})";
    return run({commgauge(), "simulate", (dir_ / "trace").string(), "--model", "loggp", "--cluster",
                (dir_ / "cluster.json").string(), "--placement", "rrn", "--profile",
                COMMGAUGE_SOURCE_DIR "/examples/profiles/seed000-table2-mpich2-tcp.json"});
  }

  void trace_and_replay_hpcc(int ranks);

  nlohmann::json summary() const {
    std::ifstream in(dir_ / "summary.json");
    return nlohmann::json::parse(in);
  }

  /// The program's own counters, summed over ranks: name -> (calls, bytes).
  std::map<std::string, std::pair<long long, long long>> program_counts() const {
    std::map<std::string, std::pair<long long, long long>> counts;
    for (const auto& f : fs::directory_iterator(dir_ / "counts")) {
      std::ifstream in(f.path());
      std::string name;
      long long calls = 0, bytes = 0;
      while (in >> name >> calls >> bytes) {
        counts[name].first += calls;
        counts[name].second += bytes;
      }
    }
    return counts;
  }

  void expect_counts_match() {
    const auto counts = program_counts();
    ASSERT_GT(counts.size(), 80u) << "the program wrote its counters";
    std::map<std::string, nlohmann::json> traced;
    const nlohmann::json s = summary();
    for (const auto& f : s["functions"])
      traced[f["name"].get<std::string>()] = f;
    for (const auto& [name, expected] : counts) {
      ASSERT_TRUE(traced.count(name)) << name << " is missing from the trace";
      EXPECT_EQ(traced[name]["calls"].get<long long>(), expected.first) << name << " calls";
      EXPECT_EQ(traced[name]["bytes"].get<long long>(), expected.second) << name << " bytes";
    }
    // Nothing modeled that the program did not call.
    for (const auto& [name, f] : traced)
      if (f["class"] == "modeled") {
        EXPECT_TRUE(counts.count(name)) << name;
      }
  }

  /// Every call site the summary lists lies in `program` (the wrappers take the return address
  /// into the caller: the program, never the MPI library or the tracer).
  void expect_call_sites_in(const std::string& program) {
    const nlohmann::json s = summary();
    ASSERT_FALSE(s["call_sites"].empty());
    for (const auto& site : s["call_sites"])
      EXPECT_EQ(site["module"], fs::canonical(program).string()) << site.dump();
  }

  fs::path dir_;
};

/// smpirun -replay of an exported trace; SimGrid reports the simulated time at the end.
Outcome replay_in_simgrid(const fs::path& exported, int ranks) {
  return run(
      {"smpirun", "-np", std::to_string(ranks), "-platform", (exported / "platform.xml").string(),
       "-hostfile", (exported / "hostfile.txt").string(), "-replay",
       (exported / "trace.txt").string(), "--cfg=smpi/host-speed:1Gf"},
      std::chrono::seconds(100));
}

void expect_replayed(const Outcome& o) {
  EXPECT_FALSE(o.timed_out);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.err + o.out, ::testing::ContainsRegex("Simulation time [0-9.]+"));
  EXPECT_THAT(o.err + o.out, ::testing::Not(HasSubstr("eadlock")));
}

/// Events of `rank` that trace-dump prints.
int events_of(const fs::path& trace, int rank) {
  const Outcome dump =
      run({commgauge(), "trace-dump", trace.string(), "--rank", std::to_string(rank)});
  std::istringstream in(dump.out);
  std::string line;
  int n = 0;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') ++n;
  return n;
}

TEST_F(TraceTest, CProgramCountsEqualItsOwnAndTheTraceChecks) {
  const Outcome o = trace(4, {TRACER_PROGRAM_C, (dir_ / "counts").string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("every rank finished, complete"));
  const auto s = summary();
  EXPECT_EQ(s["ranks"], 4);
  EXPECT_EQ(s["complete"], true);
  EXPECT_TRUE(s["unmodeled"].empty());
  expect_counts_match();
  expect_call_sites_in(TRACER_PROGRAM_C);
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_THAT(c.out, HasSubstr("OK (0 errors, 0 warnings)"));
  // 30 per rank on the ring and probes plus the persistent and communicator traffic.
  EXPECT_THAT(c.out, HasSubstr("128 messages matched"));
  // Replayed one rank per node: every collective completes, the intercommunicator's too (its
  // MPI_Bcast once replayed into a deadlock in some traces).
  const Outcome sim = simulate_one_rank_per_node();
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_THAT(sim.out, HasSubstr("bcast (intercommunicator)"));
  // A what-if on another cluster: the traced machine's ping-pongs are not checked against it.
  EXPECT_THAT(sim.out, Not(HasSubstr("machine state:")));
  // Every rank's file describes itself: the index is not needed to read it.
  const Outcome dump = run({commgauge(), "trace-dump", (dir_ / "trace").string(), "--rank", "2",
                            "--limit", "3", "--header"});
  EXPECT_EQ(dump.exit_code, 0);
  EXPECT_THAT(dump.out, HasSubstr("\"rank\":2"));
  EXPECT_THAT(dump.out, HasSubstr("MPI_Init"));
}

#ifdef TRACER_PROGRAM_FORTRAN
TEST_F(TraceTest, FortranProgramCountsEqualItsOwnAndTheTraceChecks) {
  const Outcome o = trace(4, {TRACER_PROGRAM_FORTRAN, (dir_ / "counts").string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(summary()["complete"], true);
  expect_counts_match();
  expect_call_sites_in(TRACER_PROGRAM_FORTRAN);
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_THAT(c.out, HasSubstr("120 messages matched"));
  // Recorded through the Fortran binding, indices converted to C's 0-based ones.
  const Outcome dump = run({commgauge(), "trace-dump", (dir_ / "trace").string(), "--rank", "1"});
  EXPECT_THAT(dump.out, HasSubstr("MPI_Init fortran"));
  EXPECT_THAT(dump.out,
              ::testing::ContainsRegex("MPI_Waitany count=2 done\\[req=[0-9]+ idx=[01] "));
  const Outcome e =
      run({commgauge(), "trace-export", (dir_ / "trace").string(), (dir_ / "simgrid").string()});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  expect_replayed(replay_in_simgrid(dir_ / "simgrid", 4));
}
#endif

TEST_F(TraceTest, SimgridReplaysTheExportedCTrace) {
  ASSERT_EQ(trace(4, {TRACER_PROGRAM_C, (dir_ / "counts").string()}).exit_code, 0);
  const Outcome e =
      run({commgauge(), "trace-export", "--format", "simgrid-ti", (dir_ / "trace").string(),
           (dir_ / "simgrid").string(), "--host-speed", "1e9"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_THAT(e.out, HasSubstr("lowered to point-to-point"));
  // Wildcards were resolved: no receive names MPI_ANY_SOURCE (-1) or a negative tag.
  std::ifstream rank0(dir_ / "simgrid" / "rank-0.txt");
  std::string line;
  int receives = 0;
  while (std::getline(rank0, line)) {
    if (line.rfind("0 recv ", 0) != 0 && line.rfind("0 irecv ", 0) != 0) continue;
    ++receives;
    EXPECT_THAT(line, ::testing::Not(::testing::ContainsRegex(" -[0-9]")));
  }
  EXPECT_GT(receives, 20);
  expect_replayed(replay_in_simgrid(dir_ / "simgrid", 4));

  // The same trace through OTF2 and back: trace-check matches as many messages, requests and
  // collectives in the archive as in the trace itself.
  const Outcome o2 = run({commgauge(), "trace-export", "--format", "otf2",
                          (dir_ / "trace").string(), (dir_ / "otf2").string()});
  ASSERT_EQ(o2.exit_code, 0) << o2.err;
  EXPECT_TRUE(fs::exists(dir_ / "otf2" / "traces.otf2"));
  const Outcome original = check();
  const Outcome archive = run({commgauge(), "trace-check", (dir_ / "otf2").string()});
  ASSERT_EQ(archive.exit_code, 0) << archive.out << archive.err;
  const std::regex counts(
      "([0-9]+) messages matched, ([0-9]+) requests completed, ([0-9]+) "
      "collective calls checked");
  std::smatch a, b;
  ASSERT_TRUE(std::regex_search(original.out, a, counts)) << original.out;
  ASSERT_TRUE(std::regex_search(archive.out, b, counts)) << archive.out;
  // All but the calls on intercommunicators, which the export leaves without MPI records.
  const int sent = std::stoi(a[1]), archived = std::stoi(b[1]);
  EXPECT_LE(archived, sent);
  EXPECT_GE(archived * 10, sent * 9) << archived << " of " << sent << " messages";
  EXPECT_GE(std::stoi(b[3]) * 10, std::stoi(a[3]) * 9) << b[3] << " of " << a[3] << " collectives";
  EXPECT_THAT(o2.out, HasSubstr("intercommunicators"));
  EXPECT_THAT(archive.err, HasSubstr("OTF2 archive written by commgauge"));
}

// hpcc (Debian's package, written by no one here) traced, checked, exported to SimGrid and
// replayed in commgauge's simulator under every model with a link measured in a separate run.
// It reads hpccinf.txt from its working directory: a small committed input (N = 600, a 1 x 2
// process grid; P x Q = 2 x 2 for 4 ranks).
void TraceTest::trace_and_replay_hpcc(int ranks) {
  ASSERT_TRUE(fs::exists("/usr/bin/hpcc")) << "hpcc is not installed (scripts/setup installs it)";
  const fs::path work = dir_ / "hpcc";
  fs::create_directories(work);
  std::ifstream input(std::string(COMMGAUGE_SOURCE_DIR) + "/tests/tracer/hpcc/hpccinf.txt");
  std::stringstream text_in;
  text_in << input.rdbuf();
  std::string hpccinf = text_in.str();
  if (ranks == 4) {
    const auto ps = hpccinf.find("1            Ps");
    ASSERT_NE(ps, std::string::npos);
    hpccinf[ps] = '2';  // P = 2 (Q is 2)
    // N = 300, not 600: RandomAccess's table follows N^2 and its LCG variant has no time bound;
    // with 4 ranks and 2 busy loops on 2 cores it ran 1048576 updates in 338 s (CI, 2026-11-29;
    // 153 and 172 s in the two CI runs before), past the 400 s limit. A quarter of the memory
    // is an eighth of the updates.
    const auto ns = hpccinf.find("600          Ns");
    ASSERT_NE(ns, std::string::npos);
    hpccinf.replace(ns, 3, "300");
  }
  std::ofstream(work / "hpccinf.txt") << hpccinf;
  const Outcome o = trace(ranks, {"-wdir", work.string(), "hpcc"}, {},
                          std::chrono::seconds(ranks > 2 ? 400 : 200));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream result(work / "hpccoutf.txt");
  std::stringstream text;
  text << result.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("Success=1"));
  const auto s = summary();
  EXPECT_EQ(s["complete"], true);
  EXPECT_EQ(s["per_rank"].size(), static_cast<std::size_t>(ranks));
  // RandomAccess polls with MPI_Testany millions of times: folded into poll runs.
  std::uint64_t polls = 0, runs = 0;
  for (const auto& r : s["per_rank"]) {
    polls += r["polls"].get<std::uint64_t>();
    runs += r["poll_runs"].get<std::uint64_t>();
  }
  // How many polls a run folds depends on timing (20 to 1000 per run on an idle machine, under
  // 1.7 when the machine is loaded and a rank finds its messages waiting), and so does the
  // trace's size: both are printed, not gated. What holds regardless: runs fold polls.
  std::printf("hpcc, %d ranks: %llu polls folded into %llu runs (%.1f per run); trace %.1f MB\n",
              ranks, static_cast<unsigned long long>(polls), static_cast<unsigned long long>(runs),
              runs > 0 ? static_cast<double>(polls) / static_cast<double>(runs) : 0.0,
              static_cast<double>(s["trace_bytes"].get<std::uint64_t>()) / 1e6);
  EXPECT_GT(runs, 100u);
  EXPECT_LT(runs, polls);
  EXPECT_THAT(o.out, HasSubstr("MPI_Testany"));
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 0) << c.out;
  const Outcome e =
      run({commgauge(), "trace-export", (dir_ / "trace").string(), (dir_ / "simgrid").string()});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  expect_replayed(replay_in_simgrid(dir_ / "simgrid", ranks));

  // Every record replays under every model (a cancelled wildcard receive once made this
  // deadlock); the errors against the trace are printed, not gated.
  const fs::path link = dir_ / "link.json";
  auto loggp = mpirun(2);
  loggp.insert(loggp.end(), {"loggp", "--max-size", "64KiB", "--json", link.string()});
  const Outcome measured = run(loggp, kMeasuringLimit);
  ASSERT_EQ(measured.exit_code, 0) << (measured.timed_out ? "timed out; " : "") << measured.err;
  const Outcome sim = run({commgauge(), "simulate", (dir_ / "trace").string(), "--profile",
                           link.string(), "--model", "all", "--compare"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err << sim.out;
  const auto table = sim.out.find("model   predicted");
  std::printf("hpcc simulated, %d ranks:\n%s", ranks,
              sim.out.substr(table == std::string::npos ? 0 : table).c_str());
  EXPECT_THAT(sim.out, HasSubstr("E_abs over ranks"));
}

TEST_F(TraceTest, HpccFromDebianIsTracedCheckedAndReplayed) {
  trace_and_replay_hpcc(2);
}

// Four ranks on this machine's two cores: oversubscribed, as the issue asks; the recorded waits
// are then largely time-sharing of the cores, which no network model contains (README).
TEST_F(TraceTest, HpccOnFourOversubscribedRanksIsTracedCheckedAndReplayed) {
  trace_and_replay_hpcc(4);
}

// LAMMPS (Debian's package, molecular dynamics written by no one here) on a Lennard-Jones melt
// the project writes (tests/tracer/lammps/in.melt: 6912 atoms, 300 steps): traced, checked,
// exported to SimGrid and replayed under every model. Its halo exchanges are Irecv, Send, Wait
// to the neighbours of a 3-d processor grid, messages of 10-90 KB (rendezvous over shared
// memory); every step's thermodynamic output is an Allreduce.
TEST_F(TraceTest, LammpsFromDebianIsTracedCheckedAndReplayed) {
  ASSERT_TRUE(fs::exists("/usr/bin/lmp")) << "lammps is not installed (scripts/setup installs it)";
  const Outcome o =
      trace(2,
            {"lmp", "-in", std::string(COMMGAUGE_SOURCE_DIR) + "/tests/tracer/lammps/in.melt",
             "-log", "none", "-echo", "none", "-screen", (dir_ / "lammps.out").string()},
            {}, std::chrono::seconds(200));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::ifstream screen(dir_ / "lammps.out");
  std::stringstream text;
  text << screen.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("Loop time of"));  // LAMMPS finished its 300 steps
  const auto s = summary();
  EXPECT_EQ(s["complete"], true);
  EXPECT_THAT(o.out, HasSubstr("MPI_Send"));
  EXPECT_THAT(o.out, HasSubstr("MPI_Allreduce"));
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 0) << c.out;
  const Outcome e =
      run({commgauge(), "trace-export", (dir_ / "trace").string(), (dir_ / "simgrid").string()});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  expect_replayed(replay_in_simgrid(dir_ / "simgrid", 2));
  const std::string link =
      std::string(COMMGAUGE_SOURCE_DIR) + "/examples/networks/loggp-simple.json";
  const fs::path json = dir_ / "lammps-sim.json";
  const Outcome sim = run({commgauge(), "simulate", (dir_ / "trace").string(), "--profile", link,
                           "--model", "all", "--compare", "--json", json.string()});
  ASSERT_EQ(sim.exit_code, 0) << sim.err << sim.out;
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["models"].size(), 4u);
  for (const auto& m : doc["models"]) {
    EXPECT_GT(m["records"].get<std::uint64_t>(), 5000u) << "every model replays every record";
    EXPECT_EQ(m["forced_completions"], 0);
    EXPECT_GT(m["predicted_seconds"].get<double>(), 0);
    // The tracer's ping-pong at MPI_Init (rank 0 with rank 1) against the link's model of it:
    // for every model that charges messages, with the ratio of the two.
    if (m["model"] == "none") {
      EXPECT_TRUE(m["state_check"].is_null()) << m["state_check"].dump();
      continue;
    }
    const auto& state = m["state_check"];
    ASSERT_TRUE(state.is_object()) << m.dump().substr(0, 300);
    EXPECT_EQ(state["pairs"], 1);
    EXPECT_GT(state["trace_round_trip_us"].get<double>(), 0);
    EXPECT_NEAR(
        state["ratio"].get<double>(),
        state["trace_round_trip_us"].get<double>() / state["model_round_trip_us"].get<double>(),
        1e-9 * state["ratio"].get<double>());
  }
  EXPECT_THAT(sim.out, HasSubstr("machine state: the tracer's ping-pong at MPI_Init"));
}

TEST_F(TraceTest, ThreadMultipleProgramsCarryThreadsAndSequenceNumbers) {
  const Outcome o = trace(2, {TRACER_PROGRAM_THREADS}, {"--cpu-time"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 0) << c.out;
  EXPECT_THAT(c.out, HasSubstr("300 messages matched"));
  const Outcome dump = run({commgauge(), "trace-dump", (dir_ / "trace").string(), "--rank", "0"});
  // 3 worker threads (1-3) with 50 exchanges each; every event numbered and CPU-timed (the
  // thread that first calls from the program also writes its module record).
  for (const char* thread : {"thread=1 ", "thread=2 ", "thread=3 "}) {
    std::size_t count = 0;
    std::istringstream lines(dump.out);
    for (std::string line; std::getline(lines, line);)
      if (line.find(thread) != std::string::npos && line.find("us MPI_") != std::string::npos)
        ++count;
    EXPECT_EQ(count, 50u) << thread;
  }
  EXPECT_THAT(dump.out, ::testing::ContainsRegex("seq=[0-9]+ cpu=[0-9.]+s"));
}

// A receive into pages never touched carries their bytes (fresh_bytes: mincore before the call);
// into touched or already received-into memory, or into a buffer below the 64 KiB the tracer
// looks at, none. The program's five receives say which (tests/tracer/programs/fresh_buffers.c).
TEST_F(TraceTest, ReceivesIntoMemoryNeverTouchedCarryItsBytes) {
  const Outcome o = trace(2, {TRACER_PROGRAM_FRESH});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 0) << c.out;
  const Outcome dump = run({commgauge(), "trace-dump", (dir_ / "trace").string(), "--rank", "1"});
  std::vector<std::string> receives;
  std::istringstream lines(dump.out);
  for (std::string line; std::getline(lines, line);) {
    for (const char* f : {" MPI_Recv ", " MPI_Irecv ", " MPI_Sendrecv "}) {
      if (line.find(f) == std::string::npos) continue;
      const std::size_t at = line.find("fresh_bytes=");
      receives.push_back(
          std::string(f) +
          (at == std::string::npos ? "-" : line.substr(at + 12, line.find(' ', at) - at - 12)));
    }
  }
  EXPECT_THAT(receives, ::testing::ElementsAre(" MPI_Recv 262144", " MPI_Recv -", " MPI_Irecv -",
                                               " MPI_Sendrecv 262144", " MPI_Recv -"))
      << dump.out;
  // The summary counts them: rank 1 looked at 4 receives (not the 16 KiB one), 2 fresh; rank 0
  // at its MPI_Sendrecv's receive.
  const auto s = summary();
  EXPECT_EQ(s["per_rank"][1]["looked_receives"], 4);
  EXPECT_EQ(s["per_rank"][1]["fresh_receives"], 2);
  EXPECT_EQ(s["per_rank"][1]["fresh_bytes"], 2 * 262144);
  EXPECT_EQ(s["per_rank"][0]["looked_receives"], 1);
  EXPECT_EQ(s["per_rank"][0]["fresh_receives"], 0);
  EXPECT_THAT(o.out, HasSubstr("receives into memory never touched: 2 of the 5"));
  // Rank 0 received into its own (touched) buffer only.
  const Outcome dump0 = run({commgauge(), "trace-dump", (dir_ / "trace").string(), "--rank", "0"});
  EXPECT_THAT(dump0.out, ::testing::Not(HasSubstr("fresh_bytes")));
  EXPECT_THAT(run({commgauge(), "trace-dump", (dir_ / "trace").string(), "--rank", "1", "--header",
                   "--limit", "1"})
                  .out,
              HasSubstr("\"fresh_min_bytes\":65536"));
}

// Every send from the buffer it was given carries where that starts in its page
// (send_page_offset: the address of its first byte, the datatype's true lower bound included);
// receives carry none, nor sends from the library's copies. The program sends
// from a page-aligned buffer at known offsets (tests/tracer/programs/send_starts.c).
TEST_F(TraceTest, SendsCarryWhereTheirBufferStartsInItsPage) {
  const Outcome o = trace(2, {TRACER_PROGRAM_SEND_STARTS});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(check().exit_code, 0);
  const auto starts = [&](int rank) {
    const Outcome dump =
        run({commgauge(), "trace-dump", (dir_ / "trace").string(), "--rank", std::to_string(rank)});
    std::vector<std::string> out;
    std::istringstream lines(dump.out);
    for (std::string line; std::getline(lines, line);) {
      for (const char* f : {" MPI_Send ", " MPI_Isend ", " MPI_Ssend ", " MPI_Sendrecv ",
                            " MPI_Sendrecv_replace ", " MPI_Bsend ", " MPI_Recv "}) {
        if (line.find(f) == std::string::npos) continue;
        const std::size_t at = line.find("send_page_offset=");
        std::string value = "-";
        if (at != std::string::npos) value = line.substr(at + 17, line.find(' ', at) - at - 17);
        out.push_back(std::string(f) + value);
      }
    }
    return out;
  };
  // MPI_Sendrecv_replace and MPI_Bsend send from copies of their own: no start.
  EXPECT_THAT(starts(0), ::testing::ElementsAre(" MPI_Send 0", " MPI_Isend 16", " MPI_Ssend 2048",
                                                " MPI_Sendrecv 4095", " MPI_Send 24",
                                                " MPI_Sendrecv_replace -", " MPI_Bsend -"));
  EXPECT_THAT(starts(1), ::testing::ElementsAre(" MPI_Recv -", " MPI_Recv -", " MPI_Recv -",
                                                " MPI_Sendrecv 512", " MPI_Recv -",
                                                " MPI_Sendrecv 512", " MPI_Recv -"));
}

TEST_F(TraceTest, AbortLeavesReadableTracesMarkedTruncated) {
  const Outcome o = trace(2, {TRACER_PROGRAM_CRASH, "abort"});
  EXPECT_NE(o.exit_code, 0);
  EXPECT_THAT(o.err, HasSubstr("rebuilt from the rank files"));
  EXPECT_THAT(o.out, HasSubstr("TRUNCATED"));
  EXPECT_EQ(summary()["finished"], false);
  // Init, clock sync, the module record of the program (the calls' sites lie in it), 600
  // ping-pong events; rank 1 adds MPI_Abort and its marker.
  EXPECT_EQ(events_of(dir_ / "trace", 0), 603);
  EXPECT_EQ(events_of(dir_ / "trace", 1), 605);
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_THAT(c.out, HasSubstr("truncated"));
  EXPECT_THAT(c.out, HasSubstr("600 messages matched"));
  // One validation at the boundary: simulate and trace-export refuse the trace with
  // trace-check's own report and exit status, before reading anything else.
  const Outcome sim = run({commgauge(), "simulate", (dir_ / "trace").string(), "--model", "none"});
  EXPECT_EQ(sim.exit_code, 1) << sim.err;
  EXPECT_THAT(sim.out, HasSubstr(c.out)) << sim.out;
  const Outcome exported =
      run({commgauge(), "trace-export", (dir_ / "trace").string(), (dir_ / "sg").string()});
  EXPECT_EQ(exported.exit_code, 1) << exported.err;
  EXPECT_EQ(exported.out, c.out);
  EXPECT_FALSE(fs::exists(dir_ / "sg" / "trace.txt"));
  // Both streams into one log (2>&1) read in the order things happened: the replay's header,
  // then the error that ended it (standard output had held the header back until exit).
  const Outcome merged =
      run({"/bin/sh", "-c", "exec \"$0\" simulate \"$1\" --model none --no-check 2>&1", commgauge(),
           (dir_ / "trace").string()});
  EXPECT_EQ(merged.exit_code, 2) << merged.out;
  const auto header = merged.out.find("commgauge simulate: ");
  const auto error = merged.out.find("commgauge: error: ");
  ASSERT_NE(header, std::string::npos) << merged.out;
  ASSERT_NE(error, std::string::npos) << merged.out;
  EXPECT_LT(header, error) << merged.out;
}

TEST_F(TraceTest, SigkillLosesAtMostTheLastBlock) {
  const Outcome o = trace(2, {TRACER_PROGRAM_CRASH, "kill"});
  EXPECT_NE(o.exit_code, 0);
  // Rank 1 was killed: what reached its mapping survives, the block being filled does not.
  const int killed = events_of(dir_ / "trace", 1);
  EXPECT_GT(killed, 450);
  EXPECT_LE(killed, 603);
  // Rank 0 got SIGTERM from mpirun: its last block was written.
  EXPECT_EQ(events_of(dir_ / "trace", 0), 603);
  EXPECT_THAT(check().out, HasSubstr("truncated"));
}

/// Event-driven, not timed: the SIGTERM comes once both ranks say their 300 ping-pongs are
/// done and they block (a fixed --timeout cut the exchanges short on a loaded machine: 556 of
/// 602 events, before module records). commgauge trace forwards it to the job; --timeout is only a
/// backstop here.
void expect_hang_ended_by_sigterm_keeps_every_event(const std::vector<std::string>& launcher,
                                                    const char* program, const fs::path& dir) {
  std::vector<std::string> argv = {commgauge(), "trace", "-o", (dir / "trace").string(),
                                   "--timeout", "300",   "--"};
  argv.insert(argv.end(), launcher.begin(), launcher.end());
  argv.insert(argv.end(), {"-np", "2", program, "hang"});
  Background job(argv);
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_FALSE(
        job.wait_for_stderr("ping-pongs done, now: hang", std::chrono::seconds(240)).empty())
        << "the ranks did not reach the hang";
  }
  job.signal(SIGTERM);
  EXPECT_NE(job.wait_for_exit(std::chrono::seconds(60)), 0);
  EXPECT_EQ(events_of(dir / "trace", 0), 603);
  EXPECT_EQ(events_of(dir / "trace", 1), 603);
}

TEST_F(TraceTest, HangEndedBySigtermKeepsEveryEvent) {
  expect_hang_ended_by_sigterm_keeps_every_event(
      {"mpirun", "--allow-run-as-root", "--oversubscribe"}, TRACER_PROGRAM_CRASH, dir_);
}

#ifdef TRACER_PROGRAM_CRASH_MPICH
// Hydra kills the ranks right after passing SIGTERM on (rank 1 kept 583 of 603 records in 2 of 3
// runs under load when trace signalled Hydra): trace stops Hydra, ends the ranks first and only
// then signals Hydra.
TEST_F(TraceTest, MpichHangEndedBySigtermKeepsEveryEvent) {
  expect_hang_ended_by_sigterm_keeps_every_event({MPIEXEC_MPICH}, TRACER_PROGRAM_CRASH_MPICH, dir_);
}
#endif

TEST_F(TraceTest, DamagedTraceIsReportedWithFileAndOffset) {
  ASSERT_NE(trace(2, {TRACER_PROGRAM_CRASH, "abort"}).exit_code, 0);
  const fs::path file = dir_ / "trace" / "rank-0.cgt";
  const auto size = fs::file_size(file);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 2));
    const char c = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put(static_cast<char>(c ^ 0x40));
  }
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_THAT(c.out, HasSubstr("rank-0.cgt: offset "));
  const Outcome dump = run({commgauge(), "trace-dump", (dir_ / "trace").string(), "--rank", "0"});
  EXPECT_EQ(dump.exit_code, 2);
  EXPECT_THAT(dump.err, HasSubstr("rank-0.cgt: offset "));
}

TEST_F(TraceTest, RefusesANonEmptyDirectoryWithoutForce) {
  fs::create_directories(dir_ / "trace");
  // An old rank file: it starts with a block's magic ("CGBK"), as the tracer writes them.
  std::ofstream(dir_ / "trace" / "rank-0.cgt") << "CGBKold";
  Outcome o = trace(2, {TRACER_PROGRAM_CRASH, "abort"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("is not empty (give --force"));
  std::ofstream(dir_ / "trace" / "notes.txt") << "mine";
  o = trace(2, {TRACER_PROGRAM_CRASH, "abort"}, {"--force"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("notes.txt, which is not part of a trace"));
  // Refused before anything was deleted: the old trace and the user's file are both still there.
  EXPECT_TRUE(fs::exists(dir_ / "trace" / "rank-0.cgt"));
  EXPECT_TRUE(fs::exists(dir_ / "trace" / "notes.txt"));
}

#ifdef EXAMPLE_RING
/// The line of the first call to `function` in the ring example's source.
std::uint32_t ring_source_line(const std::string& function) {
  std::ifstream in(COMMGAUGE_SOURCE_DIR "/examples/mpi/ring.c");
  std::string line;
  for (std::uint32_t n = 1; std::getline(in, line); ++n)
    if (line.find(function + "(") != std::string::npos) return n;
  return 0;
}

// mpiP's call-site table: each MPI call of the ring is found at its line of ring.c (read from
// the source here), with the calls every rank made there.
TEST_F(TraceTest, CallSitesAreTheSourceLinesOfTheCalls) {
  const int iterations = 50;
  const Outcome o = trace(2, {EXAMPLE_RING, std::to_string(iterations), "64", "1"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("Call sites (all ranks, by time inside MPI)"));
  std::map<std::string, nlohmann::json> by_function;
  const nlohmann::json s = summary();
  for (const auto& site : s["call_sites"]) {
    EXPECT_EQ(site["module"], fs::canonical(EXAMPLE_RING).string())
        << "an MPI call of the ring placed outside the program: " << site.dump();
    EXPECT_FALSE(by_function.count(site["function"])) << "one site per function in the ring";
    by_function[site["function"]] = site;
  }
  ASSERT_EQ(by_function.size(), 3u) << s["call_sites"].dump();
  for (const std::string function : {"MPI_Irecv", "MPI_Isend", "MPI_Waitall"}) {
    const auto& site = by_function[function];
    const std::uint32_t line = ring_source_line(function);
    ASSERT_GT(line, 0u);
    EXPECT_EQ(site["calls"], 2 * iterations) << function;
    EXPECT_EQ(site["ranks"], 2) << function;
    EXPECT_EQ(site["caller"], "main") << function;
    EXPECT_EQ(fs::path(site["file"].get<std::string>()).filename(), "ring.c") << function;
    EXPECT_EQ(site["line"], line) << function;
    EXPECT_THAT(o.out, HasSubstr("ring.c:" + std::to_string(line))) << function;
  }
}

TEST_F(TraceTest, AnArgumentThatIsNotUtf8IsRecordedAndTheProgramRuns) {
  // The program's command line goes into the trace's index.json: bytes that are not UTF-8 are
  // written as U+FFFD instead of aborting the program.
  const Outcome o = trace(2, {EXAMPLE_RING, "2", "100", "5", "\xff\xfe"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(check().exit_code, 0);
  std::ifstream index(dir_ / "trace" / "index.json");
  const std::string text((std::istreambuf_iterator<char>(index)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("\xef\xbf\xbd\xef\xbf\xbd"));
}
#endif

#ifdef EXAMPLE_RING
// --force replaces a trace only with one that exists: a command that cannot run (mpirun cannot
// start /nonexistent) leaves the old trace whole; a trace of fewer ranks then replaces it,
// without the old trace's extra rank files.
TEST_F(TraceTest, ForceKeepsTheOldTraceWhenTheNewRunTracesNothing) {
  ASSERT_EQ(trace(3, {EXAMPLE_RING, "2", "100", "5"}).exit_code, 0);
  const auto old_size = fs::file_size(dir_ / "trace" / "rank-2.cgt");
  Outcome o = trace(2, {"/nonexistent-program"}, {"--force"});
  EXPECT_NE(o.exit_code, 0);
  EXPECT_THAT(o.err, HasSubstr("no rank was traced"));
  EXPECT_EQ(check().exit_code, 0) << "the old trace is whole";
  EXPECT_EQ(fs::file_size(dir_ / "trace" / "rank-2.cgt"), old_size);
  o = trace(2, {EXAMPLE_RING, "2", "100", "5"}, {"--force"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(check().exit_code, 0);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_ / "trace"))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"index.json", "rank-0.cgt", "rank-1.cgt"}));
}
#endif

#ifdef EXAMPLE_RING
TEST_F(TraceTest, ExportRefusesABadPlacementAndLeavesNoPartialFiles) {
  ASSERT_EQ(trace(2, {EXAMPLE_RING, "2", "100", "5"}).exit_code, 0);
  const fs::path index_file = dir_ / "trace" / "index.json";
  std::ifstream in(index_file);
  auto index = nlohmann::json::parse(in);
  in.close();
  index["placement"] = {0, -1};
  std::ofstream(index_file) << index.dump();
  Outcome o =
      run({commgauge(), "trace-export", (dir_ / "trace").string(), (dir_ / "export").string()});
  EXPECT_EQ(o.exit_code, 2);
  // Host numbers index the index's "hosts": one host here (the reader checks it for every
  // command that opens the trace).
  EXPECT_THAT(o.err, HasSubstr("/placement/1: expected a host number 0 to 0, got -1"));
  for (const std::string command : {"simulate", "trace-check"}) {
    std::vector<std::string> argv = {commgauge(), command, (dir_ / "trace").string()};
    if (command == "simulate") argv.insert(argv.end(), {"--model", "none"});
    const Outcome refused = run(argv);
    EXPECT_EQ(refused.exit_code, 2) << command;
    EXPECT_THAT(refused.err, HasSubstr("/placement/1: expected a host number 0 to 0, got -1"))
        << command;
  }
  EXPECT_FALSE(fs::exists(dir_ / "export"));
  // An empty hosts list is named as such (it said "expected a host number 0 to 0, got 0").
  auto no_hosts = index;
  no_hosts["placement"] = {0, 0};
  no_hosts["hosts"] = nlohmann::json::array();
  std::ofstream(index_file) << no_hosts.dump();
  const Outcome hostless = run({commgauge(), "trace-check", (dir_ / "trace").string()});
  EXPECT_EQ(hostless.exit_code, 2);
  EXPECT_THAT(hostless.err, HasSubstr("/hosts: a placement needs at least one host"));
  // A symlink at an output is replaced, never followed (a write that fails half-way is in
  // OutputFaults, on a full tmpfs).
  index["placement"] = {0, 0};
  std::ofstream(index_file) << index.dump();
  fs::create_directories(dir_ / "export");
  std::ofstream(dir_ / "victim.txt") << "mine";
  fs::create_symlink(dir_ / "victim.txt", dir_ / "export" / "rank-1.txt");
  o = run({commgauge(), "trace-export", (dir_ / "trace").string(), (dir_ / "export").string()});
  EXPECT_EQ(o.exit_code, 2) << "a directory that is not empty needs --force";
  EXPECT_THAT(o.err, HasSubstr("is not empty (give --force to write the export into it)"));
  o = run({commgauge(), "trace-export", (dir_ / "trace").string(), (dir_ / "export").string(),
           "--force"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(fs::is_symlink(dir_ / "export" / "rank-1.txt"));
  std::string victim;
  std::ifstream(dir_ / "victim.txt") >> victim;
  EXPECT_EQ(victim, "mine");
  // An index of 0 ranks is damage, not an empty program (simulate predicted 0 us from it).
  index["ranks"] = 0;
  std::ofstream(index_file) << index.dump();
  for (const char* command : {"trace-export", "simulate", "trace-check"}) {
    std::vector<std::string> argv = {commgauge(), command, (dir_ / "trace").string()};
    if (std::string(command) == "trace-export") argv.push_back((dir_ / "export2").string());
    if (std::string(command) == "simulate") argv.insert(argv.end(), {"--model", "none"});
    o = run(argv);
    EXPECT_EQ(o.exit_code, 2) << command << ": " << o.out << o.err;
    EXPECT_THAT(o.err + o.out, HasSubstr("no plausible \"ranks\" count")) << command;
  }
}
#endif

#if defined(EXAMPLE_RING) && defined(TRACER_LIBRARY)
TEST_F(TraceTest, TheTracerByHandNeverOverwritesAnEarlierTrace) {
  // LD_PRELOAD by hand into a directory that holds a trace already: the program runs, the
  // tracer says why it does not trace, and the earlier trace is left as it was.
  const fs::path dir = dir_ / "by-hand";
  const std::vector<std::string> job = {"mpirun",
                                        "--allow-run-as-root",
                                        "--oversubscribe",
                                        "-np",
                                        "2",
                                        "-x",
                                        std::string("LD_PRELOAD=") + TRACER_LIBRARY,
                                        "-x",
                                        "COMMGAUGE_TRACE_DIR=" + dir.string(),
                                        EXAMPLE_RING,
                                        "2",
                                        "100",
                                        "5"};
  ASSERT_EQ(run(job).exit_code, 0);
  const auto size0 = fs::file_size(dir / "rank-0.cgt");
  const auto index_time = fs::last_write_time(dir / "index.json");
  // The same again, and once more with rank 1's file replaced by a symlink to a file of ours.
  fs::remove(dir / "rank-1.cgt");
  std::ofstream(dir_ / "victim.txt") << "mine";
  fs::create_symlink(dir_ / "victim.txt", dir / "rank-1.cgt");
  const Outcome o = run(job);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.err, HasSubstr("rank-0.cgt exists already: an earlier trace is not overwritten"));
  EXPECT_THAT(o.err, HasSubstr("no index.json written"));
  EXPECT_EQ(fs::file_size(dir / "rank-0.cgt"), size0);
  EXPECT_EQ(fs::last_write_time(dir / "index.json"), index_time);
  std::ifstream victim(dir_ / "victim.txt");
  std::string text;
  victim >> text;
  EXPECT_EQ(text, "mine");
}
#endif

TEST_F(TraceTest, AFullDiskIsReportedOncePerRankAndTheProgramGoesOn) {
  // An 8 KiB tmpfs: each rank's trace (about 4.7 KB) meets the full disk on the way.
  const fs::path small = dir_ / "small";
  fs::create_directories(small);
  const Outcome m = mount_tmpfs(small.string(), "8k");
  if (m.exit_code != 0) {
    if (in_ci()) FAIL() << "cannot mount a tmpfs: " << m.err;
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << m.err;
  }
  struct Unmount {
    fs::path p;
    ~Unmount() { run({"umount", p.string()}); }
  } unmount{small};
  const Outcome o = run({commgauge(), "trace", "-o", (small / "trace").string(), "--json",
                         (dir_ / "summary.json").string(), "--", "mpirun", "--allow-run-as-root",
                         "-np", "2", TRACER_PROGRAM_THREADS});
  EXPECT_EQ(o.exit_code, 0) << o.err;  // the program ran to its end
  for (const char* rank : {"rank 0: cannot extend", "rank 1: cannot extend"}) {
    const auto first = o.err.find(rank);
    ASSERT_NE(first, std::string::npos) << o.err;
    EXPECT_EQ(o.err.find(rank, first + 1), std::string::npos) << "reported more than once";
  }
  EXPECT_THAT(o.err, HasSubstr((small / "trace" / "rank-0.cgt").string()));
  EXPECT_EQ(summary()["finished"], false);
  // What fitted is readable up to its last block.
  EXPECT_GT(events_of(small / "trace", 0), 50);
  EXPECT_THAT(run({commgauge(), "trace-check", (small / "trace").string()}).out,
              HasSubstr("truncated"));
}

#ifdef TRACER_PROGRAM_C_MPICH
// The same programs built with MPICH and launched by MPICH's mpiexec (Hydra): `trace` picks the
// MPICH tracer and passes it with -genv; the programs' own counters are the truth again.
TEST_F(TraceTest, MpichProgramUnderMpichsLauncherCountsEqualItsOwn) {
  const Outcome o =
      run({commgauge(), "trace", "-o", (dir_ / "trace").string(), "--json",
           (dir_ / "summary.json").string(), "--", MPIEXEC_MPICH, "-genv",
           "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", "65536", "-genv", "MPIR_CVAR_BCAST_INTRA_ALGORITHM",
           "binomial", "-np", "4", TRACER_PROGRAM_C_MPICH, (dir_ / "counts").string()},
          std::chrono::seconds(100));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.err, HasSubstr("libcommgauge-tracer-mpich.so"));
  EXPECT_THAT(o.out, HasSubstr("every rank finished, complete"));
  EXPECT_EQ(summary()["ranks"], 4);
  expect_counts_match();
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_THAT(c.out, HasSubstr("OK (0 errors, 0 warnings)"));
  EXPECT_THAT(c.out, HasSubstr("128 messages matched"));
  std::ifstream in(dir_ / "trace" / "index.json");
  const auto index = nlohmann::json::parse(in);
  EXPECT_THAT(index["mpi"]["library"].get<std::string>(), HasSubstr("MPICH"));
  // MPICH's control variables in force, read through MPI_T: the two set above, as set.
  EXPECT_EQ(index["mpi"]["point_to_point"]["eager_limits"].value("MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE",
                                                                 nlohmann::json()),
            65536)
      << index["mpi"].dump();
  // MPICH passes its algorithm choices through MPI_T as integers, in the order of its own list
  // (auto = 0, binomial = 1, ...).
  EXPECT_EQ(index["mpi"]["collectives"].value("MPIR_CVAR_BCAST_INTRA_ALGORITHM", -1), 1);
  EXPECT_EQ(index["mpi"]["collectives"].value("MPIR_CVAR_REDUCE_INTRA_ALGORITHM", -1), 0);
  // Replayed one rank per node, the intercommunicator MPI_Bcast included.
  const Outcome sim = simulate_one_rank_per_node();
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_THAT(sim.out, HasSubstr("bcast (intercommunicator)"));
  // A what-if on another cluster: the traced machine's ping-pongs are not checked against it.
  EXPECT_THAT(sim.out, Not(HasSubstr("machine state:")));
}

// Open MPI's tracer cannot serve an MPICH program (the ABIs differ): --mpi names the library
// where the launcher does not tell.
TEST_F(TraceTest, MpiFlagPicksTheTracerWhereTheLauncherDoesNotTell) {
  const Outcome o =
      run({commgauge(), "trace", "-o", (dir_ / "trace").string(), "--mpi", "mpich", "--", "env",
           MPIEXEC_MPICH, "-np", "4", TRACER_PROGRAM_C_MPICH, (dir_ / "counts").string()},
          std::chrono::seconds(100));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.err, HasSubstr("libcommgauge-tracer-mpich.so"));
  EXPECT_EQ(check().exit_code, 0);
}
#endif

#ifdef TRACER_PROGRAM_FORTRAN_MPICH
TEST_F(TraceTest, MpichFortranProgramCountsEqualItsOwn) {
  const Outcome o = run({commgauge(), "trace", "-o", (dir_ / "trace").string(), "--json",
                         (dir_ / "summary.json").string(), "--", MPIEXEC_MPICH, "-np", "4",
                         TRACER_PROGRAM_FORTRAN_MPICH, (dir_ / "counts").string()},
                        std::chrono::seconds(100));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  expect_counts_match();
  const Outcome c = check();
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_THAT(c.out, HasSubstr("120 messages matched"));
  // MPICH's Fortran binding calls the C functions: each call recorded once, through C.
  const Outcome dump = run({commgauge(), "trace-dump", (dir_ / "trace").string(), "--rank", "1"});
  EXPECT_THAT(dump.out, ::testing::Not(HasSubstr("MPI_Init fortran")));
}
#endif

TEST_F(TraceTest, ANonMpiCommandIsAnError) {
  const Outcome o = run({commgauge(), "trace", "-o", (dir_ / "trace").string(), "--", "true"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("no rank was traced"));
}

}  // namespace
}  // namespace commgauge::testing
