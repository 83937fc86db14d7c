#include "report/plot.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::report {

namespace {
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else
      out += c;
  }
  return out + "'";
}
}  // namespace

void run_gnuplot(const std::filesystem::path& output, const std::string& script,
                 const std::vector<std::pair<std::string, std::string>>& data_files) {
  const std::string ext = output.extension().string();
  std::string terminal;
  if (ext == ".png")
    terminal = "pngcairo size 1100,750 noenhanced";
  else if (ext == ".svg")
    terminal = "svg size 1100,750 noenhanced";
  else
    throw InputError("plot",
                     fmt::format("expected a .png or .svg file, got \"{}\"", output.string()));

  char tmpl[] = "/tmp/commgauge-plot-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw InputError("plot", "cannot create a temporary directory");
  const std::filesystem::path dir = tmpl;
  for (const auto& [name, content] : data_files)
    std::ofstream(dir / name) << content;
  const std::filesystem::path absolute = std::filesystem::absolute(output);
  {
    std::ofstream s(dir / "plot.gp");
    s << "set terminal " << terminal << "\nset output " << quoted(absolute.string()) << "\n"
      << "cd " << quoted(dir.string()) << "\n"
      << script << "\n";
  }
  const std::string command =
      fmt::format("gnuplot {} > {} 2>&1", quoted((dir / "plot.gp").string()),
                  quoted((dir / "gnuplot.log").string()));
  const int status = std::system(command.c_str());
  std::string log;
  {
    std::ifstream in(dir / "gnuplot.log");
    std::getline(in, log, '\0');
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (status != 0) {
    throw InputError("plot", fmt::format("gnuplot failed (is it installed? scripts/setup installs "
                                         "it): {}",
                                         log.substr(0, 300)));
  }
}

}  // namespace commgauge::report
