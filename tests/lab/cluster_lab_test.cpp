// The emulated cluster (scripts/cluster-lab): Open MPI starts ranks on two emulated nodes, ranks
// on one node share memory and ranks on different nodes cross the node links that tbf shapes;
// the lab removes everything it made, and a stale lab of a crashed run first.

#include <unistd.h>
#include <cmath>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../integration/process.hpp"
#include "lab_network.hpp"

namespace commgauge::testing {
namespace {

const std::string kScript = std::string(COMMGAUGE_SOURCE_DIR) + "/scripts/cluster-lab";
// The profiles' call limit in the lab: under two busy loops one call of a profile between the
// nodes waited more than the default 60 s for its peer in 2 of 6 loaded runs (2026-12-02, CI and
// by hand; the cause, most likely TCP's retransmission back-off while the kernel's packet
// processing is starved, is not established); the other 4 completed. A dead peer still
// ends the job, after 3 minutes.
const std::string kLabCallLimit = " --mpi-timeout 180";

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

  // 1 MiB between the nodes cannot beat the shaper: tbf lets its bucket (4 KB) pass at once,
  // the rest at the rate, and every 1460 bytes of TCP payload at most (MSS at MTU 1500 without
  // options) cost a 1514-byte frame. A lower bound, true however loaded the machine is.
  const std::uint64_t bytes = 1 << 20;
  const auto json = scratch_file(prefix + "-latency.json");
  const double across = one_way_us(prefix, "node", bytes, json.string(), rate_mbit);
  const double wire_us = (static_cast<double>(bytes) * 1514 / 1460 - 4096) * 8 / rate_mbit;
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

// The per-byte cost a class charges a one-way message in its widest eager range (O_s + G + O_r,
// the one-way time's slope), in microseconds per byte.
double one_way_slope_us_per_byte(const nlohmann::json& link_class) {
  const auto& ranges = link_class["link"]["ranges"];
  double widest = -1, slope = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i]["rendezvous"].get<bool>()) continue;
    const double from = ranges[i]["from_bytes"].get<double>();
    const double to = i + 1 < ranges.size() ? ranges[i + 1]["from_bytes"].get<double>() : from;
    if (to - from <= widest) continue;
    widest = to - from;
    slope = ranges[i]["O_s_us_per_byte"].get<double>() + ranges[i]["G_us_per_byte"].get<double>() +
            ranges[i]["O_r_us_per_byte"].get<double>();
  }
  return slope;
}

#ifdef EXAMPLE_RING
// One MPI job of 2 nodes x 2 ranks: `profile` measures intra_node between the two ranks of the
// first node (vader) and inter_node between the nodes (Open MPI's TCP BTL over the shaped links),
// each with its switch at the library's configured eager limit. Then the ring example, traced on
// the same 4 ranks mapped by node (every message crosses a node link), is placed by `simulate`
// from the trace's hosts and charged inter_node per message: exactly what inter_node on every
// link predicts, at least the shaped wire's time per message, and, with intra_node in its place,
// less: by at least 90 % of the wire's time when both classes are trusted. A class the profile
// does not trust (the lab's yielding ranks under load) must say why.
TEST(ClusterLab, OneJobProfilesBothClassesAndATraceAcrossNodesIsChargedInterNode) {
  REQUIRE_LAB();
  const std::string prefix = "cgp" + std::to_string(getpid() % 1000);
  const int rate_mbit = 500;
  const auto profile = scratch_file(prefix + "-profile.json");
  const auto intra_only = scratch_file(prefix + "-intra-only-cluster.json");
  const auto trace = scratch_file(prefix + "-ring.trace");
  const auto sim = scratch_file(prefix + "-sim.json");
  const auto sim_intra = scratch_file(prefix + "-sim-intra.json");
  const auto inter_only = scratch_file(prefix + "-inter-only-cluster.json");
  const auto sim_inter = scratch_file(prefix + "-sim-inter.json");
  const int iterations = 400, bytes = 1024;
  const std::string cg = commgauge();
  const std::string script =
      "set -e; $CLUSTER_LAB_MPIRUN -np 4 --map-by node " + cg + " profile -o " + profile.string() +
      " --max-size 128KiB --timer-trials 100000" + kLabCallLimit + " >/dev/null; " + cg +
      " trace --force -o " + trace.string() + " -- $CLUSTER_LAB_MPIRUN -np 4 --map-by node " +
      EXAMPLE_RING + " " + std::to_string(iterations) + " " + std::to_string(bytes) +
      " 20 >/dev/null";
  const auto o = run_in_cluster_lab({prefix, 2, rate_mbit, 83}, script, 2 * kMeasuringLimit);
  ASSERT_EQ(o.exit_code, 0) << (o.timed_out ? "timed out; " : "") << o.out << o.err;
  EXPECT_TRUE(namespaces_of(prefix).empty()) << "the lab was not removed";

  const auto doc = read_json(profile);
  const auto& intra = doc["link_classes"]["intra_node"];
  const auto& inter = doc["link_classes"]["inter_node"];
  ASSERT_TRUE(intra.is_object() && inter.is_object()) << doc.dump().substr(0, 400);
  EXPECT_EQ(intra["source"]["hosts"],
            nlohmann::json::array({prefix + "-node0", prefix + "-node0"}));
  EXPECT_EQ(inter["source"]["hosts"],
            nlohmann::json::array({prefix + "-node0", prefix + "-node1"}));
  // The truth: the limits the library reports (MPI_T) are Open MPI 4.1's defaults.
  EXPECT_EQ(intra["source"]["context"]["eager_limits"]["vader"], 4096);
  EXPECT_EQ(inter["source"]["context"]["eager_limits"]["tcp"], 65536);
  // Inside a node the lab's ranks yield when idle (cluster-lab), so with the machine busy they
  // lose their cores for time slices: vader's microseconds then come with stalls of milliseconds,
  // and the calibrated set can miss the curves by half (54-67 % rms in 6 of 6 loaded runs,
  // 2026-12-02; 12 % quiet). The profile must then say so rather than pass
  // such numbers off as vader's; a trusted class must have found the switch (the verdict
  // compares the switches with the limit MPI_T reports, which the profile keeps).
  const auto& intra_trust = intra["loggp"]["trust"];
  EXPECT_EQ(intra_trust["library_eager_limit"]["component"], "vader") << intra_trust.dump();
  EXPECT_EQ(intra_trust["library_eager_limit"]["bytes"], 4096) << intra_trust.dump();
  EXPECT_EQ(inter["loggp"]["trust"]["library_eager_limit"]["component"], "tcp");
  EXPECT_EQ(inter["loggp"]["trust"]["library_eager_limit"]["bytes"], 65536);
  if (intra_trust["trusted"].get<bool>()) {
    expect_one_rendezvous_switch_at(intra["loggp"]["switches"], 4096, "intra_node (vader)");
  } else {
    // The verdict says why; the stalls behind it (6 of 6 loaded runs had them) are printed.
    const auto reasons = intra_trust["reasons"].dump();
    EXPECT_TRUE(reasons.find("misses the measured curves") != std::string::npos ||
                reasons.find("eager limit as 4096 B") != std::string::npos)
        << reasons;
    std::printf("note: intra_node (vader) not trusted, its switch not judged: %s\n",
                reasons.c_str());
  }
  // Between the nodes the shaped link's switch is found however the profile's fit went.
  expect_one_rendezvous_switch_at(inter["loggp"]["switches"], 65536, "inter_node (tcp)");
  // The shaper's goodput: R Mbit/s of 1514-byte frames carrying 1448 bytes of TCP payload each
  // (MSS at MTU 1500 with timestamps). Printed for the notes; under load the kernel's packet
  // processing, which is this machine's CPUs, shares them with the load, so it is not asserted.
  const double goodput_mb_s = rate_mbit / 8.0 * 1448 / 1514;
  const double slope = one_way_slope_us_per_byte(inter);
  std::printf("inter_node: one-way slope %.5f us/B = %.1f MB/s (goodput %.1f MB/s, %+.1f %%)\n",
              slope, 1 / slope, goodput_mb_s, 100 * (1 / slope - goodput_mb_s) / goodput_mb_s);

  // The trace's hosts place the ranks: 4 ranks on 2 nodes.
  const auto s = run({cg, "simulate", trace.string(), "--profile", profile.string(), "--model",
                      "loggps", "--json", sim.string()},
                     kMeasuringLimit);
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_NE(s.out.find("4 ranks on 2 nodes"), std::string::npos) << s.out;
  // simulate repeats the profile's warning for a class it was told to charge.
  EXPECT_EQ(
      s.err.find("link class intra_node was measured but is NOT trusted") == std::string::npos,
      intra_trust["trusted"].get<bool>())
      << s.err;
  // The same placement with one class on every link (a cluster file): the prediction in seconds.
  const auto predicted_with_only = [&](const std::string& cls, const std::filesystem::path& cluster,
                                       const std::filesystem::path& json) {
    {
      std::ofstream out(cluster);
      out << R"({"nodes": 2, "cores_per_node": 2, "link_classes": )"
          << R"({"same_node": ")" << cls << R"(", "different_nodes": ")" << cls << R"("}})";
    }
    const auto r = run(
        {cg, "simulate", trace.string(), "--profile", profile.string(), "--cluster",
         cluster.string(), "--placement", "recorded", "--model", "loggps", "--json", json.string()},
        kMeasuringLimit);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return r.exit_code == 0 ? std::optional(read_json(json)["predicted_seconds"].get<double>())
                            : std::nullopt;
  };
  const auto intra_everywhere = predicted_with_only("intra_node", intra_only, sim_intra);
  // Every message of the ring crosses a node link: with inter_node on node too, the prediction
  // is the same to the last bit.
  const auto inter_everywhere = predicted_with_only("inter_node", inter_only, sim_inter);
  ASSERT_TRUE(intra_everywhere && inter_everywhere);
  const double if_intra = *intra_everywhere, if_inter = *inter_everywhere;
  const double predicted = read_json(sim)["predicted_seconds"].get<double>();
  const double measured = read_json(sim)["measured_seconds"].get<double>();
  EXPECT_EQ(predicted, if_inter) << "a message between the nodes was not charged inter_node";
  // Each iteration a rank computes, then waits for its left neighbour's message, sent over a
  // shaped link. Not the wire's time per message: tbf's 4 KB bucket passes a 1 KiB message at
  // once while the average rate stays below the shaper's (2 KiB per node per 40 us iteration,
  // 51 MB/s), and the profile's ping-pong shows it (one-way 13.6-14.0 us at 861-1218 B against
  // 13.3 us at 8 B, where the wire would take 14-20 us more; 2026-12-05). The truth is each
  // class's one-way time near the ring's size as the profile measured it in the rounds its
  // calibrated set was fitted from: the held-out ping-pong cell nearest 1 KiB, with its 95 %
  // interval. A trusted set misses its curves by at most a fifth in rms: it must charge at least
  // 80 % of the interval's lower end per iteration (load only makes the link slower).
  const auto nearest_pingpong = [&](const nlohmann::json& cls) {
    nlohmann::json best;
    double distance = 1e300;
    for (const auto& p : cls["heldout"]["points"]) {
      if (p["kind"] != "pingpong") continue;
      const double d = std::abs(std::log(p["bytes"].get<double>() / bytes));
      if (d < distance) distance = d, best = p;
    }
    EXPECT_TRUE(best.is_object()) << "no held-out ping-pong: " << cls["heldout"].dump();
    return best;
  };
  const auto inter_cell = nearest_pingpong(inter), intra_cell = nearest_pingpong(intra);
  const double inter_low_us = inter_cell["ci95_us"][0].get<double>();
  const double intra_high_us = intra_cell["ci95_us"][1].get<double>();
  const double compute_s = iterations * 20e-6;
  EXPECT_GE(predicted, compute_s + 0.8 * iterations * inter_low_us * 1e-6)
      << "inter_node charges less than its measured one-way time: " << inter_cell.dump();
  // Replaced by a trusted intra_node, the prediction drops; by 80 % of the least difference of
  // the two classes' measured one-way times at least when inter_node is trusted too. An
  // untrusted class may charge anything: a quiet run of 2026-12-02 whose inter_node missed its
  // curves by 22 % rms (L fitted at -3.8 us, reported 0) charged 13.5 us per message.
  if (intra_trust["trusted"].get<bool>()) {
    EXPECT_GT(predicted, if_intra) << "intra_node charges more than inter_node";
  }
  if (intra_trust["trusted"].get<bool>() && inter["loggp"]["trust"]["trusted"].get<bool>()) {
    EXPECT_GE(predicted - if_intra, 0.8 * iterations * (inter_low_us - intra_high_us) * 1e-6)
        << "inter_node was not charged per message: " << predicted << " s against " << if_intra
        << " s with intra_node between the nodes; measured " << inter_cell.dump() << " and "
        << intra_cell.dump();
  }
  const double wire_s = iterations * (bytes * 8.0 / (rate_mbit * 1e6)) * 1514 / 1460;
  std::printf(
      "ring %d x %d B on 2 nodes x 2 ranks: measured %.4f s, loggps %.4f s (%+.1f %%), "
      "with intra_node between nodes %.4f s; wire %.4f s; one-way at %g B inter %.2f us [%.2f, "
      "%.2f], at %g B intra %.2f us [%.2f, %.2f]\n",
      iterations, bytes, measured, predicted, 100 * (predicted - measured) / measured, if_intra,
      wire_s, inter_cell["bytes"].get<double>(), inter_cell["measured_us"].get<double>(),
      inter_low_us, inter_cell["ci95_us"][1].get<double>(), intra_cell["bytes"].get<double>(),
      intra_cell["measured_us"].get<double>(), intra_cell["ci95_us"][0].get<double>(),
      intra_high_us);
}
#endif  // EXAMPLE_RING

// A changed TCP eager limit (--mca btl_tcp_eager_limit) is what profile finds between the nodes,
// and what a program's sends then do: the pipeline example's blocks of 48 KiB, eager under the
// default limit (64 KiB), are rendezvous under 32 KiB, so each send waits until the slower last
// stage posts its receive (LogGPS's synchronisation). The truth comes from the trace: rank 0's
// waits add up to at least rank 1's time between its receives less rank 0's time between its
// sends. loggps, with the profile's switch, must charge that; loggp, which charges every send as
// eager, must miss it.
TEST(ClusterLab, AChangedTcpEagerLimitIsFoundAndSendsAboveItWait) {
  REQUIRE_LAB();
  const std::string prefix = "cge" + std::to_string(getpid() % 1000);
  const auto profile = scratch_file(prefix + "-profile.json");
  const auto trace = scratch_file(prefix + "-pipeline.trace");
  const auto sim = scratch_file(prefix + "-pipeline-sim.json");
  const std::string mpirun =
      "$CLUSTER_LAB_MPIRUN -np 2 --map-by node --mca btl_tcp_eager_limit 32768 ";
  std::string script = "set -e; " + mpirun + commgauge() + " profile -o " + profile.string() +
                       " --max-size 256KiB --timer-trials 100000" + kLabCallLimit;
#ifdef EXAMPLE_PIPELINE
  script += "; " + commgauge() + " trace --force -o " + trace.string() + " -- " + mpirun +
            EXAMPLE_PIPELINE + " 40 49152 1000 4000 >/dev/null";
#endif
  const auto o = run_in_cluster_lab({prefix, 2, 500, 84}, script, 2 * kMeasuringLimit);
  ASSERT_EQ(o.exit_code, 0) << (o.timed_out ? "timed out; " : "") << o.out << o.err;
  EXPECT_TRUE(namespaces_of(prefix).empty()) << "the lab was not removed";
  const auto doc = read_json(profile);
  ASSERT_FALSE(doc["link_classes"].contains("intra_node")) << "one rank per node";
  const auto& inter = doc["link_classes"]["inter_node"];
  EXPECT_EQ(inter["source"]["context"]["eager_limits"]["tcp"], 32768);
  expect_one_rendezvous_switch_at(inter["loggp"]["switches"], 32768,
                                  "inter_node (tcp, btl_tcp_eager_limit 32768)");
#ifdef EXAMPLE_PIPELINE
  const auto s = run({commgauge(), "simulate", trace.string(), "--profile", profile.string(),
                      "--model", "all", "--json", sim.string()},
                     kMeasuringLimit);
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  const double bound_s =
      gaps_between_calls_s(trace, 1, "MPI_Recv") - gaps_between_calls_s(trace, 0, "MPI_Send");
  double measured_s = 0, loggp_s = 0, loggps_s = 0;  // rank 0's time inside MPI
  const auto result = read_json(sim);
  for (const auto& m : result["models"]) {
    const auto& rank0 = m["ranks"][0];
    measured_s = rank0["measured_in_mpi_seconds"].get<double>();
    if (m["model"] == "loggp") loggp_s = rank0["predicted_in_mpi_seconds"].get<double>();
    if (m["model"] == "loggps") loggps_s = rank0["predicted_in_mpi_seconds"].get<double>();
  }
  std::printf(
      "pipeline 40 x 48 KiB between nodes, rank 0 inside MPI: measured %.1f ms, loggp %.1f ms, "
      "loggps %.1f ms; rank 1 between receives less rank 0 between sends %.1f ms\n",
      measured_s * 1e3, loggp_s * 1e3, loggps_s * 1e3, bound_s * 1e3);
  ASSERT_GT(bound_s, 0) << "the last stage must compute longer than the first";
  EXPECT_GT(measured_s, 0.99 * bound_s);
  EXPECT_GT(loggps_s, 0.99 * bound_s);
  // loggp's sends cost only their overhead, which under load the profile reads up to 2.8 ms per
  // 48 KiB (quiet: 0): it must still fall short of loggps by at least half the wait.
  EXPECT_GT(loggps_s - loggp_s, 0.5 * bound_s);
  std::filesystem::remove_all(trace);
  std::filesystem::remove(sim);
#endif
  std::filesystem::remove(profile);
}

TEST(ClusterLab, BadOptionsAreRefusedBeforeAnythingIsMade) {
  REQUIRE_LAB();
  // Its own prefix: the lab's default (cgl) is a prefix of other lab tests' namespaces (cglab...),
  // which a run beside this one may hold (the CI failure of 8ad44b0 checked "cgl" machine-wide).
  const std::string prefix = "cgb" + std::to_string(getpid() % 1000);
  ASSERT_TRUE(namespaces_of(prefix).empty()) << "stale namespaces of " << prefix;
  for (const auto& args : std::vector<std::vector<std::string>>{{"up", "--nodes", "5"},
                                                                {"up", "--rate", "0"},
                                                                {"up", "--nice", "-21"},
                                                                {"up", "--subnet", "200"},
                                                                {"run", "--nodes", "2"},
                                                                {"sideways"}}) {
    std::vector<std::string> argv = {kScript};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--prefix", prefix});
    const auto o = run(argv);
    EXPECT_EQ(o.exit_code, 2) << args[0] << " " << (args.size() > 1 ? args[1] : "") << o.err;
  }
  const auto bad_prefix = run({kScript, "up", "--prefix", "Bad!"});
  EXPECT_EQ(bad_prefix.exit_code, 2) << bad_prefix.err;
  EXPECT_TRUE(namespaces_of(prefix).empty());
  EXPECT_TRUE(namespaces_of("Bad!").empty());
  EXPECT_FALSE(std::filesystem::exists("/run/commgauge-cluster-lab/" + prefix));
}

}  // namespace
}  // namespace commgauge::testing
