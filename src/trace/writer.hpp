#pragma once
// Writing trace blocks: an event encoder that cuts blocks of about 1 KiB, and the two places
// blocks go: a rank file written through a file-backed shared mapping (the tracer: what was
// written survives SIGKILL), and a container file holding all ranks (synthetic traces).

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace/format.hpp"

namespace commgauge::trace {

/// The index.json fields of a trace written whole (synth, an OTF2 import), not by the tracer:
/// format, version, ranks, finished and complete, `mpi` naming `library` with nothing modeled,
/// the clock, and the tracer entry with `commgauge_version`; callers add their own fields.
nlohmann::json written_index(std::uint32_t ranks, const std::string& library,
                             const std::string& clock_source, double resolution_ns,
                             const std::string& commgauge_version);

/// Where finished blocks go.
class BlockSink {
 public:
  virtual ~BlockSink() = default;
  /// `block` is header + payload of one rank's block.
  virtual void write_block(std::uint32_t rank, std::span<const unsigned char> block) = 0;
};

/// Encodes one rank's events into blocks. Memory is one block: the payload buffer is reused.
class BlockEncoder {
 public:
  BlockEncoder(std::uint32_t rank, BlockSink& sink);

  /// Writes block 0: the rank's header (a JSON text). Must come first.
  void write_header(const std::string& json_text);
  void append(const Event& e);
  /// Writes the block being filled, if it holds anything.
  void flush();
  /// flush() for a signal handler: does nothing (returns false) if it would allocate memory.
  bool flush_without_allocating();

  std::uint32_t rank() const { return rank_; }
  std::uint64_t events() const { return events_; }
  std::uint32_t blocks() const { return sequence_; }

 private:
  void emit(std::span<const unsigned char> payload);

  std::uint32_t rank_;
  BlockSink& sink_;
  std::uint32_t sequence_ = 0;
  std::uint64_t events_ = 0;
  std::int64_t previous_start_ = 0;
  std::vector<unsigned char> payload_;  ///< sized as capacity; used_ bytes hold events
  std::size_t used_ = 0;
  std::vector<unsigned char> block_;
};

/// A rank file written through a shared mapping of a fixed window (memory does not grow with
/// the trace). Space is reserved with fallocate before it is written, so a full disk is an
/// error here and never a SIGBUS later. After a crash the file holds whole blocks followed by
/// zeros.
class MappedRankFile : public BlockSink {
 public:
  static constexpr std::size_t kWindowBytes = 4u << 20;
  static constexpr std::size_t kReserveBytes = 256u << 10;

  /// Opens (creates, truncates) `path`. Throws std::system_error naming the path.
  /// Never follows a symlink at `path`; `exclusive`: refuses a file that exists already (the
  /// tracer never overwrites or mixes into an earlier trace).
  explicit MappedRankFile(const std::filesystem::path& path, bool exclusive = false);
  ~MappedRankFile() override;
  MappedRankFile(const MappedRankFile&) = delete;
  MappedRankFile& operator=(const MappedRankFile&) = delete;

  void write_block(std::uint32_t rank, std::span<const unsigned char> block) override;
  /// Unmaps, cuts the file to its written length, closes. Idempotent.
  void close();
  std::uint64_t bytes_written() const { return end_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void map_window(std::uint64_t offset);
  void reserve(std::uint64_t bytes);
  void unmap();

  std::filesystem::path path_;
  int fd_ = -1;
  unsigned char* window_ = nullptr;
  std::uint64_t window_offset_ = 0;
  std::uint64_t reserved_ = 0;  ///< bytes of the file allocated so far
  std::uint64_t end_ = 0;       ///< bytes written
};

/// One file holding the blocks of every rank, for traces with more ranks than a process may
/// open files. Layout (docs/trace-format.md): file header, blocks, directory block, index
/// block, footer.
class ContainerWriter : public BlockSink {
 public:
  explicit ContainerWriter(const std::filesystem::path& path, std::uint32_t ranks);
  ~ContainerWriter() override;
  ContainerWriter(const ContainerWriter&) = delete;
  ContainerWriter& operator=(const ContainerWriter&) = delete;

  void write_block(std::uint32_t rank, std::span<const unsigned char> block) override;
  /// Writes the directory, the index (JSON text) and the footer, and closes.
  void finish(const std::string& index_json);

 private:
  void write_raw(std::span<const unsigned char> bytes);
  void flush_buffer();

  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  struct Extent {
    std::uint64_t offset;
    std::uint64_t bytes;
  };
  std::vector<std::vector<Extent>> extents_;  ///< per rank: runs of consecutive blocks
  std::vector<unsigned char> buffer_;         ///< write-behind buffer (fewer system calls)
  std::uint64_t buffer_offset_ = 0;
};

inline constexpr std::uint32_t kContainerMagic = 0x43544743;  // "CGTC"
inline constexpr std::uint32_t kFooterMagic = 0x46544743;     // "CGTF"
inline constexpr std::uint32_t kContainerRank = 0xFFFFFFFFu;  ///< rank of directory/index blocks
inline constexpr std::size_t kContainerHeaderBytes = 8;
inline constexpr std::size_t kFooterBytes = 16;

/// "rank-<r>.cgt"
std::string rank_file_name(std::uint32_t rank);

}  // namespace commgauge::trace
