#pragma once
// The bandwidth-sharing benchmark of seed 003 §IV-B: one sender task per communication on its
// source node, one receiver task per destination node (receiving with MPI_ANY_SOURCE); warm-up
// communications, a barrier, then every sender times its blocking send; repeated. T_ref is the
// same size sent alone between two nodes; the penalty is P_i = T_i / T_ref.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/scheme.hpp"
#include "net/group.hpp"

namespace commgauge::measure {

struct ShareOptions {
  std::uint32_t iterations = 5;
  std::uint32_t warmup = 1;
  /// Node of every rank when nodes are emulated on one host; empty: ranks are grouped into
  /// nodes by host name.
  std::vector<int> rank_nodes;
  /// The nodes are emulated on one host without real links between them: functional only.
  bool emulated = false;
  void validate() const;
};

/// Which rank plays which task.
struct TaskPlan {
  std::vector<int> node_of_rank;
  std::vector<int> sender_rank;      ///< per communication
  std::map<int, int> receiver_rank;  ///< per destination node
  std::map<int, int> incoming;       ///< messages each receiver task takes per iteration
  int ranks_needed = 0;
};

/// Places the tasks on ranks of their nodes. Throws InputError saying how many ranks are needed
/// (in all and per node) when there are not enough.
TaskPlan plan_tasks(const model::Scheme& s, const std::vector<int>& node_of_rank);

/// Node of every rank: by host name (first appearance order) or as emulated.
std::vector<int> node_of_rank(const std::vector<std::string>& hosts, const ShareOptions& o);

/// P = median(shared) / median(alone), seed 003 eq. (1) with medians. Its interval divides the
/// ends of the two medians' order-statistic intervals crosswise (lower / upper, upper / lower),
/// so it covers P with at least the sum of both coverages less one (Bonferroni).
struct Penalty {
  double value = 0;
  double lower = 0, upper = 0;
  double confidence = 0;  ///< the coverage guaranteed, 0 with too few iterations
};
Penalty penalty_of(std::span<const double> shared_s, std::span<const double> alone_s);

struct CommunicationResult {
  std::string name;
  int source_node = 0;
  int dest_node = 0;
  std::uint64_t bytes = 0;
  std::vector<double> times_s;  ///< every iteration
  double median_s = 0, min_s = 0, max_s = 0;
  double t_ref_s = 0;
  Penalty penalty;                          ///< median time / T_ref, with its interval
  double penalty_min = 0, penalty_max = 0;  ///< the fastest and slowest iteration / T_ref
};

struct ShareResult {
  std::vector<CommunicationResult> communications;
  std::map<std::uint64_t, double> t_ref_s;                     ///< per size: median time alone
  std::map<std::uint64_t, std::vector<double>> t_ref_times_s;  ///< per size: every iteration
  bool emulated_nodes = false;  ///< nodes emulated on one host: functional only
  bool one_host = false;        ///< every rank on one host (nothing crossed a NIC)
  int ranks = 0;
  int ranks_used = 0;
  double seconds = 0;
};

/// Runs the benchmark on every member of the group; the result is on member 0.
std::optional<ShareResult> run_share(net::Group& group, const model::Scheme& s,
                                     const ShareOptions& o);

}  // namespace commgauge::measure
