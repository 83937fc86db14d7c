#include "measure/latency.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"
#include "measure/limits.hpp"
#include "stats/median_ci.hpp"

namespace commgauge::measure {

void LatencyOptions::validate() const {
  if (sizes.empty()) throw InputError("sizes", "at least one message size is needed");
  if (trials == 0) throw InputError("trials", "must be at least 1");
  if (min_trials == 0) throw InputError("min_trials", "must be at least 1");
  if (!(rse_target >= 0) || !std::isfinite(rse_target)) {
    throw InputError("rse_target", "must be a number >= 0 (0: always run all trials)");
  }
  if (npp_init == 0) throw InputError("npp_init", "must be at least 1");
  if (npp_trials == 0) throw InputError("npp_trials", "must be at least 1");
  if (!(res_npp > 0 && res_npp <= kMaxResNpp))
    throw InputError("res_npp", fmt::format("must be above 0 and at most {:g}", kMaxResNpp));
  if (npp > kMaxNpp) throw InputError("npp", fmt::format("must be 1 to {}", kMaxNpp));
  if (npp_init > kMaxNpp) throw InputError("npp_init", fmt::format("must be 1 to {}", kMaxNpp));
  if (!(handshake_bias >= 0) || !std::isfinite(handshake_bias)) {
    throw InputError("handshake_bias", "must be a number >= 0 (0: seed 002's npp alone)");
  }
  if (!(cut_coef > 0)) throw InputError("cut_coef", "must be positive");
  // Below a picosecond a bin count overflows (1e-315 asked for more bins than memory holds).
  if (!(bin_width_us == 0 || bin_width_us >= kMinBinWidth_us))
    throw InputError("bin_width", "must be 0 (automatic) or at least 1e-06 us (a picosecond)");
  if (max_bins < 1 || max_bins > kMaxBins)
    throw InputError("max_bins", fmt::format("must be 1 to {}", kMaxBins));
}

void to_json(nlohmann::json& j, const LatencyOptions& o) {
  j = {{"sizes", o.sizes},
       {"trials", o.trials},
       {"min_trials", o.min_trials},
       {"rse_target", o.rse_target},
       {"npp", o.npp},
       {"res_npp", o.res_npp},
       {"handshake_bias", o.handshake_bias},
       {"npp_init", o.npp_init},
       {"npp_trials", o.npp_trials},
       {"cut_coef", o.cut_coef},
       {"bin_width_us", o.bin_width_us},
       {"max_bins", o.max_bins},
       {"frequency_quantum_us", o.frequency_quantum_us},
       {"max_frequency_rows", o.max_frequency_rows}};
}

void from_json(const nlohmann::json& j, LatencyOptions& o) {
  o.sizes = j.at("sizes").get<std::vector<std::uint64_t>>();
  o.trials = j.at("trials").get<std::uint64_t>();
  o.min_trials = j.at("min_trials").get<std::uint64_t>();
  o.rse_target = j.at("rse_target").get<double>();
  o.npp = j.at("npp").get<std::uint64_t>();
  o.res_npp = j.at("res_npp").get<double>();
  o.handshake_bias = j.value("handshake_bias", 0.0);  // absent in files from before it existed
  o.npp_init = j.at("npp_init").get<std::uint64_t>();
  o.npp_trials = j.at("npp_trials").get<std::uint64_t>();
  o.cut_coef = j.at("cut_coef").get<double>();
  o.bin_width_us = j.at("bin_width_us").get<double>();
  o.max_bins = j.at("max_bins").get<int>();
  o.frequency_quantum_us = j.at("frequency_quantum_us").get<double>();
  o.max_frequency_rows = j.at("max_frequency_rows").get<int>();
}

std::uint64_t npp_from_estimate(double res_timing_us, double median_ppt_us, double res_npp) {
  if (!(res_timing_us > 0)) return 1;
  if (!(median_ppt_us > 0)) {
    throw std::invalid_argument("a ping-pong that takes no time cannot size npp");
  }
  return static_cast<std::uint64_t>(std::lround(
      std::clamp(res_npp * res_timing_us / median_ppt_us, 1.0, static_cast<double>(kMaxNpp))));
}

double handshake_penalty(std::span<const double> single_us, std::span<const double> per_pingpong_us,
                         std::uint64_t n) {
  const std::size_t pairs = std::min(single_us.size(), per_pingpong_us.size());
  if (n < 2 || pairs == 0) return 0;
  std::vector<double> difference(pairs);
  for (std::size_t i = 0; i < pairs; ++i)
    difference[i] = single_us[i] - per_pingpong_us[i];
  const auto ci = stats::median_interval(difference, 0.95);
  if (std::isinf(ci.relative_half_width)) return 0;
  const double d = pairs >= kPairsForPointEstimate ? ci.median : ci.lower;
  if (!(d > 0)) return 0;
  const auto loop = static_cast<double>(n);
  return d * loop / (loop - 1);
}

std::uint64_t npp_for_handshake_bias(double penalty_us, double round_trip_us, double bias) {
  if (!(bias > 0) || !(penalty_us > 0)) return 1;
  if (!(round_trip_us > 0)) return kMaxNppForBias;
  const double npp = std::ceil(penalty_us / (bias * round_trip_us));
  return static_cast<std::uint64_t>(std::clamp(npp, 1.0, static_cast<double>(kMaxNppForBias)));
}

Rates rates_from(const stats::Summary& s, std::uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  auto rate = [b](double us) { return us > 0 ? b / us : 0.0; };  // bytes/us = MB/s
  return {rate(s.min), rate(s.median), rate(s.mean), rate(s.max)};
}

namespace {

// One trial (seed 002 §3.2 with the hand-shake): barrier; the dest sends one element, which
// the source receives before it starts the clock; then npp ping-pongs. Returns t2 - t1 on
// the source, 0 on the dest.
double timed_loop(net::Transport& t, std::uint64_t bytes, std::uint64_t npp) {
  t.barrier();
  if (t.role() == net::Role::source) {
    t.recv(kHandshakeBytes);
    const double t1 = t.now_us();
    for (std::uint64_t i = 0; i < npp; ++i) {
      t.send(bytes);
      t.recv(bytes);
    }
    const double t2 = t.now_us();
    return t2 - t1;
  }
  t.send(kHandshakeBytes);
  for (std::uint64_t i = 0; i < npp; ++i) {
    t.recv(bytes);
    t.send(bytes);
  }
  return 0;
}

void summarise(LatencyPoint& p, const LatencyOptions& o) {
  p.stats = stats::summarize(p.one_way_us);
  p.rates = rates_from(p.stats, p.size_bytes);
  p.filtered = stats::filter_above_median(p.one_way_us, o.cut_coef);
  if (!p.filtered.kept.empty()) {
    p.filtered_stats = stats::summarize(p.filtered.kept);
    p.filtered_rates = rates_from(*p.filtered_stats, p.size_bytes);
  }
  const double width =
      o.bin_width_us > 0
          ? o.bin_width_us
          : stats::nice_bin_width(p.stats.min, std::max(p.stats.min, o.cut_coef * p.stats.median),
                                  o.max_bins);
  p.distribution = stats::distribution(p.one_way_us, width, o.max_bins);
  p.frequency = stats::frequency(p.one_way_us, o.frequency_quantum_us, o.max_frequency_rows);
  std::vector<double> sorted = p.one_way_us;
  std::sort(sorted.begin(), sorted.end());
  auto rank = [&](double q) {  // nearest rank
    const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(k, 1, sorted.size()) - 1];
  };
  p.p50_us = rank(0.50);
  p.p90_us = rank(0.90);
  p.p99_us = rank(0.99);
  // The filtered trials stay available only through their statistics.
  p.filtered.kept.clear();
  p.filtered.kept.shrink_to_fit();
}

}  // namespace

namespace {

// The relative standard error of the median of `v`, from its distribution-free 95 % interval.
double median_rse(const std::vector<double>& v) {
  const auto ci = stats::median_interval(v, 0.95);
  if (!std::isfinite(ci.relative_half_width)) return ci.relative_half_width;
  return ci.relative_half_width / 1.96;
}

}  // namespace

std::optional<LatencyResult> measure_latency(net::Transport& transport,
                                             const LatencyOptions& options,
                                             const TimerCharacterization& timer,
                                             ProgressSink* progress) {
  options.validate();
  const bool source = transport.role() == net::Role::source;
  const auto wall_start = std::chrono::steady_clock::now();
  LatencyResult result;
  constexpr std::uint64_t kBatch = 50;  // trials between stopping decisions
  constexpr std::uint64_t kNppChunk = 10;

  try {
    for (std::size_t index = 0; index < options.sizes.size(); ++index) {
      const std::uint64_t bytes = options.sizes[index];
      const auto size_start = std::chrono::steady_clock::now();
      LatencyPoint p;
      p.size_bytes = bytes;
      // npp (seed 002 §3.3): median_ppt from up to npp_trials loops of npp_init ping-pongs. The
      // source stops early once the ping-pong clearly exceeds res_npp timer ticks (then
      // npp = nint(max(1, res_npp res_timing / median_ppt)) = 1 whatever more loops would show):
      // at 1 MiB the 200 loops of 10 ping-pongs were 4 GB. Alternating with them, loops of one
      // ping-pong measure what the first one after the hand-shake costs beyond the others.
      std::vector<double> estimate, single;
      for (std::uint64_t done = 0; done < options.npp_trials;) {
        const std::uint64_t chunk = std::min(kNppChunk, options.npp_trials - done);
        for (std::uint64_t i = 0; i < chunk; ++i) {
          const bool single_first = (done + i) % 2 == 1;
          if (single_first) single.push_back(timed_loop(transport, bytes, 1));
          estimate.push_back(timed_loop(transport, bytes, options.npp_init) /
                             static_cast<double>(options.npp_init));
          if (!single_first) single.push_back(timed_loop(transport, bytes, 1));
        }
        done += chunk;
        bool more = done < options.npp_trials;
        if (source) {
          const double ppt = stats::median(estimate);
          if (options.npp > 0 || options.res_npp * timer.res_timing_us < 0.5 * ppt) more = false;
          transport.send_value(more ? 1 : 0);
        } else {
          more = transport.recv_value() != 0;
        }
        if (!more) break;
      }
      if (source) {
        p.median_ppt_us = stats::median(estimate);
        p.npp_calculated = npp_from_estimate(timer.res_timing_us, p.median_ppt_us, options.res_npp);
        p.handshake_penalty_us = handshake_penalty(single, estimate, options.npp_init);
        p.npp_for_handshake_bias = npp_for_handshake_bias(
            p.handshake_penalty_us, stats::median(single) - p.handshake_penalty_us,
            options.handshake_bias);
        p.npp_used =
            options.npp > 0 ? options.npp : std::max(p.npp_calculated, p.npp_for_handshake_bias);
        transport.send_value(p.npp_used);
      } else {
        p.npp_used = transport.recv_value();
      }

      // Trials in batches until the median is known to rse_target, or the cap.
      std::uint64_t trials = 0;
      for (;;) {
        const std::uint64_t batch =
            std::min(trials < options.min_trials ? options.min_trials - trials : kBatch,
                     options.trials - trials);
        for (std::uint64_t i = 0; i < batch; ++i) {
          const double elapsed = timed_loop(transport, bytes, p.npp_used);
          if (source) {
            p.one_way_us.push_back((elapsed - timer.min_ov_us) /
                                   (2.0 * static_cast<double>(p.npp_used)));
          }
        }
        trials += batch;
        bool more = trials < options.trials;
        if (source) {
          p.median_rse = median_rse(p.one_way_us);
          p.reached_target = options.rse_target > 0 && p.median_rse <= options.rse_target;
          if (p.reached_target) more = false;
          transport.send_value(more ? 1 : 0);
          if (progress) {
            progress->update(
                fmt::format("latency {} B: {} trials, median rse {:.2g} %", bytes, trials,
                            100 * p.median_rse),
                (static_cast<double>(index) +
                 std::min(1.0, static_cast<double>(trials) / static_cast<double>(options.trials))) /
                    static_cast<double>(options.sizes.size()));
          }
        } else {
          more = transport.recv_value() != 0;
        }
        if (!more) break;
      }
      if (source) {
        const auto ci = stats::median_interval(p.one_way_us, 0.95);
        p.median_lower_us = ci.lower;
        p.median_upper_us = ci.upper;
        summarise(p, options);
        p.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - size_start).count();
        result.points.push_back(std::move(p));
      }
    }
  } catch (const TransportError& e) {
    if (!source || result.points.empty()) throw;
    result.interrupted = e.what();
  }
  if (progress && source) progress->done();
  if (!source) return std::nullopt;
  result.counters = transport.counters();
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace commgauge::measure
