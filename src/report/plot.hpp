#pragma once
// Plots through gnuplot: the data and the script go to a temporary directory, gnuplot writes
// the picture; the terminal follows the file's extension (.png or .svg).

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace commgauge::report {

/// `text` as a single-quoted gnuplot string (quotes doubled, control characters as blanks), e.g.
/// for a title.
std::string gnuplot_string(const std::string& text);

/// Throws InputError (naming `field`, the option's field name) unless the extension is .png or
/// .svg: for commands that check before they measure.
void check_plot_output(const std::filesystem::path& output, const std::string& field = "plot");

/// `script` is gnuplot commands without a terminal or output line; `data_files` are written
/// next to it first (name -> content) and can be referred to by name. Throws InputError if the
/// extension is not .png/.svg, or if gnuplot is missing or fails, naming `field`. `size_px`:
/// width, height.
void run_gnuplot(const std::filesystem::path& output, const std::string& script,
                 const std::vector<std::pair<std::string, std::string>>& data_files,
                 std::pair<int, int> size_px = {1100, 750}, const std::string& field = "plot");

}  // namespace commgauge::report
