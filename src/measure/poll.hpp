#pragma once
// The cost of a failed poll: a call of the Test or Probe family that finds nothing (MPI_Test
// of a receive still pending). Programs that poll in a loop spend real time in these calls,
// which the trace folds into poll runs (calls, time inside MPI); the replay charges each failed
// call this cost. Measured on the source while its receive is pending (the dest holds the
// message back until told), in rounds of back-to-back calls; the median per call over the
// rounds with its distribution-free 95 % interval.

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "measure/loggp.hpp"
#include "net/transport.hpp"

namespace commgauge::measure {

struct PollOptions {
  std::uint32_t calls = 2000;  ///< failed tests per round, timed together
  std::uint32_t rounds = 15;
  void validate() const;  ///< throws InputError
};

void to_json(nlohmann::json& j, const PollOptions& o);
void from_json(const nlohmann::json& j, PollOptions& o);

struct PollResult {
  PrttStat per_call;  ///< microseconds per failed test: median over the rounds, 95 % interval
  std::uint64_t calls = 0;
};

/// Runs on either end; returns the result on the source. Not on the virtual network, whose
/// calls cost only what its model charges (a test there lets virtual time advance): throws
/// InputError.
std::optional<PollResult> measure_poll(net::Transport& transport, const PollOptions& options);

}  // namespace commgauge::measure
