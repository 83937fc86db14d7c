// commgauge timer / latency / serve for real: MPI over shared memory and TCP, the TCP
// transport, and bad input. This machine is shared and noisy, so these tests assert what
// holds under load (completion, ordering, sanity); exact values are checked on the virtual
// network in the unit tests.

#include <signal.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"

namespace commgauge::testing {
namespace {

using ::testing::HasSubstr;

// Every run must succeed, report npp, and have min <= median <= max.
void expect_sane_latency(const Outcome& o, const nlohmann::json& j, const std::string& transport) {
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("npp calc/used"));
  EXPECT_EQ(j["context"]["transport"], transport);
  EXPECT_EQ(j["context"]["hosts"].size(), 2u);
  EXPECT_TRUE(j["context"].contains("git_revision"));
  EXPECT_TRUE(j["context"].contains("command_line"));
  EXPECT_GE(j["timer"]["res_timing_us"].get<double>(), 0.0);
  for (const auto& r : j["results"]) {
    EXPECT_GE(r["npp_used"].get<int>(), 1);
    EXPECT_GE(r["npp_calculated"].get<int>(), 1);
    const auto& s = r["stats_us"];
    EXPECT_LE(s["min"].get<double>(), s["median"].get<double>());
    EXPECT_LE(s["median"].get<double>(), s["max"].get<double>());
    EXPECT_GT(s["min"].get<double>(), 0.0);
    EXPECT_LE(r["filtered"]["removed"].get<int>(), r["trials"].get<int>());
    EXPECT_TRUE(r["rates_MBps"].contains("median"));
  }
  EXPECT_GT(j["messages"].get<int>(), 0);
}

TEST(LatencyCli, MpiSharedMemory) {
  const auto json = scratch_file("mpi-shm.json");
  const auto o = run(with(mpirun(2), {"latency", "--sizes", "8,4096", "--trials", "2000",
                                      "--timer-trials", "200000", "--json", json.string()}));
  const auto j = read_json(json);
  expect_sane_latency(o, j, "mpi");
  EXPECT_THAT(j["context"]["mpi_library"].get<std::string>(), HasSubstr("Open MPI"));
  // What MPI_Init gives, as the programs a profile predicts run (Open MPI locks above it).
  EXPECT_EQ(j["context"]["mpi_thread_level"], "single");
  EXPECT_EQ(j["results"].size(), 2u);
}

// The thread level a threaded program runs at can be measured: MPI_Query_thread's answer is
// in the context (Open MPI 4.1 from Debian provides every level).
TEST(LatencyCli, MpiThreadLevelAsAsked) {
  const auto json = scratch_file("mpi-funneled.json");
  const auto o =
      run(with(mpirun(2), {"latency", "--sizes", "8", "--trials", "200", "--mpi-thread-level",
                           "funneled", "--timer-trials", "20000", "--json", json.string()}));
  const auto j = read_json(json);
  expect_sane_latency(o, j, "mpi");
  EXPECT_EQ(j["context"]["mpi_thread_level"], "funneled");
}

TEST(LatencyCli, MpiTcpBtl) {
  const auto json = scratch_file("mpi-tcp.json");
  const auto o = run(
      with(mpirun(2, {"--mca", "btl", "tcp,self"}),
           {"latency", "--trials", "2000", "--timer-trials", "200000", "--json", json.string()}));
  expect_sane_latency(o, read_json(json), "mpi");
}

TEST(LatencyCli, MpiFourRanksSourceZeroDestThree) {
  const auto json = scratch_file("mpi-4.json");
  const auto o = run(
      with(mpirun(4), {"latency", "--source", "0", "--dest", "3", "--trials", "500",
                       "--timer-trials", "100000", "--clock", "wtime", "--json", json.string()}));
  const auto j = read_json(json);
  expect_sane_latency(o, j, "mpi");
  EXPECT_EQ(j["context"]["source_rank"], 0);
  EXPECT_EQ(j["context"]["dest_rank"], 3);
  EXPECT_EQ(j["timer"]["clock"], "MPI_Wtime");
}

TEST(LatencyCli, TcpSelfStartedPeer) {
  const auto json = scratch_file("tcp.json");
  const auto dir = scratch_file("tcp-files");
  const auto o = run({commgauge(), "latency", "--transport", "tcp", "--sizes", "8,65536",
                      "--trials", "1000", "--rse-target", "0", "--timer-trials", "200000", "--json",
                      json.string(), "--output-dir", dir.string()});
  const auto j = read_json(json);
  expect_sane_latency(o, j, "tcp");
  EXPECT_TRUE(j["context"]["self_started_peer"].get<bool>());
  EXPECT_TRUE(std::filesystem::exists(dir / "latency.summary.output"));
  EXPECT_TRUE(std::filesystem::exists(dir / "latency.output"));
  std::ifstream csv(dir / "latency.trials.csv");
  std::string line;
  int lines = 0;
  while (std::getline(csv, line))
    ++lines;
  EXPECT_EQ(lines, 1 + 2 * 1000);  // header + every trial of both sizes
}

TEST(LatencyCli, TcpAgainstServe) {
  Background server({commgauge(), "serve", "--bind", "127.0.0.1", "--port", "0", "--once"});
  const std::string line = server.wait_for_stderr("listening on", std::chrono::seconds(10));
  ASSERT_FALSE(line.empty());
  const std::string port = line.substr(line.rfind(':') + 1);
  const auto json = scratch_file("tcp-serve.json");
  const auto o = run({commgauge(), "latency", "--transport", "tcp", "--peer", "127.0.0.1:" + port,
                      "--trials", "500", "--timer-trials", "100000", "--json", json.string()});
  const auto j = read_json(json);
  expect_sane_latency(o, j, "tcp");
  EXPECT_FALSE(j["context"]["self_started_peer"].get<bool>());
}

TEST(LatencyCli, VirtualNetworkMatchesItsParameters) {
  const auto json = scratch_file("virtual.json");
  const auto o =
      run({commgauge(), "latency", "--transport", "virtual", "--virtual-net",
           COMMGAUGE_SOURCE_DIR "/examples/networks/loggp-simple.json", "--sizes", "1,1001",
           "--trials", "100", "--timer-trials", "1000", "--json", json.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = read_json(json);
  // o + L + (k-1)G + o with L = 5, o = 1.5, G = 0.001
  EXPECT_NEAR(j["results"][0]["stats_us"]["median"].get<double>(), 8.0, 1e-6);
  EXPECT_NEAR(j["results"][1]["stats_us"]["median"].get<double>(), 9.0, 1e-6);
  EXPECT_EQ(j["timer"]["res_timing_us"].get<double>(), 0.0);
}

TEST(TimerCli, PrintsResolutionAndWritesJson) {
  const auto json = scratch_file("timer.json");
  const auto o = run(
      {commgauge(), "timer", "--transport", "tcp", "--trials", "1000000", "--json", json.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("res_timing"));
  EXPECT_THAT(o.out, HasSubstr("DISTRIBUTION OF TIMES"));
  const auto j = read_json(json);
  EXPECT_GT(j["res_timing_us"].get<double>(), 0.0);
  EXPECT_LE(j["min_ov_us"].get<double>(), j["stats_us"]["median"].get<double>());
  EXPECT_EQ(j["trials"], 1000000);
}

// ---- bad input: one line naming the problem, non-zero exit, no hang ----

void expect_one_line_error(const Outcome& o, int code, const std::string& mentions) {
  EXPECT_FALSE(o.timed_out);
  EXPECT_EQ(o.exit_code, code) << o.err;
  EXPECT_THAT(o.err, HasSubstr(mentions));
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST(LatencyCliErrors, UnknownTransport) {
  expect_one_line_error(run({commgauge(), "latency", "--transport", "carrier-pigeon"}), 2,
                        "--transport: expected mpi, tcp or virtual");
}

TEST(LatencyCliErrors, UnknownThreadLevel) {
  expect_one_line_error(run({commgauge(), "latency", "--mpi-thread-level", "many"}), 2,
                        "--mpi-thread-level: expected single, funneled, serialized or multiple");
  expect_one_line_error(
      run({commgauge(), "latency", "--transport", "tcp", "--mpi-thread-level", "multiple"}), 2,
      "--mpi-thread-level: only applies to --transport mpi");
}

TEST(LatencyCliErrors, NegativeSize) {
  expect_one_line_error(run({commgauge(), "latency", "--transport", "tcp", "--size=-8"}), 2,
                        "--size: a size must be >= 0");
}

TEST(LatencyCliErrors, ZeroNpp) {
  expect_one_line_error(run({commgauge(), "latency", "--transport", "tcp", "--npp", "0"}), 2,
                        "--npp: must be at least 1");
}

TEST(LatencyCliErrors, ZeroTrials) {
  expect_one_line_error(run({commgauge(), "latency", "--transport", "tcp", "--trials", "0"}), 2,
                        "--trials: must be at least 1");
}

TEST(LatencyCliErrors, MalformedVirtualNet) {
  const auto bad = scratch_file("bad-net.json");
  std::ofstream(bad) << R"({"format": "commgauge-link-params", "version": 1, "L_us": 1,
    "ranges": [{"from_bytes": 1, "o_s_us": -1, "o_r_us": 1, "g_us": 1, "G_us_per_byte": 0}]})";
  expect_one_line_error(
      run({commgauge(), "latency", "--transport", "virtual", "--virtual-net", bad.string()}), 2,
      "/ranges/0/o_s_us: must be >= 0");
}

TEST(LatencyCliErrors, UnreachablePeer) {
  // Nothing listens on port 1; the connect timeout bounds the wait.
  const auto o = run({commgauge(), "latency", "--transport", "tcp", "--peer", "127.0.0.1:1",
                      "--connect-timeout", "2", "--timer-trials", "1000"});
  expect_one_line_error(o, 3, "cannot connect to 127.0.0.1:1 within 2.0 s");
  EXPECT_LT(o.seconds, 10.0);
}

TEST(LatencyCliErrors, PeerKilledMidRun) {
  Background server({commgauge(), "serve", "--bind", "127.0.0.1", "--port", "0", "--once"});
  const std::string line = server.wait_for_stderr("listening on", std::chrono::seconds(10));
  ASSERT_FALSE(line.empty());
  const std::string port = line.substr(line.rfind(':') + 1);
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    server.signal(SIGKILL);
  });
  const auto o = run({commgauge(), "latency", "--transport", "tcp", "--peer", "127.0.0.1:" + port,
                      "--trials", "100000000", "--rse-target", "0", "--timer-trials", "1000"});
  killer.join();
  EXPECT_FALSE(o.timed_out);
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_THAT(o.err, HasSubstr("TCP peer"));
  EXPECT_LT(o.seconds, 1.5 + 10 + 5);  // well within the default I/O timeout of 10 s
}

TEST(LatencyCliErrors, HungPeerHitsTheIoTimeout) {
  Background server({commgauge(), "serve", "--bind", "127.0.0.1", "--port", "0", "--once"});
  const std::string line = server.wait_for_stderr("listening on", std::chrono::seconds(10));
  ASSERT_FALSE(line.empty());
  const std::string port = line.substr(line.rfind(':') + 1);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    server.signal(SIGSTOP);  // alive but silent: only the timeout can tell
  });
  const auto o =
      run({commgauge(), "latency", "--transport", "tcp", "--peer", "127.0.0.1:" + port, "--trials",
           "100000000", "--rse-target", "0", "--timer-trials", "1000", "--io-timeout", "3"});
  stopper.join();
  server.signal(SIGCONT);
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_THAT(o.err, HasSubstr("did not respond for 3.0 s"));
  EXPECT_LT(o.seconds, 1.5 + 3 + 5);  // the bound: start-up + I/O timeout + margin
}

TEST(LatencyCliErrors, APeerThatStopsMidSweepKeepsTheSizesMeasured) {
  // 500 trials per size: 8 B completes (about 8 KB); the peer is stopped (SIGSTOP) once it has
  // received 16 MiB, inside the 64 MiB size (tens of GB: a wide window even under load): the 8 B
  // size is saved, marked incomplete, and the run still ends with the transport error (exit 3).
  const ScratchPath json("cg-latency-partial.json");
  const auto o = run_against_peer_stopped_after(
      16u << 20, {"latency", "--sizes", "8,64MiB", "--trials", "500", "--min-trials", "500",
                  "--rse-target", "0", "--timer-trials", "1000", "--json", json.path.string()});
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_THAT(o.err, HasSubstr("did not respond for 3.0 s"));
  EXPECT_THAT(o.err, HasSubstr("ended after 1 of 2 sizes; those are saved"));
  EXPECT_THAT(o.out, HasSubstr("INCOMPLETE: 1 of 2 sizes measured"));
  std::ifstream in(json.path);
  ASSERT_TRUE(in.good()) << "no JSON saved";
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["complete"], false);
  EXPECT_THAT(doc["interrupted"].get<std::string>(), HasSubstr("did not respond"));
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_EQ(doc["results"][0]["size_bytes"], 8);
  EXPECT_GT(doc["results"][0]["stats_us"]["median"].get<double>(), 0);
}

TEST(LatencyCliErrors, AStoppedMpiRankEndsTheRunWithinTheMpiTimeout) {
  // A rank stopped (SIGSTOP) mid-measurement: the other one's call watchdog ends the run after
  // --mpi-timeout, naming the stopped rank, with exit status 3 (mpirun passes it on).
  std::vector<std::string> argv = mpirun(2);
  argv.insert(argv.end(), {"latency", "--trials", "100000000", "--rse-target", "0",
                           "--timer-trials", "1000", "--mpi-timeout", "2"});
  Background job(argv);
  // Both ranks measuring: each has used a second of CPU (both poll), however loaded the machine.
  std::vector<pid_t> ranks;
  for (int i = 0; i < 1200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ranks = children_of(job.pid());
    if (ranks.size() == 2 && cpu_seconds(ranks[0]) > 1 && cpu_seconds(ranks[1]) > 1) break;
  }
  ASSERT_EQ(ranks.size(), 2u) << "mpirun did not start 2 ranks";
  ASSERT_EQ(::kill(ranks[1], SIGSTOP), 0);
  // The bound follows from the work: 2 s of --mpi-timeout, then mpirun ends the job.
  const int status = job.wait_for_exit(std::chrono::seconds(60));
  ::kill(ranks[1], SIGKILL);  // in case mpirun left it stopped
  EXPECT_EQ(status, 3);
  const std::string line = job.wait_for_stderr("--mpi-timeout", std::chrono::seconds(1));
  EXPECT_THAT(line, ::testing::ContainsRegex("rank [01]: one call has waited [0-9.]+ s for rank "
                                             "[01] \\(--mpi-timeout\\)"));
}

#ifdef STOP_IN_MPI
// commgauge's two ranks beside a third that stops itself at `mode` (tests/integration/programs/
// stop_in_mpi.c): MPI_Init, the pair's MPI_Comm_split and MPI_Finalize are collective, so each
// must be bounded like every other call, never a hang: by 10 x --mpi-timeout, as other ranks may
// still be analysing and writing at a phase's start or end.
struct StoppedRankRun {
  int status = -1;                    ///< mpirun's exit status
  bool mpirun_teardown_hang = false;  ///< every rank had ended; mpirun itself hung
  std::string watchdog_line;          ///< commgauge's --mpi-timeout message
  std::string stderr_text;            ///< everything the job wrote to stderr (for a failure)
};

StoppedRankRun latency_beside_a_rank_stopping_at(const std::string& mode, const std::string& json) {
  std::vector<std::string> argv = mpirun(2);
  argv.insert(argv.end(),
              {"latency", "--sizes", "8", "--trials", "2000", "--rse-target", "0", "--timer-trials",
               "1000", "--mpi-timeout", "2", "--json", json, ":", "-np", "1", STOP_IN_MPI, mode});
  Background job(argv);
  StoppedRankRun r;
  // The bound follows from the work: a few seconds of start-up and measuring, 20 s (10 x
  // --mpi-timeout), then mpirun ends the job. Open MPI 4.1's mpirun itself sometimes hangs in
  // PMIx_server_finalize after a rank exited non-zero, with every rank already ended (unreaped):
  // seen in 1 of 7 runs under load (open-mpi/ompi#3380 reports the same). That is told apart
  // from a rank that hangs: all of mpirun's children are zombies for 10 s.
  int zombie_seconds = 0;
  std::vector<pid_t> children;
  for (int s = 0; s < 110 && r.status < 0; ++s) {
    r.status = job.wait_for_exit(std::chrono::seconds(1));
    if (r.status >= 0) break;
    children = children_of(job.pid());
    const bool all_ended =
        !children.empty() && std::all_of(children.begin(), children.end(),
                                         [](pid_t p) { return process_state(p) == 'Z'; });
    zombie_seconds = all_ended ? zombie_seconds + 1 : 0;
    if (zombie_seconds >= 10) {
      r.mpirun_teardown_hang = true;
      break;
    }
  }
  r.watchdog_line = job.wait_for_stderr("--mpi-timeout", std::chrono::seconds(1));
  if (r.status >= 0) job.wait_for_stderr("\x01 the rest, to the end", std::chrono::seconds(1));
  r.stderr_text = job.stderr_seen();
  for (pid_t p : children)  // this job's ranks, in case mpirun left one stopped
    if (process_state(p) != 0) ::kill(p, SIGKILL);
  return r;
}

// mpirun passes the watchdog's exit status 3 on, unless mpirun itself hung after every rank had
// ended (see above), which is printed.
void expect_exit_status_3(const StoppedRankRun& r) {
  if (r.mpirun_teardown_hang) {
    std::printf("every rank ended; mpirun hung in its own teardown and was killed\n");
    return;
  }
  EXPECT_EQ(r.status, 3) << (r.status < 0 ? "hung" : "") << "; the job's stderr:\n"
                         << r.stderr_text;
}

TEST(LatencyCliErrors, ARankStoppedBeforeMpiInitEndsTheJobWithinTheMpiTimeout) {
  const std::string json = ::testing::TempDir() + "/stopped-init.json";
  const StoppedRankRun r = latency_beside_a_rank_stopping_at("init", json);
  expect_exit_status_3(r);
  EXPECT_THAT(r.watchdog_line, ::testing::ContainsRegex("MPI_Init has waited [0-9.]+ s for the "
                                                        "other ranks \\(10 x --mpi-timeout\\)"));
}

TEST(LatencyCliErrors, ARankStoppedAfterMpiInitEndsTheJobWithinTheMpiTimeout) {
  const std::string json = ::testing::TempDir() + "/stopped-split.json";
  const StoppedRankRun r = latency_beside_a_rank_stopping_at("split", json);
  expect_exit_status_3(r);
  EXPECT_THAT(r.watchdog_line, ::testing::ContainsRegex(
                                   "rank [01]: MPI_Comm_split has waited [0-9.]+ s for the other "
                                   "ranks"));
}

TEST(LatencyCliErrors, ARankStoppedBeforeMpiFinalizeEndsTheJobWithTheResultsSaved) {
  const std::string json = ::testing::TempDir() + "/stopped-finalize.json";
  std::filesystem::remove(json);
  const StoppedRankRun r = latency_beside_a_rank_stopping_at("finalize", json);
  expect_exit_status_3(r);
  EXPECT_THAT(r.watchdog_line,
              ::testing::ContainsRegex("rank [01]: MPI_Finalize has waited [0-9.]+ s for the other "
                                       "ranks"));
  // The measurement finished before MPI_Finalize: it is printed and saved whole.
  std::ifstream in(json);
  ASSERT_TRUE(in.good()) << "no JSON saved";
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["complete"], true);
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_EQ(doc["results"][0]["size_bytes"], 8);
  EXPECT_GT(doc["results"][0]["stats_us"]["median"].get<double>(), 0);
}
#endif

TEST(LatencyCliErrors, MpiNeedsTwoRanks) {
  const auto o = run({commgauge(), "latency", "--trials", "10"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("needs at least 2 ranks"));
}

TEST(LatencyCliErrors, MpiBadDestRank) {
  const auto o = run(with(mpirun(2), {"latency", "--dest", "5", "--trials", "10"}));
  EXPECT_NE(o.exit_code, 0);
  EXPECT_FALSE(o.timed_out);
  EXPECT_THAT(o.err, HasSubstr("--dest: rank 5 does not exist"));
}

TEST(Cli, HelpIsComplete) {
  const auto o = run({commgauge(), "latency", "--help"});
  ASSERT_EQ(o.exit_code, 0);
  for (const char* option :
       {"--transport", "--peer", "--virtual-net", "--source", "--dest", "--clock", "--io-timeout",
        "--size", "--sizes", "--trials", "--npp", "--res-npp", "--cut-coef", "--timer-trials",
        "--json", "--output-dir"}) {
    EXPECT_THAT(o.out, HasSubstr(option));
  }
}

}  // namespace
}  // namespace commgauge::testing
