// commgauge share and share-fit for real: MPI with emulated nodes, TCP task processes on this
// host, predictions, and bad input.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process.hpp"

namespace commgauge::testing {
namespace {

using ::testing::HasSubstr;

std::string scheme(const std::string& name) {
  return std::string(COMMGAUGE_SOURCE_DIR) + "/examples/schemes/" + name;
}

void expect_sane(const nlohmann::json& j, std::size_t comms) {
  ASSERT_EQ(j["communications"].size(), comms);
  for (const auto& c : j["communications"]) {
    EXPECT_GT(c["measured_penalty"].get<double>(), 0);
    EXPECT_LE(c["penalty_min"].get<double>(), c["measured_penalty"].get<double>());
    EXPECT_GE(c["penalty_max"].get<double>(), c["measured_penalty"].get<double>());
    // The interval of P (order statistics of T and T_ref, crosswise) holds the median ratio and
    // lies within the spread of single iterations over T_ref's extremes.
    EXPECT_LE(c["penalty_lower"].get<double>(), c["measured_penalty"].get<double>());
    EXPECT_GE(c["penalty_upper"].get<double>(), c["measured_penalty"].get<double>());
    EXPECT_EQ(c["t_ref_times_s"].size(), c["times_s"].size());
    EXPECT_GT(c["penalty_confidence"].get<double>(), 0);
    EXPECT_LT(c["penalty_confidence"].get<double>(), 1);
    EXPECT_TRUE(c.contains("predicted_penalty"));
    EXPECT_TRUE(c.contains("e_rel_percent"));
  }
  EXPECT_TRUE(j.contains("e_abs_percent"));
  EXPECT_TRUE(j["functional_only"].get<bool>());  // one host: memory and CPU, not NICs
}

std::string text_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ShareCli, MpiWithEmulatedNodes) {
  const auto json = scratch_file("mpi.json");
  const auto svg = scratch_file("mpi.svg");
  const auto o = run(with(mpirun(4), {"share", "--scheme", scheme("fig2-2.sch"), "--nodes", "3",
                                      "--size", "1MiB", "--iterations", "7", "--model", "gige",
                                      "--json", json.string(), "--plot", svg.string()}));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("FUNCTIONAL ONLY"));
  // 7 iterations: each median's interval is [min, max], 1 - 2/128 each, so P's >= 96.8 %.
  EXPECT_THAT(o.out, HasSubstr("covering P with at least 96.8 % (7 iterations each"));
  expect_sane(read_json(json), 2);
  const std::string picture = text_of(svg);
  for (const std::string expected :
       {"penalty P = T / T_ref", "communication (name: source node -> destination node)",
        ">measured (median, interval >= 96.8 %)<", ">gige<", ">P = 1 (alone)<"})
    EXPECT_NE(picture.find(expected), std::string::npos) << expected;
}

TEST(ShareCli, TcpTaskProcessesOnThisHost) {
  const auto json = scratch_file("tcp.json");
  const auto o =
      run({commgauge(), "share", "--transport", "tcp", "--scheme", scheme("fig2-3.sch"), "--size",
           "1MiB", "--iterations", "3", "--model", "fair", "--json", json.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  expect_sane(read_json(json), 3);
}

TEST(ShareCli, AStoppedTcpTaskEndsTheRunWithinTheIoTimeoutNamingIt) {
  // One task process stopped (SIGSTOP) mid-run: the coordinator gives up after --io-timeout
  // without progress, names the task, ends every task (a stopped one too) and exits 3.
  Background share({commgauge(), "share", "--transport", "tcp", "--scheme", scheme("fig2-3.sch"),
                    "--iterations", "1000000", "--io-timeout", "2"});
  // Its task processes (3 senders and the receivers of fig2-3's 3 destination nodes), once
  // their number has stayed the same for half a second.
  std::vector<pid_t> tasks;
  for (int i = 0, steady = 0; i < 400 && steady < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = children_of(share.pid());
    steady = now.size() == tasks.size() && !now.empty() ? steady + 1 : 0;
    tasks = now;
  }
  ASSERT_GE(tasks.size(), 2u) << "the coordinator did not start its task processes";
  ASSERT_EQ(::kill(tasks[1], SIGSTOP), 0);
  // The bound follows from the work: 2 s of --io-timeout and 1 s to end the tasks, with room.
  const int status = share.wait_for_exit(std::chrono::seconds(30));
  EXPECT_EQ(status, 3);
  const std::string err = share.wait_for_stderr("(pid ", std::chrono::seconds(1));
  EXPECT_THAT(err, ::testing::ContainsRegex("task [0-9]+ \\(pid [0-9]+ on node .*I/O timeout"));
  for (pid_t t : tasks)
    EXPECT_NE(::kill(t, 0), 0) << "task " << t << " is still running";
}

TEST(ShareCli, AStoppedMpiTaskEndsTheRunWithinTheMpiTimeout) {
  // One of 4 MPI tasks stopped (SIGSTOP) mid-run: the others' call watchdogs end the run after
  // --mpi-timeout with exit status 3 (mpirun passes it on), never a hang.
  std::vector<std::string> argv = mpirun(4);
  argv.insert(argv.end(), {"share", "--scheme", scheme("fig2-2.sch"), "--nodes", "3", "--size",
                           "64KiB", "--iterations", "1000000", "--mpi-timeout", "2"});
  Background job(argv);
  // All 4 under way: each has used half a second of CPU (they poll), however loaded the machine.
  std::vector<pid_t> ranks;
  for (int i = 0; i < 2400; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ranks = children_of(job.pid());
    bool all = ranks.size() == 4;
    for (pid_t r : ranks)
      all = all && cpu_seconds(r) > 0.5;
    if (all) break;
  }
  ASSERT_EQ(ranks.size(), 4u) << "mpirun did not start 4 ranks";
  ASSERT_EQ(::kill(ranks[3], SIGSTOP), 0);
  const int status = job.wait_for_exit(std::chrono::seconds(60));
  ::kill(ranks[3], SIGKILL);  // in case mpirun left it stopped
  EXPECT_EQ(status, 3);
  const std::string line = job.wait_for_stderr("--mpi-timeout", std::chrono::seconds(1));
  EXPECT_THAT(line, ::testing::ContainsRegex("rank [0-3]: one call has waited [0-9.]+ s for"));
}

TEST(ShareCli, PredictAndEvaluate) {
  const auto json = scratch_file("predict.json");
  const auto o = run({commgauge(), "share", "--scheme", scheme("fig5.sch"), "--predict", "--model",
                      "myrinet", "--json", json.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = read_json(json);
  std::vector<double> p;
  for (const auto& c : j["communications"])
    p.push_back(c["predicted_penalty"].get<double>());
  EXPECT_EQ(p, (std::vector<double>{5, 5, 5, 2.5, 2.5, 2.5}));  // seed 003 Fig. 6
  // Evaluating the Myrinet model against a "measurement" equal to the fair model's output.
  const auto fake = scratch_file("fake.json");
  const auto f = run({commgauge(), "share", "--scheme", scheme("fig5.sch"), "--predict", "--model",
                      "fair", "--json", fake.string()});
  ASSERT_EQ(f.exit_code, 0);
  auto doc = read_json(fake);
  for (auto& c : doc["communications"])
    c["measured_penalty"] = c["predicted_penalty"];
  std::ofstream(fake) << doc.dump();
  const auto e = run({commgauge(), "share", "--scheme", scheme("fig5.sch"), "--model", "fair",
                      "--evaluate", fake.string()});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_THAT(e.out, HasSubstr("fair: E_abs = 0.0 %"));
  // The pictures: every model beside every communication; a bad extension is refused first.
  const auto svg = scratch_file("predict.svg");
  const auto drawn = run(
      {commgauge(), "share", "--scheme", scheme("fig5.sch"), "--predict", "--plot", svg.string()});
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  const std::string picture = text_of(svg);
  for (const std::string expected : {">fair<", ">gige<", ">myrinet<", ">a: 0->3<", ">f: 1->4<"})
    EXPECT_NE(picture.find(expected), std::string::npos) << expected;
  EXPECT_EQ(picture.find(">measured"), std::string::npos);
  const auto evaluated = scratch_file("evaluated.png");
  ASSERT_EQ(run({commgauge(), "share", "--scheme", scheme("fig5.sch"), "--model", "fair",
                 "--evaluate", fake.string(), "--plot", evaluated.string()})
                .exit_code,
            0);
  std::ifstream png(evaluated, std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  const auto bad = scratch_file("predict.txt");
  const auto refused = run(
      {commgauge(), "share", "--scheme", scheme("fig5.sch"), "--predict", "--plot", bad.string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr(".png or .svg"));
  EXPECT_FALSE(std::filesystem::exists(bad));
}

TEST(ShareCliErrors, TooFewRanksSaysHowManyAreNeeded) {
  const auto o = run(with(mpirun(2), {"share", "--scheme", scheme("fig2-3.sch"), "--nodes", "4"}));
  EXPECT_NE(o.exit_code, 0);
  EXPECT_FALSE(o.timed_out);
  EXPECT_THAT(o.err, HasSubstr("needs 6 ranks"));
}

TEST(ShareCliErrors, SchemeSyntaxError) {
  const auto bad = scratch_file("bad.sch");
  std::ofstream(bad) << "a: 0 -> 1\nb: 0 => 2\n";
  const auto o = run({commgauge(), "share", "--scheme", bad.string(), "--predict"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("bad.sch:2:6: expected \"->\""));
}

TEST(ShareCliErrors, MyrinetLimitIsAClearError) {
  const auto dense = scratch_file("dense.sch");
  std::ofstream out(dense);
  int k = 0;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i != j) out << "c" << k++ << ": " << i << " -> " << j << "\n";
    }
  }
  out.close();
  const auto o = run({commgauge(), "share", "--scheme", dense.string(), "--predict", "--model",
                      "myrinet", "--state-set-limit", "1000"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("sets of communication states"));
}

// Measured documents and parameters read back (share-fit, --evaluate, --params): a scheme
// outside its nodes (0 nodes, -1, a destination far beyond them) is an input error naming it,
// not a crash; a penalty that is not a finite number above 0 and a beta whose penalties would
// overflow are refused, not printed as nan or inf.
TEST(ShareCliErrors, MeasuredDocumentsAndParametersAreChecked) {
  const auto doc = [](int nodes, int dest, double penalty) {
    return nlohmann::json{
        {"method", "share"},
        {"scheme",
         {{"nodes", nodes},
          {"communications",
           {{{"name", "a"}, {"source_node", 0}, {"dest_node", dest}, {"bytes", 65536}}}}}},
        {"communications",
         {{{"name", "a"},
           {"source_node", 0},
           {"dest_node", dest},
           {"bytes", 65536},
           {"measured_penalty", penalty}}}}};
  };
  struct Case {
    int nodes, dest;
    double penalty;
    std::string says;
  };
  const std::vector<Case> cases = {
      {0, 1, 1.2, "expected 1 to 999999 nodes, got 0"},
      {-1, 1, 1.2, "expected 1 to 999999 nodes, got -1"},
      {2, 99999999, 1.2, "are not both inside the scheme's 2 nodes"},
      {2, 0, 1.2, "a destination other than the source"},
      {2, 1, -1, "measured_penalty must be a number from 0.001 to 1e6"}};
  for (const auto& c : cases) {
    const auto measured = scratch_file("measured.json");
    std::ofstream(measured) << doc(c.nodes, c.dest, c.penalty).dump();
    const auto o = run({commgauge(), "share-fit", "--measured", measured.string()});
    EXPECT_EQ(o.exit_code, 2) << c.says << "\n" << o.err;
    EXPECT_THAT(o.err, HasSubstr(c.says));
  }
  const auto negative = scratch_file("negative.json");
  std::ofstream(negative) << doc(2, 1, -1).dump();
  const auto two = scratch_file("two.sch");
  std::ofstream(two) << "a: 0 -> 1\n";
  const auto e = run({commgauge(), "share", "--scheme", two.string(), "--predict", "--model",
                      "fair", "--evaluate", negative.string()});
  EXPECT_EQ(e.exit_code, 2) << e.out;
  EXPECT_THAT(e.err, HasSubstr("measured_penalty must be a number from 0.001 to 1e6, got -1"));
  const auto params = scratch_file("gige.json");
  std::ofstream(params) << R"({"beta": 1e308, "gamma_o": 0.5, "gamma_i": 0.5})";
  const auto g = run({commgauge(), "share", "--scheme", scheme("fig2-4.sch"), "--predict",
                      "--model", "gige", "--params", params.string()});
  EXPECT_EQ(g.exit_code, 2) << g.out;
  EXPECT_THAT(g.err, HasSubstr("/beta: must be a number in (0, 1e6]"));
}

}  // namespace
}  // namespace commgauge::testing
