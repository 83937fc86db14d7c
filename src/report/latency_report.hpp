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

/// latency_json's text (indent 2, newline at the end), made one size at a time: the whole
/// document of a 1 MiB sweep (10,000 values) took 1.5 MiB while it was written, lifting each
/// rank above the 20 MiB that `latency` keeps to; one size's takes 50 KiB.
std::string latency_json_text(const measure::LatencyResult& r, const measure::LatencyOptions& o,
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
