#include "report/timer_report.hpp"

#include <fmt/format.h>

#include "report/statistics_json.hpp"

namespace commgauge::report {

nlohmann::json timer_json(const measure::TimerCharacterization& t) {
  return {{"clock", t.clock},
          {"trials", t.trials},
          {"res_timing_us", t.res_timing_us},
          {"min_ov_us", t.min_ov_us},
          {"negative", t.negative},
          {"stats_us", summary_json(t.summary)},
          {"distribution", distribution_json(t.distribution)},
          {"frequency", frequency_json(t.frequency)},
          {"seconds", t.seconds}};
}

std::string timer_text(const measure::TimerCharacterization& t) {
  std::string out = fmt::format(
      "TIMER {} ({} back-to-back pairs, {:.2f} s)\n\n"
      "resolution res_timing = {:.4f} us (minimum positive difference)\n"
      "overhead   min_ov     = {:.4f} us (minimum non-negative difference)\n",
      t.clock, t.trials, t.seconds, t.res_timing_us, t.min_ov_us);
  if (t.negative > 0)
    out += fmt::format("negative differences = {} (the clock stepped back)\n", t.negative);
  out += "\nTIMING DIFFERENCES IN MICROSECONDS\n" + summary_text(t.summary);
  out += "\nDISTRIBUTION OF TIMES\n" + distribution_text(t.distribution);
  out += "\nFREQUENCY OF TIMES\n" + frequency_text(t.frequency);
  return out;
}

}  // namespace commgauge::report
