#include "report/latency_report.hpp"

#include <fstream>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/json_text.hpp"
#include "common/text_file.hpp"
#include "profile/json_file.hpp"
#include "report/statistics_json.hpp"
#include "report/text_table.hpp"
#include "report/timer_report.hpp"

namespace commgauge::report {

namespace {

nlohmann::json rates_json(const measure::Rates& r) {
  return {
      {"min", r.from_min}, {"median", r.from_median}, {"mean", r.from_mean}, {"max", r.from_max}};
}

nlohmann::json point_json(const measure::LatencyPoint& p) {
  nlohmann::json filtered = {{"cut_coef", p.filtered.cut_coef},
                             {"threshold_us", p.filtered.threshold},
                             {"removed", p.filtered.removed},
                             {"trials", p.stats.count - p.filtered.removed}};
  if (p.filtered_stats) {
    filtered["stats_us"] = summary_json(*p.filtered_stats);
    filtered["rates_MBps"] = rates_json(*p.filtered_rates);
  }
  return {{"size_bytes", p.size_bytes},
          {"npp_calculated", p.npp_calculated},
          {"npp_used", p.npp_used},
          {"median_ppt_us", p.median_ppt_us},
          {"handshake_penalty_us", p.handshake_penalty_us},
          {"npp_for_handshake_bias", p.npp_for_handshake_bias},
          {"trials", p.stats.count},
          {"median_rse", p.median_rse},
          {"median_ci95_us", {p.median_lower_us, p.median_upper_us}},
          {"reached_rse_target", p.reached_target},
          {"percentiles_us", {{"p50", p.p50_us}, {"p90", p.p90_us}, {"p99", p.p99_us}}},
          {"stats_us", summary_json(p.stats)},
          {"rates_MBps", rates_json(p.rates)},
          {"filtered", std::move(filtered)},
          {"distribution", distribution_json(p.distribution)},
          {"frequency", frequency_json(p.frequency)},
          {"seconds", p.seconds}};
}

std::string rates_text(const measure::Rates& r) {
  return fmt::format(
      "communication rate using minimum time = {:.4E}\ncommunication rate using median time = "
      "{:.4E}\ncommunication rate using average time = {:.4E}\ncommunication rate using maximum "
      "time = {:.4E}\n",
      r.from_min, r.from_median, r.from_mean, r.from_max);
}

// Seed 002 Appendix C for one size.
std::string summary_block(const measure::LatencyPoint& p) {
  std::string out = fmt::format(
      "Message size (bytes) = {}\n\nNumber of ping pongs in a timing loop (npp):\n"
      "calculated value of npp = {}\nvalue of npp used = {}\n"
      "first ping-pong after the hand-shake: +{:.4f} us, npp for its bias = {}\n\n"
      "TIMING RESULTS FOR PING PONG TIMES DIVIDED BY TWO IN MICROSECONDS\n",
      p.size_bytes, p.npp_calculated, p.npp_used, p.handshake_penalty_us, p.npp_for_handshake_bias);
  out += summary_text(p.stats);
  out += "\nCOMMUNICATION RATE RESULTS IN MBYTES/SECOND\n" + rates_text(p.rates);
  out += fmt::format(
      "\nFILTERED DATA RESULTS\nfiltering cut-off coefficient = {:.4f}\ntiming trials after "
      "filtering = {}\n# of timings removed by filtering = {}\n",
      p.filtered.cut_coef, p.stats.count - p.filtered.removed, p.filtered.removed);
  if (p.filtered_stats) {
    out += "\nFILTERED TIMING RESULTS FOR PING PONG TIMES DIVIDED BY TWO IN MICROSECONDS\n";
    out += summary_text(*p.filtered_stats);
    out += "\nFILTERED COMMUNICATION RATES IN MBYTES/SECOND\n" + rates_text(*p.filtered_rates);
  }
  return out;
}

std::string parameters_block(const measure::LatencyResult& r, const measure::LatencyOptions& o,
                             const nlohmann::json& context) {
  const auto hosts = context.value("hosts", nlohmann::json::array());
  return fmt::format(
      "PROGRAM PARAMETERS\n\ntransport = {}\nhosts = {}\ncommgauge {} ({})\n"
      "Number of timing trials: npptrial = {}, ntrial = {}\nnpp_init = {}, res_npp = {}\n"
      "messages sent by the source = {}, bytes = {}, run time = {:.3f} s\n{}\n",
      context.value("transport", "?"), json_text(hosts), context.value("commgauge_version", "?"),
      context.value("git_revision", "?"), o.npp_trials, o.trials, o.npp_init, o.res_npp,
      r.counters.messages, r.counters.bytes, r.seconds,
      r.interrupted.empty() ? std::string()
                            : fmt::format("complete = no: {} of {} sizes measured, then: {}\n",
                                          r.points.size(), o.sizes.size(), r.interrupted));
}

}  // namespace

namespace {

// Everything but the results.
nlohmann::json latency_frame(const measure::LatencyResult& r, const measure::LatencyOptions& o,
                             const measure::TimerCharacterization& timer,
                             const nlohmann::json& context) {
  nlohmann::json out = {{"method", "latency"},
                        {"context", context},
                        {"timer", timer_json(timer)},
                        {"parameters", o},
                        {"results", nlohmann::json::array()},
                        {"messages", r.counters.messages},
                        {"bytes", r.counters.bytes},
                        {"seconds", r.seconds},
                        {"complete", r.interrupted.empty()}};
  if (!r.interrupted.empty()) out["interrupted"] = r.interrupted;
  return out;
}

}  // namespace

nlohmann::json latency_json(const measure::LatencyResult& r, const measure::LatencyOptions& o,
                            const measure::TimerCharacterization& timer,
                            const nlohmann::json& context) {
  nlohmann::json out = latency_frame(r, o, timer, context);
  for (const auto& p : r.points)
    out["results"].push_back(point_json(p));
  return out;
}

std::string latency_json_text(const measure::LatencyResult& r, const measure::LatencyOptions& o,
                              const measure::TimerCharacterization& timer,
                              const nlohmann::json& context) {
  // The frame with an empty results array, at its top level (two spaces in); then each size
  // dumped alone, four spaces in, in its place.
  std::string frame = json_text(latency_frame(r, o, timer, context), 2);
  const std::string slot = "\n  \"results\": []";
  const std::size_t at = frame.find(slot);
  if (at == std::string::npos || r.points.empty()) return frame + "\n";
  std::string out = frame.substr(0, at) + "\n  \"results\": [";
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const std::string point = json_text(point_json(r.points[i]), 2);
    out += i == 0 ? "\n    " : ",\n    ";
    for (const char c : point) {
      out += c;
      if (c == '\n') out += "    ";
    }
  }
  out += "\n  ]";
  out.append(frame, at + slot.size());
  out += '\n';
  return out;
}

std::string latency_table(const measure::LatencyResult& r, const measure::LatencyOptions& o,
                          TableSink* sink) {
  TextTable table({"size_B", "npp calc/used", "trials", "median_rse", "min_us", "median_us",
                   "mean_us", "max_us", "p90_us", "p99_us", "sd_us", "cv_%", "rse", "MB/s(median)",
                   fmt::format("removed>{}xmed", number(o.cut_coef, 3)), "filt_mean_us"});
  for (const auto& p : r.points) {
    table.add_row({std::to_string(p.size_bytes), fmt::format("{}/{}", p.npp_calculated, p.npp_used),
                   std::to_string(p.stats.count),
                   fmt::format("{:.2f} %{}", 100 * p.median_rse, p.reached_target ? "" : "*"),
                   number(p.stats.min), number(p.stats.median), number(p.stats.mean),
                   number(p.stats.max), number(p.p90_us), number(p.p99_us), number(p.stats.sd, 3),
                   number(p.stats.cv_percent, 3), number(p.stats.rse, 3),
                   number(p.rates.from_median), std::to_string(p.filtered.removed),
                   p.filtered_stats ? number(p.filtered_stats->mean) : "n/a"});
  }
  std::string out =
      "PING-PONG TIMES DIVIDED BY TWO (one-way, microseconds)\n" + render(table, sink, "latency");
  if (o.rse_target > 0) {
    out += fmt::format(
        "each size stops when its median's relative standard error (distribution-free 95 % "
        "interval) is at most {:.2g} %, or at {} trials (*: the cap stopped it)\n",
        100 * o.rse_target, o.trials);
  }
  out += fmt::format("{} messages, {:.3g} GB sent by the source, {:.2f} s\n", r.counters.messages,
                     static_cast<double>(r.counters.bytes) / 1e9, r.seconds);
  return out;
}

void write_latency_files(const std::filesystem::path& dir, const measure::LatencyResult& r,
                         const measure::LatencyOptions& o,
                         const measure::TimerCharacterization& timer,
                         const nlohmann::json& context) {
  NewDirectory directory(dir);  // gone again if the files cannot be written

  std::string summary = parameters_block(r, o, context);
  std::string full = parameters_block(r, o, context) + timer_text(timer) + "\n";
  std::string csv = "size_bytes,trial,npp,one_way_us\n";
  for (const auto& p : r.points) {
    summary += summary_block(p) + "\n";
    full += summary_block(p);
    full +=
        "\nDISTRIBUTION OF PING PONG TIMES DIVIDED BY TWO\n" + distribution_text(p.distribution);
    full += "\nFREQUENCY OF PING PONG TIMES DIVIDED BY TWO\n" + frequency_text(p.frequency) + "\n";
    for (std::size_t i = 0; i < p.one_way_us.size(); ++i) {
      csv += fmt::format("{},{},{},{:.6f}\n", p.size_bytes, i, p.npp_used, p.one_way_us[i]);
    }
  }
  // All three written aside first and published together: one that cannot be written (a
  // directory at its name, a full disk) leaves the other two as they were.
  std::vector<std::unique_ptr<AtomicFile>> files;
  for (const auto& [name, text] :
       {std::pair<const char*, const std::string*>{"latency.summary.output", &summary},
        {"latency.output", &full},
        {"latency.trials.csv", &csv}}) {
    files.push_back(std::make_unique<AtomicFile>(dir / name));
    files.back()->write(*text);
    files.back()->finish();
  }
  for (auto& file : files)
    file->publish();
  sync_directory_of(dir / "latency.output");
  directory.keep();
}

}  // namespace commgauge::report
