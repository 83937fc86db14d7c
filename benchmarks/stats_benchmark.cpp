// Statistics over 2^24 samples, the size of seed 002's timer characterization.

#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "stats/descriptive.hpp"
#include "stats/filtering.hpp"
#include "stats/median_ci.hpp"
#include "stats/tables.hpp"

namespace {

// Timer-like data: a few distinct values around 20-40 ns with a long tail, in microseconds.
const std::vector<double>& samples(std::size_t n) {
  static std::vector<double> data;
  if (data.size() != n) {
    std::mt19937_64 rng(42);
    std::lognormal_distribution<double> tail(0.0, 1.0);
    data.resize(n);
    for (auto& x : data)
      x = 0.02 + std::round(tail(rng) * 10) / 1000.0;
  }
  return data;
}

void BM_Summarize(benchmark::State& state) {
  const auto& x = samples(static_cast<std::size_t>(state.range(0)));
  std::vector<double> scratch;
  for (auto _ : state)
    benchmark::DoNotOptimize(commgauge::stats::summarize(x, scratch));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Summarize)->Arg(1 << 14)->Arg(1 << 24)->Unit(benchmark::kMillisecond);

void BM_FilterAboveMedian(benchmark::State& state) {
  const auto& x = samples(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(commgauge::stats::filter_above_median(x, 2.0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_FilterAboveMedian)->Arg(1 << 24)->Unit(benchmark::kMillisecond);

void BM_Frequency(benchmark::State& state) {
  const auto& x = samples(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(commgauge::stats::frequency(x, 0.001, 100));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Frequency)->Arg(1 << 24)->Unit(benchmark::kMillisecond);

void BM_Distribution(benchmark::State& state) {
  const auto& x = samples(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(commgauge::stats::distribution(x, 0.005, 50));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Distribution)->Arg(1 << 24)->Unit(benchmark::kMillisecond);

// The median's 95 % interval, as latency computes it after every batch of 50 trials of a size
// (up to 10,000 trials).
void BM_MedianInterval(benchmark::State& state) {
  const auto& x = samples(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(commgauge::stats::median_interval(x, 0.95));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_MedianInterval)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace
