#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.hpp"

#include "collectives/openmpi_tuned.hpp"
#include "sim/event_queue.hpp"
#include "sim/huge_pages.hpp"
#include "sim/link_sharing.hpp"
#include "trace/call_semantics.hpp"
#include "trace/function_ids.hpp"
#include "trace/functions.hpp"

namespace commgauge::sim {

using model::Picoseconds;
using trace::CallKind;
using trace::Event;

Noise parse_noise(const std::string& text) {
  auto bad = [&text]() {
    return InputError("noise", "'" + text +
                                   "': expected exponential:MEAN_US or "
                                   "exponential:MEAN_US:SEED (MEAN_US > 0)");
  };
  const std::string kind = "exponential:";
  if (text.rfind(kind, 0) != 0) throw bad();
  const std::string rest = text.substr(kind.size());
  const std::size_t colon = rest.find(':');
  Noise noise;
  try {
    std::size_t used = 0;
    const std::string mean = rest.substr(0, colon);
    noise.mean_us = std::stod(mean, &used);
    if (used != mean.size() || !(noise.mean_us > 0) || !std::isfinite(noise.mean_us)) throw bad();
    if (colon != std::string::npos) {
      const std::string seed = rest.substr(colon + 1);
      if (seed.empty() || seed.find_first_not_of("0123456789") != std::string::npos) throw bad();
      noise.seed = std::stoull(seed);
    }
  } catch (const std::logic_error&) {  // stod, stoull: not a number, out of range
    throw bad();
  }
  return noise;
}

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

model::Picoseconds noise_ps(const Noise& noise, std::uint32_t rank, std::uint64_t record) {
  const std::uint64_t bits =
      splitmix64(splitmix64(noise.seed ^ (std::uint64_t{rank} << 32)) ^ splitmix64(record));
  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
  return static_cast<model::Picoseconds>(std::llround(-noise.mean_us * 1e6 * std::log1p(-u)));
}

Breakdown& Breakdown::operator+=(const Breakdown& o) {
  compute += o.compute;
  overhead += o.overhead;
  transfer += o.transfer;
  late_sender += o.late_sender;
  late_receiver += o.late_receiver;
  synchronization += o.synchronization;
  opaque += o.opaque;
  return *this;
}

void CriticalPath::add(std::int32_t rank, std::uint32_t function, model::Picoseconds start,
                       model::Picoseconds end) {
  const model::Picoseconds d = end - start;
  if (d <= 0) return;
  (function == kCompute ? compute : function == kNetwork ? network : mpi) += d;
  auto slot = [d](std::array<Slot, kSlots>& slots, model::Picoseconds& other, std::int64_t key) {
    for (Slot& s : slots) {
      if (s.key == key || s.key < 0) {
        s.key = key;
        s.time += d;
        return;
      }
    }
    other += d;
  };
  if (function != kNetwork) slot(ranks, other_ranks, rank);
  slot(functions, other_functions, function);
  last[steps % kSlots] = {rank, function, start, end};
  ++steps;
}

std::vector<CriticalPath::Step> CriticalPath::last_steps() const {
  std::vector<Step> out;
  const std::uint32_t n = std::min<std::uint32_t>(steps, kSlots);
  for (std::uint32_t i = steps - n; i < steps; ++i)
    out.push_back(last[i % kSlots]);
  return out;
}

namespace {

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
  Picoseconds posted_at = 0;
  Picoseconds partner_posted = 0;  // when the matching operation was posted
  std::uint64_t comm = 0;
  std::uint64_t bytes = 0;
  std::int32_t owner = 0;
  std::int32_t peer = 0;  // send: destination; receive: source (kAnySource until resolved)
  std::int32_t tag = 0;
  std::uint32_t match = kNone;
  std::uint32_t next = kNone;          // the next in its matching queue (OpQueue)
  std::uint32_t next_request = kNone;  // the owner's next older request
  std::uint64_t request = 0;           // the trace's request id, while the op is a request
  bool is_send : 1 = false;
  bool resolved : 1 = true;  // a receive whose source and tag are known
  bool done : 1 = false;
  bool arrived : 1 = false;
  bool request_arrived : 1 = false;
  bool delivered : 1 = false;
  bool consumed : 1 = false;
  bool waited : 1 = false;
  bool cancelled : 1 = false;
  bool released : 1 = false;
};

// --contention: an operation's flow, kept apart from the operation (most replays have none).
struct FlowState {
  std::uint64_t version = 0;   // the link sharing's version of the flow
  std::uint64_t event = 0;     // the seq of its pending flow_end event
  Picoseconds event_time = 0;  // the time of that event (at or before the flow's end)
};

enum class ActionKind : std::uint8_t { copy, answer, inject };
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

// What few ranks use: persistent requests, Mprobe'd messages, nonblocking collectives.
struct RareState {
  std::vector<Persistent> persistent;
  std::vector<std::pair<std::uint64_t, std::pair<std::int32_t, std::int32_t>>> messages;  // Mprobe
  std::vector<PendingCollective> nonblocking;  // I-collectives not yet completed
};

// A rank's replay state, the fields every record touches first (a replay of many ranks visits
// each rank once per event, from memory: the fewer cache lines, the faster).
struct Rank {
  Phase phase = Phase::read;
  CallKind call = CallKind::none;
  bool in_call = false;
  bool blocked = false;
  bool started = false;  // MPI_Init seen
  bool step_posted = false;
  bool in_collective = false;
  bool latest_partner_is_send = false;
  bool probing = false;  // a blocking Probe waits for its message (probe_*)
  std::uint32_t wait_remaining = 0;
  std::uint32_t previous_function = 0;  // --denoise: the call before the computation
  Picoseconds clock = 0;
  Picoseconds next_send = 0;
  // The call being replayed.
  Picoseconds call_start = 0;
  Picoseconds call_compute = 0;  // the computation replayed before it
  Picoseconds busy = 0;          // CPU work inside the call
  Picoseconds poll_until = 0;
  Picoseconds poll_fixed = 0;
  Picoseconds opaque_ps = 0;
  Picoseconds latest_partner = 0;
  CallRecord ev;
  std::int64_t call_previous_end_tick = 0;  // the end of the record before it, in the trace
  std::int64_t previous_end_tick = 0;
  std::int64_t overhead_ticks = 0;
  std::int64_t previous_cpu_ns = -1;
  std::vector<std::uint32_t> waits;  // operations the call completes
  OpQueue posted;                    // receives not yet matched, in posting order
  OpQueue unexpected;                // sends to this rank not yet matched, in order
  std::uint32_t requests = kNone;    // the newest request, linked through Op::next_request
  std::vector<Action> pending;       // CPU work that waits until the rank is inside MPI
  std::vector<std::uint32_t> temps;  // operations of the current step or blocking call
  std::vector<collectives::Step> steps;
  std::size_t step = 0;
  std::vector<std::uint64_t> step_comms;  // the communicator of each step
  std::optional<trace::RankReader> reader;
  double ns_per_tick = 1.0;  // the rank's clock (trace::ClockMap; durations are all it needs)
  RankResult result;
  std::int64_t init_end_tick = 0;
  Picoseconds finalize_at = -1;
  std::uint64_t probe_comm = 0;
  std::int32_t probe_source = 0, probe_tag = 0;
  std::unique_ptr<RareState> rare;

  RareState& rare_state() {
    if (!rare) rare = std::make_unique<RareState>();
    return *rare;
  }
  double duration_ns(std::int64_t ticks) const { return static_cast<double>(ticks) * ns_per_tick; }
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<collectives::Operation> operation_of(std::string_view function_name) {
  std::string name = lower(function_name.substr(4));
  if (auto op = collectives::parse_operation(name)) return op;
  if (name.size() > 1 && name[0] == 'i') return collectives::parse_operation(name.substr(1));
  return std::nullopt;
}

// The replay's meaning of a call is the one of trace/call_semantics; a collective the replay
// has no operation for charges nothing.
CallKind kind_of(const trace::FunctionInfo& f) {
  const CallKind k = trace::semantics_of(f).kind;
  if (k == CallKind::collective && !operation_of(f.name)) return CallKind::none;
  return k;
}

SendMode send_mode(std::uint32_t function) {
  namespace fn = trace::fn;
  if (function == fn::Ssend || function == fn::Issend || function == fn::Ssend_init)
    return SendMode::synchronous;
  if (function == fn::Rsend || function == fn::Irsend || function == fn::Rsend_init)
    return SendMode::ready;
  if (function == fn::Bsend || function == fn::Ibsend || function == fn::Bsend_init)
    return SendMode::buffered;
  return SendMode::standard;
}

// ---------------------------------------------------------------------------------------------

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
  std::uint32_t post_send(Rank& r, std::int32_t me, std::int32_t dest, std::int32_t tag,
                          std::uint64_t comm, std::uint64_t bytes, SendMode mode);
  std::uint32_t post_recv(Rank& r, std::int32_t me, std::int32_t source, std::int32_t tag,
                          std::uint64_t comm, std::uint64_t bytes, bool resolved);
  bool try_match_recv(Rank& r, std::uint32_t recv_id);
  void link(std::uint32_t send_id, std::uint32_t recv_id);
  void on_matched(std::uint32_t send_id, Picoseconds t);
  void answer_request(std::uint32_t send_id, Picoseconds t);
  void trigger(std::int32_t rank, Action a);
  void run_action(Rank& r, const Action& a);
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
  // Collectives' algorithms, tallied per (operation, Open MPI's choice, schedule run, how).
  static constexpr int kTuned = 0, kNonblocking = 1, kChosenWithColl = 2;
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
  const Options& options_;
  std::vector<Rank, HugePageAllocator<Rank>> ranks_;
  std::vector<Op, HugePageAllocator<Op>> ops_;
  std::vector<std::uint32_t> free_ops_;
  std::uint64_t ops_in_flight_ = 0;
  MonotoneEventQueue<QueuedEvent> queue_;
  std::uint64_t seq_ = 0;
  Picoseconds now_ = 0;               // the time of the event being processed
  std::uint64_t clamped_events_ = 0;  // events computed before now_ (see schedule)
  Picoseconds noise_added_ = 0;       // --noise, in all
  std::uint64_t noisy_computations_ = 0;
  std::vector<CallKind> kinds_;   // by function id
  Event event_;                   // the event being read or started, of any rank
  std::int32_t event_rank_ = -1;  // whose event event_ holds
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> comms_;
  std::vector<std::int32_t> world_;
  std::vector<std::int32_t> self_;
  collectives::Collective scratch_;
  Result result_;
  std::vector<FunctionTotals> function_totals_;
  std::map<UseKey, CollectiveUse> collective_uses_;
  // --critical-path: each rank's path up to path_mark_[rank], and each operation's copy of its
  // owner's path at the post.
  std::vector<CriticalPath> rank_path_;
  std::vector<Picoseconds> path_mark_;
  std::vector<CriticalPath> op_path_;
  void path_to(std::int32_t rank, std::uint32_t function, Picoseconds t);
  void snapshot_path(std::uint32_t op, std::int32_t rank, std::uint32_t function, Picoseconds t);
  void adopt_partner_path(std::uint32_t op, Picoseconds t);
  // --denoise: per rank, the least computation recorded at each site (previous call, call).
  std::vector<std::unordered_map<std::uint64_t, Picoseconds>> least_compute_;
  static std::uint64_t site_of(std::uint32_t previous, std::uint32_t function) {
    return (std::uint64_t{previous} << 32) | function;
  }
  void find_least_compute(std::uint32_t rank);
  std::unique_ptr<LinkSharing> sharing_;  // --contention other than none
  std::vector<LinkSharing::Change> flow_changes_;
  std::vector<FlowState> flows_;  // by operation, with contention
};

Engine::Engine(const trace::TraceReader& trace, const Network& network, const Options& options)
    : trace_(trace), net_(network), options_(options) {
  const auto table = trace::function_table();
  kinds_.assign(table.size() + 1, CallKind::opaque);
  for (const auto& f : table)
    kinds_[f.id] = kind_of(f);
  function_totals_.resize(table.size() + 1);
  const std::uint32_t n = trace.ranks();
  if (!trace.missing_ranks().empty())
    throw trace::TraceError(
        fmt::format("the trace has no data for rank {} (of {})", trace.missing_ranks().front(), n));
  world_.resize(n);
  std::iota(world_.begin(), world_.end(), 0);
  self_.resize(1);
  ranks_.resize(n);
  // Address space for two operations in flight per rank, touched only as they are used: the pool
  // then grows without copying (past that, as a vector does).
  ops_.reserve(std::size_t{2} * n);
  // The ranks' read buffers take at most kReadBuffersBytes: past that many ranks, each keeps a
  // window of its current block instead of the whole block (at least 256 B).
  constexpr std::size_t kReadBuffersBytes = std::size_t{256} << 20;
  const std::size_t window = std::size_t{n} * trace::kBlockPayloadTarget > kReadBuffersBytes
                                 ? std::max<std::size_t>(256, kReadBuffersBytes / n)
                                 : 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    Rank& r = ranks_[i];
    r.reader.emplace(trace.open_rank(i, trace::HeaderMode::essentials, window));
    r.ns_per_tick = trace::clock_map(trace, *r.reader).ns_per_tick();
    r.overhead_ticks = r.reader->essentials().overhead_ticks_per_event;
  }
  result_.model = network.model_name();
  if (options.denoise) {
    least_compute_.resize(n);
    for (std::uint32_t i = 0; i < n; ++i)
      find_least_compute(i);
  }
  if (options.critical_path) {
    rank_path_.resize(n);
    path_mark_.assign(n, 0);
  }
  if (options.contention == "myrinet")
    sharing_ = std::make_unique<LinkSharing>(
        std::make_unique<model::MyrinetModel>(options.myrinet_set_limit));
  else if (options.contention != "none")
    sharing_ =
        std::make_unique<LinkSharing>(model::make_sharing_model(options.contention, options.gige));
  result_.ranks = n;
}

namespace {
[[noreturn, gnu::cold]] void past_the_clock() {
  throw TimeRangeError(
      fmt::format("the simulated time passes {:.0f} days, beyond the range of the simulated clock",
                  static_cast<double>(model::kMaxSimulatedTimePs) / 8.64e16));
}
}  // namespace

void Engine::schedule(EventKind kind, std::uint32_t target, Picoseconds time) {
  if (time < now_) {
    // Nothing may happen before the event being processed; should a path compute such a time,
    // it happens now, and the count says so in the output.
    ++clamped_events_;
    time = now_;
  }
  if (time > model::kMaxSimulatedTimePs) [[unlikely]]
    past_the_clock();
  queue_.push({time, seq_++, target, kind});
}

Picoseconds Engine::ticks_to_ps(const Rank& r, std::int64_t ticks) const {
  if (ticks <= 0) return 0;
  const double ps = r.duration_ns(ticks) * 1000.0;
  if (!(ps <= static_cast<double>(model::kMaxSimulatedTimePs)))
    throw TimeRangeError(
        fmt::format("a recorded duration of {} ticks passes the range of the "
                    "simulated clock",
                    ticks));
  return static_cast<Picoseconds>(std::llround(ps));
}

std::uint32_t Engine::alloc_op() {
  ++ops_in_flight_;
  result_.peak_ops_in_flight = std::max(result_.peak_ops_in_flight, ops_in_flight_);
  if (!free_ops_.empty()) {
    const std::uint32_t id = free_ops_.back();
    free_ops_.pop_back();
    ops_[id] = Op{};
    if (sharing_) flows_[id] = FlowState{};
    return id;
  }
  ops_.emplace_back();
  if (options_.critical_path) op_path_.resize(ops_.size());
  if (sharing_) flows_.resize(ops_.size());
  return static_cast<std::uint32_t>(ops_.size() - 1);
}

// ---- --denoise ------------------------------------------------------------------------------

// A first pass over the rank's trace (its own reader, streamed like the replay): the least
// computation before each (previous call, call) pair, with the replay's own accounting.
void Engine::find_least_compute(std::uint32_t i) {
  Rank pass;
  pass.reader.emplace(trace_.open_rank(i, trace::HeaderMode::essentials));
  pass.ns_per_tick = ranks_[i].ns_per_tick;
  pass.overhead_ticks = ranks_[i].overhead_ticks;
  auto& least = least_compute_[i];
  std::uint32_t previous = 0;
  Event e;
  while (load_next_call(pass, static_cast<std::int32_t>(i), e)) {
    const bool init = e.kind == trace::RecordKind::function && e.function < kinds_.size() &&
                      kinds_[e.function] == CallKind::init;
    if (!init) {
      const Picoseconds c = computation(pass, e);
      const auto [it, added] = least.try_emplace(site_of(previous, e.function), c);
      if (!added) it->second = std::min(it->second, c);
    } else if (e.has(trace::kCpu)) {
      pass.previous_cpu_ns = e.cpu_ns;
    }
    pass.previous_end_tick = e.end_tick;
    previous = e.function;
  }
}

// ---- critical path ---------------------------------------------------------------------------

// The rank's path grows to `t` in `function`.
void Engine::path_to(std::int32_t rank, std::uint32_t function, Picoseconds t) {
  const auto i = static_cast<std::size_t>(rank);
  rank_path_[i].add(rank, function, path_mark_[i], t);
  path_mark_[i] = std::max(path_mark_[i], t);
}

// The owner's path as of `t` (inside the call `function`), kept with the operation.
void Engine::snapshot_path(std::uint32_t op, std::int32_t rank, std::uint32_t function,
                           Picoseconds t) {
  path_to(rank, function, t);
  op_path_[op] = rank_path_[static_cast<std::size_t>(rank)];
}

// The owner of `op` waited until `t` for its partner: the path runs through the partner.
void Engine::adopt_partner_path(std::uint32_t op, Picoseconds t) {
  const Op& o = ops_[op];
  if (o.match == kNone) return;
  const CriticalPath& partner = op_path_[o.match];
  const auto i = static_cast<std::size_t>(o.owner);
  if (t < path_mark_[i] || partner.length() > t) return;
  rank_path_[i] = partner;
  rank_path_[i].add(o.owner, CriticalPath::kNetwork, partner.length(), t);
  path_mark_[i] = t;
}

void Engine::release_if_finished(std::uint32_t id) {
  const Op& o = ops_[id];
  // A send stays until its receive has copied it (the copy reads its cost), or it is withdrawn.
  // A cancelled send is kept until its data (or rendezvous request) has left the network: an
  // event still names it.
  const bool cancelled_and_gone =
      o.cancelled && (o.cost.rendezvous ? o.request_arrived : o.arrived);
  const bool finished = o.done && o.consumed && (!o.is_send || o.delivered || cancelled_and_gone);
  if (!finished || o.released) return;
  ops_[id].released = true;
  free_ops_.push_back(id);
  --ops_in_flight_;
}

// ---- point-to-point (the same semantics as net/virtual_network.cpp) ------------------------

void Engine::check_peer(const Rank& r, std::int32_t me, std::int32_t peer) const {
  // The replay indexes ranks by the trace's peers: one out of range is a damaged trace (which
  // trace-check rejects), never an access past the ranks.
  if (peer < 0 || static_cast<std::size_t>(peer) >= ranks_.size()) {
    throw trace::TraceError(fmt::format(
        "{}: rank {} event {} ({}): peer {} is not a rank of this {}-rank trace (trace-check "
        "rejects it)",
        r.reader->file_name(), me, r.reader->event_count() - 1, trace::function_name(r.ev.function),
        peer, ranks_.size()));
  }
}

std::uint32_t Engine::post_send(Rank& r, std::int32_t me, std::int32_t dest, std::int32_t tag,
                                std::uint64_t comm, std::uint64_t bytes, SendMode mode) {
  check_peer(r, me, dest);
  const std::uint32_t id = alloc_op();
  {
    Op& s = ops_[id];
    s.is_send = true;
    s.owner = me;
    s.peer = dest;
    s.tag = tag;
    s.comm = comm;
    s.bytes = bytes;
    s.cost = net_.message(me, dest, bytes);
    if (mode == SendMode::synchronous) s.cost.rendezvous = true;
    if (mode == SendMode::ready || mode == SendMode::buffered) s.cost.rendezvous = false;
    const Picoseconds start = std::max(r.clock, r.next_send);
    s.posted_at = start;
    if (options_.critical_path) snapshot_path(id, me, r.ev.function, start);
    r.next_send = start + s.cost.gap;
    if (!s.cost.rendezvous) {
      r.clock = start + s.cost.send_overhead;
      r.busy += s.cost.send_overhead;
      // Local completion, at the rank's own clock: nobody else looks at it, and nobody waits
      // on it yet, so it needs no event.
      ops_[id].done = true;
      send_data(id, r.clock);
    } else {
      r.clock = start + s.cost.control_send;
      r.busy += s.cost.control_send;
      schedule(EventKind::request_arrival, id, r.clock + s.cost.latency);
    }
  }
  ++result_.messages;
  Rank& d = ranks_[static_cast<std::size_t>(dest)];
  const Found recv = find(d.posted, [&](const Op& rv) {
    return rv.resolved && rv.comm == comm && rv.peer == me && (rv.tag == tag || rv.tag == -1);
  });
  if (recv.id == kNone) {
    push(d.unexpected, id);
    return id;
  }
  unlink(d.posted, recv.previous, recv.id);
  link(id, recv.id);
  on_matched(id, ops_[id].posted_at);
  return id;
}

std::uint32_t Engine::post_recv(Rank& r, std::int32_t me, std::int32_t source, std::int32_t tag,
                                std::uint64_t comm, std::uint64_t bytes, bool resolved) {
  if (resolved) check_peer(r, me, source);
  const std::uint32_t id = alloc_op();
  Op& o = ops_[id];
  o.owner = me;
  o.peer = source;
  o.tag = tag;
  o.comm = comm;
  o.bytes = bytes;
  o.posted_at = r.clock;
  o.resolved = resolved;
  if (options_.critical_path) snapshot_path(id, me, r.ev.function, r.clock);
  if (!resolved || !try_match_recv(r, id)) push(r.posted, id);
  return id;
}

bool Engine::try_match_recv(Rank& r, std::uint32_t recv_id) {
  const Op& rv = ops_[recv_id];
  // A wildcard receive is matched when its completion is read, after its post: the match (and
  // the rendezvous answer or the copy it starts) happens at the receiver's present.
  const Picoseconds matched_at = std::max(rv.posted_at, r.clock);
  const Found send = find(r.unexpected, [&](const Op& s) {
    return s.comm == rv.comm && s.owner == rv.peer && (s.tag == rv.tag || rv.tag == -1);
  });
  if (send.id == kNone) return false;
  unlink(r.unexpected, send.previous, send.id);
  link(send.id, recv_id);
  on_matched(send.id, matched_at);
  return true;
}

void Engine::link(std::uint32_t send_id, std::uint32_t recv_id) {
  Op& s = ops_[send_id];
  Op& rv = ops_[recv_id];
  s.match = recv_id;
  rv.match = send_id;
  s.partner_posted = rv.posted_at;
  rv.partner_posted = s.posted_at;
}

void Engine::on_matched(std::uint32_t send_id, Picoseconds t) {
  const Op& s = ops_[send_id];
  if (s.arrived) {
    trigger(ops_[s.match].owner, {ActionKind::copy, s.match, t});
    return;
  }
  if (s.cost.rendezvous && s.request_arrived) answer_request(send_id, t);
}

// The receive is posted and the request has arrived: the receiver answers (seed 004, T4).
void Engine::answer_request(std::uint32_t send_id, Picoseconds t) {
  const Op& s = ops_[send_id];
  if (s.cost.progress == model::Progress::dependent) {
    trigger(ops_[s.match].owner, {ActionKind::answer, send_id, t});
  } else {
    const Picoseconds answered = t + s.cost.control_recv + s.cost.control_send;
    schedule(EventKind::ack_arrival, send_id, answered + s.cost.latency);
  }
}

void Engine::trigger(std::int32_t rank, Action a) {
  Rank& r = ranks_[static_cast<std::size_t>(rank)];
  if (!r.in_call) {
    r.pending.push_back(a);
    return;
  }
  run_action(r, a);
}

// CPU work on a rank, started when its CPU is free and no earlier than the action's time.
void Engine::run_action(Rank& r, const Action& a) {
  const Picoseconds start = std::max(a.time, r.clock);
  switch (a.kind) {
    case ActionKind::copy: {
      Op& rv = ops_[a.op];
      Op& s = ops_[rv.match];
      r.clock = start + s.cost.recv_overhead;
      r.busy += s.cost.recv_overhead;
      s.delivered = true;
      release_if_finished(rv.match);
      complete_at(a.op, r.clock);
      break;
    }
    case ActionKind::answer: {
      const Op& s = ops_[a.op];
      r.clock = start + s.cost.control_recv + s.cost.control_send;
      r.busy += s.cost.control_recv + s.cost.control_send;
      schedule(EventKind::ack_arrival, a.op, r.clock + s.cost.latency);
      break;
    }
    case ActionKind::inject: {
      const Op& s = ops_[a.op];
      r.clock = start + s.cost.control_recv + s.cost.send_overhead;
      r.busy += s.cost.control_recv + s.cost.send_overhead;
      complete_at(a.op, r.clock);
      send_data(a.op, r.clock);
      break;
    }
  }
}

void Engine::complete(std::uint32_t id, Picoseconds t) {
  Op& o = ops_[id];
  o.done = true;
  if (o.waited) {
    o.waited = false;
    Rank& r = ranks_[static_cast<std::size_t>(o.owner)];
    if (o.partner_posted > r.latest_partner || r.latest_partner == 0) {
      r.latest_partner = std::max(r.latest_partner, o.partner_posted);
      r.latest_partner_is_send = !o.is_send;
    }
    wait_done(static_cast<std::uint32_t>(o.owner), t, id);
  }
  release_if_finished(id);
}

// One thing the rank waits for happened at `t` (operation `op`'s completion, or kNone: its
// probe's message arrived); the last one resumes it.
void Engine::wait_done(std::uint32_t rank, Picoseconds t, std::uint32_t op) {
  Rank& r = ranks_[rank];
  if (--r.wait_remaining != 0 || !r.blocked) return;
  r.blocked = false;
  if (options_.critical_path && op != kNone && t >= r.clock) adopt_partner_path(op, t);
  r.clock = std::max(r.clock, t);
  resume_at(rank, r.clock);
}

void Engine::process(const QueuedEvent& e) {
  switch (e.kind) {
    case EventKind::resume:
      advance(e.target);
      break;
    case EventKind::arrival: {
      Op& s = ops_[e.target];
      s.arrived = true;
      if (s.match != kNone)
        trigger(ops_[s.match].owner, {ActionKind::copy, s.match, e.time});
      else if (s.cancelled)
        release_if_finished(e.target);
      else
        wake_prober(s, e.time);
      break;
    }
    case EventKind::request_arrival: {
      Op& s = ops_[e.target];
      s.request_arrived = true;
      if (s.match != kNone)
        answer_request(e.target, e.time);
      else if (s.cancelled)
        release_if_finished(e.target);
      else
        wake_prober(s, e.time);
      break;
    }
    case EventKind::ack_arrival: {
      const Op& s = ops_[e.target];
      if (s.cost.progress == model::Progress::dependent) {
        trigger(s.owner, {ActionKind::inject, e.target, e.time});
      } else {
        // ICP: the acknowledgement is handled and the data sent off the sender's CPU.
        const Picoseconds injected = e.time + s.cost.control_recv + s.cost.send_overhead;
        complete_at(e.target, injected);
        send_data(e.target, injected);
      }
      break;
    }
    case EventKind::completion:
      complete(e.target, e.time);
      break;
    case EventKind::flow_start: {
      const Op& s = ops_[e.target];
      sharing_->start(e.target, static_cast<int>(net_.node(s.owner)),
                      static_cast<int>(net_.node(s.peer)), s.cost.transfer - s.cost.latency, e.time,
                      flow_changes_);
      ++result_.shared_transfers;
      apply_flow_changes();
      break;
    }
    case EventKind::flow_end: {
      const Op& s = ops_[e.target];
      FlowState& flow = flows_[e.target];
      if (e.seq != flow.event) break;  // superseded by an earlier end
      if (const Picoseconds end = sharing_->end(e.target); end > e.time) {
        flow.event = seq_;  // the flow slowed down since: look again at its end
        flow.event_time = end;
        schedule(EventKind::flow_end, e.target, end);
        break;
      }
      sharing_->finish(e.target, flow.version, e.time, flow_changes_);
      schedule(EventKind::arrival, e.target, e.time + s.cost.latency);
      apply_flow_changes();
      break;
    }
  }
}

// The data of send `id` leaves at `injected`: L + (k-1)G later it arrives, unless contention
// shares the (k-1)G of an inter-node transfer with others on the same node links (seed 003:
// only the transfer term is shared; L and the overheads are not).
void Engine::send_data(std::uint32_t id, Picoseconds injected) {
  const Op& s = ops_[id];
  if (sharing_ && s.cost.transfer > s.cost.latency && !net_.same_node(s.owner, s.peer))
    schedule(EventKind::flow_start, id, injected);  // in time order, as the sharing requires
  else
    schedule(EventKind::arrival, id, injected + s.cost.transfer);
}

// One pending flow_end per flow: a flow whose end moved later keeps its event, which finds the
// new end when it surfaces; only an earlier end needs a new event (the old one is then stale).
// Rates mostly fall as flows start, so most changes cost no event.
void Engine::apply_flow_changes() {
  for (const LinkSharing::Change& c : flow_changes_) {
    FlowState& flow = flows_[c.flow];
    const bool pending = flow.version != 0;
    flow.version = c.version;
    if (pending && flow.event_time <= c.end) continue;
    flow.event = seq_;
    flow.event_time = c.end;
    schedule(EventKind::flow_end, c.flow, c.end);
  }
}

// ---- probes ----------------------------------------------------------------------------------

// The first unmatched send the rank's probe can see (MPI's order among matching messages), or
// kNone.
std::uint32_t Engine::probed_send(const Rank& r) const {
  return find(r.unexpected,
              [&r](const Op& s) {
                return s.comm == r.probe_comm && s.owner == r.probe_source && s.tag == r.probe_tag;
              })
      .id;
}

// A blocking Probe returns once its message's envelope is there: the data of an eager message,
// the request of a rendezvous one. Until then the rank waits inside MPI_Probe.
void Engine::start_probe(Rank& r, std::uint64_t comm, std::int32_t source, std::int32_t tag) {
  r.probe_comm = comm;
  r.probe_source = source;
  r.probe_tag = tag;
  const std::uint32_t id = probed_send(r);
  if (id != kNone) {
    const Op& s = ops_[id];
    if (s.cost.rendezvous ? s.request_arrived : s.arrived) return;
  }
  r.probing = true;
  ++r.wait_remaining;  // the waits phase blocks until wake_prober
}

void Engine::wake_prober(const Op& send, Picoseconds t) {
  Rank& r = ranks_[static_cast<std::size_t>(send.peer)];
  if (!r.probing || send.comm != r.probe_comm || send.owner != r.probe_source ||
      send.tag != r.probe_tag)
    return;
  const std::uint32_t first = probed_send(r);
  if (first == kNone || &ops_[first] != &send) return;  // an earlier message is still on its way
  r.probing = false;
  r.latest_partner = std::max(r.latest_partner, send.posted_at);
  r.latest_partner_is_send = true;
  wait_done(static_cast<std::uint32_t>(send.peer), t, kNone);
}

// ---- ranks ------------------------------------------------------------------------------------

const std::vector<std::int32_t>& Engine::members_of(std::uint64_t comm, std::int32_t me) {
  if (comm == 0) return world_;
  if (comm == 1) {
    self_[0] = me;
    return self_;
  }
  const auto it = comms_.find(comm);
  if (it == comms_.end())
    throw trace::TraceError(
        fmt::format("rank {}: communicator {} is used before its comm_create "
                    "record",
                    me, comm));
  return it->second;
}

// The steps of one collective call, appended to the rank's step list (steps run in order).
void Engine::expand_collective(Rank& r, std::int32_t me, const PendingCollective& pc) {
  const auto& members = members_of(pc.comm, me);
  auto index_of = [&](std::int32_t world) -> std::size_t {
    if (pc.comm == 0) return static_cast<std::size_t>(world);
    const auto it = std::find(members.begin(), members.end(), world);
    if (it == members.end())
      throw trace::TraceError(
          fmt::format("rank {}: rank {} is not a member of communicator {}", me, world, pc.comm));
    return static_cast<std::size_t>(it - members.begin());
  };
  for (const auto* counts : {&pc.counts, &pc.recv_counts}) {
    if (!counts->empty() && counts->size() != members.size())
      throw trace::TraceError(fmt::format(
          "{}: rank {}, event {}: {} has {} per-member counts, but communicator {:#x} has {} "
          "members",
          r.reader->file_name(), me, r.reader->event_count() - 1, collectives::to_string(pc.op),
          counts->size(), pc.comm, members.size()));
  }
  const std::size_t my_index = index_of(me);
  const std::size_t root_index = collectives::rooted(pc.op) && pc.root >= 0 ? index_of(pc.root) : 0;
  // The communicator's member list is lent to the scratch collective, not copied.
  auto& shared = const_cast<std::vector<std::int32_t>&>(members);
  scratch_.members.swap(shared);
  struct Restore {
    std::vector<std::int32_t>& a;
    std::vector<std::int32_t>& b;
    ~Restore() { a.swap(b); }
  } restore{scratch_.members, shared};
  scratch_.op = pc.op;
  scratch_.me = my_index;
  scratch_.root = root_index;
  scratch_.bytes = pc.bytes;
  scratch_.counts = pc.counts;
  scratch_.recv_counts = pc.recv_counts;
  try {
    std::vector<collectives::Step> steps;
    UseKey key{pc.op, 0, collectives::Algorithm::linear, 0};
    collectives::TunedChoice choice;
    if (const auto it = options_.algorithms.find(pc.op); it != options_.algorithms.end()) {
      steps = collectives::schedule(scratch_, it->second);
      key.used = it->second;
      key.how = kChosenWithColl;
    } else {
      steps =
          collectives::openmpi_tuned_schedule(scratch_, pc.commutative, pc.element_bytes, &choice);
      key.openmpi_id = choice.decision.algorithm_id;
      key.used = choice.used;
      key.how = pc.request != 0 ? kNonblocking : kTuned;
    }
    r.steps.insert(r.steps.end(), steps.begin(), steps.end());
    r.step_comms.resize(r.steps.size(), pc.comm);
    auto [use, added] = collective_uses_.try_emplace(key);
    if (added) use->second = describe_use(pc.op, key, choice);
    ++use->second.calls;
  } catch (const std::invalid_argument& error) {
    throw trace::TraceError(fmt::format("{}: rank {}, event {}: {} cannot be replayed: {}",
                                        r.reader->file_name(), me, r.reader->event_count() - 1,
                                        collectives::to_string(pc.op), error.what()));
  }
}

// How one (operation, algorithm) pair was chosen, said once when it is first used.
CollectiveUse Engine::describe_use(collectives::Operation op, const UseKey& key,
                                   const collectives::TunedChoice& choice) {
  CollectiveUse use;
  use.operation = std::string(collectives::to_string(op));
  use.algorithm = std::string(collectives::to_string(key.used));
  if (key.how == kChosenWithColl) {
    use.note = "chosen with --coll";
    return use;
  }
  const auto& d = choice.decision;
  use.exact = choice.exact;
  if (d.algorithm_id == 0) {
    use.openmpi = fmt::format("basic:{}", use.algorithm);
    use.note = "Open MPI serves it from coll/basic (not decided by coll/tuned)";
  } else {
    use.openmpi = fmt::format("tuned:{} ({})", d.openmpi_name, d.algorithm_id);
    if (choice.composed)
      use.note = "composed of other collectives, each under its own tuned rule";
    else if (choice.fallback)
      use.note = "Open MPI's algorithm falls back to this one for fewer elements than members";
    else if (choice.exact)
      use.note = "Open MPI 4.1 tuned fixed rules, same messages";
    else
      use.note = "Open MPI 4.1 tuned fixed rules; not implemented, the nearest algorithm ran";
  }
  if (key.how == kNonblocking) {
    use.operation = "i" + use.operation;
    use.exact = false;
    use.note +=
        "; nonblocking: coll/libnbc's schedule approximated by the blocking rules, "
        "progressing only inside MPI calls";
  }
  return use;
}

bool Engine::load_next_call(Rank& r, std::int32_t me, Event& e) {
  for (;;) {
    if (!r.reader->next(e)) {
      if (r.reader->end() == trace::RankEnd::truncated)
        throw trace::TraceError(
            fmt::format("{}: rank {} ends without MPI_Finalize (the run "
                        "crashed or was killed): it cannot be replayed",
                        r.reader->file_name(), me));
      return false;
    }
    if (e.kind == trace::RecordKind::comm_create) {
      if (!comms_.contains(e.comm)) {
        std::vector<std::int32_t> members = e.members;
        if (e.remote_size > 0 && members.size() >= e.remote_size) {
          // An intercommunicator lists the local group, then the remote one; collectives on it
          // are rare and run over the union here.
        }
        comms_.emplace(e.comm, std::move(members));
      }
      continue;
    }
    if (e.kind == trace::RecordKind::function || e.kind == trace::RecordKind::poll_run) break;
  }
  return true;
}

bool Engine::wait_all(Rank& r, std::vector<std::uint32_t>& ops) {
  if (r.wait_remaining == 0) {
    for (const std::uint32_t id : ops) {
      Op& o = ops_[id];
      if (o.done) {
        if (o.partner_posted > r.latest_partner) {
          r.latest_partner = o.partner_posted;
          r.latest_partner_is_send = !o.is_send;
        }
        continue;
      }
      o.waited = true;
      ++r.wait_remaining;
    }
  }
  if (r.wait_remaining > 0) {
    r.blocked = true;
    return false;
  }
  return true;
}

void Engine::consume(Rank& r, std::vector<std::uint32_t>& ops) {
  (void)r;
  for (const std::uint32_t id : ops) {
    ops_[id].consumed = true;
    release_if_finished(id);
  }
  ops.clear();
}

// The newest operation the trace's request `id` names (a request id may be reused once its
// request completed).
std::uint32_t Engine::op_of_request(Rank& r, std::uint64_t id, bool erase) {
  for (std::uint32_t previous = kNone, op = r.requests; op != kNone;
       previous = op, op = ops_[op].next_request) {
    if (ops_[op].request != id) continue;
    if (erase)
      (previous == kNone ? r.requests : ops_[previous].next_request) = ops_[op].next_request;
    return op;
  }
  return kNone;
}

// An operation stays a request until a completing call (or Request_free) takes it; until then
// it is not consumed, so it is never released while linked here.
void Engine::add_request(Rank& r, std::uint64_t id, std::uint32_t op) {
  ops_[op].request = id;
  ops_[op].next_request = r.requests;
  r.requests = op;
}

// The first operation of the queue that `match` accepts, and the one before it (for unlink).
template <typename Match>
Engine::Found Engine::find(const OpQueue& q, Match match) const {
  for (Found at{kNone, q.head}; at.id != kNone; at = {at.id, ops_[at.id].next})
    if (match(ops_[at.id])) return at;
  return {};
}

void Engine::push(OpQueue& q, std::uint32_t id) {
  ops_[id].next = kNone;
  (q.tail == kNone ? q.head : ops_[q.tail].next) = id;
  q.tail = id;
}

void Engine::unlink(OpQueue& q, std::uint32_t previous, std::uint32_t id) {
  const std::uint32_t next = ops_[id].next;
  (previous == kNone ? q.head : ops_[previous].next) = next;
  if (q.tail == id) q.tail = previous;
  ops_[id].next = kNone;
}

void Engine::remove(OpQueue& q, std::uint32_t id) {
  const Found at = find(q, [this, id](const Op& o) { return &o == &ops_[id]; });
  if (at.id != kNone) unlink(q, at.previous, id);
}

Picoseconds Engine::computation(Rank& r, const Event& e) {
  Picoseconds ps = 0;
  if (options_.compute == ComputeSource::cpu) {
    if (!e.has(trace::kCpu))
      throw InputError("compute cpu", fmt::format("{}: the trace has no CPU times (record it with "
                                                  "commgauge trace --cpu-time)",
                                                  r.reader->file_name()));
    // CPU time since the previous event ended, less what this call itself used (at most its
    // duration).
    const double call_ns = r.duration_ns(e.end_tick - e.start_tick);
    const double cpu_ns = static_cast<double>(e.cpu_ns - r.previous_cpu_ns) - call_ns;
    ps = r.previous_cpu_ns < 0
             ? 0
             : static_cast<Picoseconds>(std::llround(std::max(0.0, cpu_ns) * 1000.0));
  } else {
    ps = ticks_to_ps(r, e.start_tick - r.previous_end_tick - e.local_ticks - r.overhead_ticks);
  }
  if (e.has(trace::kCpu)) r.previous_cpu_ns = e.cpu_ns;
  if (options_.compute_scale != 1.0)
    ps = static_cast<Picoseconds>(std::llround(static_cast<double>(ps) * options_.compute_scale));
  return ps;
}

void Engine::start_call(Rank& r, std::int32_t me) {
  if (event_rank_ != me) {  // another rank read an event since this one was read
    r.reader->reread(event_);
    event_rank_ = me;
  }
  const Event& e = event_;
  r.steps.clear();
  r.step_comms.clear();
  r.step = 0;
  r.step_posted = false;
  r.in_collective = false;
  r.wait_remaining = 0;
  r.latest_partner = 0;
  r.poll_until = 0;
  r.poll_fixed = 0;
  r.opaque_ps = 0;
  if (e.kind == trace::RecordKind::poll_run) {
    // A run of failed polls: its time less its time inside MPI is computation spread over the
    // run (fixed); the rank is inside MPI meanwhile, so communication progresses.
    const Picoseconds run = ticks_to_ps(r, e.end_tick - e.start_tick);
    const Picoseconds in_mpi = ticks_to_ps(r, e.in_mpi_ticks);
    Picoseconds fixed = std::max<Picoseconds>(0, run - in_mpi);
    if (options_.compute_scale != 1.0)
      fixed = static_cast<Picoseconds>(
          std::llround(static_cast<double>(fixed) * options_.compute_scale));
    r.poll_fixed = fixed;
    // Each failed call costs the profile's poll time, inside MPI (seed-independent: the
    // profile measures it; 0 when it does not have it).
    const auto polls = static_cast<Picoseconds>(std::min<std::uint64_t>(e.calls, 1ULL << 40));
    Picoseconds polling = 0;
    if (__builtin_mul_overflow(polls, net_.failed_poll(), &polling) ||
        polling > model::kMaxMessageCostPs)
      throw TimeRangeError(
          fmt::format("rank {}: {} failed polls cost more than the simulated "
                      "clock holds",
                      me, e.calls));
    r.busy += polling;
    r.poll_until = r.clock + fixed + polling;
    // Polled requests already complete in the simulation: the replay lags behind the trace.
    for (const std::uint64_t id : e.requests) {
      const std::uint32_t op = op_of_request(r, id, false);
      if (op != kNone && ops_[op].done) {
        ++r.result.early_completions;
        break;
      }
    }
    return;
  }
  const SendMode mode = send_mode(e.function);
  switch (r.call) {
    case CallKind::probe:
      if (!e.completions.empty() && e.completions[0].source >= 0)
        start_probe(r, e.comm, e.completions[0].source, e.completions[0].tag);
      break;
    case CallKind::none:
    case CallKind::init:
    case CallKind::iprobe:
      break;
    case CallKind::finalize:
    case CallKind::abort:
      r.finalize_at = r.call_start;
      if (options_.critical_path &&
          (!result_.critical_path || r.call_start > result_.predicted_ps)) {
        // The slowest rank so far: its path to MPI_Finalize is the run's critical path.
        path_to(me, e.function, r.call_start);
        result_.predicted_ps = r.call_start;
        result_.critical_path = rank_path_[static_cast<std::size_t>(me)];
        result_.critical_path_rank = me;
      }
      break;
    case CallKind::opaque:
      r.opaque_ps = ticks_to_ps(r, e.end_tick - e.start_tick);
      r.clock += r.opaque_ps;
      break;
    case CallKind::send:
      if (e.peer >= 0) r.waits.push_back(post_send(r, me, e.peer, e.tag, e.comm, e.bytes, mode));
      break;
    case CallKind::isend:
      if (e.peer >= 0)
        add_request(r, e.request, post_send(r, me, e.peer, e.tag, e.comm, e.bytes, mode));
      break;
    case CallKind::recv:
    case CallKind::sendrecv: {
      const bool has_status = !e.completions.empty();
      const std::int32_t asked = r.call == CallKind::recv ? e.peer : e.root;
      const std::int32_t source = has_status ? e.completions[0].source : asked;
      const std::int32_t tag = has_status ? e.completions[0].tag : e.tag;
      const std::uint64_t bytes = r.call == CallKind::recv ? e.bytes : e.recv_bytes;
      if (source >= 0) r.waits.push_back(post_recv(r, me, source, tag, e.comm, bytes, true));
      if (r.call == CallKind::sendrecv && e.peer >= 0)
        r.waits.push_back(post_send(r, me, e.peer, e.tag, e.comm, e.bytes, SendMode::standard));
      break;
    }
    case CallKind::irecv:
      if (e.peer != trace::kProcNull) {
        // MPI_ANY_TAG is -1: a negative tag asks for any tag, flagged or not (as trace-check
        // reads it).
        const bool wildcard = e.peer < 0 || e.tag < 0 || e.flag(trace::kWildcardSource) ||
                              e.flag(trace::kWildcardTag);
        add_request(r, e.request, post_recv(r, me, e.peer, e.tag, e.comm, e.bytes, !wildcard));
      }
      break;
    case CallKind::send_init:
    case CallKind::recv_init:
      r.rare_state().persistent.push_back(
          {e.request, r.call == CallKind::send_init, mode, e.peer, e.tag, e.comm, e.bytes});
      break;
    case CallKind::start:
      for (std::size_t i = 0; i < e.requests.size(); ++i) {
        auto& persistent = r.rare_state().persistent;
        const auto it = std::find_if(persistent.begin(), persistent.end(),
                                     [&](const Persistent& p) { return p.id == e.requests[i]; });
        if (it == persistent.end() || it->peer < 0) continue;
        const std::uint64_t id = e.request + i;
        const std::uint32_t op =
            it->is_send ? post_send(r, me, it->peer, it->tag, it->comm, it->bytes, it->mode)
                        : post_recv(r, me, it->peer, it->tag, it->comm, it->bytes, true);
        add_request(r, id, op);
      }
      break;
    case CallKind::wait:
    case CallKind::wait_some:
    case CallKind::test:
      for (const auto& c : e.completions) {
        if (c.request == 0) continue;
        if (r.rare && !r.rare->nonblocking.empty()) {
          auto& nonblocking = r.rare->nonblocking;
          const auto nb =
              std::find_if(nonblocking.begin(), nonblocking.end(),
                           [&](const PendingCollective& p) { return p.request == c.request; });
          if (nb != nonblocking.end()) {
            expand_collective(r, me, *nb);
            nonblocking.erase(nb);
            continue;
          }
        }
        const std::uint32_t op = op_of_request(r, c.request, true);
        if (op == kNone) continue;  // MPI_PROC_NULL, or a request the trace did not create
        Op& o = ops_[op];
        if (!o.is_send && !o.resolved && !o.cancelled) {
          // A wildcard receive takes the recorded match (a cancelled one has none: it stays
          // withdrawn).
          o.peer = c.source;
          o.tag = c.tag;
          o.resolved = true;
          remove(r.posted, op);
          if (!try_match_recv(r, op)) push(r.posted, op);
        }
        if (r.call != CallKind::wait && !ops_[op].done) ++r.result.forced_completions;
        r.waits.push_back(op);
      }
      break;
    case CallKind::mrecv:
    case CallKind::imrecv: {
      if (e.requests.empty()) break;
      auto& messages = r.rare_state().messages;
      const auto it = std::find_if(messages.begin(), messages.end(),
                                   [&](const auto& m) { return m.first == e.requests[0]; });
      if (it == messages.end()) break;  // MPI_MESSAGE_NO_PROC
      const std::uint32_t op =
          post_recv(r, me, it->second.first, it->second.second, e.comm, e.bytes, true);
      messages.erase(it);
      if (r.call == CallKind::mrecv)
        r.waits.push_back(op);
      else
        add_request(r, e.request, op);
      break;
    }
    case CallKind::cancel:
      for (const std::uint64_t id : e.requests) {
        const std::uint32_t op = op_of_request(r, id, false);
        if (op == kNone || ops_[op].match != kNone) continue;
        Op& o = ops_[op];
        // A cancelled operation that was never matched is withdrawn; a send that succeeded in
        // the trace is matched as usual and its Cancel has no effect.
        remove(o.is_send ? ranks_[static_cast<std::size_t>(o.peer)].unexpected : r.posted, op);
        o.cancelled = true;
        o.done = true;
      }
      break;
    case CallKind::request_free:
      for (const std::uint64_t id : e.requests) {
        const std::uint32_t op = op_of_request(r, id, true);
        if (op == kNone) continue;
        ops_[op].consumed = true;
        release_if_finished(op);
      }
      break;
    case CallKind::comm_free:
      r.busy += net_.comm_release();
      r.clock += net_.comm_release();
      break;
    case CallKind::comm_creation: {
      // The library's local work (the profile's comm_create_us: context id, collective modules),
      // then what the members must agree on over the parent: the split colours and keys (an
      // allgather of two ints each, as Open MPI's ompi_comm_split does) and the context id
      // (an allreduce of one int, ompi_comm_nextcid's first round).
      const Picoseconds local = net_.comm_creation();
      r.busy += local;
      r.clock += local;
      r.in_collective = true;
      PendingCollective pc;
      pc.comm = e.comm;
      pc.element_bytes = 4;
      const std::string_view name = trace::function_name(e.function);
      if (name == "MPI_Comm_split" || name == "MPI_Comm_split_type") {
        pc.op = collectives::Operation::allgather;
        pc.bytes = 8;
        expand_collective(r, me, pc);
      }
      pc.op = collectives::Operation::allreduce;
      pc.bytes = 4;
      expand_collective(r, me, pc);
      break;
    }
    case CallKind::collective: {
      const auto op = operation_of(trace::function_name(e.function));
      if (!op) break;
      PendingCollective pc;
      pc.request = e.request;
      pc.comm = e.comm;
      pc.op = *op;
      pc.root = e.has(trace::kRoot) ? e.root : -1;
      pc.bytes = e.bytes;
      pc.commutative = e.flag(trace::kCommutative);
      if (e.count > 0 && e.bytes >= e.count) pc.element_bytes = e.bytes / e.count;
      pc.counts = e.counts;
      pc.recv_counts = e.recv_counts;
      if (e.has(trace::kRequest)) {
        r.rare_state().nonblocking.push_back(std::move(pc));  // runs in the call that completes it
      } else {
        r.in_collective = true;
        expand_collective(r, me, pc);
      }
      break;
    }
  }
  if (r.call == CallKind::probe || r.call == CallKind::iprobe) {
    // Mprobe/Improbe: the message id names the matched message for the Mrecv that follows.
    if (!e.completions.empty() && e.has(trace::kRequest) && e.request != 0)
      r.rare_state().messages.emplace_back(
          e.request, std::make_pair(e.completions[0].source, e.completions[0].tag));
  }
}

bool Engine::run_steps(Rank& r, std::int32_t me) {
  while (r.step < r.steps.size()) {
    if (!r.step_posted) {
      const collectives::Step& st = r.steps[r.step];
      if (st.copy_bytes > 0) charge_local(r, net_.local_work(0, st.copy_bytes));
      const std::uint64_t ctx = r.step_comms[r.step] | kCollectiveContext;
      if (st.recv_from >= 0)
        r.temps.push_back(post_recv(r, me, st.recv_from, 0, ctx, st.recv_bytes, true));
      if (st.send_to >= 0)
        r.temps.push_back(post_send(r, me, st.send_to, 0, ctx, st.send_bytes, SendMode::standard));
      r.step_posted = true;
    }
    if (!wait_all(r, r.temps)) return false;
    consume(r, r.temps);
    if (const auto reduce = r.steps[r.step].reduce_bytes; reduce > 0)
      charge_local(r, net_.local_work(reduce, 0));
    ++r.step;
    r.step_posted = false;
  }
  return true;
}

void Engine::finish_call(Rank& r) {
  const CallRecord& e = r.ev;
  const Picoseconds call = r.clock - r.call_start;
  Breakdown& b = r.result.predicted;
  b.overhead += r.busy;
  b.opaque += r.opaque_ps;
  b.compute += r.poll_fixed;
  const Picoseconds waiting = std::max<Picoseconds>(0, call - r.busy - r.opaque_ps - r.poll_fixed);
  if (r.in_collective) {
    b.synchronization += waiting;
  } else {
    const Picoseconds late = std::clamp<Picoseconds>(r.latest_partner - r.call_start, 0, waiting);
    (r.latest_partner_is_send ? b.late_sender : b.late_receiver) += late;
    b.transfer += waiting - late;
  }
  const std::uint32_t f = e.function < function_totals_.size() ? e.function : 0;
  FunctionTotals& t = function_totals_[f];
  ++t.calls;
  t.predicted_ps += call - r.poll_fixed;
  const double recorded_ns = r.duration_ns(e.end_tick - e.start_tick);
  t.measured_ns +=
      e.kind == trace::RecordKind::poll_run ? r.duration_ns(e.in_mpi_ticks) : recorded_ns;
  ++r.result.records;
  ++result_.records;
  if (options_.timeline) emit_timeline(r, call);
  if (options_.critical_path)
    path_to(static_cast<std::int32_t>(&r - ranks_.data()), e.function, r.clock);
}

// The call just finished and the computation before it, as recorded and as replayed.
void Engine::emit_timeline(const Rank& r, Picoseconds call_ps) {
  const CallRecord& e = r.ev;
  const auto rank = static_cast<std::uint32_t>(&r - ranks_.data());
  const double call_start_ns = static_cast<double>(r.call_start) * 1e-3;
  const double compute_ns = static_cast<double>(r.call_compute) * 1e-3;
  if (compute_ns > 0) options_.timeline({rank, 0, true, call_start_ns - compute_ns, compute_ns});
  options_.timeline({rank, e.function, true, call_start_ns, static_cast<double>(call_ps) * 1e-3});
  const double measured_start = r.duration_ns(e.start_tick - r.init_end_tick);
  const double measured_gap = r.duration_ns(e.start_tick - r.call_previous_end_tick);
  if (measured_gap > 0)
    options_.timeline({rank, 0, false, measured_start - measured_gap, measured_gap});
  options_.timeline(
      {rank, e.function, false, measured_start, r.duration_ns(e.end_tick - e.start_tick)});
}

void Engine::advance(std::uint32_t ri) {
  Rank& r = ranks_[ri];
  const auto me = static_cast<std::int32_t>(ri);
  for (;;) {
    switch (r.phase) {
      case Phase::read: {
        event_rank_ = me;
        if (!load_next_call(r, me, event_)) {
          throw trace::TraceError(
              fmt::format("{}: rank {} ends without MPI_Finalize", r.reader->file_name(), me));
        }
        const Event& e = event_;
        r.ev = CallRecord(e);
        r.call = e.kind == trace::RecordKind::poll_run ? CallKind::test
                 : e.function < kinds_.size()          ? kinds_[e.function]
                                                       : CallKind::opaque;
        if (r.call == CallKind::init) {
          r.started = true;
          r.previous_function = e.function;
          r.previous_end_tick = e.end_tick;
          r.init_end_tick = e.end_tick;
          if (e.has(trace::kCpu)) r.previous_cpu_ns = e.cpu_ns;
          continue;
        }
        if (!r.started)
          throw trace::TraceError(fmt::format("{}: rank {}: {} before MPI_Init",
                                              r.reader->file_name(), me,
                                              trace::function_name(e.function)));
        Picoseconds compute = computation(r, e);
        if (!least_compute_.empty())
          compute = least_compute_[ri].at(site_of(r.previous_function, e.function));
        if (options_.noise.mean_us > 0 && compute > 0) {
          const Picoseconds noise = noise_ps(options_.noise, ri, r.result.records);
          compute += noise;
          noise_added_ += noise;
          ++noisy_computations_;
        }
        r.previous_function = e.function;
        r.call_compute = compute;
        if (options_.critical_path) path_to(me, CriticalPath::kCompute, r.clock + compute);
        r.call_previous_end_tick = r.previous_end_tick;
        r.previous_end_tick = e.end_tick;
        if (r.call != CallKind::finalize) {
          r.result.measured_in_mpi_ns +=
              r.duration_ns(e.kind == trace::RecordKind::poll_run ? e.in_mpi_ticks
                                                                  : e.end_tick - e.start_tick) +
              r.duration_ns(e.local_ticks);
        }
        if (r.call == CallKind::finalize || r.call == CallKind::abort)
          r.result.measured_ns = r.duration_ns(e.start_tick - r.init_end_tick);
        r.result.predicted.compute += compute;
        r.clock += compute;
        r.phase = Phase::enter;
        if (must_yield(r.clock)) {
          resume_at(ri, r.clock);
          return;
        }
        break;
      }
      case Phase::enter: {
        r.in_call = true;
        r.call_start = r.clock;
        r.busy = 0;
        if (!r.pending.empty()) {
          for (const Action& a : r.pending)
            run_action(r, a);
          r.pending.clear();
        }
        r.phase = Phase::start;
        if (must_yield(r.clock)) {
          resume_at(ri, r.clock);
          return;
        }
        break;
      }
      case Phase::start:
        start_call(r, me);
        r.phase = Phase::steps;
        break;
      case Phase::steps:
        if (!run_steps(r, me)) return;
        r.phase = Phase::waits;
        break;
      case Phase::waits:
        if (!wait_all(r, r.waits)) return;
        consume(r, r.waits);
        r.clock = std::max(r.clock, r.poll_until);
        r.phase = Phase::exit;
        if (must_yield(r.clock)) {
          resume_at(ri, r.clock);
          return;
        }
        break;
      case Phase::exit:
        finish_call(r);
        if (r.call == CallKind::finalize || r.call == CallKind::abort) {
          // MPI_Finalize keeps progressing what is still in flight: the rank stays inside MPI.
          r.phase = Phase::finished;
          r.result.predicted_ps = r.finalize_at;
          return;
        }
        r.in_call = false;
        r.phase = Phase::read;
        break;
      case Phase::finished:
        return;
    }
  }
}

void Engine::deadlock() {
  std::string report = "replay cannot progress: ";
  std::vector<std::uint32_t> blocked;
  for (std::uint32_t i = 0; i < ranks_.size(); ++i)
    if (ranks_[i].phase != Phase::finished) blocked.push_back(i);
  report += fmt::format("{} of {} ranks are blocked", blocked.size(), ranks_.size());
  bool rendezvous_wait = false, receive_wait = false;
  constexpr std::size_t kListed = 16;
  for (std::size_t n = 0; n < blocked.size(); ++n) {
    const Rank& r = ranks_[blocked[n]];
    std::vector<std::uint32_t> waiting;
    for (const auto* list : {&r.temps, &r.waits})
      for (const std::uint32_t id : *list)
        if (!ops_[id].done) waiting.push_back(id);
    for (const std::uint32_t id : waiting) {
      const Op& o = ops_[id];
      if (o.is_send && o.cost.rendezvous && o.match == kNone) rendezvous_wait = true;
      if (!o.is_send && o.match == kNone) receive_wait = true;
    }
    if (n >= kListed) continue;
    report += fmt::format(
        "\n  rank {}: event {} ({}{}), at {:.3f} us, waits for", blocked[n],
        r.reader->event_count() - 1, trace::function_name(r.ev.function),
        r.in_collective ? fmt::format(", collective step {} of {}", r.step + 1, r.steps.size())
                        : std::string(),
        model::to_microseconds(r.clock));
    if (r.probing)
      report += fmt::format(" [probe for a message from rank {}, tag {}: none arrives]",
                            r.probe_source, r.probe_tag);
    else if (waiting.empty())
      report += " nothing it can name";
    for (const std::uint32_t id : waiting) {
      const Op& o = ops_[id];
      const bool collective = (o.comm & kCollectiveContext) != 0;
      if (o.is_send)
        report += fmt::format(" [send of {} B to rank {}, tag {}{}: {}]", o.bytes, o.peer, o.tag,
                              collective ? " (collective)" : "",
                              o.match == kNone ? (o.cost.rendezvous ? "rendezvous, no matching "
                                                                      "receive posted"
                                                                    : "no matching receive")
                                               : "in flight");
      else
        report += fmt::format(" [receive from rank {}, tag {}{}: {}]", o.peer, o.tag,
                              collective ? " (collective)" : "",
                              o.match == kNone ? "no matching send posted" : "in flight");
    }
  }
  if (blocked.size() > kListed)
    report += fmt::format("\n  ... and {} more", blocked.size() - kListed);
  std::string cls;
  if (rendezvous_wait) {
    cls = "protocol";
    report +=
        "\nclassification: the program itself deadlocks under the simulated protocols: "
        "sends of k >= S (rendezvous) wait for their receive to be posted, and each "
        "receive is posted after a blocked send (e.g. every rank sends first). With a "
        "larger rendezvous threshold, buffered or nonblocking sends it would not.";
  } else {
    cls = "replay";
    report +=
        "\nclassification: an artefact of replaying this trace, not a property of the "
        "program: a receive has no matching send in the trace (an incomplete or "
        "inconsistent trace, e.g. a rank's file from another run)";
    if (!receive_wait) report += ", or the recorded order cannot be reproduced";
  }
  throw DeadlockError(report, cls);
}

Result Engine::run() {
  for (std::uint32_t i = 0; i < ranks_.size(); ++i)
    resume_at(i, 0);
  std::uint64_t next_progress = 1u << 22;
  while (!queue_.empty()) {
    const QueuedEvent e = queue_.pop();
    now_ = e.time;
    ++result_.events_processed;
    process(e);
    if (options_.progress && result_.events_processed >= next_progress) {
      next_progress += 1u << 22;
      options_.progress(result_.records);
    }
  }
  for (const Rank& r : ranks_)
    if (r.phase != Phase::finished) deadlock();
  result_.per_rank.reserve(ranks_.size());
  for (Rank& r : ranks_) {
    result_.predicted_ps = std::max(result_.predicted_ps, r.result.predicted_ps);
    result_.measured_ns = std::max(result_.measured_ns, r.result.measured_ns);
    result_.forced_completions += r.result.forced_completions;
    result_.early_completions += r.result.early_completions;
    result_.total += r.result.predicted;
    result_.per_rank.push_back(r.result);
  }
  for (std::size_t f = 1; f < function_totals_.size(); ++f)
    if (function_totals_[f].calls > 0)
      result_.functions[std::string(trace::function_name(static_cast<std::uint32_t>(f)))] =
          function_totals_[f];
  result_.contention = options_.contention;
  if (clamped_events_ > 0)
    result_.notes.push_back(fmt::format(
        "{} events were computed before the simulated present and moved to it (a replay "
        "artefact worth reporting)",
        clamped_events_));
  if (options_.noise.mean_us > 0)
    result_.notes.push_back(fmt::format(
        "--noise: exponential, mean {} us, seed {}: {:.6f} s added to {} computations (mean {:.3f} "
        "us)",
        options_.noise.mean_us, options_.noise.seed, model::to_microseconds(noise_added_) * 1e-6,
        noisy_computations_,
        noisy_computations_ > 0
            ? model::to_microseconds(noise_added_) / static_cast<double>(noisy_computations_)
            : 0.0));
  if (sharing_) {
    result_.rate_recomputations = sharing_->stats().recomputations;
    result_.largest_sharing_component = sharing_->stats().largest_component;
  }
  for (auto& [key, use] : collective_uses_)
    result_.collectives.push_back(std::move(use));
  return std::move(result_);
}

}  // namespace

Result simulate(const trace::TraceReader& trace, const Network& network, const Options& options) {
  Engine engine(trace, network, options);
  return engine.run();
}

}  // namespace commgauge::sim
