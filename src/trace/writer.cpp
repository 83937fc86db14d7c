#include "trace/writer.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace commgauge::trace {

namespace {

[[noreturn]] void throw_errno(int error, const std::filesystem::path& path, const char* what) {
  throw std::system_error(error, std::generic_category(), std::string(what) + " " + path.string());
}

void pwrite_all(int fd, const unsigned char* data, std::size_t n, std::uint64_t offset,
                const std::filesystem::path& path) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t k = ::pwrite(fd, data + done, n - done, static_cast<off_t>(offset + done));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw_errno(k < 0 ? errno : ENOSPC, path, "cannot write");
    done += static_cast<std::size_t>(k);
  }
}

std::uint64_t page_size() {
  static const auto size = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

std::string rank_file_name(std::uint32_t rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%u.cgt", rank);
  return name;
}

// ---- BlockEncoder ----

BlockEncoder::BlockEncoder(std::uint32_t rank, BlockSink& sink) : rank_(rank), sink_(sink) {
  payload_.resize(2 * kBlockPayloadTarget);
  block_.reserve(kBlockHeaderBytes + 2 * kBlockPayloadTarget);
}

void BlockEncoder::write_header(const std::string& json_text) {
  emit(std::span(reinterpret_cast<const unsigned char*>(json_text.data()), json_text.size()));
}

void BlockEncoder::append(const Event& e) {
  // payload_ keeps its size as capacity; used_ is what holds events (no zero-filling per event).
  const std::size_t need = used_ + max_encoded_size(e);
  if (payload_.size() < need) payload_.resize(std::max(need, 2 * kBlockPayloadTarget));
  used_ += encode_event(e, previous_start_, payload_.data() + used_);
  previous_start_ = e.start_tick;
  ++events_;
  if (used_ >= kBlockPayloadTarget) flush();
}

void BlockEncoder::flush() {
  if (used_ == 0) return;
  emit(std::span(payload_.data(), used_));
  used_ = 0;
  previous_start_ = 0;
}

bool BlockEncoder::flush_without_allocating() {
  if (used_ == 0) return true;
  if (kBlockHeaderBytes + used_ > block_.capacity()) return false;
  flush();
  return true;
}

void BlockEncoder::emit(std::span<const unsigned char> payload) {
  block_.resize(kBlockHeaderBytes + payload.size());
  write_block_header(block_.data(), rank_, sequence_, payload);
  std::memcpy(block_.data() + kBlockHeaderBytes, payload.data(), payload.size());
  ++sequence_;
  sink_.write_block(rank_, block_);
}

// ---- MappedRankFile ----

MappedRankFile::MappedRankFile(const std::filesystem::path& path, bool exclusive) : path_(path) {
  fd_ =
      ::open(path.c_str(),
             O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | (exclusive ? O_EXCL : 0), 0644);
  if (fd_ < 0 && errno == EEXIST)
    throw std::runtime_error(path.string() +
                             " exists already: an earlier trace is not "
                             "overwritten (give COMMGAUGE_TRACE_DIR a new directory)");
  if (fd_ < 0 && errno == ELOOP)
    throw std::runtime_error(path.string() + " is a symlink: not followed");
  if (fd_ < 0) throw_errno(errno, path, "cannot create");
}

MappedRankFile::~MappedRankFile() {
  try {
    close();
  } catch (...) {  // a destructor reports nothing; close() is called explicitly where it matters
  }
}

void MappedRankFile::unmap() {
  if (window_ != nullptr) ::munmap(window_, kWindowBytes);
  window_ = nullptr;
}

void MappedRankFile::reserve(std::uint64_t bytes) {
  if (bytes <= reserved_) return;
  // Space is taken in steps of kReserveBytes (the mapping may reach past it; only reserved
  // pages are ever touched), so a nearly full disk still takes a small trace.
  const std::uint64_t step = (bytes + kReserveBytes - 1) / kReserveBytes * kReserveBytes;
  int rc =
      ::posix_fallocate(fd_, static_cast<off_t>(reserved_), static_cast<off_t>(step - reserved_));
  if (rc == 0) {
    reserved_ = step;
    return;
  }
  // Less room than a step: take just the pages this block needs, until the disk is full.
  const std::uint64_t pages = (bytes + page_size() - 1) / page_size() * page_size();
  rc = ::posix_fallocate(fd_, static_cast<off_t>(reserved_), static_cast<off_t>(pages - reserved_));
  if (rc != 0) throw_errno(rc, path_, "cannot extend");
  reserved_ = pages;
}

void MappedRankFile::map_window(std::uint64_t offset) {
  unmap();
  window_offset_ = offset - offset % page_size();
  void* p = ::mmap(nullptr, kWindowBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                   static_cast<off_t>(window_offset_));
  if (p == MAP_FAILED) throw_errno(errno, path_, "cannot map");
  window_ = static_cast<unsigned char*>(p);
}

void MappedRankFile::write_block(std::uint32_t, std::span<const unsigned char> block) {
  if (fd_ < 0) throw_errno(EBADF, path_, "write to closed");
  if (block.size() > kWindowBytes / 2) {
    // A huge block (one event with very long per-peer arrays): written directly; the page
    // cache holds it as it holds the mapping, so it survives a killed process the same way.
    reserve(end_ + block.size());
    // Payload first, header (whose magic commits the block) last.
    pwrite_all(fd_, block.data() + kBlockHeaderBytes, block.size() - kBlockHeaderBytes,
               end_ + kBlockHeaderBytes, path_);
    pwrite_all(fd_, block.data(), kBlockHeaderBytes, end_, path_);
    end_ += block.size();
    return;
  }
  reserve(end_ + block.size());
  if (window_ == nullptr || end_ + block.size() > window_offset_ + kWindowBytes) map_window(end_);
  unsigned char* dest = window_ + (end_ - window_offset_);
  // Payload first, then the header: a reader never sees a magic in front of a half block.
  std::memcpy(dest + kBlockHeaderBytes, block.data() + kBlockHeaderBytes,
              block.size() - kBlockHeaderBytes);
  std::atomic_signal_fence(std::memory_order_release);
  std::memcpy(dest, block.data(), kBlockHeaderBytes);
  end_ += block.size();
}

void MappedRankFile::close() {
  if (fd_ < 0) return;
  unmap();
  const int fd = fd_;
  fd_ = -1;
  const bool cut = ::ftruncate(fd, static_cast<off_t>(end_)) == 0;
  const int error = errno;
  ::close(fd);
  if (!cut) throw_errno(error, path_, "cannot truncate");
}

// ---- ContainerWriter ----

ContainerWriter::ContainerWriter(const std::filesystem::path& path, std::uint32_t ranks)
    : path_(path), extents_(ranks) {
  // Never through a symlink: the callers name a file of their own (a temporary they created).
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw_errno(errno, path, "cannot create");
  buffer_.reserve(1u << 20);
  unsigned char header[kContainerHeaderBytes];
  put_u32(header, kContainerMagic);
  put_u32(header + 4, kVersion);
  write_raw(header);
}

ContainerWriter::~ContainerWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void ContainerWriter::write_raw(std::span<const unsigned char> bytes) {
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  offset_ += bytes.size();
  if (buffer_.size() >= (1u << 20)) flush_buffer();
}

void ContainerWriter::flush_buffer() {
  pwrite_all(fd_, buffer_.data(), buffer_.size(), buffer_offset_, path_);
  buffer_offset_ += buffer_.size();
  buffer_.clear();
}

void ContainerWriter::write_block(std::uint32_t rank, std::span<const unsigned char> block) {
  if (rank >= extents_.size())
    throw std::out_of_range("container block for rank " + std::to_string(rank) +
                            " beyond the declared " + std::to_string(extents_.size()));
  auto& list = extents_[rank];
  if (!list.empty() && list.back().offset + list.back().bytes == offset_)
    list.back().bytes += block.size();
  else
    list.push_back({offset_, block.size()});
  write_raw(block);
}

void ContainerWriter::finish(const std::string& index_json) {
  const std::uint64_t directory_offset = offset_;
  std::vector<unsigned char> payload;
  put_varint(payload, extents_.size());
  for (const auto& list : extents_) {
    put_varint(payload, list.size());
    for (const Extent& x : list) {
      put_varint(payload, x.offset);
      put_varint(payload, x.bytes);
    }
  }
  std::vector<unsigned char> block(kBlockHeaderBytes);
  write_block_header(block.data(), kContainerRank, 0, payload);
  block.insert(block.end(), payload.begin(), payload.end());
  write_raw(block);
  const std::span index(reinterpret_cast<const unsigned char*>(index_json.data()),
                        index_json.size());
  block.assign(kBlockHeaderBytes, 0);
  write_block_header(block.data(), kContainerRank, 1, index);
  block.insert(block.end(), index.begin(), index.end());
  write_raw(block);
  unsigned char footer[kFooterBytes];
  put_u32(footer, kFooterMagic);
  put_u32(footer + 4, kVersion);
  put_u32(footer + 8, static_cast<std::uint32_t>(directory_offset));
  put_u32(footer + 12, static_cast<std::uint32_t>(directory_offset >> 32));
  write_raw(footer);
  flush_buffer();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw_errno(errno, path_, "cannot close");
}

nlohmann::json written_index(std::uint32_t ranks, const std::string& library,
                             const std::string& clock_source, double resolution_ns,
                             const std::string& commgauge_version) {
  return {{"format", "commgauge-trace"},
          {"version", kVersion},
          {"ranks", ranks},
          {"finished", true},
          {"complete", true},
          {"unmodeled", nlohmann::json::object()},
          {"mpi",
           {{"library", library},
            {"standard", "3.1"},
            {"thread_level", "single"},
            {"collectives", nlohmann::json::object()},
            {"point_to_point", nlohmann::json::object()}}},
          {"clock", {{"source", clock_source}, {"resolution_ns", resolution_ns}}},
          {"tracer",
           {{"overhead_ns_per_event_median", 0.0}, {"commgauge_version", commgauge_version}}}};
}

}  // namespace commgauge::trace
