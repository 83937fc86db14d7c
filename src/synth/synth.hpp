#pragma once
// commgauge synth: synthetic MPI traces written directly in the trace format
// (docs/trace-format.md), in the single-file container, one rank at a time, so any rank count
// (up to the reader's kMaxRanks) takes one file descriptor and memory that does not grow with
// iterations.
//
// What is written reads exactly like a tracer-recorded trace: the tracer's header keys (plus
// "synthetic"), MPI_Init, the pattern, MPI_Finalize and the end record, the calls recorded as
// the tracer records them. Ticks are picoseconds (ticks_per_second 1e12), so a replay is exact;
// MPI calls take no time and computation is the gap before each iteration's communication.
// The only calls that last are the master-worker master's receives: it waits in MPI for the
// workers' results (arriving as they would with zero network time), it does not compute.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/scheme.hpp"
#include "trace/writer.hpp"

namespace commgauge::synth {

enum class SynthPattern { ring, halo2d, halo3d, allreduce, alltoall, master_worker, scheme };

std::optional<SynthPattern> parse_synth_pattern(std::string_view name);
std::string_view to_string(SynthPattern p);
/// "ring, halo2d, ..." for messages and --help.
std::string synth_pattern_names();

inline constexpr std::uint64_t kSynthDefaultBytes = 1024;
inline constexpr double kSynthTicksPerSecond = 1e12;  ///< picoseconds
/// Tags of the master-worker protocol.
inline constexpr std::int32_t kTaskTag = 1;
inline constexpr std::int32_t kResultTag = 2;
inline constexpr std::int32_t kStopTag = 3;

struct SynthOptions {
  std::string pattern;
  std::uint32_t ranks = 0;
  std::uint32_t iterations = 1;
  /// Bytes per message (alltoall: per peer; master-worker: task and result). Scheme: replaces
  /// the scheme's sizes when given. Default kSynthDefaultBytes.
  std::optional<std::uint64_t> bytes;
  double compute_us = 0;  ///< computation before each iteration's communication
  std::uint32_t ranks_per_node = 1;
  std::string grid;                  ///< halo: "AxB" / "AxBxC"; empty: the most square
  std::filesystem::path scheme;      ///< scheme: the .sch file
  std::vector<std::string> program;  ///< the command line, recorded as the index's "program"
};

/// Validated options and everything a rank's events are computed from.
struct SynthPlan {
  SynthPattern pattern = SynthPattern::ring;
  std::uint32_t ranks = 0;
  std::uint32_t iterations = 1;
  std::uint64_t bytes = kSynthDefaultBytes;
  double compute_us = 0;
  std::int64_t compute_ticks = 0;
  std::uint32_t ranks_per_node = 1;
  std::uint32_t nodes = 1;                  ///< nodes holding ranks
  std::string placement = "block";          ///< block (rank / K); scheme: its rrn or rrp
  std::uint32_t ranks_per_node_spread = 1;  ///< scheme rrp: ranks per node as share spreads them
  std::vector<std::uint32_t> grid;          ///< halo: process grid, last dimension fastest

  // scheme: tasks placed as `commgauge share` places them (measure::plan_tasks).
  model::Scheme scheme;
  std::vector<std::uint32_t> sender_rank;               ///< per communication
  std::map<std::uint32_t, std::size_t> sender_of_rank;  ///< rank -> communication
  std::map<std::uint32_t, int> receiver_node_of_rank;   ///< receiver task rank -> its node
  std::map<int, std::uint32_t> receiver_rank;           ///< node -> receiver task rank
  std::map<int, std::vector<std::size_t>> into_node;    ///< communications into each node
  std::map<int, std::uint64_t> posted_bytes;            ///< largest message into each node

  nlohmann::json description;  ///< the "synthetic" object of headers and index
  std::vector<std::string> program;
  std::string header_tail;  ///< every header's JSON after its rank-specific keys

  /// Node of `rank` (its host is "node-<n>").
  std::uint32_t node_of(std::uint32_t rank) const;
};

/// Checks the options (InputError naming the option) and computes the plan.
SynthPlan plan_synthetic(const SynthOptions& options);

/// MPI_Dims_create's choice: `dimensions` factors of `ranks`, non-increasing, as close to each
/// other as possible.
std::vector<std::uint32_t> most_square_grid(std::uint32_t ranks, int dimensions);

/// The rank's header block text.
std::string synthetic_header_json(const SynthPlan& plan, std::uint32_t rank);
/// The container's index (hosts and placement written without building 2 x ranks JSON values).
std::string synthetic_index_json(const SynthPlan& plan);

/// Writes one rank's blocks (header, events) to `sink`; returns its event count. Memory and
/// time are O(1) and O(iterations x neighbours) per rank (the master: x workers).
std::uint64_t write_synthetic_rank(const SynthPlan& plan, std::uint32_t rank,
                                   trace::BlockSink& sink);

struct SynthResult {
  std::filesystem::path file;  ///< the container written
  std::uint32_t ranks = 0;
  std::uint32_t nodes = 0;
  std::uint64_t events = 0;
  std::uint64_t file_bytes = 0;
  double seconds = 0;
  nlohmann::json synthetic;  ///< the pattern and options, as in the headers
};

/// `output`: a directory (DIR/trace.cgtc; created; a non-empty one is refused without `force`,
/// and with it only trace files are removed) or a file name ending in .cgtc. `progress` is
/// called now and then with the ranks written so far.
SynthResult write_synthetic_trace(
    const SynthOptions& options, const std::filesystem::path& output, bool force,
    const std::function<void(std::uint32_t done, std::uint32_t total)>& progress = {});

}  // namespace commgauge::synth
