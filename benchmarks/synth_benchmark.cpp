// commgauge synth's hot path: generating and encoding one rank's events (records per second),
// without the disk (a null sink) and into a real container file.

#include <unistd.h>

#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "null_sink.hpp"

#include "synth/synth.hpp"

namespace {

using namespace commgauge;

using commgauge::bench::NullSink;

synth::SynthOptions options(const std::string& pattern, std::uint32_t ranks,
                            std::uint32_t iterations) {
  synth::SynthOptions o;
  o.pattern = pattern;
  o.ranks = ranks;
  o.iterations = iterations;
  o.bytes = 4096;
  o.compute_us = 10;
  return o;
}

/// One rank after another of a 1M-rank trace, as write_synthetic_trace does; items are records.
void rank_records(benchmark::State& state, const std::string& pattern) {
  const synth::SynthPlan plan = synth::plan_synthetic(
      options(pattern, 1'000'000, static_cast<std::uint32_t>(state.range(0))));
  NullSink sink;
  std::uint32_t rank = 0;
  std::uint64_t records = 0;
  for (auto _ : state) {
    records += synth::write_synthetic_rank(plan, rank, sink);
    rank = (rank + 1) % plan.ranks;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
  state.counters["bytes_per_record"] =
      static_cast<double>(sink.bytes) / static_cast<double>(records);
}

void BM_SynthRingRank(benchmark::State& state) {
  rank_records(state, "ring");
}
BENCHMARK(BM_SynthRingRank)->Arg(1)->Arg(10)->Arg(100);

void BM_SynthHalo3dRank(benchmark::State& state) {
  rank_records(state, "halo3d");
}
BENCHMARK(BM_SynthHalo3dRank)->Arg(10);

void BM_SynthAllreduceRank(benchmark::State& state) {
  rank_records(state, "allreduce");
}
BENCHMARK(BM_SynthAllreduceRank)->Arg(10);

/// A whole 100k-rank ring of 10 iterations into a container file (page cache, then disk).
void BM_SynthRingContainer(benchmark::State& state) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("commgauge-bench-synth-" + std::to_string(getpid()));
  std::uint64_t records = 0, bytes = 0;
  for (auto _ : state) {
    const synth::SynthResult r =
        synth::write_synthetic_trace(options("ring", 100'000, 10), dir, /*force=*/true);
    records += r.events;
    bytes += r.file_bytes;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_SynthRingContainer)->Unit(benchmark::kMillisecond);

}  // namespace
