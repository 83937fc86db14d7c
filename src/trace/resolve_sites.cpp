// Call sites to source lines with binutils' addr2line (a helper process, like mpiP's use of
// it): reading DWARF ourselves (libdw) would add a library for what one tool run per module
// does in milliseconds.

#include <fmt/format.h>

#include <set>
#include <sstream>

#include "common/child_job.hpp"
#include "trace/summary.hpp"

namespace commgauge::trace {

namespace {

/// "file.c:31" or "file.c:31 (discriminator 2)" -> (file, 31); "??:0" or "??:?" -> nothing.
SourceLocation parse_location(const std::string& function, std::string where) {
  SourceLocation l;
  if (function != "??") l.function = function;
  if (const auto paren = where.find(" ("); paren != std::string::npos) where.resize(paren);
  const auto colon = where.rfind(':');
  if (colon == std::string::npos || where.compare(0, colon, "??") == 0) return l;
  std::uint32_t line = 0;
  for (std::size_t i = colon + 1; i < where.size(); ++i) {
    if (where[i] < '0' || where[i] > '9') return l;
    line = line * 10 + static_cast<std::uint32_t>(where[i] - '0');
  }
  if (line == 0) return l;
  l.file = where.substr(0, colon);
  l.line = line;
  return l;
}

}  // namespace

std::size_t resolve_call_sites(TraceSummary& summary, double time_limit_s) {
  std::map<std::string, std::set<std::uint64_t>> by_module;
  for (const auto& [site, totals] : summary.call_sites)
    if (!site.module.empty()) by_module[site.module].insert(site.offset);
  std::size_t resolved = 0;
  constexpr std::size_t kBatch = 512;  // addresses per addr2line run: a bounded command line
  for (const auto& [module, offsets] : by_module) {
    std::vector<std::uint64_t> all(offsets.begin(), offsets.end());
    for (std::size_t first = 0; first < all.size(); first += kBatch) {
      const std::size_t last = std::min(all.size(), first + kBatch);
      std::vector<std::string> args = {"addr2line", "-f", "-C", "-e", module};
      for (std::size_t i = first; i < last; ++i)
        args.push_back(fmt::format("{:#x}", all[i]));
      const auto output = run_capturing_output(args, time_limit_s);
      if (!output) break;  // no addr2line, or the object is gone: this module stays unresolved
      std::istringstream in(*output);
      for (std::size_t i = first; i < last; ++i) {
        std::string function, where;
        if (!std::getline(in, function) || !std::getline(in, where)) break;
        SourceLocation l = parse_location(function, where);
        if (l.function.empty() && l.file.empty()) continue;
        summary.site_locations[{module, all[i]}] = std::move(l);
        ++resolved;
      }
    }
  }
  return resolved;
}

}  // namespace commgauge::trace
