#include "report/context.hpp"

#include <ctime>

#include "commgauge/version.hpp"

namespace commgauge::report {

namespace {
std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> line;
  return line;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}
}  // namespace

void set_command_line(int argc, char** argv) {
  stored_command_line().assign(argv, argv + argc);
}

const std::vector<std::string>& command_line() {
  return stored_command_line();
}

nlohmann::json run_context(const nlohmann::json& transport_context,
                           const measure::TimerCharacterization& timer) {
  nlohmann::json c = transport_context;
  c["commgauge_version"] = kVersion;
  c["git_revision"] = kGitRevision;
  c["command_line"] = command_line();
  c["date_utc"] = utc_now();
  c["clock"] = {{"name", timer.clock},
                {"res_timing_us", timer.res_timing_us},
                {"min_ov_us", timer.min_ov_us}};
  return c;
}

}  // namespace commgauge::report
