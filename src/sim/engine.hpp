#pragma once
// The replay engine's state and its one class, defined in parts (docs/simulate.md, "Parts"):
//   engine.cpp            event queue, operation pool, the run loop
//   matching.cpp          point-to-point: matching queues, eager/rendezvous protocols, probes
//   calls.cpp             a rank's progress through its trace: computation, each call's start
//   collective_replay.cpp collectives: communicators, schedules, their steps
//   deadlock.cpp          the diagnosis when replay cannot progress
//   observers.cpp         critical path and timeline (nothing runs when they are off)
// Internal to src/sim: include only from those files, which CMake compiles as one unit (the unity
// group "engine" in src/sim/CMakeLists.txt): the engine lives in an unnamed namespace so that the
// compiler inlines the hot calls between the parts as it did when they were one file.

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "collectives/openmpi_tuned.hpp"
#include "sim/event_queue.hpp"
#include "sim/huge_pages.hpp"
#include "sim/link_sharing.hpp"
#include "sim/simulator.hpp"
#include "trace/call_semantics.hpp"
#include "trace/functions.hpp"

namespace commgauge::sim::detail {
namespace {

using model::Picoseconds;
using trace::CallKind;
using trace::Event;

constexpr std::uint32_t kNone = UINT32_MAX;
/// Collectives match on their own context, as in Open MPI (a communicator's collective traffic
/// never matches its point-to-point receives).
constexpr std::uint64_t kCollectiveContext = 1ULL << 63;

enum class SendMode : std::uint8_t { standard, synchronous, ready, buffered };

// ---- Event queue ----------------------------------------------------------------------------
// Invariants: events leave the queue in increasing (time, seq); seq is unique and increases in
// the order events are created, so equal times keep creation order and the replay is
// deterministic. No event is created with a time earlier than the event being processed (times
// are clamped up to it, and counted), so a rank may run ahead inline while its clock is below every
// queued time: nothing can still happen before it. A rank whose clock is still the present runs on
// too: its work is part of the event being processed, which precedes every queued one in (time,
// seq); so does an operation completing at the present (one engine event per record, not four).
// The queue (sim/event_queue.hpp, a radix heap)
// relies on, and checks, the second invariant. With contention, an inter-node message's (k-1)G is a
// flow: flow_start at injection, flow_end when the link sharing says it has moved its bytes
// (re-issued whenever its rate changes; only the event whose seq the operation holds is current),
// then L to the arrival.
enum class EventKind : std::uint8_t {
  resume,
  arrival,
  request_arrival,
  ack_arrival,
  completion,
  flow_start,
  flow_end
};

struct QueuedEvent {
  Picoseconds time;
  std::uint64_t seq;
  std::uint32_t target;  // a rank (resume) or an operation
  EventKind kind;
};

// MPI's matching queues (a rank's posted receives, the sends to it not yet matched): FIFOs
// linked through Op::next, so they take no allocation and a match touches only the ops.
struct OpQueue {
  std::uint32_t head = kNone;
  std::uint32_t tail = kNone;
};

// A send or a receive in flight. Sends hold the message's cost; the receiver's copy reads it.
struct Op {
  model::MessageCost cost;
  Picoseconds posted_at{};
  Picoseconds partner_posted{};  // when the matching operation was posted
  Picoseconds arrived_at{};      // send: when its data (rendezvous: first its request) arrived
  std::uint64_t comm = 0;
  std::uint64_t bytes = 0;
  std::int32_t owner = 0;
  std::int32_t peer = 0;  // send: destination; receive: source (kAnySource until resolved)
  std::int32_t tag = 0;
  std::uint32_t match = kNone;
  std::uint32_t next = kNone;          // the next in its matching queue (OpQueue)
  std::uint32_t next_request = kNone;  // the owner's next older request
  std::uint64_t request = 0;           // the trace's request id, while the op is a request
  std::uint64_t fresh_bytes = 0;       // receive: of its buffer in pages never touched
  bool is_send : 1 = false;
  bool resolved : 1 = true;  // a receive whose source and tag are known
  bool done : 1 = false;
  bool arrived : 1 = false;
  bool request_arrived : 1 = false;
  bool acknowledged : 1 = false;          // eager send with acknowledgement: the receiver sent it
  bool acknowledgement_back : 1 = false;  // ... and it reached the sender
  bool acknowledgement_due : 1 = false;   // the receiver's acknowledge action is pending
  bool delivered : 1 = false;
  bool consumed : 1 = false;
  bool waited : 1 = false;
  bool cancelled : 1 = false;
  bool released : 1 = false;
  bool into_sent : 1 = false;     // receive: into the block the rank sent earlier in the call
  bool late_request : 1 = false;  // rendezvous send: its request came before its receive (o_u)
  // Eager send whose message leaves after its call returned (the gap): done at departed(), which
  // a wait or a free settles (one event per wait, not per send: Engine::wait_all).
  bool departs_later : 1 = false;
};

// When an eager send's message leaves (its local completion): its start plus its overhead.
inline Picoseconds departed(const Op& s) {
  return s.posted_at + s.cost.send_overhead;
}
// Whether the operation is complete at `now` (a send waiting for the gap is, once it has left).
inline bool done_by(const Op& o, Picoseconds now) {
  return o.done || (o.departs_later && departed(o) <= now);
}
// Settles a send waiting for the gap as done (a wait that names it, or its request freed);
// returns whether it was one.
inline bool settle_departure(Op& o) {
  if (!o.departs_later) return false;
  o.departs_later = false;
  o.done = true;
  return true;
}

// --contention: an operation's flow, kept apart from the operation (most replays have none).
struct FlowState {
  std::uint64_t version = 0;  // the link sharing's version of the flow
  std::uint64_t event = 0;    // the seq of its pending flow_end event
  Picoseconds event_time{};   // the time of that event (at or before the flow's end)
};

enum class ActionKind : std::uint8_t { copy, answer, inject, acknowledge, take_acknowledgement };
struct Action {
  ActionKind kind;
  std::uint32_t op;
  Picoseconds time;
};

enum class Phase : std::uint8_t { read, enter, start, steps, waits, exit, finished };

// A collective to run: blocking ones at their call, nonblocking ones at the call that completes
// them (they progress only inside MPI calls).
struct PendingCollective {
  std::uint64_t request = 0;
  std::uint64_t comm = 0;
  collectives::Operation op = collectives::Operation::barrier;
  std::int32_t root = -1;  // world rank
  std::uint64_t bytes = 0;
  bool commutative = true;
  std::uint64_t element_bytes = 1;  // the datatype's size (Open MPI's fallbacks count elements)
  std::vector<std::uint64_t> counts, recv_counts;
};

struct Persistent {
  std::uint64_t id;
  bool is_send;
  SendMode mode;
  std::int32_t peer, tag;
  std::uint64_t comm, bytes;
  std::uint64_t page_offset_bytes;  ///< a send's buffer start in its page (Engine::send_start)
};

// What a rank keeps of the call it replays; the engine decodes the event again (into one shared
// Event) where it needs the rest, so a rank holds no Event of its own.
struct CallRecord {
  std::int64_t start_tick = 0;
  std::int64_t end_tick = 0;
  std::int64_t in_mpi_ticks = 0;  // poll runs
  std::uint32_t function = 0;
  trace::RecordKind kind = trace::RecordKind::function;

  CallRecord() = default;
  explicit CallRecord(const Event& e)
      : start_tick(e.start_tick),
        end_tick(e.end_tick),
        in_mpi_ticks(e.in_mpi_ticks),
        function(e.function),
        kind(e.kind) {}
};

// A rank's latest send to one peer, for o_x (Network::charges_crossing): a message from that
// peer crossed it when each was posted before the other arrived.
struct LatestSend {
  std::uint32_t op = kNone;
  Picoseconds posted{};
  Picoseconds arrived = model::kMaxSimulatedTimePs;  // until it has
};

// What few ranks use: persistent requests, Mprobe'd messages, nonblocking collectives, and the
// latest send per peer where a link charges o_x.
// What a rank's last collective left in its result vector that peers pulled (the replay tracks
// it only where a copy into such a vector is measured: Network::charges_copy_into_sent).
struct PulledResult {
  std::uint64_t comm = ~std::uint64_t{0};
  collectives::Operation op = collectives::Operation::barrier;
  std::uint64_t bytes = 0;
  std::uint64_t pulled_bytes = 0;
};

struct RareState {
  std::vector<Persistent> persistent;
  std::vector<std::pair<std::uint64_t, std::pair<std::int32_t, std::int32_t>>> messages;  // Mprobe
  std::vector<PendingCollective> nonblocking;  // I-collectives not yet completed
  std::unordered_map<std::int32_t, LatestSend> latest_send_to;
};

// A rank's replay state, the fields every record touches first (a replay of many ranks visits
// each rank once per event, from memory: the fewer cache lines, the faster).
struct Rank {
  Phase phase = Phase::read;
  CallKind call = CallKind::none;
  bool in_call = false;
  bool progressing = false;  // in a call that progresses (trace::progresses): pending work runs
  bool blocked = false;
  bool started = false;  // MPI_Init seen
  bool step_posted = false;
  bool in_collective = false;
  bool latest_partner_is_send = false;
  bool probing = false;  // a blocking Probe waits for its message (probe_*)
  std::uint32_t wait_remaining = 0;
  std::uint32_t previous_function = 0;  // --denoise: the call before the computation
  std::uint32_t first_calls_done = 0;   // Network::first_call_bit: functions called already
  Picoseconds clock{};
  Picoseconds next_send{};
  // The call being replayed.
  Picoseconds call_start{};
  Picoseconds call_compute{};  // the computation replayed before it
  Picoseconds busy{};          // CPU work inside the call
  Picoseconds poll_until{};
  Picoseconds poll_fixed{};
  Picoseconds opaque_ps{};
  Picoseconds latest_partner{};
  CallRecord ev;
  std::int64_t call_previous_end_tick = 0;  // the end of the record before it, in the trace
  std::int64_t previous_end_tick = 0;
  std::int64_t overhead_ticks = 0;
  std::int64_t previous_cpu_ns = -1;
  std::vector<std::uint32_t> waits;  // operations the call completes
  OpQueue posted;                    // receives not yet matched, in posting order
  OpQueue unexpected;                // sends to this rank not yet matched, in order
  std::uint32_t requests = kNone;    // the newest request, linked through Op::next_request
  // CPU work that waits for a call that progresses: one inline, as most ranks hold one (an
  // MPI_Irecv's copy deferred to the Wait); a std::vector allocated per rank and made a 128 K-rank
  // ring replay 8 % slower (docs/simulate.md).
  boost::container::small_vector<Action, 1> pending;
  std::vector<std::uint32_t> temps;  // operations of the current step or blocking call
  std::vector<collectives::Step> steps;
  std::size_t step = 0;
  std::vector<std::uint64_t> step_comms;  // the communicator of each step
  std::optional<trace::RankReader> reader;
  double ns_per_tick = 1.0;  // the rank's clock (trace::ClockMap; durations are all it needs)
  RankResult result;
  std::int64_t init_end_tick = 0;
  Picoseconds finalize_at{-1};
  // When it last left a call that progresses: what arrived until then it has seen (an MPI_Irecv
  // takes it at once); what arrived later waits for its next progressing call. (Set at the
  // exit only: no posting call runs between a progressing call's entry and its exit.)
  Picoseconds progressed_at{-1};
  std::uint64_t probe_comm = 0;
  std::int32_t probe_source = 0, probe_tag = 0;
  std::unique_ptr<RareState> rare;

  RareState& rare_state() {
    if (!rare) rare = std::make_unique<RareState>();
    return *rare;
  }
  double duration_ns(std::int64_t ticks) const { return static_cast<double>(ticks) * ns_per_tick; }
};

/// The replay's meaning of a call (trace/call_semantics); a collective the replay has no
/// operation for charges nothing.
CallKind kind_of(const trace::FunctionInfo& f);
/// The collective operation of an MPI function name ("MPI_Iallreduce": allreduce).
std::optional<collectives::Operation> operation_of(std::string_view function_name);
SendMode send_mode(std::uint32_t function);

// ---------------------------------------------------------------------------------------------

/// The options, resolved once before the replay: no per-event path reads Options.
struct Policy {
  explicit Policy(const Options& o)
      : cpu_compute(o.compute == ComputeSource::cpu),
        compute_scale(o.compute_scale),
        noise(o.noise),
        algorithms(o.algorithms),
        contention(o.contention),
        buffer_page_offset_bytes(o.page_aligned_buffers ? 0 : model::kUnknownPageOffset),
        timeline(o.timeline),
        timeline_message(o.timeline_message),
        progress(o.progress) {}
  bool cpu_compute;      ///< computation from recorded CPU times
  double compute_scale;  ///< --compute-scale (1: recorded durations as they are)
  Noise noise;
  const std::map<collectives::Operation, collectives::Algorithm>& algorithms;  ///< --coll
  const std::string& contention;
  /// Where a program's send buffer starts within its page (Options::page_aligned_buffers).
  std::uint64_t buffer_page_offset_bytes;
  const std::function<void(const TimelineSpan&)>& timeline;             ///< empty: no timeline
  const std::function<void(const TimelineMessage&)>& timeline_message;  ///< empty: no arrows
  const std::function<void(std::uint64_t)>& progress;

  Picoseconds scale(Picoseconds ps) const {
    return compute_scale != 1.0
               ? model::checked_picoseconds(static_cast<double>(ps.count()) * compute_scale,
                                            "a computation scaled by --compute-scale")
               : ps;
  }
};

/// --critical-path, an observer (observers.cpp): each rank's path up to its mark, and each
/// operation's copy of its owner's path at the post. The engine holds none when it is off.
class PathTracker {
 public:
  explicit PathTracker(std::size_t ranks) : rank_path_(ranks), mark_(ranks, Picoseconds{}) {}
  /// The rank's path grows to `t` in `function`.
  void grow(std::int32_t rank, std::uint32_t function, Picoseconds t);
  /// The owner's path as of `t` (inside `function`), kept with operation `op`.
  void keep_with(std::uint32_t op, std::int32_t rank, std::uint32_t function, Picoseconds t);
  /// `owner` waited until `t` for the operation `partner`: its path runs through the partner's.
  void through_partner(std::int32_t owner, std::uint32_t partner, Picoseconds t);
  const CriticalPath& of(std::int32_t rank) const {
    return rank_path_[static_cast<std::size_t>(rank)];
  }

 private:
  std::vector<CriticalPath> rank_path_;
  std::vector<Picoseconds> mark_;
  std::vector<CriticalPath> op_path_;
};

class Engine {
 public:
  Engine(const trace::TraceReader& trace, const Network& network, const Options& options);
  Result run();

 private:
  // queue
  void schedule(EventKind kind, std::uint32_t target, Picoseconds time);
  // A rank continuing at the present is part of the event being processed, which precedes
  // everything still queued in (time, seq) order; once its clock has moved past the present, it
  // yields to any event at or before its clock.
  bool must_yield(Picoseconds t) const {
    return t > now_ && !queue_.empty() && queue_.min_time() <= t;
  }
  // An operation completing at the present completes inline (it would be the next event anyway
  // as far as its owner can tell); a later completion is an event.
  void complete_at(std::uint32_t op, Picoseconds t) {
    if (t == now_)
      complete(op, t);
    else
      schedule(EventKind::completion, op, t);
  }
  void resume_at(std::uint32_t rank, Picoseconds t) { schedule(EventKind::resume, rank, t); }
  void process(const QueuedEvent& e);

  // operations
  std::uint32_t alloc_op();
  void release_if_finished(std::uint32_t id);
  /// `page_offset_bytes`: where the send buffer starts in its page (send_start, or
  /// model::kUnknownPageOffset for a library's temporary). `written`: the data is what the rank
  /// wrote earlier in the same collective call (collectives::Step::send_written); a pulled
  /// transfer of it costs Network::written_data.
  std::uint32_t post_send(Rank& r, std::int32_t me, std::int32_t dest, std::int32_t tag,
                          std::uint64_t comm, std::uint64_t bytes, SendMode mode,
                          std::uint64_t page_offset_bytes, bool written = false);
  /// Where a traced send's buffer starts in its page: the trace's send_page_offset_bytes, else the
  /// policy's (Options::page_aligned_buffers).
  std::uint64_t send_start(const trace::Event& e) const {
    return e.has(trace::kSendPageOffset) ? e.send_page_offset_bytes
                                         : policy_.buffer_page_offset_bytes;
  }
  /// `into_sent`: into the block the rank sent earlier in the same collective call
  /// (collectives::Step::recv_into_sent); a pulled transfer into it costs Network::into_sent.
  /// `fresh_bytes`: of its buffer in pages never touched (trace::Event::fresh_bytes), which
  /// cost Network::fresh_memory more.
  std::uint32_t post_recv(Rank& r, std::int32_t me, std::int32_t source, std::int32_t tag,
                          std::uint64_t comm, std::uint64_t bytes, bool resolved,
                          bool into_sent = false, std::uint64_t fresh_bytes = 0);
  /// Posts a receive and a send as MPI_Sendrecv and coll/base's steps do (`recv()` and `send()`
  /// post them; `dest` < 0: no send): the receive, then the send, except where the send of
  /// `bytes` to `dest` is rendezvous, which goes first. Posted receive first, a request the
  /// receive matches from the unexpected queue would be answered (under dependent progress: the
  /// receiver's pull) before the send's own request leaves, and the two transfers would follow
  /// each other; over vader a 2 MB MPI_Sendrecv whose peer came 5-60 us late took that lateness
  /// plus one transfer (8 KiB-512 KiB alike with 1-5 us), so the pull does not hold the send
  /// back. Eager sends keep the library's order: an eager message already there is copied out
  /// before the send.
  template <class PostRecv, class PostSend>
  void post_sendrecv(std::int32_t me, std::int32_t dest, std::uint64_t bytes, PostRecv&& recv,
                     PostSend&& send) {
    const bool send_first = dest >= 0 && net_.protocol(me, dest, bytes).rendezvous;
    if (send_first) send();
    recv();
    if (dest >= 0 && !send_first) send();
  }
  bool try_match_recv(Rank& r, std::uint32_t recv_id);
  void link(std::uint32_t send_id, std::uint32_t recv_id);
  void on_matched(std::uint32_t send_id, Picoseconds t);
  void acknowledge(Rank& r, std::uint32_t send_id, Picoseconds t);
  void answer_request(std::uint32_t send_id, Picoseconds t, bool seen = false);
  // Runs the action now if the rank is in a call that progresses, or in any call if the message
  // it handles was `seen` there; otherwise defers it to the rank's next progressing call.
  void trigger(std::int32_t rank, Action a, bool seen = false);
  void run_action(Rank& r, const Action& a);
  // Whether send `s` to rank r crossed r's latest send to s's owner (o_x).
  bool crossed(const Rank& r, const Op& s) const;
  void complete(std::uint32_t id, Picoseconds t);
  void wait_done(std::uint32_t rank, Picoseconds t, std::uint32_t op);
  void send_data(std::uint32_t id, Picoseconds injected);
  std::uint32_t probed_send(const Rank& r) const;
  void start_probe(Rank& r, std::uint64_t comm, std::int32_t source, std::int32_t tag);
  void wake_prober(const Op& send, Picoseconds t);
  void apply_flow_changes();

  // ranks
  void advance(std::uint32_t rank);
  bool load_next_call(Rank& r, std::int32_t me, Event& e);
  void start_call(Rank& r, std::int32_t me);
  /// Throws TraceError when `peer` is no rank of the trace.
  void check_peer(const Rank& r, std::int32_t me, std::int32_t peer) const;
  bool run_steps(Rank& r, std::int32_t me);
  /// Local work inside a call (a collective step's reduction or copy): the rank is busy.
  static void charge_local(Rank& r, Picoseconds t) {
    r.busy += t;
    r.clock += t;
  }
  bool wait_all(Rank& r, std::vector<std::uint32_t>& ops);
  void finish_call(Rank& r);
  void emit_timeline(const Rank& r, Picoseconds call_ps);
  void consume(Rank& r, std::vector<std::uint32_t>& ops);
  std::uint32_t op_of_request(Rank& r, std::uint64_t id, bool erase);
  void add_request(Rank& r, std::uint64_t id, std::uint32_t op);
  struct Found {
    std::uint32_t previous = kNone;  // the operation before it in the queue
    std::uint32_t id = kNone;
  };
  template <typename Match>
  Found find(const OpQueue& q, Match match) const;
  void push(OpQueue& q, std::uint32_t id);
  void unlink(OpQueue& q, std::uint32_t previous, std::uint32_t id);
  void remove(OpQueue& q, std::uint32_t id);
  void expand_collective(Rank& r, std::int32_t me, const PendingCollective& pc);
  void note_pulled_result(std::int32_t me, const PendingCollective& pc,
                          std::vector<collectives::Step>& steps);
  void note_copy_after_rendezvous(std::int32_t me, std::vector<collectives::Step>& steps);
  // An intercommunicator's two groups (world ranks in group rank order), groups[0] the one
  // holding the smaller world rank, and the ids under which each is a communicator of its own
  // (the local collectives of collectives::intercomm_parts run on them).
  struct Intercomm {
    std::array<std::vector<std::int32_t>, 2> groups;
    std::array<std::uint64_t, 2> group_ids{};
  };
  void register_intercomm(std::uint64_t comm, const std::vector<std::int32_t>& members,
                          std::uint32_t remote_size);
  void expand_intercomm_collective(Rank& r, std::int32_t me, const PendingCollective& pc,
                                   const Intercomm& ic);
  // Collectives' algorithms, tallied per (operation, Open MPI's choice, schedule run, how).
  static constexpr int kTuned = 0, kNonblocking = 1, kChosenWithColl = 2, kIntercomm = 3;
  struct UseKey {
    collectives::Operation op;
    int openmpi_id;
    collectives::Algorithm used;
    int how;
    auto operator<=>(const UseKey&) const = default;
  };
  static CollectiveUse describe_use(collectives::Operation op, const UseKey& key,
                                    const collectives::TunedChoice& choice);
  const std::vector<std::int32_t>& members_of(std::uint64_t comm, std::int32_t me);
  Picoseconds ticks_to_ps(const Rank& r, std::int64_t ticks) const;
  Picoseconds computation(Rank& r, const Event& e);
  [[noreturn]] void deadlock();

  const trace::TraceReader& trace_;
  const Network& net_;
  const Policy policy_;
  std::vector<Rank, HugePageAllocator<Rank>> ranks_;
  // Per rank, only where Network::charges_copy_into_sent (an array: a rank's RareState would cost
  // each collective call a pointer chase).
  std::vector<PulledResult> pulled_results_;
  std::vector<Op, HugePageAllocator<Op>> ops_;
  std::vector<std::uint32_t> free_ops_;
  std::uint64_t ops_in_flight_ = 0;
  MonotoneEventQueue<QueuedEvent> queue_;
  std::uint64_t seq_ = 0;
  Picoseconds now_{};                 // the time of the event being processed
  std::uint64_t clamped_events_ = 0;  // events computed before now_ (see schedule)
  Picoseconds noise_added_{};         // --noise, in all
  std::uint64_t noisy_computations_ = 0;
  // By function id: the replay's kind of the call, and trace::progresses of its own kind (a
  // collective the replay has no operation for is kind none, yet progresses). One load a record.
  struct CallInfo {
    CallKind kind = CallKind::opaque;
    bool progresses = true;
  };
  std::vector<CallInfo> calls_;
  Event event_;                   // the event being read or started, of any rank
  std::int32_t event_rank_ = -1;  // whose event event_ holds
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> comms_;
  std::unordered_map<std::uint64_t, Intercomm> intercomms_;
  std::vector<std::int32_t> world_;
  std::vector<std::int32_t> self_;
  collectives::Collective scratch_;
  Result result_;
  std::vector<FunctionTotals> function_totals_;
  std::map<UseKey, CollectiveUse> collective_uses_;
  std::unique_ptr<PathTracker> paths_;  // --critical-path, else null
  // --denoise: per rank, the least computation recorded at each site (previous call, call).
  std::vector<std::unordered_map<std::uint64_t, Picoseconds>> least_compute_;
  static std::uint64_t site_of(std::uint32_t previous, std::uint32_t function) {
    return (std::uint64_t{previous} << 32) | function;
  }
  void find_least_compute(std::uint32_t rank);
  /// Result::state_check from the trace's clock syncs, and a note where trace and profile saw
  /// the machine in different states.
  void check_machine_state(const trace::TraceReader& trace);
  std::unique_ptr<LinkSharing> sharing_;  // --contention other than none
  std::vector<LinkSharing::Change> flow_changes_;
  std::vector<FlowState> flows_;                       // by operation, with contention
  std::vector<TimelineArguments> timeline_arguments_;  // per rank, with --timeline only
};

}  // namespace
}  // namespace commgauge::sim::detail
