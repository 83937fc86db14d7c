#include "sim/cluster.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/input_file.hpp"

namespace commgauge::sim {

namespace {

std::uint32_t positive_field(const nlohmann::json& doc, const char* key,
                             const std::string& origin) {
  if (!doc.contains(key)) throw InputError(origin, fmt::format("missing \"{}\"", key));
  const auto& v = doc[key];
  constexpr std::int64_t kMost = std::int64_t{1} << 31;
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > kMost)
    throw InputError(origin, fmt::format("\"{}\" must be a positive integer, at most {}; got {}",
                                         key, kMost, v.dump()));
  return v.get<std::uint32_t>();
}

}  // namespace

Cluster cluster_from_json(const nlohmann::json& doc, const std::string& origin) {
  if (!doc.is_object()) throw InputError(origin, "expected a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (key != "nodes" && key != "cores_per_node" && key != "link_classes" && key != "description")
      throw InputError(origin, fmt::format("unknown field \"{}\" (expected nodes, cores_per_node, "
                                           "link_classes, description)",
                                           key));
  }
  Cluster c;
  c.origin = origin;
  c.nodes = positive_field(doc, "nodes", origin);
  c.cores_per_node = positive_field(doc, "cores_per_node", origin);
  if (doc.contains("link_classes")) {
    const auto& lc = doc["link_classes"];
    if (!lc.is_object()) throw InputError(origin, "\"link_classes\" must be an object");
    for (const auto& [key, value] : lc.items()) {
      if (!value.is_string())
        throw InputError(origin, fmt::format("link_classes.{} must be a profile class name", key));
      if (key == "same_node")
        c.same_node_class = value.get<std::string>();
      else if (key == "different_nodes")
        c.different_nodes_class = value.get<std::string>();
      else
        throw InputError(origin, fmt::format("link_classes: unknown key \"{}\" (expected "
                                             "same_node, different_nodes)",
                                             key));
    }
  }
  return c;
}

std::vector<std::uint32_t> recorded_placement(const nlohmann::json& index, std::uint32_t ranks) {
  std::vector<std::uint32_t> nodes(ranks, 0);
  if (!index.contains("placement") || !index["placement"].is_array()) return nodes;
  const auto& p = index["placement"];
  for (std::uint32_t r = 0; r < ranks && r < p.size(); ++r)
    if (p[r].is_number_unsigned()) nodes[r] = p[r].get<std::uint32_t>();
  return nodes;
}

Cluster cluster_of_placement(const std::vector<std::uint32_t>& nodes) {
  Cluster c;
  c.origin = "trace";
  std::uint32_t max_node = 0;
  for (auto n : nodes)
    max_node = std::max(max_node, n);
  c.nodes = max_node + 1;
  std::vector<std::uint32_t> per_node(c.nodes, 0);
  for (auto n : nodes)
    ++per_node[n];
  c.cores_per_node =
      std::max<std::uint32_t>(1, *std::max_element(per_node.begin(), per_node.end()));
  return c;
}

std::vector<std::uint32_t> place_ranks(const std::string& spec, std::uint32_t ranks,
                                       const Cluster& cluster,
                                       const std::vector<std::uint32_t>& recorded) {
  if (spec == "recorded") {
    // The trace's hosts as they are: they must exist in the cluster and hold its ranks (a
    // 1-core node got 2 ranks; a 2-node cluster was said to meet a trace of "3 nodes" of 8).
    const std::uint32_t used =
        recorded.empty() ? 0 : *std::max_element(recorded.begin(), recorded.end()) + 1;
    if (used > cluster.nodes)
      throw InputError("placement recorded",
                       fmt::format("the trace uses {} nodes, the cluster ({}) has {}", used,
                                   cluster.origin, cluster.nodes));
    std::vector<std::uint32_t> per_node(cluster.nodes, 0);
    for (auto n : recorded) {
      if (++per_node[n] > cluster.cores_per_node)
        throw InputError("placement recorded",
                         fmt::format("the trace placed more than {} ranks on its node {}, the "
                                     "cores of a node of the cluster ({})",
                                     cluster.cores_per_node, n, cluster.origin));
    }
    return recorded;
  }
  const std::uint64_t slots = std::uint64_t{cluster.nodes} * cluster.cores_per_node;
  const bool generated = spec == "rrn" || spec == "rrp" || spec.rfind("random:", 0) == 0;
  if (generated && ranks > slots) {
    throw InputError("placement " + spec,
                     fmt::format("{} ranks do not fit on {} nodes x {} cores", ranks, cluster.nodes,
                                 cluster.cores_per_node));
  }
  std::vector<std::uint32_t> nodes(ranks);
  if (spec == "rrn") {  // seed 003: round robin over nodes
    for (std::uint32_t r = 0; r < ranks; ++r)
      nodes[r] = r % cluster.nodes;
    return nodes;
  }
  if (spec == "rrp") {  // seed 003: fill a node's processors first
    for (std::uint32_t r = 0; r < ranks; ++r)
      nodes[r] = r / cluster.cores_per_node;
    return nodes;
  }
  if (spec.rfind("random:", 0) == 0) {
    std::uint64_t seed = 0;
    try {
      std::size_t used = 0;
      // stoull reads "-1" as 2^64 - 1: a seed is written without a sign.
      if (spec.size() == 7 || !std::isdigit(static_cast<unsigned char>(spec[7])))
        throw std::invalid_argument("sign");
      seed = std::stoull(spec.substr(7), &used);
      if (used != spec.size() - 7) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw InputError(
          "placement",
          fmt::format("\"{}\": expected random:SEED with a whole number SEED >= 0", spec));
    }
    // A seeded shuffle of the machine's slots (std::mt19937_64 is specified exactly, and the
    // Fisher-Yates loop is written here, so the result is the same everywhere).
    std::vector<std::uint32_t> slot_nodes(slots);
    for (std::uint64_t s = 0; s < slots; ++s)
      slot_nodes[s] = static_cast<std::uint32_t>(s / cluster.cores_per_node);
    std::mt19937_64 rng(seed);
    for (std::uint64_t i = slots - 1; i > 0; --i) {
      const std::uint64_t j = rng() % (i + 1);
      std::swap(slot_nodes[i], slot_nodes[j]);
    }
    std::copy_n(slot_nodes.begin(), ranks, nodes.begin());
    return nodes;
  }
  // A file: one node number per rank.
  std::error_code ec;
  if (!std::filesystem::exists(spec, ec))
    throw InputError(
        "placement",
        fmt::format("\"{}\" is not recorded, rrn, rrp, random:SEED or a readable file", spec));
  std::istringstream in(read_input_file(spec));
  std::vector<std::uint32_t> per_node(cluster.nodes, 0);
  std::string line;
  std::uint32_t r = 0;
  for (std::size_t line_no = 1; std::getline(in, line); ++line_no) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      std::uint64_t node = 0;
      try {
        std::size_t used = 0;
        // stoull reads "-1" as 2^64 - 1: a node number is digits only.
        if (word.find_first_not_of("0123456789") != std::string::npos)
          throw std::invalid_argument("not digits");
        node = std::stoull(word, &used);
        if (used != word.size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        throw InputError(fmt::format("{}:{}", spec, line_no),
                         fmt::format("expected a node number, got \"{}\"", word));
      }
      if (node >= cluster.nodes)
        throw InputError(
            fmt::format("{}:{}", spec, line_no),
            fmt::format("node {} does not exist (the cluster has {})", node, cluster.nodes));
      if (r >= ranks)
        throw InputError(fmt::format("{}:{}", spec, line_no),
                         fmt::format("more entries than the trace's {} ranks", ranks));
      if (++per_node[node] > cluster.cores_per_node)
        throw InputError(
            fmt::format("{}:{}", spec, line_no),
            fmt::format("node {} gets more than its {} cores", node, cluster.cores_per_node));
      nodes[r++] = static_cast<std::uint32_t>(node);
    }
  }
  if (r != ranks)
    throw InputError(spec, fmt::format("places {} ranks, the trace has {}", r, ranks));
  return nodes;
}

}  // namespace commgauge::sim
