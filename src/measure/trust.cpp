#include "measure/trust.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace commgauge::measure {

std::optional<LibraryEagerLimit> library_eager_limit(const nlohmann::json& context) {
  if (!context.is_object() || context.value("transport", "") != "mpi" ||
      context.value("pml", "") != "ob1")
    return std::nullopt;
  const auto limits = context.find("eager_limits");
  if (limits == context.end() || !limits->is_object()) return std::nullopt;
  const auto hosts = context.value("hosts", nlohmann::json::array());
  const bool same_host = hosts.size() == 2 && hosts[0] == hosts[1];
  // Open MPI's shared-memory BTLs; "self" carries only a rank's messages to itself.
  constexpr std::array<const char*, 3> kSharedMemory = {"vader", "sm", "smcuda"};
  std::vector<LibraryEagerLimit> local, network;
  for (const auto& [name, value] : limits->items()) {
    if (name == "self" || !value.is_number_integer() || value.get<std::int64_t>() <= 0) continue;
    const bool shared =
        std::find(kSharedMemory.begin(), kSharedMemory.end(), name) != kSharedMemory.end();
    (shared ? local : network).push_back({name, value.get<std::uint64_t>()});
  }
  // ob1 prefers a shared-memory BTL between ranks of one host and needs a network one otherwise.
  const auto& candidates = same_host && !local.empty() ? local : network;
  if (candidates.size() != 1) return std::nullopt;
  return candidates.front();
}

Trust assess_trust(const CurveCheck& calibrated_check, const std::vector<LatencyPoint>& latency,
                   const std::optional<LibraryEagerLimit>& eager_limit,
                   const SwitchEvidence& evidence, const TrustOptions& options) {
  Trust t;
  t.rms_deviation = calibrated_check.rms;
  for (const auto& p : latency) {
    const double limit = options.stall_ratio * p.stats.median;
    for (double us : p.one_way_us) {
      ++t.latency_trials;
      if (p.stats.median > 0 && us > limit) {
        ++t.stalled_trials;
        if (us > t.worst_stall_us) t.worst_stall_us = us;
      }
    }
  }
  if (eager_limit && eager_limit->bytes > evidence.min_bytes &&
      eager_limit->bytes <= evidence.max_bytes) {
    t.eager_limit = eager_limit;
    const std::uint64_t lowest = eager_limit->bytes > options.header_allowance_bytes
                                     ? eager_limit->bytes - options.header_allowance_bytes
                                     : 0;
    std::vector<std::string> found;
    for (const auto& sw : evidence.switches) {
      if (!sw.rendezvous || sw.per_byte_change) continue;
      found.push_back(sw.exact ? fmt::format("{} B", sw.first_bytes)
                               : fmt::format("({}, {}] B", sw.below_bytes, sw.first_bytes));
      // The bracket (below, first] meets [limit - allowance, limit].
      if (sw.below_bytes < eager_limit->bytes && sw.first_bytes >= lowest)
        t.switch_at_eager_limit = true;
    }
    if (!t.switch_at_eager_limit) {
      t.trusted = false;
      t.reasons.push_back(fmt::format(
          "the library reports {}'s eager limit as {} B (MPI_T), so its rendezvous switch lies "
          "at most {} B below that, but loggp found {}: its ranges are not this link's",
          eager_limit->component, eager_limit->bytes, options.header_allowance_bytes,
          found.empty() ? std::string("no rendezvous switch")
                        : fmt::format("rendezvous switch{} at {}", found.size() > 1 ? "es" : "",
                                      fmt::join(found, ", "))));
    }
  }
  if (t.rms_deviation > options.max_rms_deviation) {
    t.trusted = false;
    t.reasons.insert(
        t.reasons.begin(),
        fmt::format("the calibrated set misses the measured curves by {:.1f} % rms (at most "
                    "{:.0f} % is trusted; worst at {} B): its parameters do not describe this link",
                    100 * t.rms_deviation, 100 * options.max_rms_deviation,
                    calibrated_check.worst_size));
  }
  t.heldout_pingpong_error = evidence.heldout_pingpong_error;
  if (evidence.heldout_pingpong_error &&
      *evidence.heldout_pingpong_error > options.max_rms_deviation) {
    t.trusted = false;
    t.reasons.push_back(fmt::format(
        "the calibrated set misses the held-out ping-pong by {:.1f} % (median; at most {:.0f} % "
        "is trusted) while it misses its own curves by {:.1f} % rms: the held-out cells, "
        "measured in loggp's first rounds, disagree with the set fitted to all of them (the "
        "machine changed its speed during the measurement, or the set does not describe a "
        "ping-pong); measure again",
        100 * *evidence.heldout_pingpong_error, 100 * options.max_rms_deviation,
        100 * t.rms_deviation));
  }
  if (t.trusted) return t;
  if (t.stalled_trials > 0) {
    t.reasons.push_back(fmt::format(
        "time-sliced: {} of {} latency trials ({:.2g} %) took more than {:.0f} times their "
        "size's median, up to {:.0f} us: a measuring rank lost its core (a busy machine, or "
        "ranks that yield when idle, mpi_yield_when_idle); measure on idle cores",
        t.stalled_trials, t.latency_trials,
        100.0 * static_cast<double>(t.stalled_trials) / static_cast<double>(t.latency_trials),
        options.stall_ratio, t.worst_stall_us));
  }
  return t;
}

}  // namespace commgauge::measure
