#include "trace/output_directory.hpp"

#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "common/error.hpp"

namespace commgauge::trace {

namespace fs = std::filesystem;

void prepare_output_directory(const fs::path& dir, bool force) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw InputError("-o", dir.string() + " is not a directory");
    if (!fs::is_empty(dir, ec)) {
      if (!force)
        throw InputError("-o",
                         dir.string() + " is not empty (give --force to replace the trace in it)");
      // Everything is checked before anything is removed: a refusal leaves the old trace.
      std::vector<fs::path> old_trace;
      for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        const bool trace_file = name == "index.json" || name == "index.json.tmp" ||
                                name == "trace.cgtc" || name == "trace.cgtc.tmp" ||
                                (name.rfind("rank-", 0) == 0 && entry.path().extension() == ".cgt");
        if (!trace_file || !entry.is_regular_file(ec))
          throw InputError("-o", dir.string() + " holds " + name +
                                     ", which is not part of a trace; refusing to clear it");
        old_trace.push_back(entry.path());
      }
      if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw InputError("-o", "cannot write in " + dir.string());
      for (const auto& path : old_trace)
        fs::remove(path);
    }
  }
  fs::create_directories(dir, ec);
  if (ec) throw InputError("-o", "cannot create " + dir.string() + ": " + ec.message());
}

}  // namespace commgauge::trace
