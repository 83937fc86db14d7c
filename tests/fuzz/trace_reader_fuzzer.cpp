// libFuzzer target for the trace reader (and summary, check, both exports, the replay): any
// bytes, read as a rank file and as a container, must give events or a TraceError (file and
// offset), never a crash, a hang or another exception; the replay may also end in a diagnosed
// deadlock or past the simulated clock's range (TimeRangeError). Built with clang
// (-fsanitize=fuzzer,address,undefined) by tests/fuzz/CMakeLists.txt.

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include "../unit/link_fixtures.hpp"
#include "common/error.hpp"
#include "sim/cluster.hpp"
#include "sim/network.hpp"
#include "sim/simulator.hpp"
#include "trace/check.hpp"
#include "trace/export_otf2.hpp"
#include "trace/export_simgrid.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"
#include "trace/summary.hpp"

namespace fs = std::filesystem;
using namespace commgauge::trace;

namespace {

const fs::path& work_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::path("/dev/shm").append("commgauge-fuzz-" + std::to_string(getpid()));
    fs::create_directories(d / "dir");
    return d;
  }();
  return dir;
}

void write(const fs::path& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

// The replay under LogGPS with a rendezvous range of dependent progress (the unit tests' link),
// on the trace's placement.
void replay(const TraceReader& trace) {
  static const commgauge::model::LinkParams link =
      commgauge::testing::loggps_link(commgauge::model::Progress::dependent);
  const auto placement = commgauge::sim::recorded_placement(trace.index(), trace.ranks());
  const commgauge::sim::Network net("loggps", {{"intra_node", link}, {"inter_node", link}},
                                    commgauge::sim::cluster_of_placement(placement), placement);
  (void)commgauge::sim::simulate(trace, net, {});
}

void read_everything(const fs::path& path) {
  try {
    const TraceReader trace(path);
    Event e;
    for (std::uint32_t r = 0; r < trace.ranks() && r < 4; ++r) {
      if (std::find(trace.missing_ranks().begin(), trace.missing_ranks().end(), r) !=
          trace.missing_ranks().end())
        continue;
      RankReader reader = trace.open_rank(r);
      while (reader.next(e)) {
      }
    }
    // The consumers of the reader must take what it returns (small rank counts: a header may
    // claim millions, which is memory, not a bug).
    if (trace.ranks() <= 64) {
      (void)summarize(trace, 3);
      const bool checked = check_trace(trace, 5).ok();
      // trace-export and simulate take what the reader returns too (--no-check).
      (void)export_simgrid_ti(trace, work_dir() / "export", SimgridExportOptions{});
      // The OTF2 export costs milliseconds (libotf2's chunk buffers): checked traces only;
      // before the replay, which may end in a diagnosed deadlock.
      if (checked && otf2_available()) (void)export_otf2(trace, work_dir() / "otf2", true);
      replay(trace);
    }
  } catch (const commgauge::InputError&) {  // TraceError, TimeRangeError among them
  } catch (const commgauge::sim::DeadlockError&) {
  } catch (
      const commgauge::OutputError&) {  // the export's scratch disk full: not the reader's fault
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The bytes as one block's payload: the event decoder behind the checksum, which the file
  // paths below rarely get past.
  std::size_t pos = 0;
  std::int64_t previous = 0;
  Event e;
  try {
    while (pos < size) {
      decode_event(std::span(data, size), pos, previous, e);
      previous = e.start_tick;
    }
  } catch (const FormatError&) {
  }
  const fs::path& dir = work_dir();
  write(dir / "dir" / "rank-0.cgt", data, size);
  read_everything(dir / "dir");
  write(dir / "trace.cgtc", data, size);
  read_everything(dir / "trace.cgtc");
  return 0;
}
