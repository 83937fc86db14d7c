#include "report/prediction.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/input_file.hpp"
#include "common/units.hpp"
#include "profile/json_file.hpp"
#include "report/plot.hpp"
#include "report/text_table.hpp"
#include "stats/prediction_error.hpp"

namespace commgauge::report {

namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// A measured one-way time the errors can be computed against: at least a picosecond (a
// subnormal 1e-320 gave E_rel = +inf) and at most 1e9 us; its interval, if any, around it.
void check_measured(const Measured& m, const std::string& where) {
  constexpr double kLeast_us = 1e-6, kMost_us = 1e9;
  if (!(m.one_way_us >= kLeast_us && m.one_way_us <= kMost_us))
    throw InputError(
        where, fmt::format("a measured time must be from 1e-06 to 1e+09 us, got {}", m.one_way_us));
  if (m.lower_us && m.upper_us &&
      !(*m.lower_us >= 0 && *m.lower_us <= m.one_way_us && m.one_way_us <= *m.upper_us &&
        std::isfinite(*m.upper_us)))
    throw InputError(where, fmt::format("the interval [{}, {}] must hold the median {}",
                                        *m.lower_us, *m.upper_us, m.one_way_us));
}

// "size,time" per line (';' also separates; '#' starts a comment). The size is a byte count as
// users write sizes (8, 8KiB); the time a finite number of microseconds above 0, one-way unless
// the header names "rtt". Only a first line whose size field is not a number is a header.
std::vector<Measured> read_csv(const std::filesystem::path& path) {
  std::istringstream in(read_input_file(path));
  std::vector<Measured> out;
  std::map<std::uint64_t, int> line_of_size;
  std::string line;
  int number = 0;
  bool rtt = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = fmt::format("{}:{}", path.string(), number);
    line = trimmed(line);
    if (line.empty() || line[0] == '#') continue;
    std::replace(line.begin(), line.end(), ';', ',');
    const auto comma = line.find(',');
    if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos) {
      throw InputError(where, fmt::format("expected \"size,time\", got \"{}\"", line));
    }
    const std::string a = trimmed(line.substr(0, comma));
    const std::string b = trimmed(line.substr(comma + 1));
    if (number == 1 && out.empty() &&
        (a.empty() || !std::isdigit(static_cast<unsigned char>(a[0])))) {
      rtt = b.find("rtt") != std::string::npos;  // a header
      continue;
    }
    const std::uint64_t size = parse_byte_size(a, where);
    char* end = nullptr;
    const double time = std::strtod(b.c_str(), &end);
    if (b.empty() || end != b.c_str() + b.size() || !std::isfinite(time) || !(time > 0)) {
      throw InputError(where, fmt::format("expected a time in microseconds, a finite number "
                                          "above 0, got \"{}\"",
                                          b));
    }
    // One time per size: a second was silently the one compared.
    if (const auto [first, added] = line_of_size.try_emplace(size, number); !added)
      throw InputError(
          where, fmt::format("size {} B is given twice (first on line {})", size, first->second));
    out.push_back({size, rtt ? time / 2 : time, std::nullopt, std::nullopt});
    check_measured(out.back(), where);
  }
  if (out.empty()) throw InputError(path.string(), "holds no \"size,time\" line");
  return out;
}

}  // namespace

std::vector<Measured> read_measured(const std::filesystem::path& path) {
  if (path.extension() == ".csv" || path.extension() == ".txt") return read_csv(path);
  const nlohmann::json doc = profile::read_json_file(path);
  const std::string file = path.string();
  // A field of the document by its JSON pointer, named in the error when it is missing or not
  // what it must be.
  const auto number_at = [&doc, &file](const std::string& pointer) {
    const nlohmann::json::json_pointer at(pointer);
    if (!doc.contains(at) || !doc.at(at).is_number())
      throw InputError(file, pointer + ": expected a number");
    return doc.at(at).get<double>();
  };
  const auto size_at = [&doc, &file](const std::string& pointer) {
    const nlohmann::json::json_pointer at(pointer);
    if (!doc.contains(at) || !doc.at(at).is_number_unsigned())
      throw InputError(file, pointer + ": expected a size in bytes, a whole number >= 0");
    return doc.at(at).get<std::uint64_t>();
  };
  const auto list_at = [&doc, &file](const std::string& key) {
    if (!doc.at(key).is_array() || doc.at(key).empty())
      throw InputError(file, "/" + key + ": expected a list of measurements");
    return doc.at(key).size();
  };
  std::vector<Measured> out;
  if (doc.contains("results") && doc.value("method", "") == "latency") {
    for (std::size_t i = 0, n = list_at("results"); i < n; ++i) {
      const std::string at = fmt::format("/results/{}", i);
      Measured m{size_at(at + "/size_bytes"), number_at(at + "/stats_us/median"), std::nullopt,
                 std::nullopt};
      if (doc["results"][i].contains("median_ci95_us")) {
        m.lower_us = number_at(at + "/median_ci95_us/0");
        m.upper_us = number_at(at + "/median_ci95_us/1");
      }
      check_measured(m, file + ": " + at);
      out.push_back(m);
    }
  } else if (doc.contains("points") && doc.value("format", "") == "commgauge-link-params") {
    for (std::size_t i = 0, n = list_at("points"); i < n; ++i) {
      const std::string at = fmt::format("/points/{}", i);
      Measured m{size_at(at + "/size_bytes"), number_at(at + "/prtt1/median_us") / 2, std::nullopt,
                 std::nullopt};
      const auto& prtt1 = doc["points"][i]["prtt1"];
      if (prtt1.contains("ci95_lower_us") && prtt1.contains("ci95_upper_us")) {
        m.lower_us = number_at(at + "/prtt1/ci95_lower_us") / 2;
        m.upper_us = number_at(at + "/prtt1/ci95_upper_us") / 2;
      }
      check_measured(m, file + ": " + at);
      out.push_back(m);
    }
  } else {
    throw InputError(path.string(),
                     "expected a latency JSON (commgauge latency --json), a loggp "
                     "JSON (commgauge loggp --json) or a CSV of size,time");
  }
  return out;
}

PingPongPrediction predict_pingpong(const model::CommModel& m,
                                    const std::vector<std::uint64_t>& sizes,
                                    const std::vector<Measured>& measured,
                                    const std::vector<bool>& extrapolated,
                                    std::uint64_t switch_bytes) {
  PingPongPrediction p;
  p.model = m.name();
  std::vector<double> errors, above;
  const std::uint64_t S = switch_bytes;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    PingPongPoint pt;
    pt.bytes = sizes[i];
    pt.rtt_us = model::to_microseconds(m.round_trip(sizes[i]));
    pt.one_way_us = pt.rtt_us / 2;
    pt.extrapolated = i < extrapolated.size() && extrapolated[i];
    for (const auto& meas : measured) {
      if (meas.bytes != sizes[i]) continue;
      pt.measured_one_way_us = meas.one_way_us;
      pt.measured_lower_us = meas.lower_us;
      pt.measured_upper_us = meas.upper_us;
      const auto e = stats::relative_error(pt.one_way_us, meas.one_way_us);
      if (!e) continue;
      pt.e_rel_percent = 100 * *e;
      errors.push_back(*pt.e_rel_percent);
      if (S > 0 && sizes[i] >= S) above.push_back(*pt.e_rel_percent);
    }
    p.points.push_back(pt);
  }
  p.e_abs_percent = stats::mean_absolute_error(errors);
  p.e_abs_above_switch_percent = stats::mean_absolute_error(above);
  return p;
}

std::string pingpong_table(const std::vector<PingPongPrediction>& preds, TableSink* sink) {
  std::vector<std::string> header = {"size_B"};
  const bool measured = !preds.empty() && preds.front().e_abs_percent.has_value();
  if (measured) header.push_back("measured_1way_us");
  for (const auto& p : preds) {
    header.push_back(p.model + "_1way_us");
    if (measured) header.push_back(p.model + "_Erel_%");
  }
  TextTable t(header);
  for (std::size_t i = 0; i < preds.front().points.size(); ++i) {
    const auto& first = preds.front().points[i];
    std::vector<std::string> row = {std::to_string(first.bytes) + (first.extrapolated ? "*" : "")};
    if (measured)
      row.push_back(first.measured_one_way_us ? number(*first.measured_one_way_us) : "");
    for (const auto& p : preds) {
      const auto& pt = p.points[i];
      row.push_back(number(pt.one_way_us));
      if (measured)
        row.push_back(pt.e_rel_percent ? fmt::format("{:+.1f}", *pt.e_rel_percent) : "");
    }
    t.add_row(row);
  }
  std::string out =
      "PREDICTED PING-PONG (one-way = round trip / 2)\n" + render(t, sink, "predicted_pingpong");
  for (const auto& p : preds) {
    if (p.e_abs_percent) {
      out += fmt::format("{}: E_abs = {:.1f} % (mean |E_rel|, seed 003 §VI-B)", p.model,
                         *p.e_abs_percent);
      if (p.e_abs_above_switch_percent) {
        out += fmt::format("; above the rendezvous switch {:.1f} %", *p.e_abs_above_switch_percent);
      }
      out += "\n";
    }
  }
  bool any_extrapolated = false;
  for (const auto& pt : preds.front().points)
    any_extrapolated = any_extrapolated || pt.extrapolated;
  if (any_extrapolated) out += "* outside the sizes the profile was measured at (--extrapolate)\n";
  return out;
}

nlohmann::json pingpong_json(const std::vector<PingPongPrediction>& preds,
                             const nlohmann::json& header) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& p : preds) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& pt : p.points) {
      nlohmann::json j = {{"size_bytes", pt.bytes},
                          {"rtt_us", pt.rtt_us},
                          {"one_way_us", pt.one_way_us},
                          {"extrapolated", pt.extrapolated}};
      if (pt.measured_one_way_us) j["measured_one_way_us"] = *pt.measured_one_way_us;
      if (pt.measured_lower_us && pt.measured_upper_us)
        j["measured_ci95_us"] = {*pt.measured_lower_us, *pt.measured_upper_us};
      if (pt.e_rel_percent) j["e_rel_percent"] = *pt.e_rel_percent;
      points.push_back(j);
    }
    nlohmann::json m = {{"model", p.model}, {"points", points}};
    if (p.e_abs_percent) m["e_abs_percent"] = *p.e_abs_percent;
    if (p.e_abs_above_switch_percent)
      m["e_abs_above_switch_percent"] = *p.e_abs_above_switch_percent;
    models.push_back(m);
  }
  nlohmann::json out = header;
  out["scenario"] = "pingpong";
  out["models"] = models;
  if (preds.size() == 1) {  // the single-model shape: {"model", "points"}
    out["model"] = preds[0].model;
    out["points"] = models[0]["points"];
    if (preds[0].e_abs_percent) out["e_abs_percent"] = *preds[0].e_abs_percent;
  }
  return out;
}

void plot_pingpong(const std::filesystem::path& output,
                   const std::vector<PingPongPrediction>& preds, const std::string& title) {
  std::vector<std::pair<std::string, std::string>> files;
  std::string script = fmt::format(
      "set title {}\nset logscale xy\nset xlabel 'message size (bytes)'\n"
      "set ylabel 'one-way time (us)'\nset key top left\nset grid\nplot ",
      gnuplot_string(title));
  // The measured medians with their 95 % intervals where the file gave them (else a bar of zero
  // length).
  std::string measured;
  bool intervals = false;
  for (const auto& pt : preds.front().points) {
    if (!pt.measured_one_way_us) continue;
    const double m = *pt.measured_one_way_us;
    intervals = intervals || pt.measured_lower_us.has_value();
    measured += fmt::format("{} {:.6f} {:.6f} {:.6f}\n", pt.bytes, m,
                            std::min(pt.measured_lower_us.value_or(m), m),
                            std::max(pt.measured_upper_us.value_or(m), m));
  }
  std::string sep;
  if (!measured.empty()) {
    files.emplace_back("measured.dat", measured);
    script += intervals ? "'measured.dat' u 1:2:3:4 w yerrorbars pt 7 ps 1.2 lc rgb 'black' title "
                          "'measured (median, 95 % interval)'"
                        : "'measured.dat' u 1:2 w p pt 7 ps 1.2 lc rgb 'black' title 'measured'";
    sep = ", ";
  }
  for (const auto& p : preds) {
    std::string data;
    for (const auto& pt : p.points)
      data += fmt::format("{} {:.6f}\n", pt.bytes, pt.one_way_us);
    files.emplace_back(p.model + ".dat", data);
    script += fmt::format("{}'{}.dat' u 1:2 w l lw 2 title '{}'", sep, p.model, p.model);
    sep = ", ";
  }
  run_gnuplot(output, script, files);
}

namespace {
std::string case_name(model::OverlapCase c) {
  switch (c) {
    case model::OverlapCase::eager_T:
      return "eager_T";
    case model::OverlapCase::eager_TA:
      return "eager_TA";
    case model::OverlapCase::dcp_RAT:
      return "DCP_RAT";
    case model::OverlapCase::dcp_RTA:
      return "DCP_RTA";
    case model::OverlapCase::icp_RTA:
      return "ICP_RTA";
  }
  return "?";
}
}  // namespace

std::string overlap_prediction_table(const std::vector<OverlapPrediction>& preds, double comp_us,
                                     TableSink* sink) {
  std::string out = fmt::format(
      "PREDICTED MPI_Isend / compute {} us / MPI_Wait on both sides (seed 001 Fig. 1)\n", comp_us);
  for (const auto& p : preds) {
    TextTable t({"size_B", "case", "Isend_us", "Osw_us", "Os_us", "Irecv_us", "Orw_us", "Or_us",
                 "Tc_us", "sender_done_us", "receiver_done_us", "Rso", "Rro"});
    for (const auto& [k, c] : p.points) {
      std::string name = case_name(c.mechanism);
      std::replace(name.begin(), name.end(), '_', ' ');
      auto us = [](model::Picoseconds ps) { return number(model::to_microseconds(ps)); };
      t.add_row({std::to_string(k), name, us(c.isend), us(c.osw), us(c.os), us(c.irecv), us(c.orw),
                 us(c.orr), us(c.tc), us(c.sender_done), us(c.receiver_done), number(c.rso, 3),
                 number(c.rro, 3)});
    }
    out += "model " + p.model + "\n" + render(t, sink, "predicted_overlap_" + p.model);
  }
  return out;
}

nlohmann::json overlap_prediction_json(const std::vector<OverlapPrediction>& preds,
                                       const nlohmann::json& header) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& p : preds) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& [k, c] : p.points) {
      auto us = [](model::Picoseconds ps) { return model::to_microseconds(ps); };
      points.push_back({{"size_bytes", k},
                        {"case", case_name(c.mechanism)},
                        {"isend_us", us(c.isend)},
                        {"osw_us", us(c.osw)},
                        {"os_us", us(c.os)},
                        {"irecv_us", us(c.irecv)},
                        {"orw_us", us(c.orw)},
                        {"or_us", us(c.orr)},
                        {"tc_us", us(c.tc)},
                        {"sender_done_us", us(c.sender_done)},
                        {"receiver_done_us", us(c.receiver_done)},
                        {"rso", c.rso},
                        {"rro", c.rro}});
    }
    models.push_back({{"model", p.model}, {"points", points}});
  }
  nlohmann::json out = header;
  out["scenario"] = "isend-compute-wait";
  out["models"] = models;
  if (preds.size() == 1) {
    out["model"] = preds[0].model;
    out["points"] = models[0]["points"];
  }
  return out;
}

}  // namespace commgauge::report
