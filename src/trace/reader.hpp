#pragma once
// Streaming trace reader: a trace directory (index.json + rank files) or a container file.
// Each rank is read block by block, so memory grows with ranks, never with trace length.
// Malformed data raises TraceError naming the file and the byte offset.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "trace/format.hpp"

namespace commgauge::trace {

/// Malformed or unreadable trace data. The message starts with "file: offset N: ".
class TraceError : public InputError {
 public:
  using InputError::InputError;
};

/// Rank counts above this (4 Mi) are taken for damage; a million-rank synthetic trace fits.
inline constexpr std::uint64_t kMaxRanks = 1u << 22;

/// A byte range of a file holding blocks of one rank.
struct Extent {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

/// An open file shared by the rank readers of a container (one descriptor for all ranks).
class TraceFile {
 public:
  explicit TraceFile(const std::filesystem::path& path);
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  std::uint64_t size() const { return size_; }
  const std::string& name() const { return name_; }
  /// Reads exactly `n` bytes at `offset`, or returns how many could be read (end of file).
  /// Small reads that move forward through the file are served from a read-ahead window: the
  /// readers of a container's ranks, opened and advanced in rank order, then cost a system call
  /// per window instead of one per block.
  std::size_t read_at(std::uint64_t offset, unsigned char* out, std::size_t n) const;
  [[noreturn]] void fail(std::uint64_t offset, const std::string& message) const;

 private:
  static constexpr std::size_t kWindowBytes = 256 * 1024;
  std::size_t read_direct(std::uint64_t offset, unsigned char* out, std::size_t n) const;

  mutable std::mutex window_mutex_;
  mutable std::vector<unsigned char> window_;
  mutable std::uint64_t window_offset_ = 0;
  mutable std::uint64_t last_offset_ = 0;  ///< the read before
  mutable std::uint64_t last_end_ = 0;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string name_;  ///< as printed in errors
};

/// How a rank's data ended.
enum class RankEnd {
  reading,    ///< not yet at the end
  complete,   ///< the `end` record was read
  truncated,  ///< the data stopped without an `end` record (crash, kill, abort)
};

/// What a replay takes from a rank header.
struct HeaderEssentials {
  double ticks_per_second = 1e9;              ///< "clock": {"ticks_per_second"}
  std::int64_t overhead_ticks_per_event = 0;  ///< "tracer": {"overhead_ticks_per_event"}
};

/// How a reader takes its rank's header: the whole JSON document, or only its essentials
/// (validated the same way, with nlohmann's SAX interface: no document is built, which at a
/// million ranks is most of a replay's start-up).
enum class HeaderMode { document, essentials };

/// One rank's events, streamed.
class RankReader {
 public:
  /// `window_bytes` > 0 keeps at most about that many bytes of a block of events in memory
  /// (the rest is read from the file as the events are), for replays of very many ranks.
  RankReader(std::shared_ptr<const TraceFile> file, std::vector<Extent> extents, std::uint32_t rank,
             HeaderMode mode = HeaderMode::document, std::size_t window_bytes = 0);

  /// The rank's header block (JSON); read on construction (null with HeaderMode::essentials).
  const nlohmann::json& header() const { return header_; }
  const HeaderEssentials& essentials() const { return essentials_; }
  std::uint32_t rank() const { return rank_; }

  /// The next event, or false at the end of the rank's data (see end()).
  bool next(Event& e);
  /// Decodes the event next() returned last once more, so that a replay of many ranks need not
  /// keep a copy of each rank's current event.
  void reread(Event& e) const;
  RankEnd end() const { return end_; }
  /// Number of events returned so far (the last one returned is event_count() - 1).
  std::uint64_t event_count() const { return events_; }
  /// Where the last returned event's block starts, for messages.
  std::uint64_t block_offset() const { return block_offset_; }
  const std::string& file_name() const { return file_->name(); }

 private:
  bool load_block();
  /// Takes the block at position_, whose first `got` bytes are at `data`; its payload goes to
  /// `elsewhere` if given (the header), else to payload_.
  bool take_block(const unsigned char* data, std::size_t got,
                  std::vector<unsigned char>* elsewhere = nullptr);
  /// Reads the current block's payload from `from` into the window, at least `bytes` of it.
  void slide_window(std::size_t from, std::size_t bytes);
  std::uint64_t extent_end() const;
  /// What is wrong with the header of the block at position_, or nothing.
  std::optional<std::string> block_problem(const BlockHeader& h) const;
  bool at_zero_tail(std::uint64_t offset) const;

  // What each event reads first (a replay of many ranks reads them from memory, rank by rank).
  std::vector<unsigned char> payload_;  ///< the current block's payload, or a window of it
  std::size_t window_base_ = 0;         ///< where payload_ starts in the block's payload
  std::size_t block_payload_bytes_ = 0;
  std::size_t window_bytes_ = 0;  ///< 0: whole blocks
  std::size_t payload_pos_ = 0;   ///< in the block's payload
  std::int64_t previous_start_ = 0;
  std::size_t last_pos_ = 0;  ///< where the last event returned starts
  std::int64_t last_previous_start_ = 0;
  std::uint64_t events_ = 0;
  RankEnd end_ = RankEnd::reading;
  std::uint32_t next_sequence_ = 0;
  std::shared_ptr<const TraceFile> file_;
  std::vector<Extent> extents_;
  std::size_t extent_ = 0;
  std::uint64_t position_ = 0;  ///< next block's offset
  std::uint32_t rank_;
  nlohmann::json header_;
  HeaderEssentials essentials_;
  std::uint64_t block_offset_ = 0;
};

/// A whole trace: its index and a reader per rank.
class TraceReader {
 public:
  /// `path` is a trace directory or a container file. Throws TraceError.
  explicit TraceReader(const std::filesystem::path& path);

  std::uint32_t ranks() const { return ranks_; }
  /// index.json (or the container's index); rebuilt from the rank headers when missing.
  const nlohmann::json& index() const { return index_; }
  bool index_rebuilt() const { return index_rebuilt_; }
  bool is_container() const { return container_ != nullptr; }
  /// Ranks whose data is missing altogether (no file, no blocks).
  const std::vector<std::uint32_t>& missing_ranks() const { return missing_; }

  /// Bytes of the trace's files (rank files and index, or the container).
  std::uint64_t bytes_on_disk() const;

  /// Opens a reader for `rank` (per-rank files: one descriptor per open reader).
  RankReader open_rank(std::uint32_t rank, HeaderMode mode = HeaderMode::document,
                       std::size_t window_bytes = 0) const;

 private:
  void open_directory(const std::filesystem::path& dir);
  void open_container(const std::filesystem::path& file);
  void scan_container();
  void rebuild_index();
  RankReader open_rank_file(std::uint32_t rank, HeaderMode mode, std::size_t window_bytes) const;
  static nlohmann::json rank_summary(RankReader& reader);

  std::filesystem::path path_;
  std::uint32_t ranks_ = 0;
  nlohmann::json index_;
  bool index_rebuilt_ = false;
  std::shared_ptr<const TraceFile> container_;
  std::vector<std::vector<Extent>> extents_;  ///< container: per rank
  std::vector<std::uint32_t> missing_;
};

/// Maps a rank's clock ticks to nanoseconds on rank 0's clock, by linear interpolation between
/// the clock_sync records taken at Init and Finalize (docs/trace-format.md, "Time").
class ClockMap {
 public:
  struct Sync {
    std::int64_t tick = 0;
    std::int64_t local_ns = 0;
    std::int64_t offset_ns = 0;  ///< rank 0's clock minus this rank's, at `local_ns`
    std::int64_t round_trip_ns = 0;
    std::int64_t pairing_ns = 0;  ///< error bound of the (tick, local_ns) pair; 0 in old traces
  };
  ClockMap() = default;
  /// From the header's tick rate estimate and the sync records available (init, finalize).
  ClockMap(double ticks_per_second, const Sync* init, const Sync* finalize);
  static Sync parse_sync(const std::string& json_text);

  /// Rank 0's clock in nanoseconds at this rank's `tick`.
  double root_ns(std::int64_t tick) const;
  /// Nanoseconds for a duration of `ticks` on this rank's clock.
  double duration_ns(std::int64_t ticks) const { return static_cast<double>(ticks) * ns_per_tick_; }
  double ns_per_tick() const { return ns_per_tick_; }
  bool has_finalize() const { return has_finalize_; }
  /// Bound of root_ns's error between the syncs: the larger sync's (round trip / 2 + pairing);
  /// linear interpolation between two points never exceeds the larger of their errors. Where
  /// the offsets differ by less than the two errors together, the drift is not resolved: the
  /// better sync's offset is kept throughout, and the bound grows by the offsets' difference.
  double error_bound_ns() const { return error_bound_ns_; }

 private:
  double ns_per_tick_ = 1.0;
  Sync init_;
  double offset_ns_ = 0.0;     ///< rank 0's clock minus this rank's at init_.local_ns
  double offset_slope_ = 0.0;  ///< change of offset per local ns
  bool has_finalize_ = false;
  double error_bound_ns_ = 0.0;
};

/// The ClockMap of `rank`, from the trace index (which holds both syncs when the run finished)
/// or from the rank's header and first events.
ClockMap clock_map(const TraceReader& trace, const RankReader& rank);

/// The clock sync `rank` took at MPI_Init, as the trace index holds it (none in an index
/// rebuilt from the rank files, or a trace from before it was recorded). Its round_trip_ns is
/// the fastest of the tracer's ping-pongs between rank 0 and `rank` (0 for rank 0 itself).
std::optional<ClockMap::Sync> init_sync(const TraceReader& trace, std::uint32_t rank);

}  // namespace commgauge::trace
