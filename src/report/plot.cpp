#include "report/plot.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text_file.hpp"

namespace commgauge::report {

namespace {
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';  // a newline would end the string and the line of the script
    else
      out += c;
  }
  return out + "'";
}
}  // namespace

std::string gnuplot_string(const std::string& text) {
  return quoted(text);
}

void check_plot_output(const std::filesystem::path& output, const std::string& field) {
  const std::string ext = output.extension().string();
  if (ext != ".png" && ext != ".svg")
    throw InputError(field,
                     fmt::format("expected a .png or .svg file, got \"{}\"", output.string()));
}

void run_gnuplot(const std::filesystem::path& output, const std::string& script,
                 const std::vector<std::pair<std::string, std::string>>& data_files,
                 std::pair<int, int> size_px, const std::string& field) {
  check_plot_output(output, field);
  const std::string ext = output.extension().string();
  const std::string terminal =
      fmt::format("{} size {},{} noenhanced", ext == ".png" ? "pngcairo" : "svg", size_px.first,
                  size_px.second);

  char tmpl[] = "/tmp/commgauge-plot-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw InputError(field, "cannot create a temporary directory");
  const std::filesystem::path dir = tmpl;
  // gnuplot draws into the scratch directory; the picture is then published with
  // write_text_file (whole or absent at the target, never through a symlink there).
  struct Scratch {
    std::filesystem::path dir;
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } scratch{dir};
  for (const auto& [name, content] : data_files)
    write_text_file(dir / name, content);
  const std::filesystem::path drawn = dir / ("plot" + ext);
  write_text_file(dir / "plot.gp", "set terminal " + terminal + "\nset output " +
                                       quoted(drawn.string()) + "\ncd " + quoted(dir.string()) +
                                       "\n" + script + "\n");
  const std::string command =
      fmt::format("gnuplot {} > {} 2>&1", quoted((dir / "plot.gp").string()),
                  quoted((dir / "gnuplot.log").string()));
  const int status = std::system(command.c_str());
  std::string log;
  {
    std::ifstream in(dir / "gnuplot.log");
    std::getline(in, log, '\0');
  }
  if (status != 0) {
    throw InputError(field, fmt::format("gnuplot failed (is it installed? scripts/setup installs "
                                        "it): {}",
                                        log.substr(0, 300)));
  }
  std::ifstream in(drawn, std::ios::binary);
  if (!in) throw OutputError(drawn.string(), "gnuplot wrote no picture");
  const std::string picture{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  write_text_file(output, picture);
}

}  // namespace commgauge::report
