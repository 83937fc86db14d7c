#include "sim/link_sharing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>

namespace commgauge::sim {

LinkSharing::LinkSharing(std::unique_ptr<model::SharingModel> model)
    : model_(std::move(model)), now_ps_(std::numeric_limits<Picoseconds>::min()) {
  if (!model_) throw std::invalid_argument("LinkSharing: no sharing model");
  gige_ = dynamic_cast<const model::GigeModel*>(model_.get());
}

void LinkSharing::update_gige_around(int src, int dst) {
  component_.clear();
  ++stamp_;
  auto add = [this](std::uint32_t f) {
    if (flows_[f].mark == stamp_) return;
    flows_[f].mark = stamp_;
    component_.push_back(f);
  };
  const auto& out = nodes_[static_cast<std::size_t>(src)].out.flows;
  const auto& in = nodes_[static_cast<std::size_t>(dst)].in.flows;
  for (const std::uint32_t f : out) {
    add(f);
    for (const std::uint32_t g : nodes_[static_cast<std::size_t>(flows_[f].dst)].in.flows)
      add(g);  // Delta_o(src) is one of the degrees read for flows into src's destinations
  }
  for (const std::uint32_t f : in) {
    add(f);
    for (const std::uint32_t g : nodes_[static_cast<std::size_t>(flows_[f].src)].out.flows)
      add(g);  // Delta_i(dst) is read for flows out of the sources that send to dst
  }
  // Sorted, so that the changes come out in the same order however the lists were permuted.
  std::sort(component_.begin(), component_.end());
  new_rate_.resize(component_.size());
  // Definition 1 reads only the two nodes' neighbourhoods: flows between the same pair of nodes
  // (ranks of the same nodes) share one evaluation.
  pair_rate_.clear();
  for (std::size_t k = 0; k < component_.size(); ++k) {
    const FlowState& c = flows_[component_[k]];
    const std::uint64_t pair =
        (static_cast<std::uint64_t>(c.src) << 32) | static_cast<std::uint32_t>(c.dst);
    if (const auto it = pair_rate_.find(pair); it != pair_rate_.end()) {
      new_rate_[k] = it->second;
      continue;
    }
    const Node& from = nodes_[static_cast<std::size_t>(c.src)];
    const Node& to = nodes_[static_cast<std::size_t>(c.dst)];
    // The largest in-degree among the destinations of the flows out of src, and how many
    // flows reach it; the largest out-degree among the sources of the flows into dst, likewise.
    int max_in = 0, card_o = 0, max_out = 0, card_i = 0;
    const auto count = [](int degree, int& max_degree, int& card) {
      if (degree > max_degree) {
        max_degree = degree;
        card = 0;
      }
      card += degree == max_degree ? 1 : 0;
    };
    for (const std::uint32_t g : from.out.flows)
      count(static_cast<int>(nodes_[static_cast<std::size_t>(flows_[g].dst)].in.flows.size()),
            max_in, card_o);
    for (const std::uint32_t g : to.in.flows)
      count(static_cast<int>(nodes_[static_cast<std::size_t>(flows_[g].src)].out.flows.size()),
            max_out, card_i);
    new_rate_[k] = model::GigeModel::rate_of_penalty(
        gige_->penalty(static_cast<int>(from.out.flows.size()),
                       static_cast<int>(to.in.flows.size()), max_in, card_o, max_out, card_i));
    pair_rate_.emplace(pair, new_rate_[k]);
  }
  ++stats_.recomputations;
  stats_.flows_recomputed += component_.size();
  stats_.largest_component = std::max(stats_.largest_component, component_.size());
}

const LinkSharing::FlowState& LinkSharing::checked(std::uint32_t flow) const {
  if (!is_active(flow)) {
    throw std::out_of_range("LinkSharing: flow " + std::to_string(flow) + " is not active");
  }
  return flows_[flow];
}

void LinkSharing::check_time(Picoseconds now) const {
  // Advancing a flow backwards in time would give it work back: the caller's events must come
  // in time order (a discrete-event simulator pops them so).
  if (now < now_ps_) {
    throw std::invalid_argument("LinkSharing: time " + std::to_string(now.count()) +
                                " is before the previous call's " +
                                std::to_string(now_ps_.count()));
  }
}

double LinkSharing::remaining_ps(std::uint32_t flow, Picoseconds now) const {
  const FlowState& s = checked(flow);
  return std::max(0.0, s.remaining_ps - s.rate * static_cast<double>((now - s.last_ps).count()));
}

std::vector<std::uint32_t> LinkSharing::active_flows() const {
  std::vector<std::uint32_t> ids;
  ids.reserve(active_);
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    if (flows_[f].active) ids.push_back(static_cast<std::uint32_t>(f));
  }
  return ids;
}

void LinkSharing::link(std::uint32_t flow) {
  FlowState& s = flows_[flow];
  auto& out = nodes_[static_cast<std::size_t>(s.src)].out.flows;
  auto& in = nodes_[static_cast<std::size_t>(s.dst)].in.flows;
  s.out_pos = static_cast<std::uint32_t>(out.size());
  s.in_pos = static_cast<std::uint32_t>(in.size());
  out.push_back(flow);
  in.push_back(flow);
  s.active = true;
  ++active_;
}

void LinkSharing::unlink(std::uint32_t flow) {
  // Swap-remove: O(1), and the order of a node's list does not matter (components are sorted
  // before the model sees them).
  FlowState& s = flows_[flow];
  auto& out = nodes_[static_cast<std::size_t>(s.src)].out.flows;
  auto& in = nodes_[static_cast<std::size_t>(s.dst)].in.flows;
  flows_[out.back()].out_pos = s.out_pos;
  out[s.out_pos] = out.back();
  out.pop_back();
  flows_[in.back()].in_pos = s.in_pos;
  in[s.in_pos] = in.back();
  in.pop_back();
  s.active = false;
  --active_;
}

void LinkSharing::gather(std::uint32_t seed) {
  // Breadth-first over the conflict graph. Each node's list is scanned at most once per stamp,
  // so the cost is the component's size (its flows plus its nodes), whatever the total.
  auto visit = [this](Link& link) {
    if (link.mark == stamp_) return;
    link.mark = stamp_;
    for (std::uint32_t g : link.flows) {
      if (flows_[g].mark != stamp_) {
        flows_[g].mark = stamp_;
        component_.push_back(g);
      }
    }
  };
  std::size_t head = component_.size();
  flows_[seed].mark = stamp_;
  component_.push_back(seed);
  while (head < component_.size()) {
    const std::uint32_t f = component_[head++];
    const auto src = static_cast<std::size_t>(flows_[f].src);
    const auto dst = static_cast<std::size_t>(flows_[f].dst);
    visit(nodes_[src].out);
    visit(nodes_[dst].in);
  }
}

void LinkSharing::compute_rates(std::size_t begin, std::size_t end) {
  // Canonical form of the component, so that the same pattern on other nodes asks the model the
  // same question: MyrinetModel memoises by the exact (source, destination) sequence it is
  // given, and with global node ids every placement of a pattern would miss. Flows are sorted
  // by (source, destination, id) (deterministic, whatever the lists' order); sources are
  // relabelled 0.. in that order and destinations after them by first appearance. The
  // labelling keeps which flows share a source and which share a destination, which is all
  // that any of the three models reads, so the rates are those of the original flows. Sources
  // and destinations get disjoint labels: no relabelled flow has source == destination.
  const auto first = component_.begin() + static_cast<std::ptrdiff_t>(begin);
  const auto last = component_.begin() + static_cast<std::ptrdiff_t>(end);
  std::sort(first, last, [this](std::uint32_t a, std::uint32_t b) {
    return std::tie(flows_[a].src, flows_[a].dst, a) < std::tie(flows_[b].src, flows_[b].dst, b);
  });
  ++stamp_;  // the searches are over: node marks now serve the relabelling
  int next = 0;
  for (auto it = first; it != last; ++it) {
    const auto src = static_cast<std::size_t>(flows_[*it].src);
    Link& out = nodes_[src].out;
    if (out.mark != stamp_) {
      out.mark = stamp_;
      out.label = next++;
    }
  }
  sub_.clear();
  for (auto it = first; it != last; ++it) {
    const auto src = static_cast<std::size_t>(flows_[*it].src);
    const auto dst = static_cast<std::size_t>(flows_[*it].dst);
    Link& in = nodes_[dst].in;
    if (in.mark != stamp_) {
      in.mark = stamp_;
      in.label = next++;
    }
    sub_.push_back({nodes_[src].out.label, in.label});
  }

  // May throw (Myrinet's enumeration limit): nothing has been changed yet.
  const std::vector<double> r = model_->rates(std::span<const model::Flow>(sub_));
  const std::size_t n = end - begin;
  if (r.size() != n) throw std::logic_error("LinkSharing: the model returned a wrong count");
  for (double x : r) {
    if (!(x > 0 && x <= 1)) {
      throw std::logic_error("LinkSharing: model " + model_->name() +
                             " gave a rate outside (0, 1]");
    }
  }
  new_rate_.resize(end);
  std::copy(r.begin(), r.end(), new_rate_.begin() + static_cast<std::ptrdiff_t>(begin));
  ++stats_.recomputations;
  stats_.flows_recomputed += n;
  stats_.largest_component = std::max(stats_.largest_component, n);
}

void LinkSharing::commit(Picoseconds now, std::vector<Change>& changes) {
  for (std::size_t k = 0; k < component_.size(); ++k) {
    const std::uint32_t f = component_[k];
    FlowState& s = flows_[f];
    const double r = new_rate_[k];
    // The models are deterministic functions of the canonical component, so an unchanged
    // rate compares equal exactly: the flow keeps its end and version, and the caller's event.
    if (r == s.rate) continue;
    // Work done since the last change at the old rate (a new flow has rate 0: none). It can go
    // a fraction of a picosecond below zero when the end was rounded up: clamp.
    s.remaining_ps =
        std::max(0.0, s.remaining_ps - s.rate * static_cast<double>((now - s.last_ps).count()));
    s.last_ps = now;
    s.rate = r;
    // Rounded to the nearest picosecond (std::llround, halves away from zero): exact durations
    // such as 2W stay exact where a ceiling would turn 2W(1 + 1e-16) into 2W + 1. The
    // duration is >= 0, so end >= now.
    // A rate so low that the rest would pass the simulated clock (a GigE beta of 1e15) is a
    // range error, never an llround past 2^63 (undefined: it gave a time in the past).
    s.end_ps =
        now + model::checked_picoseconds(s.remaining_ps / r, "a shared transfer's remaining time");
    s.version = next_version_++;
    changes.push_back({f, s.end_ps, s.version});
  }
  stats_.changes += changes.size();
}

void LinkSharing::start(std::uint32_t flow, int src, int dst, Picoseconds work_ps, Picoseconds now,
                        std::vector<Change>& changes) {
  if (src < 0 || dst < 0 || src == dst) {
    throw std::invalid_argument(
        "LinkSharing: a transfer goes between two distinct nodes >= 0, "
        "not " +
        std::to_string(src) + " -> " + std::to_string(dst));
  }
  if (work_ps < Picoseconds{}) throw std::invalid_argument("LinkSharing: negative work");
  check_time(now);
  if (flow >= flows_.size()) flows_.resize(std::size_t{flow} + 1);
  if (flows_[flow].active) {
    throw std::invalid_argument("LinkSharing: flow " + std::to_string(flow) + " is already active");
  }
  const std::size_t nodes = static_cast<std::size_t>(std::max(src, dst)) + 1;
  if (nodes > nodes_.size()) nodes_.resize(nodes);
  FlowState& s = flows_[flow];
  s.src = src;
  s.dst = dst;
  s.remaining_ps = static_cast<double>(work_ps.count());
  s.rate = 0;
  s.last_ps = now;
  link(flow);

  changes.clear();
  if (gige_ != nullptr) {
    update_gige_around(src, dst);
  } else {
    component_.clear();
    ++stamp_;
    gather(flow);
    try {
      compute_rates(0, component_.size());
    } catch (...) {
      unlink(flow);
      throw;
    }
  }
  now_ps_ = now;
  commit(now, changes);
  ++stats_.starts;
  stats_.peak_active = std::max(stats_.peak_active, active_);
}

bool LinkSharing::finish(std::uint32_t flow, std::uint64_t version, Picoseconds now,
                         std::vector<Change>& changes) {
  changes.clear();
  if (!is_active(flow) || flows_[flow].version != version) {
    ++stats_.stale_finishes;
    return false;
  }
  check_time(now);
  unlink(flow);

  // Removing the flow may split its component in two: the part through its source node's
  // other outgoing flows and the part through its destination's other incoming flows. Each is
  // passed to the model on its own (as a whole-set evaluation would treat it).
  if (gige_ != nullptr) {
    update_gige_around(flows_[flow].src, flows_[flow].dst);
    now_ps_ = now;
    commit(now, changes);
    ++stats_.finishes;
    return true;
  }
  const auto src = static_cast<std::size_t>(flows_[flow].src);
  const auto dst = static_cast<std::size_t>(flows_[flow].dst);
  component_.clear();
  ++stamp_;
  const auto& out = nodes_[src].out.flows;
  const auto& in = nodes_[dst].in.flows;
  if (!out.empty()) gather(out.front());
  const std::size_t split = component_.size();
  if (!in.empty() && flows_[in.front()].mark != stamp_) gather(in.front());
  try {
    if (split > 0) compute_rates(0, split);
    if (component_.size() > split) compute_rates(split, component_.size());
  } catch (...) {
    link(flow);
    throw;
  }
  now_ps_ = now;
  commit(now, changes);
  ++stats_.finishes;
  return true;
}

}  // namespace commgauge::sim
