#include "trace/output_directory.hpp"

#include <string>
#include <system_error>

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
      for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        const bool trace_file = name == "index.json" || name == "index.json.tmp" ||
                                name == "trace.cgtc" || name == "trace.cgtc.tmp" ||
                                (name.rfind("rank-", 0) == 0 && entry.path().extension() == ".cgt");
        if (!trace_file)
          throw InputError("-o", dir.string() + " holds " + name +
                                     ", which is not part of a trace; refusing to clear it");
        fs::remove(entry.path());
      }
    }
  }
  fs::create_directories(dir, ec);
  if (ec) throw InputError("-o", "cannot create " + dir.string() + ": " + ec.message());
}

}  // namespace commgauge::trace
