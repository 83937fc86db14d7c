#pragma once
// Writing a result file so that it is whole or absent: the one place every output goes through.

#include <filesystem>
#include <string>

namespace commgauge {

/// Writes `text` atomically: a temporary created exclusively in the target's directory, synced,
/// then renamed over the target, so a crash or a full disk never leaves half a result and no
/// symlink is followed. "-" is standard output. Throws InputError if it cannot be written (the
/// temporary is removed).
void write_text_file(const std::filesystem::path& path, const std::string& text);

/// Where "-" writes (standard output unless the CLI moved the tables aside, see main.cpp).
void set_result_output(int fd);

}  // namespace commgauge
