#pragma once
// How a profile's phases kept to loggp's latency mode (measure/latency_mode.hpp): the profile's
// JSON and a line of text per phase.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/latency_mode.hpp"
#include "report/prediction.hpp"

namespace commgauge::report {

/// A profile's checked phases in the order run, each by its key ("overlap", "latency",
/// "call_costs"); every check holds the same band, loggp's.
using PhaseModeChecks = std::vector<std::pair<std::string, measure::PhaseModeCheck>>;

/// {"band": ..., "phases": {name: {"probes", "attempts", "waited_s", "held"}}}; `phases` not empty.
nlohmann::json latency_mode_json(const PhaseModeChecks& phases);

/// One line (newline-terminated): whether `phase` (its key: "overlap", "latency", "call_costs")
/// was measured in loggp's mode, the last attempt's probes, the band and the wait.
std::string latency_mode_line(const std::string& phase, const measure::PhaseModeCheck& check);

/// A measured one-way time (predict pingpong --measured) at the size of a profile's band: inside
/// it, the measurement ran in the latency mode of the profile's loggp rounds; outside, in another,
/// and every prediction's error against it includes the difference of the modes.
struct MeasuredAgainstBand {
  measure::LatencyModeBand band;
  double measured_us = 0;
  bool in_band() const { return band.contains(measured_us); }
};

/// Nothing where `latency_mode` (a profile class's, LinkClass::latency_mode) has no band or
/// `measured` no time at the band's size.
std::optional<MeasuredAgainstBand> measured_against_band(const nlohmann::json& latency_mode,
                                                         const std::vector<Measured>& measured);

/// One line (newline-terminated), and the JSON {"bytes", "measured_us", "band_low_us",
/// "band_high_us", "in_band"}.
std::string measured_against_band_line(const MeasuredAgainstBand& m);
nlohmann::json measured_against_band_json(const MeasuredAgainstBand& m);

}  // namespace commgauge::report
