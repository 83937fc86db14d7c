#pragma once
// How a profile's phases kept to loggp's latency mode (measure/latency_mode.hpp): the profile's
// JSON and a line of text per phase.

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/latency_mode.hpp"

namespace commgauge::report {

/// {"band": ..., "phases": {name: {"probes", "attempts", "waited_s", "held"}}}.
nlohmann::json latency_mode_json(const std::map<std::string, measure::PhaseModeCheck>& phases);

/// One line (newline-terminated): whether `phase` (its key: "overlap", "latency", "call_costs")
/// was measured in loggp's mode, the last attempt's probes, the band and the wait.
std::string latency_mode_line(const std::string& phase, const measure::PhaseModeCheck& check);

}  // namespace commgauge::report
