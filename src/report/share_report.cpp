#include "report/share_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"
#include "profile/json_file.hpp"
#include "report/plot.hpp"
#include "report/text_table.hpp"
#include "stats/prediction_error.hpp"

namespace commgauge::report {

namespace {
// A coverage is a lower bound: printed rounded down, never up.
double floor_percent(double fraction) {
  return std::floor(1000 * fraction) / 10;
}
}  // namespace

model::Scheme scheme_of_share_json(const nlohmann::json& doc, const std::string& where) {
  if (!doc.is_object() || doc.value("method", "") != "share" || !doc.contains("scheme")) {
    throw InputError(where, "expected the JSON of commgauge share (\"method\": \"share\")");
  }
  model::Scheme s;
  s.origin = where;
  try {
    s.nodes = doc["scheme"].at("nodes").get<int>();
    for (const auto& c : doc["scheme"].at("communications")) {
      s.communications.push_back({c.at("name").get<std::string>(), c.at("source_node").get<int>(),
                                  c.at("dest_node").get<int>(),
                                  c.at("bytes").get<std::uint64_t>()});
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where, fmt::format("/scheme: {}", e.what()));
  }
  model::validate_scheme(s, where + ": /scheme");
  return s;
}

std::vector<double> read_measured_penalties(const std::string& path, const model::Scheme& scheme) {
  constexpr double kLeastPenalty = 1e-3, kMostPenalty = 1e6;
  const auto doc = profile::read_json_file(path);
  const model::Scheme measured_scheme = scheme_of_share_json(doc, path);
  std::map<std::string, double> by_name;
  for (const auto& c : doc.value("communications", nlohmann::json::array())) {
    if (!c.contains("measured_penalty")) continue;
    const double penalty =
        c["measured_penalty"].is_number() ? c["measured_penalty"].get<double>() : std::nan("");
    // A penalty is a ratio of two measured times (the shared over the lone one): about 1 or
    // more; bounded so that every error and fit computed from it stays finite (1e-320 gave
    // E_abs = inf %, 1e300 a GigE beta that share itself refuses).
    if (!(penalty >= kLeastPenalty && penalty <= kMostPenalty)) {
      throw InputError(path, fmt::format("communication {}: measured_penalty must be a number "
                                         "from 0.001 to 1e6, got {}",
                                         c.value("name", nlohmann::json()).dump(),
                                         c["measured_penalty"].dump()));
    }
    by_name[c.at("name").get<std::string>()] = penalty;
  }
  std::vector<double> out;
  for (const auto& c : scheme.communications) {
    const auto it = by_name.find(c.name);
    if (it == by_name.end()) {
      throw InputError(path,
                       fmt::format("has no measured penalty for communication \"{}\"", c.name));
    }
    out.push_back(it->second);
  }
  if (measured_scheme.communications.size() != scheme.communications.size()) {
    throw InputError(path, "was measured with another scheme (its communications differ)");
  }
  return out;
}

std::pair<std::vector<double>, double> errors(const std::vector<double>& predicted,
                                              const std::vector<double>& measured) {
  std::vector<double> e_rel;
  for (std::size_t i = 0; i < predicted.size(); ++i)
    e_rel.push_back(100 * stats::relative_error(predicted[i], measured[i]).value_or(std::nan("")));
  return {e_rel, stats::mean_absolute_error(e_rel).value_or(std::nan(""))};
}

std::string share_table(const model::Scheme& s, const std::optional<measure::ShareResult>& r,
                        const std::vector<double>& measured, const Predictions& p,
                        TableSink* sink) {
  std::vector<std::string> header = {"comm", "nodes", "bytes"};
  if (r)
    header.insert(header.end(), {"T_s(median)", "P_measured [CI]", "P_range"});
  else if (!measured.empty())
    header.push_back("P_measured");
  for (const auto& [name, values] : p) {
    header.push_back("P_" + name);
    if (!measured.empty()) header.push_back("Erel_" + name + "_%");
  }
  TextTable t(header);
  std::map<std::string, std::vector<double>> e_rel;
  std::map<std::string, double> e_abs;
  if (!measured.empty()) {
    for (const auto& [name, values] : p)
      std::tie(e_rel[name], e_abs[name]) = errors(values, measured);
  }
  for (std::size_t i = 0; i < s.communications.size(); ++i) {
    const auto& c = s.communications[i];
    std::vector<std::string> row = {c.name, fmt::format("{} -> {}", c.source, c.destination),
                                    std::to_string(c.bytes)};
    if (r) {
      const auto& m = r->communications[i];
      row.push_back(number(m.median_s));
      row.push_back(fmt::format("{} [{}, {}]", number(m.penalty.value, 3),
                                number(m.penalty.lower, 3), number(m.penalty.upper, 3)));
      row.push_back(fmt::format("{}-{}", number(m.penalty_min, 3), number(m.penalty_max, 3)));
    } else if (!measured.empty()) {
      row.push_back(number(measured[i], 3));
    }
    for (const auto& [name, values] : p) {
      row.push_back(number(values[i], 3));
      if (!measured.empty()) row.push_back(fmt::format("{:+.1f}", e_rel[name][i]));
    }
    t.add_row(row);
  }
  std::string out = render(t, sink, "share");
  for (const auto& [name, value] : e_abs)
    out += fmt::format("{}: E_abs = {:.1f} %\n", name, value);
  if (r && !r->communications.empty()) {
    out += fmt::format(
        "P's interval: the order-statistic intervals of the medians of T and T_ref divided "
        "crosswise, covering P with at least {:.1f} % ({} iterations each, interleaved)\n",
        floor_percent(r->communications.front().penalty.confidence),
        r->communications.front().times_s.size());
  }
  if (r) {
    out += fmt::format("T_ref:");
    for (const auto& [bytes, t_ref] : r->t_ref_s)
      out += fmt::format(" {} B alone {:.4g} s;", bytes, t_ref);
    out += fmt::format(" {} of {} ranks used, {:.2f} s\n", r->ranks_used, r->ranks, r->seconds);
    if (r->emulated_nodes || r->one_host) {
      out +=
          "FUNCTIONAL ONLY: every rank ran on one host, so this measured memory and CPU "
          "sharing, not network cards.\n";
    }
  }
  return out;
}

nlohmann::json share_json(const model::Scheme& s, const std::optional<measure::ShareResult>& r,
                          const std::vector<double>& measured, const Predictions& p,
                          const nlohmann::json& context) {
  nlohmann::json scheme_comms = nlohmann::json::array();
  for (const auto& c : s.communications) {
    scheme_comms.push_back({{"name", c.name},
                            {"source_node", c.source},
                            {"dest_node", c.destination},
                            {"bytes", c.bytes}});
  }
  nlohmann::json comms = nlohmann::json::array();
  std::map<std::string, std::vector<double>> e_rel;
  nlohmann::json e_abs = nlohmann::json::object();
  if (!measured.empty()) {
    for (const auto& [name, values] : p) {
      auto [rel, abs] = errors(values, measured);
      e_rel[name] = rel;
      e_abs[name] = abs;
    }
  }
  for (std::size_t i = 0; i < s.communications.size(); ++i) {
    const auto& c = s.communications[i];
    nlohmann::json j = {{"name", c.name},
                        {"source_node", c.source},
                        {"dest_node", c.destination},
                        {"bytes", c.bytes}};
    if (r) {
      const auto& m = r->communications[i];
      j["time_s"] = m.median_s;
      j["times_s"] = m.times_s;
      j["t_ref_s"] = m.t_ref_s;
      j["penalty_lower"] = m.penalty.lower;
      j["penalty_upper"] = m.penalty.upper;
      j["penalty_confidence"] = m.penalty.confidence;
      j["t_ref_times_s"] = r->t_ref_times_s.at(c.bytes);
      j["penalty_min"] = m.penalty_min;
      j["penalty_max"] = m.penalty_max;
    }
    if (!measured.empty()) j["measured_penalty"] = measured[i];
    if (p.size() == 1) {
      j["predicted_penalty"] = p.begin()->second[i];
      if (!measured.empty()) j["e_rel_percent"] = e_rel.begin()->second[i];
    } else if (!p.empty()) {
      for (const auto& [name, values] : p) {
        j["predicted_penalty_" + name] = values[i];
        if (!measured.empty()) j["e_rel_percent_" + name] = e_rel[name][i];
      }
    }
    comms.push_back(j);
  }
  nlohmann::json out = {
      {"method", "share"},
      {"scheme", {{"file", s.origin}, {"nodes", s.nodes}, {"communications", scheme_comms}}},
      {"communications", comms}};
  if (p.size() == 1) {
    out["model"] = p.begin()->first;
    if (!measured.empty()) out["e_abs_percent"] = e_abs.begin().value();
  } else if (!p.empty()) {
    out["models"] = nlohmann::json::array();
    for (const auto& [name, values] : p)
      out["models"].push_back(name);
    if (!measured.empty()) out["e_abs_percent"] = e_abs;
  }
  if (r) {
    nlohmann::json t_ref = nlohmann::json::object();
    for (const auto& [bytes, t] : r->t_ref_s)
      t_ref[std::to_string(bytes)] = t;
    out["t_ref_s"] = t_ref;
    out["functional_only"] = r->emulated_nodes || r->one_host;
    out["nodes_emulated"] = r->emulated_nodes;
    out["ranks"] = r->ranks;
    out["ranks_used"] = r->ranks_used;
    out["seconds"] = r->seconds;
    out["context"] = context;
  }
  return out;
}

void plot_share(const std::filesystem::path& output, const model::Scheme& s,
                const std::optional<measure::ShareResult>& r, const std::vector<double>& measured,
                const Predictions& p, const std::string& title) {
  // Columns: index, label, measured, its lower and upper end ("?" where there is none), models.
  std::string data;
  for (std::size_t i = 0; i < s.communications.size(); ++i) {
    const auto& c = s.communications[i];
    std::string label = fmt::format("{}: {}->{}", c.name, c.source, c.destination);
    std::replace(label.begin(), label.end(), '"', '\'');
    data += fmt::format("{} \"{}\"", i, label);
    if (r) {
      const auto& m = r->communications[i].penalty;
      data += fmt::format(" {:.9g} {:.9g} {:.9g}", m.value, m.lower, m.upper);
    } else if (!measured.empty()) {
      data += fmt::format(" {:.9g} ? ?", measured[i]);
    } else {
      data += " ? ? ?";
    }
    for (const auto& [name, values] : p)
      data += fmt::format(" {:.9g}", values[i]);
    data += "\n";
  }
  const std::size_t n = s.communications.size();
  std::string script = fmt::format(
      "set title {}\nset datafile missing '?'\nset xlabel 'communication (name: source node "
      "-> destination node)'\nset ylabel 'penalty P = T / T_ref (time shared / time alone)'\n"
      "set key top left\nset grid ytics\nset yrange [0:*]\nset offsets 0, 0, graph 0.1, 0\n"
      "set xrange [-0.5:{}]\n",
      gnuplot_string(title), static_cast<double>(n) - 0.5);
  if (n > 8) script += "set xtics rotate by -40\n";
  // The labels ride on a series of invisible points at the integers; the points sit beside them.
  script +=
      "plot 'share.dat' u 1:(1):xtic(2) w p ps 0 notitle, 1 w l dt 2 lc rgb 'gray' title 'P = 1 "
      "(alone)'";
  if (r) {
    script += fmt::format(
        ", 'share.dat' u 1:3:4:5 w yerrorbars pt 7 ps 1.2 lw 1.5 lc rgb 'black' "
        "title 'measured (median, interval >= {:.1f} %)'",
        r->communications.empty() ? 0.0
                                  : floor_percent(r->communications.front().penalty.confidence));
  } else if (!measured.empty()) {
    script += ", 'share.dat' u 1:3 w p pt 7 ps 1.2 lc rgb 'black' title 'measured'";
  }
  // Each model's points beside the measured one, so that none hides another; filled shapes and
  // colours that stay apart in grey and for colour-blind readers (Okabe-Ito).
  static constexpr std::array<int, 4> kShape = {5, 9, 13, 11};
  static constexpr std::array<const char*, 4> kColour = {"#0072b2", "#d55e00", "#009e73",
                                                         "#cc79a7"};
  std::size_t k = 0;
  for (const auto& [name, values] : p) {
    const double dx = 0.12 * static_cast<double>(k + 1);
    script += fmt::format(", 'share.dat' u ($1+{}):{} w p pt {} ps 1.5 lc rgb '{}' title '{}'", dx,
                          6 + k, kShape[k % 4], kColour[k % 4], name);
    ++k;
  }
  run_gnuplot(output, script + "\n", {{"share.dat", data}});
}

}  // namespace commgauge::report
