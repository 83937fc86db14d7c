#include "measure/latency_mode.hpp"

#include <algorithm>
#include <chrono>
#include <span>
#include <thread>

#include "common/error.hpp"
#include "stats/descriptive.hpp"

namespace commgauge::measure {

namespace {

// Between probes the pair idles: a mode lasts seconds, so probing faster learns nothing more.
constexpr auto kModeProbePause = std::chrono::milliseconds(100);

// Both ends: kModeProbeWarmUp round trips of `bytes` untimed (the pair idled before), then
// kModeProbeTrips timed; the median one-way time on the source.
double probe_one_way_us(net::Transport& t, std::uint64_t bytes) {
  const bool source = t.role() == net::Role::source;
  std::vector<double> trips(kModeProbeWarmUp + kModeProbeTrips);
  for (double& trip : trips) {
    if (!source) {
      t.recv(bytes);
      t.send(bytes);
      continue;
    }
    const double t0 = t.now_us();
    t.send(bytes);
    t.recv(bytes);
    trip = t.now_us() - t0;
  }
  if (!source) return 0;
  return stats::median(std::span<const double>(trips).subspan(kModeProbeWarmUp)) / 2;
}

}  // namespace

void to_json(nlohmann::json& j, const LatencyModeBand& b) {
  j = {{"bytes", b.bytes}, {"low_us", b.low_us}, {"high_us", b.high_us}};
}

void from_json(const nlohmann::json& j, LatencyModeBand& b) {
  b.bytes = j.at("bytes");
  b.low_us = j.at("low_us");
  b.high_us = j.at("high_us");
}

LatencyModeBand tukey_fences(std::vector<double> values, std::uint64_t bytes, double widen_us) {
  if (values.size() < 4) throw InputError("latency mode: Tukey's fences need at least 4 values");
  std::sort(values.begin(), values.end());
  const double q1 = stats::nearest_rank(values, 0.25), q3 = stats::nearest_rank(values, 0.75);
  const double reach = 1.5 * (q3 - q1) + widen_us;
  return {bytes, std::max(0.0, q1 - reach), q3 + reach};
}

std::optional<LatencyModeBand> latency_mode_band(const LoggpResult& loggp, double resolution_us) {
  if (loggp.points.empty()) return std::nullopt;
  const LoggpPoint& p = loggp.points.front();
  if (p.rounds.prtt1.size() < 4) return std::nullopt;
  std::vector<double> one_way(p.rounds.prtt1);
  for (double& v : one_way)
    v /= 2;
  return tukey_fences(std::move(one_way), p.bytes, resolution_us / 2);  // a round trip, halved
}

std::vector<ModeProbe> await_latency_mode(net::Transport& t, const LatencyModeBand& band,
                                          double budget_s, Wall since) {
  const bool source = t.role() == net::Role::source;
  std::vector<ModeProbe> probes;
  const Wall from = Wall::clock::now();
  for (;;) {
    const double one_way = probe_one_way_us(t, band.bytes);
    bool again = false;
    if (source) {
      const Wall now = Wall::clock::now();
      probes.push_back({one_way, band.contains(one_way), seconds_between(since, now)});
      again = !probes.back().in_band && seconds_between(from, now) < budget_s;
    }
    if (!agreed(t, again)) return probes;
    std::this_thread::sleep_for(kModeProbePause);
  }
}

PhaseModeCheck phase_mode_check(const LatencyModeBand& band, const std::vector<ModeProbe>& before,
                                double waited_s) {
  PhaseModeCheck c;
  c.band = band;
  for (const auto& p : before)
    c.probes.push_back({p, 1, false});
  c.attempts = 1;
  c.waited_s = waited_s;
  c.held = !before.empty() && before.back().in_band;
  return c;
}

std::optional<LatencyModeBand> agree_band(net::Transport& t,
                                          const std::optional<LatencyModeBand>& band) {
  if (t.role() != net::Role::source) {
    const std::uint64_t bytes = t.recv_value();  // 0: none
    if (bytes == 0) return std::nullopt;
    return LatencyModeBand{bytes, 0, 0};
  }
  t.send_value(band ? band->bytes : 0);
  return band;
}

bool agreed(net::Transport& t, bool source_decides) {
  if (t.role() != net::Role::source) return t.recv_value() != 0;
  t.send_value(source_decides ? 1 : 0);
  return source_decides;
}

void ModeWaitOptions::validate() const {
  if (band && (band->bytes == 0 || !(band->low_us <= band->high_us)))
    throw InputError(
        "latency mode: the band needs a probe of at least 1 byte and "
        "low_us <= high_us");
  if (!(wait_s >= 0)) throw InputError("latency mode: the wait must be >= 0 s");
}

// The band is not sent: the dest learns the probe's size in agree_band, and the fences stay
// with the source, which alone judges a probe.
void to_json(nlohmann::json& j, const ModeWaitOptions& o) {
  j = {{"wait_s", o.wait_s}};
}

void from_json(const nlohmann::json& j, ModeWaitOptions& o) {
  o.wait_s = j.at("wait_s");
}

std::vector<ModeProbe> wait_for_latency_mode(net::Transport& t, const ModeWaitOptions& o) {
  o.validate();
  const auto band = agree_band(t, o.band);
  if (!band) return {};
  return await_latency_mode(t, *band, o.wait_s, Wall::clock::now());
}

}  // namespace commgauge::measure
