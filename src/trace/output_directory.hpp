#pragma once
// The output directory of a trace (`commgauge trace -o DIR`, `commgauge synth -o DIR`).

#include <filesystem>

namespace commgauge::trace {

/// Creates `dir` or accepts it empty; with `force`, clears a previous trace out of it (index,
/// rank files, container) but refuses to remove anything else. InputError naming -o otherwise.
void prepare_output_directory(const std::filesystem::path& dir, bool force);

}  // namespace commgauge::trace
