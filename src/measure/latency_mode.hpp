#pragma once
// A machine's latency mode: a pair's small-message latency holds for seconds, then jumps. On a
// 2-core AMD EPYC VM (Firecracker) over vader a 1-byte ping-pong read about 0.13 us one way for
// 1-20 s at a time and about 0.38 us in between; in the slow mode a 64 KiB transfer of data its
// sender has just written cost 0.045-0.057 us per KiB more, in the fast one at most 0.010
// (docs/measurements.md, "Latency modes"). A profile whose phases ran in different modes mixes
// them: in 6 of 16 quiet profiles loggp's rounds ran in the fast mode and the call costs in the
// slow one, and their held-out MPI_Allreduce of 8-64 KiB was predicted 14-37 % high, where the 10
// others were within -18 and +1 %.
//
// So over MPI profile's later phases (overlap, latency, the call costs) are measured in loggp's
// mode: a probe (1-byte round trips timed on the source, as loggp's PRTT(1,0,s) cells) must lie
// inside Tukey's fences of loggp's rounds at its smallest size before each phase, the pair waiting
// for that mode within a budget; the call costs, which the replay charges, are probed again after
// and measured again if the mode changed meanwhile (call_costs.hpp).

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/loggp.hpp"
#include "net/transport.hpp"

namespace commgauge::measure {

/// The one-way times of the reference mode: Tukey's fences (Q1 - 1.5 IQR, Q3 + 1.5 IQR) of
/// loggp's PRTT(1,0,s) / 2 over its rounds at size `bytes`, widened by half the timer's resolution
/// (times are multiples of it: a probe equal to Q1 - 1.5 IQR to the tick read 3e-11 us below it,
/// and a clock that quantizes every round alike leaves an IQR of 0).
struct LatencyModeBand {
  std::uint64_t bytes = 1;
  double low_us = 0, high_us = 0;
  bool contains(double one_way_us) const { return one_way_us >= low_us && one_way_us <= high_us; }
};

void to_json(nlohmann::json& j, const LatencyModeBand& b);
void from_json(const nlohmann::json& j, LatencyModeBand& b);

/// The band of loggp's rounds at its smallest size; nullopt with fewer than 4 rounds there.
/// `resolution_us`: the timer's (TimerCharacterization::res_timing_us).
std::optional<LatencyModeBand> latency_mode_band(const LoggpResult& loggp, double resolution_us);

/// Tukey's fences of `values` (at least 4), widened by `widen_us` on each side.
LatencyModeBand tukey_fences(std::vector<double> values, std::uint64_t bytes, double widen_us = 0);

struct ModeProbe {
  double one_way_us = 0;  ///< median of kModeProbeTrips round trips, halved
  bool in_band = false;
  double at_s = 0;  ///< seconds after the phase began (its first probe)
};

/// Waiting is wall time, whatever the transport's clock (the virtual network's stands still).
using Wall = std::chrono::steady_clock::time_point;
inline double seconds_between(Wall from, Wall to) {
  return std::chrono::duration<double>(to - from).count();
}

/// At most this long in all a phase waits for the mode.
inline constexpr double kModeWait_s = 10;
/// At most this many measurements of the call costs (measured again where the mode changed).
inline constexpr std::uint32_t kModeAttempts = 3;

/// How long after a phase its mode is looked for: one probe is a median of kModeProbeTrips round
/// trips and may read off by noise, so the mode changed during the phase only if no probe within
/// this time lies in the band.
inline constexpr double kModeRecheckWait_s = 0.3;

/// Round trips of a probe, timed each on the source; their median is the probe's value. Before
/// them kModeProbeWarmUp round trips untimed (the pair may have idled).
inline constexpr std::uint32_t kModeProbeTrips = 9;
inline constexpr std::uint32_t kModeProbeWarmUp = 2;

/// Both ends: probes until one lies in the band or `budget_s` has passed (0: one probe), idling
/// 100 ms between probes. The source decides and tells the dest. Returns the probes on
/// the source (empty on the dest); at_s counts from `since`.
std::vector<ModeProbe> await_latency_mode(net::Transport& t, const LatencyModeBand& band,
                                          double budget_s, Wall since);

/// How one phase kept to the band's mode: every probe, by attempt, before and after it.
struct PhaseModeCheck {
  LatencyModeBand band;
  struct Probe {
    ModeProbe probe;
    std::uint32_t attempt = 1;
    bool after = false;  ///< taken after the attempt's measurement, else before it
  };
  std::vector<Probe> probes;
  std::uint32_t attempts = 0;  ///< measurements of the phase (a later attempt whose probe
                               ///< before lay outside the band is not measured)
  double waited_s = 0;         ///< probing for the mode, in all
  bool held = false;  ///< the last measured attempt's last probe before and (the call costs)
                      ///< its last probe after in the band
};

/// A phase measured once after `before` (a wait's probes), with no probe after it: overlap and
/// the latency part are not measured again, so a probe after them would only report, and what a
/// phase leaves behind can read as another mode (over TCP on loopback the round trip stayed at
/// 6.8-7.1 us for 0.3 s after them, 4.3-4.9 us in loggp's rounds and before them). held: the last
/// probe before lay in the band.
PhaseModeCheck phase_mode_check(const LatencyModeBand& band, const std::vector<ModeProbe>& before,
                                double waited_s);

/// Both ends: the source tells the dest whether to probe and at what size (the dest may not know
/// the band: under MPI only the source holds loggp's result); returns the band on the source, one
/// with only its size on the dest, nullopt on both where the source has none.
std::optional<LatencyModeBand> agree_band(net::Transport& t,
                                          const std::optional<LatencyModeBand>& band);

/// Both ends: the source's decision, which the dest learns; returns it on both ends.
bool agreed(net::Transport& t, bool source_decides);

/// A boundary between a profile's phases over MPI (job "latency-mode"; no TCP peer runs it): the
/// pair waits at most wait_s for the band's mode; without a band, nothing is probed.
struct ModeWaitOptions {
  std::optional<LatencyModeBand> band;
  double wait_s = kModeWait_s;
  void validate() const;  ///< throws InputError
};
void to_json(nlohmann::json& j, const ModeWaitOptions& o);
void from_json(const nlohmann::json& j, ModeWaitOptions& o);

/// Both ends; returns the probes on the source (none without a band, and on the dest).
std::vector<ModeProbe> wait_for_latency_mode(net::Transport& t, const ModeWaitOptions& o);

}  // namespace commgauge::measure
