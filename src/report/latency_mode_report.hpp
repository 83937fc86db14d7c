#pragma once
// How a profile's phases kept to loggp's latency mode (measure/latency_mode.hpp): the profile's
// JSON and a line of text per phase.

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/latency_mode.hpp"

namespace commgauge::report {

/// A profile's checked phases in the order run, each by its key ("overlap", "latency",
/// "call_costs"); every check holds the same band, loggp's.
using PhaseModeChecks = std::vector<std::pair<std::string, measure::PhaseModeCheck>>;

/// {"band": ..., "phases": {name: {"probes", "attempts", "waited_s", "held"}}}; `phases` not empty.
nlohmann::json latency_mode_json(const PhaseModeChecks& phases);

/// One line (newline-terminated): whether `phase` (its key: "overlap", "latency", "call_costs")
/// was measured in loggp's mode, the last attempt's probes, the band and the wait.
std::string latency_mode_line(const std::string& phase, const measure::PhaseModeCheck& check);

}  // namespace commgauge::report
