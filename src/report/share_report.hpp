#pragma once
// Output of `commgauge share`: measured and predicted penalties per communication, E_rel and
// E_abs (seed 003 §VI-B).

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/share.hpp"
#include "model/scheme.hpp"
#include "report/text_table.hpp"

namespace commgauge::report {

/// Penalties per model name, in the scheme's order.
using Predictions = std::map<std::string, std::vector<double>>;

/// Measured penalties by communication name from a `share --json` document; `scheme` must
/// match it (the same communication names). Throws InputError otherwise.
std::vector<double> read_measured_penalties(const std::string& path, const model::Scheme& scheme);
/// The scheme embedded in a `share --json` document.
model::Scheme scheme_of_share_json(const nlohmann::json& doc, const std::string& where);

/// E_rel per communication and E_abs, for one model.
std::pair<std::vector<double>, double> errors(const std::vector<double>& predicted,
                                              const std::vector<double>& measured);

std::string share_table(const model::Scheme& s, const std::optional<measure::ShareResult>& r,
                        const std::vector<double>& measured, const Predictions& p,
                        TableSink* sink = nullptr);
nlohmann::json share_json(const model::Scheme& s, const std::optional<measure::ShareResult>& r,
                          const std::vector<double>& measured, const Predictions& p,
                          const nlohmann::json& context);

/// The penalty of every communication (x axis, named "name: source -> destination"): measured, with
/// its interval when measured in this run, and each model's prediction beside it; a dashed line at
/// P = 1 (no sharing). .png or .svg by the extension, through gnuplot.
void plot_share(const std::filesystem::path& output, const model::Scheme& s,
                const std::optional<measure::ShareResult>& r, const std::vector<double>& measured,
                const Predictions& p, const std::string& title);

}  // namespace commgauge::report
