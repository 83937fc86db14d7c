#include "profile/json_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.hpp"
#include "common/json_text.hpp"

namespace commgauge::profile {

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    std::size_t line = 1;
    std::size_t col = 1;
    const std::size_t end = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    const auto pos = what.find("syntax error");
    if (pos != std::string::npos) what = what.substr(pos);
    throw InputError(fmt::format("{}:{}:{}", where, line, col), "invalid JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    // A number past the range of a double (out_of_range 406, found by the readers' fuzzer)
    // carries no position.
    std::string what = e.what();
    const auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError(where, "invalid JSON: " + what);
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string(), "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_json(text.str(), path.string());
}

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

}  // namespace

namespace {
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
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::string temporary = fmt::format("{}/.{}.XXXXXX", dir.string(), path.filename().string());
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0)
    throw InputError(path.string(), fmt::format("cannot write the file: {}", std::strerror(errno)));
  // mkstemp creates 0600; a result file gets what the umask allows, as a plain open would.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
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

void write_json_file(const std::filesystem::path& path, const nlohmann::json& document) {
  // Bytes that are not UTF-8 (a command line, a host name) become U+FFFD instead of an error
  // that would lose the measurements.
  write_text_file(path, json_text(document, 2) + "\n");
}

}  // namespace commgauge::profile
