#pragma once
// The commgauge trace format, version 1 (specified in docs/trace-format.md).
//
// A trace is a directory: index.json plus one file per rank (rank-<r>.cgt), or the same
// blocks for all ranks in one container file (trace.cgtc). A rank's data is a sequence of
// self-delimiting blocks of about 1 KiB:
//
//   u32 magic "CGBK" | u32 rank | u32 sequence | u32 payload bytes | u32 CRC-32 of payload |
//   payload
//
// Block 0 of a rank is its header (JSON text: version, rank, host, clock...), so a rank file
// describes itself and an index can be rebuilt. Every other payload is a run of events, each
// decodable from the start of its block: times are delta-coded against the previous event of
// the same block (the first against 0). The last event of a complete rank is `end`; a rank
// without it is truncated.

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace commgauge::trace {

inline constexpr std::uint32_t kBlockMagic = 0x4b424743;  // "CGBK" read as little-endian u32

/// The little-endian u32 at `in` (the files' integers: magics, block header fields).
std::uint32_t get_u32(const unsigned char* in);
/// Writes `v` little-endian at `out` (the inverse of get_u32).
void put_u32(unsigned char* out, std::uint32_t v);
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::size_t kBlockHeaderBytes = 20;
inline constexpr std::size_t kBlockPayloadTarget = 1000;  ///< blocks stay around 1 KiB
/// A reader rejects larger payloads as corrupt (one event with 2^20 per-peer counts fits).
inline constexpr std::size_t kBlockPayloadLimit = 64u << 20;

/// What an event is. Function events carry the MPI function's id (trace/functions.hpp); the
/// rest are the tracer's own records.
enum class RecordKind : std::uint32_t {
  function = 1,     ///< one MPI call
  poll_run = 2,     ///< a run of failed Test*/Iprobe calls folded into one record
  comm_create = 3,  ///< a new communicator with its world ranks
  clock_sync = 4,   ///< clock reading and offset to rank 0 (at Init and at Finalize)
  end = 5,          ///< the rank finished normally (MPI_Finalize); text: JSON totals
  marker = 6,       ///< free text (errors the tracer met, e.g. a full disk)
  /// An object (program or library) that call sites lie in, written before the first event
  /// whose site is in it; text: JSON {"module": n, "path", "base"}.
  module = 7,
};
inline constexpr std::uint32_t kLastRecordKind = 7;

/// One request completed by a completing call, or the status of a blocking receive/probe.
struct Completion {
  std::uint64_t request = 0;  ///< the tracer's request id (0: none, MPI_REQUEST_NULL, inactive)
  std::int32_t index = -1;    ///< position in the call's array (Waitany, Waitsome...), else -1
  std::int32_t source = -1;   ///< status source as a world rank; -1 if the request is a send
  std::int32_t tag = -1;
  std::uint64_t bytes = 0;  ///< bytes received (receives), 0 for sends
  bool cancelled = false;

  bool operator==(const Completion&) const = default;
};

/// Field presence bits: the encoding writes only what is present, in this bit order.
enum Field : std::uint32_t {
  kPeer = 1u << 0,
  kTag = 1u << 1,
  kComm = 1u << 2,
  kBytes = 1u << 3,
  kRoot = 1u << 4,
  kRequest = 1u << 5,
  kCompletions = 1u << 6,
  kCounts = 1u << 7,
  kFlags = 1u << 8,
  kPoll = 1u << 9,
  kMembers = 1u << 10,
  kText = 1u << 11,
  kCount = 1u << 12,
  kThread = 1u << 13,
  kCpu = 1u << 14,
  kRecvBytes = 1u << 15,
  kRecvCounts = 1u << 16,
  kNewComm = 1u << 17,
  kLocal = 1u << 18,
  kRequests = 1u << 19,
  kSite = 1u << 20,
  kFreshBytes = 1u << 21,
  kSendPageOffset = 1u << 22,
};
inline constexpr std::uint32_t kKnownFields = (1u << 23) - 1;
/// A send_page_offset_bytes at or past this is corrupt (page sizes reach 1 GiB at most).
inline constexpr std::uint64_t kPageOffsetLimitBytes = std::uint64_t{1} << 30;

/// Event flags (kFlags).
enum EventFlag : std::uint32_t {
  kWildcardSource = 1u << 0,  ///< MPI_ANY_SOURCE was asked for
  kWildcardTag = 1u << 1,     ///< MPI_ANY_TAG was asked for
  kCommutative = 1u << 2,     ///< the reduction's operation is commutative
  kPersistent = 1u << 3,      ///< the request created is persistent
  kSuccess = 1u << 4,         ///< a Test*/Iprobe call that succeeded
  kInPlace = 1u << 5,         ///< MPI_IN_PLACE was passed
  kIntercomm = 1u << 6,       ///< the communicator is an intercommunicator
  kFortran = 1u << 7,         ///< called through the Fortran binding
  kCommNull = 1u << 8,        ///< a creation call that returned MPI_COMM_NULL
  kError = 1u << 9,           ///< the MPI call returned an error code
};

/// Peer and root values that are not ranks.
inline constexpr std::int32_t kAnySource = -1;
inline constexpr std::int32_t kProcNull = -2;
inline constexpr std::int32_t kRootSelf = -3;  ///< MPI_ROOT (intercommunicator collectives)

struct Event {
  RecordKind kind = RecordKind::function;
  std::uint32_t function = 0;  ///< id in functions.hpp (function, poll_run)
  /// Rank clock ticks (header "clock"); the rank's clock_sync records map them to seconds.
  std::int64_t start_tick = 0;
  std::int64_t end_tick = 0;
  std::uint32_t fields = 0;
  std::int32_t peer = 0;      ///< world rank, kAnySource or kProcNull (as asked for)
  std::int32_t tag = 0;       ///< as asked for (MPI_ANY_TAG is -1)
  std::uint64_t comm = 0;     ///< communicator id (0 is MPI_COMM_WORLD)
  std::uint64_t bytes = 0;    ///< count x type size (sends, collectives: what this rank sends)
  std::int32_t root = 0;      ///< world rank, or kRootSelf / kProcNull
  std::uint64_t request = 0;  ///< request created
  std::vector<Completion> completions;
  std::vector<std::uint64_t> counts;       ///< per-peer bytes sent (v- and w-collectives)
  std::uint64_t recv_bytes = 0;            ///< collectives: what this rank receives
  std::vector<std::uint64_t> recv_counts;  ///< per-peer bytes received
  std::vector<std::uint64_t> requests;     ///< requests passed in (Startall, poll runs)
  std::uint32_t flags = 0;
  std::uint64_t calls = 0;            ///< poll run: number of calls
  std::int64_t in_mpi_ticks = 0;      ///< poll run: estimated ticks inside MPI
  std::vector<std::int32_t> members;  ///< comm_create: world ranks (intercomm: local, remote)
  std::uint32_t remote_size = 0;      ///< comm_create: size of the remote group (intercomm)
  std::string text;                   ///< marker text; clock_sync and end: JSON
  std::uint64_t count = 0;            ///< element count as passed
  std::uint32_t thread = 0;           ///< thread number (0: the thread that called Init)
  std::uint64_t sequence = 0;         ///< per-rank event number across threads
  std::int64_t cpu_ns = 0;            ///< thread CPU time at the end of the event
  std::uint64_t new_comm = 0;         ///< communicator id created by the call
  std::uint32_t local_calls = 0;      ///< local MPI calls since the previous event
  std::int64_t local_ticks = 0;       ///< ... and the ticks spent in them
  /// Call site: the call instruction's address as (module, offset). `site_module` is the number
  /// a `module` record of the rank gave the object (from 1), and the offset an address in that
  /// object's file (what addr2line takes); module 0: an absolute address outside every object.
  std::uint32_t site_module = 0;
  std::uint64_t site_offset = 0;
  /// A receive's buffer: bytes of it in pages the process had never touched (not resident) when
  /// the call began, where the tracer looked (buffers of at least the header's
  /// fresh_bytes_min_bytes); the receive that first writes them pays their page faults.
  std::uint64_t fresh_bytes = 0;
  /// ... and the rank clock ticks the tracer spent looking (before the call: kept out of the
  /// computation, as local calls' time is).
  std::int64_t fresh_look_ticks = 0;
  /// A send (Send, Isend, Sendrecv, their modes, Send_init...): where its buffer's first byte
  /// lies in its page, in bytes (the header's page_bytes). Over a single copy a transfer costs
  /// per page of the sender's buffer it spans (model::LinkRange::billed_bytes).
  std::uint64_t send_page_offset_bytes = 0;

  bool has(Field f) const { return (fields & f) != 0; }
  bool flag(EventFlag f) const { return (flags & f) != 0; }
  void set(Field f) { fields |= f; }
  bool operator==(const Event&) const = default;
};

// ---- primitive encodings ----

/// CRC-32C (Castagnoli), as in iSCSI and ext4: check value crc32c("123456789") = 0xE3069283.
std::uint32_t crc32c(const unsigned char* data, std::size_t n);

void put_varint(std::vector<unsigned char>& out, std::uint64_t v);
inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

/// Appends one event; `previous_start` is the start of the previous event of this block
/// (0 for the first).
void encode_event(const Event& e, std::int64_t previous_start, std::vector<unsigned char>& out);
/// The same into `out`, which must hold max_encoded_size(e) bytes; returns the bytes written.
std::size_t encode_event(const Event& e, std::int64_t previous_start, unsigned char* out);
std::size_t max_encoded_size(const Event& e);

/// Decodes one event at `pos` (advanced); throws FormatError with the offset in the payload
/// on malformed data. Reuses `e`'s vectors.
void decode_event(std::span<const unsigned char> payload, std::size_t& pos,
                  std::int64_t previous_start, Event& e);

/// Malformed trace data; `offset` is relative to what was being decoded.
class FormatError : public std::runtime_error {
 public:
  FormatError(std::size_t offset, const std::string& message)
      : std::runtime_error(message), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

// ---- blocks ----

struct BlockHeader {
  std::uint32_t magic = kBlockMagic;
  std::uint32_t rank = 0;
  std::uint32_t sequence = 0;
  std::uint32_t payload_bytes = 0;
  std::uint32_t crc = 0;
};

/// Writes the 20-byte header (little-endian) for `payload` into `out`.
void write_block_header(unsigned char* out, std::uint32_t rank, std::uint32_t sequence,
                        std::span<const unsigned char> payload);
BlockHeader read_block_header(const unsigned char* in);

}  // namespace commgauge::trace
