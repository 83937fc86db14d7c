#include "model/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "model/closed_forms.hpp"
#include "stats/nnls.hpp"

namespace commgauge::model {

std::array<double, 4> prtt_curves(const CostModel& cost, const PrttCurvePoint& p) {
  const Picoseconds d = to_picoseconds(p.delay_us);
  return {to_microseconds(prtt(cost, 1, Picoseconds{}, p.bytes)),
          to_microseconds(prtt(cost, p.n, Picoseconds{}, p.bytes)),
          to_microseconds(prtt(cost, p.n, d, p.bytes)),
          to_microseconds(prtt_server_delay(cost, p.n, d, p.bytes))};
}

void weigh_by_size_axis(std::span<PrttCurvePoint> points, double step) {
  const std::size_t n = points.size();
  for (std::size_t i = 0; i < n; ++i) {
    const double here = std::log2(static_cast<double>(std::max<std::uint64_t>(points[i].bytes, 1)));
    const double left =
        i > 0 ? std::log2(static_cast<double>(std::max<std::uint64_t>(points[i - 1].bytes, 1)))
              : here - step;
    const double right =
        i + 1 < n ? std::log2(static_cast<double>(std::max<std::uint64_t>(points[i + 1].bytes, 1)))
                  : here + step;
    points[i].weight = std::clamp((right - left) / (2 * step), 1e-3, 1.0);
  }
}

Calibration evaluate(const LinkParams& link, std::span<const PrttCurvePoint> points) {
  Calibration c;
  c.link = link;
  const CostModel cost(link);
  double sum = 0;
  for (const auto& p : points) {
    const auto m = prtt_curves(cost, p);
    std::array<double, 4> dev{};
    for (std::size_t k = 0; k < 4; ++k) {
      dev[k] = (m[k] - p.measured_us[k]) / p.measured_us[k];
      c.max_abs_deviation = std::max(c.max_abs_deviation, std::abs(dev[k]));
      sum += dev[k] * dev[k];
    }
    c.model_us.push_back(m);
    c.deviation.push_back(dev);
  }
  c.rms_deviation =
      points.empty() ? 0 : std::sqrt(sum / (4.0 * static_cast<double>(points.size())));
  return c;
}

namespace {

// Relative: a point's standard error is at least this, so every curve counts alike in relative
// terms unless a point is noisier (a precise PRTT(n,d,s) does not outweigh the ping-pong).
constexpr double kNoiseFloor = 0.05;

// The parameter vector: lambda, then per range o_s, o_r, O_s, O_r, g, G, o_u (LogGP: o_s, o_r,
// g, G).
// lambda = L - omega + Omega: the curves see only L - omega (a send's overhead overlapping the
// transfer acts as a negative latency, seed 000 §3.4), so one coordinate carries both, offset by
// Omega, the start's least send overhead (a message cannot arrive before its send began); it
// maps back to L >= 0 with omega = 0, or L = 0 with omega > 0: no parameter is negative.
// Per-byte parameters are scaled to their time at the range's largest measured size, so every
// coordinate is a time in microseconds of comparable size.
class Layout {
 public:
  Layout(const LinkParams& start, std::span<const PrttCurvePoint> points, Structure s,
         bool fit_overlap, std::vector<bool> per_byte_as_below)
      : start_(start), structure_(s), per_byte_as_below_(std::move(per_byte_as_below)) {
    per_byte_as_below_.resize(start.ranges.size(), false);
    if (!per_byte_as_below_.empty()) per_byte_as_below_[0] = false;
    per_range_ = s == Structure::loggps ? 7 : 4;
    omega_ = start.ranges.empty() || !fit_overlap ? 0.0 : std::numeric_limits<double>::infinity();
    for (const auto& r : start.ranges)
      omega_ = std::min(omega_, r.least_send_overhead_us());
    omega_ = std::max(omega_, start.send_overlap_us);
    if (!std::isfinite(omega_) || omega_ < 0) omega_ = 0;
    scale_.assign(start.ranges.size(), 1.0);
    for (const auto& p : points) {
      const std::size_t k = start.range_index(p.bytes);
      scale_[k] = std::max(scale_[k], static_cast<double>(p.bytes));
    }
  }
  std::size_t size() const { return 1 + per_range_ * start_.ranges.size(); }

  std::vector<double> vector_of(const LinkParams& link) const {
    std::vector<double> v(size());
    v[0] = link.latency_us - link.send_overlap_us + omega_;
    for (std::size_t k = 0; k < link.ranges.size(); ++k) {
      const auto& r = link.ranges[k];
      double* x = v.data() + 1 + per_range_ * k;
      if (structure_ == Structure::loggps) {
        const double s = scale_[k];
        const double vals[7] = {r.send_overhead_us,
                                r.recv_overhead_us,
                                r.send_overhead_per_byte_us * s,
                                r.recv_overhead_per_byte_us * s,
                                r.gap_us,
                                r.gap_per_byte_us * s,
                                r.unexpected_recv_us};
        std::copy(vals, vals + 7, x);
      } else {
        const double vals[4] = {r.send_overhead_us, r.recv_overhead_us, r.gap_us,
                                r.gap_per_byte_us * scale_[k]};
        std::copy(vals, vals + 4, x);
      }
    }
    for (double& x : v)
      x = std::max(0.0, std::isfinite(x) ? x : 0.0);
    return v;
  }

  LinkParams link_of(const std::vector<double>& v) const {
    LinkParams link = start_;
    const double effective = v[0] - omega_;
    link.latency_us = std::max(0.0, effective);
    link.send_overlap_us = std::max(0.0, -effective);
    for (std::size_t k = 0; k < link.ranges.size(); ++k) {
      auto& r = link.ranges[k];
      const double* x = v.data() + 1 + per_range_ * k;
      const double s = scale_[k];
      r.send_overhead_us = x[0];
      r.recv_overhead_us = x[1];
      if (structure_ == Structure::loggps) {
        r.send_overhead_per_byte_us = x[2] / s;
        r.recv_overhead_per_byte_us = x[3] / s;
        r.gap_us = x[4];
        r.gap_per_byte_us = x[5] / s;
        r.unexpected_recv_us = x[6];
      } else {
        r.send_overhead_per_byte_us = r.recv_overhead_per_byte_us = 0;
        r.unexpected_recv_us = 0;
        r.gap_us = x[2];
        r.gap_per_byte_us = x[3] / s;
        r.rendezvous = false;
        r.page_bytes = 0;    // billed by the byte
        r.transfer.clear();  // plain LogGP: no acknowledgement either
        r.control_send_us = r.control_recv_us = -1;
      }
      if (per_byte_as_below_[k]) {  // its own per-byte coordinates are not fitted
        const auto& below = link.ranges[k - 1];
        r.send_overhead_per_byte_us = below.send_overhead_per_byte_us;
        r.recv_overhead_per_byte_us = below.recv_overhead_per_byte_us;
        r.gap_per_byte_us = below.gap_per_byte_us;
        r.page_bytes = below.page_bytes;  // and bills them as it does
      }
    }
    for (auto& r : link.ranges)
      price_acknowledgement(r, link.ranges.front());
    // The fitted overheads may fall below Omega: omega stays within every send overhead.
    for (const auto& r : link.ranges)
      link.send_overlap_us = std::min(link.send_overlap_us, r.least_send_overhead_us());
    return link;
  }

  /// The value of coordinate j in the link's own units.
  double unscaled(std::size_t j, double x) const {
    if (j == 0) return x - omega_;  // L - omega
    return per_byte(j) ? x / scale_[(j - 1) / per_range_] : x;
  }
  /// Whether coordinate j is a per-byte cost that its range takes from the range below.
  bool taken_from_below(std::size_t j) const {
    return j > 0 && per_byte(j) && per_byte_as_below_[(j - 1) / per_range_];
  }
  /// Whether coordinate j (> 0) is a per-byte cost (O_s, O_r, G; LogGP: G).
  bool per_byte(std::size_t j) const {
    const std::size_t q = (j - 1) % per_range_;
    return structure_ == Structure::loggps ? (q == 2 || q == 3 || q == 5) : (q == 3);
  }
  std::pair<std::size_t, std::string> name(std::size_t j) const {
    if (j == 0) return {std::numeric_limits<std::size_t>::max(), omega_ > 0 ? "L - omega" : "L"};
    static const char* const loggps[7] = {"o_s", "o_r", "O_s", "O_r", "g", "G", "o_u"};
    static const char* const loggp[4] = {"o_s", "o_r", "g", "G"};
    const std::size_t q = (j - 1) % per_range_;
    return {(j - 1) / per_range_, structure_ == Structure::loggps ? loggps[q] : loggp[q]};
  }

 private:
  LinkParams start_;
  Structure structure_;
  double omega_ = 0;  // Omega: lambda's offset
  std::size_t per_range_ = 7;
  std::vector<double> scale_;
  std::vector<bool> per_byte_as_below_;
};

class Fit {
 public:
  // `with_late_excess`: the server-delay curve's error is at least its late-receive excess (the
  // fit of everything but o_u).
  Fit(const Layout& layout, std::span<const PrttCurvePoint> points, bool with_late_excess)
      : layout_(layout), points_(points) {
    for (const auto& p : points) {
      for (std::size_t k = 0; k < 4; ++k) {
        y_.push_back(p.measured_us[k]);
        double noise = p.noise_us[k];
        if (k == 3 && with_late_excess) noise = std::max(noise, p.late_receive_excess_us);
        // A point of weight w counts w times in chi-square: its standard error is over sqrt(w).
        sigma_.push_back(std::max(noise, kNoiseFloor * std::abs(p.measured_us[k])) /
                         std::sqrt(std::max(p.weight, 1e-6)));
      }
    }
  }

  std::vector<double> model(const std::vector<double>& v) const {
    const CostModel cost(layout_.link_of(v));
    std::vector<double> f;
    f.reserve(y_.size());
    for (const auto& p : points_) {
      const auto m = prtt_curves(cost, p);
      f.insert(f.end(), m.begin(), m.end());
    }
    return f;
  }
  double chi2(const std::vector<double>& f) const {
    double s = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
      const double r = (f[i] - y_[i]) / sigma_[i];
      s += r * r;
    }
    return s;
  }
  double chi2_at(const std::vector<double>& v) const { return chi2(model(v)); }

  // The weighted Jacobian (rows: points x curves; columns: the free coordinates), by central
  // differences: the closed forms are piecewise linear in the parameters. A column that moves
  // one range's parameters (and not L - omega) re-evaluates that range's points only: a
  // message's cost reads L - omega and its own range alone (CostModel::message), so the other
  // rows are exactly 0, as a full evaluation gives them.
  std::vector<double> jacobian(const std::vector<double>& v,
                               const std::vector<std::size_t>& free) const {
    const std::size_t rows = y_.size(), cols = free.size();
    std::vector<double> j(rows * cols, 0.0);
    const LinkParams at = layout_.link_of(v);
    std::vector<std::size_t> range_of(points_.size());
    for (std::size_t i = 0; i < points_.size(); ++i)
      range_of[i] = at.range_index(points_[i].bytes);
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t q = free[c];
      const double h = std::max(1e-3, 1e-3 * v[q]);
      std::vector<double> up = v, down = v;
      up[q] += h;
      down[q] = std::max(0.0, v[q] - h);
      const double span = up[q] - down[q];
      const LinkParams lu = layout_.link_of(up), ld = layout_.link_of(down);
      const bool every_range = lu.effective_latency_us() != at.effective_latency_us() ||
                               ld.effective_latency_us() != at.effective_latency_us();
      std::vector<bool> moved(at.ranges.size());
      for (std::size_t k = 0; k < at.ranges.size(); ++k)
        moved[k] =
            every_range || !(lu.ranges[k] == at.ranges[k]) || !(ld.ranges[k] == at.ranges[k]);
      const CostModel cu(lu), cd(ld);
      for (std::size_t i = 0; i < points_.size(); ++i) {
        if (!moved[range_of[i]]) continue;
        const auto fu = prtt_curves(cu, points_[i]), fd = prtt_curves(cd, points_[i]);
        for (std::size_t k = 0; k < 4; ++k) {
          const std::size_t row = 4 * i + k;
          j[row * cols + c] = (fu[k] - fd[k]) / span / sigma_[row];
        }
      }
    }
    return j;
  }

  // Damped Gauss-Newton with non-negative steps: each step solves
  //   min || J q - (r + J v) ||^2 + lambda || D (q - v) ||^2   over q >= 0
  // for the free coordinates; fixed ones keep their value.
  struct Outcome {
    std::vector<double> v;
    double chi2 = 0;
    int iterations = 0;
    bool converged = false;
  };
  Outcome solve(std::vector<double> v, const std::vector<std::size_t>& free,
                int max_iterations = 200) const {
    Outcome out;
    std::vector<double> f = model(v);
    double chi = chi2(f);
    double lambda = 1e-3;
    const std::size_t rows = y_.size(), cols = free.size();
    for (out.iterations = 0; out.iterations < max_iterations && cols > 0; ++out.iterations) {
      const auto j = jacobian(v, free);
      std::vector<double> d(cols, 0.0);
      for (std::size_t c = 0; c < cols; ++c) {
        for (std::size_t i = 0; i < rows; ++i)
          d[c] += j[i * cols + c] * j[i * cols + c];
        d[c] = std::sqrt(std::max(d[c], 1e-12));
      }
      // The step's positive coordinates are most likely the current ones: NNLS starts there.
      std::vector<bool> positive(cols);
      for (std::size_t c = 0; c < cols; ++c)
        positive[c] = v[free[c]] > 0;
      bool improved = false;
      while (lambda < 1e12) {
        std::vector<double> a = j;
        std::vector<double> b(rows);
        for (std::size_t i = 0; i < rows; ++i) {
          double jv = 0;
          for (std::size_t c = 0; c < cols; ++c)
            jv += j[i * cols + c] * v[free[c]];
          b[i] = (y_[i] - f[i]) / sigma_[i] + jv;
        }
        const double sl = std::sqrt(lambda);
        for (std::size_t c = 0; c < cols; ++c) {
          std::vector<double> row(cols, 0.0);
          row[c] = sl * d[c];
          a.insert(a.end(), row.begin(), row.end());
          b.push_back(sl * d[c] * v[free[c]]);
        }
        const auto q = stats::nnls(a, rows + cols, cols, b, positive);
        std::vector<double> trial = v;
        for (std::size_t c = 0; c < cols; ++c)
          trial[free[c]] = q.x[c];
        const auto ft = model(trial);
        const double ct = chi2(ft);
        if (ct < chi) {
          const double gain = (chi - ct) / std::max(chi, 1e-300);
          v = trial;
          f = ft;
          chi = ct;
          lambda = std::max(lambda / 3, 1e-9);
          improved = true;
          if (gain < 1e-10) out.converged = true;
          break;
        }
        lambda *= 10;
      }
      if (!improved) {
        out.converged = true;  // no step improves: a (local) minimum
        break;
      }
      if (out.converged || chi < 1e-20) {
        out.converged = true;
        break;
      }
    }
    out.v = v;
    out.chi2 = chi;
    return out;
  }

  std::size_t observations() const { return y_.size(); }
  /// A time that stands for the curves' scale: the median of PRTT(1,0,s)/2 over the points.
  double reference_us() const {
    std::vector<double> v;
    for (std::size_t i = 0; i < y_.size(); i += 4)
      v.push_back(y_[i] / 2);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  }

 private:
  const Layout& layout_;
  std::span<const PrttCurvePoint> points_;
  std::vector<double> y_, sigma_;
};

// Coordinates with a component in the Jacobian's null space: the curves cannot determine them.
std::vector<std::size_t> null_space_coordinates(const std::vector<double>& j, std::size_t rows,
                                                std::size_t cols) {
  std::vector<std::size_t> out;
  if (cols == 0) return out;
  const std::size_t m = std::max(rows, cols);
  gsl_matrix* a = gsl_matrix_calloc(m, cols);
  gsl_matrix* vmat = gsl_matrix_alloc(cols, cols);
  gsl_vector* s = gsl_vector_alloc(cols);
  gsl_vector* work = gsl_vector_alloc(cols);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t c = 0; c < cols; ++c)
      gsl_matrix_set(a, i, c, j[i * cols + c]);
  }
  gsl_linalg_SV_decomp(a, vmat, s, work);
  const double smax = gsl_vector_get(s, 0);
  std::vector<double> weight(cols, 0.0);
  for (std::size_t k = 0; k < cols; ++k) {
    if (gsl_vector_get(s, k) > 1e-7 * smax) continue;
    for (std::size_t c = 0; c < cols; ++c) {
      const double x = gsl_matrix_get(vmat, c, k);
      weight[c] += x * x;
    }
  }
  for (std::size_t c = 0; c < cols; ++c) {
    if (weight[c] > 0.01) out.push_back(c);
  }
  gsl_matrix_free(a);
  gsl_matrix_free(vmat);
  gsl_vector_free(s);
  gsl_vector_free(work);
  return out;
}

}  // namespace

Calibration calibrate(const LinkParams& start, std::span<const PrttCurvePoint> points,
                      Structure structure, const CalibrationOptions& options) {
  if (points.empty()) throw std::invalid_argument("calibrate: no points");
  gsl_set_error_handler_off();
  const Layout layout(start, points, structure, options.fit_overlap, options.per_byte_as_below);
  const Fit fit(layout, points, true);
  std::vector<std::size_t> all, late;
  for (std::size_t j = options.fixed_latency ? 1 : 0; j < layout.size(); ++j) {
    const auto [range, name] = layout.name(j);
    const bool gap = name == "g" || name == "G";
    if (gap && range < options.fixed_gap.size() && options.fixed_gap[range]) continue;
    if (layout.taken_from_below(j)) continue;
    if (name == "o_u") {  // eager: data that came first; rendezvous: a request that did
      late.push_back(j);
      continue;
    }
    all.push_back(j);
  }
  if (options.start_is_calibrated && !late.empty() && options.fit_late_receives) {
    std::vector<std::size_t> every = all;
    every.insert(every.end(), late.begin(), late.end());
    std::sort(every.begin(), every.end());
    const Fit raw(layout, points, false);
    const auto refit = raw.solve(layout.vector_of(start), every);
    Calibration c = evaluate(layout.link_of(refit.v), points);
    c.chi2 = refit.chi2;
    c.iterations = refit.iterations;
    c.converged = refit.converged;
    return c;
  }
  // The start (the seeds' estimators), with its gaps switched on, and scaled down and up: the
  // closed forms are piecewise linear, and a start on another branch can end in a better minimum.
  // o_u starts at 0 in every starting point: the first fit is of the others alone.
  std::vector<double> origin = layout.vector_of(start);
  for (std::size_t q : late)
    origin[q] = 0;
  auto best = fit.solve(origin, all);
  if (options.extra_starts) {
    // A gap the start left hidden (g = 0 has no derivative where o wins eq. (5)'s max) is also
    // tried switched on: g = max(o_s, o_r).
    LinkParams gap_on = start;
    for (auto& r : gap_on.ranges)
      r.gap_us = std::max({r.gap_us, r.send_overhead_us, r.recv_overhead_us});
    std::vector<std::vector<double>> starts = {layout.vector_of(gap_on)};
    for (const auto& more : options.more_starts)
      starts.push_back(layout.vector_of(more));
    for (double factor : {0.5, 2.0}) {
      starts.push_back(layout.vector_of(start));
      for (double& x : starts.back())
        x *= factor;
    }
    for (auto& v : starts) {
      // Coordinates that are not fitted keep the start's values in every starting point.
      std::vector<double> kept = origin;
      for (std::size_t q : all)
        kept[q] = v[q];
      auto other = fit.solve(kept, all);
      if (other.chi2 < best.chi2 * (1 - 1e-9)) best = std::move(other);
    }
  }

  // Identifiability by profiles: a coordinate whose value can move by 2 %, the others refitted,
  // with the fit as good as before (chi-square up by at most 0.01 %, or 1e-4 where it is ~0) is
  // not determined by the curves; then the interval of equally good fits is searched. (The
  // Jacobian's null space finds the local cases; a piecewise-linear model can also fit as well
  // on another branch, e.g. a hidden gap traded against G, which only a profile sees.) How
  // precisely the determined ones are known is the bootstrap's business, not this.
  const double limit = best.chi2 + std::max(1e-4 * best.chi2, 1e-4);
  std::vector<Unidentified> unidentified;
  const auto j = fit.jacobian(best.v, all);
  const auto local = options.identifiability
                         ? null_space_coordinates(j, fit.observations(), all.size())
                         : std::vector<std::size_t>{};
  for (std::size_t q : options.identifiability ? all : std::vector<std::size_t>{}) {
    std::vector<std::size_t> others;
    for (std::size_t k : all) {
      if (k != q) others.push_back(k);
    }
    auto fits_at = [&](double x) {
      std::vector<double> v = best.v;
      v[q] = x;
      return fit.solve(v, others, 15).chi2 <= limit;
    };
    const double x0 = best.v[q];
    const double probe = 0.02 * std::max(x0, fit.reference_us());
    const bool hidden = std::find(local.begin(), local.end(), q) != local.end() ||
                        fits_at(x0 + probe) || (x0 - probe >= 0 && fits_at(x0 - probe));
    if (!hidden) continue;
    auto boundary = [&](double inside, double outside) {
      for (int i = 0; i < 12; ++i) {  // 2^-12 of the bracket
        const double mid = 0.5 * (inside + outside);
        (fits_at(mid) ? inside : outside) = mid;
      }
      return inside;
    };
    double upper = std::numeric_limits<double>::infinity();
    double inside = x0;
    double step = std::max(x0, probe);
    for (int k = 0; k < 12; ++k, step *= 2) {
      if (!fits_at(x0 + step)) {
        upper = boundary(inside, x0 + step);
        break;
      }
      inside = x0 + step;
    }
    const double lower = fits_at(0) ? 0.0 : boundary(x0, 0.0);
    const auto [range, name] = layout.name(q);
    unidentified.push_back({range, name, layout.unscaled(q, x0), layout.unscaled(q, lower),
                            std::isfinite(upper) ? layout.unscaled(q, upper) : upper});
  }
  // o_u: every curve at its own error, refitted from the first fit (o_u = 0) with o_u free as
  // well: o_u trades against o_r and O_r (a late receive costs o_r + kO_r + o_u) and those
  // against L (the one-way time holds them all), so the first fit's point is the start and the
  // steps from it take the least o_u the server-delay curve demands.
  if (!late.empty() && options.fit_late_receives) {
    std::vector<std::size_t> second = all;
    second.insert(second.end(), late.begin(), late.end());
    std::sort(second.begin(), second.end());
    const Fit raw(layout, points, false);
    auto refit = raw.solve(best.v, second);
    // The first fit's o_r can sit at PRTT(n,0,s)'s cycle (pulled up by the late receives), where
    // any o_u makes those receives late too: also start from half of that o_r moved into o_u.
    std::vector<double> split = best.v;
    for (std::size_t q : late) {
      split[q - 5] *= 0.5;  // the range's o_r (Layout: o_s, o_r, O_s, O_r, g, G, o_u)
      split[q] = split[q - 5];
    }
    auto other = raw.solve(split, second);
    if (other.chi2 < refit.chi2) refit = std::move(other);
    if (raw.chi2_at(best.v) > refit.chi2) best.v = refit.v;
  }
  Calibration c = evaluate(layout.link_of(best.v), points);
  c.chi2 = best.chi2;
  c.unidentified = std::move(unidentified);
  c.iterations = best.iterations;
  c.converged = best.converged;
  return c;
}

}  // namespace commgauge::model
