#include "measure/share.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "stats/descriptive.hpp"
#include "stats/median_ci.hpp"

namespace commgauge::measure {

void ShareOptions::validate() const {
  if (iterations < 1) throw InputError("iterations", "must be at least 1");
}

std::vector<int> node_of_rank(const std::vector<std::string>& hosts, const ShareOptions& o) {
  if (!o.rank_nodes.empty()) {
    if (o.rank_nodes.size() < hosts.size()) {
      throw InputError(
          "nodes", fmt::format("maps {} ranks, the run has {}", o.rank_nodes.size(), hosts.size()));
    }
    return {o.rank_nodes.begin(), o.rank_nodes.begin() + static_cast<std::ptrdiff_t>(hosts.size())};
  }
  std::vector<int> out;
  std::map<std::string, int> index;
  for (const auto& h : hosts) {
    const auto it = index.emplace(h, static_cast<int>(index.size())).first;
    out.push_back(it->second);
  }
  return out;
}

TaskPlan plan_tasks(const model::Scheme& s, const std::vector<int>& nodes) {
  TaskPlan p;
  p.node_of_rank = nodes;
  std::map<int, std::vector<int>> free;  // ranks of each node not yet given a task
  for (std::size_t r = 0; r < nodes.size(); ++r)
    free[nodes[r]].push_back(static_cast<int>(r));
  std::map<int, int> needed;  // tasks per node
  for (const auto& c : s.communications) {
    ++needed[c.source];
    ++p.incoming[c.destination];
  }
  for (const auto& [node, count] : p.incoming)
    ++needed[node];
  for (const auto& [node, count] : needed)
    p.ranks_needed += count;
  std::string shortfall;
  for (const auto& [node, count] : needed) {
    const std::size_t have = free.count(node) ? free[node].size() : 0;
    if (have < static_cast<std::size_t>(count)) {
      shortfall += fmt::format("{}node {} needs {} ({} sender(s){}) and has {}",
                               shortfall.empty() ? "" : "; ", node, count,
                               count - (p.incoming.count(node) ? 1 : 0),
                               p.incoming.count(node) ? " + 1 receiver" : "", have);
    }
  }
  if (!shortfall.empty()) {
    throw InputError(fmt::format("{} needs {} ranks, one per task, on nodes 0-{}: {}", s.origin,
                                 p.ranks_needed, s.nodes - 1, shortfall));
  }
  for (const auto& c : s.communications) {
    p.sender_rank.push_back(free[c.source].front());
    free[c.source].erase(free[c.source].begin());
  }
  for (const auto& [node, count] : p.incoming) {
    p.receiver_rank[node] = free[node].front();
    free[node].erase(free[node].begin());
  }
  return p;
}

namespace {

// One round of a set of communications (indices) on every member: senders time their send.
// Returns this member's time (seconds) for the communication it sends, or -1.
std::vector<double> round(net::Group& g, const model::Scheme& s, const TaskPlan& p,
                          const std::vector<std::size_t>& which) {
  std::vector<double> mine(s.communications.size(), 0.0);
  std::map<int, int> incoming;
  for (std::size_t i : which)
    ++incoming[s.communications[i].destination];
  g.barrier();
  for (std::size_t i : which) {
    if (p.sender_rank[i] != g.rank()) continue;
    const auto& c = s.communications[i];
    const double t0 = g.now_us();
    g.send(p.receiver_rank.at(c.destination), c.bytes);
    mine[i] = (g.now_us() - t0) / 1e6;
  }
  for (const auto& entry : incoming) {
    // Not a structured binding: clang 14 (the sanitizer build's) cannot capture one in a lambda.
    const auto node = entry.first;
    const int count = entry.second;
    if (p.receiver_rank.at(node) != g.rank()) continue;
    // One size per destination node (checked in run_share): any source can come first.
    const std::uint64_t bytes = [&] {
      for (std::size_t i : which) {
        if (s.communications[i].destination == node) return s.communications[i].bytes;
      }
      return std::uint64_t{0};
    }();
    for (int k = 0; k < count; ++k)
      g.recv_any(bytes);
  }
  return mine;
}

}  // namespace

Penalty penalty_of(std::span<const double> shared_s, std::span<const double> alone_s) {
  const stats::MedianInterval shared = stats::median_interval(shared_s);
  const stats::MedianInterval alone = stats::median_interval(alone_s);
  Penalty p;
  p.value = shared.median / alone.median;
  p.lower = shared.lower / alone.upper;
  p.upper = shared.upper / alone.lower;
  p.confidence = std::max(0.0, shared.confidence + alone.confidence - 1);
  return p;
}

std::optional<ShareResult> run_share(net::Group& g, const model::Scheme& s, const ShareOptions& o) {
  o.validate();
  // Receivers take any source, so all messages into one node must have one size.
  std::map<int, std::uint64_t> size_into;
  for (const auto& c : s.communications) {
    auto [it, fresh] = size_into.emplace(c.destination, c.bytes);
    if (!fresh && it->second != c.bytes) {
      throw InputError(s.origin, fmt::format("communications into node {} have different sizes ({} "
                                             "and {} bytes): the receiver takes any source, so "
                                             "they must be equal",
                                             c.destination, it->second, c.bytes));
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int> nodes = node_of_rank(g.hosts(), o);
  const TaskPlan plan = plan_tasks(s, nodes);
  const std::size_t n = s.communications.size();

  // T_ref: each size alone between two nodes (the first communication of that size). The
  // reference rounds and the shared round alternate within each iteration, and which comes first
  // alternates too, so drift and bursts of load fall on both alike.
  std::map<std::uint64_t, std::size_t> reference;
  for (std::size_t i = 0; i < n; ++i)
    reference.emplace(s.communications[i].bytes, i);
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i)
    all[i] = i;
  for (const auto& [bytes, i] : reference)
    round(g, s, plan, {i});  // warm-up of this pair
  for (std::uint32_t w = 0; w < o.warmup; ++w)
    round(g, s, plan, all);
  // Per iteration: the reference time of every size, then the scheme's n times.
  std::vector<double> slots;
  const std::size_t per_iteration = reference.size() + n;
  slots.reserve(per_iteration * o.iterations);
  for (std::uint32_t it = 0; it < o.iterations; ++it) {
    std::vector<double> alone, shared;
    if (it % 2 == 1) shared = round(g, s, plan, all);
    for (const auto& [bytes, i] : reference)
      alone.push_back(round(g, s, plan, {i})[i]);
    if (it % 2 == 0) shared = round(g, s, plan, all);
    slots.insert(slots.end(), alone.begin(), alone.end());
    slots.insert(slots.end(), shared.begin(), shared.end());
  }
  const auto gathered = g.gather(slots);
  if (g.rank() != 0) return std::nullopt;
  // Each slot was filled by exactly one member (the sender); the others hold 0.
  std::vector<double> sum(slots.size(), 0.0);
  for (const auto& member : gathered) {
    for (std::size_t k = 0; k < member.size(); ++k)
      sum[k] += member[k];
  }
  ShareResult r;
  std::size_t size_index = 0;
  for (const auto& [bytes, i] : reference) {
    auto& t = r.t_ref_times_s[bytes];
    for (std::uint32_t it = 0; it < o.iterations; ++it)
      t.push_back(sum[it * per_iteration + size_index]);
    r.t_ref_s[bytes] = stats::median(t);
    ++size_index;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = s.communications[i];
    CommunicationResult cr;
    cr.name = c.name;
    cr.source_node = c.source;
    cr.dest_node = c.destination;
    cr.bytes = c.bytes;
    for (std::uint32_t it = 0; it < o.iterations; ++it)
      cr.times_s.push_back(sum[it * per_iteration + reference.size() + i]);
    const auto st = stats::summarize(cr.times_s);
    cr.median_s = st.median;
    cr.min_s = st.min;
    cr.max_s = st.max;
    cr.t_ref_s = r.t_ref_s[c.bytes];
    cr.penalty = penalty_of(cr.times_s, r.t_ref_times_s[c.bytes]);
    cr.penalty_min = cr.min_s / cr.t_ref_s;
    cr.penalty_max = cr.max_s / cr.t_ref_s;
    r.communications.push_back(cr);
  }
  r.emulated_nodes = o.emulated;
  std::set<std::string> task_hosts;
  for (int rank = 0; rank < g.size(); ++rank) {
    if (nodes[static_cast<std::size_t>(rank)] >= 0)
      task_hosts.insert(g.hosts()[static_cast<std::size_t>(rank)]);
  }
  r.one_host = task_hosts.size() == 1;
  r.ranks = g.size();
  r.ranks_used = plan.ranks_needed;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace commgauge::measure
