// The simulator's hot paths: the event queue (radix heap against the binary heap it replaced,
// in the classic "hold" pattern: pop the earliest, push one a random delay later), and whole
// replays of synthetic traces (records per second: event loop, matching queues, trace reading),
// without and with contention.

#include <unistd.h>

#include <filesystem>
#include <queue>
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "sim/cluster.hpp"
#include "sim/event_queue.hpp"
#include "sim/network.hpp"
#include "sim/simulator.hpp"
#include "synth/synth.hpp"

namespace {

using namespace commgauge;

struct Event {
  std::int64_t time;
  std::uint64_t seq;
  std::uint32_t target;
};

struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
};

template <class Queue, class Pop>
void hold(benchmark::State& state, Queue& q, Pop pop) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> delay(1, 10'000'000);  // up to 10 us in ps
  std::uint64_t seq = 0;
  for (std::int64_t i = 0; i < state.range(0); ++i)
    q.push({delay(rng), seq++, 0});
  for (auto _ : state) {
    const Event e = pop(q);
    q.push({e.time + delay(rng), seq++, e.target});
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_EventQueueRadixHeapHold(benchmark::State& state) {
  sim::MonotoneEventQueue<Event> q;
  hold(state, q, [](auto& queue) { return queue.pop(); });
}
BENCHMARK(BM_EventQueueRadixHeapHold)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

void BM_EventQueueBinaryHeapHold(benchmark::State& state) {
  std::priority_queue<Event, std::vector<Event>, Later> q;
  hold(state, q, [](auto& queue) {
    const Event e = queue.top();
    queue.pop();
    return e;
  });
}
BENCHMARK(BM_EventQueueBinaryHeapHold)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

/// The traces written, removed when the benchmark program ends.
struct Written {
  std::vector<std::filesystem::path> paths;
  ~Written() {
    for (const auto& p : paths)
      std::filesystem::remove(p);
  }
} written;

/// A synthetic trace, written once per (pattern, ranks) into the temporary directory.
std::filesystem::path synthetic(const std::string& pattern, std::uint32_t ranks,
                                std::uint32_t ranks_per_node) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("commgauge-bench-" + std::to_string(getpid()) + "-" + pattern + "-" +
                     std::to_string(ranks) + "-" + std::to_string(ranks_per_node) + ".cgtc");
  if (!std::filesystem::exists(path)) {
    synth::SynthOptions o;
    o.pattern = pattern;
    o.ranks = ranks;
    o.iterations = 10;
    o.bytes = 1024;
    o.compute_us = 50;
    o.ranks_per_node = ranks_per_node;
    synth::write_synthetic_trace(o, path, false);
    written.paths.push_back(path);
  }
  return path;
}

model::LinkParams loggp_link() {
  model::LinkParams l;
  l.latency_us = 5.0;
  model::LinkRange r;
  r.from_bytes = 1;
  r.send_overhead_us = 1.5;
  r.recv_overhead_us = 1.5;
  r.gap_us = 4.0;
  r.gap_per_byte_us = 0.001;
  l.ranges.push_back(r);
  return l;
}

/// Replays the trace; items are replayed records (MPI calls and computation records).
void replay(benchmark::State& state, const std::string& pattern, const std::string& model,
            const std::string& contention, std::uint32_t ranks_per_node,
            const model::LinkParams& link = loggp_link()) {
  const auto ranks = static_cast<std::uint32_t>(state.range(0));
  const trace::TraceReader trace(synthetic(pattern, ranks, ranks_per_node));
  const auto recorded = sim::recorded_placement(trace.index(), trace.ranks());
  const sim::Network net(model, {{"intra_node", link}, {"inter_node", link}},
                         sim::cluster_of_placement(recorded), recorded);
  sim::Options options;
  options.contention = contention;
  std::uint64_t records = 0;
  for (auto _ : state) {
    const sim::Result r = sim::simulate(trace, net, options);
    records += r.records;
    benchmark::DoNotOptimize(r.predicted_ps);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
}

void BM_ReplayRingNone(benchmark::State& state) {
  replay(state, "ring", "none", "none", 1);
}
BENCHMARK(BM_ReplayRingNone)->Arg(1 << 10)->Arg(1 << 14)->Unit(benchmark::kMillisecond);

void BM_ReplayRingLoggp(benchmark::State& state) {
  replay(state, "ring", "loggp", "none", 1);
}
BENCHMARK(BM_ReplayRingLoggp)->Arg(1 << 10)->Arg(1 << 14)->Unit(benchmark::kMillisecond);

// Six posted receives and six sends per rank and iteration: the matching queues.
void BM_ReplayHalo3dLoggp(benchmark::State& state) {
  replay(state, "halo3d", "loggp", "none", 1);
}
BENCHMARK(BM_ReplayHalo3dLoggp)->Arg(1 << 10)->Arg(1 << 14)->Unit(benchmark::kMillisecond);

// The same under loggps, and with a crossing cost o_x: each rank then keeps its latest send per
// peer, and each receive looks its sender up there (every halo message crosses one).
void BM_ReplayHalo3dLoggps(benchmark::State& state) {
  replay(state, "halo3d", "loggps", "none", 1);
}
BENCHMARK(BM_ReplayHalo3dLoggps)->Arg(1 << 10)->Arg(1 << 14)->Unit(benchmark::kMillisecond);

void BM_ReplayHalo3dLoggpsCrossing(benchmark::State& state) {
  model::LinkParams link = loggp_link();
  link.ranges[0].crossing_recv_us = 0.2;
  replay(state, "halo3d", "loggps", "none", 1, link);
}
BENCHMARK(BM_ReplayHalo3dLoggpsCrossing)->Arg(1 << 10)->Arg(1 << 14)->Unit(benchmark::kMillisecond);

// Allreduce every iteration (the tuned rules' schedules, local work charged), and the same where
// a copy into a vector a peer pulled is measured: each rank then keeps what its last collective
// left pulled, and each call looks it up.
model::LinkParams local_work_link() {
  model::LinkParams link = loggp_link();
  link.copy_us_per_byte = 0.00003;
  link.reduce_us_per_byte = 0.00003;
  return link;
}

void BM_ReplayAllreduceLoggps(benchmark::State& state) {
  replay(state, "allreduce", "loggps", "none", 1, local_work_link());
}
BENCHMARK(BM_ReplayAllreduceLoggps)->Arg(1 << 10)->Arg(1 << 14)->Unit(benchmark::kMillisecond);

void BM_ReplayAllreduceLoggpsIntoPulled(benchmark::State& state) {
  model::LinkParams link = local_work_link();
  link.copy_into_sent_us_per_byte = 0.0003;
  replay(state, "allreduce", "loggps", "none", 1, link);
}
BENCHMARK(BM_ReplayAllreduceLoggpsIntoPulled)
    ->Arg(1 << 10)
    ->Arg(1 << 14)
    ->Unit(benchmark::kMillisecond);

// The same where a copy between rendezvous transfers is measured: each call's schedule is looked
// through for a rendezvous message of the rank (none here: every step looked at).
void BM_ReplayAllreduceLoggpsCopyBetweenRendezvous(benchmark::State& state) {
  model::LinkParams link = local_work_link();
  link.copy_after_rendezvous_us_per_byte = 0.00005;
  replay(state, "allreduce", "loggps", "none", 1, link);
}
BENCHMARK(BM_ReplayAllreduceLoggpsCopyBetweenRendezvous)
    ->Arg(1 << 10)
    ->Arg(1 << 14)
    ->Unit(benchmark::kMillisecond);

// The same with first-call costs (each rank's first call of a listed function charged once): a
// mask test per call.
void BM_ReplayAllreduceLoggpsFirstCalls(benchmark::State& state) {
  model::LinkParams link = local_work_link();
  link.first_call_us = {{"MPI_Allreduce", 60.0}, {"MPI_Bcast", 20.0}, {"MPI_Cart_create", 600.0}};
  replay(state, "allreduce", "loggps", "none", 1, link);
}
BENCHMARK(BM_ReplayAllreduceLoggpsFirstCalls)
    ->Arg(1 << 10)
    ->Arg(1 << 14)
    ->Unit(benchmark::kMillisecond);

// MPI_ANY_SOURCE receives at the master, many unexpected messages.
void BM_ReplayMasterWorkerLoggp(benchmark::State& state) {
  replay(state, "master-worker", "loggp", "none", 1);
}
BENCHMARK(BM_ReplayMasterWorkerLoggp)->Arg(1 << 8)->Arg(1 << 10)->Unit(benchmark::kMillisecond);

// Contention: 4 ranks per node, every halo message to another node is a flow on node links.
void BM_ReplayHalo3dFair(benchmark::State& state) {
  replay(state, "halo3d", "loggp", "fair", 4);
}
BENCHMARK(BM_ReplayHalo3dFair)->Arg(1 << 10)->Arg(1 << 14)->Unit(benchmark::kMillisecond);

void BM_ReplayHalo3dGige(benchmark::State& state) {
  replay(state, "halo3d", "loggp", "gige", 4);
}
BENCHMARK(BM_ReplayHalo3dGige)->Arg(1 << 10)->Arg(1 << 14)->Unit(benchmark::kMillisecond);

}  // namespace
