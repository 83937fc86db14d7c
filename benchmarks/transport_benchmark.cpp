// The one cost function and the virtual network's event engine.

#include <benchmark/benchmark.h>

#include "model/cost.hpp"
#include "net/virtual_network.hpp"

namespace {

commgauge::model::LinkParams two_range_link() {
  commgauge::model::LinkParams link;
  link.latency_us = 3;
  commgauge::model::LinkRange eager;
  eager.send_overhead_us = 1;
  eager.recv_overhead_us = 1.2;
  eager.gap_us = 2;
  eager.gap_per_byte_us = 0.0008;
  commgauge::model::LinkRange rndv = eager;
  rndv.from_bytes = 12289;
  rndv.rendezvous = true;
  link.ranges = {eager, rndv};
  return link;
}

void BM_MessageCost(benchmark::State& state) {
  const commgauge::model::CostModel cost(two_range_link());
  std::uint64_t k = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cost.message(k));
    k = k * 3 % 1000003;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MessageCost);

// Blocking ping-pongs on the virtual network: each costs thread hand-overs and events.
void BM_VirtualPingPong(benchmark::State& state) {
  commgauge::net::VirtualNetwork net(two_range_link());
  const int n = 1000;
  for (auto _ : state) {
    net.run([&](commgauge::net::Transport& t) {
      for (int i = 0; i < n; ++i) {
        if (t.role() == commgauge::net::Role::source) {
          t.send(8);
          t.recv(8);
        } else {
          t.recv(8);
          t.send(8);
        }
      }
    });
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_VirtualPingPong)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
