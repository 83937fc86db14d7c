#pragma once
// The LogGP family as parameter types and as models looked up by name. Every model is a view of
// a link (LinkParams) evaluated by the one cost function and the closed forms, so the simulator
// can use any of them through the same interface.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/closed_forms.hpp"
#include "model/cost.hpp"
#include "model/link_params.hpp"

namespace commgauge::model {

// ---- parameter types ------------------------------------------------------------------------

/// seed 000 Table 2: one LogGP parameter set per protocol range.
struct LogGPRange {
  std::uint64_t from_bytes = 1;
  double overhead_us = 0;      ///< o
  double gap_us = 0;           ///< g
  double gap_per_byte_us = 0;  ///< G
};
struct LogGP {
  double latency_us = 0;  ///< L (the model latency: one-way = o + L + (k-1)G + o)
  std::vector<LogGPRange> ranges;
};

/// seed 004 Table 5: short (k < s) and long (k >= s) per-byte parameters, thresholds s and S.
struct LogGPS {
  double latency_us = 0;               ///< L
  double overhead_us = 0;              ///< o'
  double send_per_byte_short_us = 0;   ///< O_s for k < s
  double recv_per_byte_short_us = 0;   ///< O_r for k < s
  double gap_per_byte_short_us = 0;    ///< G for k < s
  double send_per_byte_long_us = 0;    ///< O_s for k >= s
  double recv_per_byte_long_us = 0;    ///< O_r for k >= s
  double gap_per_byte_long_us = 0;     ///< G for k >= s
  std::uint64_t short_bytes = 0;       ///< s: first size of the long (eager) protocol
  std::uint64_t rendezvous_bytes = 0;  ///< S: first size of the rendezvous protocol
};

/// seed 001 Table 1: LogGPO.
struct LogGPO {
  double latency_us = 0;               ///< L
  double gap_per_byte_us = 0;          ///< G
  std::uint64_t rendezvous_bytes = 0;  ///< S (commgauge: rendezvous for k >= S; seed 001: K > S)
  double control_us = 0;               ///< O': processing a control message
  double init_us = 0;                  ///< Oi(k) = init_us + k init_per_byte_us
  double init_per_byte_us = 0;
  double copy_us = 0;  ///< Oc(k) = copy_us + k copy_per_byte_us
  double copy_per_byte_us = 0;
  Progress progress = Progress::dependent;               ///< Scp: DCP or ICP
  TransferMechanism mechanism = TransferMechanism::RAT;  ///< Tm of the rendezvous protocol
};

/// Links for the cost function. LogGP: o_s = o_r = o, no per-byte overheads, no rendezvous.
LinkParams to_link(const LogGP& p);
/// LogGPS: [1, s) short, [s, S) long eager, [S, inf) long rendezvous; o_s = o_r = o', g = 0.
/// The whole message uses its range's G ((k-1) G), not seed 004's cumulative s G_s + (k-s) G_l.
LinkParams to_link(const LogGPS& p);
/// LogGPO: eager [1, S) with o_s + k O_s = Oi(k), o_r + k O_r = Oc(k); rendezvous [S, inf) with
/// control overhead O' and progress Scp. Only DCP with RAT and ICP with RTA have formulas in
/// seed 001; any other combination throws InputError.
LinkParams to_link(const LogGPO& p);

/// Seed 001's accepted progress/transfer combinations for a rendezvous range.
bool loggpo_combination_supported(Progress scp, TransferMechanism tm);
/// The transfer mechanism the cost convention implies for a range: T (eager), RAT (dependent
/// rendezvous), RTA (independent rendezvous).
TransferMechanism implied_mechanism(const LinkRange& r);

// ---- models by name -------------------------------------------------------------------------

struct ModelInfo {
  std::string name;  ///< loggp, loggps, loggpo
  std::string description;
  std::string citation;
};
/// The registry of models, in its order: name, description, citation. Every list of models
/// (--help, errors, `--model all`, JSON, the README's table) is read from it.
const std::vector<ModelInfo>& model_infos();

/// "loggp, loggps or loggpo" (`last_separator` before the last name).
std::string model_names(std::string_view last_separator = " or ");

class CommModel {
 public:
  CommModel(std::string name, const LinkParams& link) : name_(std::move(name)), cost_(link) {}
  const std::string& name() const { return name_; }
  const CostModel& cost() const { return cost_; }
  const LinkParams& link() const { return cost_.link(); }

  Picoseconds one_way(std::uint64_t k) const { return model::one_way(cost_, k); }
  Picoseconds round_trip(std::uint64_t k) const { return model::round_trip(cost_, k); }
  Picoseconds prtt(std::uint32_t n, Picoseconds d, std::uint64_t k) const {
    return model::prtt(cost_, n, d, k);
  }
  OverlapCosts isend_compute_wait(std::uint64_t k, Picoseconds comp, Picoseconds t_r) const {
    return model::isend_compute_wait(cost_, k, comp, t_r);
  }

 private:
  std::string name_;
  CostModel cost_;
};

/// The model `name` of a measured or hand-written link:
/// * loggp: plain LogGP (seed 000): constant o_s and o_r, g and G as seed 000's tool fits them
///   (the range's LoggpView, when the link has one), no per-byte overheads, no rendezvous
///   hand-shake;
/// * loggps: the link as it is, with the rendezvous hand-shake (seed 004), progress taken as
///   independent (LogGPS does not model overlap);
/// * loggpo: the link as it is, progress per range (Scp) and the transfer mechanism it implies
///   (seed 001).
/// Throws InputError for an unknown name.
CommModel make_model(const std::string& name, const LinkParams& link);

}  // namespace commgauge::model
