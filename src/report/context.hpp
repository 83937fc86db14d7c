#pragma once
// The context every JSON result carries: where, how and by which code it was measured.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/timer.hpp"

namespace commgauge::report {

/// The command line as the user typed it (set once by main).
void set_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();

/// {"commgauge_version", "git_revision", "command_line", "date_utc", "timer": {...},
///  and the transport's own context (transport, hosts, MPI library...)}.
nlohmann::json run_context(const nlohmann::json& transport_context,
                           const measure::TimerCharacterization& timer);

}  // namespace commgauge::report
