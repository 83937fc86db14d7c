#pragma once
// Byte sizes and size lists as users write them: "8", "64KiB", "1MiB", "8,64,1K", "1:1MiB".

#include <cstdint>
#include <string>
#include <vector>

namespace commgauge {

/// A byte count with an optional unit: B; KiB, MiB, GiB (and K, M, G) are powers of 1024;
/// kB, MB, GB are powers of 1000. Throws InputError naming `what` (an option or file:line).
std::uint64_t parse_byte_size(const std::string& text, const std::string& what);

/// The most sizes a list may hold (a range's steps included): a factor of 1.0000000001 would
/// otherwise run the loop 10^11 times.
inline constexpr std::size_t kMaxSizeListEntries = 10000;

/// "A,B,C" (explicit sizes) or "MIN:MAX[:FACTOR]" (geometric from MIN, times FACTOR, up to and
/// including MAX; FACTOR defaults to 2; MIN 0 starts the sweep at 0 then continues from 1); at
/// most kMaxSizeListEntries sizes, else InputError.
std::vector<std::uint64_t> parse_size_list(const std::string& text, const std::string& what);

}  // namespace commgauge
