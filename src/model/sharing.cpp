#include "model/sharing.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::model {

std::vector<Flow> flows_of(const Scheme& s) {
  std::vector<Flow> f;
  for (const auto& c : s.communications)
    f.push_back({c.source, c.destination});
  return f;
}

std::vector<double> SharingModel::penalties(std::span<const Flow> active) const {
  std::vector<double> p = rates(active);
  for (double& x : p)
    x = 1 / x;
  return p;
}

std::vector<double> SharingModel::scheme_penalties(const Scheme& s) const {
  const std::vector<Flow> f = flows_of(s);
  return penalties(f);
}

std::vector<double> FairSharing::scheme_penalties(const Scheme& s) const {
  return run_to_completion(*this, s);
}

// ---- fair: max-min by progressive filling ---------------------------------------------------

std::vector<double> FairSharing::rates(std::span<const Flow> active) const {
  const std::size_t n = active.size();
  std::vector<double> rate(n, 0);
  std::vector<bool> frozen(n, false);
  std::map<std::pair<int, int>, double> capacity;  // (node, 0 out / 1 in) -> remaining
  auto out = [](const Flow& f) { return std::make_pair(f.source, 0); };
  auto in = [](const Flow& f) { return std::make_pair(f.destination, 1); };
  for (const auto& f : active) {
    capacity[out(f)] = 1;
    capacity[in(f)] = 1;
  }
  constexpr double kEps = 1e-12;
  for (std::size_t left = n; left > 0;) {
    std::map<std::pair<int, int>, int> users;
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      ++users[out(active[i])];
      ++users[in(active[i])];
    }
    double step = std::numeric_limits<double>::infinity();
    for (const auto& [r, k] : users)
      step = std::min(step, capacity[r] / k);
    for (std::size_t i = 0; i < n; ++i) {
      if (!frozen[i]) rate[i] += step;
    }
    for (const auto& [r, k] : users)
      capacity[r] -= step * k;
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      if (capacity[out(active[i])] <= kEps || capacity[in(active[i])] <= kEps) {
        frozen[i] = true;
        --left;
      }
    }
  }
  return rate;
}

// ---- gige: seed 003 Definition 1 ------------------------------------------------------------

std::vector<double> GigeModel::model_penalties(std::span<const Flow> active) const {
  // Definition 1 reads per source the largest in-degree among its flows' destinations and how
  // many flows reach it, per destination the same with out-degrees: a few linear passes over
  // nodes numbered densely (a pass per flow over all flows was quadratic: 9.4 s for 100,000
  // communications among 25,000 nodes; the whole share --predict now takes 0.35 s).
  std::vector<int> node_ids;
  node_ids.reserve(2 * active.size());
  for (const auto& f : active) {
    node_ids.push_back(f.source);
    node_ids.push_back(f.destination);
  }
  std::sort(node_ids.begin(), node_ids.end());
  node_ids.erase(std::unique(node_ids.begin(), node_ids.end()), node_ids.end());
  const auto dense = [&](int node) {
    return static_cast<std::size_t>(std::lower_bound(node_ids.begin(), node_ids.end(), node) -
                                    node_ids.begin());
  };
  std::vector<std::size_t> src(active.size()), dst(active.size());
  std::vector<int> d_out(node_ids.size(), 0), d_in(node_ids.size(), 0);
  for (std::size_t i = 0; i < active.size(); ++i) {
    src[i] = dense(active[i].source);
    dst[i] = dense(active[i].destination);
    ++d_out[src[i]];
    ++d_in[dst[i]];
  }
  struct Members {
    int max_degree = 0, card = 0;
    void add(int degree) {
      if (degree > max_degree) {
        max_degree = degree;
        card = 0;
      }
      card += degree == max_degree ? 1 : 0;
    }
  };
  std::vector<Members> of_source(node_ids.size()), of_destination(node_ids.size());
  for (std::size_t i = 0; i < active.size(); ++i) {
    of_source[src[i]].add(d_in[dst[i]]);
    of_destination[dst[i]].add(d_out[src[i]]);
  }
  std::vector<double> p(active.size());
  for (std::size_t i = 0; i < active.size(); ++i) {
    const Members& o = of_source[src[i]];
    const Members& in = of_destination[dst[i]];
    p[i] = penalty(d_out[src[i]], d_in[dst[i]], o.max_degree, o.card, in.max_degree, in.card);
  }
  return p;
}

// C_o: same source; its strongly slow members C_o^m have the largest in-degree Delta_i.
// C_i: same destination; its members with the largest out-degree Delta_o.
double GigeModel::penalty(int delta_o, int delta_i, int max_in, int card_o, int max_out,
                          int card_i) const {
  const double out = delta_o;
  const double in = delta_i;
  double p_o = 1, p_i = 1;
  if (delta_o > 1) {
    p_o = delta_i == max_in ? out * p_.beta * (1 + p_.gamma_o * (out - card_o))
                            : out * p_.beta * (1 - p_.gamma_o / card_o);
  }
  if (delta_i > 1) {
    p_i = delta_o == max_out ? in * p_.beta * (1 + p_.gamma_i * (in - card_i))
                             : in * p_.beta * (1 - p_.gamma_i / card_i);
  }
  return std::max(p_o, p_i);
}

std::vector<double> GigeModel::rates(std::span<const Flow> active) const {
  std::vector<double> r = model_penalties(active);
  for (double& x : r)
    x = rate_of_penalty(x);
  return r;
}

// ---- myrinet: maximal sets of communication states -------------------------------------------

StateSets enumerate_state_sets(std::span<const Flow> flows, std::uint64_t set_limit) {
  const std::size_t n = flows.size();
  auto conflict = [&](std::size_t a, std::size_t b) {
    return flows[a].source == flows[b].source || flows[a].destination == flows[b].destination;
  };
  StateSets out;
  out.emission.assign(n, 0);
  // Bron-Kerbosch with pivoting on the compatibility graph (maximal cliques of "no conflict"
  // are the maximal sets of flows that can send together).
  std::vector<std::size_t> r;
  std::function<void(std::vector<std::size_t>, std::vector<std::size_t>)> expand =
      [&](std::vector<std::size_t> p, std::vector<std::size_t> x) {
        if (p.empty() && x.empty()) {
          if (out.sets.size() >= set_limit) {
            throw InputError(fmt::format(
                "myrinet model: more than {} sets of communication states for {} communications "
                "(the count grows factorially on dense schemes); the model cannot be evaluated "
                "exactly here",
                set_limit, n));
          }
          std::vector<std::size_t> set = r;
          std::sort(set.begin(), set.end());
          for (std::size_t i : set)
            ++out.emission[i];
          out.sets.push_back(std::move(set));
          return;
        }
        // Pivot: the vertex of P u X compatible with the most of P.
        std::size_t pivot = p.empty() ? x.front() : p.front();
        std::size_t best = 0;
        for (auto* v : {&p, &x}) {
          for (std::size_t u : *v) {
            std::size_t count = 0;
            for (std::size_t w : p)
              count += (w != u && !conflict(u, w)) ? 1 : 0;
            if (count >= best) {
              best = count;
              pivot = u;
            }
          }
        }
        const std::vector<std::size_t> candidates = p;
        for (std::size_t v : candidates) {
          if (v != pivot && !conflict(v, pivot)) continue;  // compatible with the pivot: skip
          std::vector<std::size_t> np, nx;
          for (std::size_t w : p) {
            if (w != v && !conflict(v, w)) np.push_back(w);
          }
          for (std::size_t w : x) {
            if (w != v && !conflict(v, w)) nx.push_back(w);
          }
          r.push_back(v);
          expand(np, nx);
          r.pop_back();
          p.erase(std::find(p.begin(), p.end(), v));
          x.push_back(v);
        }
      };
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  expand(all, {});
  std::sort(out.sets.begin(), out.sets.end());
  return out;
}

MyrinetModel::Breakdown MyrinetModel::breakdown(std::span<const Flow> active) const {
  const std::size_t n = active.size();
  // Connected components of the conflict graph (union-find).
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::function<std::size_t(std::size_t)> root = [&](std::size_t i) {
    return parent[i] == i ? i : parent[i] = root(parent[i]);
  };
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) {
      if (active[a].source == active[b].source || active[a].destination == active[b].destination) {
        parent[root(a)] = root(b);
      }
    }
  }
  Breakdown out;
  out.sets_in_component.assign(n, 0);
  out.emission.assign(n, 0);
  out.minimum.assign(n, 0);
  out.penalty.assign(n, 0);
  std::map<std::size_t, std::vector<std::size_t>> components;
  for (std::size_t i = 0; i < n; ++i)
    components[root(i)].push_back(i);
  for (const auto& [r, members] : components) {
    std::vector<Flow> sub;
    for (std::size_t i : members)
      sub.push_back(active[i]);
    const StateSets s = enumerate_state_sets(sub, limit_);
    for (std::size_t k = 0; k < members.size(); ++k) {
      out.sets_in_component[members[k]] = s.sets.size();
      out.emission[members[k]] = s.emission[k];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t m = out.emission[i];
    for (std::size_t j = 0; j < n; ++j) {
      if (active[j].source == active[i].source) m = std::min(m, out.emission[j]);
    }
    out.minimum[i] = m;
    out.penalty[i] = static_cast<double>(out.sets_in_component[i]) / static_cast<double>(m);
  }
  return out;
}

std::vector<double> MyrinetModel::rates(std::span<const Flow> active) const {
  std::vector<std::pair<int, int>> signature;
  for (const auto& f : active)
    signature.emplace_back(f.source, f.destination);
  auto it = memo_.find(signature);
  if (it == memo_.end()) it = memo_.emplace(signature, breakdown(active).penalty).first;
  std::vector<double> r = it->second;
  for (double& x : r)
    x = std::min(1.0, 1 / x);
  return r;
}

std::unique_ptr<SharingModel> make_sharing_model(const std::string& name, const GigeParams& gige) {
  if (name == "fair") return std::make_unique<FairSharing>();
  if (name == "gige") return std::make_unique<GigeModel>(gige);
  if (name == "myrinet") return std::make_unique<MyrinetModel>();
  throw InputError("model",
                   fmt::format("unknown sharing model \"{}\" (fair, gige or myrinet)", name));
}

std::vector<double> run_to_completion(const SharingModel& m, const Scheme& s) {
  const std::size_t n = s.communications.size();
  std::vector<double> remaining(n), done(n, 0);
  std::vector<std::size_t> active(n);
  for (std::size_t i = 0; i < n; ++i)
    remaining[i] = static_cast<double>(s.communications[i].bytes);
  std::iota(active.begin(), active.end(), 0);
  double now = 0;
  while (!active.empty()) {
    std::vector<Flow> flows;
    for (std::size_t i : active)
      flows.push_back({s.communications[i].source, s.communications[i].destination});
    const std::vector<double> rate = m.rates(flows);
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < active.size(); ++k)
      step = std::min(step, remaining[active[k]] / rate[k]);
    now += step;
    std::vector<std::size_t> still;
    for (std::size_t k = 0; k < active.size(); ++k) {
      const std::size_t i = active[k];
      remaining[i] -= step * rate[k];
      // Relative tolerance: the ones that finish at this event (rounding aside).
      if (remaining[i] <= 1e-9 * static_cast<double>(s.communications[i].bytes)) {
        done[i] = now;
      } else {
        still.push_back(i);
      }
    }
    active = std::move(still);
  }
  for (std::size_t i = 0; i < n; ++i)
    done[i] /= static_cast<double>(s.communications[i].bytes);
  return done;
}

double fit_beta(const std::vector<std::pair<int, double>>& samples) {
  if (samples.empty()) throw InputError("GigE fit: no simple outgoing conflict was measured");
  double sum = 0;
  for (const auto& [degree, penalty] : samples)
    sum += penalty / degree;
  return sum / static_cast<double>(samples.size());
}

std::pair<double, double> fit_gammas(const Scheme& s, const std::vector<double>& measured,
                                     double beta) {
  const std::vector<Flow> flows = flows_of(s);
  const auto d_out = s.out_degree();
  const auto d_in = s.in_degree();
  std::vector<double> go, gi;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const Flow& c = flows[i];
    int max_in = 0, card_o = 0, max_out = 0, card_i = 0;
    for (const auto& f : flows) {
      if (f.source == c.source) max_in = std::max(max_in, d_in[f.destination]);
      if (f.destination == c.destination) max_out = std::max(max_out, d_out[f.source]);
    }
    for (const auto& f : flows) {
      if (f.source == c.source && d_in[f.destination] == max_in) ++card_o;
      if (f.destination == c.destination && d_out[f.source] == max_out) ++card_i;
    }
    const double delta_o = d_out[c.source], delta_i = d_in[c.destination];
    const bool out_nonmember = delta_o > 1 && d_in[c.destination] != max_in;
    const bool in_nonmember = delta_i > 1 && d_out[c.source] != max_out;
    // Use a communication only where one side alone decides: the other side is uncongested.
    if (out_nonmember && delta_i == 1) go.push_back(card_o * (1 - measured[i] / (delta_o * beta)));
    if (in_nonmember && delta_o == 1) gi.push_back(card_i * (1 - measured[i] / (delta_i * beta)));
  }
  auto mean = [](const std::vector<double>& v) {
    return v.empty() ? -1.0
                     : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  return {mean(go), mean(gi)};
}

}  // namespace commgauge::model
