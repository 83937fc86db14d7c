#include "trace/format.hpp"

#include <array>
#include <bit>
#include <cstring>
#include <string>

namespace commgauge::trace {

namespace {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the SSE4.2 crc32 instruction where
// the processor has it (every block is summed once by the tracer), else a table.
constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr auto kCrcTable = make_crc_table();

std::uint32_t crc32c_table(std::uint32_t c, const unsigned char* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    c = kCrcTable[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t c,
                                                             const unsigned char* data,
                                                             std::size_t n) {
  std::uint64_t c64 = c;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, data + i, 8);
    c64 = __builtin_ia32_crc32di(c64, word);
  }
  auto c32 = static_cast<std::uint32_t>(c64);
  for (; i < n; ++i)
    c32 = __builtin_ia32_crc32qi(c32, data[i]);
  return c32;
}
#endif

/// Bounds-checked reading of one payload.
[[noreturn, gnu::cold]] void malformed(std::size_t offset, const char* message) {
  throw FormatError(offset, message);
}

// Reads a payload; writes its position back when destroyed (also on an error, which names its
// own offset). The one-byte case of a varint, by far the most common, is tested first.
class Cursor {
 public:
  Cursor(std::span<const unsigned char> data, std::size_t& pos)
      : data_(data), pos_(pos), out_(pos) {}
  ~Cursor() { out_ = pos_; }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  std::uint64_t varint() {
    if (pos_ < data_.size() && data_[pos_] < 0x80) [[likely]]
      return data_[pos_++];
    return long_varint();
  }
  std::int64_t signed_varint() { return unzigzag(varint()); }
  std::int32_t int32() {
    const std::size_t start = pos_;
    const std::int64_t v = signed_varint();
    if (v < INT32_MIN || v > INT32_MAX) [[unlikely]]
      malformed(start, "32-bit value out of range");
    return static_cast<std::int32_t>(v);
  }
  std::uint32_t uint32() {
    const std::size_t start = pos_;
    const std::uint64_t v = varint();
    if (v > UINT32_MAX) [[unlikely]]
      malformed(start, "32-bit value out of range");
    return static_cast<std::uint32_t>(v);
  }
  /// A length that must fit in what is left (each element takes at least one byte).
  std::size_t length() {
    const std::size_t start = pos_;
    const std::uint64_t n = varint();
    if (n > data_.size() - pos_) malformed(start, "length exceeds the block");
    return static_cast<std::size_t>(n);
  }
  std::string text() {
    const std::size_t n = length();
    std::string s(reinterpret_cast<const char*>(data_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  std::size_t pos() const { return pos_; }

 private:
  std::uint64_t long_varint() {
    std::uint64_t v = 0;
    const std::size_t start = pos_;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) malformed(start, "event runs past the end of its block");
      const unsigned char b = data_[pos_++];
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    malformed(start, "varint longer than 10 bytes");
  }

  std::span<const unsigned char> data_;
  std::size_t pos_;
  std::size_t& out_;
};

/// a + b, or a FormatError where damaged data would overflow.
std::int64_t checked_add(std::int64_t a, std::int64_t b, std::size_t offset) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) throw FormatError(offset, "time or rank out of range");
  return sum;
}

void get_u64_list(Cursor& in, std::vector<std::uint64_t>& values) {
  values.resize(in.length());
  for (auto& v : values)
    v = in.varint();
}

}  // namespace

void put_u32(unsigned char* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::uint32_t get_u32(const unsigned char* in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<std::uint32_t>(in[i]) << (8 * i);
  return v;
}

std::uint32_t crc32c(const unsigned char* data, std::size_t n) {
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return crc32c_sse42(0xFFFFFFFFu, data, n) ^ 0xFFFFFFFFu;
#endif
  return crc32c_table(0xFFFFFFFFu, data, n) ^ 0xFFFFFFFFu;
}

void put_varint(std::vector<unsigned char>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<unsigned char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<unsigned char>(v));
}

namespace {

/// Writes through a raw pointer into space sized by max_encoded_size(): no capacity check per
/// byte (the tracer encodes every recorded call).
class RawWriter {
 public:
  explicit RawWriter(unsigned char* p) : p_(p) {}
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<unsigned char>(v | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<unsigned char>(v);
  }
  void signed_varint(std::int64_t v) { varint(zigzag(v)); }
  void list(const std::vector<std::uint64_t>& values) {
    varint(values.size());
    for (std::uint64_t v : values)
      varint(v);
  }
  void bytes(const std::string& text) {
    varint(text.size());
    std::memcpy(p_, text.data(), text.size());
    p_ += text.size();
  }
  unsigned char* position() const { return p_; }

 private:
  unsigned char* p_;
};

constexpr std::size_t kMaxVarint = 10;

}  // namespace

std::size_t max_encoded_size(const Event& e) {
  // kind, fields, function, two times, and every scalar field: one varint each at most (34 of
  // them now; the 32-bit ones take at most 5 bytes, so 30 x kMaxVarint still hold them all).
  std::size_t n = kMaxVarint * 30;
  n += e.completions.size() * 5 * kMaxVarint;
  n += (e.counts.size() + e.recv_counts.size() + e.requests.size() + e.members.size()) * kMaxVarint;
  n += e.text.size();
  return n;
}

std::size_t encode_event(const Event& e, std::int64_t previous_start, unsigned char* out) {
  RawWriter w(out);
  w.varint(static_cast<std::uint32_t>(e.kind));
  w.varint(e.fields);
  if (e.kind == RecordKind::function || e.kind == RecordKind::poll_run) w.varint(e.function);
  // Wrapping differences: the decoder rejects what overflows.
  w.varint(zigzag(static_cast<std::int64_t>(static_cast<std::uint64_t>(e.start_tick) -
                                            static_cast<std::uint64_t>(previous_start))));
  w.varint(zigzag(static_cast<std::int64_t>(static_cast<std::uint64_t>(e.end_tick) -
                                            static_cast<std::uint64_t>(e.start_tick))));
  const std::uint32_t f = e.fields;
  if (f & kPeer) w.signed_varint(e.peer);
  if (f & kTag) w.signed_varint(e.tag);
  if (f & kComm) w.varint(e.comm);
  if (f & kBytes) w.varint(e.bytes);
  if (f & kRoot) w.signed_varint(e.root);
  if (f & kRequest) w.varint(e.request);
  if (f & kCompletions) {
    w.varint(e.completions.size());
    for (const Completion& c : e.completions) {
      w.varint(c.request);
      w.signed_varint(c.index);
      w.signed_varint(c.source);
      w.signed_varint(c.tag);
      w.varint((c.bytes << 1) | (c.cancelled ? 1u : 0u));
    }
  }
  if (f & kCounts) w.list(e.counts);
  if (f & kFlags) w.varint(e.flags);
  if (f & kPoll) {
    w.varint(e.calls);
    w.signed_varint(e.in_mpi_ticks);
  }
  if (f & kMembers) {
    w.varint(e.members.size());
    std::int64_t previous = 0;
    for (std::int32_t m : e.members) {  // sorted lists code as small positive deltas
      w.signed_varint(m - previous);
      previous = m;
    }
    w.varint(e.remote_size);
  }
  if (f & kText) w.bytes(e.text);
  if (f & kCount) w.varint(e.count);
  if (f & kThread) {
    w.varint(e.thread);
    w.varint(e.sequence);
  }
  if (f & kCpu) w.signed_varint(e.cpu_ns);
  if (f & kRecvBytes) w.varint(e.recv_bytes);
  if (f & kRecvCounts) w.list(e.recv_counts);
  if (f & kNewComm) w.varint(e.new_comm);
  if (f & kLocal) {
    w.varint(e.local_calls);
    w.signed_varint(e.local_ticks);
  }
  if (f & kRequests) w.list(e.requests);
  if (f & kSite) {
    w.varint(e.site_module);
    w.varint(e.site_offset);
  }
  if (f & kFreshBytes) {
    w.varint(e.fresh_bytes);
    w.signed_varint(e.fresh_look_ticks);
  }
  if (f & kSendPageOffset) w.varint(e.send_page_offset_bytes);
  return static_cast<std::size_t>(w.position() - out);
}

void encode_event(const Event& e, std::int64_t previous_start, std::vector<unsigned char>& out) {
  const std::size_t old = out.size();
  out.resize(old + max_encoded_size(e));
  out.resize(old + encode_event(e, previous_start, out.data() + old));
}

void decode_event(std::span<const unsigned char> payload, std::size_t& pos,
                  std::int64_t previous_start, Event& e) {
  const std::size_t event_start = pos;
  Cursor in(payload, pos);
  const std::uint32_t kind = in.uint32();
  if (kind == 0 || kind > kLastRecordKind)
    throw FormatError(event_start, "unknown record kind " + std::to_string(kind));
  e.kind = static_cast<RecordKind>(kind);
  e.fields = in.uint32();
  if ((e.fields & ~kKnownFields) != 0)
    throw FormatError(event_start, "unknown field bits " + std::to_string(e.fields));
  e.function = 0;
  if (e.kind == RecordKind::function || e.kind == RecordKind::poll_run) e.function = in.uint32();
  e.start_tick = checked_add(previous_start, in.signed_varint(), event_start);
  e.end_tick = checked_add(e.start_tick, in.signed_varint(), event_start);
  // Every reader (trace-check, simulate, trace-export, the summary) decodes here: a negative
  // duration is refused once, alike for all (a rank's clock never runs backwards in one call).
  if (e.end_tick < e.start_tick)
    throw FormatError(event_start, "the event ends before it starts (a negative duration)");
  const std::uint32_t f = e.fields;
  e.peer = (f & kPeer) ? in.int32() : 0;
  e.tag = (f & kTag) ? in.int32() : 0;
  e.comm = (f & kComm) ? in.varint() : 0;
  e.bytes = (f & kBytes) ? in.varint() : 0;
  e.root = (f & kRoot) ? in.int32() : 0;
  e.request = (f & kRequest) ? in.varint() : 0;
  e.completions.clear();
  if (f & kCompletions) {
    e.completions.resize(in.length());
    for (Completion& c : e.completions) {
      c.request = in.varint();
      c.index = in.int32();
      c.source = in.int32();
      c.tag = in.int32();
      const std::uint64_t b = in.varint();
      c.bytes = b >> 1;
      c.cancelled = (b & 1) != 0;
    }
  }
  e.counts.clear();
  if (f & kCounts) get_u64_list(in, e.counts);
  e.flags = (f & kFlags) ? in.uint32() : 0;
  e.calls = 0;
  e.in_mpi_ticks = 0;
  if (f & kPoll) {
    e.calls = in.varint();
    e.in_mpi_ticks = in.signed_varint();
    // Timed within the run (section 8.3): a negative one or one longer than the run made the
    // summary's MPI time negative and the computation between events longer than the trace.
    if (e.in_mpi_ticks < 0 || e.in_mpi_ticks > e.end_tick - e.start_tick)
      throw FormatError(event_start, "a poll run's time inside MPI is outside its run");
  }
  e.members.clear();
  e.remote_size = 0;
  if (f & kMembers) {
    e.members.resize(in.length());
    std::int64_t previous = 0;
    for (std::int32_t& m : e.members) {
      const std::int64_t v = checked_add(previous, in.signed_varint(), in.pos());
      if (v < 0 || v > INT32_MAX) throw FormatError(in.pos(), "member rank out of range");
      m = static_cast<std::int32_t>(v);
      previous = v;
    }
    e.remote_size = in.uint32();
    if (e.remote_size > e.members.size())
      throw FormatError(in.pos(), "remote group larger than the member list");
  }
  e.text.clear();
  if (f & kText) e.text = in.text();
  e.count = (f & kCount) ? in.varint() : 0;
  e.thread = 0;
  e.sequence = 0;
  if (f & kThread) {
    e.thread = in.uint32();
    e.sequence = in.varint();
  }
  e.cpu_ns = (f & kCpu) ? in.signed_varint() : 0;
  e.recv_bytes = (f & kRecvBytes) ? in.varint() : 0;
  e.recv_counts.clear();
  if (f & kRecvCounts) get_u64_list(in, e.recv_counts);
  e.new_comm = (f & kNewComm) ? in.varint() : 0;
  e.local_calls = 0;
  e.local_ticks = 0;
  if (f & kLocal) {
    e.local_calls = in.uint32();
    e.local_ticks = in.signed_varint();
    if (e.local_ticks < 0) throw FormatError(event_start, "negative time of local calls");
  }
  e.requests.clear();
  if (f & kRequests) get_u64_list(in, e.requests);
  e.site_module = 0;
  e.site_offset = 0;
  if (f & kSite) {
    e.site_module = in.uint32();
    e.site_offset = in.varint();
  }
  e.fresh_bytes = 0;
  e.fresh_look_ticks = 0;
  if (f & kFreshBytes) {
    e.fresh_bytes = in.varint();
    e.fresh_look_ticks = in.signed_varint();
    if (e.fresh_look_ticks < 0) throw FormatError(event_start, "negative time of a fresh look");
  }
  e.send_page_offset_bytes = 0;
  if (f & kSendPageOffset) {
    e.send_page_offset_bytes = in.varint();
    if (e.send_page_offset_bytes >= kPageOffsetLimitBytes)
      throw FormatError(event_start, "a send's page offset past 1 GiB");
  }
}

void write_block_header(unsigned char* out, std::uint32_t rank, std::uint32_t sequence,
                        std::span<const unsigned char> payload) {
  put_u32(out, kBlockMagic);
  put_u32(out + 4, rank);
  put_u32(out + 8, sequence);
  put_u32(out + 12, static_cast<std::uint32_t>(payload.size()));
  put_u32(out + 16, crc32c(payload.data(), payload.size()));
}

BlockHeader read_block_header(const unsigned char* in) {
  return BlockHeader{get_u32(in), get_u32(in + 4), get_u32(in + 8), get_u32(in + 12),
                     get_u32(in + 16)};
}

}  // namespace commgauge::trace
