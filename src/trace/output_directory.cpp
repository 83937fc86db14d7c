#include "trace/output_directory.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <stdlib.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/temporaries.hpp"
#include "trace/format.hpp"
#include "trace/writer.hpp"

namespace commgauge::trace {

namespace fs = std::filesystem;

namespace {

// Whether the file at `path` (named `name`, a trace file's name) holds what that name promises:
// the container's or a block's magic (or the zero bytes a crashed writer leaves before a block's
// header commits it), an index of format commgauge-trace; a left-over .tmp of ours may be empty.
// A user's file that merely has such a name is not a trace.
bool holds_trace_data(const fs::path& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  const bool temporary = path.extension() == ".tmp";
  if (name.rfind("index.json", 0) == 0) {
    if (in.peek() == std::ifstream::traits_type::eof()) return temporary;
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    return !doc.is_discarded() && doc.is_object() && doc.value("format", "") == "commgauge-trace";
  }
  std::array<unsigned char, 4> head{};
  in.read(reinterpret_cast<char*>(head.data()), head.size());
  if (in.gcount() == 0) return temporary || name.rfind("rank-", 0) == 0;
  if (in.gcount() != 4) return false;
  const std::uint32_t magic = get_u32(head.data());
  const std::uint32_t expected = name.rfind("trace.cgtc", 0) == 0 ? kContainerMagic : kBlockMagic;
  return magic == expected || magic == 0;
}

constexpr const char* kStagingPrefix = ".commgauge-new-";

bool is_staging_name(const std::string& name) {
  return name.rfind(kStagingPrefix, 0) == 0;
}

// One of the files a trace consists of, holding what its name promises.
bool is_trace_file(const fs::directory_entry& entry) {
  std::error_code ec;
  const std::string name = entry.path().filename().string();
  // synth's temporary container (common/text_file's create_temporary), left by a crash.
  const bool container_temporary =
      name.rfind(".trace.cgtc.", 0) == 0 && entry.path().extension() == ".tmp";
  const bool trace_file = name == "index.json" || name == "index.json.tmp" ||
                          name == "trace.cgtc" || name == "trace.cgtc.tmp" || container_temporary ||
                          (name.rfind("rank-", 0) == 0 && entry.path().extension() == ".cgt");
  return trace_file && !entry.is_symlink(ec) && entry.is_regular_file(ec) &&
         holds_trace_data(entry.path(), container_temporary ? "trace.cgtc.tmp" : name);
}

// The staging directory of a run that crashed before OutputDirectory::commit: trace files only.
bool is_left_over_staging(const fs::directory_entry& entry) {
  std::error_code ec;
  if (entry.is_symlink(ec) || !entry.is_directory(ec)) return false;
  for (const auto& inner : fs::directory_iterator(entry.path(), ec))
    if (!is_trace_file(inner)) return false;
  return !ec;
}

}  // namespace

OutputDirectory::OutputDirectory(const fs::path& dir, bool force) : dir_(dir), recording_dir_(dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw InputError("-o", dir.string() + " is not a directory");
    if (!fs::is_empty(dir, ec)) {
      if (!force)
        throw InputError("-o",
                         dir.string() + " is not empty (give --force to replace the trace in it)");
      for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        const bool part =
            is_staging_name(name) ? is_left_over_staging(entry) : is_trace_file(entry);
        if (!part)
          throw InputError("-o", dir.string() + " holds " + name +
                                     ", which is not part of a trace; refusing to clear it");
        old_trace_.push_back(entry.path());
      }
    }
  }
  try {
    created_ = std::make_unique<NewDirectory>(dir);
  } catch (const InputError& e) {
    throw InputError("-o", e.what());
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError("-o", dir.string() + " is not writable: " + std::strerror(errno));
  if (!old_trace_.empty()) {
    std::string pattern = (dir / (std::string(kStagingPrefix) + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw InputError(
          "-o", "cannot create a directory in " + dir.string() + ": " + std::strerror(errno));
    recording_dir_ = pattern;
    register_temporary(recording_dir_.string(), true);
  }
}

OutputDirectory::~OutputDirectory() {
  if (committed_ || recording_dir_ == dir_) return;
  std::error_code ec;
  fs::remove_all(recording_dir_, ec);
  forget_temporary(recording_dir_.string());
}

void OutputDirectory::commit() {
  if (committed_) return;
  committed_ = true;
  created_->keep();
  if (recording_dir_ == dir_) return;
  std::vector<fs::path> recorded;
  for (const auto& entry : fs::directory_iterator(recording_dir_))
    recorded.push_back(entry.path());
  // index.json last: a crash in between leaves the old index over a mixed set of rank files
  // rather than a new index naming rank files not yet moved.
  std::stable_partition(recorded.begin(), recorded.end(),
                        [](const fs::path& p) { return p.filename() != "index.json"; });
  std::set<fs::path> replaced;
  for (const auto& path : recorded) {
    fs::rename(path, dir_ / path.filename());
    replaced.insert(dir_ / path.filename());
  }
  std::error_code ec;
  fs::remove(recording_dir_, ec);
  forget_temporary(recording_dir_.string());
  for (const auto& old : old_trace_)
    if (!replaced.count(old)) fs::remove_all(old, ec);
}

void prepare_output_container(const fs::path& file, bool force) {
  std::error_code ec;
  if (fs::is_directory(file, ec)) throw InputError("-o", file.string() + " is a directory");
  if (fs::exists(fs::symlink_status(file, ec))) {
    if (!force) throw InputError("-o", file.string() + " exists (give --force to replace it)");
    if (fs::is_symlink(fs::symlink_status(file, ec)) || !fs::is_regular_file(file, ec) ||
        !holds_trace_data(file, "trace.cgtc")) {
      throw InputError("-o", file.string() + " is not a commgauge trace; refusing to replace it");
    }
  }
  if (file.has_parent_path()) {
    fs::create_directories(file.parent_path(), ec);
    if (ec)
      throw InputError("-o", "cannot create " + file.parent_path().string() + ": " + ec.message());
  }
}

}  // namespace commgauge::trace
