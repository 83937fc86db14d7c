#pragma once
// What MPI calls that move no message data cost, for the replay to charge them:
// * a failed poll: a call of the Test or Probe family that finds nothing (MPI_Test of a receive
//   still pending). Programs that poll in a loop spend real time in these calls, which the
//   trace folds into poll runs (calls, time inside MPI); the replay charges each failed call
//   this cost. Measured on the source while its receive is pending (the dest holds the message
//   back until told), in rounds of back-to-back calls.
// * a communicator's creation: MPI_Comm_dup of the pair, less an MPI_Allreduce of 4 bytes
//   measured alike (the replay charges that synchronisation through the model, as an allreduce
//   over the parent communicator): what is left is the library's local work (context id,
//   collective modules), which a model of messages does not contain; and MPI_Comm_free.
// * a collective's local work per byte: a reduction (MPI_Reduce_local of doubles with MPI_SUM)
//   and a memory copy, each timed at 64 KiB and at 4 KiB in the same rounds (which goes first
//   alternates), the difference per byte: the per-call cost drops out. Measured in a tight loop
//   (warm caches), on the source only.
// Each: the median per call (per byte) over the rounds with its distribution-free 95 % interval.

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "measure/loggp.hpp"
#include "net/transport.hpp"

namespace commgauge::measure {

struct CallCostOptions {
  std::uint32_t poll_calls = 2000;  ///< failed tests per round, timed together
  std::uint32_t comm_calls = 100;   ///< dups, frees and allreduces per round
  std::uint32_t local_calls = 40;   ///< reductions and copies per size and round
  std::uint32_t rounds = 15;
  void validate() const;  ///< throws InputError
};

void to_json(nlohmann::json& j, const CallCostOptions& o);
void from_json(const nlohmann::json& j, CallCostOptions& o);

struct CallCosts {
  PrttStat poll;                            ///< microseconds per failed test
  std::optional<PrttStat> comm_create;      ///< microseconds per dup, less an allreduce
                                            ///< (where the transport has communicators: MPI)
  std::optional<PrttStat> comm_free;        ///< microseconds per MPI_Comm_free
  std::optional<PrttStat> reduce_per_byte;  ///< microseconds per byte (where the transport
                                            ///< reduces: MPI)
  PrttStat copy_per_byte;                   ///< microseconds per byte
};

/// Runs on either end; returns the result on the source. Not on the virtual network, whose
/// calls cost only what its model charges (a test there lets virtual time advance): throws
/// InputError.
std::optional<CallCosts> measure_call_costs(net::Transport& transport,
                                            const CallCostOptions& options);

/// The local-work part alone, on this end (measure_call_costs runs it on the source).
void measure_local_work(net::Transport& transport, const CallCostOptions& options,
                        CallCosts& result);

}  // namespace commgauge::measure
