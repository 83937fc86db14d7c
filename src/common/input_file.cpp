#include "common/input_file.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

void require_regular_file(int fd, const std::filesystem::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw InputError(path.string(), std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw InputError(path.string(),
                     "is " + (S_ISFIFO(st.st_mode) ? std::string("a FIFO") : kind_of(st.st_mode)) +
                         ", not a regular file");
}

std::string read_input_file(const std::filesystem::path& path, double idle_limit_s) {
  // O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise (forever if none comes).
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0)
    throw InputError(path.string(), std::string("cannot open the file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw InputError(path.string(), std::string("cannot stat: ") + std::strerror(errno));
  const bool stream = S_ISFIFO(st.st_mode);
  if (!stream && !S_ISREG(st.st_mode)) throw InputError(path.string(), "is " + kind_of(st.st_mode));
  std::string text;
  const auto check_size = [&path](std::uint64_t bytes) {
    if (bytes > kMaxInputBytes)
      throw InputError(path.string(), fmt::format("is larger than {} MiB, more than any input "
                                                  "commgauge reads",
                                                  kMaxInputBytes >> 20));
  };
  if (!stream) check_size(static_cast<std::uint64_t>(st.st_size));
  if (!stream) text.reserve(static_cast<std::size_t>(st.st_size));
  const int idle_ms = static_cast<int>(std::lround(idle_limit_s * 1000));
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
      check_size(text.size());
      continue;
    }
    if (n == 0) {
      // A FIFO that no writer has opened yet reads as its end too: wait for one (or for bytes
      // of the writer already there) unless something came and went.
      if (!stream) break;
      pollfd p{fd.get(), POLLIN, 0};
      const int ready = ::poll(&p, 1, idle_ms);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        if (!text.empty()) break;  // the writer wrote and closed before the wait
        throw InputError(
            path.string(),
            fmt::format("is a FIFO nothing was written to within {:g} s", idle_limit_s));
      }
      if ((p.revents & POLLIN) == 0) break;  // POLLHUP: the writer has closed it
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd.get(), POLLIN, 0};
      const int ready = ::poll(&p, 1, idle_ms);
      if (ready == 0)
        throw InputError(path.string(), fmt::format("nothing more was read within {:g} s (a pipe "
                                                    "whose writer stopped?)",
                                                    idle_limit_s));
      continue;
    }
    throw InputError(path.string(), std::string("cannot read: ") + std::strerror(errno));
  }
  return text;
}

}  // namespace commgauge
