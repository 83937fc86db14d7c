#pragma once
// Emulated hosts for lab tests: network namespaces joined by veth pairs, each direction shaped
// with tc tbf. Set up in the constructor, torn down in the destructor (also after failures), and
// stale namespaces of an earlier crashed run are removed first.

#include <string>
#include <vector>

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

}  // namespace commgauge::testing
