// sim::LinkSharing's hot path in the simulator: one finish and one start per iteration, with N
// flows active in small components (2 to 4 flows, as many ranks per node exchange with a few
// peers). The cost should follow the component's size, not N.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "model/sharing.hpp"
#include "sim/link_sharing.hpp"

namespace {

using namespace commgauge;
using namespace commgauge::model::literals;

/// Group g owns nodes 4g .. 4g+3 and 2, 3 or 4 flows among them, all in one component:
/// a -> b, a -> c (outgoing conflict), d -> c (incoming), d -> b (a 4-cycle).
struct Layout {
  struct Slot {
    int src, dst;
  };
  std::vector<Slot> slots;  ///< by flow id
  explicit Layout(std::size_t flows) {
    for (int g = 0; slots.size() < flows; ++g) {
      const int a = 4 * g, b = a + 1, c = a + 2, d = a + 3;
      const Slot all[4] = {{a, b}, {a, c}, {d, c}, {d, b}};
      const int size = 2 + g % 3;
      for (int k = 0; k < size && slots.size() < flows; ++k)
        slots.push_back(all[k]);
    }
  }
};

void start_finish_cycle(benchmark::State& state, const std::string& model_name) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const Layout layout(n);
  sim::LinkSharing ls(model::make_sharing_model(model_name, {}));
  std::vector<std::uint64_t> version(n, 0);
  std::vector<sim::LinkSharing::Change> changes;
  // Work far beyond the benchmark's time span: no flow runs out, every finish is a cancel at
  // the current time, which costs what a real finish costs.
  constexpr model::Picoseconds kWork{1'000'000'000'000};
  model::Picoseconds now{};
  auto apply = [&] {
    for (const auto& c : changes)
      version[c.flow] = c.version;
  };
  for (std::uint32_t f = 0; f < n; ++f) {
    ls.start(f, layout.slots[f].src, layout.slots[f].dst, kWork, now, changes);
    apply();
  }
  // Flows in a scattered order (a step coprime with n visits every flow), as a simulator's
  // events touch the nodes of a large machine.
  std::uint64_t cursor = 0;
  std::uint64_t stride = 2654435761u % n;
  while (std::gcd(stride, std::uint64_t{n}) != 1)
    ++stride;
  std::uint64_t reported = 0;
  for (auto _ : state) {
    cursor = (cursor + stride) % n;
    const auto f = static_cast<std::uint32_t>(cursor);
    now += 1_ps;
    if (!ls.finish(f, version[f], now, changes)) state.SkipWithError("stale version");
    apply();
    reported += changes.size();
    ls.start(f, layout.slots[f].src, layout.slots[f].dst, kWork, now, changes);
    apply();
    reported += changes.size();
  }
  state.SetItemsProcessed(state.iterations());  // one item = one start + one finish
  state.counters["changes_per_cycle"] =
      static_cast<double>(reported) / static_cast<double>(state.iterations());
  state.counters["largest_component"] = static_cast<double>(ls.stats().largest_component);
}

void BM_LinkSharingFair(benchmark::State& state) {
  start_finish_cycle(state, "fair");
}
void BM_LinkSharingGige(benchmark::State& state) {
  start_finish_cycle(state, "gige");
}
void BM_LinkSharingMyrinet(benchmark::State& state) {
  start_finish_cycle(state, "myrinet");
}

// GigE's Definition 1 over a whole scheme of N communications among N/4 nodes (what
// `share --predict --model gige` evaluates): it should grow as N log N, not N^2.
void BM_GigePenaltiesOfAScheme(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const int nodes = static_cast<int>(std::max<std::size_t>(n / 4, 2));
  std::vector<model::Flow> flows(n);
  std::uint64_t x = 88172645463325252ull;  // xorshift: the same scheme every run
  for (auto& f : flows) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    f.source = static_cast<int>(x % static_cast<std::uint64_t>(nodes));
    f.destination = static_cast<int>((x >> 20) % static_cast<std::uint64_t>(nodes - 1));
    if (f.destination >= f.source) ++f.destination;
  }
  const model::GigeModel gige({});
  for (auto _ : state)
    benchmark::DoNotOptimize(gige.model_penalties(flows));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

BENCHMARK(BM_GigePenaltiesOfAScheme)->Arg(1'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LinkSharingFair)->Arg(1'000)->Arg(100'000);
BENCHMARK(BM_LinkSharingGige)->Arg(1'000)->Arg(100'000);
BENCHMARK(BM_LinkSharingMyrinet)->Arg(1'000)->Arg(100'000);

}  // namespace
