// The measuring half of loggp: options, interleaved rounds, switch confirmation and bisection.
// The analysis half is loggp_analysis.cpp.

#include "measure/loggp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.hpp"
#include "measure/limits.hpp"
#include "measure/loggp_detail.hpp"
#include "measure/prtt.hpp"
#include "stats/change_detection.hpp"
#include "stats/descriptive.hpp"
#include "stats/floor_shift.hpp"

namespace commgauge::measure {

// ---------------------------------------------------------------------------------------------
// Options

void LoggpOptions::validate() const {
  if (min_size > max_size) {
    throw InputError("min_size",
                     fmt::format("{} is larger than the largest size, {}", min_size, max_size));
  }
  if (n < 2) throw InputError("-n", fmt::format("n must be at least 2 (PRTT(n,.,s)), got {}", n));
  if (delay_us < 0 && delay_us != -1) {
    throw InputError("delay", fmt::format("must be >= 0 us, got {}", delay_us));
  }
  // A delay of 1e308 us reached the fit as a length error (exit 1, a red-team find).
  if (delay_us > kMaxDelay_us)
    throw InputError("delay",
                     fmt::format("must be at most {:g} us, got {}", kMaxDelay_us, delay_us));
  if (!(points_per_octave > 0) || points_per_octave > kMaxPointsPerOctave)
    throw InputError("points_per_octave",
                     fmt::format("must be > 0 and at most {}", kMaxPointsPerOctave));
  if (detector != "joint" && detector != "seed000" && detector != "none") {
    throw InputError("detector",
                     fmt::format("expected joint, seed000 or none, got \"{}\"", detector));
  }
  if (lookahead < 1) throw InputError("lookahead", "must be at least 1");
  if (!(pfact > 0)) throw InputError("pfact", "must be positive");
  if (!(refine_tolerance >= 0) || refine_tolerance >= 1) {
    throw InputError("refine_tolerance", "must be in [0, 1)");
  }
  if (!(ci_target > 0)) throw InputError("ci_target", "must be positive");
  if (min_rounds < 1) throw InputError("min_rounds", "must be at least 1");
  if (max_rounds < min_rounds)
    throw InputError("max_rounds", "must be at least the smallest number of rounds");
  if (!(budget_s >= 0)) throw InputError("budget", "must be >= 0 seconds");
  if (max_messages == 0) throw InputError("max_messages", "must be positive");
  if (max_bytes == 0) throw InputError("max_bytes", "must be positive");
  if (sweep_sizes().size() < 2) throw InputError("sizes", "at least 2 message sizes are needed");
  for (auto h : heldout_sizes) {
    if (h == 0) throw InputError("heldout_sizes", "a held-out size must be at least 1 byte");
  }
  for (const auto& [name, held_out] :
       {std::pair{"heldout_collective_sizes", &heldout_collective_sizes},
        {"heldout_exchange_sizes", &heldout_exchange_sizes}}) {
    for (auto h : *held_out) {
      if (h == 0 || h > (std::uint64_t{1} << 30))
        throw InputError(name, "a held-out size must be 1 B to 1 GiB");
    }
  }
  if (!model::LinkRange::valid_page_bytes(page_bytes))
    throw InputError("page_bytes", fmt::format("must be 0 (by the byte) or a power of two up to "
                                               "1 GiB, got {}",
                                               page_bytes));
}

std::vector<std::uint64_t> LoggpOptions::sweep_sizes() const {
  std::vector<std::uint64_t> out;
  if (!sizes.empty()) {
    out = sizes;
  } else {
    const double lo = static_cast<double>(std::max<std::uint64_t>(min_size, 1));
    const double hi = static_cast<double>(max_size);
    const double step = std::pow(2.0, 1.0 / points_per_octave);
    for (double s = lo; s <= hi * (1 + 1e-12); s *= step) {
      out.push_back(static_cast<std::uint64_t>(std::llround(s)));
    }
    if (out.empty() || out.back() != max_size) out.push_back(max_size);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void to_json(nlohmann::json& j, const LoggpOptions& o) {
  j = {{"min_size", o.min_size},
       {"max_size", o.max_size},
       {"sizes", o.sizes},
       {"points_per_octave", o.points_per_octave},
       {"n", o.n},
       {"delay_us", o.delay_us},
       {"detector", o.detector},
       {"lookahead", o.lookahead},
       {"pfact", o.pfact},
       {"refine", o.refine},
       {"refine_tolerance", o.refine_tolerance},
       {"ci_target", o.ci_target},
       {"min_rounds", o.min_rounds},
       {"max_rounds", o.max_rounds},
       {"budget_s", o.budget_s},
       {"max_messages", o.max_messages},
       {"max_bytes", o.max_bytes},
       {"seed", o.seed},
       {"bootstrap", o.bootstrap},
       {"calibrate", o.calibrate},
       {"heldout_sizes", o.heldout_sizes},
       {"heldout_collective_sizes", o.heldout_collective_sizes},
       {"heldout_exchange_sizes", o.heldout_exchange_sizes},
       {"crossing_exchanges", o.crossing_exchanges},
       {"streams", o.streams},
       {"page_bytes", o.page_bytes}};
}

void from_json(const nlohmann::json& j, LoggpOptions& o) {
  o.min_size = j.at("min_size");
  o.max_size = j.at("max_size");
  o.sizes = j.at("sizes").get<std::vector<std::uint64_t>>();
  o.points_per_octave = j.at("points_per_octave");
  o.n = j.at("n");
  o.delay_us = j.at("delay_us");
  o.detector = j.at("detector");
  o.lookahead = j.at("lookahead");
  o.pfact = j.at("pfact");
  o.refine = j.at("refine");
  o.refine_tolerance = j.at("refine_tolerance");
  o.ci_target = j.at("ci_target");
  o.min_rounds = j.at("min_rounds");
  o.max_rounds = j.at("max_rounds");
  o.budget_s = j.at("budget_s");
  o.max_messages = j.at("max_messages");
  o.max_bytes = j.at("max_bytes");
  o.seed = j.at("seed");
  o.bootstrap = j.at("bootstrap");
  o.calibrate = j.at("calibrate");
  o.heldout_sizes = j.value("heldout_sizes", std::vector<std::uint64_t>{});
  o.heldout_collective_sizes = j.value("heldout_collective_sizes", std::vector<std::uint64_t>{});
  o.heldout_exchange_sizes = j.value("heldout_exchange_sizes", std::vector<std::uint64_t>{});
  o.crossing_exchanges = j.value("crossing_exchanges", true);
  o.streams = j.value("streams", true);
  o.page_bytes = j.value("page_bytes", std::uint64_t{0});  // older documents: by the byte
}

namespace {

using detail::count_above;
using detail::kRelativeFloor;
using detail::no_hand_shake;
using detail::ProbeSample;
using detail::Separation;
using detail::separation;

// ---------------------------------------------------------------------------------------------
// A session: the source's side of one run, with its budgets and its random order.

using Cost = Traffic;

// Messages and bytes of a plan in both directions, its command words included.
Cost cost_of(std::span<const PrttSpec> plan, std::uint32_t reps) {
  Cost c;
  c.messages = 2 + 3.0 * static_cast<double>(plan.size());  // header, entries, acknowledgement
  c.bytes = 8 * c.messages;
  for (const auto& s : plan) {
    const double r = reps;
    if (runs_calls(s.kind)) {
      c.messages += 2 * r * s.n;  // over the pair: s bytes each way per call
      c.bytes += r * s.n * 2 * static_cast<double>(s.bytes);
    } else if (s.kind == PrttKind::stream) {
      c.messages += r * (s.n + 1.0);  // the stream and the 1-byte reply
      c.bytes += r * (s.n * static_cast<double>(s.bytes) + 1);
    } else if (s.kind == PrttKind::send_call) {
      c.messages += r * 2.0 * s.n;  // each send and its 1-byte reply
      c.bytes += r * s.n * (static_cast<double>(s.bytes) + 1);
    } else if (s.kind == PrttKind::late_receiver) {
      c.messages += 3 * r;  // the message, the 1-byte reply, the reported duration
      c.bytes += r * (static_cast<double>(s.bytes) + 9);
    } else {
      const double reported = s.kind == PrttKind::server_delay ? 1 : 0;  // the overshoot
      c.messages += r * (s.n + 1.0 + reported);
      c.bytes += r * ((s.n + 1.0) * static_cast<double>(s.bytes) + 8 * reported);
    }
  }
  return c;
}

class Session {
 public:
  Session(net::Transport& t, const LoggpOptions& o, ProgressSink* progress, std::uint64_t seed)
      : t_(t),
        o_(o),
        progress_(progress),
        rng_(seed),
        start_(std::chrono::steady_clock::now()),
        cap_(full()) {}

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  bool over_time() const { return o_.budget_s > 0 && elapsed() > o_.budget_s; }
  bool affordable(const Cost& c) const {
    return spent_.messages + c.messages <= cap_.messages && spent_.bytes + c.bytes <= cap_.bytes;
  }
  /// Until unlimit(): spend at most 1/parts of what is left.
  void limit_to_share(std::size_t parts) {
    const Cost l = left();
    const double n = static_cast<double>(std::max<std::size_t>(parts, 1));
    cap_ = {spent_.messages + l.messages / n, spent_.bytes + l.bytes / n};
  }
  void unlimit() { cap_ = full(); }
  /// Optional work: runs only within the budgets; otherwise marks the run and returns false.
  bool may_spend(const Cost& c) {
    if (over_time() || !affordable(c)) {
      exhausted_ = true;
      return false;
    }
    return true;
  }
  bool exhausted() const { return exhausted_; }
  /// What the budgets still allow.
  Cost left() const {
    return {std::max(0.0, cap_.messages - spent_.messages),
            std::max(0.0, cap_.bytes - spent_.bytes)};
  }

  std::vector<std::vector<double>> run(std::span<const PrttSpec> plan, std::uint32_t reps = 1,
                                       std::vector<std::vector<double>>* send_us = nullptr) {
    const Cost c = cost_of(plan, reps);
    spent_.messages += c.messages;
    spent_.bytes += c.bytes;
    return prtt_plan(t_, plan, reps, send_us);
  }

  std::mt19937_64& rng() { return rng_; }
  void report(std::string_view label, double fraction) {
    if (progress_) progress_->update(label, std::clamp(fraction, 0.0, 1.0));
  }
  const LoggpOptions& options() const { return o_; }

 private:
  net::Transport& t_;
  const LoggpOptions& o_;
  ProgressSink* progress_;
  std::mt19937_64 rng_;
  std::chrono::steady_clock::time_point start_;
  Cost full() const {
    return {static_cast<double>(o_.max_messages), static_cast<double>(o_.max_bytes)};
  }
  Cost spent_;
  Cost cap_;
  bool exhausted_ = false;
};

// ---------------------------------------------------------------------------------------------
// Rounds

// PRTT(1,0,s) is a single round trip: a cell runs it this many times back to back and keeps the
// median (the first of them follows another cell and may be cold).
constexpr std::uint32_t kSingleReps = 3;

std::array<PrttSpec, 4> specs_of(const LoggpPoint& p, std::uint32_t n) {
  return {PrttSpec{PrttKind::client_delay, 1, p.bytes, 0},
          PrttSpec{PrttKind::client_delay, n, p.bytes, 0},
          PrttSpec{PrttKind::client_delay, n, p.bytes, p.delay_us},
          PrttSpec{PrttKind::server_delay, n, p.bytes, p.delay_us}};
}

PrttSpec heldout_spec(const CellSeries& h) {
  const std::uint32_t n = runs_calls(h.kind)              ? kHeldOutCollectiveCalls
                          : h.kind == PrttKind::stream    ? kStreamMessages
                          : h.kind == PrttKind::send_call ? kSendCallMessages
                                                          : 1;
  return {h.kind, n, h.bytes, 0};
}

Cost round_cost(const std::vector<LoggpPoint>& pts, const std::vector<std::size_t>& which,
                std::uint32_t n, std::span<const CellSeries> heldout = {},
                std::span<const CellSeries> exchanges = {}) {
  std::vector<PrttSpec> plan;
  for (std::size_t i : which) {
    for (const auto& s : specs_of(pts[i], n))
      plan.push_back(s);
    for (std::uint32_t k = 1; k < kSingleReps; ++k)
      plan.push_back(specs_of(pts[i], n)[0]);
  }
  for (const auto side : {heldout, exchanges}) {
    for (const auto& h : side) {
      for (std::uint32_t k = 0; k < kSingleReps; ++k)
        plan.push_back(heldout_spec(h));
    }
  }
  return cost_of(plan, 1);
}

// One round over the listed points: their four PRTTs each, all cells in a fresh random order;
// with `side`, also one cell per series there (kind 4: the held-out cells, never fitted, and
// the exchanges o_x is fitted to).
void measure_round(Session& session, std::vector<LoggpPoint>& pts,
                   const std::vector<std::size_t>& which,
                   const std::vector<CellSeries*>* side = nullptr) {
  constexpr std::size_t kHeldOut = 4;
  const std::uint32_t n = session.options().n;
  std::vector<std::pair<std::size_t, std::size_t>> cells;  // (point or held-out size, kind)
  for (std::size_t i : which) {
    for (std::size_t k = 0; k < 4; ++k)
      cells.emplace_back(i, k);
  }
  if (side) {
    for (std::size_t h = 0; h < side->size(); ++h)
      cells.emplace_back(h, kHeldOut);
  }
  std::shuffle(cells.begin(), cells.end(), session.rng());
  // A plan runs each entry's repetitions back to back: PRTT(1,0,s) cells are entries of their
  // own with kSingleReps repetitions, so the round is split where those cells fall.
  std::vector<PrttSpec> plan;
  std::vector<std::uint32_t> reps;
  for (auto [i, k] : cells) {
    plan.push_back(k == kHeldOut ? heldout_spec(*(*side)[i]) : specs_of(pts[i], n)[k]);
    reps.push_back(k == 0 || k == kHeldOut ? kSingleReps : 1);
  }
  std::vector<double> value(cells.size());
  for (std::size_t a = 0; a < cells.size();) {
    std::size_t b = a + 1;
    while (b < cells.size() && reps[b] == reps[a])
      ++b;
    const auto times = session.run(std::span<const PrttSpec>(plan.data() + a, b - a), reps[a]);
    for (std::size_t c = a; c < b; ++c)
      value[c] = stats::median(times[c - a]);
    a = b;
  }
  for (std::size_t c = 0; c < cells.size(); ++c) {
    auto [i, k] = cells[c];
    if (k == kHeldOut) {
      CellSeries& h = *(*side)[i];
      h.rounds_us.push_back(h.kind == PrttKind::client_delay ? value[c] / 2 : value[c]);
      continue;
    }
    RoundValues& r = pts[i].rounds;
    std::vector<double>* series[4] = {&r.prtt1, &r.prtt_n0, &r.prtt_nd, &r.prtt_nr};
    series[k]->push_back(value[c]);
  }
}

// seed 000 §3.2: d = PRTT(1,0,s), or PRTT(2,0,s) where that is not above G_all; from a pilot
// of three interleaved repetitions per size (not used for anything else).
void choose_delays(Session& session, std::vector<LoggpPoint>& pts) {
  const LoggpOptions& o = session.options();
  if (o.delay_us >= 0) {
    for (auto& p : pts)
      p.delay_us = o.delay_us;
    return;
  }
  auto pilot = [&](const std::vector<std::size_t>& which, std::uint32_t n) {
    std::vector<std::size_t> cells;
    for (int rep = 0; rep < 3; ++rep) {
      for (std::size_t i : which) {
        cells.push_back(i);
        cells.push_back(i + pts.size());  // PRTT(1,0,s) and PRTT(n,0,s)
      }
    }
    std::shuffle(cells.begin(), cells.end(), session.rng());
    std::vector<PrttSpec> plan;
    for (std::size_t c : cells) {
      const bool single = c < pts.size();
      plan.push_back({PrttKind::client_delay, single ? 1 : n, pts[c % pts.size()].bytes, 0});
    }
    const auto times = session.run(plan);
    std::vector<std::vector<double>> one(pts.size()), many(pts.size());
    for (std::size_t c = 0; c < cells.size(); ++c) {
      (cells[c] < pts.size() ? one : many)[cells[c] % pts.size()].push_back(times[c][0]);
    }
    return std::make_pair(one, many);
  };
  std::vector<std::size_t> all(pts.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  const auto [one, many] = pilot(all, o.n);
  std::vector<std::size_t> fallback;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double p1 = stats::median(one[i]);
    const double g_all = (stats::median(many[i]) - p1) / static_cast<double>(o.n - 1);
    pts[i].delay_us = p1;
    if (p1 <= g_all * 1.05) fallback.push_back(i);  // d must clear G_all (eq. (6))
  }
  if (!fallback.empty()) {
    const auto [one2, two] = pilot(fallback, 2);
    for (std::size_t i : fallback)
      pts[i].delay_us = stats::median(two[i]);
  }
}

// The rounds: min_rounds for every size, then more for the sizes whose intervals are still wide,
// up to max_rounds and within the budgets.
// Extra rounds come out of an equal share of the budget per size (what the first rounds left,
// less a reserve for confirming switches), so large sizes cannot starve the cheap small ones.
void run_rounds(Session& session, std::vector<LoggpPoint>& pts, LoggpResult& r) {
  const LoggpOptions& o = session.options();
  std::vector<Cost> extra(pts.size());
  Cost share;
  std::vector<CellSeries*> side;
  for (auto* v : {&r.heldout, &r.exchanges}) {
    for (auto& h : *v)
      side.push_back(&h);
  }
  for (std::uint32_t round = 1; round <= o.max_rounds; ++round) {
    if (round == o.min_rounds + 1) {
      const Cost left = session.left();
      const double n = static_cast<double>(pts.size());
      share = {0.8 * left.messages / n, 0.8 * left.bytes / n};
    }
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const std::size_t have = pts[i].rounds.size();
      if (have < o.min_rounds) {
        which.push_back(i);
      } else if (!pts[i].converged && have < o.max_rounds) {
        const Cost c = round_cost(pts, {i}, o.n);
        if (extra[i].messages + c.messages <= share.messages &&
            extra[i].bytes + c.bytes <= share.bytes) {
          which.push_back(i);
          extra[i].messages += c.messages;
          extra[i].bytes += c.bytes;
        }
      }
    }
    if (which.empty()) break;
    if (round > o.min_rounds && !session.may_spend(round_cost(pts, which, o.n))) break;
    session.report(fmt::format("loggp round {} ({} sizes)", round, which.size()),
                   0.7 * static_cast<double>(round) / static_cast<double>(o.max_rounds));
    measure_round(session, pts, which, round <= o.min_rounds ? &side : nullptr);
    r.rounds = round;
    if (round >= o.min_rounds) summarise_points(pts, o);
  }
  for (auto& p : pts)
    p.interleaved_rounds = p.rounds.size();
  summarise_points(pts, o);
}

// ---------------------------------------------------------------------------------------------
// Confirmation and bisection of switches

// The probe at several sizes, `reps` times each, all trials in a random order.
// `delays_us` per size; empty: `delay_us` for all.
std::vector<ProbeSample> probe(Session& session, const std::vector<std::uint64_t>& sizes,
                               std::uint32_t reps, double delay_us,
                               const std::vector<double>& delays_us = {}) {
  std::vector<std::size_t> cells;  // size index, + sizes.size() for the ping-pong
  for (std::uint32_t k = 0; k < reps; ++k) {
    for (std::size_t i = 0; i < 2 * sizes.size(); ++i)
      cells.push_back(i);
  }
  std::shuffle(cells.begin(), cells.end(), session.rng());
  std::vector<PrttSpec> plan;
  for (std::size_t c : cells) {
    const std::size_t i = c % sizes.size();
    if (c < sizes.size()) {
      plan.push_back(
          {PrttKind::late_receiver, 1, sizes[i], delays_us.empty() ? delay_us : delays_us[i]});
    } else {
      plan.push_back({PrttKind::client_delay, 1, sizes[i], 0});
    }
  }
  std::vector<std::vector<double>> send_us;
  const auto times = session.run(plan, 1, &send_us);
  std::vector<ProbeSample> out(sizes.size());
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const std::size_t i = cells[c] % sizes.size();
    if (cells[c] < sizes.size()) {
      // A late receive that outlasts the receiver's own delay says nothing: an eager message has
      // arrived by then and a rendezvous costs about a one-way time, so the sender was
      // descheduled before it sent (a loaded machine). Such trials are left out.
      const double delay = delays_us.empty() ? delay_us : delays_us[i];
      if (times[c][0] < delay) {
        out[i].late.push_back(times[c][0]);
        // The receiver posted about d after the send began (less a small one-way time, the
        // reply that started this entry); a send that waited for it lasted about d. A send
        // bound by the wire alone lasts at most a one-way time, a third of d (1.5 round trips).
        if (send_us[c][0] >= delay / 2) ++out[i].sender_waited;
      } else {
        ++out[i].invalid;
      }
    } else {
      out[i].one_way.push_back(times[c][0] / 2);
    }
  }
  return out;
}

Cost probe_cost(const std::vector<std::uint64_t>& sizes, std::uint32_t reps) {
  std::vector<PrttSpec> plan;
  for (std::uint64_t s : sizes) {
    for (std::uint32_t k = 0; k < reps; ++k) {
      plan.push_back({PrttKind::late_receiver, 1, s, 0});
      plan.push_back({PrttKind::client_delay, 1, s, 0});
    }
  }
  return cost_of(plan, 1);
}

// Trials per size and probe attempt. With 10 against 10 the precedence test can reach 1e-3 in
// one clean attempt (its least p-value is 1 / C(20, 10) = 5.4e-6); in 2000 simulated draws like
// the loaded machine's, 3 attempts of 10 separated a 4 KiB switch in 99.9 %, 3 of 7 in 92.4 %.
constexpr std::uint32_t kProbeReps = 10;
// Attempts pooled to confirm a switch or give its verdict.
constexpr int kConfirmAttempts = 5;
// A switch is confirmed, a bisection's ends separated and the verdict given at a false-alarm
// rate of 1e-3 per test; the scan over all neighbouring sizes proposes candidates at 1e-2
// (each is then confirmed at 1e-3 with fresh trials).
constexpr double kConfirmAlpha = 1e-3;
constexpr double kScanAlpha = 1e-2;
constexpr int kScanRetries = 2;
// Bisection: a midpoint is re-probed up to 8 times, the trials pooled, until it is placed
// (detail::place_midpoint at kConfirmAlpha).
constexpr int kBisectAttempts = 8;
// Probe attempts a bisection may spend in all, going back included (a clean bisection of a
// bracket of 1000 B takes about 12).
constexpr int kBisectBudget = 60;

// How long the probe's receiver computes before it posts: long enough for an eager message of
// the size to have arrived (1.5 round trips), and at least 1 ms, so that on a loaded machine a
// sender that waits for its time slice still sends in time in most trials.
double probe_delay_us(const LoggpPoint& p) {
  return std::max(1.5 * p.prtt1.median_us + 10, 1000.0);
}

const char* placement_name(detail::Placement p) {
  switch (p) {
    case detail::Placement::eager:
      return "eager";
    case detail::Placement::rendezvous:
      return "rendezvous";
    case detail::Placement::between:
      return "between";
    case detail::Placement::undecided:
      break;
  }
  return "undecided";
}

// One bisection step's probing: lo, mid and hi alternately, kProbeReps trials each, pooled
// over attempts (a burst of load lifts a few trials, not all) until `placed(pooled)` says the
// midpoint is placed, kBisectAttempts are spent, or the budgets run out (`stop` says so).
template <class Placed>
void probe_step(Session& session, LoggpSwitch::Step& step, std::vector<ProbeSample>& pooled,
                double delay_us, int& budget, std::string& stop, Placed placed) {
  for (int attempt = 0; attempt < kBisectAttempts && budget > kConfirmAttempts;
       ++attempt, --budget) {
    const std::vector<std::uint64_t> sizes = {step.below_bytes, step.mid_bytes, step.above_bytes};
    if (!session.may_spend(probe_cost(sizes, kProbeReps))) {
      stop = "the budget ran out";
      return;
    }
    const auto v = probe(session, sizes, kProbeReps, delay_us);
    for (std::size_t i = 0; i < 3; ++i)
      pooled[i].add(v[i]);
    ++step.attempts;
    if (placed(pooled)) return;
  }
}

// A step's record of its pooled trials: how many, how many sends waited, their low ends.
void record_step(LoggpSwitch::Step& step, const std::vector<ProbeSample>& pooled) {
  for (std::size_t i = 0; i < 3; ++i) {
    step.trials[i] = static_cast<std::uint32_t>(pooled[i].late.size());
    step.waited[i] = pooled[i].sender_waited;
  }
  if (!pooled[0].late.empty() && !pooled[1].late.empty() && !pooled[2].late.empty()) {
    step.below_us = stats::floor_of(pooled[0].late);
    step.mid_us = stats::floor_of(pooled[1].late);
    step.above_us = stats::floor_of(pooled[2].late);
  }
}

// A rendezvous switch between sizes lo (eager) and hi: bisection with the late-receiver probe,
// each step measuring lo, the midpoint and hi alternately, down to one byte (or the tolerance),
// then lo and hi alternately for the verdict. A step whose ends no longer separate, or a
// verdict that does not confirm, means an earlier step went wrong (load can lift every trial
// of one size in an attempt): the bisection goes back to the bracket before and measures again,
// within kBisectBudget attempts in all, of which the last kConfirmAttempts are the verdict's
// (a bisection that spent them all once left a switch with no verdict: 0 of 0 trials).
void bisect_rendezvous(Session& session, LoggpSwitch& sw, std::uint64_t lo, std::uint64_t hi,
                       double delay_us) {
  const LoggpOptions& o = session.options();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> brackets = {{lo, hi}};
  int budget = kBisectBudget;
  std::string stop;
  const auto narrow_enough = [&] {
    return !o.refine || !stop.empty() || hi - lo <= 1 ||
           static_cast<double>(hi - lo) <= o.refine_tolerance * static_cast<double>(lo);
  };
  const auto back = [&](const std::string& why) {
    if (brackets.size() < 2) return false;
    brackets.pop_back();
    std::tie(lo, hi) = brackets.back();
    LoggpSwitch::Step step;
    step.below_bytes = lo;
    step.above_bytes = hi;
    step.placement = "back: " + why;
    sw.steps.push_back(step);
    return true;
  };
  for (;;) {
    if (narrow_enough()) {
      // The verdict: both sides alternately, kProbeReps trials each, pooled over up to
      // kConfirmAttempts
      // attempts until they separate.
      std::vector<ProbeSample> pooled(2);
      Separation s;
      for (int attempt = 0; attempt < kConfirmAttempts && budget > 0; ++attempt, --budget) {
        if (!session.may_spend(probe_cost({lo, hi}, kProbeReps))) {
          stop = "the budget ran out";
          break;
        }
        const auto v = probe(session, {lo, hi}, kProbeReps, delay_us);
        pooled[0].add(v[0]);
        pooled[1].add(v[1]);
        s = separation(pooled[0], pooled[1], kConfirmAlpha);
        // The hand-shake's size was shown on the bracket the bisection started from; here the
        // ends must still lie apart in the same direction.
        s.separated = detail::ends_apart(pooled[0], pooled[1], kConfirmAlpha);
        if (s.separated) break;
      }
      sw.late_recv_below_us = s.below_us;
      sw.late_recv_above_us = s.above_us;
      sw.confirmed = s.separated;
      // On its side: an eager trial at or below the threshold, a rendezvous trial above it.
      sw.confirmation_trials =
          static_cast<std::uint32_t>(pooled[0].late.size() + pooled[1].late.size());
      sw.confirmations = static_cast<std::uint32_t>(pooled[0].late.size() -
                                                    count_above(pooled[0].late, s.threshold) +
                                                    count_above(pooled[1].late, s.threshold));
      if (s.separated || !stop.empty() || budget <= kConfirmAttempts ||
          !back(fmt::format("({}, {}] B did not separate", lo, hi))) {
        break;
      }
    }
    const std::uint64_t mid = lo + (hi - lo) / 2;
    // Attempts whose trials are pooled (a burst of load lifts a few trials, not all) until the
    // midpoint lies clearly on one side.
    std::vector<ProbeSample> pooled(3);
    LoggpSwitch::Step step;
    step.below_bytes = lo;
    step.mid_bytes = mid;
    step.above_bytes = hi;
    auto placement = detail::Placement::undecided;
    // A midpoint that would stop the bisection (undecided after kBisectAttempts, or between the
    // sides), between ends that still lie apart, gets a second pool of fresh trials: a stretch
    // of heavier load can lift a whole pool's low ends unevenly (under two busy loops, at
    // vader's 8 KiB limit the last step read 2.7, 4.86 and 8.74 us where the steps before had
    // read about 1.7, 1.6 and 4.5 us, and stopped 75 B wide; at its 4 KiB switch an eager
    // midpoint read 4.62 us between 1.38 and 10.9 us, "between", and stopped 600 B wide).
    const auto stops = [](detail::Placement p) {
      return p == detail::Placement::undecided || p == detail::Placement::between;
    };
    for (int pool = 0; pool < 2 && stops(placement) && stop.empty(); ++pool) {
      if (pool > 0) {
        if (budget - kConfirmAttempts < kBisectAttempts ||
            !detail::ends_apart(pooled[0], pooled[2], kConfirmAlpha)) {
          break;
        }
        pooled.assign(3, ProbeSample{});
        placement = detail::Placement::undecided;
      }
      probe_step(session, step, pooled, delay_us, budget, stop, [&](const auto& p) {
        placement = detail::place_midpoint(p[0], p[1], p[2], kConfirmAlpha);
        return placement != detail::Placement::undecided;
      });
    }
    record_step(step, pooled);
    step.placement = placement_name(placement);
    sw.steps.push_back(step);
    if (placement == detail::Placement::eager) {
      lo = mid;
    } else if (placement == detail::Placement::rendezvous) {
      hi = mid;
    } else if (placement == detail::Placement::undecided && stop.empty() &&
               budget > kConfirmAttempts &&
               !detail::ends_apart(pooled[0], pooled[2], kConfirmAlpha) &&
               back(fmt::format("({}, {}] B did not separate", lo, hi))) {
      continue;
    } else {
      if (stop.empty()) {
        stop =
            placement == detail::Placement::between
                ? fmt::format("the late receive at {} B lies between both sides", mid)
            : budget <= kConfirmAttempts
                ? fmt::format("{} probe attempts spent", kBisectBudget - kConfirmAttempts)
                : fmt::format("the probe did not place the midpoint in {} attempts", step.attempts);
      }
      continue;  // the verdict on the bracket reached
    }
    brackets.push_back({lo, hi});
    session.report(fmt::format("loggp: switch in ({}, {}] B", lo, hi), 0.8);
  }
  sw.below_bytes = lo;
  sw.first_bytes = hi;
  sw.exact = hi - lo == 1;
  sw.verdict =
      fmt::format("{}: {} of {} alternating late-receiver trials on their side; {}{}",
                  sw.confirmed ? "confirmed" : "not confirmed at the end (load?)", sw.confirmations,
                  sw.confirmation_trials,
                  sw.exact ? "exact to one byte"
                           : fmt::format("bracketed to ({}, {}] B", sw.below_bytes, sw.first_bytes),
                  stop.empty() ? "" : " (bisection stopped: " + stop + ")");
}

// A change of transfer mechanism between sizes lo (sends return before the late receive is
// posted) and hi (they wait for it): bisection on that alone, each step probing lo, the midpoint
// and hi alternately, the midpoint joining the side whose sends it behaves like, down to one
// byte (or the tolerance); then lo and hi alternately for the verdict. The sends' waiting is
// binary and a millisecond wide, so a step needs no going back: a midpoint that kBisectAttempts
// attempts leave between the sides (a quarter to three quarters waited) stops the bisection.
void bisect_transfer(Session& session, LoggpSwitch& sw, std::uint64_t lo, std::uint64_t hi,
                     double delay_us) {
  const LoggpOptions& o = session.options();
  const auto waited = [](const ProbeSample& p) {
    return std::pair{p.sender_waited, static_cast<std::uint32_t>(p.late.size())};
  };
  std::string stop;
  int budget = kBisectBudget;
  while (o.refine && hi - lo > 1 &&
         static_cast<double>(hi - lo) > o.refine_tolerance * static_cast<double>(lo) &&
         budget > kConfirmAttempts) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    std::vector<ProbeSample> pooled(3);
    LoggpSwitch::Step step;
    step.below_bytes = lo;
    step.mid_bytes = mid;
    step.above_bytes = hi;
    step.placement = "undecided";
    probe_step(session, step, pooled, delay_us, budget, stop, [&](const auto& p) {
      if (detail::sender_never_waited(p[1])) {
        step.placement = "sends free";
      } else if (detail::sends_wait(waited(p[1]).first, waited(p[1]).second)) {
        step.placement = "sends wait";
      }
      return step.placement != "undecided";
    });
    record_step(step, pooled);
    sw.steps.push_back(step);
    if (step.placement == "sends free") {
      lo = mid;
    } else if (step.placement == "sends wait") {
      hi = mid;
    } else {
      if (stop.empty()) {
        stop = fmt::format("the sends at {} B waited in {} of {} trials, between the sides", mid,
                           step.waited[1], step.trials[1]);
      }
      break;
    }
    session.report(fmt::format("loggp: switch in ({}, {}] B", lo, hi), 0.8);
  }
  // The verdict: both ends alternately, pooled until the change shows (or kConfirmAttempts).
  std::vector<ProbeSample> pooled(2);
  for (int attempt = 0; attempt < kConfirmAttempts; ++attempt) {
    if (!session.may_spend(probe_cost({lo, hi}, kProbeReps))) {
      if (stop.empty()) stop = "the budget ran out";
      break;
    }
    const auto v = probe(session, {lo, hi}, kProbeReps, delay_us);
    pooled[0].add(v[0]);
    pooled[1].add(v[1]);
    if (detail::sends_start_waiting(pooled[0], pooled[1])) break;
  }
  sw.confirmed = detail::sends_start_waiting(pooled[0], pooled[1]);
  std::tie(sw.waited_below, sw.late_below) = waited(pooled[0]);
  std::tie(sw.waited_above, sw.late_above) = waited(pooled[1]);
  if (!pooled[0].late.empty() && !pooled[1].late.empty()) {
    sw.late_recv_below_us = stats::floor_of(pooled[0].late);
    sw.late_recv_above_us = stats::floor_of(pooled[1].late);
  }
  sw.confirmation_trials = sw.late_below + sw.late_above;
  sw.confirmations = sw.late_below - sw.waited_below + sw.waited_above;
  sw.below_bytes = lo;
  sw.first_bytes = hi;
  sw.exact = hi - lo == 1;
  sw.verdict = fmt::format(
      "{}: the sends waited for the late receiver in {} of {} trials at {} B and {} of {} at {} "
      "B (alternating); {}{}",
      sw.confirmed ? "confirmed" : "not confirmed at the end (load?)", sw.waited_below,
      sw.late_below, lo, sw.waited_above, sw.late_above, hi,
      sw.exact ? "exact to one byte" : fmt::format("bracketed to ({}, {}] B", lo, hi),
      stop.empty() ? "" : " (bisection stopped: " + stop + ")");
}

// Whether the curves around switch k need two parameter sets: the calibrated fit of the
// neighbouring ranges' points as one range against as two. A bend the closed forms produce
// themselves (where g + (s-1)G overtakes o in eq. (5)'s max) is no switch.
bool split_needed(const LoggpResult& r, std::size_t k, const LoggpOptions& o) {
  const auto& pts = r.points;
  const std::size_t c = r.changes[k];
  const std::size_t first = k > 0 ? r.changes[k - 1] : 0;
  const std::size_t last = k + 1 < r.changes.size() ? r.changes[k + 1] - 1 : pts.size() - 1;
  const std::vector<LoggpPoint> around(pts.begin() + static_cast<std::ptrdiff_t>(first),
                                       pts.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  const auto curves = curve_points(around, o.n);
  // Starts: the seeds' estimators of the two ranges (from the analysis with the candidate).
  if (r.seed_link.ranges.size() < r.changes.size() + 1) {
    throw std::logic_error("loggp: the seeds' ranges do not match the candidate switches");
  }
  model::LinkParams two;
  two.latency_us = r.seed_link.latency_us;
  two.send_overlap_us = r.seed_link.send_overlap_us;
  two.ranges = {r.seed_link.ranges[k], r.seed_link.ranges[k + 1]};
  two.ranges[0].from_bytes = 1;
  two.ranges[1].from_bytes = pts[c].bytes;
  model::CalibrationOptions co;
  co.identifiability = false;
  co.fixed_latency = k > 0;  // L belongs to the first range's sizes
  // As the seeds read the ranges: a split must not win or lose by an overlap one side adds.
  co.fit_overlap = false;
  co.fit_late_receives = false;  // only the chi-square of the first fit is compared
  const double chi_two = model::calibrate(two, curves, model::Structure::loggps, co).chi2;
  // One range, from either side's estimates (one side may have seen a gap the other hid).
  double chi_one = std::numeric_limits<double>::infinity();
  for (std::size_t side = 0; side < 2; ++side) {
    model::LinkParams one = two;
    one.ranges = {two.ranges[side]};
    one.ranges[0].from_bytes = 1;
    chi_one = std::min(chi_one, model::calibrate(one, curves, model::Structure::loggps, co).chi2);
  }
  return detail::two_sets_needed(chi_one, chi_two, curves.size());
}

// Re-measures points a and b alternately for another min_rounds rounds.
bool remeasure(Session& session, std::vector<LoggpPoint>& pts, std::vector<std::size_t> which) {
  const LoggpOptions& o = session.options();
  for (std::uint32_t k = 0; k < o.min_rounds; ++k) {
    if (!session.may_spend(round_cost(pts, which, o.n))) return false;
    measure_round(session, pts, which);
  }
  summarise_points(pts, o);
  return true;
}

// An eager switch seen in the curves only: both sides re-measured alternately, the curves
// segmented again; if the split is still there, bisection with full points (each step the
// bracket's ends and the midpoint measured alternately), the midpoint joining the side whose
// lines it fits, until one byte, the tolerance, or a midpoint that cannot be placed (it fits
// both sides alike or neither, or the sides do not lie apart: detail::judge_step).
// Returns why the switch was dropped, or nothing if it stands.
std::optional<std::string> confirm_curve_switch(Session& session, LoggpResult& r, std::size_t k) {
  const LoggpOptions& o = session.options();
  auto& pts = r.points;
  std::size_t c = r.changes[k];
  if (!remeasure(session, pts, {c - 1, c})) {
    r.switches[k].verdict = "not confirmed: the budget ran out before both sides were re-measured";
    return std::nullopt;
  }
  const auto again = detail::detect_candidates(pts, o);
  const bool still = std::any_of(again.begin(), again.end(), [&](const detail::Candidate& x) {
    return x.index + 1 >= c && x.index <= c + 1;
  });
  if (!still) return "the curves no longer split there after re-measuring both sides alternately";
  const std::size_t around_first = k > 0 ? r.changes[k - 1] : 0;
  const std::size_t around_last = k + 1 < r.changes.size() ? r.changes[k + 1] - 1 : pts.size() - 1;
  if (!split_needed(r, k, o) && !detail::late_receive_step(pts, around_first, c, around_last)) {
    return "one parameter set reproduces the curves on both sides as well as two, and o_r does "
           "not step (a bend of eq. (5)'s max, not a change of parameters)";
  }
  LoggpSwitch& sw = r.switches[k];
  std::string stop;
  const std::size_t left_first = k > 0 ? r.changes[k - 1] : 0;
  // The sweep's bracket; the sides' slopes come from the sweep's points beyond it.
  const std::size_t sweep_lo = c - 1;
  const std::uint64_t sweep_hi_bytes = pts[c].bytes;
  const auto sweep_hi = [&] {
    std::size_t i = sweep_lo + 1;
    while (pts[i].bytes != sweep_hi_bytes)
      ++i;
    return i;
  };
  int steps = 0;
  while (o.refine) {
    c = r.changes[k];
    const std::uint64_t lo = pts[c - 1].bytes, hi = pts[c].bytes;
    if (hi - lo <= 1 ||
        static_cast<double>(hi - lo) <= o.refine_tolerance * static_cast<double>(lo)) {
      break;
    }
    LoggpPoint mid;
    mid.bytes = lo + (hi - lo) / 2;
    mid.delay_us = pts[c].delay_us;  // d = PRTT(1,0,s) of a neighbour: it clears G_all as well
    mid.refined = true;
    pts.insert(pts.begin() + static_cast<std::ptrdiff_t>(c), mid);
    for (std::size_t j = k; j < r.changes.size(); ++j)
      ++r.changes[j];
    // Now pts[c - 1] = lo, pts[c] = mid, pts[c + 1] = hi, and the switch is at c + 1.
    if (!remeasure(session, pts, {c - 1, c, c + 1})) {
      pts.erase(pts.begin() + static_cast<std::ptrdiff_t>(c));
      for (std::size_t j = k; j < r.changes.size(); ++j)
        --r.changes[j];
      stop = "the budget ran out";
      break;
    }
    // Distances of the midpoint to each side (detail::step_distances); where they do not place
    // it, the three are measured again (up to twice more).
    detail::StepDistances d;
    detail::StepVerdict verdict = detail::StepVerdict::drop;
    int remeasured = 0;
    for (;;) {
      const std::size_t right_last =
          k + 1 < r.changes.size() ? r.changes[k + 1] - 1 : pts.size() - 1;
      // The midpoint's rounds are all of this step, each measured with both ends.
      d = detail::step_distances(pts, left_first, sweep_lo, sweep_hi(), right_last, c - 1, c, c + 1,
                                 pts[c].rounds.size(), o.n);
      verdict = detail::judge_step(d, steps);
      if (verdict == detail::StepVerdict::left || verdict == detail::StepVerdict::right ||
          remeasured == 2 || !remeasure(session, pts, {c - 1, c, c + 1})) {
        break;
      }
      ++remeasured;
    }
    if (verdict != detail::StepVerdict::left && verdict != detail::StepVerdict::right) {
      const std::uint64_t mid_bytes = pts[c].bytes;
      pts.erase(pts.begin() + static_cast<std::ptrdiff_t>(c));
      for (std::size_t j = k; j < r.changes.size(); ++j)
        --r.changes[j];
      const std::string remeasured_text =
          remeasured == 1  ? std::string(", measured once more")
          : remeasured > 1 ? fmt::format(", measured {} times more", remeasured)
                           : std::string(" (the budget allowed no second measurement)");
      switch (verdict) {
        case detail::StepVerdict::keep_off_the_step:
          stop = fmt::format(
              "the midpoint {} B lies on neither side's lines ({:.3g} and {:.3g} noise units), "
              "farther from anything between them ({:.3g}) than they lie apart ({:.3g}){}",
              mid_bytes, d.to_left, d.to_right, d.off_step, d.step, remeasured_text);
          break;
        case detail::StepVerdict::keep_sides_not_apart:
          // The step does not show in these rounds (the machine's other latency mode).
          stop = fmt::format(
              "the sides lay {:.3g} noise units apart in the step's rounds, too near to place the "
              "midpoint {} B{}",
              d.step, mid_bytes, remeasured_text);
          break;
        case detail::StepVerdict::keep_alike:
          stop = "the curve allows no finer bracket";
          break;
        default:  // drop: at the first step the split did not show where it was bisected
          if (!d.sides_apart()) {
            return fmt::format(
                "at the first bisection step the sides lay {:.3g} noise units apart{}: the split "
                "did not show",
                d.step, remeasured_text);
          }
          return "the first bisection midpoint fits both sides alike";
      }
      break;
    }
    const double to_left = d.to_left, to_right = d.to_right;
    ++steps;
    if (to_right < to_left) --r.changes[k];  // the midpoint starts the new range
    session.report(fmt::format("loggp: switch in ({}, {}] B", pts[r.changes[k] - 1].bytes,
                               pts[r.changes[k]].bytes),
                   0.85);
  }
  // Each end of the bracket was placed by one comparison when it was a midpoint and was
  // re-measured at every later step: an end that now lies clearly on the other side's lines
  // means a step went past the switch (detail::settle_bracket). With no step taken both ends are
  // the sweep's: nothing was placed, and their rounds may now mix two latency modes (a bisection
  // stopped at its first step in the fast mode moved vader's (8, 11] B to (11, 16] B so).
  if (steps > 0) {
    const std::size_t right_last = k + 1 < r.changes.size() ? r.changes[k + 1] - 1 : pts.size() - 1;
    const std::size_t placed = r.changes[k];
    r.changes[k] = detail::settle_bracket(pts, left_first, right_last, placed);
    if (r.changes[k] != placed) {
      stop = fmt::format(
          "the end at {} B of the bisection's ({}, {}] B lies on the other side's "
          "lines when re-measured: moved",
          r.changes[k] < placed ? pts[placed - 1].bytes : pts[placed].bytes, pts[placed - 1].bytes,
          pts[placed].bytes);
    }
  }
  c = r.changes[k];
  sw.below_bytes = pts[c - 1].bytes;
  sw.first_bytes = pts[c].bytes;
  sw.exact = sw.first_bytes - sw.below_bytes == 1;
  sw.confirmed = true;
  sw.verdict =
      fmt::format("confirmed: the split persists after re-measuring both sides alternately; {}{}",
                  sw.exact ? "exact to one byte"
                           : fmt::format("bracketed to ({}, {}] B", sw.below_bytes, sw.first_bytes),
                  stop.empty() ? "" : " (" + stop + ")");
  return std::nullopt;
}

// How the probe scan names its own candidates: a hand-shake between neighbouring sizes, or
// sends that start waiting for the late receiver there (detail::sends_start_waiting).
constexpr const char* kScanHandShake = "probe scan";
constexpr const char* kScanSendsWait = "probe scan (the sends start waiting for the receiver)";

// A candidate only the probe scan saw (the curves did not).
bool scan_only_candidate(const LoggpSwitch& sw) {
  return sw.found_by == kScanHandShake || sw.found_by == kScanSendsWait;
}

// Every candidate: the late-receiver probe decides whether the late receive pays a hand-shake
// from there on (rendezvous, bisected with the probe); otherwise the curves must show the split
// again.
void confirm_switches(Session& session, LoggpResult& r, std::vector<std::string>& notes) {
  auto& pts = r.points;
  // Pass 1: the probe classifies every candidate, and the rendezvous ones are bisected with it
  // (one message per trial; no points are inserted, so indices stay). From the smallest size
  // up: a small bracket's attempts cost little, a large one's can take what the budgets have
  // left (a false candidate at (131072, 185364] B once spent 0.9 GB, and the real 8 KiB switch
  // below, probed after it, went without); and a candidate above a switch the probe confirmed
  // as rendezvous is known to have a hand-shake below it already.
  std::vector<bool> curve_only(r.changes.size(), false);
  std::vector<bool> drop(r.changes.size(), false);
  // Each candidate as the curves or the scan found it, before any try.
  const std::vector<LoggpSwitch> as_found = r.switches;
  const std::vector<std::size_t> c_found = r.changes;
  // Candidates whose first try did not settle them: asked again after every candidate's first
  // try, so that a second try never takes what a first one needs.
  std::vector<bool> pending(r.changes.size(), false);
  // The switches not counted below a candidate: dropped, or waiting for their second try.
  const auto not_counted = [&] {
    std::vector<bool> out(drop);
    for (std::size_t j = 0; j < pending.size(); ++j)
      out[j] = out[j] || pending[j];
    return out;
  };
  const auto hand_shake_under = [&](std::size_t k) {
    return detail::hand_shake_below(r.switches, not_counted(), k);
  };
  // Attempts whose trials are pooled (a burst of load lifts a few trials, not all) until the
  // probe separates the sides or clearly does not: up to 2 kConfirmAttempts.
  const auto probe_bracket = [&](std::size_t c, std::vector<ProbeSample>& pooled) {
    const std::uint64_t lo = pts[c - 1].bytes, hi = pts[c].bytes;
    pooled.assign(2, ProbeSample{});
    Separation s;
    for (int attempt = 0; attempt < 2 * kConfirmAttempts; ++attempt) {
      if (!session.may_spend(probe_cost({lo, hi}, kProbeReps))) break;
      const auto v = probe(session, {lo, hi}, kProbeReps, probe_delay_us(pts[c]));
      for (std::size_t i = 0; i < 2; ++i)
        pooled[i].add(v[i]);
      s = separation(pooled[0], pooled[1], kConfirmAlpha);
      if (s.separated || no_hand_shake(s, pts[c - 1])) break;
    }
    return s;
  };
  // Two hand-shakes in a row, the lower one the probe's alone and the upper one the curves' as
  // well: where the upper one's late receive rises by a hand-shake in the probe and the lower
  // one's by less than a one-way time (detail::lower_hand_shake_weaker), the lower one is no
  // hand-shake. It is settled again as a change of the sends' waiting (vader's 257 B inline
  // step, which the probe read as a hand-shake in 4 of 100 runs on 2026-12-05, the real switch
  // above then read "as below"), or by the curves; true when it was.
  const auto weaker_hand_shake_below = [&](std::size_t k) {
    const auto j = detail::hand_shake_switch_below(r.switches, not_counted(), k);
    if (!j || r.switches[*j].curves_saw_hand_shake || !as_found[k].curves_saw_hand_shake ||
        scan_only_candidate(as_found[k])) {
      return false;
    }
    LoggpSwitch& lower = r.switches[*j];
    const std::size_t cj = c_found[*j], ck = r.changes[k];
    std::vector<ProbeSample> pooled;
    const Separation upper = probe_bracket(ck, pooled);
    const double one_way_lower = pts[cj - 1].prtt1.median_us / 2;
    const double one_way_upper = pts[ck - 1].prtt1.median_us / 2;
    if (!upper.separated || !detail::lower_hand_shake_weaker(
                                lower.late_recv_below_us, lower.late_recv_above_us, one_way_lower,
                                upper.below_us, upper.above_us, one_way_upper)) {
      return false;
    }
    const std::string why = fmt::format(
        "; the probe's hand-shake here was the weaker of two: its late receive rose {:.3g} -> "
        "{:.3g} us (one-way below {:.3g} us), the curves' switch in ({}, {}] B {:.3g} -> {:.3g} "
        "us (one-way below {:.3g} us)",
        lower.late_recv_below_us, lower.late_recv_above_us, one_way_lower, pts[ck - 1].bytes,
        pts[ck].bytes, upper.below_us, upper.above_us, one_way_upper);
    const std::uint64_t lo = pts[cj - 1].bytes, hi = pts[cj].bytes;
    lower = as_found[*j];
    r.changes[*j] = cj;
    lower.rendezvous = false;
    lower.found_by += why;
    bisect_transfer(session, lower, lo, hi, probe_delay_us(pts[cj]));
    curve_only[*j] = !lower.confirmed;
    if (!lower.confirmed) {
      lower = as_found[*j];
      lower.rendezvous = false;
      lower.found_by += why + "; the sends' change did not hold to the end: the curves decide";
    }
    notes.push_back(fmt::format("the switch in ({}, {}] B is not rendezvous{}", lo, hi, why));
    return true;
  };
  // True when candidate k lies above a switch the probe confirmed as rendezvous (and is settled
  // so).
  const auto above_a_hand_shake = [&](std::size_t k) {
    LoggpSwitch& sw = r.switches[k];
    if (!hand_shake_under(k)) return false;
    if (weaker_hand_shake_below(k) && !hand_shake_under(k)) return false;
    // Above vader's switch the late receive grows with the transfer (about 8 us from 128 to
    // 181 KiB), which the precedence test finds significant: the probe's yes there once sent
    // a bisection through the whole byte budget to a false switch at (85895, 92682] B.
    if (scan_only_candidate(as_found[k])) {  // the curves did not see it: none
      drop[k] = true;
      notes.push_back(fmt::format(
          "a candidate switch in ({}, {}] B ({}) was dropped: it lies above a confirmed "
          "rendezvous switch, where the late receive pays the hand-shake on both sides",
          pts[r.changes[k] - 1].bytes, pts[r.changes[k]].bytes, as_found[k].found_by));
    } else {
      // No hand-shake starts here (one is paid on both sides; the range stays rendezvous
      // by LogGPS), whatever the late receive's curve did: a change of parameters, if any.
      sw.found_by +=
          "; above a confirmed rendezvous switch (the late receive pays the hand-shake on "
          "both sides, the probe cannot tell): the curves decide";
      sw.rendezvous = false;
      curve_only[k] = true;
    }
    return true;
  };
  // A probe that could not tell, or a hand-shake that did not hold through the bisection, is
  // asked once more with fresh trials before the curves decide: under two busy loops a
  // whole series of attempts can fall into a heavier stretch of load (at vader's 8 KiB
  // limit the probe was once inconclusive, and once its hand-shake did not hold, 56 of 92
  // trials on their side; both times the switch went to the curves and was read eager).
  std::vector<std::string> first_try(r.changes.size());
  // One try at candidate k; false when it did not settle it (to be asked once more).
  const auto try_switch = [&](std::size_t k, int probing) -> bool {
    LoggpSwitch& sw = r.switches[k];
    const bool scan_only = scan_only_candidate(as_found[k]);
    const std::uint64_t lo_found = pts[c_found[k] - 1].bytes, hi_found = pts[c_found[k]].bytes;
    session.report(fmt::format("loggp: probing the switch in ({}, {}] B{}", lo_found, hi_found,
                               probing > 0 ? " again" : ""),
                   0.75);
    if (probing > 0) {
      sw = as_found[k];
      r.changes[k] = c_found[k];
      const bool affordable = session.affordable(probe_cost({lo_found, hi_found}, kProbeReps));
      sw.found_by +=
          "; " +
          (first_try[k].empty() ? std::string("the probe was inconclusive (load)") : first_try[k]) +
          (affordable ? ", asked again" : ", not asked again: the budget ran out");
    }
    std::vector<ProbeSample> pooled;
    Separation found = probe_bracket(r.changes[k], pooled);
    // The sends return before the late receive below and wait for it above: the transfer
    // mechanism changes in this very bracket (detail::sends_start_waiting), no need to look
    // next to it.
    const bool sends_change = !found.separated && detail::sends_start_waiting(pooled[0], pooled[1]);
    // The detectors merge a late-receive jump and a joint split at neighbouring sizes into one
    // candidate: where the probe finds no hand-shake in its bracket, it looks in the two
    // brackets on either side, nearest first (not another candidate's), before the candidate
    // counts as eager. (The scan's candidates come from probing every bracket already.) Two:
    // under two busy loops the joint segmentation once put vader's 8 KiB switch at (11585,
    // 16384] B, two brackets above the o_r step of (5793, 8192] B (1.55 [1.36, 1.78] ->
    // 3.84 [3.63, 4.85] us), and the scan had not seen it.
    // A "no" needs every bracket looked at to say no: one the probe could not tell about
    // leaves the candidate inconclusive (under two busy loops the scan once moved vader's
    // 8 KiB candidate one bracket down, the probe said no there, and the curves' own bracket
    // next to it did not separate: the switch was read eager).
    bool next_to_it_unclear = false;
    // The candidate's own bracket's trials, for the curves' decision there if a hand-shake the
    // probe finds next to it does not hold.
    const std::vector<ProbeSample> own_pooled = pooled;
    const Separation own_found = found;
    if (!found.separated && !scan_only && !sends_change) {
      const std::size_t at = r.changes[k];
      for (const std::size_t c : {at + 1, at - 1, at + 2, at - 2}) {
        if (c < 1 || c >= pts.size()) continue;
        const auto candidate = [&](std::size_t i) {
          return std::find(r.changes.begin(), r.changes.end(), i) != r.changes.end();
        };
        // Not another candidate's bracket, nor one beyond it.
        if (candidate(c) || (c == at + 2 && candidate(at + 1)) ||
            (c + 2 == at && candidate(at - 1))) {
          continue;
        }
        std::vector<ProbeSample> there;
        const Separation s = probe_bracket(c, there);
        if (!s.separated) {
          next_to_it_unclear = next_to_it_unclear || !no_hand_shake(s, pts[c - 1]);
          continue;
        }
        sw.found_by += fmt::format("; the probe finds the hand-shake in ({}, {}] B, next to it",
                                   pts[c - 1].bytes, pts[c].bytes);
        r.changes[k] = c;
        pooled = std::move(there);
        found = s;
        break;
      }
    }
    const std::size_t c = r.changes[k];
    const std::uint64_t lo = pts[c - 1].bytes, hi = pts[c].bytes;
    const double one_way_lo = pts[c - 1].prtt1.median_us / 2;
    const double delay = probe_delay_us(pts[c]);
    bool rendezvous = found.separated;
    const bool curves_saw_it = sw.curves_saw_hand_shake;
    // The probe's figures at the switch: the late receives' low ends and how often sends waited.
    const auto record_probe = [&sw](const Separation& s, const std::vector<ProbeSample>& p) {
      sw.late_recv_below_us = s.below_us;
      sw.late_recv_above_us = s.above_us;
      if (p.size() == 2) {
        sw.waited_below = p[0].sender_waited;
        sw.late_below = static_cast<std::uint32_t>(p[0].late.size());
        sw.waited_above = p[1].sender_waited;
        sw.late_above = static_cast<std::uint32_t>(p[1].late.size());
      }
    };
    record_probe(found, pooled);
    const bool conclusive =
        rendezvous || (!next_to_it_unclear &&
                       no_hand_shake(separation(pooled[0], pooled[1], kConfirmAlpha), pts[c - 1]));
    if (detail::transfer_change_not_rendezvous(found, sends_change, conclusive, sw.rendezvous)) {
      // An eager change of transfer mechanism (T -> TA): whatever the curves and the late
      // receive say, one parameter set cannot give both sides. Under two busy loops the curves
      // lost vader's 257 B step in 3 of 20 runs (re-measured, they no longer split), and one
      // range from 1 B then carried TA: 8-byte sends were charged a wait for their receiver.
      sw.rendezvous = false;
      sw.found_by += fmt::format(
          "; the probe sees the sends wait for the late receiver above ({} of {}) and not below "
          "({} of {}): the transfer mechanism changes (seed 001's Tm)",
          pooled[1].sender_waited, pooled[1].late.size(), pooled[0].sender_waited,
          pooled[0].late.size());
      bisect_transfer(session, sw, lo, hi, delay);
      if (sw.confirmed) return true;
      if (probing == 0) {
        first_try[k] = "the sends' change did not hold to the end";
        return false;  // asked once more, with fresh trials
      }
      if (scan_only) {
        drop[k] = true;
        notes.push_back(fmt::format(
            "a candidate switch in ({}, {}] B ({}) was dropped: the sends' change did not hold "
            "to the end, twice",
            lo, hi, as_found[k].found_by));
        return true;
      }
      sw = as_found[k];
      r.changes[k] = c_found[k];
      sw.found_by += "; the sends' change did not hold to the end, twice: the curves decide";
      curve_only[k] = true;
      return true;
    }
    if (scan_only && !rendezvous) {
      // The curves never saw it and the probe does not confirm it: no switch.
      if (!conclusive && probing == 0) return false;  // asked once more
      drop[k] = true;
      notes.push_back(fmt::format(
          "a candidate switch in ({}, {}] B (probe scan) was dropped: the probe {}", lo, hi,
          conclusive ? "finds no hand-shake there" : "was inconclusive there, twice (load)"));
      return true;
    }
    if (!conclusive && probing == 0) return false;  // asked once more, with fresh trials
    if (!conclusive) {
      // The probe could not tell, twice (the sender was descheduled in most trials): the
      // curves' reading stands. (A candidate only the scan's single probe saw needs the
      // probe's yes.)
      rendezvous = sw.rendezvous;
      sw.found_by += fmt::format("; the probe was inconclusive (load), the {} reading stands",
                                 sw.rendezvous && !curves_saw_it ? "probe scan's" : "curves'");
    } else if (rendezvous != sw.rendezvous) {
      sw.found_by += fmt::format(
          "; the probe {} it (late receive {:.3g} -> {:.3g} us, one-way below {:.3g} us{}), the "
          "probe decides",
          rendezvous ? "finds a hand-shake where the sweep did not see" : "does not confirm",
          sw.late_recv_below_us, sw.late_recv_above_us, one_way_lo,
          found.sender_free ? "; the sends returned before the receive was posted" : "");
    }
    sw.rendezvous = rendezvous;
    if (rendezvous) {
      bisect_rendezvous(session, sw, lo, hi, delay);
      const std::string why =
          detail::hand_shake_unsupported(sw, lo, hi, found.separated, curves_saw_it);
      if (!why.empty() && probing == 0) {
        first_try[k] = why;
        return false;  // asked once more, with fresh trials
      }
      if (!why.empty()) {
        sw.rendezvous = false;
        sw.found_by += "; " + why + ": the curves decide";
        if (r.changes[k] != c_found[k]) {
          // The probe had moved the candidate to its hand-shake; without one, the curves decide
          // where they saw the step. (Over vader a probe two brackets up, in the acknowledged
          // range, once took the 257 B step's candidate from (256, 362] to (512, 724] B, where
          // the curves do not split: the step was dropped, and one parameter set then had to
          // fit both sides of it, 18.7 % rms.)
          r.changes[k] = c_found[k];
          sw.below_bytes = pts[c_found[k] - 1].bytes;
          sw.first_bytes = pts[c_found[k]].bytes;
          sw.exact = false;
          sw.confirmed = false;
          sw.confirmations = sw.confirmation_trials = 0;
          sw.steps.clear();
          record_probe(own_found, own_pooled);
          sw.found_by +=
              fmt::format(" in their own bracket ({}, {}] B", sw.below_bytes, sw.first_bytes);
        }
        curve_only[k] = true;
      }
    } else {
      curve_only[k] = true;
    }
    return true;
  };
  std::vector<bool> settled_first(r.changes.size(), false);
  for (std::size_t k = 0; k < r.changes.size(); ++k) {
    if (above_a_hand_shake(k)) continue;
    pending[k] = !try_switch(k, 0);
    settled_first[k] = !pending[k];
    if (pending[k]) {  // as found, until it is asked again
      r.switches[k] = as_found[k];
      r.changes[k] = c_found[k];
    }
  }
  // The second tries, from the smallest size up, with at most half of what the budgets have
  // left (the rest is the curves' confirmations'): over loggp's default sweep, second tries at
  // false eager candidates (128 and 362 B, the probe inconclusive at both) once spent the
  // message budget before vader's 8 KiB switch was confirmed.
  session.limit_to_share(2);
  for (std::size_t k = 0; k < r.changes.size(); ++k) {
    if (!pending[k]) continue;
    pending[k] = false;
    if (above_a_hand_shake(k)) continue;
    try_switch(k, 1);
  }
  session.unlimit();
  // A candidate settled at its first try while one below it waited for its second lies above
  // that one's hand-shake if the second try confirmed it: judged so now, as in size order (else
  // a probe's yes above vader's switch, where the late receive grows with the transfer, would
  // make a second rendezvous switch).
  for (std::size_t k = 0; k < r.changes.size(); ++k) {
    if (!settled_first[k] || drop[k] || !hand_shake_under(k)) continue;
    const LoggpSwitch settled = r.switches[k];
    const std::size_t settled_at = r.changes[k];
    const bool settled_curve_only = curve_only[k];
    r.switches[k] = as_found[k];
    r.changes[k] = c_found[k];
    curve_only[k] = false;
    if (!above_a_hand_shake(k)) {  // the hand-shake below was the weaker reading: as settled
      r.switches[k] = settled;
      r.changes[k] = settled_at;
      curve_only[k] = settled_curve_only;
    }
  }
  for (std::size_t k = r.changes.size(); k-- > 0;) {
    if (!drop[k]) continue;
    r.changes.erase(r.changes.begin() + static_cast<std::ptrdiff_t>(k));
    r.switches.erase(r.switches.begin() + static_cast<std::ptrdiff_t>(k));
    curve_only.erase(curve_only.begin() + static_cast<std::ptrdiff_t>(k));
  }
  // The probe moves candidates to a neighbouring bracket and back: two can meet.
  detail::merge_coinciding_switches(pts.size(), r.changes, r.switches, &curve_only, notes);
  // The seeds' estimators per range again: the scan may have added ranges, and pass 2 starts
  // its fits from them.
  analyse_loggp(r, session.options(), false);
  // Pass 2: the switches seen in the curves only, each with an equal share of what is left
  // (a full point per bisection step costs about 50 messages per size and round).
  std::size_t curves_to_confirm =
      static_cast<std::size_t>(std::count(curve_only.begin(), curve_only.end(), true));
  for (std::size_t k = r.changes.size(); k-- > 0;) {
    if (!curve_only[k]) continue;
    const std::size_t c = r.changes[k];
    const std::uint64_t lo = pts[c - 1].bytes, hi = pts[c].bytes;
    session.limit_to_share(curves_to_confirm--);
    const auto dropped = confirm_curve_switch(session, r, k);
    session.unlimit();
    if (dropped) {
      notes.push_back(fmt::format("a candidate switch in ({}, {}] B ({}) was dropped: {}", lo, hi,
                                  r.switches[k].found_by, *dropped));
      r.changes.erase(r.changes.begin() + static_cast<std::ptrdiff_t>(k));
      r.switches.erase(r.switches.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  // The switches' exact starts may leave a measured point on the wrong side of its range.
  for (std::size_t k = 0; k < r.changes.size(); ++k) {
    std::size_t& c = r.changes[k];
    while (c > 1 && pts[c - 1].bytes >= r.switches[k].first_bytes)
      --c;
    while (c + 1 < pts.size() && pts[c].bytes < r.switches[k].first_bytes)
      ++c;
  }
  // Two bisections that ended in one bracket of the points found one switch.
  detail::merge_coinciding_switches(pts.size(), r.changes, r.switches, nullptr, notes);
}

// The late-receiver probe at every size of the sweep (10 trials each, interleaved with
// ping-pongs; about 20 messages of each size): a rendezvous switch between neighbouring sizes
// that the curves' noise hid from the late-receive jump test becomes a candidate here.
void scan_for_handshakes(Session& session, LoggpResult& r) {
  auto& pts = r.points;
  if (pts.size() < 2) return;
  std::vector<std::uint64_t> sizes;
  std::vector<double> delays;
  for (const auto& p : pts) {
    sizes.push_back(p.bytes);
    delays.push_back(probe_delay_us(p));
  }
  if (!session.may_spend(probe_cost(sizes, kProbeReps))) return;
  session.report("loggp: scan for hand-shakes", 0.72);
  auto v = probe(session, sizes, kProbeReps, 0, delays);
  // A bracket whose low ends jump by a hand-shake without the precedence test's significance,
  // or with too few valid trials to tell, is probed again (its two sizes, kProbeReps more
  // trials each, pooled) up to kScanRetries times: under two busy loops, trials dropped as
  // invalid and the noise left TCP's 64 KiB hand-shake out of the scan in 2 of 10 runs, and
  // nothing else proposed it.
  for (int retry = 1; retry <= kScanRetries; ++retry) {
    std::vector<std::size_t> open;  // size indices to probe again
    for (std::size_t i = 1; i < pts.size(); ++i) {
      const Separation sep = separation(v[i - 1], v[i], kScanAlpha);
      if (sep.separated || (sep.conclusive && !sep.jump)) continue;
      for (const std::size_t j : {i - 1, i})
        if (std::find(open.begin(), open.end(), j) == open.end()) open.push_back(j);
    }
    if (open.empty()) break;
    std::vector<std::uint64_t> again_sizes;
    std::vector<double> again_delays;
    for (const std::size_t j : open) {
      again_sizes.push_back(sizes[j]);
      again_delays.push_back(delays[j]);
    }
    if (!session.may_spend(probe_cost(again_sizes, kProbeReps))) break;
    const auto again = probe(session, again_sizes, kProbeReps, 0, again_delays);
    for (std::size_t k = 0; k < open.size(); ++k)
      v[open[k]].add(again[k]);
  }
  // A candidate moves at most once: above a switch whose hand-shake message carries the eager
  // part (ob1 over TCP sends the first eager-limit bytes with it), the late receive keeps growing
  // bracket after bracket, and each moved the candidate on (over a 200 Mbit/s lab link from
  // (46341, 65536] B up to (92682, 131072] B). Separations next to a moved one are that ramp.
  std::vector<std::size_t> moved;  // indices the scan moved a candidate to
  for (std::size_t i = 1; i < pts.size(); ++i) {
    if (!separation(v[i - 1], v[i], kScanAlpha).separated) continue;
    if (std::find(moved.begin(), moved.end(), i - 1) != moved.end()) continue;
    // A candidate of the curves in this bracket or the next one on either side is this one:
    // the curves can place a switch one size off (the late receive's noise, the segmentation's
    // look-ahead), the probe cannot; it is moved here.
    auto near = std::find(r.changes.begin(), r.changes.end(), i);
    for (const std::size_t j : {i + 1, i - 1}) {
      if (near != r.changes.end()) break;
      near = std::find(r.changes.begin(), r.changes.end(), j);
      if (near != r.changes.end() &&
          r.switches[static_cast<std::size_t>(near - r.changes.begin())].found_by ==
              kScanHandShake) {
        near = r.changes.end();  // the scan's own candidates stay where the scan saw them
      }
    }
    if (near != r.changes.end()) {
      const auto k = static_cast<std::size_t>(near - r.changes.begin());
      LoggpSwitch& sw = r.switches[k];
      if (r.changes[k] != i) {
        const bool free = std::find(r.changes.begin(), r.changes.end(), i) == r.changes.end();
        if (!free) continue;
        sw.found_by += fmt::format("; the probe scan sees the hand-shake in ({}, {}] B, next to it",
                                   pts[i - 1].bytes, pts[i].bytes);
        r.changes[k] = i;
        moved.push_back(i);
      } else if (!sw.rendezvous) {
        sw.found_by += "; the probe scan sees a hand-shake";
      }
      sw.rendezvous = true;
      continue;
    }
    const auto at = std::upper_bound(r.changes.begin(), r.changes.end(), i);
    const auto k = static_cast<std::size_t>(at - r.changes.begin());
    LoggpSwitch sw;
    sw.first_bytes = pts[i].bytes;
    sw.below_bytes = pts[i - 1].bytes;
    sw.rendezvous = true;
    sw.found_by = kScanHandShake;
    sw.verdict = "not confirmed";
    r.changes.insert(at, i);
    r.switches.insert(r.switches.begin() + static_cast<std::ptrdiff_t>(k), sw);
  }
  // Where the sends start waiting for the late receiver between neighbouring sizes, the transfer
  // mechanism changes (detail::sends_start_waiting): a candidate unless one is there already.
  // The curves' steps can be small (vader's 257 B: 1.33 -> 1.48 us late receive) and load can
  // hide them; the sends' waiting (a millisecond against a microsecond) it does not.
  for (std::size_t i = 1; i < pts.size(); ++i) {
    if (!detail::sends_start_waiting(v[i - 1], v[i])) continue;
    if (std::find(r.changes.begin(), r.changes.end(), i) != r.changes.end()) continue;
    const auto at = std::upper_bound(r.changes.begin(), r.changes.end(), i);
    const auto k = static_cast<std::size_t>(at - r.changes.begin());
    LoggpSwitch sw;
    sw.first_bytes = pts[i].bytes;
    sw.below_bytes = pts[i - 1].bytes;
    sw.found_by = kScanSendsWait;
    sw.verdict = "not confirmed";
    r.changes.insert(at, i);
    r.switches.insert(r.switches.begin() + static_cast<std::ptrdiff_t>(k), sw);
  }
}

// The cells a run measures: the sweep's points, the held-out series and the exchanges o_x is
// fitted to (the streams come after the switches: measure_streams).
void lay_out_cells(const LoggpOptions& o, LoggpResult& r) {
  for (std::uint64_t s : o.sweep_sizes()) {
    LoggpPoint p;
    p.bytes = s;
    r.points.push_back(p);
  }
  for (std::uint64_t s : o.heldout_sizes)
    r.heldout.push_back({PrttKind::client_delay, s, {}});
  for (std::uint64_t s : o.heldout_collective_sizes) {
    r.heldout.push_back({PrttKind::allreduce, s, {}});
    r.heldout.push_back({PrttKind::alltoall, s, {}});
  }
  for (std::uint64_t s : o.heldout_exchange_sizes)
    r.heldout.push_back({PrttKind::exchange, s, {}});
  if (o.crossing_exchanges) {
    // At every size of the sweep: a crossing's cost may grow with size (O_x), and a range that
    // starts above 64 KiB (TCP's rendezvous) has its own.
    for (std::uint64_t s : o.sweep_sizes()) {
      if (std::find(o.heldout_exchange_sizes.begin(), o.heldout_exchange_sizes.end(), s) ==
          o.heldout_exchange_sizes.end())
        r.exchanges.push_back({PrttKind::exchange, s, {}});
    }
  }
}

// What the first min_rounds rounds of r's cells move, with the pilot and the warm-up.
Traffic first_rounds_of(const LoggpResult& r, const LoggpOptions& o) {
  std::vector<std::size_t> all(r.points.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  const Cost one = round_cost(r.points, all, o.n, r.heldout, r.exchanges);
  const double rounds = o.min_rounds + 1.5;  // the pilot and the warm-up
  return {one.messages * rounds, one.bytes * rounds};
}

}  // namespace

Traffic first_rounds_traffic(const LoggpOptions& o) {
  o.validate();
  LoggpResult r;
  lay_out_cells(o, r);
  return first_rounds_of(r, o);
}

void scale_budgets_to_sweep(LoggpOptions& o, const LoggpOptions& reference, bool messages,
                            bool bytes) {
  const Traffic want = first_rounds_traffic(o), ref = first_rounds_traffic(reference);
  const auto scaled = [](std::uint64_t budget, double ratio) {
    return ratio > 1 ? static_cast<std::uint64_t>(std::ceil(static_cast<double>(budget) * ratio))
                     : budget;
  };
  if (messages) o.max_messages = scaled(reference.max_messages, want.messages / ref.messages);
  if (bytes) o.max_bytes = scaled(reference.max_bytes, want.bytes / ref.bytes);
}

// Streams (PrttKind::stream) at the sweep's sizes from the lowest confirmed rendezvous switch
// or acknowledged range on, min_rounds rounds of one cell per size in a fresh random order
// each: what a rendezvous or acknowledged range's gap is fitted to (fit_stream_gap). Measured
// after the switches, not among the rounds: only where a hand-shake or an acknowledgement hides
// the gap from the PRTTs, and without changing the rounds' cells
// (interleaved with them, they cost the held-out MPI_Allreduce 1.0-6.4 points of E_abs in each
// of 6 loaded pairs of profiles over vader, where no range's gap came from them; measured after
// the switches, it was the smaller in 3 of 6 pairs). Within the budgets; what they cut is noted.
void measure_streams(Session& session, LoggpResult& r) {
  const LoggpOptions& o = session.options();
  if (!o.streams) return;
  // From the lowest range whose sends wait for the receiver: a rendezvous range, or an eager
  // one whose sends complete on the receiver's acknowledgement (Tm = TA, read from the switch
  // probe as the analysis reads it): there the blocking PRTTs show the acknowledgement's round
  // trip where a stream shows the gap.
  // Below the lowest rendezvous switch (`handshake`) those are the acknowledged ranges' sizes,
  // where the send call's own time is measured too (PrttKind::send_call; fit_send_call).
  std::uint64_t from = UINT64_MAX, handshake = UINT64_MAX;
  for (std::size_t k = 0; k < r.switches.size(); ++k) {
    const LoggpSwitch& sw = r.switches[k];
    if (sw.rendezvous && sw.confirmed) handshake = std::min(handshake, sw.first_bytes);
    if (detail::sends_wait(sw.waited_above, sw.late_above)) from = std::min(from, sw.first_bytes);
    if (!sw.rendezvous && detail::sends_wait(sw.waited_below, sw.late_below))
      from = std::min(from, k == 0 ? std::uint64_t{1} : r.switches[k - 1].first_bytes);
  }
  from = std::min(from, handshake);
  for (const auto& p : r.points) {
    if (!p.fitted() || p.bytes < from) continue;
    r.streams.push_back({PrttKind::stream, p.bytes, {}});
    if (p.bytes < handshake) r.send_calls.push_back({PrttKind::send_call, p.bytes, {}});
  }
  // One order over both kinds of cell, drawn afresh each round.
  const auto cell = [&](std::size_t i) -> CellSeries& {
    return i < r.streams.size() ? r.streams[i] : r.send_calls[i - r.streams.size()];
  };
  std::vector<std::size_t> order(r.streams.size() + r.send_calls.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::uint32_t round = 0; round < o.min_rounds && !order.empty(); ++round) {
    std::shuffle(order.begin(), order.end(), session.rng());
    std::vector<PrttSpec> plan;
    for (std::size_t i : order)
      plan.push_back(heldout_spec(cell(i)));
    if (!session.affordable(cost_of(plan, 1)) || session.over_time()) {
      r.notes.push_back(fmt::format(
          "streams: the budgets allowed {} of {} rounds (a range's gap is fitted to 3 or more)",
          round, o.min_rounds));
      break;
    }
    session.report(fmt::format("loggp streams, round {} of {}", round + 1, o.min_rounds),
                   0.9 + 0.05 * round / o.min_rounds);
    const auto times = session.run(plan, 1);
    for (std::size_t k = 0; k < order.size(); ++k)
      cell(order[k]).rounds_us.push_back(times[k][0]);
  }
}

std::optional<LoggpResult> measure_loggp(net::Transport& t, const LoggpOptions& o,
                                         ProgressSink* progress) {
  o.validate();
  if (t.role() == net::Role::dest) {
    serve_prtt(t);
    return std::nullopt;
  }
  LoggpResult r;
  r.seed = o.seed != 0 ? o.seed : std::random_device{}() | 1;
  Session session(t, o, progress, r.seed);
  lay_out_cells(o, r);
  r.budget = {static_cast<double>(o.max_messages), static_cast<double>(o.max_bytes)};
  if (!o.heldout_collective_sizes.empty() && t.kind() != "mpi") {
    finish_prtt(t);
    throw InputError("heldout_collective_sizes",
                     fmt::format("the {} transport has no collectives", t.kind()));
  }
  // The first rounds must fit the budgets: say so before measuring anything.
  {
    const Traffic first = first_rounds_of(r, o);
    if (!session.affordable({first.messages, first.bytes})) {
      finish_prtt(t);
      // Named by the largest size, which every command that sweeps has (the budgets a command
      // was not given follow the sweep, so only a budget given can be too small).
      throw InputError(
          "max_size",
          fmt::format("the first {} rounds of a sweep up to {} B need {} messages and {:.3g} GB, "
                      "above the budget of {} messages and {:.3g} GB: lower the largest size, or "
                      "raise the budget where the command has one",
                      o.min_rounds, o.max_size, std::llround(first.messages), first.bytes / 1e9,
                      o.max_messages, static_cast<double>(o.max_bytes) / 1e9));
    }
  }
  // Warm-up: the first rounds of a run are slow (connections, caches, page faults) and would
  // bias the smallest size, which L is computed from. Measured and discarded.
  const std::uint64_t smallest = r.points.front().bytes, largest = r.points.back().bytes;
  const PrttSpec warm[] = {{PrttKind::client_delay, o.n, smallest, 0},
                           {PrttKind::client_delay, 1, largest, 0}};
  auto phase_start = std::chrono::steady_clock::now();
  const auto phase = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    r.phase_seconds.emplace_back(name, std::chrono::duration<double>(now - phase_start).count());
    phase_start = now;
  };
  session.run(warm, 3);
  choose_delays(session, r.points);
  // A transport failure after the first complete round keeps what was measured: the analysis of
  // the complete rounds (a failed round adds nothing to any point), or, once confirmation has
  // begun, the result as the rounds left it, its switches unconfirmed.
  std::optional<LoggpResult> after_rounds;
  bool exhausted_after_rounds = false;  // what the budgets had cut when the rounds ended
  const char* stage = "rounds";
  try {
    run_rounds(session, r.points, r);
    analyse_loggp(r, o, true);
    phase("rounds");
    after_rounds = r;
    exhausted_after_rounds = session.exhausted();
    stage = "scan";
    scan_for_handshakes(session, r);
    phase("scan");
    stage = "confirmation";
    std::vector<std::string> notes;
    confirm_switches(session, r, notes);
    // The ranges' parameters from the interleaved rounds alone (LoggpPoint::interleaved_rounds).
    const std::size_t later = keep_interleaved_rounds(r.points);
    const auto bisected = static_cast<std::size_t>(std::count_if(
        r.points.begin(), r.points.end(), [](const LoggpPoint& p) { return !p.fitted(); }));
    if (later > 0 || bisected > 0) {
      std::string what;
      if (later > 0)
        what = fmt::format("{} rounds the confirmation added at the sweep's sizes", later);
      if (bisected > 0) {
        what += fmt::format("{}the {} bisection sizes", what.empty() ? "" : " and ", bisected);
      }
      notes.push_back(fmt::format(
          "the fits read the interleaved rounds only: {} (measured later, when the machine may "
          "be in another state) serve to place the switches, not to fit them",
          what));
    }
    summarise_points(r.points, o);
    phase("confirmation");
    stage = "streams";
    measure_streams(session, r);
    phase("streams");
    analyse_loggp(r, o, false);
    r.notes.insert(r.notes.end(), notes.begin(), notes.end());
  } catch (const TransportError& e) {
    if (r.rounds == 0) throw;
    phase(stage);
    if (std::string(stage) == "streams") {
      // The confirmed result, without the streams (nothing else was measured after them).
      r.streams.clear();
      r.send_calls.clear();
      analyse_loggp(r, o, false);
      r.notes.push_back(
          "interrupted during the streams: the rendezvous ranges keep their calibrated gap");
    } else if (after_rounds) {
      // The rounds' result; the time of every phase, the interrupted one included, is kept.
      auto phases = std::move(r.phase_seconds);
      r = std::move(*after_rounds);
      r.phase_seconds = std::move(phases);
      r.notes.push_back(fmt::format(
          "interrupted during the {}: the switches are the rounds' detection, unconfirmed",
          std::string(stage) == "scan" ? "scan for hand-shakes" : "confirmation of switches"));
    } else {
      summarise_points(r.points, o);
      analyse_loggp(r, o, true);
      r.notes.push_back(fmt::format("interrupted after {} complete rounds of at least {}", r.rounds,
                                    o.min_rounds));
    }
    r.interrupted = e.what();
  }
  if (progress) progress->done();
  // The dest's counters come from the dest, which an interrupted run no longer reaches; a peer
  // lost after the last measurement costs only those counters, not the result.
  net::Counters dest;
  if (r.interrupted.empty()) {
    try {
      dest = finish_prtt(t);
    } catch (const TransportError& e) {
      r.notes.push_back(fmt::format(
          "the peer was lost after the last measurement ({}): bytes count the source only",
          e.what()));
    }
  }
  r.source_counters = t.counters();
  r.total_counters = {r.source_counters.messages + dest.messages,
                      r.source_counters.bytes + dest.bytes};
  r.seconds = session.elapsed();
  // A result restored to the rounds' own says only what cut the rounds short: refinement the
  // failure threw away is not in it.
  r.budget_exhausted =
      after_rounds && !r.interrupted.empty() ? exhausted_after_rounds : session.exhausted();
  if (r.budget_exhausted) {
    r.notes.push_back(
        "a budget (max_bytes, max_messages or budget) cut extra rounds or refinement short");
  }
  r.stable_points = static_cast<std::uint32_t>(
      std::count_if(r.points.begin(), r.points.end(), [](const auto& p) { return p.converged; }));
  if (r.interrupted.empty() && o.calibrate && add_per_byte_changes(r, o) > 0) {
    phase("per-byte changes");
  }
  bootstrap_intervals(r, o);
  phase("bootstrap");
  calibrate_loggp(r, o);
  phase("calibration");
  return r;
}

}  // namespace commgauge::measure
