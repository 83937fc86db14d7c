#pragma once
// Held-out validation (issue 14, item 6): measurements no fit ever sees, to check a profile's
// predictions against. A blocking ping-pong at sizes the loggp sweep did not measure, an exchange
// (both ends send to and receive from each other at once) and, where the transport has
// collectives (MPI), MPI_Allreduce and MPI_Alltoall over the pair. They are cells of loggp's
// first rounds (LoggpOptions::heldout_sizes, heldout_collective_sizes, heldout_exchange_sizes),
// shuffled with the sweep's cells, so that drift and the machine's latency modes fall on the
// fitted and the held-out sizes alike; each point's value is the median over those rounds with
// its distribution-free 95 % interval.

#include <cstdint>
#include <string>
#include <vector>

#include "measure/loggp.hpp"

namespace commgauge::measure {

enum class HeldOutKind : std::uint8_t { pingpong = 0, allreduce = 1, alltoall = 2, exchange = 3 };
std::string to_string(HeldOutKind k);

struct HeldOutPoint {
  HeldOutKind kind = HeldOutKind::pingpong;
  std::uint64_t bytes = 0;
  std::vector<double> rounds_us;  ///< one value per round (ping-pong: one-way; collectives: a call)
  PrttStat time;                  ///< median over the rounds and its 95 % interval
};

struct HeldOutResult {
  std::vector<HeldOutPoint> points;
  std::uint64_t seed = 0;    ///< the loggp run's seed: the cells' order was drawn from it
  bool collectives = false;  ///< false: the transport has none (TCP, virtual network)
};

/// The held-out points of a loggp run (LoggpResult::heldout), in its order.
HeldOutResult heldout_of(const LoggpResult& loggp);

/// Geometric midpoints between consecutive sizes: the sizes a sweep did not measure.
std::vector<std::uint64_t> midpoints(const std::vector<std::uint64_t>& sizes);

}  // namespace commgauge::measure
