#include "common/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge {

namespace {
std::string trim(const std::string& s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}
}  // namespace

std::uint64_t parse_byte_size(const std::string& raw, const std::string& what) {
  const std::string text = trim(raw);
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (!text.empty() && text[0] == '-') {
    throw InputError(what, fmt::format("a size must be >= 0 bytes, got \"{}\"", raw));
  }
  if (i == 0) throw InputError(what, fmt::format("expected a size in bytes, got \"{}\"", raw));
  const std::string number = text.substr(0, i);
  const std::string unit = trim(text.substr(i));
  double factor = 0;
  if (unit.empty() || unit == "B")
    factor = 1;
  else if (unit == "K" || unit == "KiB")
    factor = 1024.0;
  else if (unit == "M" || unit == "MiB")
    factor = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB")
    factor = 1024.0 * 1024 * 1024;
  else if (unit == "kB" || unit == "KB")
    factor = 1e3;
  else if (unit == "MB")
    factor = 1e6;
  else if (unit == "GB")
    factor = 1e9;
  else {
    throw InputError(what, fmt::format("unknown size unit \"{}\" in \"{}\" (use B, KiB, MiB, GiB, "
                                       "kB, MB or GB)",
                                       unit, raw));
  }
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end) * factor;
  if (*end == '\0' && value > 1e18)
    throw InputError(what, fmt::format("\"{}\" is more than 1e18 bytes", raw));
  if (*end != '\0' || value != std::floor(value) || value > 1e18) {
    throw InputError(what, fmt::format("\"{}\" is not a whole number of bytes", raw));
  }
  return static_cast<std::uint64_t>(value);
}

std::vector<std::uint64_t> parse_size_list(const std::string& text, const std::string& what) {
  std::vector<std::uint64_t> sizes;
  if (text.find(':') != std::string::npos) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t pos; (pos = text.find(':', start)) != std::string::npos; start = pos + 1) {
      parts.push_back(text.substr(start, pos - start));
    }
    parts.push_back(text.substr(start));
    if (parts.size() < 2 || parts.size() > 3) {
      throw InputError(what, fmt::format("expected MIN:MAX[:FACTOR], got \"{}\"", text));
    }
    const std::uint64_t lo = parse_byte_size(parts[0], what);
    const std::uint64_t hi = parse_byte_size(parts[1], what);
    double factor = 2;
    if (parts.size() == 3) {
      char* end = nullptr;
      factor = std::strtod(parts[2].c_str(), &end);
      if (*end != '\0' || !(factor > 1) || !std::isfinite(factor)) {
        throw InputError(
            what, fmt::format("the factor must be a finite number > 1, got \"{}\"", parts[2]));
      }
    }
    if (lo > hi) throw InputError(what, fmt::format("MIN {} is larger than MAX {}", lo, hi));
    const double steps =
        std::log(static_cast<double>(hi) / static_cast<double>(std::max<std::uint64_t>(lo, 1))) /
        std::log(factor);
    if (!(steps < static_cast<double>(kMaxSizeListEntries))) {
      throw InputError(what, fmt::format("\"{}\" makes {:.3g} steps; at most {} sizes", text,
                                         steps + 1, kMaxSizeListEntries));
    }
    if (lo == 0) sizes.push_back(0);
    for (double s = static_cast<double>(std::max<std::uint64_t>(lo, 1));
         s <= static_cast<double>(hi); s *= factor) {
      const auto v = static_cast<std::uint64_t>(std::llround(s));
      if (sizes.empty() || sizes.back() != v) sizes.push_back(v);
    }
    return sizes;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    sizes.push_back(parse_byte_size(text.substr(start, comma - start), what));
    if (comma == std::string::npos) break;
    if (sizes.size() == kMaxSizeListEntries)
      throw InputError(what, fmt::format("at most {} sizes", kMaxSizeListEntries));
    start = comma + 1;
  }
  return sizes;
}

}  // namespace commgauge
