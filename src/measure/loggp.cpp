#include "measure/loggp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "measure/prtt.hpp"
#include "net/virtual_network.hpp"
#include "stats/change_detection.hpp"
#include "stats/descriptive.hpp"
#include "stats/median_ci.hpp"

namespace commgauge::measure {

// ---------------------------------------------------------------------------------------------
// Options

void LoggpOptions::validate() const {
  if (min_size > max_size) {
    throw InputError("--min-size",
                     fmt::format("{} is larger than --max-size {}", min_size, max_size));
  }
  if (n < 2) throw InputError("-n", fmt::format("n must be at least 2 (PRTT(n,.,s)), got {}", n));
  if (delay_us < 0 && delay_us != -1) {
    throw InputError("--delay", fmt::format("must be >= 0 us, got {}", delay_us));
  }
  if (!(points_per_octave > 0)) throw InputError("--points-per-octave", "must be positive");
  if (detector != "joint" && detector != "seed000" && detector != "none") {
    throw InputError("--detector",
                     fmt::format("expected joint, seed000 or none, got \"{}\"", detector));
  }
  if (lookahead < 1) throw InputError("--lookahead", "must be at least 1");
  if (!(pfact > 0)) throw InputError("--pfact", "must be positive");
  if (!(refine_tolerance > 0)) throw InputError("--refine-tolerance", "must be positive");
  if (!(ci_target > 0)) throw InputError("--ci-target", "must be positive");
  if (min_repetitions < 1) throw InputError("--min-repetitions", "must be at least 1");
  if (max_repetitions < min_repetitions) {
    throw InputError("--max-repetitions", "must be at least --min-repetitions");
  }
  if (budget_s < 0) throw InputError("--budget", "must be >= 0 seconds");
  if (max_messages == 0) throw InputError("--max-messages", "must be positive");
  if (max_bytes == 0) throw InputError("--max-bytes", "must be positive");
  if (sweep_sizes().size() < 2) throw InputError("--sizes", "at least 2 message sizes are needed");
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
       {"min_repetitions", o.min_repetitions},
       {"max_repetitions", o.max_repetitions},
       {"budget_s", o.budget_s},
       {"max_messages", o.max_messages},
       {"max_bytes", o.max_bytes},
       {"self_check", o.self_check}};
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
  o.min_repetitions = j.at("min_repetitions");
  o.max_repetitions = j.at("max_repetitions");
  o.budget_s = j.at("budget_s");
  o.max_messages = j.at("max_messages");
  o.max_bytes = j.at("max_bytes");
  o.self_check = j.at("self_check");
}

double PrttStat::noise_us() const {
  if (std::isfinite(upper_us - lower_us) && upper_us > lower_us) {
    return (upper_us - lower_us) / (2 * 1.96);
  }
  return 0;
}

namespace {

constexpr double kRelativeFloor = 1e-6;  // exact virtual-network data: rounding is not a step

double combined(double a, double b, double scale) {
  return std::sqrt(a * a + b * b) * scale;
}

// ---------------------------------------------------------------------------------------------
// Measuring (source side)

class Sweep {
 public:
  Sweep(net::Transport& t, const LoggpOptions& o, ProgressSink* progress, std::size_t sizes)
      : t_(t), o_(o), progress_(progress), start_(std::chrono::steady_clock::now()) {
    // Each size may spend an equal share of the message and byte budgets on repetitions
    // beyond its first batches; refinement points (about a third more) get the same share.
    const double points = 1.35 * static_cast<double>(std::max<std::size_t>(sizes, 1));
    share_messages_ = static_cast<double>(o.max_messages) / points;
    share_bytes_ = static_cast<double>(o.max_bytes) / points;
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  bool over_budget() const { return o_.budget_s > 0 && elapsed() > o_.budget_s; }

  PrttStat measure(const PrttSpec& spec) {
    std::vector<double> samples = batch(spec, o_.min_repetitions);
    for (;;) {
      const auto ci = stats::median_interval(samples, 0.95);
      const bool converged = ci.relative_half_width <= o_.ci_target;
      const auto more = static_cast<std::uint32_t>(std::min<std::size_t>(
          o_.min_repetitions,
          o_.max_repetitions - std::min<std::size_t>(samples.size(), o_.max_repetitions)));
      if (converged || more == 0 || over_budget() || !affordable(spec, more)) {
        return {ci.median, ci.lower, ci.upper, static_cast<std::uint32_t>(samples.size()),
                converged};
      }
      const auto extra = batch(spec, more);
      samples.insert(samples.end(), extra.begin(), extra.end());
    }
  }

  // Starts the accounting of one size's share of the budget.
  void begin_point() { point_messages_ = point_bytes_ = 0; }

  LoggpPoint point(std::uint64_t bytes) {
    begin_point();
    LoggpPoint p;
    p.bytes = bytes;
    const std::uint32_t n = o_.n;
    p.prtt1 = measure({PrttKind::client_delay, 1, bytes, 0});
    p.prtt_n0 = measure({PrttKind::client_delay, n, bytes, 0});
    const double nm1 = static_cast<double>(n - 1);
    p.g_all_us = (p.prtt_n0.median_us - p.prtt1.median_us) / nm1;  // eq. (7)
    if (o_.delay_us >= 0) {
      p.delay_us = o_.delay_us;
    } else {
      p.delay_us = p.prtt1.median_us;  // seed 000 §3.2
      if (p.delay_us <= p.g_all_us) {
        // The data show d <= G_all: fall back to d = PRTT(2,0,s) (seed 000 §3.2).
        p.prtt2 = measure({PrttKind::client_delay, 2, bytes, 0});
        p.delay_us = p.prtt2->median_us;
      }
    }
    p.prtt_nd = measure({PrttKind::client_delay, n, bytes, p.delay_us});
    p.prtt_nr = measure({PrttKind::server_delay, n, bytes, p.delay_us});
    p.o_s_us = (p.prtt_nd.median_us - p.prtt1.median_us) / nm1 - p.delay_us;  // eq. (6)
    p.o_r_us = (p.prtt_nr.median_us - p.prtt1.median_us) / nm1 - p.delay_us;
    p.o_s_noise = combined(p.prtt_nd.noise_us(), p.prtt1.noise_us(), 1 / nm1);
    p.o_r_noise = combined(p.prtt_nr.noise_us(), p.prtt1.noise_us(), 1 / nm1);
    p.g_all_noise = combined(p.prtt_n0.noise_us(), p.prtt1.noise_us(), 1 / nm1);
    return p;
  }

  void report(std::string_view label, double fraction) {
    if (progress_) progress_->update(label, fraction);
  }

 private:
  // Messages and bytes of `reps` rounds of `spec`, both directions, plus the 3 command values.
  static std::pair<double, double> cost(const PrttSpec& spec, std::uint32_t reps) {
    const double messages = static_cast<double>(reps) * (spec.n + 1.0) + 3;
    const double bytes =
        static_cast<double>(reps) * (spec.n + 1.0) * static_cast<double>(spec.bytes) + 24;
    return {messages, bytes};
  }
  bool affordable(const PrttSpec& spec, std::uint32_t reps) const {
    const auto [m, b] = cost(spec, reps);
    return point_messages_ + m <= share_messages_ && point_bytes_ + b <= share_bytes_;
  }
  std::vector<double> batch(const PrttSpec& spec, std::uint32_t reps) {
    const auto [m, b] = cost(spec, reps);
    point_messages_ += m;
    point_bytes_ += b;
    total_messages_ += m;
    total_bytes_ += b;
    return prtt_batch(t_, spec, reps);
  }

 public:
  /// Whether one more size (first batches only) still fits in the message and byte budgets.
  bool can_afford_point(std::uint64_t bytes) const {
    double m = 0, b = 0;
    for (std::uint32_t n : {1u, o_.n, o_.n, o_.n}) {
      const auto [mm, bb] = cost({PrttKind::client_delay, n, bytes, 0}, o_.min_repetitions);
      m += mm;
      b += bb;
    }
    return total_messages_ + m <= static_cast<double>(o_.max_messages) &&
           total_bytes_ + b <= static_cast<double>(o_.max_bytes);
  }

 private:
  double total_messages_ = 0, total_bytes_ = 0;

  double share_messages_ = 0, share_bytes_ = 0;
  double point_messages_ = 0, point_bytes_ = 0;
  net::Transport& t_;
  const LoggpOptions& o_;
  ProgressSink* progress_;
  std::chrono::steady_clock::time_point start_;
};

// ---------------------------------------------------------------------------------------------
// Analysis

std::vector<double> sizes_of(const std::vector<LoggpPoint>& pts) {
  std::vector<double> s;
  for (const auto& p : pts)
    s.push_back(static_cast<double>(p.bytes));
  return s;
}

// The three curves judged together: PRTT(1,0,s), o_s(s) and G_all(s).
std::vector<stats::Curve> curves_of(const std::vector<LoggpPoint>& pts) {
  std::vector<stats::Curve> c(3);
  for (const auto& p : pts) {
    c[0].value.push_back(p.prtt1.median_us);
    c[0].noise.push_back(p.prtt1.noise_us());
    c[1].value.push_back(p.o_s_us);
    c[1].noise.push_back(p.o_s_noise);
    c[2].value.push_back(p.g_all_us);
    c[2].noise.push_back(p.g_all_noise);
  }
  return c;
}

std::vector<std::size_t> detect(const std::vector<LoggpPoint>& pts, const LoggpOptions& o) {
  if (o.detector == "none" || pts.size() < 4) return {};
  stats::ChangeOptions co;
  co.lookahead = o.lookahead;
  co.pfact = o.pfact;
  co.relative_noise_floor = kRelativeFloor;
  const auto size = sizes_of(pts);
  const auto curves = curves_of(pts);
  if (o.detector == "seed000") return stats::detect_changes_seed000(size, curves[2], co);
  return stats::detect_changes_joint(size, curves, co);
}

// Marks where eq. (7) measured the overhead, not the gap (o >= G_all, seed 000 §4 on SCI).
void mark_identifiability(std::vector<LoggpPoint>& pts) {
  for (auto& p : pts) {
    const double o = std::max(p.o_s_us, p.o_r_us);
    const double margin = 2 * combined(p.g_all_noise, std::max(p.o_s_noise, p.o_r_noise), 1) +
                          0.01 * std::abs(p.g_all_us) + kRelativeFloor * std::abs(p.g_all_us);
    p.g_identifiable = p.g_all_us > o + margin;
  }
}

stats::LineFit weighted_fit(const std::vector<double>& x, const std::vector<double>& y,
                            const std::vector<double>& noise) {
  std::vector<double> w(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double s = std::max(noise[i], kRelativeFloor * std::abs(y[i]) + 1e-9);
    w[i] = 1 / (s * s);
  }
  if (x.size() == 1) {
    stats::LineFit f;
    f.intercept = y[0];
    f.points = 1;
    return f;
  }
  return stats::fit_line(x, y, w);
}

// A line through (x, y) whose slope may not be negative: a negative slope is noise, and then the
// level is the weighted mean.
stats::LineFit non_negative_fit(const std::vector<double>& x, const std::vector<double>& y,
                                const std::vector<double>& noise, bool& clamped) {
  stats::LineFit f = weighted_fit(x, y, noise);
  clamped = false;
  if (f.slope < 0) {
    // Only a clearly negative slope is worth a note; rounding-level ones are set to 0 quietly.
    const double span = x.back() * -f.slope;
    clamped = span > 1e-6 * std::abs(f.intercept) + 1e-9 &&
              !(std::isfinite(f.slope_stderr) && -f.slope < 2 * f.slope_stderr);
    double sw = 0, swy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double s = std::max(noise[i], kRelativeFloor * std::abs(y[i]) + 1e-9);
      sw += 1 / (s * s);
      swy += y[i] / (s * s);
    }
    f.slope = 0;
    f.intercept = swy / sw;
  }
  return f;
}

// A rendezvous range: G_all jumps over the previous range by about a small-message round trip
// (seed 000 §4: 2L + 4o); the range is then marked and its parameters reported net of the
// hand-shake H = 2 (o_s + L + o_r). The virtual network gives for such a range
//   o_s(s) = H + o_s + s O_s  and  PRTT(1,0,s)/2 - o_s(s) = L + (s-1) G + o_r + s O_r,
// so o_r, o_s follow from the two intercepts; G and O_r enter every PRTT only as G + O_r, so G
// is taken from the range below (the same wire) and O_r is the rest.
// `fs_intercept` is the o_s(s) line's intercept; `latency_line` fits PRTT(1,0,s)/2 - o_s(s)
// (or `single` holds its only value).
struct RendezvousReading {
  model::LinkRange params;
  std::string note;
};

std::optional<RendezvousReading> read_as_rendezvous(const LoggpRange& range, const LoggpPoint& left,
                                                    const LoggpPoint& right, double rtt_small,
                                                    double latency_us, double G_wire,
                                                    double fs_intercept,
                                                    const stats::LineFit& latency_line,
                                                    double single) {
  const double jump = right.g_all_us - left.g_all_us;
  const double p1_jump = right.prtt1.median_us - left.prtt1.median_us;
  // A hand-shake in each direction of the round trip: PRTT(1,0,s) steps by about two small
  // round trips, G_all by about one.
  if (!(jump > 0.5 * rtt_small && p1_jump > 1.5 * rtt_small)) return std::nullopt;
  const bool one_point = latency_line.points == 0;
  const double recv_overhead = (one_point ? single : latency_line.intercept) - latency_us + G_wire;
  const double per_byte = one_point ? G_wire : latency_line.slope;
  model::LinkRange lr = range.params;
  lr.rendezvous = true;
  lr.recv_overhead_us = std::max(0.0, recv_overhead);
  lr.gap_per_byte_us = std::min(G_wire, std::max(0.0, per_byte));
  lr.recv_overhead_per_byte_us = std::max(0.0, per_byte - lr.gap_per_byte_us);
  lr.send_overhead_us =
      std::max(0.0, (fs_intercept - 2 * latency_us - 2 * lr.recv_overhead_us) / 3);
  const double handshake = 2 * (lr.send_overhead_us + latency_us + lr.recv_overhead_us);
  lr.gap_us = std::max(0.0, (range.g_identifiable ? range.params.gap_us : 0.0) - handshake);
  std::string note = fmt::format(
      "rendezvous: G_all jumps by {:.3g} us and PRTT(1,0,s) by {:.3g} us at {} B (a small-message "
      "round trip is {:.3g} us); overheads and g are reported net of the hand-shake 2(o_s + L + "
      "o_r) = {:.3g} us; the gap is hidden behind it",
      jump, p1_jump, right.bytes, rtt_small, handshake);
  if (recv_overhead < 0) note += "; the data give a negative o_r, set to 0";
  return RendezvousReading{lr, note};
}

std::optional<RendezvousReading> fit_range(LoggpResult& r, LoggpRange& range, std::size_t first,
                                           std::size_t last, const LoggpRange* previous,
                                           double latency_us) {
  const auto& pts = r.points;
  std::vector<double> x, os, os_n, orr, or_n, p1h, p1h_n, p1a, p1a_n, xg, g, g_n;
  for (std::size_t i = first; i <= last; ++i) {
    const auto& p = pts[i];
    const double s = static_cast<double>(p.bytes);
    x.push_back(s);
    os.push_back(p.o_s_us);
    os_n.push_back(p.o_s_noise);
    orr.push_back(p.o_r_us);
    or_n.push_back(p.o_r_noise);
    // PRTT(1,0,s)/2 - o_s(s): L + (s-1)G + o_r(s), whose slope gives G when g/G are hidden.
    p1h.push_back(p.prtt1.median_us / 2 - p.o_s_us - p.o_r_us);
    p1h_n.push_back(combined(p.prtt1.noise_us() / 2, combined(p.o_s_noise, p.o_r_noise, 1), 1));
    // PRTT(1,0,s)/2 - o_s(s): what a rendezvous range leaves after the sender's part.
    p1a.push_back(p.prtt1.median_us / 2 - p.o_s_us);
    p1a_n.push_back(combined(p.prtt1.noise_us() / 2, p.o_s_noise, 1));
    if (p.g_identifiable) {
      xg.push_back(s - 1);
      g.push_back(p.g_all_us);
      g_n.push_back(p.g_all_noise);
    }
  }
  range.fit_points = xg.size();
  model::LinkRange& lr = range.params;
  {
    // Plain LogGP's g and G, as seed 000's tool fits them: eq. (7) over every size of the range.
    std::vector<double> xa, ga, ga_n;
    for (std::size_t i = first; i <= last; ++i) {
      xa.push_back(static_cast<double>(pts[i].bytes - 1));
      ga.push_back(pts[i].g_all_us);
      ga_n.push_back(pts[i].g_all_noise);
    }
    const bool fit = xa.size() >= 2 && xa.front() != xa.back();
    const auto fa = fit ? weighted_fit(xa, ga, ga_n) : stats::LineFit{ga[0], 0};
    lr.plain_gap_us = std::max(0.0, fa.intercept);
    lr.plain_gap_per_byte_us = std::max(0.0, fa.slope);
  }
  bool clamped = false;
  const bool one_point = x.size() == 1;

  const auto fs = non_negative_fit(x, os, os_n, clamped);
  if (clamped) range.notes.push_back("o_s(s) decreases with size here: per-byte O_s set to 0");
  const auto fr = non_negative_fit(x, orr, or_n, clamped);
  if (clamped) range.notes.push_back("o_r(s) decreases with size here: per-byte O_r set to 0");
  lr.send_overhead_us = fs.intercept;
  lr.send_overhead_per_byte_us = fs.slope;
  lr.recv_overhead_us = fr.intercept;
  lr.recv_overhead_per_byte_us = fr.slope;

  // g and G need identifiable points that carry the range: at least 3, and most of its sizes
  // (a few small sizes where noise lifted G_all above o cannot give a slope for all of them).
  range.g_identifiable = xg.size() >= 3 || (xg.size() == 2 && x.size() == 2);
  range.g_identifiable = range.g_identifiable && 2 * xg.size() >= x.size();
  if (range.g_identifiable) {
    // seed 000 eq. (7): G_all(s) = g + (s-1) G over the range, by least squares.
    const auto fg = weighted_fit(xg, g, g_n);
    lr.gap_us = fg.intercept;
    lr.gap_per_byte_us = fg.slope;
    range.g_stderr_us = fg.intercept_stderr;
    range.G_stderr_us_per_byte = fg.slope_stderr;
    range.fit_residual_us = fg.rms_residual;
  } else {
    // Eq. (7) measured max(o, G_all): the gap is hidden. G from the latency curve instead.
    range.notes.push_back(fmt::format(
        "g and G are not identifiable: o >= G_all at {} of {} sizes (eq. (7) measures o there)",
        x.size() - xg.size(), x.size()));
    const auto fl = one_point ? stats::LineFit{} : weighted_fit(x, p1h, p1h_n);
    lr.gap_us = 0;
    lr.gap_per_byte_us = std::max(0.0, fl.slope);
    range.G_stderr_us_per_byte = fl.slope_stderr;
  }

  std::optional<RendezvousReading> rendezvous;
  if (previous != nullptr && first > 0) {
    rendezvous = read_as_rendezvous(range, pts[first - 1], pts[first], pts.front().prtt1.median_us,
                                    latency_us, previous->params.gap_per_byte_us, fs.intercept,
                                    one_point ? stats::LineFit{} : weighted_fit(x, p1a, p1a_n),
                                    one_point ? p1a[0] : 0);
  }

  for (auto [name, value] : {std::pair<const char*, double*>{"o_s", &lr.send_overhead_us},
                             {"o_r", &lr.recv_overhead_us},
                             {"g", &lr.gap_us},
                             {"G", &lr.gap_per_byte_us}}) {
    if (*value < 0) {
      range.notes.push_back(fmt::format(
          "the data cannot support this range's {}: the fit gives {:.4g}, reported as 0", name,
          *value));
      *value = 0;
    }
  }
  return rendezvous;
}

// Sum of squared relative deviations of the virtual network's PRTT(1,0,s), PRTT(n,0,s) and
// PRTT(n,d,s) from the measured ones, over the points of range k, with `params` for that range.
double misfit(const LoggpResult& r, std::size_t k, const model::LinkRange& params, double latency,
              std::uint32_t n) {
  model::LinkParams link;
  link.latency_us = latency;
  link.ranges = {params};
  link.ranges[0].from_bytes = 0;
  const double one_way = params.send_overhead_us + latency + params.recv_overhead_us;
  if (!(one_way > 0)) return std::numeric_limits<double>::infinity();
  LoggpResult part;
  for (const auto& p : r.points) {
    if (p.range == k) part.points.push_back(p);
  }
  const LoggpSelfCheck c = self_check(part, link, n);
  double sum = 0;
  const double terms = 3.0 * static_cast<double>(part.points.size());
  for (std::size_t i = 0; i < part.points.size(); ++i) {
    const auto& p = part.points[i];
    const double measured[3] = {p.prtt1.median_us, p.prtt_n0.median_us, p.prtt_nd.median_us};
    for (std::size_t j = 0; j < 3; ++j) {
      const double d = (c.virtual_us[i][j] - measured[j]) / measured[j];
      sum += d * d;
    }
  }
  return sum / terms;  // mean squared relative deviation
}

void choose_reading(LoggpResult& r, std::size_t k, const RendezvousReading& reading, double latency,
                    std::uint32_t n) {
  LoggpRange& range = r.ranges[k];
  range.synchronizing_step = true;
  const double direct = misfit(r, k, range.params, latency, n);
  const double handshake = misfit(r, k, reading.params, latency, n);
  if (handshake <= direct) {
    range.params = reading.params;
    range.g_identifiable = false;
    std::erase_if(range.notes, [](const std::string& note) {
      return note.rfind("g and G are not identifiable", 0) == 0;
    });
    range.notes.push_back(reading.note);
  } else {
    range.notes.push_back(fmt::format(
        "the PRTT(1,0,s) and G_all steps at {} B look like a rendezvous hand-shake, but the "
        "parameters net of a hand-shake reproduce this range's PRTT curves worse (rms {:.3g} %) "
        "than the direct fit (rms {:.3g} %): kept as a non-rendezvous range",
        range.first_measured, 100 * std::sqrt(handshake), 100 * std::sqrt(direct)));
  }
}

}  // namespace

void analyse_loggp(LoggpResult& r, const LoggpOptions& o, bool detect_changes) {
  auto& pts = r.points;
  mark_identifiability(pts);
  if (detect_changes) r.changes = detect(pts, o);
  r.ranges.clear();
  r.notes.clear();
  std::vector<std::size_t> starts = {0};
  starts.insert(starts.end(), r.changes.begin(), r.changes.end());

  // Latency from the smallest size (seed 000 §3.4 with s = 1).
  const LoggpPoint& first = pts.front();
  r.eel_us = first.prtt1.median_us / 2;

  // Range 0 is fitted first: L needs its G (zero at 1 byte).
  double latency = 0;
  std::vector<std::optional<RendezvousReading>> rendezvous;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t a = starts[k];
    const std::size_t b = k + 1 < starts.size() ? starts[k + 1] - 1 : pts.size() - 1;
    LoggpRange range;
    range.from_bytes = k == 0 ? std::min<std::uint64_t>(pts[a].bytes, 1) : pts[a].bytes;
    range.first_measured = pts[a].bytes;
    range.last_measured = pts[b].bytes;
    range.params.from_bytes = range.from_bytes;
    for (std::size_t i = a; i <= b; ++i)
      pts[i].range = k;
    rendezvous.push_back(fit_range(r, range, a, b, k > 0 ? &r.ranges.back() : nullptr, latency));
    if (k == 0) {
      latency = r.eel_us - first.o_s_us - first.o_r_us -
                static_cast<double>(first.bytes - 1) * range.params.gap_per_byte_us;
    }
    r.ranges.push_back(range);
  }
  for (std::size_t k = 0; k < r.ranges.size(); ++k) {
    r.ranges[k].to_bytes = k + 1 < r.ranges.size() ? r.ranges[k + 1].from_bytes - 1
                                                   : std::numeric_limits<std::uint64_t>::max();
    // A step that looks like a rendezvous hand-shake: keep whichever reading reproduces the
    // range's measured PRTT curves better on the virtual network.
    if (rendezvous[k]) choose_reading(r, k, *rendezvous[k], latency, o.n);
  }

  r.link.latency_us = latency;
  r.L_negative = latency < 0;
  r.link.ranges.clear();
  for (const auto& range : r.ranges)
    r.link.ranges.push_back(range.params);
  if (r.L_negative) {
    r.notes.push_back(fmt::format(
        "L = eel - o_s(1) - o_r(1) = {:.4g} us is negative: o and L overlap on this transport "
        "(seed 000 §3.4); eel = {:.4g} us is the end-to-end latency",
        latency, r.eel_us));
  }
  // The one-way time must stay positive for the document to be valid.
  for (auto& range : r.link.ranges) {
    const double one_way = range.send_overhead_us + latency + range.recv_overhead_us;
    if (!(one_way > 0)) {
      range.recv_overhead_us += 1e-6 - one_way;
      r.notes.push_back("o_r raised so that o_s + L + o_r stays positive in every range");
    }
  }

  // The LogGPS view (seed 004): s = first short->eager change, S = first rendezvous range.
  r.short_eager_bytes.reset();
  r.rendezvous_bytes.reset();
  std::size_t eager_ranges = 0;
  for (const auto& range : r.ranges) {
    if (range.params.rendezvous || range.synchronizing_step) {
      if (!r.rendezvous_bytes) r.rendezvous_bytes = range.from_bytes;
    } else if (!r.rendezvous_bytes) {
      ++eager_ranges;
      if (eager_ranges == 2) r.short_eager_bytes = range.from_bytes;
    }
  }
  for (std::size_t k = 0; k < r.ranges.size(); ++k) {
    auto& range = r.ranges[k];
    if (range.params.rendezvous || range.synchronizing_step)
      range.protocol = "rendezvous";
    else if (k == 0 && r.short_eager_bytes)
      range.protocol = "short";
    else
      range.protocol = "eager";
  }
}

namespace {

// A point that lies far outside both neighbours on a monotone curve is re-measured once.
bool is_spike(const std::vector<LoggpPoint>& pts, std::size_t i) {
  if (i + 1 >= pts.size()) return false;
  auto off = [&](double a, double v, double b, double noise) {
    const double k = 5 * noise + 0.05 * std::abs(v);
    return v > std::max(a, b) + k || v < std::min(a, b) - k;
  };
  if (i == 0) {
    // The first point (L comes from it) against its two right neighbours.
    if (pts.size() < 3) return false;
    const double a = pts[1].prtt1.median_us;
    const double b = pts[2].prtt1.median_us;
    const double v = pts[0].prtt1.median_us;
    return std::abs(a - b) < 0.2 * std::abs(a) && off(a, v, b, pts[0].prtt1.noise_us());
  }
  return off(pts[i - 1].prtt1.median_us, pts[i].prtt1.median_us, pts[i + 1].prtt1.median_us,
             pts[i].prtt1.noise_us()) ||
         off(pts[i - 1].g_all_us, pts[i].g_all_us, pts[i + 1].g_all_us, pts[i].g_all_noise);
}

// Bisection between points c-1 and c (a detected switch): each midpoint joins the side whose
// line it fits better, until the switch is bracketed within the tolerance.
void refine_switches(Sweep& sweep, LoggpResult& r, const LoggpOptions& o) {
  auto& pts = r.points;
  std::vector<std::size_t> changes = r.changes;
  for (std::size_t k = 0; k < changes.size(); ++k) {
    for (;;) {
      const std::size_t c = changes[k];
      const std::uint64_t lo = pts[c - 1].bytes;
      const std::uint64_t hi = pts[c].bytes;
      if (hi - lo <= 1 ||
          static_cast<double>(hi - lo) <= o.refine_tolerance * static_cast<double>(lo))
        break;
      if (sweep.over_budget()) {
        r.budget_exhausted = true;
        return;
      }
      const std::uint64_t mid = std::clamp<std::uint64_t>(
          static_cast<std::uint64_t>(
              std::llround(std::sqrt(static_cast<double>(lo) * static_cast<double>(hi)))),
          lo + 1, hi - 1);
      if (!sweep.can_afford_point(mid)) {
        r.refinement_stopped_by_budget = true;
        break;
      }
      sweep.report(fmt::format("refining {}-{} B", lo, hi), 0.9);
      LoggpPoint p = sweep.point(mid);
      p.refined = true;
      // Segments on either side of the switch.
      const std::size_t left_first = k > 0 ? changes[k - 1] : 0;
      const std::size_t right_last = k + 1 < changes.size() ? changes[k + 1] - 1 : pts.size() - 1;
      std::vector<LoggpPoint> probe(pts.begin() + static_cast<std::ptrdiff_t>(left_first),
                                    pts.begin() + static_cast<std::ptrdiff_t>(right_last) + 1);
      probe.push_back(p);
      const auto size = sizes_of(probe);
      const auto curves = curves_of(probe);
      const std::size_t left_last = c - 1 - left_first;
      const std::size_t right_first = c - left_first;
      const double to_left =
          stats::joint_distance(size, curves, 0, left_last, probe.size() - 1, kRelativeFloor);
      const double to_right = stats::joint_distance(
          size, curves, right_first, right_last - left_first, probe.size() - 1, kRelativeFloor);
      pts.insert(pts.begin() + static_cast<std::ptrdiff_t>(c), p);
      // The new point sits at index c. Joining the left side moves the switch one index on.
      for (std::size_t j = k; j < changes.size(); ++j)
        ++changes[j];
      if (to_right < to_left) --changes[k];
    }
  }
  r.changes = changes;
}

}  // namespace

std::optional<LoggpResult> measure_loggp(net::Transport& t, const LoggpOptions& o,
                                         ProgressSink* progress) {
  o.validate();
  if (t.role() == net::Role::dest) {
    serve_prtt(t);
    return std::nullopt;
  }
  LoggpResult r;
  const auto sizes = o.sweep_sizes();
  Sweep sweep(t, o, progress, sizes.size());
  // Warm-up: the first rounds of a run are slow (connections, caches, page faults) and would
  // bias the smallest size, which L is computed from. They are measured and discarded.
  prtt_batch(t, {PrttKind::client_delay, o.n, sizes.front(), 0}, o.min_repetitions);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sweep.over_budget()) {
      r.budget_exhausted = true;
      break;
    }
    sweep.report(fmt::format("loggp {} B", sizes[i]),
                 0.8 * static_cast<double>(i) / static_cast<double>(sizes.size()));
    r.points.push_back(sweep.point(sizes[i]));
  }
  if (r.points.size() < 2) {
    finish_prtt(t);
    throw InputError("--budget", "the budget ran out before two sizes were measured");
  }
  // Outliers are re-measured, not dropped.
  for (std::size_t i = 0; i + 1 < r.points.size() && !sweep.over_budget(); ++i) {
    if (is_spike(r.points, i)) {
      LoggpPoint again = sweep.point(r.points[i].bytes);
      again.remeasured = r.points[i].remeasured + 1;
      r.points[i] = again;
      ++r.remeasured_points;
    }
  }
  analyse_loggp(r, o, true);
  if (o.refine && !r.changes.empty()) {
    // The bisection decides on which side each new point lies; the fit keeps that decision.
    refine_switches(sweep, r, o);
    analyse_loggp(r, o, false);
  }
  if (progress) progress->done();
  const net::Counters dest = finish_prtt(t);
  r.source_counters = t.counters();
  r.total_counters = {r.source_counters.messages + dest.messages,
                      r.source_counters.bytes + dest.bytes};
  r.seconds = sweep.elapsed();
  if (r.budget_exhausted)
    r.notes.push_back("the --budget ran out: the sweep or the refinement was cut short");
  if (o.self_check) r.self_check = self_check(r, r.link, o.n);
  return r;
}

LoggpSelfCheck self_check(const LoggpResult& result, const model::LinkParams& link,
                          std::uint32_t n) {
  LoggpSelfCheck c;
  net::VirtualNetwork net(link);
  for (const auto& p : result.points) {
    std::array<double, 3> v{};
    net.run([&](net::Transport& t) {
      if (t.role() == net::Role::dest) {
        serve_prtt(t);
        return;
      }
      // Medians of 3, as the measurement takes medians: the first round of a batch follows
      // the batch's command messages and may wait for the gap.
      v[0] = stats::median(prtt_batch(t, {PrttKind::client_delay, 1, p.bytes, 0}, 3));
      v[1] = stats::median(prtt_batch(t, {PrttKind::client_delay, n, p.bytes, 0}, 3));
      v[2] = stats::median(prtt_batch(t, {PrttKind::client_delay, n, p.bytes, p.delay_us}, 3));
      finish_prtt(t);
    });
    c.virtual_us.push_back(v);
    const double measured[3] = {p.prtt1.median_us, p.prtt_n0.median_us, p.prtt_nd.median_us};
    double* worst[3] = {&c.max_deviation_prtt1, &c.max_deviation_prtt_n0, &c.max_deviation_prtt_nd};
    double point_worst = 0;
    for (int k = 0; k < 3; ++k) {
      const double dev = std::abs(v[static_cast<std::size_t>(k)] - measured[k]) / measured[k];
      *worst[k] = std::max(*worst[k], dev);
      point_worst = std::max(point_worst, dev);
    }
    if (point_worst >=
        std::max({c.max_deviation_prtt1, c.max_deviation_prtt_n0, c.max_deviation_prtt_nd})) {
      c.worst_size = p.bytes;
    }
  }
  return c;
}

}  // namespace commgauge::measure
