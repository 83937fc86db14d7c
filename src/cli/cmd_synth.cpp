// commgauge synth: write a synthetic MPI trace (ring, halo, collectives, master-worker, a
// sharing scheme) at any rank count, in the trace container format.

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "profile/json_file.hpp"
#include "report/context.hpp"
#include "synth/synth.hpp"
#include "trace/reader.hpp"

namespace commgauge::cli {

namespace {

/// Progress on stderr once a run has taken more than 2 s: redrawn on a terminal, a line every
/// 5 s otherwise (logs).
class SynthProgress {
 public:
  SynthProgress() : terminal_(isatty(STDERR_FILENO) != 0) {}

  void update(std::uint32_t done, std::uint32_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(2) || done >= total) return;
    if (drawn_ &&
        now - last_ < (terminal_ ? std::chrono::milliseconds(200) : std::chrono::seconds(5)))
      return;
    last_ = now;
    drawn_ = true;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "%scommgauge synth: %u of %u ranks written (%.0f%%, %.0f s)%s",
                 terminal_ ? "\r" : "", done, total, 100.0 * done / total, elapsed,
                 terminal_ ? "" : "\n");
    std::fflush(stderr);
  }
  void done() {
    if (terminal_ && drawn_) std::fprintf(stderr, "\r%78s\r", "");
  }

 private:
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_;
};

std::string size_text(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

}  // namespace

void add_synth_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "synth",
      "Write a synthetic MPI trace (ring, halo2d/halo3d, allreduce, alltoall, master-worker, or "
      "a sharing scheme) at any rank count in commgauge's trace format: one container file, "
      "written rank by rank, read like a recorded trace (trace-check, simulate).");
  cmd->footer(
      "Every rank: MPI_Init, the pattern, MPI_Finalize. MPI calls take no time; --compute-us of "
      "computation precede each iteration's communication; ticks are picoseconds. Hosts are "
      "node-<n>, --ranks-per-node consecutive ranks each.\n"
      "  ring: Isend to rank+1, Irecv from rank-1, Waitall.\n"
      "  halo2d, halo3d: periodic process grid (--grid, else the most square), Irecv from and "
      "Isend to the 4 / 6 neighbours (tag: the direction sent), Waitall.\n"
      "  allreduce: Allreduce of --bytes. alltoall: Alltoall of --bytes per peer.\n"
      "  master-worker: rank 0 Sends each worker a task of --bytes; a worker computes, Sends its "
      "result back and Recvs (MPI_ANY_TAG) the next task, --iterations in all, then a zero-byte "
      "stop message. The master Recvs results with MPI_ANY_SOURCE in rank order (as workers "
      "with equal compute finish), waiting inside Recv until they arrive.\n"
      "  scheme FILE.sch: a seed-003 sharing scheme (examples/schemes). Tasks are placed as "
      "'commgauge share --nodes N' places them, N = ceil(ranks / --ranks-per-node), by the "
      "scheme's "
      "placement (rrn, rrp). Each iteration: Barrier, then every sender task's blocking Send to "
      "the receiver task of its destination node, which Recvs each incoming communication with "
      "MPI_ANY_SOURCE (in the scheme's order). --bytes replaces the scheme's sizes.\n"
      "Example: commgauge synth halo3d --ranks 1000000 --iterations 10 --bytes 64KiB "
      "--compute-us 100 --ranks-per-node 32 -o halo");
  struct Flags {
    std::string pattern;
    std::string scheme;
    std::uint32_t ranks = 0;
    std::uint32_t iterations = 1;
    std::string bytes;
    double compute_us = 0;
    std::uint32_t ranks_per_node = 1;
    std::string grid;
    std::string output;
    bool force = false;
    std::string json;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("pattern", f->pattern, synth::synth_pattern_names())->required();
  cmd->add_option("scheme", f->scheme, "the scheme file (pattern scheme)");
  cmd->add_option("--ranks", f->ranks,
                  fmt::format("ranks (MPI_COMM_WORLD size), 1 to {} (the trace reader's limit)",
                              trace::kMaxRanks))
      ->required();
  cmd->add_option("--iterations", f->iterations, "iterations (master-worker: tasks per worker)")
      ->capture_default_str();
  cmd->add_option("--bytes", f->bytes,
                  fmt::format("bytes per message, e.g. 64KiB (default {}; scheme: the scheme's)",
                              synth::kSynthDefaultBytes));
  cmd->add_option("--compute-us", f->compute_us,
                  "computation before each iteration's communication, microseconds")
      ->capture_default_str();
  cmd->add_option("--ranks-per-node", f->ranks_per_node, "ranks per node (host)")
      ->capture_default_str();
  cmd->add_option("--grid", f->grid, "halo process grid AxB or AxBxC (product = --ranks)");
  cmd->add_option("-o,--output", f->output,
                  "trace directory (DIR/trace.cgtc; created, must be empty) or a .cgtc file")
      ->required();
  cmd->add_flag("--force", f->force, "replace a previous trace there");
  cmd->add_option("--json", f->json, "write the summary as JSON to this file");
  cmd->callback([&action, f] {
    action = [f](int&, char**&) {
      synth::SynthOptions o;
      o.pattern = f->pattern;
      o.scheme = f->scheme;
      o.ranks = f->ranks;
      o.iterations = f->iterations;
      if (!f->bytes.empty()) o.bytes = parse_byte_size(f->bytes, "--bytes");
      o.compute_us = f->compute_us;
      o.ranks_per_node = f->ranks_per_node;
      o.grid = f->grid;
      o.program = report::command_line();
      SynthProgress progress;
      const synth::SynthResult r = synth::write_synthetic_trace(
          o, f->output, f->force,
          [&progress](std::uint32_t done, std::uint32_t total) { progress.update(done, total); });
      progress.done();
      std::printf(
          "commgauge synth: %s, %u ranks on %u nodes, %u iterations: %llu events, %s in "
          "%s, %.2f s\n",
          f->pattern.c_str(), r.ranks, r.nodes, f->iterations,
          static_cast<unsigned long long>(r.events), size_text(r.file_bytes).c_str(),
          r.file.c_str(), r.seconds);
      if (!f->json.empty()) {
        profile::write_json_file(f->json, {{"file", r.file.string()},
                                           {"ranks", r.ranks},
                                           {"nodes", r.nodes},
                                           {"events", r.events},
                                           {"file_bytes", r.file_bytes},
                                           {"seconds", r.seconds},
                                           {"synthetic", r.synthetic}});
      }
      return 0;
    };
  });
}

}  // namespace commgauge::cli
