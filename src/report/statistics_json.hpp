#pragma once
// JSON and text renderings of the statistics types, shared by every report.

#include <string>

#include <nlohmann/json.hpp>

#include "stats/descriptive.hpp"
#include "stats/tables.hpp"

namespace commgauge::report {

/// {"min", "median", "mean", "max", "variance", "sd", "cv", "se", "rse"}; cv in percent.
nlohmann::json summary_json(const stats::Summary& s);
/// [{"from_us", "to_us" (null for the open last bin), "count"}]
nlohmann::json distribution_json(const stats::Distribution& d);
/// {"quantum_us", "rows": [{"value_us", "count"}], "more": {...} if capped}
nlohmann::json frequency_json(const stats::Frequency& f);

/// The lines "min <= times < max with count = n" of seed 002 Appendix A.
std::string distribution_text(const stats::Distribution& d);
/// The lines "time = v with frequency = n" of seed 002 Appendix A.
std::string frequency_text(const stats::Frequency& f);
/// Seed 002 Appendix C's block of statistics (minimum ... relative standard error).
std::string summary_text(const stats::Summary& s);

}  // namespace commgauge::report
