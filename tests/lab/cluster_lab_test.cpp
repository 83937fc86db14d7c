// The emulated cluster (scripts/cluster-lab): Open MPI starts ranks on two emulated nodes, ranks
// on one node share memory and ranks on different nodes cross the node links that tbf shapes;
// the lab removes everything it made, and a stale lab of a crashed run first.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../integration/process.hpp"
#include "lab_network.hpp"

namespace commgauge::testing {
namespace {

const std::string kScript = std::string(COMMGAUGE_SOURCE_DIR) + "/scripts/cluster-lab";

// Namespaces whose name starts with `prefix`.
std::vector<std::string> namespaces_of(const std::string& prefix) {
  const auto o = run({"ip", "netns", "list"});
  std::vector<std::string> out;
  std::istringstream in(o.out);
  std::string name, rest;
  while (in >> name) {
    std::getline(in, rest);
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

// One-way time of a blocking ping-pong of `bytes` between the two ranks of `placement`
// (--map-by node: one rank per node; slot: both on the first node), median over the trials.
double one_way_us(const std::string& prefix, const std::string& placement, std::uint64_t bytes,
                  const std::string& json, int rate_mbit) {
  const std::string latency = commgauge() + " latency --sizes " + std::to_string(bytes) +
                              " --trials 20 --timer-trials 1000 --json " + json;
  const auto o = run_in_cluster_lab(
      {prefix, 2, rate_mbit, 82}, "$CLUSTER_LAB_MPIRUN -np 2 --map-by " + placement + " " + latency,
      kMeasuringLimit);
  EXPECT_EQ(o.exit_code, 0) << (o.timed_out ? "timed out; " : "") << o.out << o.err;
  std::ifstream in(json);
  if (!in) return -1;
  const auto j = nlohmann::json::parse(in);
  return j["results"][0]["stats_us"]["median"].get<double>();
}

TEST(ClusterLab, RanksOnTwoNodesShareMemoryInsideAndCrossTheShapedLinkBetween) {
  REQUIRE_LAB();
  const std::string prefix = "cgt" + std::to_string(getpid() % 1000);
  const int rate_mbit = 200;
  // A stale lab of a crashed run (a namespace of the same prefix) is removed first.
  ASSERT_EQ(shell("ip netns add " + prefix + "n0"), 0);

  // Four ranks, mapped by node: two on each emulated node, each node with its own host name.
  const auto hosts =
      run_in_cluster_lab({prefix, 2, rate_mbit, 82},
                         "$CLUSTER_LAB_MPIRUN -np 4 --map-by node hostname", kMeasuringLimit);
  ASSERT_EQ(hosts.exit_code, 0) << hosts.out << hosts.err;
  std::map<std::string, int> per_host;
  std::istringstream lines(hosts.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) ++per_host[line];
  EXPECT_EQ(per_host, (std::map<std::string, int>{{prefix + "-node0", 2}, {prefix + "-node1", 2}}))
      << hosts.out;
  EXPECT_TRUE(namespaces_of(prefix).empty()) << "the lab was not removed";

  // 1 MiB between the nodes cannot beat the shaper: tbf lets its bucket (64 KiB) pass at once,
  // the rest at the rate, and every 1460 bytes of TCP payload at most (MSS at MTU 1500 without
  // options) cost a 1514-byte frame. A lower bound, true however loaded the machine is.
  const std::uint64_t bytes = 1 << 20;
  const auto json = scratch_file(prefix + "-latency.json");
  const double across = one_way_us(prefix, "node", bytes, json.string(), rate_mbit);
  const double wire_us = (static_cast<double>(bytes) * 1514 / 1460 - 65536) * 8 / rate_mbit;
  EXPECT_GE(across, wire_us) << "ranks on different nodes did not cross the shaped link";
  // Inside a node the same message goes through shared memory, far faster than any link here
  // (0.12-0.19 ms quiet, 2.6 ms with both cores busy, against 41 ms).
  const double inside = one_way_us(prefix, "slot", bytes, json.string(), rate_mbit);
  EXPECT_GT(inside, 0);
  EXPECT_LT(inside, wire_us / 4) << "ranks on one node did not share memory";
  std::printf("1 MiB one-way: %.0f us between nodes (shaper's bound %.0f us), %.0f us inside one\n",
              across, wire_us, inside);
  EXPECT_TRUE(namespaces_of(prefix).empty());
  EXPECT_FALSE(std::filesystem::exists("/etc/netns/" + prefix + "n0"));
  std::filesystem::remove(json);
}

TEST(ClusterLab, BadOptionsAreRefusedBeforeAnythingIsMade) {
  REQUIRE_LAB();
  for (const auto& args : std::vector<std::vector<std::string>>{{"up", "--nodes", "5"},
                                                                {"up", "--rate", "0"},
                                                                {"up", "--prefix", "Bad!"},
                                                                {"run", "--nodes", "2"},
                                                                {"sideways"}}) {
    std::vector<std::string> argv = {kScript};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto o = run(argv);
    EXPECT_EQ(o.exit_code, 2) << args[0] << " " << (args.size() > 1 ? args[1] : "") << o.err;
  }
  EXPECT_TRUE(namespaces_of("cgl").empty());
}

}  // namespace
}  // namespace commgauge::testing
