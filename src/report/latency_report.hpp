#pragma once
// Output of `commgauge latency`: the summary table, JSON, and seed 002's two files.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/latency.hpp"
#include "measure/timer.hpp"
#include "report/text_table.hpp"

namespace commgauge::report {

/// The whole result: context, timer, parameters, results per size, messages/bytes/seconds.
nlohmann::json latency_json(const measure::LatencyResult& r, const measure::LatencyOptions& o,
                            const measure::TimerCharacterization& timer,
                            const nlohmann::json& context);

/// One row per size: npp, trials, min/median/mean/max one-way times, sd, cv, rate, filtered.
std::string latency_table(const measure::LatencyResult& r, const measure::LatencyOptions& o,
                          TableSink* sink = nullptr);

/// Writes latency.summary.output (seed 002 Appendix C, per size), latency.output (everything,
/// with distribution and frequency tables) and latency.trials.csv (every trial) into `dir`.
void write_latency_files(const std::filesystem::path& dir, const measure::LatencyResult& r,
                         const measure::LatencyOptions& o,
                         const measure::TimerCharacterization& timer,
                         const nlohmann::json& context);

}  // namespace commgauge::report
