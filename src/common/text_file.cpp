#include "common/text_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "common/error.hpp"

namespace commgauge {

namespace {

// Everything written, or an error: write() may write part of a buffer.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// A new file beside the target, created exclusively (never a file or symlink that is there
// already) with the permissions a plain open would give under the umask; its name in `name`.
int create_temporary(const std::filesystem::path& target, std::string& name) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  for (int attempt = 0; attempt < 1000; ++attempt) {
    name = fmt::format("{}/.{}.{}.{}.tmp", dir.string(), target.filename().string(), ::getpid(),
                       counter.fetch_add(1));
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

int standard_output_fd = STDOUT_FILENO;

}  // namespace

void set_result_output(int fd) {
  standard_output_fd = fd;
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  if (path == "-") {
    std::fflush(stdout);
    if (!write_all(standard_output_fd, text)) throw InputError("standard output", "writing failed");
    return;
  }
  // A temporary created exclusively beside the target (never a name a user's file or a symlink
  // could hold), synced, then renamed over the target: a crash or a full disk never leaves half a
  // result, and a symlink at the target is replaced, not followed.
  std::string temporary;
  const int fd = create_temporary(path, temporary);
  if (fd < 0)
    throw InputError(path.string(), fmt::format("cannot write the file: {}", std::strerror(errno)));
  const bool written = write_all(fd, text) && ::fsync(fd) == 0;
  const int error = errno;
  if (::close(fd) != 0 || !written) {
    ::unlink(temporary.c_str());
    throw InputError(path.string(), fmt::format("writing the file failed: {}",
                                                std::strerror(written ? errno : error)));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int rename_error = errno;
    ::unlink(temporary.c_str());
    throw InputError(path.string(),
                     fmt::format("cannot write the file: {}", std::strerror(rename_error)));
  }
}

}  // namespace commgauge
