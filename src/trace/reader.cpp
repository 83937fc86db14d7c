#include "trace/reader.hpp"
#include "trace/json_fields.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <simdjson.h>

#include "trace/writer.hpp"

namespace commgauge::trace {

namespace {

void check_version(const TraceFile& file, std::uint64_t offset,
                   std::optional<std::uint64_t> version) {
  if (!version) file.fail(offset, "the rank header has no version");
  if (*version != kVersion)
    file.fail(offset, "trace format version " + std::to_string(*version) +
                          " is not supported (this build reads version " +
                          std::to_string(kVersion) + ")");
}

// The tracer's cost per event is subtracted from every computation: a negative one added
// computation that never ran (0.29 s in a 1.3 ms trace).
void check_overhead(const TraceFile& file, std::uint64_t offset, const HeaderEssentials& e) {
  if (e.overhead_ticks_per_event < 0)
    file.fail(offset, "tracer.overhead_ticks_per_event is negative");
}

[[noreturn]] void fail_rank(const TraceFile& file, std::uint64_t offset, const std::string& found,
                            std::uint32_t rank) {
  file.fail(offset,
            "header of rank " + found + " where rank " + std::to_string(rank) + " was expected");
}

nlohmann::json parse_header(const TraceFile& file, std::uint64_t offset,
                            const std::vector<unsigned char>& payload, std::uint32_t rank,
                            HeaderEssentials& essentials) {
  nlohmann::json header = nlohmann::json::parse(payload.begin(), payload.end(), nullptr, false);
  if (header.is_discarded() || !header.is_object())
    file.fail(offset, "the rank header block is not a JSON object");
  const bool has_version = header.contains("version") && header["version"].is_number_unsigned();
  check_version(file, offset,
                has_version ? std::optional(header["version"].get<std::uint64_t>()) : std::nullopt);
  if (header.contains("rank") && header["rank"] != rank)
    fail_rank(file, offset, header["rank"].dump(), rank);
  essentials.ticks_per_second =
      json_field(json_object(header, "clock"), "ticks_per_second", essentials.ticks_per_second);
  essentials.overhead_ticks_per_event =
      json_field(json_object(header, "tracer"), "overhead_ticks_per_event", std::int64_t{0});
  check_overhead(file, offset, essentials);
  return header;
}

/// The header's essentials, parsed with simdjson (the whole document is validated, at several
/// GB/s: a replay reads a header per rank, and nlohmann's parser made most of a million-rank
/// start-up). The same checks and fallbacks as parse_header; of duplicated keys the last counts,
/// as there.
HeaderEssentials read_essentials(const TraceFile& file, std::uint64_t offset,
                                 const std::vector<unsigned char>& payload, std::uint32_t rank) {
  thread_local simdjson::dom::parser parser;
  thread_local std::vector<char> padded;
  padded.resize(payload.size() + simdjson::SIMDJSON_PADDING);
  std::copy(payload.begin(), payload.end(), padded.begin());
  simdjson::dom::object header;
  if (parser.parse(padded.data(), payload.size(), false).get(header) != simdjson::SUCCESS)
    file.fail(offset, "the rank header block is not a JSON object");
  using Type = simdjson::dom::element_type;
  auto is_number = [](simdjson::dom::element v) {
    return v.type() == Type::INT64 || v.type() == Type::UINT64 || v.type() == Type::DOUBLE;
  };
  auto as_double = [](simdjson::dom::element v) {
    return v.type() == Type::DOUBLE  ? v.get_double().value_unsafe()
           : v.type() == Type::INT64 ? static_cast<double>(v.get_int64().value_unsafe())
                                     : static_cast<double>(v.get_uint64().value_unsafe());
  };
  auto as_int64 = [](simdjson::dom::element v) {
    return v.type() == Type::DOUBLE  ? static_cast<std::int64_t>(v.get_double().value_unsafe())
           : v.type() == Type::INT64 ? v.get_int64().value_unsafe()
                                     : static_cast<std::int64_t>(v.get_uint64().value_unsafe());
  };
  auto last = [](simdjson::dom::object object, std::string_view key) {
    std::optional<simdjson::dom::element> found;
    for (const auto field : object)
      if (field.key == key) found = field.value;
    return found;
  };
  HeaderEssentials essentials;
  std::optional<std::uint64_t> version;
  if (const auto v = last(header, "version")) {
    if (v->type() == Type::UINT64) version = v->get_uint64().value_unsafe();
    if (v->type() == Type::INT64 && v->get_int64().value_unsafe() >= 0)
      version = static_cast<std::uint64_t>(v->get_int64().value_unsafe());
  }
  check_version(file, offset, version);
  if (const auto v = last(header, "rank"); v && !(is_number(*v) && as_double(*v) == rank))
    fail_rank(file, offset, simdjson::minify(*v), rank);
  if (const auto clock = last(header, "clock"); clock && clock->is_object())
    if (const auto v = last(clock->get_object().value_unsafe(), "ticks_per_second");
        v && is_number(*v))
      essentials.ticks_per_second = as_double(*v);
  if (const auto tracer = last(header, "tracer"); tracer && tracer->is_object())
    if (const auto v = last(tracer->get_object().value_unsafe(), "overhead_ticks_per_event");
        v && is_number(*v))
      essentials.overhead_ticks_per_event = as_int64(*v);
  check_overhead(file, offset, essentials);
  return essentials;
}

// index.json's "placement" (one host number per rank, into "hosts" where the index lists them,
// else below the rank count), checked once where every reader opens a trace: trace-check, the
// replay and the exporters then agree on it (the replay had placed 2 ranks on 6 nodes from
// [5, 0] while trace-export refused it).
void check_placement(const nlohmann::json& index, std::uint32_t ranks, const std::string& where) {
  if (!index.contains("placement")) return;
  const auto& p = index["placement"];
  if (!p.is_array() || p.size() != ranks) {
    throw TraceError(where, fmt::format("/placement: expected an array of {} host numbers", ranks));
  }
  const std::uint64_t hosts = index.contains("hosts") && index["hosts"].is_array()
                                  ? index["hosts"].size()
                                  : std::uint64_t{ranks};
  if (hosts == 0)
    throw TraceError(where, "/hosts: a placement needs at least one host, the list is empty");
  for (std::uint32_t r = 0; r < ranks; ++r) {
    if (!p[r].is_number_unsigned() || p[r].get<std::uint64_t>() >= hosts) {
      throw TraceError(where, fmt::format("/placement/{}: expected a host number 0 to {}, got {}",
                                          r, hosts == 0 ? 0 : hosts - 1, p[r].dump()));
    }
  }
}

}  // namespace

// ---- TraceFile ----

TraceFile::TraceFile(const std::filesystem::path& path) : name_(path.string()) {
  // O_NONBLOCK: a FIFO named like a trace file would wait for a writer forever.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw TraceError(name_, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int error = errno;
    ::close(fd_);
    throw TraceError(name_, std::string("cannot stat: ") + std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw TraceError(name_, "not a regular file (a FIFO, device or socket cannot hold a trace)");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

TraceFile::~TraceFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t TraceFile::read_at(std::uint64_t offset, unsigned char* out, std::size_t n) const {
  // No file reaches past off_t: a read there gets nothing, as one past the end (found by the
  // fuzzer: a container's offset of 2^64 - 1 wrapped offset + n and read before the window).
  constexpr auto kLargest = static_cast<std::uint64_t>(std::numeric_limits<off_t>::max());
  if (n > kLargest || offset > kLargest - n) return 0;
  if (n > kWindowBytes / 4) return read_direct(offset, out, n);
  std::lock_guard lock(window_mutex_);
  const std::uint64_t previous_offset = last_offset_, previous_end = last_end_;
  last_offset_ = offset;
  last_end_ = offset + n;
  if (offset < window_offset_ || offset + n > window_offset_ + window_.size()) {
    // A read a little ahead of the one before refills the window; any other goes to the file
    // alone (random reads must not cost a window each).
    if (offset < previous_offset || offset > previous_end + kWindowBytes)
      return read_direct(offset, out, n);
    window_.resize(kWindowBytes);
    window_.resize(read_direct(offset, window_.data(), kWindowBytes));
    window_offset_ = offset;
  }
  const std::size_t have = static_cast<std::size_t>(
      std::min<std::uint64_t>(n, window_offset_ + window_.size() - offset));
  std::copy_n(window_.data() + (offset - window_offset_), have, out);
  return have;
}

std::size_t TraceFile::read_direct(std::uint64_t offset, unsigned char* out, std::size_t n) const {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t k = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) fail(offset + done, std::string("read error: ") + std::strerror(errno));
    if (k == 0) break;
    done += static_cast<std::size_t>(k);
  }
  return done;
}

void TraceFile::fail(std::uint64_t offset, const std::string& message) const {
  throw TraceError(name_ + ": offset " + std::to_string(offset) + ": " + message);
}

// ---- RankReader ----

RankReader::RankReader(std::shared_ptr<const TraceFile> file, std::vector<Extent> extents,
                       std::uint32_t rank, HeaderMode mode, std::size_t window_bytes)
    : file_(std::move(file)), extents_(std::move(extents)), rank_(rank) {
  if (!extents_.empty()) position_ = extents_.front().offset;
  const std::uint64_t first = position_;
  // One read for the header and, usually, the first block of events after it: a replay opens
  // every rank at its start.
  constexpr std::size_t kFirstRead = 4096;
  thread_local std::vector<unsigned char> ahead(kFirstRead);
  const std::size_t got = extents_.empty()
                              ? 0
                              : file_->read_at(position_, ahead.data(),
                                               static_cast<std::size_t>(std::min<std::uint64_t>(
                                                   kFirstRead, extents_.front().bytes)));
  thread_local std::vector<unsigned char> header_payload;
  if (!take_block(ahead.data(), got, &header_payload))
    file_->fail(first, "no header block for rank " + std::to_string(rank));
  if (mode == HeaderMode::document)
    header_ = parse_header(*file_, first, header_payload, rank, essentials_);
  else
    essentials_ = read_essentials(*file_, first, header_payload, rank);
  const std::size_t used = static_cast<std::size_t>(position_ - first);
  payload_pos_ = 0;
  block_payload_bytes_ = 0;
  window_bytes_ = window_bytes;  // the header is always read whole
  // Only a sound block is taken early; anything else is reported where it is read.
  if (got < used + kBlockHeaderBytes || position_ >= extent_end()) return;
  const unsigned char* next = ahead.data() + used;
  const BlockHeader h = read_block_header(next);
  if (!block_problem(h) && h.payload_bytes <= got - used - kBlockHeaderBytes &&
      crc32c(next + kBlockHeaderBytes, h.payload_bytes) == h.crc)
    take_block(next, got - used);
}

std::uint64_t RankReader::extent_end() const {
  return extent_ < extents_.size() ? extents_[extent_].offset + extents_[extent_].bytes : 0;
}

bool RankReader::at_zero_tail(std::uint64_t offset) const {
  // A rank file written through the mapping ends with zeros where the writer stopped.
  unsigned char buffer[4096];
  const std::uint64_t limit =
      extents_.empty() ? 0 : extents_[extent_].offset + extents_[extent_].bytes;
  while (offset < limit) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buffer, limit - offset));
    const std::size_t got = file_->read_at(offset, buffer, want);
    if (std::any_of(buffer, buffer + got, [](unsigned char c) { return c != 0; })) return false;
    if (got < want) return true;
    offset += got;
  }
  return true;
}

bool RankReader::load_block() {
  while (extent_ < extents_.size() && position_ >= extent_end()) {
    if (++extent_ < extents_.size()) position_ = extents_[extent_].offset;
  }
  if (extent_ >= extents_.size()) return false;
  // One read for the header and, usually, the whole payload (blocks stay around 1 KiB): a
  // replay of many ranks reads a block per rank at a time, and a system call per block counts.
  // The read goes to a scratch buffer shared by the thread's readers, and each rank keeps only
  // its payload, at its size.
  constexpr std::size_t kReadAhead = kBlockHeaderBytes + kBlockPayloadTarget + 256;
  thread_local std::vector<unsigned char> scratch(kReadAhead);
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(kReadAhead, extent_end() - position_));
  return take_block(scratch.data(), file_->read_at(position_, scratch.data(), want));
}

std::optional<std::string> RankReader::block_problem(const BlockHeader& h) const {
  if (h.magic != kBlockMagic) return "no block here (bad magic)";
  if (h.rank != rank_)
    return "block of rank " + std::to_string(h.rank) + " in the data of rank " +
           std::to_string(rank_);
  if (h.sequence != next_sequence_)
    return "block " + std::to_string(h.sequence) + " where block " +
           std::to_string(next_sequence_) + " was expected";
  if (h.payload_bytes > kBlockPayloadLimit ||
      position_ + kBlockHeaderBytes + h.payload_bytes > extent_end())
    return "block of " + std::to_string(h.payload_bytes) + " bytes runs past the end of the data";
  return std::nullopt;
}

bool RankReader::take_block(const unsigned char* data, std::size_t got,
                            std::vector<unsigned char>* elsewhere) {
  const std::size_t header_got = std::min(got, kBlockHeaderBytes);
  const bool zero = std::all_of(data, data + header_got, [](unsigned char c) { return c == 0; });
  if (zero && at_zero_tail(position_)) {
    extent_ = extents_.size();  // the writer stopped here
    return false;
  }
  if (got < kBlockHeaderBytes) file_->fail(position_, "file ends inside a block header");
  const BlockHeader h = read_block_header(data);
  if (const auto problem = block_problem(h)) file_->fail(position_, *problem);
  // The whole payload, for its checksum; with a window, only the window's part is kept.
  const bool windowed = window_bytes_ != 0 && h.payload_bytes > window_bytes_;
  thread_local std::vector<unsigned char> whole_block;
  std::vector<unsigned char>& whole = elsewhere != nullptr ? *elsewhere
                                      : windowed           ? whole_block
                                                           : payload_;
  const std::size_t have = std::min<std::size_t>(got - kBlockHeaderBytes, h.payload_bytes);
  whole.resize(h.payload_bytes);
  std::copy_n(data + kBlockHeaderBytes, have, whole.data());
  if (have < h.payload_bytes) {
    const std::size_t rest = h.payload_bytes - have;
    if (file_->read_at(position_ + kBlockHeaderBytes + have, whole.data() + have, rest) != rest)
      file_->fail(position_, "file ends inside a block");
  }
  if (crc32c(whole.data(), whole.size()) != h.crc)
    file_->fail(position_, "block checksum mismatch (corrupt data)");
  if (windowed && elsewhere == nullptr)
    payload_.assign(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(window_bytes_));
  window_base_ = 0;
  block_payload_bytes_ = h.payload_bytes;
  block_offset_ = position_;
  position_ += kBlockHeaderBytes + h.payload_bytes;
  ++next_sequence_;
  payload_pos_ = 0;
  previous_start_ = 0;
  return true;
}

void RankReader::slide_window(std::size_t from, std::size_t bytes) {
  const std::size_t n = std::min(std::max(bytes, window_bytes_), block_payload_bytes_ - from);
  payload_.resize(n);
  if (file_->read_at(block_offset_ + kBlockHeaderBytes + from, payload_.data(), n) != n)
    file_->fail(block_offset_, "file ends inside a block");
  window_base_ = from;
}

bool RankReader::next(Event& e) {
  if (end_ != RankEnd::reading) return false;
  while (payload_pos_ >= block_payload_bytes_) {
    if (!load_block()) {
      end_ = RankEnd::truncated;
      return false;
    }
  }
  // With a window, most events are decoded from it; one running past it is decoded again
  // from a wider window.
  constexpr std::size_t kAhead = 64;
  const bool window_short = window_base_ + payload_.size() < block_payload_bytes_;
  if (window_short && payload_pos_ + kAhead > window_base_ + payload_.size())
    slide_window(payload_pos_, kAhead);
  last_pos_ = payload_pos_;
  last_previous_start_ = previous_start_;
  for (;;) {
    std::size_t pos = payload_pos_ - window_base_;
    try {
      decode_event(payload_, pos, previous_start_, e);
      payload_pos_ = window_base_ + pos;
      break;
    } catch (const FormatError& error) {
      if (window_base_ + payload_.size() < block_payload_bytes_) {
        slide_window(payload_pos_, 2 * payload_.size());
        continue;
      }
      file_->fail(block_offset_ + kBlockHeaderBytes + window_base_ + error.offset(),
                  std::string("event ") + std::to_string(events_) + " of rank " +
                      std::to_string(rank_) + ": " + error.what());
    }
  }
  previous_start_ = e.start_tick;
  ++events_;
  if (e.kind == RecordKind::end) end_ = RankEnd::complete;
  return true;
}

void RankReader::reread(Event& e) const {
  std::size_t pos = last_pos_ - window_base_;            // the window still holds it
  decode_event(payload_, pos, last_previous_start_, e);  // decoded once already: sound
}

// ---- TraceReader ----

TraceReader::TraceReader(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const auto container = path / "trace.cgtc";
    if (std::filesystem::exists(container, ec))
      open_container(container);
    else
      open_directory(path);
  } else if (std::filesystem::exists(path, ec)) {
    open_container(path);
  } else {
    throw TraceError(path.string(), "no such trace (expected a trace directory or container file)");
  }
}

void TraceReader::open_directory(const std::filesystem::path& dir) {
  const auto index_path = dir / "index.json";
  std::error_code ec;
  if (std::filesystem::exists(index_path, ec)) {
    TraceFile file(index_path);
    std::string text(file.size(), '\0');
    file.read_at(0, reinterpret_cast<unsigned char*>(text.data()), text.size());
    index_ = nlohmann::json::parse(text, nullptr, false);
    if (index_.is_discarded() || !index_.is_object())
      throw TraceError(index_path.string(), "not a JSON object");
    const auto version = json_field(index_, "version", 0u);
    if (version != kVersion)
      throw TraceError(index_path.string(), "trace format version " + std::to_string(version) +
                                                " is not supported (this build reads version " +
                                                std::to_string(kVersion) + ")");
    if (!index_.contains("ranks") || !index_["ranks"].is_number_unsigned() ||
        index_["ranks"].get<std::uint64_t>() > kMaxRanks ||
        index_["ranks"].get<std::uint64_t>() == 0)
      throw TraceError(index_path.string(), "no plausible \"ranks\" count");
    ranks_ = index_["ranks"].get<std::uint32_t>();
    check_placement(index_, ranks_, index_path.string());
  } else {
    rebuild_index();
  }
  for (std::uint32_t r = 0; r < ranks_; ++r)
    if (!std::filesystem::exists(dir / rank_file_name(r), ec)) missing_.push_back(r);
}

void TraceReader::rebuild_index() {
  // The index was never written (the run did not reach MPI_Finalize): the rank headers say
  // what it would have held.
  static const std::regex name_pattern(R"(rank-([0-9]{1,8})\.cgt)");
  std::uint32_t highest = 0;
  bool any = false;
  std::uint32_t world = 0;
  std::vector<std::pair<std::uint32_t, nlohmann::json>> infos;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, name_pattern)) continue;
    const auto r = static_cast<std::uint32_t>(std::stoul(m[1]));
    if (r >= kMaxRanks) continue;
    RankReader reader = open_rank_file(r, HeaderMode::document, 0);
    highest = std::max(highest, r);
    any = true;
    world = std::max(world, json_field(reader.header(), "size", 0u));
    infos.emplace_back(r, rank_summary(reader));
  }
  if (ec) throw TraceError(path_.string(), "cannot list the directory: " + ec.message());
  if (!any)
    throw TraceError(path_.string(), "no index.json and no rank-<r>.cgt files: not a trace");
  if (world > kMaxRanks)
    throw TraceError(path_.string(), "a rank header claims an implausible rank count");
  ranks_ = std::max(world, highest + 1);
  index_ = {
      {"format", "commgauge-trace"}, {"version", kVersion}, {"ranks", ranks_}, {"rebuilt", true}};
  nlohmann::json rank_info = nlohmann::json::array();
  for (std::uint32_t r = 0; r < ranks_; ++r)
    rank_info.push_back(nullptr);
  for (auto& [r, info] : infos)
    rank_info[r] = std::move(info);
  index_["rank_info"] = std::move(rank_info);
  index_rebuilt_ = true;
}

nlohmann::json TraceReader::rank_summary(RankReader& reader) {
  // What an index holds about a rank, from its header and first events (the Init clock sync).
  nlohmann::json info = {{"host", json_field(reader.header(), "host", std::string())}};
  Event e;
  try {
    for (int i = 0; i < 16 && reader.next(e); ++i) {
      if (e.kind == RecordKind::clock_sync) {
        info["clock"]["init"] = nlohmann::json::parse(e.text, nullptr, false);
        break;
      }
    }
  } catch (const TraceError&) {  // a damaged rank: trace-check reports it where it reads it
  }
  return info;
}

RankReader TraceReader::open_rank_file(std::uint32_t rank, HeaderMode mode,
                                       std::size_t window_bytes) const {
  auto file = std::make_shared<const TraceFile>(path_ / rank_file_name(rank));
  const std::uint64_t size = file->size();
  return RankReader(std::move(file), {Extent{0, size}}, rank, mode, window_bytes);
}

std::uint64_t TraceReader::bytes_on_disk() const {
  if (container_) return container_->size();
  std::uint64_t total = 0;
  std::error_code ec;
  for (std::uint32_t r = 0; r < ranks_; ++r) {
    const auto size = std::filesystem::file_size(path_ / rank_file_name(r), ec);
    if (!ec) total += size;
  }
  const auto index = std::filesystem::file_size(path_ / "index.json", ec);
  if (!ec) total += index;
  return total;
}

RankReader TraceReader::open_rank(std::uint32_t rank, HeaderMode mode,
                                  std::size_t window_bytes) const {
  if (rank >= ranks_)
    throw TraceError(path_.string(), "rank " + std::to_string(rank) +
                                         " out of range (the trace has " + std::to_string(ranks_) +
                                         " ranks)");
  if (container_) return RankReader(container_, extents_[rank], rank, mode, window_bytes);
  return open_rank_file(rank, mode, window_bytes);
}

void TraceReader::open_container(const std::filesystem::path& path) {
  container_ = std::make_shared<const TraceFile>(path);
  const TraceFile& file = *container_;
  unsigned char head[kContainerHeaderBytes] = {};
  if (file.read_at(0, head, sizeof head) != sizeof head || get_u32(head) != kContainerMagic)
    file.fail(0, "not a commgauge trace container (bad magic)");
  if (get_u32(head + 4) != kVersion)
    file.fail(4, "trace format version " + std::to_string(get_u32(head + 4)) +
                     " is not supported (this build reads version " + std::to_string(kVersion) +
                     ")");
  unsigned char foot[kFooterBytes] = {};
  const bool has_footer =
      file.size() >= kContainerHeaderBytes + kFooterBytes &&
      file.read_at(file.size() - kFooterBytes, foot, sizeof foot) == sizeof foot &&
      get_u32(foot) == kFooterMagic;
  if (!has_footer) {
    scan_container();
    return;
  }
  const std::uint64_t directory =
      get_u32(foot + 8) | (static_cast<std::uint64_t>(get_u32(foot + 12)) << 32);
  std::vector<unsigned char> payload;
  auto read_special_block = [&](std::uint64_t offset, std::uint32_t sequence) {
    unsigned char raw[kBlockHeaderBytes];
    if (offset + kBlockHeaderBytes > file.size() ||
        file.read_at(offset, raw, sizeof raw) != sizeof raw)
      file.fail(offset, "directory block out of the file");
    const BlockHeader h = read_block_header(raw);
    if (h.magic != kBlockMagic || h.rank != kContainerRank || h.sequence != sequence)
      file.fail(offset, "bad directory block");
    if (offset + kBlockHeaderBytes + h.payload_bytes > file.size() ||
        h.payload_bytes > kBlockPayloadLimit)
      file.fail(offset, "directory block runs past the end of the file");
    payload.resize(h.payload_bytes);
    file.read_at(offset + kBlockHeaderBytes, payload.data(), payload.size());
    if (crc32c(payload.data(), payload.size()) != h.crc)
      file.fail(offset, "directory block checksum mismatch (corrupt data)");
    return offset + kBlockHeaderBytes + h.payload_bytes;
  };
  const std::uint64_t index_offset = read_special_block(directory, 0);
  std::size_t pos = 0;
  auto varint = [&]() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= payload.size()) file.fail(directory, "truncated directory");
      const unsigned char b = payload[pos++];
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    file.fail(directory, "bad varint in the directory");
  };
  const std::uint64_t ranks = varint();
  if (ranks > payload.size() || ranks > kMaxRanks)
    file.fail(directory, "directory rank count exceeds its size");
  // As a directory's index.json of 0 ranks: no trace (it passed trace-check and the replay).
  if (ranks == 0) file.fail(directory, "the directory names no rank");
  ranks_ = static_cast<std::uint32_t>(ranks);
  extents_.assign(ranks_, {});
  for (auto& list : extents_) {
    const std::uint64_t n = varint();
    if (n > payload.size()) file.fail(directory, "directory extent count exceeds its size");
    list.resize(n);
    for (Extent& x : list) {
      x.offset = varint();
      x.bytes = varint();
      if (x.offset + x.bytes > directory) file.fail(directory, "directory extent out of range");
    }
  }
  read_special_block(index_offset, 1);
  index_ = nlohmann::json::parse(payload.begin(), payload.end(), nullptr, false);
  if (index_.is_discarded() || !index_.is_object())
    file.fail(index_offset, "index is not a JSON object");
  check_placement(index_, ranks_, path.string() + ": index");
  for (std::uint32_t r = 0; r < ranks_; ++r)
    if (extents_[r].empty()) missing_.push_back(r);
}

void TraceReader::scan_container() {
  // No footer (the writer did not finish): find every rank's blocks by walking the headers.
  const TraceFile& file = *container_;
  std::uint64_t offset = kContainerHeaderBytes;
  unsigned char raw[kBlockHeaderBytes];
  while (offset + kBlockHeaderBytes <= file.size()) {
    file.read_at(offset, raw, sizeof raw);
    const BlockHeader h = read_block_header(raw);
    if (h.magic != kBlockMagic) break;
    const std::uint64_t next = offset + kBlockHeaderBytes + h.payload_bytes;
    if (next > file.size()) break;
    if (h.rank != kContainerRank) {
      if (h.rank >= extents_.size()) {
        if (h.rank >= kMaxRanks) file.fail(offset, "implausible rank " + std::to_string(h.rank));
        extents_.resize(h.rank + 1);
      }
      auto& list = extents_[h.rank];
      if (!list.empty() && list.back().offset + list.back().bytes == offset)
        list.back().bytes += next - offset;
      else
        list.push_back({offset, next - offset});
    }
    offset = next;
  }
  ranks_ = static_cast<std::uint32_t>(extents_.size());
  std::uint32_t world = 0;
  for (std::uint32_t r = 0; r < ranks_; ++r) {
    if (extents_[r].empty()) continue;
    RankReader reader(container_, extents_[r], r);
    world = std::max(world, json_field(reader.header(), "size", 0u));
  }
  if (world > kMaxRanks) file.fail(kContainerHeaderBytes, "implausible rank count in a header");
  if (world > ranks_) extents_.resize(world);
  ranks_ = static_cast<std::uint32_t>(extents_.size());
  if (ranks_ == 0) file.fail(kContainerHeaderBytes, "no rank data in the container");
  index_ = {
      {"format", "commgauge-trace"}, {"version", kVersion}, {"ranks", ranks_}, {"rebuilt", true}};
  index_rebuilt_ = true;
  for (std::uint32_t r = 0; r < ranks_; ++r)
    if (extents_[r].empty()) missing_.push_back(r);
}

// ---- ClockMap ----

ClockMap::ClockMap(double ticks_per_second, const Sync* init, const Sync* finalize) {
  ns_per_tick_ = ticks_per_second > 0 ? 1e9 / ticks_per_second : 1.0;
  const auto bound = [](const Sync& s) {
    return static_cast<double>(s.round_trip_ns) / 2 + static_cast<double>(s.pairing_ns);
  };
  if (init != nullptr) {
    init_ = *init;
    offset_ns_ = static_cast<double>(init->offset_ns);
    error_bound_ns_ = bound(*init);
  }
  if (init != nullptr && finalize != nullptr && finalize->tick != init->tick &&
      finalize->local_ns != init->local_ns) {
    // Both syncs: the tick rate and the offset drift are measured over the whole run.
    ns_per_tick_ = static_cast<double>(finalize->local_ns - init->local_ns) /
                   static_cast<double>(finalize->tick - init->tick);
    // Ticks and nanoseconds both move forward between MPI_Init and MPI_Finalize.
    if (!(ns_per_tick_ > 0) || !std::isfinite(ns_per_tick_))
      throw TraceError("the init and finalize syncs map the ticks backwards (ns per tick " +
                       std::to_string(ns_per_tick_) + ")");
    has_finalize_ = true;
    const double change_ns = static_cast<double>(finalize->offset_ns - init->offset_ns);
    if (std::abs(change_ns) > bound(*init) + bound(*finalize)) {
      offset_slope_ = change_ns / static_cast<double>(finalize->local_ns - init->local_ns);
      error_bound_ns_ = std::max(error_bound_ns_, bound(*finalize));
    } else {
      // The offsets differ by less than their errors: the drift is not resolved, and
      // interpolating would stretch every interval of this rank by noise (a Finalize sync under
      // two busy loops: round trip 6.1 ms, offset 0.92 ms against 24 ns at Init, 0.49 % over the
      // run). The better sync's offset holds throughout; the other one's may lie |change| away.
      if (bound(*finalize) < bound(*init)) offset_ns_ = static_cast<double>(finalize->offset_ns);
      error_bound_ns_ = std::abs(change_ns) + std::max(bound(*init), bound(*finalize));
    }
  }
}

namespace {

ClockMap::Sync sync_from_json(const nlohmann::json& j) {
  return ClockMap::Sync{
      json_field(j, "tick", std::int64_t{0}), json_field(j, "local_ns", std::int64_t{0}),
      json_field(j, "offset_ns", std::int64_t{0}), json_field(j, "round_trip_ns", std::int64_t{0}),
      json_field(j, "pairing_ns", std::int64_t{0})};
}

}  // namespace

ClockMap::Sync ClockMap::parse_sync(const std::string& json_text) {
  const auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw TraceError("clock_sync record is not JSON");
  return sync_from_json(j);
}

double ClockMap::root_ns(std::int64_t tick) const {
  const double local =
      static_cast<double>(init_.local_ns) + static_cast<double>(tick - init_.tick) * ns_per_tick_;
  const double offset = offset_ns_ + (local - static_cast<double>(init_.local_ns)) * offset_slope_;
  return local + offset;
}

namespace {
// The index's clock sync of `rank` at `phase` (init, finalize): none where the index lacks it.
std::optional<ClockMap::Sync> index_sync(const TraceReader& trace, std::uint32_t rank,
                                         const char* phase) {
  const auto& index = trace.index();
  if (!index.is_object() || !index.contains("rank_info") || !index["rank_info"].is_array() ||
      rank >= index["rank_info"].size())
    return std::nullopt;
  const auto& clock = json_object(index["rank_info"][rank], "clock");
  if (!clock.contains(phase) || !clock[phase].is_object()) return std::nullopt;
  return sync_from_json(clock[phase]);
}
}  // namespace

std::optional<ClockMap::Sync> init_sync(const TraceReader& trace, std::uint32_t rank) {
  return index_sync(trace, rank, "init");
}

ClockMap clock_map(const TraceReader& trace, const RankReader& rank) {
  const double rate = rank.essentials().ticks_per_second;
  const auto init = index_sync(trace, rank.rank(), "init");
  const auto finalize = index_sync(trace, rank.rank(), "finalize");
  try {
    return ClockMap(rate, init ? &*init : nullptr, finalize ? &*finalize : nullptr);
  } catch (const TraceError& error) {
    throw TraceError(fmt::format("index.json: /rank_info/{}/clock", rank.rank()), error.what());
  }
}

}  // namespace commgauge::trace
