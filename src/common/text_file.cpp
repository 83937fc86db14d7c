#include "common/text_file.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <streambuf>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.hpp"
#include "common/temporaries.hpp"

namespace commgauge {

namespace {

// Everything written, or an error: write() may write part of a buffer.
bool write_all(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

int standard_output_fd = STDOUT_FILENO;

}  // namespace

int create_temporary(const std::filesystem::path& target, std::string& name) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  for (int attempt = 0; attempt < 1000; ++attempt) {
    name = fmt::format("{}/.{}.{}.{}.tmp", dir.string(), target.filename().string(), ::getpid(),
                       counter.fetch_add(1));
    register_temporary(name);  // before it exists: a SIGTERM in between still removes it
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) {
      const int error = errno;
      forget_temporary(name);
      errno = error;
    }
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// The stream's buffer over the temporary's descriptor. Hand-written because the standard library
// has no stream over a descriptor we opened ourselves (O_EXCL | O_NOFOLLOW); the first failed
// write is kept (errno) and every later write is dropped, so commit() can report it.
class AtomicFile::Buffer : public std::streambuf {
 public:
  Buffer() { setp(data_.data(), data_.data() + data_.size()); }
  void attach(int fd) { fd_ = fd; }
  int error() const { return error_; }
  bool drain() {
    const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    setp(data_.data(), data_.data() + data_.size());
    if (error_ == 0 && n > 0 && !write_all(fd_, data_.data(), n)) error_ = errno;
    return error_ == 0;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n >= static_cast<std::streamsize>(data_.size())) {  // large: straight through
      if (!drain()) return 0;
      if (!write_all(fd_, s, static_cast<std::size_t>(n))) {
        error_ = errno;
        return 0;
      }
      return n;
    }
    return std::streambuf::xsputn(s, n);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  int fd_ = -1;
  int error_ = 0;
  std::array<char, 1 << 16> data_{};
};

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  // Allocated before the temporary exists: nothing can throw after it is created.
  buffer_ = std::make_unique<Buffer>();
  stream_ = std::make_unique<std::ostream>(buffer_.get());
  // "-" is standard output only where a result can go there (write_text_file: --json, --csv,
  // --tables-csv); anywhere else it would be a file named "-".
  if (target_ == "-")
    throw InputError(target_.string(),
                     "standard output is not supported for this output; give a file name");
  // Renaming over a device or a FIFO would replace it (as root, /dev/null with a regular file):
  // those are written in place, as a shell redirection would.
  struct stat st {};
  if (::lstat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw InputError(target_.string(), "is a directory, not a file");
    in_place_ = true;
    // Non-blocking open: a FIFO without a reader is an error (ENXIO), never a hang; the writes
    // then block as usual.
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd_ < 0)
      throw InputError(target_.string(),
                       fmt::format("cannot write the file: {}", std::strerror(errno)));
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    buffer_->attach(fd_);
    return;
  }
  fd_ = create_temporary(target_, temporary_);
  if (fd_ < 0)
    throw InputError(target_.string(),
                     fmt::format("cannot write the file: {}", std::strerror(errno)));
  buffer_->attach(fd_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) {
    ::unlink(temporary_.c_str());
    forget_temporary(temporary_);
  }
}

std::ostream& AtomicFile::stream() {
  return *stream_;
}

void AtomicFile::fail(int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) {
    ::unlink(temporary_.c_str());
    forget_temporary(temporary_);
  }
  temporary_.clear();
  throw OutputError(target_.string(),
                    fmt::format("writing the file failed: {}", std::strerror(error)));
}

void AtomicFile::finish() {
  if (!buffer_) throw std::logic_error("AtomicFile: finished twice");
  if (!buffer_->drain()) fail(buffer_->error());
  // A device or FIFO may not support fsync (EINVAL): what it took is all there is.
  if (::fsync(fd_) != 0 && !(in_place_ && (errno == EINVAL || errno == EROFS))) fail(errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(errno);
  stream_.reset();
  buffer_.reset();
}

void AtomicFile::publish() {
  if (buffer_) throw std::logic_error("AtomicFile: publish before finish");
  if (in_place_) return;
  if (temporary_.empty()) throw std::logic_error("AtomicFile: published twice");
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) fail(errno);
  forget_temporary(temporary_);
  temporary_.clear();
}

void AtomicFile::commit() {
  finish();
  publish();
  if (!in_place_) sync_directory_of(target_);
}

NewDirectory::NewDirectory(std::filesystem::path path)
    : path_(std::filesystem::absolute(path).lexically_normal()) {
  if (!path_.has_filename()) path_ = path_.parent_path();  // "out/": its parent is "out"
  std::error_code ec;
  for (std::filesystem::path p = path_;
       !std::filesystem::exists(std::filesystem::symlink_status(p, ec)); p = p.parent_path()) {
    created_ = p;
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(path_, ec);
  if (ec) {
    created_.clear();
    throw InputError(path.string(), "cannot create the directory: " + ec.message());
  }
}

NewDirectory::~NewDirectory() {
  if (created_.empty()) return;
  std::error_code ec;
  for (std::filesystem::path p = path_;; p = p.parent_path()) {
    if (!std::filesystem::remove(p, ec) || p == created_) break;  // not empty, or gone: stop
  }
}

void sync_directory_of(const std::filesystem::path& path) {
  const std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
  // Best effort where the directory cannot be opened (writable but not readable, say): the file
  // is in place, only its durability across a crash is not ensured. EINVAL: a filesystem that
  // cannot sync a directory. A failing sync (EIO) is an error: the new name may be lost.
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;
  const int error = errno;
  ::close(fd);
  if (!synced) {
    throw OutputError(dir.string(), std::string("syncing the directory after the rename: ") +
                                        std::strerror(error));
  }
}

void set_result_output(int fd) {
  standard_output_fd = fd;
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  if (path == "-") {
    std::fflush(stdout);
    if (!write_all(standard_output_fd, text.data(), text.size()))
      throw OutputError("standard output", std::strerror(errno));
    return;
  }
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

}  // namespace commgauge
