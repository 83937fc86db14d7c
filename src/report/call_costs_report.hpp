#pragma once
// How the call costs kept to loggp's latency mode: the profile's JSON and its line of text.

#include <string>

#include <nlohmann/json.hpp>

#include "measure/call_costs.hpp"

namespace commgauge::report {

nlohmann::json latency_mode_json(const measure::CallCosts::ModeCheck& check);

/// One line (newline-terminated): in loggp's mode or not, the probes' values, the band, the wait.
std::string latency_mode_line(const measure::CallCosts::ModeCheck& check);

}  // namespace commgauge::report
