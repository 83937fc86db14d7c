#pragma once
// The held-out validation of a profile: measured cells against every model's prediction, with
// seed 003's E_rel = (predicted - measured) / measured per cell and, per model and kind, the
// median and the worst |E_rel| ("loggps predicts the held-out ping-pong within 3.1 % median,
// 7.9 % worst").

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/heldout.hpp"
#include "report/text_table.hpp"

namespace commgauge::report {

/// One model's predictions, per point of the result (nothing where it cannot say).
struct HeldOutPrediction {
  std::string model;
  std::vector<std::optional<double>> predicted_us;
  std::string not_applicable;  ///< why the model predicts nothing, if so
};

struct HeldOutSummary {
  std::string model;
  std::string kind;                                  ///< pingpong, allreduce, alltoall
  double median_abs_error = 0, worst_abs_error = 0;  ///< fractions
  std::uint64_t worst_bytes = 0;
  std::size_t points = 0;
};

std::vector<HeldOutSummary> summarise_heldout(const measure::HeldOutResult& r,
                                              const std::vector<HeldOutPrediction>& predictions);

std::string heldout_table(const measure::HeldOutResult& r,
                          const std::vector<HeldOutPrediction>& predictions,
                          TableSink* sink = nullptr);

/// The profile's heldout section.
nlohmann::json heldout_json(const measure::HeldOutResult& r,
                            const std::vector<HeldOutPrediction>& predictions);

}  // namespace commgauge::report
