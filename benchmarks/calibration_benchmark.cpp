// The calibrated fit (model::calibrate), which dominates a loggp run's analysis: one call with
// the identifiability profiles (the main fit) and one without (each bootstrap refit), on curves
// shaped like this machine's shared memory (three ranges, the last rendezvous; values from a
// measured profile) with seeded 3 % noise, 2 points per octave from 1 B to 256 KiB.

#include <cmath>
#include <random>

#include <benchmark/benchmark.h>

#include "model/calibration.hpp"
#include "model/closed_forms.hpp"

namespace {

using namespace commgauge;
using namespace commgauge::model::literals;

model::LinkParams vader_like() {
  model::LinkParams link;
  link.latency_us = 0.06;
  model::LinkRange a;
  a.from_bytes = 1;
  a.send_overhead_us = 0.14;
  a.recv_overhead_us = 0.19;
  a.gap_per_byte_us = 0.0004;
  a.unexpected_recv_us = 0.1;
  model::LinkRange b = a;
  b.from_bytes = 257;
  b.send_overhead_us = 0.63;
  b.recv_overhead_us = 0.05;
  b.send_overhead_per_byte_us = 0.00015;
  b.gap_per_byte_us = 0.0001;
  b.unexpected_recv_us = 0.4;
  model::LinkRange c = b;
  c.from_bytes = 4041;
  c.send_overhead_us = 0.70;
  c.recv_overhead_us = 0.03;
  c.send_overhead_per_byte_us = 0.00006;
  c.gap_per_byte_us = 0.00005;
  c.unexpected_recv_us = 0;  // rendezvous data never arrives before its receive
  c.rendezvous = true;
  link.ranges = {a, b, c};
  return link;
}

std::vector<model::PrttCurvePoint> noisy_points(const model::LinkParams& link) {
  const model::CostModel cost(link);
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> noise(0, 0.03);
  std::vector<model::PrttCurvePoint> pts;
  for (double s = 1; s <= 262144; s *= std::sqrt(2.0)) {
    model::PrttCurvePoint p;
    p.bytes = static_cast<std::uint64_t>(std::llround(s));
    p.delay_us = model::to_microseconds(model::prtt(cost, 1, 0_ps, p.bytes));
    p.measured_us = model::prtt_curves(cost, p);
    for (std::size_t k = 0; k < 4; ++k) {
      p.measured_us[k] *= noise(rng);
      p.noise_us[k] = 0.03 * p.measured_us[k];
    }
    pts.push_back(p);
  }
  return pts;
}

// As vader reads since the overlap measurement: the eager range from 257 B completes its sends
// on the receiver's acknowledgement (Tm = TA, dependent progress), whose PRTT is evaluated
// message by message (closed_forms.cpp, acknowledged_prtt): most of a real loggp run's
// calibration time (perf, 2026-12-03: 43 % of a run's samples).
model::LinkParams vader_like_acknowledged() {
  model::LinkParams link = vader_like();
  model::LinkRange& eager = link.ranges[1];
  eager.transfer = "TA";
  eager.progress = model::Progress::dependent;
  eager.control_send_us = link.ranges[0].send_overhead_us;
  eager.control_recv_us = link.ranges[0].recv_overhead_us;
  return link;
}

model::LinkParams link_of(const benchmark::State& state) {
  return state.range(0) == 0 ? vader_like() : vader_like_acknowledged();
}

model::LinkParams start_of(model::LinkParams link) {
  link.latency_us *= 1.5;
  for (auto& r : link.ranges) {
    r.send_overhead_us *= 1.3;
    r.recv_overhead_us *= 0.7;
    r.gap_per_byte_us *= 1.2;
  }
  return link;
}

// Argument: 0 plain eager ranges, 1 the eager range acknowledged (TA).
void BM_CalibrateWithProfiles(benchmark::State& state) {
  const auto pts = noisy_points(link_of(state));
  const auto start = start_of(link_of(state));
  for (auto _ : state) {
    auto c = model::calibrate(start, pts, model::Structure::loggps);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_CalibrateWithProfiles)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// As loggp refits each resample: from the calibrated set, in one stage.
void BM_CalibrateBootstrapRefit(benchmark::State& state) {
  const auto pts = noisy_points(link_of(state));
  const auto start = model::calibrate(start_of(link_of(state)), pts, model::Structure::loggps).link;
  model::CalibrationOptions o;
  o.identifiability = false;
  o.extra_starts = false;
  o.start_is_calibrated = true;
  for (auto _ : state) {
    auto c = model::calibrate(start, pts, model::Structure::loggps, o);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_CalibrateBootstrapRefit)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
