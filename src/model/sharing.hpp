#pragma once
// Bandwidth-sharing models (seed 003): how concurrent communications slow each other down.
// A model gives the rate of every active flow as a fraction of a node's link bandwidth; the
// penalty of a flow is the inverse. `run_to_completion` runs a scheme with rates recomputed
// whenever a communication finishes, which the simulator does over time.
//
// * fair: max-min fairness over each node's outgoing and incoming link (capacity 1 each) by
//   progressive filling: all unfrozen flows grow together until a link saturates; the flows on
//   it freeze; repeat.
// * gige: seed 003 §V-A, Definition 1: p_o and p_i from the node degrees with beta, gamma_o,
//   gamma_i; p = max(p_o, p_i); the rate is 1/p (at most 1).
// * myrinet: seed 003 §V-B: the maximal sets of communication states (a communication sending
//   forces every communication with the same source or destination to wait), the emission
//   coefficient of a communication (the sets where it sends), the minimum over the outgoing
//   communications of its source node, penalty = number of sets / that minimum. Sets are
//   enumerated exactly per connected component of the conflict graph (the penalty depends on
//   the component only); a component with more than `set_limit` sets is an error: counting
//   maximal sets is #P-hard and grows factorially on dense schemes.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/scheme.hpp"

namespace commgauge::model {

struct Flow {
  int source = 0;
  int destination = 0;
};

std::vector<Flow> flows_of(const Scheme& s);

class SharingModel {
 public:
  virtual ~SharingModel() = default;
  virtual std::string name() const = 0;
  /// Rate of each active flow, in (0, 1].
  virtual std::vector<double> rates(std::span<const Flow> active) const = 0;
  /// The static penalty of each flow of the set (seed 003's prediction): 1 / rate.
  std::vector<double> penalties(std::span<const Flow> active) const;
  /// What the model predicts for a whole scheme: the static penalties (seed 003's GigE and
  /// Myrinet models), or for fair sharing the penalties of running it to completion.
  virtual std::vector<double> scheme_penalties(const Scheme& s) const;
};

class FairSharing final : public SharingModel {
 public:
  std::string name() const override { return "fair"; }
  std::vector<double> rates(std::span<const Flow> active) const override;
  std::vector<double> scheme_penalties(const Scheme& s) const override;
};

/// seed 003 §V-A's parameters; the defaults are the paper's (Figs. 2 and 4).
struct GigeParams {
  double beta = 0.75;
  double gamma_o = 0.115;
  double gamma_i = 0.036;
};

class GigeModel final : public SharingModel {
 public:
  explicit GigeModel(GigeParams p) : p_(p) {}
  std::string name() const override { return "gige"; }
  std::vector<double> rates(std::span<const Flow> active) const override;
  /// Definition 1's p for each flow, before the rate is capped at 1.
  std::vector<double> model_penalties(std::span<const Flow> active) const;
  /// Definition 1's p for one flow c = (s -> d) from what it reads: Delta_o(s), Delta_i(d), the
  /// largest in-degree among the destinations of the flows out of s and how many flows have it
  /// (card_o), the largest out-degree among the sources of the flows into d and how many have it
  /// (card_i).
  double penalty(int delta_o, int delta_i, int max_in, int card_o, int max_out, int card_i) const;
  /// min(1, 1 / p): a flow never goes faster than alone.
  static double rate_of_penalty(double p) { return std::min(1.0, 1 / p); }
  const GigeParams& params() const { return p_; }

 private:
  GigeParams p_;
};

/// The maximal sets of communication states of a set of flows (indices into the flows).
struct StateSets {
  std::vector<std::vector<std::size_t>> sets;  ///< each sorted ascending
  std::vector<std::uint64_t> emission;         ///< per flow: sets where it sends
};

/// Enumerates the maximal sets of flows (of one connected component or of all) where no two
/// share a source or a destination. Throws InputError past `set_limit` sets.
StateSets enumerate_state_sets(std::span<const Flow> flows, std::uint64_t set_limit);

class MyrinetModel final : public SharingModel {
 public:
  explicit MyrinetModel(std::uint64_t set_limit = 1'000'000) : limit_(set_limit) {}
  std::string name() const override { return "myrinet"; }
  std::vector<double> rates(std::span<const Flow> active) const override;
  /// seed 003 Fig. 6's rows for the flows: emission sums, minima per source, penalties.
  struct Breakdown {
    std::vector<std::uint64_t> sets_in_component;
    std::vector<std::uint64_t> emission;
    std::vector<std::uint64_t> minimum;
    std::vector<double> penalty;
  };
  Breakdown breakdown(std::span<const Flow> active) const;

 private:
  std::uint64_t limit_;
  // Penalties memoised by the active set's signature (the simulator asks again and again).
  mutable std::map<std::vector<std::pair<int, int>>, std::vector<double>> memo_;
};

/// `fair`, `gige` (with `gige`), `myrinet`; throws InputError for another name.
std::unique_ptr<SharingModel> make_sharing_model(const std::string& name, const GigeParams& gige);

/// Runs every communication of the scheme from time 0 until it has sent its bytes, at the rates
/// the model gives the set still active (recomputed whenever one finishes). Returns each
/// communication's completion time divided by its time alone (bytes at rate 1): its penalty.
std::vector<double> run_to_completion(const SharingModel& m, const Scheme& s);

/// GigE parameter fitting (seed 003 §V-A): beta = mean of P / Delta_o over simple outgoing
/// conflicts (all communications from one node to distinct otherwise idle nodes).
double fit_beta(const std::vector<std::pair<int, double>>& outgoing_degree_and_penalty);

/// gamma from the communications where Definition 1 makes the non-member branch decisive,
/// P = Delta beta (1 - gamma / card): gamma = card (1 - P / (Delta beta)) (seed 003's
/// gamma_o = 1 - t_a / (3 beta t_ref) is the case Delta = 3, card = 1). Returns (gamma_o,
/// gamma_i), each the mean over the communications that determine it, or -1 if none does.
std::pair<double, double> fit_gammas(const Scheme& s, const std::vector<double>& measured_penalty,
                                     double beta);

}  // namespace commgauge::model
