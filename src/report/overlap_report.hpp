#pragma once
// Output of `commgauge overlap`: per-size table, LogGPO ranges, JSON, plot.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/overlap.hpp"
#include "report/text_table.hpp"

namespace commgauge::report {

nlohmann::json overlap_json(const measure::OverlapResult& r, const measure::OverlapOptions& o,
                            const nlohmann::json& context);
/// The profile's overlap section (schemas/profile.v1.schema.json).
nlohmann::json overlap_profile_section(const measure::OverlapResult& r);
std::string overlap_table(const measure::OverlapResult& r, TableSink* sink = nullptr);
void plot_overlap(const std::filesystem::path& output, const measure::OverlapResult& r,
                  const std::string& title);

}  // namespace commgauge::report
