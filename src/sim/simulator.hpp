#pragma once
// The discrete-event trace replayer (seed 001's SIM-MPI, seed 003's simulator): every rank
// replays its trace as a stream, MPI calls are re-timed under a network model, computation keeps
// its recorded duration. docs/simulate.md describes the semantics; DESIGN.md the cost convention.
//
// Time is integer picoseconds. The engine's ordering invariants are written at its queue
// (sim/engine.hpp, "Event queue"); the engine's parts are listed there.

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithms.hpp"
#include "common/error.hpp"
#include "model/cost.hpp"
#include "model/sharing.hpp"
#include "sim/network.hpp"
#include "trace/reader.hpp"

namespace commgauge::sim {

/// Where computation durations come from.
enum class ComputeSource {
  recorded,  ///< the gap between calls, less local MPI calls and the tracer's overhead
  cpu,       ///< the thread CPU time recorded with --cpu-time (oversubscribed traces)
};

/// One interval of one rank, for --timeline: a call (measured from the trace and predicted by
/// the replay) or the computation before it.
/// A call's arguments as the trace recorded them, for --timeline: `fields` (trace::Field bits
/// kPeer, kTag, kRoot, kComm, kBytes) says which of the rest are there.
struct TimelineArguments {
  std::uint32_t fields = 0;
  std::int32_t peer = 0;  ///< world rank (or trace::kAnySource, kProcNull)
  std::int32_t tag = 0;
  std::int32_t root = 0;
  std::uint64_t comm = 0;
  std::uint64_t bytes = 0;
};

struct TimelineSpan {
  std::uint32_t rank = 0;
  std::uint32_t function = 0;  ///< trace function id; 0 for computation
  bool predicted = false;      ///< the replay's timing (else the trace's)
  double start_ns = 0;         ///< from the end of the rank's MPI_Init
  double duration_ns = 0;
  const TimelineArguments* arguments = nullptr;  ///< MPI calls only
};

/// One point-to-point message of the replay, for --timeline's arrows: from the send's post on
/// the sender to the receive's completion on the receiver (times as TimelineSpan's).
struct TimelineMessage {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  std::uint64_t bytes = 0;
  double sent_ns = 0;
  double received_ns = 0;
};

/// --noise: operating-system noise added to each replayed computation that is not empty (after
/// --denoise and --compute-scale), as an exponential distribution of the given mean. The draw for
/// a rank's n-th record comes from a counter-based generator (splitmix64 of the seed, the rank and
/// n), so a replay stays deterministic and independent of the order in which ranks run.
struct Noise {
  double mean_us = 0;  ///< 0: no noise
  std::uint64_t seed = 1;
};

/// "exponential:MEAN_US[:SEED]"; throws InputError naming --noise.
Noise parse_noise(const std::string& text);

/// The noise added to the computation before rank `rank`'s record `record` (picoseconds).
model::Picoseconds noise_ps(const Noise& noise, std::uint32_t rank, std::uint64_t record);

struct Options {
  ComputeSource compute = ComputeSource::recorded;
  double compute_scale = 1.0;  ///< > 1: a slower processor
  /// --coll: algorithm per operation instead of the default (Open MPI's tuned rules).
  std::map<collectives::Operation, collectives::Algorithm> algorithms;
  /// --contention: none, fair, gige or myrinet (seed 003): inter-node transfers share each
  /// node's outgoing and incoming link.
  std::string contention = "none";
  model::GigeParams gige;                       ///< gige's beta, gamma_o, gamma_i
  std::uint64_t myrinet_set_limit = 1'000'000;  ///< myrinet: state sets per component
  bool critical_path = false;  ///< carry a CriticalPath with every rank and message
  /// --denoise: every computation replays as the minimum the rank recorded at the same site,
  /// the site being (the call before it, the call after it): the traced machine's noise out.
  bool denoise = false;
  /// The replay stands for the traced machine (the trace's hosts and placement, no cluster
  /// file): the trace's ping-pongs at MPI_Init are checked against the profile's model
  /// (Result::state_check). Off for a what-if on another cluster or placement.
  bool traced_machine = true;
  /// The program's message buffers start on a page (the profile's held-out cells, whose
  /// transport allocates them so): a range billed by pages charges a send the pages it spans
  /// from there. Otherwise a send's start is the trace's (send_page_offset_bytes), or unknown (an
  /// older trace, a collective's step: the tracer records no collective's buffers) and such a
  /// range charges the mean over malloc's starts (model::LinkRange::billed_bytes).
  bool page_aligned_buffers = false;
  Noise noise;  ///< --noise
  /// --timeline: called for every call and computation, measured and predicted, as the replay
  /// goes (nothing is kept).
  std::function<void(const TimelineSpan&)> timeline;
  /// --timeline: called for every message the replay delivers (collectives' messages too).
  std::function<void(const TimelineMessage&)> timeline_message;
  /// Called every 65536 engine events with the records replayed so far (for a progress line).
  std::function<void(std::uint64_t records)> progress;
};

/// Where a rank's time went (picoseconds); the parts add up to the rank's predicted time.
struct Breakdown {
  model::Picoseconds compute{};          ///< recorded computation (scaled)
  model::Picoseconds overhead{};         ///< CPU busy inside MPI: o_s, o_r, control messages
  model::Picoseconds transfer{};         ///< waiting inside MPI for data in flight, gaps g, G
  model::Picoseconds late_sender{};      ///< a receive waiting for its send to be posted
  model::Picoseconds late_receiver{};    ///< a send waiting for its receive to be posted
  model::Picoseconds synchronization{};  ///< waiting inside collectives
  model::Picoseconds opaque{};           ///< unmodeled MPI calls, at their recorded duration

  model::Picoseconds total() const {
    return compute + overhead + transfer + late_sender + late_receiver + synchronization + opaque;
  }
  model::Picoseconds in_mpi() const { return total() - compute; }
  Breakdown& operator+=(const Breakdown& o);
};

struct RankResult {
  Breakdown predicted;
  model::Picoseconds predicted_ps{};  ///< end of MPI_Init to start of MPI_Finalize, simulated
  double measured_ns = 0;             ///< the same in the trace
  double measured_in_mpi_ns = 0;      ///< time inside MPI calls in the trace (incl. local calls)
  std::uint64_t records = 0;          ///< replayed function and poll-run records
  std::uint64_t forced_completions = 0;
  std::uint64_t early_completions = 0;
};

/// A critical-path summary of fixed size (seed 001's question "what determines the run time"),
/// carried forward with every message: each rank holds the path that ends at its clock; a send
/// takes a copy of the sender's; a rank that waited for a message (or, in a rendezvous or
/// synchronous send, for the receive) adopts its partner's path plus the network time between
/// the partner's post and the completion. Bounded: the kSlots ranks and functions with the most
/// time on the path are kept individually (the first ones met; later ones go to "other") and
/// the last kSlots steps.
struct CriticalPath {
  static constexpr std::size_t kSlots = 8;
  static constexpr std::uint32_t kCompute = 0;           ///< function id of computation
  static constexpr std::uint32_t kNetwork = 0xffffffff;  ///< function id of network time
  model::Picoseconds compute{};                          ///< computation on the path
  model::Picoseconds mpi{};      ///< inside MPI calls (overheads, copies, opaque calls)
  model::Picoseconds network{};  ///< between a partner's post and the completion it caused
  struct Slot {
    std::int64_t key = -1;  ///< rank or function id; -1: empty
    model::Picoseconds time{};
  };
  std::array<Slot, kSlots> ranks{};
  model::Picoseconds other_ranks{};
  std::array<Slot, kSlots> functions{};
  model::Picoseconds other_functions{};
  struct Step {
    std::int32_t rank = -1;
    std::uint32_t function = 0;
    model::Picoseconds start{}, end{};
  };
  std::array<Step, kSlots> last{};  ///< ring buffer of the last steps
  std::uint32_t steps = 0;          ///< steps added in all

  model::Picoseconds length() const { return compute + mpi + network; }
  /// Adds [start, end) on `rank` in `function` (kCompute, kNetwork or an MPI function id).
  void add(std::int32_t rank, std::uint32_t function, model::Picoseconds start,
           model::Picoseconds end);
  /// The last steps, oldest first.
  std::vector<Step> last_steps() const;
};

struct FunctionTotals {
  std::uint64_t calls = 0;
  model::Picoseconds predicted_ps{};  ///< simulated time inside the calls, over all ranks
  double measured_ns = 0;             ///< recorded time inside the calls, over all ranks
};

/// One (operation, algorithm) pair the replay ran, with how it was chosen.
struct CollectiveUse {
  std::string operation;  ///< "allreduce"
  std::string algorithm;  ///< commgauge's schedule that ran ("recursive_doubling")
  std::string openmpi;    ///< Open MPI 4.1's choice ("tuned:recursive_doubling"); empty with --coll
  bool exact = false;     ///< the schedule sends what Open MPI's algorithm sends
  std::uint64_t calls = 0;
  std::string note;  ///< how it was chosen, and why the nearest algorithm stands in
};

struct Result {
  std::string model;
  std::uint32_t ranks = 0;
  model::Picoseconds predicted_ps{};  ///< slowest rank
  double measured_ns = 0;             ///< slowest rank in the trace
  std::vector<RankResult> per_rank;
  std::map<std::string, FunctionTotals> functions;
  std::vector<CollectiveUse> collectives;  ///< by operation, then algorithm
  std::uint64_t records = 0;
  std::uint64_t forced_completions = 0;
  std::uint64_t early_completions = 0;
  std::uint64_t messages = 0;
  std::uint64_t events_processed = 0;  ///< engine events (queue pops)
  std::uint64_t peak_ops_in_flight = 0;
  /// --contention: transfers that shared a link, rate recomputations, the largest set of
  /// transfers whose rates depend on each other.
  std::string contention = "none";
  std::uint64_t shared_transfers = 0;
  std::uint64_t rate_recomputations = 0;
  std::uint64_t largest_sharing_component = 0;
  /// Messages (point-to-point and collectives' steps) larger than the largest size their link
  /// class was measured at (Network::set_measured_max_bytes), and the largest of them.
  struct BeyondMeasured {
    std::uint64_t messages = 0;
    std::uint64_t largest_bytes = 0;
  } beyond_measured;
  /// Whether the machine was in the same state when traced as when profiled: the tracer's
  /// clock-sync ping-pong at MPI_Init (rank 0 with each other rank, 0 B there and 8 B back, the
  /// fastest of 10) against the round trip the model of that pair's link class gives for it;
  /// medians over the pairs. Absent under model none or without the index's syncs.
  struct StateCheck {
    double trace_round_trip_us = 0;
    double model_round_trip_us = 0;
    double ratio = 0;  ///< median over the pairs of trace / model
    std::uint32_t pairs = 0;
  };
  std::optional<StateCheck> state_check;
  std::vector<std::string> notes;
  Breakdown total;                            ///< summed over ranks
  std::optional<CriticalPath> critical_path;  ///< --critical-path: the slowest rank's
  std::int32_t critical_path_rank = -1;
};

/// Replay cannot progress: the blocked ranks, what they wait for, and whether the program
/// itself would deadlock under the simulated protocols or the recorded order is at fault.
class DeadlockError : public std::runtime_error {
 public:
  DeadlockError(const std::string& report, std::string classification)
      : std::runtime_error(report), classification_(std::move(classification)) {}
  /// "protocol" (the program deadlocks under the simulated protocols) or "replay".
  const std::string& classification() const { return classification_; }

 private:
  std::string classification_;
};

/// Replays `trace` on `network`. Throws trace::TraceError for malformed traces, InputError for
/// what the options or the network cannot serve, DeadlockError when replay cannot progress.
Result simulate(const trace::TraceReader& trace, const Network& network, const Options& options);

}  // namespace commgauge::sim
