#include "report/simulation_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/plot.hpp"
#include "report/text_table.hpp"
#include "stats/descriptive.hpp"
#include "stats/prediction_error.hpp"
#include "trace/functions.hpp"

namespace commgauge::report {

namespace {

double seconds(model::Picoseconds ps) {
  return static_cast<double>(ps.count()) * 1e-12;
}
// E_rel in percent; NaN where there is no measurement (printed "n/a").
double e_rel(double predicted, double measured) {
  return 100.0 * stats::relative_error(predicted, measured).value_or(std::nan(""));
}
std::string time_text(double s) {
  if (s >= 1) return fmt::format("{:.4g} s", s);
  if (s >= 1e-3) return fmt::format("{:.4g} ms", s * 1e3);
  return fmt::format("{:.4g} us", s * 1e6);
}
std::string percent(double p) {
  return std::isnan(p) ? "n/a" : fmt::format("{:+.1f} %", p);
}

nlohmann::json breakdown_json(const sim::Breakdown& b) {
  return {{"compute_seconds", seconds(b.compute)},
          {"overhead_seconds", seconds(b.overhead)},
          {"transfer_seconds", seconds(b.transfer)},
          {"late_sender_seconds", seconds(b.late_sender)},
          {"late_receiver_seconds", seconds(b.late_receiver)},
          {"synchronization_seconds", seconds(b.synchronization)},
          {"opaque_seconds", seconds(b.opaque)}};
}

struct Part {
  const char* name;
  model::Picoseconds sim::Breakdown::*field;
};
constexpr Part kParts[] = {{"compute", &sim::Breakdown::compute},
                           {"MPI overhead", &sim::Breakdown::overhead},
                           {"transfer", &sim::Breakdown::transfer},
                           {"late sender", &sim::Breakdown::late_sender},
                           {"late receiver", &sim::Breakdown::late_receiver},
                           {"synchronization", &sim::Breakdown::synchronization},
                           {"opaque MPI", &sim::Breakdown::opaque}};

}  // namespace

SimulationErrors simulation_errors(const sim::Result& r) {
  SimulationErrors e;
  e.has_measurement = r.measured_ns > 0;
  if (!e.has_measurement) return e;
  e.total_e_rel_percent = e_rel(seconds(r.predicted_ps), r.measured_ns * 1e-9);
  double sum = 0, sum_mpi = 0;
  std::size_t n = 0, n_mpi = 0;
  for (const auto& rk : r.per_rank) {
    if (rk.measured_ns > 0) {
      sum += std::abs(e_rel(seconds(rk.predicted_ps), rk.measured_ns * 1e-9));
      ++n;
    }
    if (rk.measured_in_mpi_ns > 0) {
      sum_mpi += std::abs(e_rel(seconds(rk.predicted.in_mpi()), rk.measured_in_mpi_ns * 1e-9));
      ++n_mpi;
    }
  }
  e.e_abs_percent = n > 0 ? sum / static_cast<double>(n) : std::nan("");
  e.in_mpi_e_abs_percent = n_mpi > 0 ? sum_mpi / static_cast<double>(n_mpi) : std::nan("");
  return e;
}

namespace {

std::string path_function_name(std::int64_t f) {
  if (f == sim::CriticalPath::kCompute) return "computation";
  if (f == sim::CriticalPath::kNetwork) return "network";
  return std::string(trace::function_name(static_cast<std::uint32_t>(f)));
}

nlohmann::json state_check_json(const sim::Result& r) {
  if (!r.state_check) return nullptr;
  return {{"trace_round_trip_us", r.state_check->trace_round_trip_us},
          {"model_round_trip_us", r.state_check->model_round_trip_us},
          {"ratio", r.state_check->ratio},
          {"pairs", r.state_check->pairs}};
}

nlohmann::json critical_path_json(const sim::Result& r) {
  if (!r.critical_path) return nullptr;
  const sim::CriticalPath& p = *r.critical_path;
  auto slots = [](const auto& array, bool functions) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : array)
      if (s.key >= 0)
        out.push_back(
            {{functions ? "name" : "rank",
              functions ? nlohmann::json(path_function_name(s.key)) : nlohmann::json(s.key)},
             {"seconds", seconds(s.time)}});
    return out;
  };
  nlohmann::json last = nlohmann::json::array();
  for (const auto& step : p.last_steps())
    last.push_back({{"rank", step.rank},
                    {"name", path_function_name(step.function)},
                    {"start_seconds", seconds(step.start)},
                    {"end_seconds", seconds(step.end)}});
  return {{"rank", r.critical_path_rank},
          {"length_seconds", seconds(p.length())},
          {"compute_seconds", seconds(p.compute)},
          {"mpi_seconds", seconds(p.mpi)},
          {"network_seconds", seconds(p.network)},
          {"ranks", slots(p.ranks, false)},
          {"other_ranks_seconds", seconds(p.other_ranks)},
          {"functions", slots(p.functions, true)},
          {"other_functions_seconds", seconds(p.other_functions)},
          {"last_steps", last}};
}

std::string critical_path_text(const sim::Result& r) {
  if (!r.critical_path) return "";
  const sim::CriticalPath& p = *r.critical_path;
  std::string out = fmt::format(
      "critical path to rank {}'s MPI_Finalize: {:.3f} us = computation {:.3f} + MPI {:.3f} + "
      "network {:.3f} us\n",
      r.critical_path_rank, seconds(p.length()) * 1e6, seconds(p.compute) * 1e6,
      seconds(p.mpi) * 1e6, seconds(p.network) * 1e6);
  std::string ranks, functions;
  for (const auto& s : p.ranks)
    if (s.key >= 0) ranks += fmt::format(" {}:{:.3f}", s.key, seconds(s.time) * 1e6);
  for (const auto& s : p.functions)
    if (s.key >= 0)
      functions += fmt::format(" {}:{:.3f}", path_function_name(s.key), seconds(s.time) * 1e6);
  out += "  on the path, per rank (us):" + ranks +
         (p.other_ranks > model::Picoseconds{}
              ? fmt::format(" other:{:.3f}", seconds(p.other_ranks) * 1e6)
              : "") +
         "\n  per function (us):" + functions +
         (p.other_functions > model::Picoseconds{}
              ? fmt::format(" other:{:.3f}", seconds(p.other_functions) * 1e6)
              : "") +
         "\n  last steps:";
  for (const auto& step : p.last_steps())
    out += fmt::format(" [rank {} {} {:.3f}-{:.3f}]", step.rank, path_function_name(step.function),
                       seconds(step.start) * 1e6, seconds(step.end) * 1e6);
  return out + "\n";
}

}  // namespace

nlohmann::json simulation_to_json(const sim::Result& r) {
  const SimulationErrors err = simulation_errors(r);
  auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t i = 0; i < r.per_rank.size(); ++i) {
    const auto& rk = r.per_rank[i];
    ranks.push_back({{"rank", i},
                     {"predicted_seconds", seconds(rk.predicted_ps)},
                     {"measured_seconds", rk.measured_ns * 1e-9},
                     {"predicted_in_mpi_seconds", seconds(rk.predicted.in_mpi())},
                     {"measured_in_mpi_seconds", rk.measured_in_mpi_ns * 1e-9},
                     {"e_rel_percent", num(e_rel(seconds(rk.predicted_ps), rk.measured_ns * 1e-9))},
                     {"in_mpi_e_rel_percent",
                      num(e_rel(seconds(rk.predicted.in_mpi()), rk.measured_in_mpi_ns * 1e-9))},
                     {"breakdown", breakdown_json(rk.predicted)},
                     {"records", rk.records},
                     {"forced_completions", rk.forced_completions},
                     {"early_completions", rk.early_completions}});
  }
  nlohmann::json functions = nlohmann::json::object();
  for (const auto& [name, f] : r.functions)
    functions[name] = {{"calls", f.calls},
                       {"predicted_seconds", seconds(f.predicted_ps)},
                       {"measured_seconds", f.measured_ns * 1e-9}};
  nlohmann::json colls = nlohmann::json::array();
  for (const auto& c : r.collectives)
    colls.push_back({{"operation", c.operation},
                     {"algorithm", c.algorithm},
                     {"openmpi", c.openmpi},
                     {"exact", c.exact},
                     {"calls", c.calls},
                     {"note", c.note}});
  return {
      {"model", r.model},
      {"predicted_seconds", seconds(r.predicted_ps)},
      {"predicted_ps", r.predicted_ps.count()},
      {"measured_seconds", r.measured_ns * 1e-9},
      {"e_rel_percent", num(err.has_measurement ? err.total_e_rel_percent : std::nan(""))},
      {"e_abs_percent", num(err.has_measurement ? err.e_abs_percent : std::nan(""))},
      {"in_mpi_e_abs_percent", num(err.has_measurement ? err.in_mpi_e_abs_percent : std::nan(""))},
      {"forced_completions", r.forced_completions},
      {"early_completions", r.early_completions},
      {"records", r.records},
      {"messages", r.messages},
      {"messages_beyond_measured",
       {{"messages", r.beyond_measured.messages},
        {"largest_bytes", r.beyond_measured.largest_bytes}}},
      {"engine_events", r.events_processed},
      {"peak_operations_in_flight", r.peak_ops_in_flight},
      {"contention",
       {{"model", r.contention},
        {"shared_transfers", r.shared_transfers},
        {"rate_recomputations", r.rate_recomputations},
        {"largest_component", r.largest_sharing_component}}},
      {"opaque_seconds", seconds(r.total.opaque)},
      {"breakdown", breakdown_json(r.total)},
      {"functions", functions},
      {"collectives", colls},
      {"critical_path", critical_path_json(r)},
      {"state_check", state_check_json(r)},
      {"notes", r.notes},
      {"ranks", ranks}};
}

std::string simulation_text(const sim::Result& r, bool compare, TableSink* sink) {
  std::string out;
  const SimulationErrors err = simulation_errors(r);
  out += fmt::format(
      "model {}: predicted {} (slowest rank, end of MPI_Init to start of "
      "MPI_Finalize)",
      r.model, time_text(seconds(r.predicted_ps)));
  if (err.has_measurement)
    out += fmt::format(", measured {}, E_rel {}", time_text(r.measured_ns * 1e-9),
                       percent(err.total_e_rel_percent));
  out += "\n";
  // Where the time went, summed over ranks.
  const double all = static_cast<double>(std::max(model::Picoseconds{1}, r.total.total()).count());
  std::string parts;
  for (const Part& p : kParts)
    parts += fmt::format("{}{} {:.1f} %", parts.empty() ? "" : ", ", p.name,
                         static_cast<double>((r.total.*p.field).count()) / all * 100.0);
  out += "  time of all ranks: " + parts + "\n";
  if (r.total.opaque > model::Picoseconds{})
    out += fmt::format(
        "  {} of the predicted time comes from unmodeled (opaque) MPI calls at "
        "their recorded duration\n",
        time_text(seconds(r.total.opaque)));
  out += fmt::format(
      "  forced completions {}, early completions {} (how far the simulated "
      "timing drifts from the traced one)\n",
      r.forced_completions, r.early_completions);

  if (r.per_rank.size() <= kPerRankLimit) {
    std::vector<std::string> head{"rank", "predicted_us"};
    if (compare) {
      head.insert(head.end(),
                  {"measured_us", "E_rel", "in_MPI_pred_us", "in_MPI_meas_us", "in_MPI_E_rel"});
    }
    head.insert(head.end(), {"compute_us", "overhead_us", "transfer_us", "late_send_us",
                             "late_recv_us", "sync_us", "opaque_us"});
    TextTable t(head);
    for (std::size_t i = 0; i < r.per_rank.size(); ++i) {
      const auto& rk = r.per_rank[i];
      std::vector<std::string> row{std::to_string(i), number(seconds(rk.predicted_ps) * 1e6)};
      if (compare) {
        row.insert(
            row.end(),
            {number(rk.measured_ns * 1e-3),
             percent(e_rel(seconds(rk.predicted_ps), rk.measured_ns * 1e-9)),
             number(seconds(rk.predicted.in_mpi()) * 1e6), number(rk.measured_in_mpi_ns * 1e-3),
             percent(e_rel(seconds(rk.predicted.in_mpi()), rk.measured_in_mpi_ns * 1e-9))});
      }
      for (const Part& p : kParts)
        row.push_back(number(seconds(rk.predicted.*p.field) * 1e6));
      t.add_row(row);
    }
    out += render(t, sink, r.model + "_per_rank");
  } else {
    // Many ranks: the distribution over ranks of each figure.
    TextTable t({"over ranks", "min_us", "median_us", "p90_us", "p99_us", "max_us"});
    auto add = [&](const std::string& name, auto value) {
      std::vector<double> v;
      v.reserve(r.per_rank.size());
      for (const auto& rk : r.per_rank)
        v.push_back(value(rk));
      std::sort(v.begin(), v.end());
      t.add_row({name, number(v.front() * 1e6), number(v[v.size() / 2] * 1e6),
                 number(stats::nearest_rank(v, 0.90) * 1e6),
                 number(stats::nearest_rank(v, 0.99) * 1e6), number(v.back() * 1e6)});
    };
    add("predicted", [](const sim::RankResult& rk) { return seconds(rk.predicted_ps); });
    if (compare) add("measured", [](const sim::RankResult& rk) { return rk.measured_ns * 1e-9; });
    for (const Part& p : kParts)
      add(p.name, [&p](const sim::RankResult& rk) { return seconds(rk.predicted.*p.field); });
    out += fmt::format("  {} ranks (more than {}: distributions instead of one row per rank)\n",
                       r.per_rank.size(), kPerRankLimit);
    out += render(t, sink, r.model + "_over_ranks");
  }
  if (compare && err.has_measurement)
    out += fmt::format("E_abs over ranks: total time {:.1f} %, time inside MPI {:.1f} %\n",
                       err.e_abs_percent, err.in_mpi_e_abs_percent);
  if (!r.functions.empty()) {
    TextTable t({"function", "calls", "predicted_us", "measured_us"});
    for (const auto& [name, f] : r.functions)
      t.add_row({name, std::to_string(f.calls), number(seconds(f.predicted_ps) * 1e6),
                 number(f.measured_ns * 1e-3)});
    out += render(t, sink, r.model + "_functions");
  }
  for (const auto& c : r.collectives)
    out += fmt::format("  {}: {}{} ({} calls; {})\n", c.operation, c.algorithm,
                       c.openmpi.empty() ? "" : fmt::format(" for Open MPI's {}", c.openmpi),
                       c.calls, c.note);
  out += critical_path_text(r);
  if (r.contention != "none")
    out += fmt::format(
        "  contention {}: {} inter-node transfers shared node links; {} rate recomputations, "
        "largest set of interdependent transfers {}\n",
        r.contention, r.shared_transfers, r.rate_recomputations, r.largest_sharing_component);
  if (r.state_check)
    out += fmt::format(
        "  machine state: the tracer's ping-pong at MPI_Init {:.3g} us a round trip, the "
        "profile's model {:.3g} us ({:.2f}x, {} rank pair{})\n",
        r.state_check->trace_round_trip_us, r.state_check->model_round_trip_us,
        r.state_check->ratio, r.state_check->pairs, r.state_check->pairs == 1 ? "" : "s");
  for (const auto& n : r.notes)
    out += "  note: " + n + "\n";
  return out;
}

std::string models_side_by_side(const std::vector<sim::Result>& results, TableSink* sink) {
  TextTable t(
      {"model", "predicted_us", "measured_us", "E_rel", "E_abs_ranks", "E_abs_in_MPI", "forced"});
  for (const auto& r : results) {
    const SimulationErrors e = simulation_errors(r);
    t.add_row({r.model, number(seconds(r.predicted_ps) * 1e6), number(r.measured_ns * 1e-3),
               e.has_measurement ? percent(e.total_e_rel_percent) : "n/a",
               e.has_measurement ? fmt::format("{:.1f} %", e.e_abs_percent) : "n/a",
               e.has_measurement ? fmt::format("{:.1f} %", e.in_mpi_e_abs_percent) : "n/a",
               std::to_string(r.forced_completions)});
  }
  return render(t, sink, "models");
}

void plot_simulation(const std::filesystem::path& output, const std::vector<sim::Result>& results,
                     const std::string& title) {
  if (results.empty()) return;
  // Columns: rank, measured window, measured in MPI, then per model window and in MPI (ms).
  std::string data;
  const std::size_t ranks = results.front().per_rank.size();
  for (std::size_t r = 0; r < ranks; ++r) {
    const sim::RankResult& m = results.front().per_rank[r];
    data += fmt::format("{} {:.9g} {:.9g}", r, m.measured_ns * 1e-6, m.measured_in_mpi_ns * 1e-6);
    for (const auto& result : results) {
      const sim::RankResult& p = result.per_rank[r];
      data += fmt::format(" {:.9g} {:.9g}", static_cast<double>(p.predicted_ps.count()) * 1e-9,
                          static_cast<double>(p.predicted.in_mpi().count()) * 1e-9);
    }
    data += "\n";
  }
  // Points and lines by rank read at any rank count (clustered bars do not past a few dozen).
  const auto panel = [&](const std::string& what, int measured_column, int offset) {
    std::string p = fmt::format(
        "set title '{}'\nset xlabel 'rank'\nset ylabel '{} (ms)'\n"
        "plot 'ranks.dat' u 1:{} w lp pt 7 ps 0.8 lw 2 lc rgb 'black' title 'measured'",
        what, what, measured_column);
    for (std::size_t i = 0; i < results.size(); ++i)
      p += fmt::format(", 'ranks.dat' u 1:{} w lp pt {} ps 0.8 lw 1.5 title '{}'",
                       4 + 2 * i + static_cast<std::size_t>(offset), 4 + i, results[i].model);
    return p + "\n";
  };
  std::string script = fmt::format(
      "set multiplot layout 1,2 title {}\nset key top left\nset grid\nset yrange [0:*]\n"
      "set xrange [-0.5:{}]\n",
      gnuplot_string(title), static_cast<double>(ranks) - 0.5);
  if (ranks <= 16) script += "set xtics 1\n";
  script += panel("window: MPI_Init to MPI_Finalize", 2, 0);
  script += panel("time inside MPI", 3, 1);
  script += "unset multiplot\n";
  run_gnuplot(output, script, {{"ranks.dat", data}});
}

}  // namespace commgauge::report
