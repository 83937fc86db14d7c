#pragma once
// Communication schemes (seed 003 §IV): named communications between nodes, each a blocking
// send of a given size, all started together.
//
// The text format, one statement per line, '#' starts a comment:
//   nodes 4                 optional: the node count (default: the largest node + 1)
//   size 20MiB              optional: the size of communications that give none (default 20 MiB)
//   placement rrn           optional: how tasks map to nodes when ranks are assigned (rrn, rrp)
//   a: 0 -> 1 4MiB          a communication: name, source node, destination node, size
//   b: 0 -> 2

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace commgauge::model {

struct Communication {
  std::string name;
  int source = 0;       ///< source node
  int destination = 0;  ///< destination node
  std::uint64_t bytes = 0;
};

struct Scheme {
  std::string origin;  ///< file name (for messages)
  int nodes = 0;
  std::string placement = "rrn";
  std::vector<Communication> communications;

  /// Out- and in-degrees of every node (seed 003's Delta_o, Delta_i).
  std::vector<int> out_degree() const;
  std::vector<int> in_degree() const;
};

/// Checks a scheme read from elsewhere (a share --json document): at least one communication,
/// 1 to 999999 nodes, every node inside them, a destination other than the source, unique names.
/// InputError naming `where` and the communication.
void validate_scheme(const Scheme& s, const std::string& where);

/// Parses the text; `origin` names it in errors, which read "origin:line:col: expected ...".
Scheme parse_scheme(const std::string& text, const std::string& origin);
Scheme read_scheme(const std::filesystem::path& path);

}  // namespace commgauge::model
