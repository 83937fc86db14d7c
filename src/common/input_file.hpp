#pragma once
// Reading an input file (a profile, cluster, scheme, CSV of measurements) without hanging on it.

#include <cstddef>
#include <filesystem>
#include <string>

namespace commgauge {

/// How long a FIFO or pipe may stay silent (no byte, no end) before reading it gives up.
inline constexpr double kInputIdleLimit_s = 60;
/// The largest input file read (a profile, cluster or placement file for a million ranks is a
/// few MB): a stream without end (`<(yes '[')`) is an error, not all of memory.
inline constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;

/// The whole content of the input file at `path`. A regular file is read as it is. A FIFO or a
/// pipe (a shell's `<(command)`) is read while bytes keep coming, at most `idle_limit_s` apart: a
/// FIFO nobody writes to is an InputError naming it, not a hang. A directory, a device or a
/// socket, a file that cannot be opened and one of more than kMaxInputBytes, are InputErrors
/// naming the path.
std::string read_input_file(const std::filesystem::path& path,
                            double idle_limit_s = kInputIdleLimit_s);

/// Refuses (InputError naming the path) an open file that is not a regular file, for the readers
/// that need one (a trace is read at offsets and mapped): `fd` is open on `path`.
void require_regular_file(int fd, const std::filesystem::path& path);

}  // namespace commgauge
