#include "report/loggp_report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "measure/prtt.hpp"
#include "profile/link_params_json.hpp"
#include "report/plot.hpp"
#include "report/text_table.hpp"
#include "stats/descriptive.hpp"

namespace commgauge::report {

namespace {

constexpr std::uint64_t kOpenEnd = std::numeric_limits<std::uint64_t>::max();

nlohmann::json prtt_json(const measure::PrttStat& s) {
  return {{"median_us", s.median_us},
          {"ci95_lower_us", s.lower_us},
          {"ci95_upper_us", s.upper_us},
          {"repetitions", s.repetitions},
          {"converged", s.converged}};
}

std::string interval_text(const measure::LoggpRange& r) {
  if (r.to_bytes == kOpenEnd) return fmt::format("{} <= s", r.from_bytes);
  return fmt::format("{} <= s < {}", r.from_bytes, r.to_bytes + 1);
}

std::string joined(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes)
    out += (out.empty() ? "" : "; ") + n;
  return out;
}

}  // namespace

namespace {

const char* const kIntervalKeys[measure::kParameterCount] = {
    "o_s_us", "o_r_us", "O_s_us_per_byte", "O_r_us_per_byte", "g_us", "G_us_per_byte", "o_u_us"};

nlohmann::json intervals_json(const std::array<measure::Interval, measure::kParameterCount>& in) {
  nlohmann::json ci = nlohmann::json::object();
  for (std::size_t p = 0; p < measure::kParameterCount; ++p) {
    if (in[p].known) ci[kIntervalKeys[p]] = {in[p].lower, in[p].upper};
  }
  return ci;
}

nlohmann::json missed_json(const measure::CurveCheck& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : c.missed) {
    out.push_back({{"size_bytes", m.bytes},
                   {"curve", model::kPrttCurveNames[m.curve]},
                   {"deviation", m.deviation}});
  }
  return out;
}

nlohmann::json check_json(const measure::CurveCheck& c) {
  return {{"max_deviation_prtt1", c.max_abs[0]},
          {"max_deviation_prtt_n0", c.max_abs[1]},
          {"max_deviation_prtt_nd", c.max_abs[2]},
          {"max_deviation_prtt_nd_server", c.max_abs[3]},
          {"max_deviation", c.max_abs_all},
          {"rms_deviation", c.rms},
          {"worst_size_bytes", c.worst_size},
          {"unfitted_points", c.unfitted},
          {"max_deviation_unfitted", c.max_abs_unfitted},
          {"cells", c.cells},
          {"target_deviation", measure::kSelfCheckTarget},
          {"cells_off_target", c.cells_off},
          {"cells_off_target_outside_ci95", c.cells_off_outside_interval},
          {"cells_missed", missed_json(c)}};
}

std::string bound_text(double v) {
  return std::isfinite(v) ? fmt::format("{:.4g}", v) : std::string("no bound");
}

}  // namespace

nlohmann::json trust_json(const measure::Trust& t) {
  nlohmann::json j = {{"trusted", t.trusted},
                      {"rms_deviation", t.rms_deviation},
                      {"stalled_latency_trials", t.stalled_trials},
                      {"latency_trials", t.latency_trials},
                      {"worst_stall_us", t.worst_stall_us},
                      {"reasons", t.reasons}};
  if (t.heldout_pingpong_error) j["heldout_pingpong_error"] = *t.heldout_pingpong_error;
  if (t.eager_limit) {
    j["library_eager_limit"] = {{"component", t.eager_limit->component},
                                {"bytes", t.eager_limit->bytes},
                                {"rendezvous_switch_found", t.switch_at_eager_limit}};
  }
  return j;
}

std::string trust_line(const std::string& link_class, const measure::Trust& t) {
  if (t.trusted) {
    return fmt::format(
        "trust: {} is trusted (the calibrated set is within {:.1f} % rms of its "
        "curves{}{})\n",
        link_class, 100 * t.rms_deviation,
        t.heldout_pingpong_error ? fmt::format(" and {:.1f} % of the held-out ping-pong (median)",
                                               100 * *t.heldout_pingpong_error)
                                 : std::string(),
        t.eager_limit ? fmt::format("; the rendezvous switch is at {}'s eager limit, {} B",
                                    t.eager_limit->component, t.eager_limit->bytes)
                      : std::string());
  }
  std::string out = fmt::format("warning: {} is NOT trusted:", link_class);
  for (const auto& r : t.reasons)
    out += "\n  " + r;
  return out + "\n";
}

nlohmann::json loggp_switches_json(const measure::LoggpResult& r) {
  nlohmann::json switches = nlohmann::json::array();
  for (const auto& sw : r.switches) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& st : sw.steps) {
      steps.push_back({{"below_bytes", st.below_bytes},
                       {"mid_bytes", st.mid_bytes},
                       {"above_bytes", st.above_bytes},
                       {"attempts", st.attempts},
                       {"trials", st.trials},
                       {"sender_waited", st.waited},
                       {"late_receive_below_us", st.below_us},
                       {"late_receive_mid_us", st.mid_us},
                       {"late_receive_above_us", st.above_us},
                       {"placement", st.placement}});
    }
    switches.push_back({{"first_bytes", sw.first_bytes},
                        {"below_bytes", sw.below_bytes},
                        {"rendezvous", sw.rendezvous},
                        {"confirmed", sw.confirmed},
                        {"exact", sw.exact},
                        {"per_byte_change", sw.per_byte_change},
                        {"level_change", sw.level_change},
                        {"found_by", sw.found_by},
                        {"late_receive_below_us", sw.late_recv_below_us},
                        {"late_receive_above_us", sw.late_recv_above_us},
                        {"sender_waited_below", {sw.waited_below, sw.late_below}},
                        {"sender_waited_above", {sw.waited_above, sw.late_above}},
                        {"confirmations", sw.confirmations},
                        {"confirmation_trials", sw.confirmation_trials},
                        {"verdict", sw.verdict},
                        {"bisection", steps}});
  }
  return switches;
}

namespace {

// Cells a parameter was fitted to, with the model's value at each.
nlohmann::json fitted_cells_json(const std::vector<measure::CellSeries>& cells,
                                 const std::vector<double>& model_us) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& e = cells[i];
    out.push_back({{"size_bytes", e.bytes}, {"rounds_us", e.rounds_us}});
    if (!e.rounds_us.empty()) out.back()["median_us"] = stats::median(e.rounds_us);
    if (i < model_us.size()) out.back()["model_us"] = model_us[i];
  }
  return out;
}

}  // namespace

nlohmann::json loggp_exchanges_json(const measure::LoggpResult& r) {
  return fitted_cells_json(r.exchanges, r.calibrated.exchange_model_us);
}

nlohmann::json loggp_streams_json(const measure::LoggpResult& r) {
  return fitted_cells_json(r.streams, r.calibrated.stream_model_us);
}

nlohmann::json loggp_send_calls_json(const measure::LoggpResult& r) {
  return fitted_cells_json(r.send_calls, r.calibrated.send_call_model_us);
}

nlohmann::json loggp_json(const measure::LoggpResult& r, const measure::LoggpOptions& o,
                          const nlohmann::json& timer, const nlohmann::json& context) {
  // The document's parameters are the calibrated set (what predict and simulate use); the
  // seeds' estimators sit beside it with their own fit details.
  nlohmann::json doc = profile::link_params_to_json(r.link);
  doc["description"] =
      fmt::format("measured by commgauge loggp over {}", context.value("transport", "?"));
  doc["parameter_set"] = o.calibrate ? "calibrated" : "seed_estimators";
  doc["complete"] = r.interrupted.empty();
  if (!r.interrupted.empty()) doc["interrupted"] = r.interrupted;
  doc["eel_us"] = r.eel_us;
  for (std::size_t k = 0; k < r.ranges.size(); ++k) {
    const auto& range = r.ranges[k];
    auto& j = doc["ranges"][k];
    j["protocol"] = range.protocol;
    j["verdict"] = range.verdict;
    if (k < r.calibrated.intervals.size()) j["ci95"] = intervals_json(r.calibrated.intervals[k]);
    if (k < r.calibrated.crossing.size()) {
      const auto& x = r.calibrated.crossing[k];
      j["o_x_exchanges"] = x.sizes;
      if (x.interval.known) {
        j["ci95"]["o_x_us"] = {x.interval.lower, x.interval.upper};
        j["ci95"]["O_x_us_per_byte"] = {x.per_byte_interval.lower, x.per_byte_interval.upper};
      }
    }
    if (k < r.calibrated.stream_gap.size() && r.calibrated.stream_gap[k].sizes > 0) {
      const auto& st = r.calibrated.stream_gap[k];
      j["G_st_streams"] = st.sizes;
      j["G_st_slow"] = st.slow;
      j["G_st_fitted"] = st.fitted;
      if (st.interval.known) j["ci95"]["G_st_us_per_byte"] = {st.interval.lower, st.interval.upper};
    }
    if (k < r.calibrated.send_call.size() && r.calibrated.send_call[k].sizes > 0) {
      const auto& sc = r.calibrated.send_call[k];
      j["T1_send_calls"] = sc.sizes;
      j["T1_fitted"] = sc.fitted;
      j["T1_line_us"] = {sc.o_s_us, sc.O_s_us_per_byte};
    }
  }
  if (!r.exchanges.empty()) doc["exchanges"] = loggp_exchanges_json(r);
  if (!r.streams.empty()) doc["streams"] = loggp_streams_json(r);
  if (!r.send_calls.empty()) doc["send_calls"] = loggp_send_calls_json(r);
  if (r.calibrated.L_interval.known) {
    doc["L_ci95_us"] = {r.calibrated.L_interval.lower, r.calibrated.L_interval.upper};
  }
  if (r.calibrated.overlap_interval.known) {
    doc["send_overlap_ci95_us"] = {r.calibrated.overlap_interval.lower,
                                   r.calibrated.overlap_interval.upper};
  }
  nlohmann::json open = nlohmann::json::array();
  for (const auto& u : r.calibrated.not_identifiable) {
    open.push_back(
        {{"range", u.range == SIZE_MAX ? nlohmann::json(nullptr) : nlohmann::json(u.range)},
         {"parameter", u.parameter},
         {"value", u.value},
         {"lower", u.lower},
         {"upper", std::isfinite(u.upper) ? nlohmann::json(u.upper) : nlohmann::json(nullptr)},
         {"why", u.why}});
  }
  doc["not_identifiable"] = open;

  nlohmann::json seeds = profile::link_params_to_json(r.seed_link);
  seeds["L_equation_us"] = r.L_equation_us;
  if (r.L_interval.known) seeds["L_ci95_us"] = {r.L_interval.lower, r.L_interval.upper};
  for (std::size_t k = 0; k < r.ranges.size(); ++k) {
    const auto& range = r.ranges[k];
    auto& j = seeds["ranges"][k];
    j["protocol"] = range.protocol;
    j["g_identifiable"] = range.g_identifiable;
    if (std::isfinite(range.g_stderr_us)) j["g_stderr_us"] = range.g_stderr_us;
    if (std::isfinite(range.G_stderr_us_per_byte))
      j["G_stderr_us_per_byte"] = range.G_stderr_us_per_byte;
    j["fit_residual_us"] = range.fit_residual_us;
    j["fit_points"] = range.fit_points;
    j["ci95"] = intervals_json(range.intervals);
    if (!range.notes.empty()) j["note"] = joined(range.notes);
  }
  doc["seed_estimators"] = seeds;

  doc["switches"] = loggp_switches_json(r);
  nlohmann::json loggps_ranges = nlohmann::json::array();
  for (const auto& range : r.ranges) {
    loggps_ranges.push_back(
        {{"protocol", range.protocol},
         {"from_bytes", range.from_bytes},
         {"to_bytes",
          range.to_bytes == kOpenEnd ? nlohmann::json(nullptr) : nlohmann::json(range.to_bytes)},
         {"first_measured_bytes", range.first_measured},
         {"last_measured_bytes", range.last_measured}});
  }
  doc["loggps"] = {{"s_bytes", r.short_eager_bytes ? nlohmann::json(*r.short_eager_bytes)
                                                   : nlohmann::json(nullptr)},
                   {"S_bytes", r.rendezvous_bytes ? nlohmann::json(*r.rendezvous_bytes)
                                                  : nlohmann::json(nullptr)},
                   {"ranges", loggps_ranges}};
  nlohmann::json points = nlohmann::json::array();
  const auto read = measure::read_by_fits(r.points);
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto& p = r.points[i];
    nlohmann::json j = {{"size_bytes", p.bytes},
                        {"prtt1", prtt_json(p.prtt1)},
                        {"prtt_n0", prtt_json(p.prtt_n0)},
                        {"prtt_nd", prtt_json(p.prtt_nd)},
                        {"prtt_nd_server", prtt_json(p.prtt_nr)},
                        {"delay_us", p.delay_us},
                        {"o_s_us", p.o_s_us},
                        {"o_r_us", p.o_r_us},
                        {"g_all_us", p.g_all_us},
                        {"o_s_noise_us", p.o_s_noise},
                        {"o_r_noise_us", p.o_r_noise},
                        {"g_all_noise_us", p.g_all_noise},
                        {"o_s_ci95_us", {p.o_s_lower_us, p.o_s_upper_us}},
                        {"o_r_ci95_us", {p.o_r_lower_us, p.o_r_upper_us}},
                        {"g_all_ci95_us", {p.g_all_lower_us, p.g_all_upper_us}},
                        {"g_identifiable", p.g_identifiable},
                        {"refined", p.refined},
                        {"fitted", static_cast<bool>(read[i])},
                        {"rounds", p.rounds.size()},
                        {"stable", p.converged},
                        {"range", p.range}};
    if (i < r.calibrated_check.deviation.size()) {
      j["deviation_calibrated"] = r.calibrated_check.deviation[i];
    }
    if (i < r.seed_check.deviation.size())
      j["deviation_seed_estimators"] = r.seed_check.deviation[i];
    points.push_back(j);
  }
  doc["points"] = points;
  doc["switch_points_bytes"] = nlohmann::json::array();
  for (const auto& sw : r.switches)
    doc["switch_points_bytes"].push_back(sw.first_bytes);
  doc["self_check"] = {{"calibrated", check_json(r.calibrated_check)},
                       {"seed_estimators", check_json(r.seed_check)}};
  doc["notes"] = r.notes;
  doc["messages"] = r.total_counters.messages;
  doc["bytes"] = r.total_counters.bytes;
  doc["source_messages"] = r.source_counters.messages;
  doc["source_bytes"] = r.source_counters.bytes;
  doc["seconds"] = r.seconds;
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& [name, seconds] : r.phase_seconds)
    phases[name] = seconds;
  doc["phase_seconds"] = phases;
  doc["budget_exhausted"] = r.budget_exhausted;
  doc["seed"] = r.seed;
  doc["rounds"] = r.rounds;
  doc["stable_points"] = r.stable_points;
  doc["parameters"] = o;
  doc["timer"] = timer;
  doc["context"] = context;
  return doc;
}

std::string loggp_table(const measure::LoggpResult& r, TableSink* sink) {
  auto with_ci = [](double value, const measure::Interval& in, int digits) {
    if (!in.known) return number(value, digits);
    return fmt::format("{} [{}, {}]", number(value, digits), number(in.lower, 3),
                       number(in.upper, 3));
  };
  const auto& cal = r.calibrated;
  const bool calibrated = !cal.intervals.empty();
  std::string out;
  if (calibrated) {
    out += fmt::format(
        "CALIBRATED PARAMETERS (one set per range fitted to all four PRTT curves; predict and "
        "simulate use these)   L = {}{}\n",
        with_ci(r.link.latency_us, cal.L_interval, 4),
        r.link.send_overlap_us > 0 || (cal.overlap_interval.known && cal.overlap_interval.upper > 0)
            ? fmt::format("   send overlap omega = {} (o and L overlap, seed 000 §3.4: a send's "
                          "overhead goes on this long after its message is on its way)",
                          with_ci(r.link.send_overlap_us, cal.overlap_interval, 4))
            : std::string());
    TextTable t({"protocol", "interval (bytes)", "o_s_us [95 % CI]", "o_r_us [95 % CI]",
                 "o_u_us [95 % CI]", "o_x_us [95 % CI]", "O_x_us/B [95 % CI]", "O_s_us/B",
                 "O_r_us/B", "g_us", "G_us/B [95 % CI]", "G_st_us/B [95 % CI]", "verdict"});
    for (std::size_t k = 0; k < r.ranges.size(); ++k) {
      const auto& p = r.link.ranges[k];
      const auto& in = cal.intervals[k];
      t.add_row({r.ranges[k].protocol, interval_text(r.ranges[k]),
                 with_ci(p.send_overhead_us, in[0], 4), with_ci(p.recv_overhead_us, in[1], 4),
                 with_ci(p.unexpected_recv_us, in[6], 4),
                 k < cal.crossing.size() && cal.crossing[k].sizes > 0
                     ? with_ci(p.crossing_recv_us, cal.crossing[k].interval, 4)
                     : std::string("-"),
                 k < cal.crossing.size() && cal.crossing[k].sizes > 0
                     ? with_ci(p.crossing_recv_per_byte_us, cal.crossing[k].per_byte_interval, 3)
                     : std::string("-"),
                 number(p.send_overhead_per_byte_us, 3), number(p.recv_overhead_per_byte_us, 3),
                 number(p.gap_us, 4), with_ci(p.gap_per_byte_us, in[5], 3),
                 k < cal.stream_gap.size() && cal.stream_gap[k].fitted
                     ? with_ci(p.stream_gap_per_byte_us, cal.stream_gap[k].interval, 3)
                     : std::string("-"),
                 r.ranges[k].verdict});
    }
    out += render(t, sink, "loggp_calibrated");
    if (!r.exchanges.empty()) {
      out += fmt::format(
          "o_x + kO_x: what a receive costs more when its message crossed one its receiver had "
          "sent to the same peer (an exchange), fitted after the rest to exchanges at {} sizes up "
          "to {} B\n",
          r.exchanges.size(), r.exchanges.back().bytes);
    }
    for (std::size_t k = 0; k < cal.send_call.size() && k < r.ranges.size(); ++k) {
      const auto& sc = cal.send_call[k];
      if (sc.sizes == 0) continue;
      const std::string line = fmt::format(
          "send calls (range {}): MPI_Isend alone took o_s + kO_s = {} + k {} us at {} sizes "
          "(the calibrated set: {} + k {}; sends completed by the receiver's acknowledgement: "
          "the PRTTs hold T1 only beside the receiver's o'_s)",
          k, number(sc.o_s_us, 4), number(sc.O_s_us_per_byte, 3), sc.sizes,
          number(sc.calibrated_o_s_us, 4), number(sc.calibrated_O_s_us_per_byte, 3));
      if (sc.fitted) {
        const auto& p = r.link.ranges[k];
        out += fmt::format(
            "{}: taken, o'_s = {} us and o_u = {} us take the difference, G = {} us/B\n", line,
            number(p.control_send_or_default_us(), 4), number(p.unexpected_recv_us, 4),
            number(p.gap_per_byte_us, 3));
      } else {
        out += fmt::format(
            "{}, but it would move the range's PRTTs (worst miss {:.1f} % instead of {:.1f} %): "
            "the calibrated values kept\n",
            line, 100 * sc.prtt_miss_after, 100 * sc.prtt_miss_before);
      }
    }
    for (std::size_t k = 0; k < cal.stream_gap.size() && k < r.ranges.size(); ++k) {
      const auto& st = cal.stream_gap[k];
      if (st.sizes == 0) continue;
      const std::string missed = fmt::format(
          "the calibrated set missed {} of the range's {} streams ({} nonblocking sends)", st.slow,
          st.sizes, measure::kStreamMessages);
      if (st.fitted) {
        const bool acknowledged = r.link.ranges[k].acknowledged();
        out += fmt::format(
            "streams (range {}): {}: g, G and {} fitted to them ({}), and G_st, the gap's per-byte "
            "part beyond G: {} us/B\n",
            k, missed, acknowledged ? "O_s" : "O_r",
            acknowledged ? "sends completed by the receiver's acknowledgement: the blocking PRTTs "
                           "show its round trip, not the gap, and see only O_s + G"
                         : "PRTTs see only G + O_r",
            number(r.link.ranges[k].stream_gap_per_byte_us, 3));
      } else if (st.prtt_miss_after > 0) {
        out += fmt::format(
            "streams (range {}): {}, but a gap that closes them would move the range's PRTTs "
            "(worst miss {:.1f} % instead of {:.1f} %): something else than the gap slows them; "
            "the calibrated values kept\n",
            k, missed, 100 * st.prtt_miss_after, 100 * st.prtt_miss_before);
      } else if (st.stream_miss_before > 0) {
        out += fmt::format(
            "streams (range {}): {}, but a gap does not bring them closer (median miss {:.1f} % "
            "with it, {:.1f} % without): the receiver's handling or the send calls set their "
            "pace; the calibrated values kept\n",
            k, missed, 100 * st.stream_miss_after, 100 * st.stream_miss_before);
      } else {
        out += fmt::format("streams (range {}): {}: fewer than half, the calibrated values kept\n",
                           k, missed);
      }
    }
    for (const auto& u : cal.not_identifiable) {
      out += fmt::format(
          "not identifiable: {}{} = {:.4g}, any value in [{:.4g}, {}] fits as well: {}\n",
          u.parameter, u.range == SIZE_MAX ? "" : fmt::format(" (range {})", u.range), u.value,
          u.lower, bound_text(u.upper), u.why);
    }
    TextTable v({"interval (bytes)", "o_s_us", "o_r_us", "g_us", "G_us/B"});
    for (std::size_t k = 0; k < r.ranges.size(); ++k) {
      const auto& lv = r.link.ranges[k].loggp;
      v.add_row({interval_text(r.ranges[k]), number(lv.o_s_us), number(lv.o_r_us), number(lv.g_us),
                 number(lv.G_us_per_byte, 3)});
    }
    out +=
        "\nLOGGP VIEW (the loggp model: fitted under the LogGP structure, L kept; G carries the "
        "whole per-byte cost)\n" +
        render(v, sink, "loggp_view");
    out += "\n";
  }
  out += fmt::format(
      "SEEDS' ESTIMATORS (seed 000 Table 2: o eq. (6), g and G eq. (7), L §3.4)   eel = "
      "PRTT(1,0,1)/2 = {:.4g} us, L = {}{}\n",
      r.eel_us, with_ci(r.seed_link.latency_us, r.L_interval, 4),
      r.L_negative
          ? fmt::format(" (eq. gives {:.4g}: o and L overlap, reported as 0)", r.L_equation_us)
          : "");
  TextTable t({"protocol interval (bytes)", "o_s(1)_us [95 % CI]", "o_r(1)_us", "g_us", "G_us/B",
               "G(LogGP)_us/B", "fit_pts", "rendezvous"});
  for (const auto& range : r.ranges) {
    const auto& p = range.params;
    t.add_row({interval_text(range), with_ci(p.send_overhead_us, range.intervals[0], 4),
               number(p.recv_overhead_us),
               range.g_identifiable ? number(p.gap_us) : "hidden (o>=G_all)",
               number(p.gap_per_byte_us), number(p.loggp.G_us_per_byte),
               std::to_string(range.fit_points), p.rendezvous ? "yes" : "no"});
  }
  out += render(t, sink, "loggp_seeds_estimators");
  if (!r.switches.empty()) {
    out += "\nSWITCHES\n";
    TextTable w({"first size", "protocol", "late receive below -> above", "found by", "verdict"});
    for (std::size_t k = 0; k < r.switches.size(); ++k) {
      const auto& sw = r.switches[k];
      // The range the switch starts is rendezvous from the first rendezvous switch on (LogGPS,
      // set by the analysis); one that starts no hand-shake itself reads "as below".
      const bool range_rendezvous = k + 1 < r.ranges.size() && r.ranges[k + 1].params.rendezvous;
      const bool range_acknowledged =
          k + 1 < r.ranges.size() && r.ranges[k + 1].params.acknowledged();
      const char* kind = range_rendezvous     ? "rendezvous"
                         : range_acknowledged ? "eager TA"
                                              : "eager";
      const std::string protocol =
          sw.rendezvous        ? std::string("rendezvous")
          : sw.level_change    ? fmt::format("level change ({} as below)", kind)
          : sw.per_byte_change ? fmt::format("per-byte change ({} as below)", kind)
          : range_rendezvous   ? std::string("rendezvous (as below)")
                               : std::string(kind);
      w.add_row({fmt::format("{} B", sw.first_bytes), protocol,
                 sw.per_byte_change ? std::string("-")
                                    : fmt::format("{:.3g} -> {:.3g} us", sw.late_recv_below_us,
                                                  sw.late_recv_above_us),
                 sw.found_by, sw.verdict});
    }
    out += render(w, sink, "loggp_switches");
  }
  out += fmt::format("\nLogGPS VIEW (seed 004)   s (short/eager) = {}   S (rendezvous) = {}\n",
                     r.short_eager_bytes ? std::to_string(*r.short_eager_bytes) : "none",
                     r.rendezvous_bytes ? std::to_string(*r.rendezvous_bytes) : "none");
  for (std::size_t k = 0; k < r.ranges.size(); ++k) {
    for (const auto& n : r.ranges[k].notes)
      out += fmt::format("range {}: {}\n", k, n);
  }
  for (const auto& n : r.notes)
    out += "note: " + n + "\n";
  auto check_line = [](const char* name, const measure::CurveCheck& c) {
    return fmt::format(
        "  {:<18} PRTT(1,0,s) {:6.2f} %  PRTT(n,0,s) {:6.2f} %  PRTT(n,d,s) {:6.2f} %  "
        "server-delay {:6.2f} %  (rms {:.2f} %, worst at {} B)\n",
        name, 100 * c.max_abs[0], 100 * c.max_abs[1], 100 * c.max_abs[2], 100 * c.max_abs[3],
        100 * c.rms, c.worst_size);
  };
  const std::size_t unfitted = r.seed_check.unfitted;
  out += "self-check, largest |model - measured| / measured over the interleaved rounds' sizes:\n";
  if (calibrated) out += check_line("calibrated", r.calibrated_check);
  out += check_line("seeds' estimators", r.seed_check);
  // Where the calibrated set misses (beyond the target and the cell's interval), largest first.
  const auto missed_line = [](const measure::CurveCheck& c) -> std::string {
    if (c.missed.empty()) return {};
    auto missed = c.missed;
    std::stable_sort(missed.begin(), missed.end(), [](const auto& a, const auto& b) {
      return std::abs(a.deviation) > std::abs(b.deviation);
    });
    constexpr std::size_t kShown = 6;
    std::string line = missed.size() == 1 ? "    it is:" : "    they are:";
    for (std::size_t i = 0; i < missed.size() && i < kShown; ++i) {
      line += fmt::format("{} {} at {} B {:+.1f} %", i == 0 ? "" : ",",
                          model::kPrttCurveNames[missed[i].curve], missed[i].bytes,
                          100 * missed[i].deviation);
    }
    if (missed.size() > kShown) line += fmt::format(" and {} more", missed.size() - kShown);
    return line + " (model against measured; per cell in --json: points[].deviation_calibrated)\n";
  };
  // Item 5's target per cell, and how many misses the measurement itself resolves.
  const auto off_line = [&](const char* name, const measure::CurveCheck& c) {
    return fmt::format(
        "  {:<18} {} of {} (curve, size) cells off by more than {:.0f} %, {} of them outside "
        "the cell's 95 % interval\n",
        name, c.cells_off, c.cells, 100 * measure::kSelfCheckTarget, c.cells_off_outside_interval);
  };
  if (calibrated) {
    out += off_line("calibrated", r.calibrated_check);
    out += missed_line(r.calibrated_check);
  }
  out += off_line("seeds' estimators", r.seed_check);
  if (unfitted > 0) {
    // A large miss there says the machine changed between the rounds and the bisection.
    out += fmt::format("  at the {} bisection sizes (measured later, not fitted): ", unfitted);
    if (calibrated)
      out += fmt::format("calibrated {:.2f} %, ", 100 * r.calibrated_check.max_abs_unfitted);
    out += fmt::format("seeds' estimators {:.2f} %\n", 100 * r.seed_check.max_abs_unfitted);
  }
  out += fmt::format(
      "{} sizes ({} refined), {} interleaved rounds (seed {}); {} of {} sizes within the CI "
      "target\n{} messages, {:.3g} GB in both directions, {:.1f} s\n{}",
      r.points.size(),
      std::count_if(r.points.begin(), r.points.end(), [](const auto& p) { return p.refined; }),
      r.rounds, r.seed, r.stable_points, r.points.size(), r.total_counters.messages,
      static_cast<double>(r.total_counters.bytes) / 1e9, r.seconds,
      // On a line of its own: the traffic line reads the same whether a budget cut the run.
      r.budget_exhausted
          ? fmt::format("a budget cut extra rounds short: {:.0f} messages and {:.3g} GB allowed\n",
                        r.budget.messages, r.budget.bytes / 1e9)
          : "");
  if (!r.phase_seconds.empty()) {
    out += "wall seconds by phase:";
    for (const auto& [name, seconds] : r.phase_seconds)
      out += fmt::format(" {} {:.2f}", name, seconds);
    out += "\n";
  }
  return out;
}

std::string loggp_csv(const measure::LoggpResult& r) {
  std::string out =
      "size_bytes,prtt1_us,prtt_n0_us,prtt_nd_us,prtt_nd_server_us,delay_us,o_s_us,o_r_us,"
      "g_all_us,rounds,stable,g_identifiable,refined,range\n";
  for (const auto& p : r.points) {
    out += fmt::format(
        "{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{},{}\n", p.bytes,
        p.prtt1.median_us, p.prtt_n0.median_us, p.prtt_nd.median_us, p.prtt_nr.median_us,
        p.delay_us, p.o_s_us, p.o_r_us, p.g_all_us, p.rounds.size(), p.converged ? 1 : 0,
        p.g_identifiable ? 1 : 0, p.refined ? 1 : 0, p.range);
  }
  return out;
}

void plot_loggp(const std::filesystem::path& output, const measure::LoggpResult& r,
                const std::string& title) {
  // Each value with its 95 % interval over the rounds; an interval's lower end at or below zero
  // is drawn at a tenth of the value (the axes are logarithmic).
  const auto bar = [](double value, double lower, double upper) {
    return fmt::format("{:.6f} {:.6f} {:.6f}", value, lower > 0 ? lower : 0.1 * std::abs(value),
                       std::max(upper, value));
  };
  std::string points = "# size g_all lo hi o_s lo hi o_r lo hi identifiable\n";
  for (const auto& p : r.points) {
    points += fmt::format("{} {} {} {} {}\n", p.bytes,
                          bar(p.g_all_us, p.g_all_lower_us, p.g_all_upper_us),
                          bar(p.o_s_us, p.o_s_lower_us, p.o_s_upper_us),
                          bar(p.o_r_us, p.o_r_lower_us, p.o_r_upper_us), p.g_identifiable ? 1 : 0);
  }
  std::string fits;
  for (const auto& range : r.ranges) {
    if (!range.g_identifiable) continue;  // nothing was fitted there
    // The fitted G_all(s) = g + (s-1) G of each range, over the sizes it covers.
    const double lo = static_cast<double>(std::max<std::uint64_t>(range.first_measured, 1));
    const double hi = static_cast<double>(range.last_measured);
    for (int i = 0; i <= 40; ++i) {
      const double s = lo * std::pow(hi / lo, i / 40.0);
      fits += fmt::format("{:.3f} {:.6f}\n", s,
                          range.params.gap_us + (s - 1) * range.params.gap_per_byte_us);
    }
    fits += "\n\n";
  }
  std::string script = fmt::format(
      "set title {}\nset logscale xy\nset xlabel 'message size s (bytes)'\n"
      "set ylabel 'time (us)'\nset key top left\nset grid\n",
      gnuplot_string(title));
  for (const auto& sw : r.switches) {
    script += fmt::format("set arrow from {0},graph 0 to {0},graph 1 nohead dt 2 lc rgb 'gray40'\n",
                          sw.first_bytes);
  }
  script +=
      "plot 'points.dat' using 1:($11==1?$2:1/0):3:4 with yerrorbars pt 7 lc rgb '#1f77b4' "
      "title 'G_all(s) = (PRTT(n,0,s)-PRTT(1,0,s))/(n-1), 95 % interval', "
      "'points.dat' using 1:($11==0?$2:1/0):3:4 with yerrorbars pt 6 lc rgb '#1f77b4' title "
      "'G_all(s), hidden by o (not fitted)', "
      "'fits.dat' using 1:2 with lines lw 2 lc rgb '#d62728' title 'fit g + (s-1)G per range', "
      "'points.dat' using 1:5:6:7 with yerrorlines pt 5 ps 0.6 lc rgb '#2ca02c' title 'o_s(s) eq. "
      "(6)', "
      "'points.dat' using 1:8:9:10 with yerrorlines pt 9 ps 0.6 lc rgb '#9467bd' title 'o_r(s)'";
  run_gnuplot(output, script, {{"points.dat", points}, {"fits.dat", fits}});
}

}  // namespace commgauge::report
