#include "synth/synth.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <system_error>

#include <unistd.h>

#include <fmt/format.h>

#include "commgauge/version.hpp"
#include "common/error.hpp"
#include "common/json_text.hpp"
#include "common/temporaries.hpp"
#include "common/text_file.hpp"
#include "trace/function_ids.hpp"
#include "trace/output_directory.hpp"
#include "trace/reader.hpp"

namespace commgauge::synth {

namespace fs = std::filesystem;
namespace fn = trace::fn;
using trace::Completion;
using trace::Event;

namespace {

struct PatternName {
  SynthPattern pattern;
  const char* name;
};

constexpr PatternName kPatterns[] = {
    {SynthPattern::ring, "ring"},         {SynthPattern::halo2d, "halo2d"},
    {SynthPattern::halo3d, "halo3d"},     {SynthPattern::allreduce, "allreduce"},
    {SynthPattern::alltoall, "alltoall"}, {SynthPattern::master_worker, "master-worker"},
    {SynthPattern::scheme, "scheme"},
};

int grid_dimensions(SynthPattern p) {
  return p == SynthPattern::halo2d ? 2 : p == SynthPattern::halo3d ? 3 : 0;
}

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::uint32_t>((std::uint64_t{a} + b - 1) / b);
}

std::vector<std::uint32_t> parse_grid(const std::string& text, int dimensions,
                                      std::uint32_t ranks) {
  std::vector<std::uint32_t> grid;
  std::size_t start = 0;
  for (;;) {
    const std::size_t x = text.find('x', start);
    const std::string part = text.substr(start, x == std::string::npos ? x : x - start);
    const bool digits =
        !part.empty() && part.size() <= 9 &&
        std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoul(part) == 0)
      throw InputError("grid", fmt::format("expected {} positive integers joined by 'x' (e.g. "
                                           "{}), got \"{}\"",
                                           dimensions, dimensions == 2 ? "4x3" : "4x3x2", text));
    grid.push_back(static_cast<std::uint32_t>(std::stoul(part)));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (static_cast<int>(grid.size()) != dimensions)
    throw InputError("grid", fmt::format("\"{}\" has {} dimensions; halo{}d needs {}", text,
                                         grid.size(), dimensions, dimensions));
  std::uint64_t product = 1;
  for (auto d : grid)
    product *= d;
  if (product != ranks)
    throw InputError("grid",
                     fmt::format("\"{}\" holds {} ranks, not --ranks {}", text, product, ranks));
  return grid;
}

/// Ranks of `node` and the k-th of them, under the scheme's placement (as `share --nodes N`).
std::uint32_t ranks_on_node(const SynthPlan& p, int node) {
  const auto n = static_cast<std::uint64_t>(node);
  if (p.placement == "rrn")
    return n < p.nodes ? static_cast<std::uint32_t>((p.ranks - 1 - n) / p.nodes + 1) : 0;
  const std::uint64_t first = n * p.ranks_per_node_spread;
  return first < p.ranks ? static_cast<std::uint32_t>(
                               std::min<std::uint64_t>(p.ranks_per_node_spread, p.ranks - first))
                         : 0;
}

std::uint32_t rank_on_node(const SynthPlan& p, int node, std::uint32_t k) {
  const auto n = static_cast<std::uint32_t>(node);
  return p.placement == "rrn" ? n + k * p.nodes : n * p.ranks_per_node_spread + k;
}

/// measure::plan_tasks on the synthetic placement: senders in communication order, then one
/// receiver per destination node, each the node's next free rank.
void plan_scheme_tasks(SynthPlan& p) {
  const model::Scheme& s = p.scheme;
  std::map<int, std::uint32_t> needed;
  for (const auto& c : s.communications) {
    ++needed[c.source];
    p.into_node[c.destination].push_back(static_cast<std::size_t>(&c - s.communications.data()));
    auto& posted = p.posted_bytes[c.destination];
    posted = std::max(posted, c.bytes);
  }
  for (const auto& [node, list] : p.into_node)
    ++needed[node];
  std::uint32_t total = 0, most = 0;
  std::string shortfall;
  for (const auto& [node, count] : needed) {
    total += count;
    most = std::max(most, count);
    const std::uint32_t have = ranks_on_node(p, node);
    if (have < count) {
      const bool receives = p.into_node.count(node) != 0;
      shortfall += fmt::format("{}node {} needs {} ({} sender(s){}) and has {}",
                               shortfall.empty() ? "" : "; ", node, count,
                               count - (receives ? 1 : 0), receives ? " + 1 receiver" : "", have);
    }
  }
  if (!shortfall.empty())
    throw InputError(fmt::format(
        "{} needs {} ranks, one per task, on nodes 0-{}: {} (with --ranks {} --ranks-per-node {} "
        "there are {} nodes, placed {}; e.g. --ranks {} --ranks-per-node {} fits)",
        s.origin, total, s.nodes - 1, shortfall, p.ranks, p.ranks_per_node, p.nodes, p.placement,
        static_cast<std::uint64_t>(s.nodes) * most, most));
  std::map<int, std::uint32_t> used;
  for (std::size_t i = 0; i < s.communications.size(); ++i) {
    const int node = s.communications[i].source;
    const std::uint32_t r = rank_on_node(p, node, used[node]++);
    p.sender_rank.push_back(r);
    p.sender_of_rank[r] = i;
  }
  for (const auto& [node, list] : p.into_node) {
    const std::uint32_t r = rank_on_node(p, node, used[node]++);
    p.receiver_rank[node] = r;
    p.receiver_node_of_rank[r] = node;
  }
}

std::string version_text() {
  return std::string(kVersion) + " (" + kGitRevision + ")";
}

/// One rank's events into its blocks; the scratch event keeps its vectors' capacity.
class RankWriter {
 public:
  RankWriter(std::uint32_t rank, trace::BlockSink& sink) : encoder_(rank, sink) {}

  void header(const std::string& text) { encoder_.write_header(text); }

  Event& call(std::uint32_t function, std::int64_t start, std::int64_t end) {
    Event& e = e_;
    e.kind = trace::RecordKind::function;
    e.function = function;
    e.start_tick = start;
    e.end_tick = end;
    e.fields = 0;
    e.flags = 0;
    e.peer = e.tag = e.root = 0;
    e.comm = e.bytes = e.request = e.recv_bytes = e.count = 0;
    e.completions.clear();
    return e;
  }
  void emit() {
    if (e_.flags != 0) e_.fields |= trace::kFlags;
    encoder_.append(e_);
  }

  void point_to_point(std::uint32_t function, std::int64_t t, std::int32_t peer, std::int32_t tag,
                      std::uint64_t bytes) {
    Event& e = call(function, t, t);
    e.fields = trace::kPeer | trace::kTag | trace::kComm | trace::kBytes | trace::kCount;
    e.peer = peer;
    e.tag = tag;
    e.bytes = bytes;
    e.count = bytes;
  }
  void send(std::int64_t t, std::int32_t dest, std::int32_t tag, std::uint64_t bytes) {
    point_to_point(fn::Send, t, dest, tag, bytes);
    emit();
  }
  /// A blocking receive: as asked (peer and tag, -1 for the wildcards), and its status.
  void recv(std::int64_t start, std::int64_t end, std::int32_t source, std::int32_t tag,
            std::uint64_t posted, const Completion& status) {
    point_to_point(fn::Recv, start, source, tag, posted);
    e_.end_tick = end;
    if (source == trace::kAnySource) e_.flags |= trace::kWildcardSource;
    if (tag == -1) e_.flags |= trace::kWildcardTag;
    e_.fields |= trace::kCompletions;
    e_.completions.push_back(status);
    emit();
  }
  std::uint64_t isend(std::int64_t t, std::int32_t dest, std::int32_t tag, std::uint64_t bytes) {
    point_to_point(fn::Isend, t, dest, tag, bytes);
    return with_request();
  }
  std::uint64_t irecv(std::int64_t t, std::int32_t source, std::int32_t tag, std::uint64_t bytes) {
    point_to_point(fn::Irecv, t, source, tag, bytes);
    return with_request();
  }
  /// Waitall over the array built with add_send / add_recv.
  Event& waitall(std::int64_t t, std::size_t count) {
    Event& e = call(fn::Waitall, t, t);
    e.fields = trace::kCount | trace::kCompletions;
    e.count = count;
    return e;
  }
  void completes_send(std::uint64_t request) {
    e_.completions.push_back(
        {request, static_cast<std::int32_t>(e_.completions.size()), -1, -1, 0, false});
  }
  void completes_recv(std::uint64_t request, std::int32_t source, std::int32_t tag,
                      std::uint64_t bytes) {
    e_.completions.push_back(
        {request, static_cast<std::int32_t>(e_.completions.size()), source, tag, bytes, false});
  }
  void collective(std::uint32_t function, std::int64_t t) {
    Event& e = call(function, t, t);
    e.fields = trace::kComm;
  }

  void init() {
    call(fn::Init, 0, 0);
    emit();
  }
  void finalize(std::int64_t t) {
    call(fn::Finalize, t, t);
    emit();
    Event& end = call(0, t, t);
    end.kind = trace::RecordKind::end;
    end.fields = trace::kText;
    end.text = R"({"incomplete":false,"local":{}})";
    encoder_.append(end);
    end.text.clear();
    encoder_.flush();
  }
  std::uint64_t events() const { return encoder_.events(); }

 private:
  std::uint64_t with_request() {
    e_.fields |= trace::kRequest;
    e_.request = ++requests_;
    emit();
    return e_.request;
  }

  trace::BlockEncoder encoder_;
  Event e_;
  std::uint64_t requests_ = 0;  ///< ids count from 1 per rank, as the tracer's
};

void ring(const SynthPlan& p, std::uint32_t rank, RankWriter& w, std::int64_t& t) {
  const auto right = static_cast<std::int32_t>((rank + 1) % p.ranks);
  const auto left = static_cast<std::int32_t>((rank + p.ranks - 1) % p.ranks);
  for (std::uint32_t i = 0; i < p.iterations; ++i) {
    t += p.compute_ticks;
    const std::uint64_t s = w.isend(t, right, 0, p.bytes);
    const std::uint64_t r = w.irecv(t, left, 0, p.bytes);
    w.waitall(t, 2);
    w.completes_send(s);
    w.completes_recv(r, left, 0, p.bytes);
    w.emit();
  }
}

/// Halo exchange on the periodic grid. Direction k: dimension k / 2, towards -1 (k even) or +1;
/// a message sent in direction k has tag k, so the one from the neighbour in direction k has
/// tag k ^ 1 (distinct even when both neighbours are one rank).
void halo(const SynthPlan& p, std::uint32_t rank, RankWriter& w, std::int64_t& t) {
  const std::size_t dims = p.grid.size();
  std::uint32_t coords[3] = {0, 0, 0};
  std::uint32_t rest = rank;
  for (std::size_t d = dims; d-- > 0;) {
    coords[d] = rest % p.grid[d];
    rest /= p.grid[d];
  }
  std::int32_t neighbour[6];
  for (std::size_t k = 0; k < 2 * dims; ++k) {
    std::uint32_t c[3] = {coords[0], coords[1], coords[2]};
    const std::size_t d = k / 2;
    c[d] = (c[d] + (k % 2 == 0 ? p.grid[d] - 1 : 1)) % p.grid[d];
    std::uint32_t r = 0;
    for (std::size_t j = 0; j < dims; ++j)
      r = r * p.grid[j] + c[j];
    neighbour[k] = static_cast<std::int32_t>(r);
  }
  const auto n = static_cast<std::int32_t>(2 * dims);
  std::uint64_t recvs[6], sends[6];
  for (std::uint32_t i = 0; i < p.iterations; ++i) {
    t += p.compute_ticks;
    for (std::int32_t k = 0; k < n; ++k)
      recvs[k] = w.irecv(t, neighbour[k], k ^ 1, p.bytes);
    for (std::int32_t k = 0; k < n; ++k)
      sends[k] = w.isend(t, neighbour[k], k, p.bytes);
    w.waitall(t, 2 * static_cast<std::size_t>(n));
    for (std::int32_t k = 0; k < n; ++k)
      w.completes_recv(recvs[k], neighbour[k], k ^ 1, p.bytes);
    for (std::int32_t k = 0; k < n; ++k)
      w.completes_send(sends[k]);
    w.emit();
  }
}

void allreduce(const SynthPlan& p, RankWriter& w, std::int64_t& t) {
  for (std::uint32_t i = 0; i < p.iterations; ++i) {
    t += p.compute_ticks;
    Event& e = w.call(fn::Allreduce, t, t);
    // As the tracer's allreduce hook: no recv_bytes (it equals bytes).
    e.fields = trace::kComm | trace::kBytes | trace::kCount;
    e.bytes = e.count = p.bytes;
    e.flags = trace::kCommutative;
    w.emit();
  }
}

void alltoall(const SynthPlan& p, RankWriter& w, std::int64_t& t) {
  for (std::uint32_t i = 0; i < p.iterations; ++i) {
    t += p.compute_ticks;
    Event& e = w.call(fn::Alltoall, t, t);
    e.fields = trace::kComm | trace::kBytes | trace::kCount | trace::kRecvBytes;
    e.bytes = e.count = e.recv_bytes = p.bytes;
    w.emit();
  }
}

/// Rank 0 hands out `iterations` tasks per worker. With equal compute every worker finishes
/// round k at k x C; the master takes their results in rank order, answering each at once
/// with the next task or, after the last, a zero-byte stop message.
void master_worker(const SynthPlan& p, std::uint32_t rank, RankWriter& w, std::int64_t& t) {
  const std::int64_t c = p.compute_ticks;
  if (rank == 0) {
    for (std::uint32_t worker = 1; worker < p.ranks; ++worker)
      w.send(t, static_cast<std::int32_t>(worker), kTaskTag, p.bytes);
    for (std::uint32_t k = 1; k <= p.iterations; ++k) {
      const std::int64_t arrival = c * k;
      for (std::uint32_t worker = 1; worker < p.ranks; ++worker) {
        const auto peer = static_cast<std::int32_t>(worker);
        w.recv(t, arrival, trace::kAnySource, kResultTag, p.bytes,
               Completion{0, -1, peer, kResultTag, p.bytes, false});
        t = arrival;
        if (k < p.iterations)
          w.send(t, peer, kTaskTag, p.bytes);
        else
          w.send(t, peer, kStopTag, 0);
      }
    }
    return;
  }
  w.recv(t, t, 0, -1, p.bytes, Completion{0, -1, 0, kTaskTag, p.bytes, false});
  for (std::uint32_t k = 1; k <= p.iterations; ++k) {
    t += c;
    w.send(t, 0, kResultTag, p.bytes);
    const bool last = k == p.iterations;
    w.recv(t, t, 0, -1, p.bytes,
           Completion{0, -1, 0, last ? kStopTag : kTaskTag, last ? 0 : p.bytes, false});
  }
}

/// Each iteration: Barrier, then every sender task its blocking send to the receiver task of
/// the destination node, which takes them with MPI_ANY_SOURCE (as `commgauge share` does), in
/// the scheme's order.
void scheme(const SynthPlan& p, std::uint32_t rank, RankWriter& w, std::int64_t& t) {
  const auto sender = p.sender_of_rank.find(rank);
  const auto receiver = p.receiver_node_of_rank.find(rank);
  for (std::uint32_t i = 0; i < p.iterations; ++i) {
    t += p.compute_ticks;
    w.collective(fn::Barrier, t);
    w.emit();
    if (sender != p.sender_of_rank.end()) {
      const auto& c = p.scheme.communications[sender->second];
      w.send(t, static_cast<std::int32_t>(p.receiver_rank.at(c.destination)), 0, c.bytes);
    }
    if (receiver != p.receiver_node_of_rank.end()) {
      const std::uint64_t posted = p.posted_bytes.at(receiver->second);
      for (std::size_t k : p.into_node.at(receiver->second)) {
        const auto& c = p.scheme.communications[k];
        const auto source = static_cast<std::int32_t>(p.sender_rank[k]);
        w.recv(t, t, trace::kAnySource, 0, posted, Completion{0, -1, source, 0, c.bytes, false});
      }
    }
  }
}

}  // namespace

std::optional<SynthPattern> parse_synth_pattern(std::string_view name) {
  for (const auto& p : kPatterns)
    if (name == p.name) return p.pattern;
  return std::nullopt;
}

std::string_view to_string(SynthPattern p) {
  for (const auto& x : kPatterns)
    if (x.pattern == p) return x.name;
  return "?";
}

std::string synth_pattern_names() {
  std::string s;
  for (const auto& p : kPatterns)
    s += (s.empty() ? std::string() : std::string(", ")) + p.name;
  return s;
}

std::vector<std::uint32_t> most_square_grid(std::uint32_t ranks, int dimensions) {
  if (ranks == 0) return std::vector<std::uint32_t>(static_cast<std::size_t>(dimensions), 0);
  auto largest_divisor_up_to_root = [](std::uint32_t q) {
    auto b = static_cast<std::uint32_t>(std::sqrt(static_cast<double>(q)));
    while (static_cast<std::uint64_t>(b + 1) * (b + 1) <= q)
      ++b;
    while (b > 1 && q % b != 0)
      --b;
    return std::max<std::uint32_t>(b, 1);
  };
  if (dimensions == 2) {
    const std::uint32_t b = largest_divisor_up_to_root(ranks);
    return {ranks / b, b};
  }
  std::vector<std::uint32_t> best = {ranks, 1, 1};
  for (std::uint32_t c = 1; static_cast<std::uint64_t>(c) * c * c <= ranks; ++c) {
    if (ranks % c != 0) continue;
    const std::uint32_t q = ranks / c;
    const std::uint32_t b = largest_divisor_up_to_root(q);
    std::vector<std::uint32_t> g = {q / b, b, c};
    std::sort(g.begin(), g.end(), std::greater<>());
    if (g[0] - g[2] < best[0] - best[2]) best = g;
  }
  return best;
}

std::uint32_t SynthPlan::node_of(std::uint32_t rank) const {
  if (placement == "rrn") return rank % nodes;
  if (placement == "rrp") return rank / ranks_per_node_spread;
  return rank / ranks_per_node;
}

SynthPlan plan_synthetic(const SynthOptions& o) {
  SynthPlan p;
  const auto pattern = parse_synth_pattern(o.pattern);
  if (!pattern)
    throw InputError(fmt::format("unknown pattern \"{}\" (expected one of: {})", o.pattern,
                                 synth_pattern_names()));
  p.pattern = *pattern;
  if (o.ranks == 0) throw InputError("ranks", "must be at least 1");
  if (o.ranks > trace::kMaxRanks)
    throw InputError("ranks",
                     fmt::format("at most {} (the trace reader's limit)", trace::kMaxRanks));
  if (o.iterations == 0) throw InputError("iterations", "must be at least 1");
  if (o.ranks_per_node == 0) throw InputError("ranks_per_node", "must be at least 1");
  if (!std::isfinite(o.compute_us) || o.compute_us < 0)
    throw InputError("compute_us", "must be a non-negative number");
  // Times stay exact in a double of picoseconds (2^53 ps is 2.5 hours).
  const double total_ps = o.compute_us * 1e6 * static_cast<double>(o.iterations);
  if (total_ps > 9e15)
    throw InputError("compute_us",
                     fmt::format("{:g} us x {} iterations exceeds 2.5 hours of computation per "
                                 "rank",
                                 o.compute_us, o.iterations));
  if (p.pattern == SynthPattern::master_worker && o.ranks < 2)
    throw InputError("ranks", "master-worker needs at least 2 ranks (a master and a worker)");
  const int dims = grid_dimensions(p.pattern);
  if (!o.grid.empty() && dims == 0) throw InputError("grid", "applies to halo2d and halo3d only");
  if (p.pattern == SynthPattern::scheme && o.scheme.empty())
    throw InputError("the scheme pattern needs a scheme file: commgauge synth scheme FILE.sch");
  if (p.pattern != SynthPattern::scheme && !o.scheme.empty())
    throw InputError(
        fmt::format("a scheme file ({}) applies to the scheme pattern only", o.scheme.string()));
  p.ranks = o.ranks;
  p.iterations = o.iterations;
  p.bytes = o.bytes.value_or(kSynthDefaultBytes);
  p.compute_us = o.compute_us;
  p.compute_ticks = std::llround(o.compute_us * 1e6);
  p.ranks_per_node = o.ranks_per_node;
  p.nodes = ceil_div(p.ranks, p.ranks_per_node);
  if (dims != 0)
    p.grid = o.grid.empty() ? most_square_grid(p.ranks, dims) : parse_grid(o.grid, dims, p.ranks);

  p.description = {{"generator", "commgauge synth"},
                   {"pattern", std::string(to_string(p.pattern))},
                   {"ranks", p.ranks},
                   {"iterations", p.iterations},
                   {"compute_us", p.compute_us},
                   {"ranks_per_node", p.ranks_per_node}};
  if (p.pattern == SynthPattern::scheme) {
    p.scheme = model::read_scheme(o.scheme);
    if (p.scheme.communications.empty())
      throw InputError(o.scheme.string(), "the scheme has no communication");
    if (o.bytes)
      for (auto& c : p.scheme.communications)
        c.bytes = *o.bytes;
    p.placement = p.scheme.placement;
    // As `commgauge share --nodes N`: N nodes, rrp fills ceil(P / N) ranks per node.
    p.ranks_per_node_spread = ceil_div(p.ranks, p.nodes);
    if (p.placement == "rrp") p.nodes = ceil_div(p.ranks, p.ranks_per_node_spread);
    plan_scheme_tasks(p);
    p.description["scheme"] = o.scheme.filename().string();
    nlohmann::json communications = nlohmann::json::array();
    for (std::size_t i = 0; i < p.scheme.communications.size(); ++i) {
      const auto& c = p.scheme.communications[i];
      communications.push_back({{"name", c.name},
                                {"source_node", c.source},
                                {"destination_node", c.destination},
                                {"bytes", c.bytes},
                                {"sender_rank", p.sender_rank[i]},
                                {"receiver_rank", p.receiver_rank.at(c.destination)}});
    }
    p.description["communications"] = std::move(communications);
    if (o.bytes) p.description["bytes"] = *o.bytes;
  } else {
    p.description["bytes"] = p.bytes;
  }
  if (!p.grid.empty()) p.description["grid"] = p.grid;
  p.description["placement"] = p.placement;
  p.description["nodes"] = p.nodes;
  p.program = o.program;
  if (p.program.empty()) {
    p.program = {"commgauge", "synth", o.pattern};
    if (!o.scheme.empty()) p.program.push_back(o.scheme.string());
  }

  // Every header but its rank and host: dumped once (keys are sorted; order does not matter).
  const nlohmann::json common = {{"format", "commgauge-trace"},
                                 {"version", trace::kVersion},
                                 {"size", p.ranks},
                                 {"pid", 0},
                                 {"clock",
                                  {{"source", "synthetic"},
                                   {"ticks_per_second", kSynthTicksPerSecond},
                                   {"resolution_ns", 1e9 / kSynthTicksPerSecond}}},
                                 {"thread_level", "single"},
                                 {"language", "c"},
                                 {"tracer",
                                  {{"overhead_ticks_per_event", 0},
                                   {"overhead_ns_per_event", 0.0},
                                   {"local_overhead_ns", 0.0},
                                   {"cpu_time", false},
                                   {"commgauge_version", version_text()}}},
                                 {"synthetic", p.description}};
  p.header_tail = json_text(common).substr(1);
  return p;
}

std::string synthetic_header_json(const SynthPlan& plan, std::uint32_t rank) {
  std::string text = R"({"host":"node-)";
  text += std::to_string(plan.node_of(rank));
  text += R"(","rank":)";
  text += std::to_string(rank);
  text += ',';
  text += plan.header_tail;
  return text;
}

std::string synthetic_index_json(const SynthPlan& plan) {
  std::string command;
  for (const auto& a : plan.program)
    command += (command.empty() ? std::string() : std::string(" ")) + a;
  nlohmann::json index =
      trace::written_index(plan.ranks, "none: synthetic trace (commgauge synth)", "synthetic",
                           1e9 / kSynthTicksPerSecond, version_text());
  index["program"] = plan.program;
  index["command"] = command;
  index["synthetic"] = plan.description;
  std::string text = json_text(index);
  text.pop_back();  // the closing brace: hosts and placement follow
  // Nodes hold ranks from 0 up, first seen in node order, so host index = node number.
  text += R"(,"hosts":[)";
  for (std::uint32_t n = 0; n < plan.nodes; ++n) {
    if (n > 0) text += ',';
    text += "\"node-";
    text += std::to_string(n);
    text += '"';
  }
  text += R"(],"placement":[)";
  for (std::uint32_t r = 0; r < plan.ranks; ++r) {
    if (r > 0) text += ',';
    text += std::to_string(plan.node_of(r));
  }
  text += "]}";
  return text;
}

std::uint64_t write_synthetic_rank(const SynthPlan& plan, std::uint32_t rank,
                                   trace::BlockSink& sink) {
  RankWriter w(rank, sink);
  w.header(synthetic_header_json(plan, rank));
  w.init();
  std::int64_t t = 0;
  switch (plan.pattern) {
    case SynthPattern::ring:
      ring(plan, rank, w, t);
      break;
    case SynthPattern::halo2d:
    case SynthPattern::halo3d:
      halo(plan, rank, w, t);
      break;
    case SynthPattern::allreduce:
      allreduce(plan, w, t);
      break;
    case SynthPattern::alltoall:
      alltoall(plan, w, t);
      break;
    case SynthPattern::master_worker:
      master_worker(plan, rank, w, t);
      break;
    case SynthPattern::scheme:
      scheme(plan, rank, w, t);
      break;
  }
  w.finalize(t);
  return w.events();
}

SynthResult write_synthetic_trace(
    const SynthOptions& options, const fs::path& output, bool force,
    const std::function<void(std::uint32_t done, std::uint32_t total)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  const SynthPlan plan = plan_synthetic(options);  // all input checked before any file changes
  if (output.empty()) throw InputError("-o", "an output directory or .cgtc file is needed");
  if (output == "-")
    throw InputError("-o", "standard output is not supported; give a directory or a .cgtc file");
  fs::path file;
  std::error_code ec;
  std::optional<trace::OutputDirectory>
      directory;  // with --force, the old trace stays till the end
  if (output.extension() == ".cgtc") {
    file = output;
    trace::prepare_output_container(file, force);
  } else {
    directory.emplace(output, force);
    file = directory->recording_dir() / "trace.cgtc";
  }
  // Written aside and renamed when whole: an interrupted run leaves no half trace at `file`. The
  // temporary is a new file of ours (never a user's file or a symlink named like it).
  std::string temporary_name;
  const int fd = create_temporary(file, temporary_name);
  if (fd < 0) {
    throw InputError("-o", fmt::format("cannot create a file beside {}: {}", file.string(),
                                       std::strerror(errno)));
  }
  ::close(fd);
  const fs::path temporary = temporary_name;
  SynthResult result;
  try {
    trace::ContainerWriter writer(temporary, plan.ranks);
    for (std::uint32_t r = 0; r < plan.ranks; ++r) {
      result.events += write_synthetic_rank(plan, r, writer);
      if (progress && (r % 4096 == 0)) progress(r, plan.ranks);
    }
    writer.finish(synthetic_index_json(plan));
    fs::rename(temporary, file);
    forget_temporary(temporary_name);
    if (directory) {
      directory->commit();
      file = output / "trace.cgtc";
    }
  } catch (...) {
    fs::remove(temporary, ec);
    forget_temporary(temporary_name);
    throw;
  }
  if (progress) progress(plan.ranks, plan.ranks);
  result.file = file;
  result.ranks = plan.ranks;
  result.nodes = plan.nodes;
  result.synthetic = plan.description;
  result.file_bytes = fs::file_size(file, ec);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace commgauge::synth
