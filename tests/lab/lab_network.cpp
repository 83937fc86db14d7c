#include "lab_network.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace commgauge::testing {

int shell(const std::string& command) {
  const int status = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool lab_permitted(std::string& why_not) {
  if (geteuid() != 0) {
    why_not = "not running as root";
    return false;
  }
  const std::string probe = fmt::format("cgprobe{}", getpid());
  if (shell("ip netns add " + probe) != 0) {
    why_not = "'ip netns add' is not permitted here";
    return false;
  }
  shell("ip netns del " + probe);
  if (shell("command -v tc") != 0) {
    why_not = "tc (iproute2) is not installed";
    return false;
  }
  return true;
}

TwoHostLab::TwoHostLab(const std::string& prefix, int subnet, int rate_mbit)
    : prefix_(prefix), subnet_(subnet) {
  teardown();  // what an earlier crashed run may have left
  const std::string a = ns_a(), b = ns_b();
  const std::string va = prefix_ + "va", vb = prefix_ + "vb";
  const std::string net = fmt::format("10.77.{}.", subnet_);
  // tbf: a small bucket (4 kB) so that the rate holds from the first packets on; GSO packets
  // larger than the bucket are segmented by tbf.
  const std::string tbf = fmt::format("tbf rate {}mbit burst 4kb latency 100ms", rate_mbit);
  const std::vector<std::string> steps = {
      "ip netns add " + a,
      "ip netns add " + b,
      fmt::format("ip link add {} type veth peer name {}", va, vb),
      fmt::format("ip link set {} netns {}", va, a),
      fmt::format("ip link set {} netns {}", vb, b),
      fmt::format("ip -n {} addr add {}1/24 dev {}", a, net, va),
      fmt::format("ip -n {} addr add {}2/24 dev {}", b, net, vb),
      fmt::format("ip -n {} link set {} up", a, va),
      fmt::format("ip -n {} link set {} up", b, vb),
      fmt::format("ip -n {} link set lo up", a),
      fmt::format("ip -n {} link set lo up", b),
      fmt::format("ip netns exec {} tc qdisc add dev {} root {}", a, va, tbf),
      fmt::format("ip netns exec {} tc qdisc add dev {} root {}", b, vb, tbf)};
  for (const auto& step : steps) {
    if (shell(step) != 0) {
      std::fprintf(stderr, "lab set-up failed at: %s\n", step.c_str());
      teardown();
      return;
    }
  }
  ok_ = true;
}

int TwoHostLab::mtu() const {
  const std::string cmd = fmt::format("ip -n {} -o link show {}va", ns_a(), prefix_);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return 1500;
  char line[512] = {};
  const bool got = fgets(line, sizeof line, p) != nullptr;
  pclose(p);
  if (!got) return 1500;
  const char* m = std::strstr(line, " mtu ");
  return m ? std::atoi(m + 5) : 1500;
}

void TwoHostLab::teardown() {
  // Deleting a namespace deletes the veth end inside it, and with it the pair.
  shell("ip netns del " + ns_a());
  shell("ip netns del " + ns_b());
}

TwoHostLab::~TwoHostLab() {
  teardown();
}

StarLab::StarLab(const std::string& prefix, int nodes, int rate_mbit)
    : prefix_(prefix), nodes_(nodes) {
  teardown();
  const std::string sw = switch_ns();
  const std::string tbf = fmt::format("tbf rate {}mbit burst 4kb latency 100ms", rate_mbit);
  std::vector<std::string> steps = {
      "ip netns add " + sw, fmt::format("ip -n {} link add br0 type bridge", sw),
      fmt::format("ip -n {} link set br0 up", sw),
      fmt::format("ip -n {} addr add {}/24 dev br0", sw, switch_address()),
      fmt::format("ip -n {} link set lo up", sw)};
  for (int i = 0; i < nodes; ++i) {
    const std::string ns = fmt::format("{}n{}", prefix_, i);
    const std::string a = fmt::format("{}a{}", prefix_, i), b = fmt::format("{}b{}", prefix_, i);
    steps.insert(
        steps.end(),
        {"ip netns add " + ns, fmt::format("ip link add {} type veth peer name {}", a, b),
         fmt::format("ip link set {} netns {}", a, ns),
         fmt::format("ip link set {} netns {}", b, sw),
         fmt::format("ip -n {} addr add 10.79.0.{}/24 dev {}", ns, i + 1, a),
         fmt::format("ip -n {} link set {} up", ns, a), fmt::format("ip -n {} link set lo up", ns),
         fmt::format("ip -n {} link set {} master br0", sw, b),
         fmt::format("ip -n {} link set {} up", sw, b),
         // The node's outgoing link (its egress) and incoming link (the switch's egress).
         fmt::format("ip netns exec {} tc qdisc add dev {} root {}", ns, a, tbf),
         fmt::format("ip netns exec {} tc qdisc add dev {} root {}", sw, b, tbf)});
  }
  for (const auto& step : steps) {
    if (shell(step) != 0) {
      std::fprintf(stderr, "lab set-up failed at: %s\n", step.c_str());
      teardown();
      return;
    }
  }
  ok_ = true;
}

std::string StarLab::tcp_nodes() const {
  std::string out;
  for (int i = 0; i < nodes_; ++i) {
    out += fmt::format("{}{}={}n{}@10.79.0.{}", i ? "," : "", i, prefix_, i, i + 1);
  }
  return out;
}

void StarLab::teardown() {
  for (int i = 0; i < nodes_; ++i)
    shell(fmt::format("ip netns del {}n{}", prefix_, i));
  shell("ip netns del " + switch_ns());
}

StarLab::~StarLab() {
  teardown();
}

Outcome run_in_cluster_lab(const ClusterLabOptions& lab, const std::string& shell_command,
                           std::chrono::seconds limit) {
  const std::string script = std::string(COMMGAUGE_SOURCE_DIR) + "/scripts/cluster-lab";
  Outcome o = run({script, "run", "--nodes", std::to_string(lab.nodes), "--rate",
                   std::to_string(lab.rate_mbit), "--prefix", lab.prefix, "--subnet",
                   std::to_string(lab.subnet), "--", "sh", "-c", shell_command},
                  limit);
  // A run killed at the limit (SIGKILL) cannot remove its lab; its ranks would go on loading
  // the machine for the tests after it. Removed here whatever happened.
  run({script, "down", "--prefix", lab.prefix});
  return o;
}

}  // namespace commgauge::testing
