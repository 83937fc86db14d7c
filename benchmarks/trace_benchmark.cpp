// The trace format's hot paths: encoding one recorded call into a block (what the tracer does
// per event, minus the clock readings) and decoding a rank file (what every reader does).

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <benchmark/benchmark.h>

#include "null_sink.hpp"

#include "trace/function_ids.hpp"
#include "trace/reader.hpp"
#include "trace/writer.hpp"

namespace {

using namespace commgauge::trace;

using commgauge::bench::NullSink;

void fill_send(Event& e, std::int64_t t, int i) {
  e.function = fn::Send;
  e.start_tick = t;
  e.end_tick = t + 900;
  e.fields = kPeer | kTag | kComm | kBytes | kCount;
  e.peer = i % 64;
  e.tag = i % 7;
  e.count = 1024;
  e.bytes = 8192;
}

Event send_like(std::int64_t t, int i) {
  Event e;
  fill_send(e, t, i);
  return e;
}

void BM_EncodeSendEvent(benchmark::State& state) {
  NullSink sink;
  BlockEncoder encoder(0, sink);
  std::int64_t t = 1'000'000'000;
  int i = 0;
  Event e;  // reused, as the tracer reuses its scratch event
  for (auto _ : state) {
    t += 2500;
    fill_send(e, t, ++i);
    encoder.append(e);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["bytes_per_event"] =
      static_cast<double>(sink.bytes) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_EncodeSendEvent);

void BM_EncodeWaitallEvent(benchmark::State& state) {
  NullSink sink;
  BlockEncoder encoder(0, sink);
  Event e;
  e.function = fn::Waitall;
  e.fields = kCompletions | kCount;
  e.count = 4;
  for (int k = 0; k < 4; ++k)
    e.completions.push_back({static_cast<std::uint64_t>(k + 1), k, 1, 200, 8, false});
  std::int64_t t = 0;
  for (auto _ : state) {
    t += 3000;
    e.start_tick = t;
    e.end_tick = t + 400;
    for (auto& c : e.completions)
      c.request += 4;
    encoder.append(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeWaitallEvent);

/// Reads back a rank file of a million sends, streamed block by block.
void BM_ReadRankFile(benchmark::State& state) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("commgauge-bench-trace-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  constexpr int kEvents = 1'000'000;
  {
    MappedRankFile file(dir / rank_file_name(0));
    BlockEncoder encoder(0, file);
    encoder.write_header(R"({"version":1,"rank":0,"size":1})");
    for (int i = 0; i < kEvents; ++i)
      encoder.append(send_like(1000 + 2500LL * i, i));
    encoder.flush();
    file.close();
  }
  const TraceReader trace(dir);
  Event e;
  for (auto _ : state) {
    RankReader reader = trace.open_rank(0);
    while (reader.next(e))
      benchmark::DoNotOptimize(e.bytes);
  }
  state.SetItemsProcessed(state.iterations() * kEvents);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReadRankFile)->Unit(benchmark::kMillisecond);

}  // namespace
