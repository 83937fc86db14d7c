#include "model/scheme.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/input_file.hpp"
#include "common/units.hpp"

namespace commgauge::model {

std::vector<int> Scheme::out_degree() const {
  std::vector<int> d(static_cast<std::size_t>(nodes), 0);
  for (const auto& c : communications)
    ++d[static_cast<std::size_t>(c.source)];
  return d;
}

std::vector<int> Scheme::in_degree() const {
  std::vector<int> d(static_cast<std::size_t>(nodes), 0);
  for (const auto& c : communications)
    ++d[static_cast<std::size_t>(c.destination)];
  return d;
}

namespace {

// A cursor over one line that reports file:line:col.
class Line {
 public:
  Line(const std::string& text, const std::string& origin, int number)
      : text_(text), origin_(origin), number_(number) {}

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  [[noreturn]] void fail(const std::string& expected) const {
    const std::string got =
        pos_ < text_.size() ? fmt::format("\"{}\"", text_.substr(pos_)) : "the end of the line";
    throw InputError(fmt::format("{}:{}:{}", origin_, number_, pos_ + 1),
                     fmt::format("expected {}, got {}", expected, got));
  }
  /// The value just read was not what was expected: the error shows it (not what follows it).
  [[noreturn]] void fail_last(const std::string& expected) {
    pos_ = last_start_;
    fail(expected);
  }
  std::string word(const std::string& what) {
    skip_space();
    const std::size_t start = pos_;
    last_start_ = start;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            text_[pos_] == '-' || text_[pos_] == '.')) {
      if (text_[pos_] == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') break;
      ++pos_;
    }
    if (start == pos_) fail(what);
    return text_.substr(start, pos_ - start);
  }
  int node(const std::string& what) {
    skip_space();
    const std::size_t start = pos_;
    last_start_ = start;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
    if (start == pos_ || pos_ - start > 6) {
      pos_ = start;
      fail(what);
    }
    return std::stoi(text_.substr(start, pos_ - start));
  }
  void expect(const std::string& token) {
    skip_space();
    if (text_.compare(pos_, token.size(), token) != 0) fail(fmt::format("\"{}\"", token));
    pos_ += token.size();
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::uint64_t size() {
    skip_space();
    const std::size_t start = pos_;
    const std::string w = word("a size such as 4MiB");
    try {
      return parse_byte_size(w, "");
    } catch (const InputError&) {
      pos_ = start;
      fail("a size such as 4MiB or 20MB");
    }
  }
  std::size_t column() const { return pos_ + 1; }
  int number() const { return number_; }

 private:
  const std::string& text_;
  const std::string& origin_;
  int number_;
  std::size_t pos_ = 0;
  std::size_t last_start_ = 0;  ///< where the last word or number began
};

bool is_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

}  // namespace

Scheme parse_scheme(const std::string& text, const std::string& origin) {
  Scheme s;
  s.origin = origin;
  std::uint64_t default_size = 20ull << 20;
  int declared_nodes = -1;
  int nodes_line = 0;                                   // the line that set it
  std::vector<std::pair<Communication, bool>> pending;  // bool: size given
  std::set<std::string> names;
  std::istringstream in(text);
  std::string raw;
  int number = 0;
  while (std::getline(in, raw)) {
    ++number;
    const std::string content = raw.substr(0, raw.find('#'));
    Line line(content, origin, number);
    if (line.at_end()) continue;
    const std::string first = line.word("a communication \"name: src -> dst [size]\" or a setting");
    if (first == "nodes" && !line.accept(':')) {
      if (nodes_line > 0)
        line.fail_last(fmt::format("one nodes line (nodes is set on line {} already)", nodes_line));
      nodes_line = number;
      declared_nodes = line.node("a node count");
      if (declared_nodes < 1) line.fail_last("a node count of at least 1");
    } else if (first == "size" && !line.accept(':')) {
      default_size = line.size();
    } else if (first == "placement" && !line.accept(':')) {
      s.placement = line.word("a placement (rrn or rrp)");
      if (s.placement != "rrn" && s.placement != "rrp") line.fail_last("rrn or rrp");
    } else {
      if (!is_name(first)) line.fail("a communication name (letters, digits, _)");
      if (!names.insert(first).second)
        line.fail(fmt::format("a new name (\"{}\" is defined twice)", first));
      line.expect(":");
      Communication c;
      c.name = first;
      c.source = line.node("a source node number");
      line.expect("->");
      c.destination = line.node("a destination node number");
      if (c.source == c.destination) line.fail_last("a destination other than the source");
      bool sized = false;
      if (!line.at_end()) {
        c.bytes = line.size();
        sized = true;
      }
      if (!line.at_end()) line.fail("the end of the line");
      pending.emplace_back(c, sized);
    }
    if (!line.at_end()) line.fail("the end of the line");
  }
  int max_node = -1;
  for (auto& [c, sized] : pending) {
    if (!sized) c.bytes = default_size;
    max_node = std::max({max_node, c.source, c.destination});
    s.communications.push_back(c);
  }
  if (s.communications.empty()) throw InputError(origin, "expected at least one communication");
  if (declared_nodes >= 0 && max_node >= declared_nodes) {
    throw InputError(origin,
                     fmt::format("node {} is outside \"nodes {}\"", max_node, declared_nodes));
  }
  s.nodes = declared_nodes >= 0 ? declared_nodes : max_node + 1;
  return s;
}

void validate_scheme(const Scheme& s, const std::string& where) {
  if (s.communications.empty()) throw InputError(where, "expected at least one communication");
  if (s.nodes < 1 || s.nodes > 999999)
    throw InputError(where, fmt::format("expected 1 to 999999 nodes, got {}", s.nodes));
  std::set<std::string> names;
  for (const auto& c : s.communications) {
    if (c.source < 0 || c.source >= s.nodes || c.destination < 0 || c.destination >= s.nodes) {
      throw InputError(where, fmt::format("communication \"{}\": nodes {} -> {} are not both "
                                          "inside the scheme's {} nodes",
                                          c.name, c.source, c.destination, s.nodes));
    }
    if (c.source == c.destination) {
      throw InputError(where, fmt::format("communication \"{}\": a destination other than the "
                                          "source was expected",
                                          c.name));
    }
    if (!names.insert(c.name).second)
      throw InputError(where, fmt::format("communication \"{}\" is defined twice", c.name));
  }
}

Scheme read_scheme(const std::filesystem::path& path) {
  return parse_scheme(read_input_file(path), path.string());
}

}  // namespace commgauge::model
