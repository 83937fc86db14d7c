#include "report/statistics_json.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace commgauge::report {

nlohmann::json summary_json(const stats::Summary& s) {
  return {{"min", s.min},
          {"median", s.median},
          {"mean", s.mean},
          {"max", s.max},
          {"variance", s.variance},
          {"sd", s.sd},
          {"cv", s.cv_percent},
          {"se", s.se},
          {"rse", s.rse}};
}

nlohmann::json distribution_json(const stats::Distribution& d) {
  nlohmann::json bins = nlohmann::json::array();
  for (const auto& b : d.bins) {
    bins.push_back(
        {{"from_us", b.lower},
         {"to_us", std::isinf(b.upper) ? nlohmann::json(nullptr) : nlohmann::json(b.upper)},
         {"count", b.count}});
  }
  return {{"bin_width_us", d.bin_width}, {"bins", std::move(bins)}};  // moved: no copy
}

nlohmann::json frequency_json(const stats::Frequency& f) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : f.rows)
    rows.push_back({{"value_us", r.value}, {"count", r.count}});
  nlohmann::json j = {{"quantum_us", f.quantum}, {"rows", std::move(rows)}};
  if (f.rest_distinct > 0) {
    j["more"] = {
        {"distinct_values", f.rest_distinct}, {"count", f.rest_count}, {"from_us", f.rest_from}};
  }
  return j;
}

std::string distribution_text(const stats::Distribution& d) {
  std::string out;
  for (const auto& b : d.bins) {
    if (std::isinf(b.upper)) {
      out += fmt::format("{:10.4f} <= times with count = {}\n", b.lower, b.count);
    } else {
      out +=
          fmt::format("{:10.4f} <= times < {:10.4f} with count = {}\n", b.lower, b.upper, b.count);
    }
  }
  return out;
}

std::string frequency_text(const stats::Frequency& f) {
  std::string out;
  for (const auto& r : f.rows)
    out += fmt::format("time = {:10.4f} with frequency = {}\n", r.value, r.count);
  if (f.rest_distinct > 0) {
    out += fmt::format("... {} more distinct values from {:.4f} with total frequency {}\n",
                       f.rest_distinct, f.rest_from, f.rest_count);
  }
  return out;
}

std::string summary_text(const stats::Summary& s) {
  return fmt::format(
      "minimum time = {:.4f}\nmedian time = {:.4f}\naverage time = {:.4f}\nmaximum time = {:.4f}\n"
      "\nvariance = {:.4E}\nstandard deviation = {:.4E}\ncoefficient of variation = {:.4E}\n"
      "standard error = {:.4E}\nrelative standard error = {:.4E}\n",
      s.min, s.median, s.mean, s.max, s.variance, s.sd, s.cv_percent, s.se, s.rse);
}

}  // namespace commgauge::report
