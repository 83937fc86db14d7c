#pragma once
// Output of `commgauge timer` (seed 002 §3.1, Appendix A).

#include <string>

#include <nlohmann/json.hpp>

#include "measure/timer.hpp"

namespace commgauge::report {

/// {"clock", "trials", "res_timing_us", "min_ov_us", "negative", "stats_us", "distribution",
///  "frequency", "seconds"}
nlohmann::json timer_json(const measure::TimerCharacterization& t);
/// Resolution, overhead, statistics, distribution and frequency tables.
std::string timer_text(const measure::TimerCharacterization& t);

}  // namespace commgauge::report
