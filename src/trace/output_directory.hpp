#pragma once
// The output directory of a trace (`commgauge trace -o DIR`, `commgauge synth -o DIR`).

#include <filesystem>
#include <memory>
#include <vector>

#include "common/text_file.hpp"

namespace commgauge::trace {

/// The output directory of one run. A new or empty `dir` is recorded into directly. With `force`,
/// a `dir` that holds a previous trace (index, rank files, container, and nothing else) is
/// recorded into a new staging directory inside it: the old trace is removed only by commit(),
/// when the new one exists, and stays whole when the run fails. InputError naming -o when `dir`
/// cannot be used (not empty without `force`, a file that is not part of a trace, not writable).
class OutputDirectory {
 public:
  OutputDirectory(const std::filesystem::path& dir, bool force);
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;
  /// Removes the staging directory and what was recorded in it unless commit() ran, and `dir`
  /// itself if this run created it and it is still empty.
  ~OutputDirectory();

  /// Where the run writes its trace files.
  const std::filesystem::path& recording_dir() const { return recording_dir_; }
  /// Moves the new trace into the directory and removes what is left of the old one (rank files
  /// the new trace does not have, staging directories of crashed runs). index.json moves last.
  void commit();

 private:
  std::filesystem::path dir_;
  std::filesystem::path recording_dir_;
  std::vector<std::filesystem::path> old_trace_;  // files and left-over staging directories
  bool committed_ = false;
  /// `dir` as created by this run: removed again, if empty, when the run never commits.
  std::unique_ptr<NewDirectory> created_;
};

/// Accepts `file` (a .cgtc container) as an output: absent, or with `force` a trace container
/// (a regular file with the container's magic, never a symlink or a user's other file), and
/// creates its directory. InputError naming -o otherwise. Nothing is removed here: the new
/// container replaces the old one by rename when it is whole.
void prepare_output_container(const std::filesystem::path& file, bool force);

}  // namespace commgauge::trace
