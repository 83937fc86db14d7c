#pragma once
// Output of `commgauge loggp`: seed 000's Table 2, the LogGPS view, JSON, CSV and the plot.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/loggp.hpp"
#include "measure/trust.hpp"
#include "report/text_table.hpp"

namespace commgauge::report {

/// The link-parameter document (schemas/link-params.v1.schema.json) with the fit's standard
/// errors and residuals, plus loggps, points, switch_points_bytes, self_check, notes, messages,
/// bytes, seconds, parameters, timer and context.
nlohmann::json loggp_json(const measure::LoggpResult& r, const measure::LoggpOptions& o,
                          const nlohmann::json& timer, const nlohmann::json& context);

/// The switches as loggp read them: each one's sizes, protocol, how it was found, its
/// confirmation and bisection, and its verdict (in loggp_json and in a profile's loggp section).
nlohmann::json loggp_switches_json(const measure::LoggpResult& r);
/// The exchanges o_x was fitted to: size, median and rounds measured, the model's exchange.
nlohmann::json loggp_exchanges_json(const measure::LoggpResult& r);
/// The streams G_st was fitted to, as loggp_exchanges_json.
nlohmann::json loggp_streams_json(const measure::LoggpResult& r);
/// The send calls an acknowledged range's T1 was fitted to, as loggp_exchanges_json.
nlohmann::json loggp_send_calls_json(const measure::LoggpResult& r);

/// A profile class's trust verdict: trusted, the calibrated set's rms deviation, the latency
/// trials that stalled, and the reasons when it is not trusted.
nlohmann::json trust_json(const measure::Trust& t);

/// One line saying whether `link_class` is trusted, with the reasons when it is not.
std::string trust_line(const std::string& link_class, const measure::Trust& t);

/// Table 2 (interval, L, o(1), g, G) and the LogGPS view, notes, self-check and cost.
std::string loggp_table(const measure::LoggpResult& r, TableSink* sink = nullptr);

/// The raw points, one line per size.
std::string loggp_csv(const measure::LoggpResult& r);

/// G_all(s) with each range's fitted line, o_s(s), o_r(s) and the switches (seed 000 Figs. 3-4).
void plot_loggp(const std::filesystem::path& output, const measure::LoggpResult& r,
                const std::string& title);

}  // namespace commgauge::report
