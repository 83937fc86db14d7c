#pragma once
// Emulated hosts for lab tests: network namespaces joined by veth pairs, each direction shaped
// with tc tbf. Set up in the constructor, torn down in the destructor (also after failures), and
// stale namespaces of an earlier crashed run are removed first.

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../integration/process.hpp"

/// Lab tests skip loudly when namespaces are not permitted, and fail instead under CI=true.
#define REQUIRE_LAB()                                                                        \
  do {                                                                                       \
    std::string why_;                                                                        \
    if (!::commgauge::testing::lab_permitted(why_)) {                                        \
      if (::commgauge::testing::in_ci()) FAIL() << "lab test cannot run under CI: " << why_; \
      GTEST_SKIP() << "\n*** LAB TEST SKIPPED: " << why_ << " ***\n";                        \
    }                                                                                        \
  } while (0)

namespace commgauge::testing {

/// Runs a shell command; returns its exit status (output to stderr of the test on failure).
int shell(const std::string& command);

/// Whether this process may create network namespaces (root with CAP_NET_ADMIN).
bool lab_permitted(std::string& why_not);

/// Two namespaces "<prefix>a" and "<prefix>b" joined by one veth pair, 10.77.<n>.1/.2, each
/// end shaped with `tbf rate rate_mbit mbit`.
class TwoHostLab {
 public:
  TwoHostLab(const std::string& prefix, int subnet, int rate_mbit);
  ~TwoHostLab();
  TwoHostLab(const TwoHostLab&) = delete;
  TwoHostLab& operator=(const TwoHostLab&) = delete;

  std::string ns_a() const { return prefix_ + "a"; }
  std::string ns_b() const { return prefix_ + "b"; }
  std::string address_b() const { return "10.77." + std::to_string(subnet_) + ".2"; }
  /// The veth MTU as configured (read back from the link).
  int mtu() const;
  bool ok() const { return ok_; }

 private:
  void teardown();
  std::string prefix_;
  int subnet_;
  bool ok_ = false;
};

/// A star: `nodes` namespaces "<prefix>n<i>" (10.79.0.<i+1>), each joined by a veth pair to a
/// Linux bridge in "<prefix>sw" (10.79.0.254), each direction of each node's link shaped with
/// tbf: two flows leaving one node share its outgoing link, as on real NICs.
class StarLab {
 public:
  StarLab(const std::string& prefix, int nodes, int rate_mbit);
  ~StarLab();
  StarLab(const StarLab&) = delete;
  StarLab& operator=(const StarLab&) = delete;
  bool ok() const { return ok_; }
  std::string switch_ns() const { return prefix_ + "sw"; }
  std::string switch_address() const { return "10.79.0.254"; }
  /// --tcp-nodes for commgauge share: "0=NS@ADDRESS,...".
  std::string tcp_nodes() const;

 private:
  void teardown();
  std::string prefix_;
  int nodes_;
  bool ok_ = false;
};

/// An emulated cluster (scripts/cluster-lab): `nodes` namespaces "<prefix>n<i>" with host names
/// "<prefix>-node<i>" behind a bridge in "<prefix>sw", each node's link shaped at `rate_mbit`.
struct ClusterLabOptions {
  std::string prefix;
  int nodes = 2;
  int rate_mbit = 200;
  int subnet = 82;  ///< 10.<subnet>.0.0/24
};

/// Creates the lab, runs `shell_command` (sh -c) inside the switch namespace with
/// $CLUSTER_LAB_MPIRUN (mpirun with every lab option) in its environment, removes the lab.
Outcome run_in_cluster_lab(const ClusterLabOptions& lab, const std::string& shell_command,
                           std::chrono::seconds limit);

}  // namespace commgauge::testing
