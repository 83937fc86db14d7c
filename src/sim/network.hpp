#pragma once
// The simulated network: per link class (intra_node, inter_node) the model chosen on the
// command line, evaluated through the one cost function (model/cost.hpp), and the node of every
// rank. Model `none` makes every message free: the baseline that shows what each model adds.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/cost.hpp"
#include "model/models.hpp"
#include "sim/cluster.hpp"

namespace commgauge::sim {

using model::MessageCost;
using model::Picoseconds;

/// The model names `--model` accepts (loggp, loggps, loggpo from the registry, and none).
std::vector<std::string> simulation_model_names();

class Network {
 public:
  /// `model_name` is none or a registry model; `links` maps a profile class name to its link.
  /// The classes the cluster names must be present unless every rank pair stays in one class.
  Network(const std::string& model_name, const std::map<std::string, model::LinkParams>& links,
          Cluster cluster, std::vector<std::uint32_t> node_of_rank);

  const std::string& model_name() const { return model_name_; }
  const Cluster& cluster() const { return cluster_; }
  std::uint32_t node(std::int32_t rank) const {
    return node_of_rank_[static_cast<std::size_t>(rank)];
  }
  bool same_node(std::int32_t a, std::int32_t b) const { return node(a) == node(b); }
  /// What a message of `bytes` from `source` to `destination` costs, its send buffer starting
  /// `page_offset_bytes` bytes past a page's start (model::CostModel::message); one a rank sends
  /// itself costs the same-node class's measured self message where the profile has it.
  MessageCost message(std::int32_t source, std::int32_t destination, std::uint64_t bytes,
                      std::uint64_t page_offset_bytes) const {
    if (!models_[0] && !models_[1]) return none_cost(bytes);
    const model::CostModel& cost = model_for(source, destination).cost();
    if (source == destination && cost.has_self_message()) [[unlikely]]
      return cost.self_message(bytes);
    return cost.message(bytes, page_offset_bytes);
  }
  /// A message's protocol flags (rendezvous, acknowledged, pulled), which no buffer start moves.
  MessageCost protocol(std::int32_t source, std::int32_t destination, std::uint64_t bytes) const {
    return message(source, destination, bytes, model::kUnknownPageOffset);
  }
  /// What a failed poll (a Test/Probe call that finds nothing) costs: the profile's poll_us of
  /// the same-node class (else the other class), 0 if not measured or under model none.
  model::Picoseconds failed_poll() const { return failed_poll_; }
  /// The local work of making a communicator (comm_create_us, from the same class as the poll
  /// cost), 0 if not measured or under model none.
  model::Picoseconds comm_creation() const { return comm_creation_; }
  /// Freeing one (comm_free_us), 0 if not measured or under model none.
  model::Picoseconds comm_release() const { return comm_release_; }
  /// A collective call's own cost (collective_call_us, from the same class as the poll cost),
  /// 0 if not measured or under model none.
  model::Picoseconds collective_call() const { return collective_call_; }
  /// A process's first call of a function (first_call_us, from the same class as the poll
  /// cost): the bit of a rank's mask that marks it done, and what it costs more, or no bit (-1)
  /// for a function with no first-call cost (or model none).
  int first_call_bit(std::uint32_t function) const {
    return function < first_call_bit_.size() ? first_call_bit_[function] : -1;
  }
  model::Picoseconds first_call(int bit) const {
    return first_call_ps_[static_cast<std::size_t>(bit)];
  }
  /// A collective step's local work (reduce_us_per_byte, copy_us_per_byte of the same class as
  /// the poll cost): combining `reduce_bytes` (and, if any, reduce_call_us once: the step calls
  /// the operation once) and copying `copy_bytes`; 0 if not measured or
  /// under model none. `into_sent_rendezvous`: the combination is written into the buffer the
  /// step has just sent as a rendezvous message (reduce_into_sent_us_per_byte, where measured).
  model::Picoseconds local_work(std::uint64_t reduce_bytes, std::uint64_t copy_bytes,
                                bool into_sent_rendezvous = false) const;
  /// A copy of `bytes` into a buffer a peer has pulled as a rendezvous message
  /// (copy_into_sent_us_per_byte where measured, else copy_us_per_byte); 0 under model none.
  model::Picoseconds copy_into_sent(std::uint64_t bytes) const;
  /// A collective's copy of `bytes` of the caller's own data where the rank's messages in that
  /// call are in a rendezvous range: bytes x copy_after_rendezvous_us_per_byte, never below the
  /// warm copy (where measured, else the warm copy); 0 under model none.
  model::Picoseconds copy_after_rendezvous(std::uint64_t bytes) const;
  bool charges_copy_after_rendezvous() const { return copy_after_rendezvous_ps_per_byte_ > 0; }
  /// Whether copy_into_sent costs more than a copy (measured): the engine tracks what each
  /// rank's last collective left pulled only then.
  bool charges_copy_into_sent() const { return copy_into_sent_ps_per_byte_ > 0; }
  /// What a pulled transfer of `bytes` its sender has just written costs beyond the model's
  /// (k-1)G: bytes x written_send_us_per_byte of the pair's link class (0 if not measured or
  /// under model none).
  model::Picoseconds written_data(std::int32_t source, std::int32_t destination,
                                  std::uint64_t bytes) const;
  /// What a pulled transfer of `bytes` into the block its receiver sent earlier in the call
  /// costs beyond the model's: bytes x recv_into_sent_us_per_byte of the pair's class.
  model::Picoseconds into_sent(std::int32_t source, std::int32_t destination,
                               std::uint64_t bytes) const;
  /// What a receive from `source` on `destination` costs more for `bytes` of its buffer in pages
  /// its process had never touched (trace::Event::fresh_bytes x the pair's class's
  /// fresh_memory_us_per_byte: the faults come with the way that class writes the data, a
  /// single copy or the kernel's socket reads). 0 if not measured or under model none.
  model::Picoseconds fresh_memory(std::int32_t source, std::int32_t destination,
                                  std::uint64_t bytes) const;
  /// Whether a message of some range costs o_x when it crosses one the other way (any class's
  /// model): the engine tracks each rank's latest send per peer only then.
  bool charges_crossing() const { return charges_crossing_; }
  /// The largest message size each class's link was measured at (a profile's
  /// measured_max_bytes), by class name; a class not named is not known (nothing counted).
  void set_measured_max_bytes(const std::map<std::string, std::uint64_t>& by_class);
  /// Whether a message of `bytes` between the two ranks is larger than the largest size its
  /// class was measured at: its cost is the last range's, extrapolated.
  bool beyond_measured(std::int32_t source, std::int32_t destination, std::uint64_t bytes) const {
    const std::uint64_t largest = measured_max_bytes_[same_node(source, destination) ? 0 : 1];
    return largest > 0 && bytes > largest;
  }
  /// The link class name used between the two ranks.
  const std::string& link_class(std::int32_t source, std::int32_t destination) const;
  /// The model of a class (nullptr for model none).
  const model::CommModel* model_of_class(bool same_node) const {
    return models_[same_node ? 0 : 1] ? &*models_[same_node ? 0 : 1] : nullptr;
  }

 private:
  static MessageCost none_cost(std::uint64_t bytes) {
    MessageCost m;
    m.bytes = bytes;
    return m;
  }
  const model::CommModel& model_for(std::int32_t source, std::int32_t destination) const;
  /// bytes x the pair's class's `rate` (us per byte), checked; `what` names it in the error.
  model::Picoseconds per_byte_extra(std::int32_t source, std::int32_t destination,
                                    std::uint64_t bytes, double model::LinkParams::*rate,
                                    const char* what) const;

  std::string model_name_;
  Cluster cluster_;
  std::vector<std::uint32_t> node_of_rank_;
  std::optional<model::CommModel> models_[2];  ///< [0] same node, [1] different nodes
  std::string missing_[2];                     ///< why a class has no model (for the error)
  model::Picoseconds failed_poll_{};
  model::Picoseconds comm_creation_{};
  model::Picoseconds comm_release_{};
  model::Picoseconds collective_call_{};
  std::vector<std::int8_t> first_call_bit_;        ///< by function id; -1: none
  std::vector<model::Picoseconds> first_call_ps_;  ///< by bit
  std::uint64_t measured_max_bytes_[2] = {0, 0};   ///< [0] same node, [1] different nodes
  bool charges_crossing_ = false;
  double reduce_ps_per_byte_ = 0, copy_ps_per_byte_ = 0, reduce_into_sent_ps_per_byte_ = 0;
  double reduce_call_ps_ = 0;
  double copy_into_sent_ps_per_byte_ = 0;
  double copy_after_rendezvous_ps_per_byte_ = 0;
};

}  // namespace commgauge::sim
