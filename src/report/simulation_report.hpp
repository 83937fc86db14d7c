#pragma once
// Output of `commgauge simulate`: predicted against measured time, where each rank's time went,
// per MPI function and per collective, and seed 003's errors E_rel = (predicted - measured) /
// measured and E_abs = mean |E_rel| (§VI-B), per rank and in total.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/text_table.hpp"
#include "sim/simulator.hpp"

namespace commgauge::report {

/// Above this many ranks, per-rank figures are given as a distribution over ranks.
inline constexpr std::size_t kPerRankLimit = 64;

struct SimulationErrors {
  double total_e_rel_percent = 0;   ///< slowest rank, predicted against measured
  double e_abs_percent = 0;         ///< mean over ranks of |E_rel| of the rank's total time
  double in_mpi_e_abs_percent = 0;  ///< mean over ranks of |E_rel| of time inside MPI
  bool has_measurement = false;
};
SimulationErrors simulation_errors(const sim::Result& r);

/// Everything as JSON: model, predicted_seconds, measured_seconds, e_abs_percent,
/// forced_completions, ranks (per rank), functions, collectives, breakdown.
nlohmann::json simulation_to_json(const sim::Result& r);

/// The human report; `compare` adds per rank measured against predicted.
std::string simulation_text(const sim::Result& r, bool compare, TableSink* sink = nullptr);

/// `--model all`: the models side by side (seed 001's comparison).
std::string models_side_by_side(const std::vector<sim::Result>& results, TableSink* sink = nullptr);

/// `--plot`: per rank, the measured time and each model's prediction, in two panels: the
/// window (end of MPI_Init to start of MPI_Finalize) and the time inside MPI (gnuplot; .png or
/// .svg). No error bars: a trace is one run and a replay is exact.
void plot_simulation(const std::filesystem::path& output, const std::vector<sim::Result>& results,
                     const std::string& title);

}  // namespace commgauge::report
