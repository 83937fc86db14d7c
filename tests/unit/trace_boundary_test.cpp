// One validation at the boundary, as a property: valid traces of every synthetic pattern are
// mutated (ranks, tags, sizes, requests, communicators, functions, the intercommunicator flag,
// negative durations, events dropped or swapped, ranks cut short) and each mutant is read by the
// three readers: trace-check, the replay (simulate) and the SimGrid exporter. What the check
// accepts, the exporter writes and the replay replays (or diagnoses as a deadlock); what it
// rejects, the CLI refuses with the check's own report, and read anyway (--no-check) the replay and
// the exporter end with a clear error or a result, never a crash or an exception of another kind
// (the unit tests also run under AddressSanitizer and UBSan).

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "link_fixtures.hpp"
#include "sim/cluster.hpp"
#include "sim/network.hpp"
#include "sim/simulator.hpp"
#include "synth/synth.hpp"
#include "trace/check.hpp"
#include "trace/export_otf2.hpp"
#include "trace/export_simgrid.hpp"
#include "trace/functions.hpp"
#include "trace/reader.hpp"
#include "trace/writer.hpp"

namespace commgauge {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

struct RankData {
  std::string header;
  std::vector<trace::Event> events;
};

struct Trace {
  std::vector<RankData> ranks;
  std::string index;
};

Trace read_all(const fs::path& path) {
  const trace::TraceReader reader(path);
  Trace t;
  t.index = reader.index().dump();
  for (std::uint32_t r = 0; r < reader.ranks(); ++r) {
    auto rank = reader.open_rank(r);
    RankData d;
    d.header = rank.header().dump();
    trace::Event e;
    while (rank.next(e))
      d.events.push_back(e);
    t.ranks.push_back(std::move(d));
  }
  return t;
}

void write_all(const Trace& t, const fs::path& path) {
  trace::ContainerWriter out(path, static_cast<std::uint32_t>(t.ranks.size()));
  for (std::uint32_t r = 0; r < t.ranks.size(); ++r) {
    trace::BlockEncoder enc(r, out);
    enc.write_header(t.ranks[r].header);
    for (const auto& e : t.ranks[r].events)
      enc.append(e);
    enc.flush();
  }
  out.finish(t.index);
}

// One random change to one event (or to a rank's length), of the kinds a damaged or foreign
// trace shows; returns what was done, for the failure message.
std::string mutate(Trace& t, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  const std::size_t r = pick(t.ranks.size());
  auto& events = t.ranks[r].events;
  if (events.size() < 3) return "nothing (rank too short)";
  // Keep MPI_Init (the first event) so that most mutants get past the first check.
  const std::size_t i = 1 + pick(events.size() - 1);
  trace::Event& e = events[i];
  const auto ranks = static_cast<std::int32_t>(t.ranks.size());
  const std::int32_t wild[] = {ranks, ranks + 1, 1 << 30, -5, trace::kAnySource, trace::kProcNull};
  const std::string at = " (rank " + std::to_string(r) + " event " + std::to_string(i) + ")";
  switch (pick(14)) {
    case 0:
      e.peer = wild[pick(std::size(wild))];
      e.set(trace::kPeer);
      return "peer -> " + std::to_string(e.peer) + at;
    case 1:
      e.tag = static_cast<std::int32_t>(pick(5)) - 2;
      e.set(trace::kTag);
      return "tag -> " + std::to_string(e.tag) + at;
    case 2:
      e.bytes = std::uint64_t{1} << pick(63);
      e.set(trace::kBytes);
      return "bytes -> " + std::to_string(e.bytes) + at;
    case 3:
      e.request = pick(4);
      e.set(trace::kRequest);
      return "request -> " + std::to_string(e.request) + at;
    case 4:
      if (!e.completions.empty()) {
        e.completions[pick(e.completions.size())].request = pick(6);
        e.completions[0].source = wild[pick(std::size(wild))];
      }
      return "completion changed" + at;
    case 5:
      e.comm = pick(4);
      e.set(trace::kComm);
      return "comm -> " + std::to_string(e.comm) + at;
    case 6:
      e.root = wild[pick(std::size(wild))];
      e.set(trace::kRoot);
      return "root -> " + std::to_string(e.root) + at;
    case 7:
      events.erase(events.begin() + static_cast<std::ptrdiff_t>(i));
      return "event dropped" + at;
    case 8:
      events.resize(i);  // cut short: no MPI_Finalize, no end record
      return "rank cut short" + at;
    case 9: {
      const std::string was(trace::function_name(e.function));
      e.function = static_cast<std::uint32_t>(pick(420));
      return "function " + was + " -> " + std::string(trace::function_name(e.function)) + at;
    }
    case 10:
      e.counts.assign(pick(6), std::uint64_t{1} << pick(40));
      e.recv_counts = e.counts;
      e.set(trace::kCounts);
      e.set(trace::kRecvCounts);
      return "counts resized" + at;
    case 11:
      // Found by a red-team run: the check accepted a collective on MPI_COMM_WORLD flagged as
      // an intercommunicator call, which the exporter then refused.
      e.flags ^= trace::kIntercomm;
      e.set(trace::kFlags);
      return std::string("intercommunicator flag ") +
             (e.flag(trace::kIntercomm) ? "set" : "cleared") + at;
    case 12:
      e.end_tick = e.start_tick - 1 - static_cast<std::int64_t>(pick(1000));
      return "negative duration" + at;
    default:
      std::swap(events[i], events[1 + pick(events.size() - 1)]);
      return "two events swapped" + at;
  }
}

enum class Outcome { completed, clear_error, deadlock, out_of_clock_range };

// Reads the trace through one reader; a clear error is one of commgauge's error types.
template <typename F>
Outcome read_with(F&& f, const std::string& what) {
  const bool verbose = std::getenv("CG_BOUNDARY_VERBOSE") != nullptr;
  try {
    f();
    return Outcome::completed;
  } catch (const TimeRangeError& e) {
    if (verbose) std::printf("%s: out of range: %s\n", what.c_str(), e.what());
    return Outcome::out_of_clock_range;
  } catch (const InputError& e) {  // TraceError is an InputError
    if (verbose) std::printf("%s: %s\n", what.c_str(), e.what());
    return Outcome::clear_error;
  } catch (const sim::DeadlockError& e) {
    if (verbose) std::printf("%s: deadlock: %.200s\n", what.c_str(), e.what());
    return Outcome::deadlock;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not a clear error: " << e.what();
    return Outcome::clear_error;
  }
}

TEST(TraceBoundary, MutatedTracesNeverCrashAReaderAndTheCheckSpeaksForAll) {
  const fs::path dir = fs::temp_directory_path() / ("cg-boundary-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto link = commgauge::testing::loggps_link(model::Progress::dependent);
  // CG_BOUNDARY_SEED explores other mutants (the test's own seed is fixed).
  const char* seed = std::getenv("CG_BOUNDARY_SEED");
  std::mt19937_64 rng(seed ? std::strtoull(seed, nullptr, 10) : 20261125);
  int accepted = 0, rejected = 0, deadlocks = 0, out_of_range = 0, otf2_written = 0;
  // A thousand archives of a few files each: in memory where the machine has it (/dev/shm).
  const fs::path otf2_dir =
      (fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) /
      ("cg-boundary-otf2-" + std::to_string(getpid()));
  fs::remove_all(otf2_dir);
  for (const char* pattern : {"ring", "halo2d", "allreduce", "alltoall", "master-worker"}) {
    synth::SynthOptions so;
    so.pattern = pattern;
    so.ranks = std::string(pattern) == "halo2d" ? 4 : 3;
    so.iterations = 2;
    so.bytes = 2048;
    so.compute_us = 5;
    const fs::path valid = dir / (std::string(pattern) + ".cgtc");
    synth::write_synthetic_trace(so, valid, true);
    const Trace original = read_all(valid);
    for (int m = 0; m < 200; ++m) {
      Trace t = original;
      const std::string what = std::string(pattern) + ": " + mutate(t, rng);
      const fs::path path = dir / (std::string(pattern) + "-" + std::to_string(m) + ".cgtc");
      write_all(t, path);
      std::optional<trace::TraceReader> reader;
      if (read_with([&] { reader.emplace(path); }, what) != Outcome::completed) continue;
      bool ok = false;
      read_with([&] { ok = trace::check_trace(*reader).ok(); }, what + " (check)");
      (ok ? accepted : rejected) += 1;
      const std::string verdict = ok ? " [check: OK]" : " [check: rejected]";
      const Outcome replay = read_with(
          [&] {
            const auto placement = sim::recorded_placement(reader->index(), reader->ranks());
            const sim::Network net("loggps", {{"intra_node", link}, {"inter_node", link}},
                                   sim::cluster_of_placement(placement), placement);
            sim::simulate(*reader, net, {});
          },
          what + " (simulate)" + verdict);
      const Outcome exported =
          read_with([&] { trace::export_simgrid_ti(*reader, dir / "export", {}); },
                    what + " (export)" + verdict);
      // The OTF2 export (replacing the last mutant's archive) writes the trace or names what it
      // cannot write faithfully (TraceError), checked or not: trace-export --no-check runs it on
      // anything the reader returns.
      if (trace::otf2_available()) {
        const Outcome otf2 = read_with([&] { trace::export_otf2(*reader, otf2_dir, true); },
                                       what + " (OTF2 export)" + verdict);
        if (otf2 == Outcome::completed) ++otf2_written;
      }
      if (ok) {
        // What the check accepts, the exporter writes and the replay replays - or diagnoses as
        // a deadlock: the check reads a trace's structure, not its blocking behaviour (a Recv
        // moved before the Send it waits for is consistent but cannot run). A well-formed
        // message of 2^50 bytes and more may cost more than the simulated clock holds: the
        // replay says so (TimeRangeError) instead of wrapping into negative times.
        EXPECT_EQ(exported, Outcome::completed) << what;
        EXPECT_NE(replay, Outcome::clear_error) << what;
        if (replay == Outcome::deadlock) ++deadlocks;
        if (replay == Outcome::out_of_clock_range) ++out_of_range;
      }
    }
  }
  fs::remove_all(dir);
  fs::remove_all(otf2_dir);
  std::printf(
      "mutants: %d accepted by trace-check, %d rejected; of the accepted, %d replay into a "
      "deadlock and %d pass the simulated clock's range; %d written as OTF2\n",
      accepted, rejected, deadlocks, out_of_range, otf2_written);
  EXPECT_GT(rejected, 100);  // the mutations are real damage, mostly caught
  if (trace::otf2_available()) {
    EXPECT_GT(otf2_written, accepted / 2);  // the export ran and wrote most of them
  }
}

// A fresh scratch directory `name`-PID holding valid.cgtc: synth's 2-rank ring, one iteration.
fs::path two_rank_ring_in(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  synth::SynthOptions so;
  so.pattern = "ring";
  so.ranks = 2;
  so.iterations = 1;
  synth::write_synthetic_trace(so, dir / "valid.cgtc", true);
  return dir;
}

// A trace read without its check (trace-export --no-check) that sends to a rank it does not
// have: the SimGrid export refuses it by name, as the replay does, instead of writing "isend 5".
TEST(TraceBoundary, TheSimgridExportRefusesAPeerTheTraceDoesNotHave) {
  const fs::path dir = two_rank_ring_in("cg-export-peer");
  Trace t = read_all(dir / "valid.cgtc");
  bool changed = false;
  for (auto& e : t.ranks[0].events) {
    if (trace::function_name(e.function) == "MPI_Isend") {
      e.peer = 5;
      changed = true;
      break;
    }
  }
  ASSERT_TRUE(changed);
  write_all(t, dir / "peer5.cgtc");
  const trace::TraceReader reader(dir / "peer5.cgtc");
  EXPECT_FALSE(trace::check_trace(reader).ok());
  try {
    trace::export_simgrid_ti(reader, dir / "export", {});
    ADD_FAILURE() << "a send to rank 5 of a 2-rank trace was exported";
  } catch (const trace::TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("peer 5 is not a rank of this 2-rank trace"));
  }
  EXPECT_FALSE(fs::exists(dir / "export"));  // the directory it created goes again
  fs::remove_all(dir);
}

// A container of 0 ranks is no trace, as a directory whose index.json says 0 ranks is not: every
// reader refuses it where it opens it (trace-check, simulate and trace-summary had passed it).
TEST(TraceBoundary, AContainerOfNoRanksIsRefusedWhereItIsOpened) {
  const fs::path file =
      fs::temp_directory_path() / ("cg-no-ranks-" + std::to_string(getpid()) + ".cgtc");
  {
    trace::ContainerWriter out(file, 0);
    out.finish(R"({"format": "commgauge-trace", "version": 1, "ranks": 0})");
  }
  try {
    const trace::TraceReader reader(file);
    ADD_FAILURE() << "a container of 0 ranks was opened";
  } catch (const trace::TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("names no rank"));
  }
  fs::remove(file);
}

// A rank whose header counts another job size than the trace holds is named at the rank
// (trace-check had only reported its sends past the last rank).
TEST(TraceBoundary, TheCheckNamesARankHeaderOfAnotherJobSize) {
  const fs::path dir = two_rank_ring_in("cg-header-size");
  EXPECT_TRUE(trace::check_trace(trace::TraceReader(dir / "valid.cgtc")).ok());
  Trace t = read_all(dir / "valid.cgtc");
  nlohmann::json header = nlohmann::json::parse(t.ranks[1].header);
  header["size"] = 3;
  t.ranks[1].header = header.dump();
  write_all(t, dir / "sized.cgtc");
  const trace::CheckResult r = trace::check_trace(trace::TraceReader(dir / "sized.cgtc"));
  EXPECT_FALSE(r.ok());
  bool named = false;
  for (const auto& i : r.issues)
    named = named || (i.rank == 1 && i.message.find("the rank's header says a job of 3 ranks, "
                                                    "the trace's index 2") != std::string::npos);
  EXPECT_TRUE(named);
  fs::remove_all(dir);
}

// index.json's placement is checked where every reader opens the trace: a host number outside
// the index's hosts (or not a number, or a list of another length) is a TraceError naming it,
// so trace-check, the replay and the exporters refuse it alike (the replay had put 2 ranks on 6
// nodes from [5, 0], which trace-export refused and trace-check accepted).
TEST(TraceBoundary, APlacementOutsideTheHostsIsRefusedWhereTheTraceIsOpened) {
  const fs::path dir = two_rank_ring_in("cg-placement");
  const fs::path valid = dir / "valid.cgtc";
  const Trace original = read_all(valid);
  ASSERT_EQ(nlohmann::json::parse(original.index).at("hosts").size(), 2u);
  struct Case {
    nlohmann::json placement;
    std::string says;
  };
  const std::vector<Case> cases = {{{5, 0}, "/placement/0: expected a host number 0 to 1, got 5"},
                                   {{-1, 0}, "/placement/0: expected a host number 0 to 1, got -1"},
                                   {{0, 1e20}, "/placement/1: expected a host number 0 to 1"},
                                   {{0, nullptr}, "/placement/1: expected a host number 0 to 1"},
                                   {{0}, "/placement: expected an array of 2 host numbers"},
                                   {{1, 1}, ""}};
  for (const auto& c : cases) {
    Trace t = original;
    auto index = nlohmann::json::parse(t.index);
    index["placement"] = c.placement;
    t.index = index.dump();
    const fs::path path = dir / "mutant.cgtc";
    fs::remove(path);
    write_all(t, path);
    if (c.says.empty()) {
      EXPECT_EQ(trace::TraceReader(path).ranks(), 2u) << c.placement.dump();
      continue;
    }
    try {
      trace::TraceReader reader(path);
      ADD_FAILURE() << c.placement.dump() << " was accepted";
    } catch (const trace::TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace commgauge
