#pragma once
// Writing a result file so that it is whole or absent: the one place every output goes through.

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace commgauge {

/// A result file written as a stream and published whole: the bytes go to a temporary created
/// exclusively beside the target (never a name a user's file or a symlink could hold); commit()
/// syncs it and renames it over the target. Until then the target is untouched; a file that is
/// never committed (an error, an exception) leaves nothing behind. A target that exists and is
/// not a regular file or a symlink (a device such as /dev/null, a FIFO) is written in place,
/// never replaced; a directory is an input error.
/// Errors: the temporary cannot be created -> InputError naming the target (a bad path, exit 2);
/// writing, syncing or renaming fails (a full disk) -> OutputError (exit 1).
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();  ///< removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream();
  void write(std::string_view text) {
    stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  /// Flushes, syncs, closes and renames over the target: finish() then publish().
  void commit();
  /// Flushes, syncs and closes the temporary (its buffer is freed), not yet at the target: for
  /// a set of files that should appear together (publish each once all are finished).
  void finish();
  /// Renames the finished temporary over the target (the directory is not synced: see
  /// sync_directory_of).
  void publish();
  const std::filesystem::path& target() const { return target_; }

 private:
  class Buffer;
  void fail(int error);
  std::filesystem::path target_;
  std::string temporary_;
  bool in_place_ = false;  ///< writing into an existing device or FIFO: nothing to rename
  int fd_ = -1;
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
};

/// A directory for a set of outputs, created with its missing parents; unless kept, destruction
/// removes again the directories it created, each only while empty (a failed export left an
/// empty directory behind on a full disk). Destroy it after the set's AtomicFiles, whose
/// temporaries live in it. A directory that cannot be created -> InputError naming it.
class NewDirectory {
 public:
  explicit NewDirectory(std::filesystem::path path);
  ~NewDirectory();
  NewDirectory(const NewDirectory&) = delete;
  NewDirectory& operator=(const NewDirectory&) = delete;
  void keep() { created_.clear(); }  ///< the outputs are published: the directories stay

 private:
  std::filesystem::path path_;
  std::filesystem::path created_;  ///< the outermost directory created; empty: none
};

/// A new file beside `target`, created exclusively (never a file or symlink that is there
/// already: O_EXCL | O_NOFOLLOW) with the permissions a plain open would give under the umask;
/// returns its descriptor and its name in `name`, or -1 with errno set.
int create_temporary(const std::filesystem::path& target, std::string& name);

/// Syncs the directory holding `path`, so that renames into it survive a crash of the machine
/// (commit() does it; a set of published files needs it once). A failing sync -> OutputError;
/// a directory that cannot be opened is left unsynced.
void sync_directory_of(const std::filesystem::path& path);

/// Writes `text` atomically through an AtomicFile; "-" is standard output.
void write_text_file(const std::filesystem::path& path, const std::string& text);

/// Where "-" writes (standard output unless the CLI moved the tables aside, see main.cpp).
void set_result_output(int fd);

}  // namespace commgauge
