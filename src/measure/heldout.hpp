#pragma once
// Held-out validation (issue 14, item 6): measurements no fit ever sees, to check a profile's
// predictions against. A blocking ping-pong at sizes the loggp sweep did not measure, and, where
// the transport has collectives (MPI), MPI_Allreduce and MPI_Alltoall over the pair. Measured in
// interleaved rounds with the cells in a fresh random order each round (the seed is kept), so
// drift and bursts of load fall on all cells alike; each cell's value is the median over the
// rounds with its distribution-free 95 % interval.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/loggp.hpp"
#include "measure/progress.hpp"
#include "net/transport.hpp"

namespace commgauge::measure {

enum class HeldOutKind : std::uint8_t { pingpong = 0, allreduce = 1, alltoall = 2 };
std::string to_string(HeldOutKind k);

struct HeldOutOptions {
  std::vector<std::uint64_t> pingpong_sizes;    ///< one-way time of a blocking ping-pong
  std::vector<std::uint64_t> collective_sizes;  ///< allreduce bytes; alltoall bytes per rank
  std::uint32_t rounds = 9;                     ///< every cell once per round
  std::uint32_t repetitions = 3;                ///< back to back within a cell (median)
  std::uint64_t seed = 0;                       ///< order of the cells (0: drawn, then recorded)
  void validate() const;                        ///< throws InputError
};

void to_json(nlohmann::json& j, const HeldOutOptions& o);
void from_json(const nlohmann::json& j, HeldOutOptions& o);

struct HeldOutPoint {
  HeldOutKind kind = HeldOutKind::pingpong;
  std::uint64_t bytes = 0;
  std::vector<double> rounds_us;  ///< one value per round (ping-pong: one-way; collectives: a call)
  PrttStat time;                  ///< median over the rounds and its 95 % interval
};

struct HeldOutResult {
  std::vector<HeldOutPoint> points;
  std::uint64_t seed = 0;
  /// Non-zero: the ping-pong points were measured inside a loggp run's rounds, in the order
  /// drawn from this seed (add_loggp_pingpong), not by measure_heldout.
  std::uint64_t pingpong_seed = 0;
  bool collectives = false;  ///< false: the transport has none (TCP, virtual network)
  net::Counters source_counters;
  double seconds = 0;
};

/// Runs on either end; returns the result on the source.
std::optional<HeldOutResult> measure_heldout(net::Transport& transport, const HeldOutOptions& o,
                                             ProgressSink* progress);

/// Puts the ping-pong cells a loggp run measured beside its sweep (LoggpOptions::heldout_sizes)
/// in front of r's points: the same medians and intervals as measure_heldout's own cells.
void add_loggp_pingpong(HeldOutResult& r, const LoggpResult& loggp);

/// Geometric midpoints between consecutive sizes: the sizes a sweep did not measure.
std::vector<std::uint64_t> midpoints(const std::vector<std::uint64_t>& sizes);

}  // namespace commgauge::measure
