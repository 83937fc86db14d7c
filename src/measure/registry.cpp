#include "measure/registry.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "measure/call_costs.hpp"
#include "measure/latency.hpp"
#include "measure/loggp.hpp"
#include "measure/overlap.hpp"

namespace commgauge::measure {

void run_dest_job(net::Transport& transport, const net::Job& job) {
  try {
    if (job.method == "latency") {
      measure_latency(transport, job.params.get<LatencyOptions>(), {}, nullptr);
      return;
    }
    if (job.method == "overlap") {
      measure_overlap(transport, job.params.get<OverlapOptions>(), std::nullopt, nullptr);
      return;
    }
    if (job.method == "call-costs") {
      measure_call_costs(transport, job.params.get<CallCostOptions>());
      return;
    }
    if (job.method == "loggp") {
      measure_loggp(transport, job.params.get<LoggpOptions>(), nullptr);
      return;
    }
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's "[json.exception.type_error.304] " says nothing to a user.
    std::string what = e.what();
    if (const auto end = what.find("] ");
        what.rfind("[json.exception.", 0) == 0 && end != std::string::npos)
      what = what.substr(end + 2);
    throw InputError(fmt::format("malformed parameters for method {}: {}", job.method, what));
  }
  throw InputError(fmt::format("unknown method \"{}\"", job.method));
}

}  // namespace commgauge::measure
