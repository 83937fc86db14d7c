#include "report/heldout_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/text_table.hpp"
#include "stats/descriptive.hpp"
#include "stats/prediction_error.hpp"

namespace commgauge::report {

namespace {

std::optional<double> relative_error(const std::optional<double>& predicted, double measured) {
  if (!predicted) return std::nullopt;
  return stats::relative_error(*predicted, measured);
}

}  // namespace

std::vector<HeldOutSummary> summarise_heldout(const measure::HeldOutResult& r,
                                              const std::vector<HeldOutPrediction>& predictions) {
  std::vector<HeldOutSummary> out;
  for (const auto& p : predictions) {
    std::map<std::string, std::vector<std::pair<double, std::uint64_t>>> by_kind;
    for (std::size_t i = 0; i < r.points.size() && i < p.predicted_us.size(); ++i) {
      const auto e = relative_error(p.predicted_us[i], r.points[i].time.median_us);
      if (e)
        by_kind[measure::to_string(r.points[i].kind)].emplace_back(std::abs(*e), r.points[i].bytes);
    }
    for (const auto& [kind, errors] : by_kind) {
      HeldOutSummary s;
      s.model = p.model;
      s.kind = kind;
      std::vector<double> e;
      for (const auto& [err, bytes] : errors) {
        e.push_back(err);
        if (err >= s.worst_abs_error) {
          s.worst_abs_error = err;
          s.worst_bytes = bytes;
        }
      }
      s.median_abs_error = stats::median(e);
      s.points = e.size();
      out.push_back(s);
    }
  }
  return out;
}

std::string heldout_table(const measure::HeldOutResult& r,
                          const std::vector<HeldOutPrediction>& predictions, TableSink* sink) {
  std::string out = fmt::format(
      "HELD-OUT VALIDATION (never used in any fit: cells of loggp's first {} rounds, shuffled with "
      "its sweep, seed {}{})\n",
      r.points.empty() ? 0 : r.points.front().rounds_us.size(), r.seed,
      r.collectives ? "" : "; this transport has no collectives: ping-pong and exchanges only");
  std::vector<std::string> head = {"kind", "bytes", "measured_us [95 % CI]"};
  for (const auto& p : predictions)
    head.push_back(p.model + " E_rel");
  TextTable t(head);
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto& pt = r.points[i];
    std::vector<std::string> row = {
        measure::to_string(pt.kind), std::to_string(pt.bytes),
        fmt::format("{} [{}, {}]", number(pt.time.median_us), number(pt.time.lower_us, 3),
                    number(pt.time.upper_us, 3))};
    for (const auto& p : predictions) {
      const auto e = i < p.predicted_us.size()
                         ? relative_error(p.predicted_us[i], pt.time.median_us)
                         : std::nullopt;
      row.push_back(e ? fmt::format("{:+.1f} %", 100 * *e) : "-");
    }
    t.add_row(row);
  }
  out += render(t, sink, "heldout");
  for (const auto& p : predictions) {
    if (!p.not_applicable.empty())
      out += fmt::format("{}: not applicable: {}\n", p.model, p.not_applicable);
  }
  for (const auto& s : summarise_heldout(r, predictions)) {
    out += fmt::format(
        "{} predicts the held-out {} within {:.1f} % median, {:.1f} % worst (at {} B)\n", s.model,
        s.kind, 100 * s.median_abs_error, 100 * s.worst_abs_error, s.worst_bytes);
  }
  return out;
}

nlohmann::json heldout_json(const measure::HeldOutResult& r,
                            const std::vector<HeldOutPrediction>& predictions) {
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto& pt = r.points[i];
    nlohmann::json predicted = nlohmann::json::object(), errors = nlohmann::json::object();
    for (const auto& p : predictions) {
      if (i >= p.predicted_us.size() || !p.predicted_us[i]) continue;
      predicted[p.model] = *p.predicted_us[i];
      errors[p.model] = *relative_error(p.predicted_us[i], pt.time.median_us);
    }
    points.push_back({{"kind", measure::to_string(pt.kind)},
                      {"bytes", pt.bytes},
                      {"measured_us", pt.time.median_us},
                      {"ci95_us", {pt.time.lower_us, pt.time.upper_us}},
                      {"rounds", pt.rounds_us.size()},
                      {"predicted_us", predicted},
                      {"e_rel", errors}});
  }
  nlohmann::json summary = nlohmann::json::array();
  for (const auto& s : summarise_heldout(r, predictions)) {
    summary.push_back({{"model", s.model},
                       {"kind", s.kind},
                       {"median_e_abs", s.median_abs_error},
                       {"worst_e_abs", s.worst_abs_error},
                       {"worst_bytes", s.worst_bytes},
                       {"points", s.points}});
  }
  nlohmann::json na = nlohmann::json::object();
  for (const auto& p : predictions) {
    if (!p.not_applicable.empty()) na[p.model] = p.not_applicable;
  }
  return {{"seed", r.seed},
          {"collectives", r.collectives},
          {"points", points},
          {"summary", summary},
          {"not_applicable", na}};
}

}  // namespace commgauge::report
