// sim::LinkSharing's hot path in the simulator: one finish and one start per iteration, with N
// flows active in small components (2 to 4 flows, as many ranks per node exchange with a few
// peers). The cost should follow the component's size, not N.

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "model/sharing.hpp"
#include "sim/link_sharing.hpp"

namespace {

using namespace commgauge;

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
  constexpr model::Picoseconds kWork = 1'000'000'000'000;
  model::Picoseconds now = 0;
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
    ++now;
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

BENCHMARK(BM_LinkSharingFair)->Arg(1'000)->Arg(100'000);
BENCHMARK(BM_LinkSharingGige)->Arg(1'000)->Arg(100'000);
BENCHMARK(BM_LinkSharingMyrinet)->Arg(1'000)->Arg(100'000);

}  // namespace
