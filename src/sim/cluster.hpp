#pragma once
// The simulated machine: nodes, cores per node, and which profile link class applies between two
// ranks (docs/simulate.md, "Cluster file"); and the placement of ranks on nodes (seed 003's RRN
// and RRP, the trace's own placement, a seeded random one, or a file).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace commgauge::sim {

struct Cluster {
  std::uint32_t nodes = 1;
  std::uint32_t cores_per_node = 1;
  std::string same_node_class = "intra_node";        ///< profile class between ranks of a node
  std::string different_nodes_class = "inter_node";  ///< ... and between nodes
  std::string origin;                                ///< file name, or "trace" (recorded hosts)
};

/// Reads a cluster file (JSON: {"nodes", "cores_per_node", "link_classes": {"same_node",
/// "different_nodes"}}); errors name the file and the field.
Cluster cluster_from_json(const nlohmann::json& doc, const std::string& origin);

/// The node of every rank. `spec` is recorded | rrn | rrp | random:SEED | FILE (one node number
/// per rank, whitespace separated). `recorded` is the trace's placement (index "placement");
/// the others need ranks <= nodes x cores_per_node. Throws InputError.
std::vector<std::uint32_t> place_ranks(const std::string& spec, std::uint32_t ranks,
                                       const Cluster& cluster,
                                       const std::vector<std::uint32_t>& recorded);

/// The trace's placement (index "placement", else every rank on one node) and a cluster that
/// holds it: as many nodes as hosts, cores = the most ranks on one host.
std::vector<std::uint32_t> recorded_placement(const nlohmann::json& index, std::uint32_t ranks);
Cluster cluster_of_placement(const std::vector<std::uint32_t>& nodes);

}  // namespace commgauge::sim
