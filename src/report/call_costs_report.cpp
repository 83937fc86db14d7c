#include "report/call_costs_report.hpp"

#include <fmt/format.h>

namespace commgauge::report {

nlohmann::json latency_mode_json(const measure::CallCosts::ModeCheck& check) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : check.probes) {
    probes.push_back({{"one_way_us", p.probe.one_way_us},
                      {"in_band", p.probe.in_band},
                      {"at_s", p.probe.at_s},
                      {"attempt", p.attempt},
                      {"after", p.after}});
  }
  return {{"band", check.band},
          {"probes", probes},
          {"attempts", check.attempts},
          {"waited_s", check.waited_s},
          {"held", check.held}};
}

std::string latency_mode_line(const measure::CallCosts::ModeCheck& check) {
  // The last attempt's last probe before its measurement and its probe after.
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
  const double b = before ? before->one_way_us : 0, a = after ? after->one_way_us : 0;
  if (check.held) {
    return fmt::format(
        "latency mode: the call costs were measured in loggp's (probes {:.3g} us before and "
        "{:.3g} after; {}{})\n",
        b, a, band, how);
  }
  return fmt::format(
      "latency mode: the call costs were NOT measured in loggp's mode and mix another into the "
      "profile (probes {:.3g} us before and {:.3g} after; {}{})\n",
      b, a, band, how);
}

}  // namespace commgauge::report
