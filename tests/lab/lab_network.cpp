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

}  // namespace commgauge::testing
