#pragma once
// Contention on the nodes' network links, for the simulator (seed 003's bandwidth sharing over
// time). Every node has one outgoing and one incoming link; the inter-node transfers of
// different ranks share them. Sharing stretches only the transfer term (k-1)G of a message: the
// caller hands that term in as `work_ps` (picoseconds at full rate), and a transfer proceeds at
// a rate r in (0, 1] (1 = alone) that a model::SharingModel (fair, gige, myrinet) gives the set
// of active transfers; rates are recomputed whenever that set changes, as seed 003's simulator
// and model::run_to_completion do.
//
// Incremental: two flows conflict when they share a source node or a destination node (the
// shared outgoing or incoming link). The rates of one connected component of this conflict
// graph depend on that component only, for all three models:
//  * fair: max-min fairness decomposes over independent sets of links;
//  * gige (seed 003 Definition 1): the penalty of c = (s -> d) reads Delta_o(s), Delta_i(d), and
//    for every f in C_o (same source) Delta_i(dest f), for every f in C_i (same destination)
//    Delta_o(source f). Delta_i(x) counts the flows into x, each of which shares x with f and so
//    is in c's component; likewise Delta_o. Nothing outside the component is read, although a
//    flow two hops away (sharing no node with c) can change c's penalty;
//  * myrinet (seed 003 §V-B): the sets of communication states are enumerated per component,
//    and the minimum is over the flows of the same source node, inside the component.
// So a start or a finish recomputes only the component(s) it touches, found by a search over
// per-node lists of outgoing and incoming flows: the cost grows with the component, not with
// the number of active flows. GigE goes further: a start or finish of s -> d changes only the
// inputs of the flows out of s, into d, out of the sources of flows into d and into the
// destinations of flows out of s, and each of those is evaluated from the node lists' degrees
// (GigeModel::penalty): the cost is bounded by the nodes' degrees even when the whole machine is
// one component (a halo exchange on every node).

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "model/cost.hpp"
#include "model/sharing.hpp"

namespace commgauge::sim {

using model::Picoseconds;

class LinkSharing {
 public:
  /// Throws std::invalid_argument if `model` is null.
  explicit LinkSharing(std::unique_ptr<model::SharingModel> model);

  /// A flow whose predicted end changed: the caller schedules an event at `end` carrying
  /// `version`; events carrying an older version of the flow are then stale.
  struct Change {
    std::uint32_t flow;
    Picoseconds end;
    std::uint64_t version;
  };

  struct Stats {
    std::uint64_t starts = 0;
    std::uint64_t finishes = 0;          ///< accepted finish() calls
    std::uint64_t stale_finishes = 0;    ///< finish() calls rejected as stale
    std::uint64_t recomputations = 0;    ///< SharingModel::rates calls (one per component)
    std::uint64_t flows_recomputed = 0;  ///< sum of the sizes of the components passed
    std::uint64_t changes = 0;           ///< Change records reported
    std::size_t largest_component = 0;   ///< flows, of any component passed to the model
    std::size_t peak_active = 0;
  };

  /// A transfer of `work_ps` picoseconds at full rate from node `src` to node `dst` starts at
  /// `now`. `flow` is the caller's id: dense (storage grows to the largest id), reused after
  /// finish. Node ids are dense and >= 0 (storage grows to the largest node id). `changes` is
  /// cleared, then receives every flow (the new one included) whose predicted end changed.
  /// Throws std::invalid_argument on a bad call (src == dst, negative node or work, flow already
  /// active, time before the previous call's). The model's errors (e.g. InputError from the
  /// Myrinet enumeration limit) propagate and leave this object as it was before the call.
  void start(std::uint32_t flow, int src, int dst, Picoseconds work_ps, Picoseconds now,
             std::vector<Change>& changes);

  /// The caller's event for (flow, version) fires at `now`. Returns false (and does nothing) if
  /// the flow is not active or `version` is not its current one: ignore the event. Otherwise
  /// the flow is removed at `now`, whatever work it has left (so calling it before the
  /// predicted end cancels the transfer), the remaining flows of its component are
  /// recomputed, and `changes` (cleared first) receives those whose predicted end changed.
  /// Model errors propagate and leave this object as it was.
  bool finish(std::uint32_t flow, std::uint64_t version, Picoseconds now,
              std::vector<Change>& changes);

  std::size_t active() const { return active_; }
  bool is_active(std::uint32_t flow) const { return flow < flows_.size() && flows_[flow].active; }
  /// Accessors of an active flow (std::out_of_range otherwise).
  double rate(std::uint32_t flow) const { return checked(flow).rate; }
  Picoseconds end(std::uint32_t flow) const { return checked(flow).end_ps; }
  std::uint64_t version(std::uint32_t flow) const { return checked(flow).version; }
  model::Flow endpoints(std::uint32_t flow) const { return {checked(flow).src, checked(flow).dst}; }
  /// Work left at full rate at time `now` (>= the last call's time), in picoseconds.
  double remaining_ps(std::uint32_t flow, Picoseconds now) const;
  /// The active flow ids, ascending. Scans all ids: for tests and reports, not the hot path.
  std::vector<std::uint32_t> active_flows() const;

  const Stats& stats() const { return stats_; }
  const model::SharingModel& model() const { return *model_; }

 private:
  struct FlowState {
    int src = 0;
    int dst = 0;
    double remaining_ps = 0;  ///< work left at full rate, as of last_ps
    double rate = 0;          ///< 0 while being inserted (so its first rate always differs)
    Picoseconds last_ps{};
    Picoseconds end_ps{};
    std::uint64_t version = 0;
    std::uint64_t mark = 0;     ///< search stamp
    std::uint32_t out_pos = 0;  ///< index in nodes_[src].out.flows
    std::uint32_t in_pos = 0;   ///< index in nodes_[dst].in.flows
    bool active = false;
  };

  const FlowState& checked(std::uint32_t flow) const;
  void check_time(Picoseconds now) const;
  void link(std::uint32_t flow);
  void unlink(std::uint32_t flow);
  /// Appends the component of `seed` to component_ (flows marked with stamp_).
  void gather(std::uint32_t seed);
  /// Model rates for component_[begin, end), into new_rate_ (same indices).
  void compute_rates(std::size_t begin, std::size_t end);
  /// Applies new_rate_ to component_ at `now` and reports the flows whose rate changed.
  void commit(Picoseconds now, std::vector<Change>& changes);
  /// GigE: new rates for the flows whose Definition-1 inputs a change of src -> dst touched.
  void update_gige_around(int src, int dst);

  std::unique_ptr<model::SharingModel> model_;
  const model::GigeModel* gige_ = nullptr;  ///< model_, when it is GigE (local updates)
  std::unordered_map<std::uint64_t, double> pair_rate_;  ///< (src, dst) -> rate, per update
  std::vector<FlowState> flows_;                         ///< by flow id
  /// One direction of a node's network link.
  struct Link {
    std::vector<std::uint32_t> flows;  ///< the active flows using it
    std::uint64_t mark = 0;            ///< search and relabelling stamp
    int label = 0;                     ///< canonical label (compute_rates)
  };
  /// Both directions together: one node's state is one or two cache lines, which matters
  /// when a large machine's nodes are touched in scattered order.
  struct Node {
    Link out;
    Link in;
  };
  std::vector<Node> nodes_;  ///< by node id
  std::uint64_t stamp_ = 0;
  std::uint64_t next_version_ = 1;
  Picoseconds now_ps_;  ///< the latest accepted call's time (calls come in time order)
  std::size_t active_ = 0;
  Stats stats_;
  // Scratch, kept to avoid allocating per call.
  std::vector<std::uint32_t> component_;
  std::vector<double> new_rate_;
  std::vector<model::Flow> sub_;
};

}  // namespace commgauge::sim
