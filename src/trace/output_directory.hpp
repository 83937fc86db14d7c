#pragma once
// The output directory of a trace (`commgauge trace -o DIR`, `commgauge synth -o DIR`).

#include <filesystem>

namespace commgauge::trace {

/// Creates `dir` or accepts it empty; with `force`, clears a previous trace out of it (index,
/// rank files, container) but refuses to remove anything else. InputError naming -o otherwise.
void prepare_output_directory(const std::filesystem::path& dir, bool force);

/// Accepts `file` (a .cgtc container) as an output: absent, or with `force` a trace container
/// (a regular file with the container's magic, never a symlink or a user's other file), and
/// creates its directory. InputError naming -o otherwise. Nothing is removed here: the new
/// container replaces the old one by rename when it is whole.
void prepare_output_container(const std::filesystem::path& file, bool force);

}  // namespace commgauge::trace
