#include "report/latency_mode_report.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace commgauge::report {

namespace {

// What the line says of a phase, by its key in the profile's JSON.
std::string subject_of(const std::string& phase) {
  if (phase == "call_costs") return "the call costs were";
  if (phase == "latency") return "the latency part was";
  if (phase == "overlap") return "overlap (LogGPO) was";
  return phase + " was";
}

}  // namespace

nlohmann::json latency_mode_json(const PhaseModeChecks& phases) {
  nlohmann::json out = {{"band", phases.at(0).second.band}, {"phases", nlohmann::json::object()}};
  for (const auto& [name, check] : phases) {
    nlohmann::json probes = nlohmann::json::array();
    for (const auto& p : check.probes) {
      probes.push_back({{"one_way_us", p.probe.one_way_us},
                        {"in_band", p.probe.in_band},
                        {"at_s", p.probe.at_s},
                        {"attempt", p.attempt},
                        {"after", p.after}});
    }
    out["phases"][name] = {{"probes", probes},
                           {"attempts", check.attempts},
                           {"waited_s", check.waited_s},
                           {"held", check.held}};
  }
  return out;
}

std::string latency_mode_line(const std::string& phase, const measure::PhaseModeCheck& check) {
  // The last measured attempt's last probe before it and its probe after.
  const measure::ModeProbe* before = nullptr;
  const measure::ModeProbe* after = nullptr;
  std::size_t outside = 0;
  for (const auto& p : check.probes) {
    if (!p.probe.in_band) ++outside;
    if (p.attempt != check.attempts) continue;
    (p.after ? after : before) = &p.probe;
  }
  const std::string band =
      fmt::format("loggp's rounds at {} B: {:.3g}-{:.3g} us one way (Tukey's fences)",
                  check.band.bytes, check.band.low_us, check.band.high_us);
  std::string how;
  if (check.attempts > 1 || outside > 0) {
    how = fmt::format("; {} of {} probes outside it, {:.1f} s of waiting, measured {} time{}",
                      outside, check.probes.size(), check.waited_s, check.attempts,
                      check.attempts == 1 ? "" : "s");
  }
  const double b = before ? before->one_way_us : 0;
  if (!after) {  // a phase probed only before (measure::phase_mode_check)
    if (check.held) {
      return fmt::format("latency mode: {} measured after a probe in loggp's ({:.3g} us; {}{})\n",
                         subject_of(phase), b, band, how);
    }
    return fmt::format(
        "latency mode: {} NOT measured in loggp's mode (probe {:.3g} us before it; {}{}): the "
        "profile mixes two modes\n",
        subject_of(phase), b, band, how);
  }
  const double a = after->one_way_us;
  if (check.held) {
    return fmt::format(
        "latency mode: {} measured in loggp's (probes {:.3g} us before and {:.3g} after; {}{})\n",
        subject_of(phase), b, a, band, how);
  }
  return fmt::format(
      "latency mode: {} NOT measured in loggp's mode (probes {:.3g} us before and {:.3g} after; "
      "{}{}): the profile mixes two modes\n",
      subject_of(phase), b, a, band, how);
}

std::optional<MeasuredAgainstBand> measured_against_band(const nlohmann::json& latency_mode,
                                                         const std::vector<Measured>& measured) {
  if (!latency_mode.is_object() || !latency_mode.contains("band")) return std::nullopt;
  const auto band = latency_mode["band"].get<measure::LatencyModeBand>();
  const auto at = std::find_if(measured.begin(), measured.end(),
                               [&band](const Measured& m) { return m.bytes == band.bytes; });
  if (at == measured.end()) return std::nullopt;
  return MeasuredAgainstBand{band, at->one_way_us};
}

std::string measured_against_band_line(const MeasuredAgainstBand& m) {
  const std::string where = fmt::format(
      "the measured one-way time at {} B, {:.4g} us, lies {} the profile's loggp "
      "rounds there ({:.4g}-{:.4g} us, Tukey's fences)",
      m.band.bytes, m.measured_us, m.in_band() ? "within" : "outside", m.band.low_us,
      m.band.high_us);
  if (m.in_band()) return "machine state: " + where + ": no change of latency mode it can tell\n";
  return "machine state: " + where +
         ": the measurement ran in another latency mode than the profile, and the errors above "
         "include the difference\n";
}

nlohmann::json measured_against_band_json(const MeasuredAgainstBand& m) {
  return {{"bytes", m.band.bytes},
          {"measured_us", m.measured_us},
          {"band_low_us", m.band.low_us},
          {"band_high_us", m.band.high_us},
          {"in_band", m.in_band()}};
}

}  // namespace commgauge::report
