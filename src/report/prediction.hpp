#pragma once
// `commgauge predict`: model predictions for a ping-pong or for the isend-compute-wait scenario,
// optionally against measured times, with seed 003's errors: E_rel = (predicted - measured) /
// measured per point and E_abs = the mean of |E_rel| (§VI-B).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/models.hpp"
#include "report/text_table.hpp"

namespace commgauge::report {

/// One-way times measured elsewhere, by size (microseconds).
struct Measured {
  std::uint64_t bytes = 0;
  double one_way_us = 0;
  /// The 95 % interval of the median where the file has one (latency and loggp JSON).
  std::optional<double> lower_us, upper_us;
};

/// Reads a latency JSON (results[].stats_us.median), a loggp JSON (points[].prtt1.median_us / 2)
/// or a CSV of "size,time" (time is the one-way time in us; a header naming rtt_us halves it).
/// Throws InputError with file:line for anything else.
std::vector<Measured> read_measured(const std::filesystem::path& path);

struct PingPongPoint {
  std::uint64_t bytes = 0;
  double rtt_us = 0;
  double one_way_us = 0;
  bool extrapolated = false;
  std::optional<double> measured_one_way_us;
  std::optional<double> measured_lower_us, measured_upper_us;  ///< its 95 % interval, if known
  std::optional<double> e_rel_percent;
};

struct PingPongPrediction {
  std::string model;
  std::vector<PingPongPoint> points;
  std::optional<double> e_abs_percent;               ///< over the points that have a measurement
  std::optional<double> e_abs_above_switch_percent;  ///< the same for k >= S (if the link has S)
};

/// `switch_bytes`: the profile's rendezvous threshold S (0: none), for the error above it.
PingPongPrediction predict_pingpong(const model::CommModel& m,
                                    const std::vector<std::uint64_t>& sizes,
                                    const std::vector<Measured>& measured,
                                    const std::vector<bool>& extrapolated,
                                    std::uint64_t switch_bytes);

std::string pingpong_table(const std::vector<PingPongPrediction>& p, TableSink* sink = nullptr);
nlohmann::json pingpong_json(const std::vector<PingPongPrediction>& p,
                             const nlohmann::json& header);
void plot_pingpong(const std::filesystem::path& output, const std::vector<PingPongPrediction>& p,
                   const std::string& title);

struct OverlapPrediction {
  std::string model;
  std::vector<std::pair<std::uint64_t, model::OverlapCosts>> points;
};
std::string overlap_prediction_table(const std::vector<OverlapPrediction>& p, double comp_us,
                                     TableSink* sink = nullptr);
nlohmann::json overlap_prediction_json(const std::vector<OverlapPrediction>& p,
                                       const nlohmann::json& header);

}  // namespace commgauge::report
