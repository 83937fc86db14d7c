#include "net/virtual_network.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <queue>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "common/error.hpp"
#include "profile/link_params_json.hpp"

namespace commgauge::net {

using model::Picoseconds;

namespace {

enum class Tag : int { data = 0, barrier = 1 };
enum class OpKind { send, recv };
enum class EventKind { arrival, request_arrival, ack_arrival, completion };
// copy_unexpected: the copy of eager data that arrived before its receive was posted (o_u).
enum class ActionKind { copy, copy_unexpected, answer, inject, acknowledge, take_acknowledgement };
enum class State { ready, running, blocked, finished };

constexpr std::int64_t kPolling = -2;  // waiting_on value of a spinning test()

struct Op {
  OpKind kind = OpKind::send;
  int owner = 0;
  Tag tag = Tag::data;
  std::uint64_t bytes = 0;
  std::uint64_t payload = 0;
  std::int64_t match = -1;       // the partner operation, once matched (FIFO per direction and tag)
  model::MessageCost cost;       // sends only
  bool arrived = false;          // send: its data reached the receiver
  Picoseconds arrived_at{};      // send: when it did
  Picoseconds posted_at{};       // send: when its send overhead (or request) began
  bool request_arrived = false;  // rendezvous send: its request reached the receiver
  Picoseconds request_arrived_at{};  // ... when it did
  bool late_request = false;  // ... before its receive was posted (the answer costs o_u more)
  bool acknowledged = false;  // eager send with acknowledgement: the receiver sent it
  bool delivered = false;     // send: the receiver's copy ran (the op is no longer needed)
  bool done = false;
  bool consumed = false;  // completed by the user's wait or test
};

struct Event {
  Picoseconds time;
  std::uint64_t seq;
  EventKind kind;
  std::int64_t op;
};

// Ordered by (time, sequence number): a min-heap through std::priority_queue. Two events at
// the same time run in the order they were scheduled, so every run is deterministic.
struct EventLater {
  bool operator()(const Event& a, const Event& b) const {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
};

struct Action {
  ActionKind kind;
  std::int64_t op;
};

std::string local_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

class VirtualNetwork::Engine {
 public:
  explicit Engine(const model::LinkParams& link) : cost_(link), host_(local_host()) {}

  const model::CostModel& cost() const { return cost_; }
  void change_link(const model::LinkParams& link) {
    std::lock_guard lk(mu_);
    cost_ = model::CostModel(link);
  }

  void run(const std::function<void(Transport&)>& fn);

  // ---- operations of endpoint i (each is one transport call) ----
  std::int64_t isend(int i, Tag tag, std::uint64_t bytes, std::uint64_t payload);
  std::int64_t irecv(int i, Tag tag, std::uint64_t bytes);
  std::uint64_t wait(int i, std::int64_t id);
  bool test(int i, std::int64_t id, std::uint64_t* payload);
  void compute(int i, double us);
  double now_us(int i) {
    std::lock_guard lk(mu_);
    return model::to_microseconds(eps_[i].clock);
  }
  Counters counters(int i) {
    std::lock_guard lk(mu_);
    return eps_[i].counters;
  }
  const std::string& host() const { return host_; }

 private:
  struct Endpoint {
    Picoseconds clock{};
    State state = State::ready;
    bool in_call = false;
    bool progressing = false;  // in a call that progresses (trace::progresses): not isend/irecv
    // The latest time it was in such a call: what arrived until then it has seen (an MPI_Irecv
    // matches it at once); what arrived later waits for its next progressing call.
    Picoseconds progressed_at{-1};
    Picoseconds next_send{};  // earliest start of the next send (the gap)
    Picoseconds last_failed_test{-1};
    // The endpoint's latest send, for o_x: a message to it crossed this one when each was
    // posted before the other arrived (arrived stays at the clock's end until it does).
    struct LatestSend {
      std::int64_t op = -1;
      Picoseconds posted{}, arrived{};
    } latest_send;
    std::deque<Action> pending;  // actions deferred until the endpoint is in a call that progresses
    std::condition_variable cv;
    /// Counts the wake-ups sent to it (wake()): what await_turn spins on before it sleeps.
    std::atomic<std::uint64_t> wakeups{0};
    int unspun = 0;  ///< waits left to sleep at once after a spin that ran out (own thread only)
    std::int64_t waiting_on = -1;
    std::string waiting_what;
    Counters counters;
  };

  using Lock = std::unique_lock<std::mutex>;

  void reset();
  void thread_main(int i, const std::function<void(Transport&)>& fn, Transport& endpoint);
  void dispatch(Lock& lk, int self);
  /// Returns (holding the lock) once endpoint `self` runs or the run failed.
  void await_turn(Lock& lk, int self);
  static void wake(Endpoint& ep) {
    ep.wakeups.fetch_add(1, std::memory_order_release);
    ep.cv.notify_all();
  }
  void yield(Lock& lk, int i);
  /// isend and irecv do not progress (as MPI_Isend/MPI_Irecv in Open MPI); wait and test do.
  void enter_call(Lock& lk, int i, bool progresses = true);
  void exit_call(Lock& lk, int i);
  void block_until_done(Lock& lk, int i, std::int64_t id, const std::string& what);

  void schedule(EventKind kind, std::int64_t op, Picoseconds time, Picoseconds created);
  void process(const Event& ev);
  void on_matched(std::int64_t send_id, Picoseconds t);
  void answer_request(std::int64_t send_id, Picoseconds t, bool seen = false);
  /// Runs the action now if the endpoint is in a call that progresses, or in any call if the
  /// message it handles was `seen` there; otherwise defers it to its next progressing call.
  void trigger(int endpoint, Action action, Picoseconds t, bool seen = false);
  void run_action(int endpoint, Action action, Picoseconds t);
  void consume(std::int64_t id);
  void maybe_erase(std::int64_t id);
  Op& op(std::int64_t id);
  std::string describe_deadlock() const;

  model::CostModel cost_;
  std::string host_;
  std::mutex mu_;
  std::array<Endpoint, 2> eps_;
  std::unordered_map<std::int64_t, Op> ops_;
  std::int64_t next_op_ = 0;
  std::priority_queue<Event, std::vector<Event>, EventLater> events_;
  std::uint64_t next_seq_ = 0;
  Picoseconds now_{};
  // Unmatched operations per receiving endpoint and tag, in posting order.
  std::array<std::array<std::deque<std::int64_t>, 2>, 2> unmatched_sends_;
  std::array<std::array<std::deque<std::int64_t>, 2>, 2> unmatched_recvs_;
  std::string error_;
  std::exception_ptr first_exception_;
};

namespace {

// What a method sees: the Transport interface over one endpoint of the engine.
class VirtualEndpoint final : public Transport {
 public:
  VirtualEndpoint(VirtualNetwork::Engine& engine, int index) : engine_(engine), index_(index) {}
  std::string kind() const override { return "virtual"; }
  Role role() const override { return index_ == 0 ? Role::source : Role::dest; }
  int rank() const override { return index_; }
  int peer() const override { return 1 - index_; }
  void send(std::size_t bytes) override {
    Request r = isend(bytes);
    wait(r);
  }
  void recv(std::size_t bytes) override {
    Request r = irecv(bytes);
    wait(r);
  }
  Request isend(std::size_t bytes) override;
  Request irecv(std::size_t bytes) override;
  void wait(Request& request) override;
  bool test(Request& request) override;
  void barrier() override;
  double now_us() override;
  void compute(double us) override;
  void send_value(std::uint64_t value) override;
  std::uint64_t recv_value() override;
  const Clock& clock() const override { return clock_; }
  Counters counters() const override;
  nlohmann::json context() const override;

 private:
  VirtualNetwork::Engine& engine_;
  int index_;
  VirtualClock clock_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Scheduling

void VirtualNetwork::Engine::reset() {
  for (auto& e : eps_) {
    e.clock = {};
    e.state = State::ready;
    e.in_call = false;
    e.progressing = false;
    e.progressed_at = Picoseconds{-1};
    e.next_send = {};
    e.last_failed_test = Picoseconds{-1};
    e.latest_send = {};
    e.pending.clear();
    e.waiting_on = -1;
    e.counters = {};
  }
  ops_.clear();
  events_ = {};
  now_ = {};
  for (auto& per_tag : unmatched_sends_) {
    for (auto& q : per_tag)
      q.clear();
  }
  for (auto& per_tag : unmatched_recvs_) {
    for (auto& q : per_tag)
      q.clear();
  }
  error_.clear();
  first_exception_ = nullptr;
}

void VirtualNetwork::Engine::run(const std::function<void(Transport&)>& fn) {
  {
    std::lock_guard lk(mu_);
    reset();
  }
  VirtualEndpoint source(*this, 0);
  VirtualEndpoint dest(*this, 1);
  std::thread t0([&] { thread_main(0, fn, source); });
  std::thread t1([&] { thread_main(1, fn, dest); });
  {
    Lock lk(mu_);
    dispatch(lk, -1);
  }
  t0.join();
  t1.join();
  if (first_exception_) std::rethrow_exception(first_exception_);
}

void VirtualNetwork::Engine::thread_main(int i, const std::function<void(Transport&)>& fn,
                                         Transport& endpoint) {
  {
    Lock lk(mu_);
    await_turn(lk, i);
    if (eps_[i].state != State::running) return;
  }
  try {
    fn(endpoint);
  } catch (const std::exception& e) {
    Lock lk(mu_);
    if (!first_exception_) first_exception_ = std::current_exception();
    if (error_.empty()) {
      error_ = fmt::format("virtual {} endpoint failed: {}", to_string(endpoint.role()), e.what());
    }
    eps_[i].state = State::finished;
    for (auto& ep : eps_)
      wake(ep);
    return;
  }
  Lock lk(mu_);
  eps_[i].state = State::finished;
  eps_[i].in_call = false;
  if (error_.empty()) dispatch(lk, -1);
}

// Hands control to the earliest thing in virtual time: an event (ties go to events) or a ready
// endpoint. Returns when `self` runs again; throws if the run failed meanwhile.
void VirtualNetwork::Engine::dispatch(Lock& lk, int self) {
  for (;;) {
    if (!error_.empty()) break;
    int next = -1;
    for (int j = 0; j < 2; ++j) {
      if (eps_[j].state == State::ready && (next < 0 || eps_[j].clock < eps_[next].clock)) next = j;
    }
    if (!events_.empty() && (next < 0 || events_.top().time <= eps_[next].clock)) {
      const Event ev = events_.top();
      events_.pop();
      now_ = std::max(now_, ev.time);
      process(ev);
      continue;
    }
    if (next >= 0) {
      eps_[next].state = State::running;
      now_ = std::max(now_, eps_[next].clock);
      if (next == self) return;
      wake(eps_[next]);
      break;
    }
    bool blocked = false;
    for (const auto& e : eps_)
      blocked = blocked || e.state == State::blocked;
    if (blocked) {
      error_ = describe_deadlock();
      for (auto& e : eps_)
        wake(e);
    }
    break;
  }
  if (self < 0 || eps_[self].state == State::finished) return;
  await_turn(lk, self);
  if (eps_[self].state != State::running) throw TransportError(error_);
}

// The other endpoint mostly hands control back within microseconds, while a sleep on the
// condition variable costs a futex wake-up and a context switch each way (a virtual ping-pong
// took about 70 us, most of it there): spin on the wake-up count first, for at most kSpin, then
// sleep. The lock is taken again before the state is read, so the spin decides only when to look.
void VirtualNetwork::Engine::await_turn(Lock& lk, int self) {
  Endpoint& ep = eps_[self];
  const auto turn = [&] { return ep.state == State::running || !error_.empty(); };
  if (turn()) return;
  constexpr auto kSpin = std::chrono::microseconds(50);
  constexpr int kBackOff = 64;
  if (ep.unspun > 0) {
    --ep.unspun;
  } else {
    const std::uint64_t seen = ep.wakeups.load(std::memory_order_relaxed);
    lk.unlock();
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned i = 1; ep.wakeups.load(std::memory_order_acquire) == seen; ++i) {
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until) {
        ep.unspun = kBackOff;  // the other thread had no core (a loaded machine): sleep a while
        break;
      }
    }
    lk.lock();
  }
  ep.cv.wait(lk, turn);
}

std::string VirtualNetwork::Engine::describe_deadlock() const {
  std::string text = "virtual network deadlock:";
  for (int j = 0; j < 2; ++j) {
    const auto& e = eps_[j];
    const char* role = j == 0 ? "source" : "dest";
    if (e.state == State::blocked) {
      text += fmt::format(" the {} waits in {} at {} us;", role, e.waiting_what,
                          model::to_microseconds(e.clock));
    } else if (e.state == State::finished) {
      text += fmt::format(" the {} has finished;", role);
    }
  }
  text.pop_back();
  return text;
}

void VirtualNetwork::Engine::yield(Lock& lk, int i) {
  eps_[i].state = State::ready;
  dispatch(lk, i);
}

void VirtualNetwork::Engine::enter_call(Lock& lk, int i, bool progresses) {
  Endpoint& e = eps_[i];
  e.in_call = true;
  e.progressing = progresses;
  if (!progresses) return;
  e.progressed_at = e.clock;
  if (e.pending.empty()) return;
  while (!e.pending.empty()) {
    const Action a = e.pending.front();
    e.pending.pop_front();
    run_action(i, a, e.clock);
  }
  yield(lk, i);  // let the events up to the new clock happen before the call's own work
}

void VirtualNetwork::Engine::exit_call(Lock& lk, int i) {
  yield(lk, i);
  Endpoint& e = eps_[i];
  if (e.progressing) e.progressed_at = e.clock;
  e.in_call = false;
  e.progressing = false;
}

void VirtualNetwork::Engine::block_until_done(Lock& lk, int i, std::int64_t id,
                                              const std::string& what) {
  Endpoint& e = eps_[i];
  while (!op(id).done) {
    e.state = State::blocked;
    e.waiting_on = id;
    e.waiting_what = what;
    dispatch(lk, i);
  }
  e.waiting_on = -1;
}

// ---------------------------------------------------------------------------------------------
// Events and actions

Op& VirtualNetwork::Engine::op(std::int64_t id) {
  auto it = ops_.find(id);
  if (it == ops_.end())
    throw TransportError(fmt::format("virtual network: unknown request {}", id));
  return it->second;
}

void VirtualNetwork::Engine::schedule(EventKind kind, std::int64_t op_id, Picoseconds time,
                                      Picoseconds created) {
  // An event may not precede the moment that created it (only possible with L < -o).
  events_.push({std::max(time, created), next_seq_++, kind, op_id});
}

void VirtualNetwork::Engine::process(const Event& ev) {
  switch (ev.kind) {
    case EventKind::arrival: {
      Op& s = op(ev.op);
      s.arrived = true;
      s.arrived_at = ev.time;
      if (eps_[s.owner].latest_send.op == ev.op) eps_[s.owner].latest_send.arrived = ev.time;
      if (s.cost.acknowledged && s.cost.progress == model::Progress::independent) {
        s.acknowledged = true;  // ICP: off the receiver's CPU, at once
        schedule(EventKind::ack_arrival, ev.op, ev.time + s.cost.control_send + s.cost.latency,
                 ev.time);
      }
      // The receiver handles the data: it acknowledges it first (Tm = TA), then copies it out
      // if the receive is posted.
      if (s.cost.acknowledged && !s.acknowledged)
        trigger(1 - s.owner, {ActionKind::acknowledge, ev.op}, ev.time);
      if (s.match >= 0) trigger(op(s.match).owner, {ActionKind::copy, s.match}, ev.time);
      break;
    }
    case EventKind::request_arrival: {
      Op& s = op(ev.op);
      s.request_arrived = true;
      s.request_arrived_at = ev.time;
      if (s.match >= 0) answer_request(ev.op, ev.time);
      break;
    }
    case EventKind::ack_arrival: {
      Op& s = op(ev.op);
      if (s.cost.acknowledged) {  // of eager data (Tm = TA), or a pull's FIN
        if (s.cost.progress == model::Progress::dependent)
          trigger(s.owner, {ActionKind::take_acknowledgement, ev.op}, ev.time);
        else
          schedule(EventKind::completion, ev.op, ev.time + s.cost.control_recv, ev.time);
      } else if (s.cost.progress == model::Progress::dependent) {
        trigger(s.owner, {ActionKind::inject, ev.op}, ev.time);
      } else {
        // ICP: the acknowledgement is handled and the data sent off the sender's CPU.
        const Picoseconds injected = ev.time + s.cost.control_recv + s.cost.send_overhead;
        schedule(EventKind::completion, ev.op, injected, ev.time);
        schedule(EventKind::arrival, ev.op, injected + s.cost.transfer, ev.time);
      }
      break;
    }
    case EventKind::completion: {
      Op& o = op(ev.op);
      o.done = true;
      Endpoint& e = eps_[o.owner];
      if (e.state == State::blocked && e.waiting_on == ev.op) {
        e.state = State::ready;
        e.clock = std::max(e.clock, ev.time);
      }
      maybe_erase(ev.op);
      break;
    }
  }
  // A spinning test() wakes at the next event, whatever it is.
  for (auto& e : eps_) {
    if (e.state == State::blocked && e.waiting_on == kPolling) {
      e.state = State::ready;
      e.clock = std::max(e.clock, ev.time);
    }
  }
}

void VirtualNetwork::Engine::on_matched(std::int64_t send_id, Picoseconds t) {
  Op& s = op(send_id);
  if (!s.arrived && !(s.cost.rendezvous && s.request_arrived)) return;  // posted before it came
  // Matched at the receiver's posting: what it has seen (it progressed since the arrival) is
  // handled in the posting call; what it has not waits for its next progressing call.
  const int receiver = op(s.match).owner;
  const Picoseconds seen_until = eps_[receiver].progressed_at;
  if (s.arrived) {
    // The data is there (eager, or unexpected): only the copy is left. It may retire `s`. Data
    // that arrived before the receive was posted takes the unexpected path (o_u).
    trigger(receiver, {s.arrived_at < t ? ActionKind::copy_unexpected : ActionKind::copy, s.match},
            t, s.arrived_at <= seen_until);
    return;
  }
  s.late_request = true;
  answer_request(send_id, t, s.request_arrived_at <= seen_until);
}

// The receive is posted and the request has arrived: the receiver answers (seed 004, T4).
void VirtualNetwork::Engine::answer_request(std::int64_t send_id, Picoseconds t, bool seen) {
  Op& s = op(send_id);
  const int receiver = op(s.match).owner;
  if (s.cost.progress == model::Progress::dependent) {
    trigger(receiver, {ActionKind::answer, send_id}, t, seen);
  } else {
    const Picoseconds late = model::late_answer_cost(s.cost, s.late_request);
    const Picoseconds answered = t + late + s.cost.control_recv + s.cost.control_send;
    schedule(EventKind::ack_arrival, send_id, answered + s.cost.latency, t);
  }
}

void VirtualNetwork::Engine::trigger(int endpoint, Action action, Picoseconds t, bool seen) {
  Endpoint& e = eps_[endpoint];
  if (!e.progressing && !(seen && e.in_call)) {
    e.pending.push_back(action);
    return;
  }
  run_action(endpoint, action, t);
}

// A piece of work on an endpoint's CPU, started when the CPU is free and no earlier than t.
void VirtualNetwork::Engine::run_action(int endpoint, Action action, Picoseconds t) {
  Endpoint& e = eps_[endpoint];
  const Picoseconds start = std::max(t, e.clock);
  switch (action.kind) {
    case ActionKind::copy:
    case ActionKind::copy_unexpected: {
      Op& r = op(action.op);
      Op& s = op(r.match);
      e.clock = start + s.cost.recv_overhead;
      if (action.kind == ActionKind::copy_unexpected) e.clock += s.cost.unexpected_recv;
      // o_x: the message crossed this endpoint's latest send (to the one peer there is).
      const auto& mine = e.latest_send;
      if (mine.op >= 0 && mine.posted < s.arrived_at && s.posted_at < mine.arrived)
        e.clock += s.cost.crossing_recv;
      r.payload = s.payload;
      s.delivered = true;
      schedule(EventKind::completion, action.op, e.clock, start);
      maybe_erase(r.match);
      break;
    }
    case ActionKind::acknowledge: {  // the data has arrived: the receiver acknowledges it
      Op& s = op(action.op);
      s.acknowledged = true;
      e.clock = start + s.cost.control_send;
      schedule(EventKind::ack_arrival, action.op, e.clock + s.cost.latency, start);
      break;
    }
    case ActionKind::take_acknowledgement: {
      e.clock = start + op(action.op).cost.control_recv;
      schedule(EventKind::completion, action.op, e.clock, start);
      break;
    }
    case ActionKind::answer: {
      const Op& s = op(action.op);
      const Picoseconds late = model::late_answer_cost(s.cost, s.late_request);
      if (s.cost.pulled) {  // the receiver starts the transfer itself (DCP with Tm = RTA)
        e.clock = start + late + s.cost.control_recv + s.cost.send_overhead;
        schedule(EventKind::arrival, action.op, e.clock + s.cost.transfer, start);
        break;
      }
      e.clock = start + late + s.cost.control_recv + s.cost.control_send;
      schedule(EventKind::ack_arrival, action.op, e.clock + s.cost.latency, start);
      break;
    }
    case ActionKind::inject: {
      const Op& s = op(action.op);
      e.clock = start + s.cost.control_recv + s.cost.send_overhead;
      schedule(EventKind::completion, action.op, e.clock, start);
      schedule(EventKind::arrival, action.op, e.clock + s.cost.transfer, start);
      break;
    }
  }
}

void VirtualNetwork::Engine::consume(std::int64_t id) {
  op(id).consumed = true;
  maybe_erase(id);
}

void VirtualNetwork::Engine::maybe_erase(std::int64_t id) {
  auto it = ops_.find(id);
  if (it == ops_.end()) return;
  const Op& o = it->second;
  const bool finished = o.done && o.consumed;
  if (o.kind == OpKind::recv ? finished : finished && o.delivered) ops_.erase(it);
}

// ---------------------------------------------------------------------------------------------
// Calls

std::int64_t VirtualNetwork::Engine::isend(int i, Tag tag, std::uint64_t bytes,
                                           std::uint64_t payload) {
  Lock lk(mu_);
  enter_call(lk, i, false);
  Endpoint& e = eps_[i];
  const std::int64_t id = next_op_++;
  Op& s = ops_[id];
  s.kind = OpKind::send;
  s.owner = i;
  s.tag = tag;
  s.bytes = bytes;
  s.payload = payload;
  s.cost = cost_.message(bytes);
  // The gap spaces the messages, not the calls (the simulator's post_send): the call costs the
  // overhead; the message leaves in its turn, and its send completes then.
  const Picoseconds start = std::max(e.clock, e.next_send);
  e.next_send = start + s.cost.gap;
  s.posted_at = start;
  e.latest_send = {id, start, model::kMaxSimulatedTimePs};
  if (!s.cost.rendezvous) {
    const Picoseconds departed = start + s.cost.send_overhead;
    e.clock += s.cost.send_overhead;
    if (!s.cost.acknowledged) schedule(EventKind::completion, id, departed, start);
    schedule(EventKind::arrival, id, departed + s.cost.transfer, start);
  } else {
    e.clock += s.cost.control_send;
    schedule(EventKind::request_arrival, id, start + s.cost.control_send + s.cost.latency, start);
  }
  if (tag == Tag::data) {
    ++e.counters.messages;
    e.counters.bytes += bytes;
  }
  const int receiver = 1 - i;
  auto& recvs = unmatched_recvs_[receiver][static_cast<int>(tag)];
  if (!recvs.empty()) {
    const std::int64_t r_id = recvs.front();
    recvs.pop_front();
    Op& r = op(r_id);
    if (r.bytes != bytes) {
      throw TransportError(
          fmt::format("virtual network: {} bytes sent to a receive posted for {} "
                      "bytes",
                      bytes, r.bytes));
    }
    r.match = id;
    s.match = r_id;
    on_matched(id, start);
  } else {
    unmatched_sends_[receiver][static_cast<int>(tag)].push_back(id);
  }
  exit_call(lk, i);
  return id;
}

std::int64_t VirtualNetwork::Engine::irecv(int i, Tag tag, std::uint64_t bytes) {
  Lock lk(mu_);
  enter_call(lk, i, false);
  Endpoint& e = eps_[i];
  const std::int64_t id = next_op_++;
  Op& r = ops_[id];
  r.kind = OpKind::recv;
  r.owner = i;
  r.tag = tag;
  r.bytes = bytes;
  auto& sends = unmatched_sends_[i][static_cast<int>(tag)];
  if (!sends.empty()) {
    const std::int64_t s_id = sends.front();
    sends.pop_front();
    Op& s = op(s_id);
    if (s.bytes != bytes) {
      throw TransportError(
          fmt::format("virtual network: receive posted for {} bytes, but the peer "
                      "sent {} bytes",
                      bytes, s.bytes));
    }
    s.match = id;
    r.match = s_id;
    on_matched(s_id, e.clock);
  } else {
    unmatched_recvs_[i][static_cast<int>(tag)].push_back(id);
  }
  exit_call(lk, i);
  return id;
}

std::uint64_t VirtualNetwork::Engine::wait(int i, std::int64_t id) {
  Lock lk(mu_);
  enter_call(lk, i);
  Op& o = op(id);
  if (o.owner != i) throw TransportError("virtual network: waiting on another endpoint's request");
  const std::string what = fmt::format("wait for a {} of {} bytes",
                                       o.kind == OpKind::send ? "send" : "receive", o.bytes);
  block_until_done(lk, i, id, what);
  const std::uint64_t payload = op(id).payload;
  consume(id);
  exit_call(lk, i);
  return payload;
}

bool VirtualNetwork::Engine::test(int i, std::int64_t id, std::uint64_t* payload) {
  Lock lk(mu_);
  enter_call(lk, i);
  Endpoint& e = eps_[i];
  if (!op(id).done && e.last_failed_test == e.clock) {
    // The caller spins: let virtual time advance to the next event.
    e.state = State::blocked;
    e.waiting_on = kPolling;
    e.waiting_what = "a test() loop";
    dispatch(lk, i);
    e.waiting_on = -1;
  }
  const bool done = op(id).done;
  if (done) {
    if (payload) *payload = op(id).payload;
    consume(id);
  } else {
    e.last_failed_test = e.clock;
  }
  exit_call(lk, i);
  return done;
}

void VirtualNetwork::Engine::compute(int i, double us) {
  if (!(us >= 0)) throw InputError(fmt::format("compute time must be >= 0 us, got {}", us));
  Lock lk(mu_);
  eps_[i].clock += model::to_picoseconds(us);
  yield(lk, i);
}

// ---------------------------------------------------------------------------------------------
// The endpoint

namespace {

Request VirtualEndpoint::isend(std::size_t bytes) {
  return {engine_.isend(index_, Tag::data, bytes, 0)};
}

Request VirtualEndpoint::irecv(std::size_t bytes) {
  return {engine_.irecv(index_, Tag::data, bytes)};
}

void VirtualEndpoint::wait(Request& request) {
  if (!request.active()) throw TransportError("wait on an inactive request");
  engine_.wait(index_, request.id);
  request.id = -1;
}

bool VirtualEndpoint::test(Request& request) {
  if (!request.active()) throw TransportError("test on an inactive request");
  if (!engine_.test(index_, request.id, nullptr)) return false;
  request.id = -1;
  return true;
}

void VirtualEndpoint::barrier() {
  // Two-rank dissemination barrier: each side sends a 0-byte token and waits for the other's.
  const std::int64_t s = engine_.isend(index_, Tag::barrier, 0, 0);
  const std::int64_t r = engine_.irecv(index_, Tag::barrier, 0);
  engine_.wait(index_, r);
  engine_.wait(index_, s);
}

double VirtualEndpoint::now_us() {
  return engine_.now_us(index_);
}

void VirtualEndpoint::compute(double us) {
  engine_.compute(index_, us);
}

void VirtualEndpoint::send_value(std::uint64_t value) {
  const std::int64_t s = engine_.isend(index_, Tag::data, sizeof value, value);
  engine_.wait(index_, s);
}

std::uint64_t VirtualEndpoint::recv_value() {
  const std::int64_t r = engine_.irecv(index_, Tag::data, sizeof(std::uint64_t));
  return engine_.wait(index_, r);
}

Counters VirtualEndpoint::counters() const {
  return engine_.counters(index_);
}

nlohmann::json VirtualEndpoint::context() const {
  return {{"transport", "virtual"},
          {"hosts", {engine_.host(), engine_.host()}},
          {"virtual_net", profile::link_params_to_json(engine_.cost().link())}};
}

}  // namespace

VirtualNetwork::VirtualNetwork(const model::LinkParams& link)
    : engine_(std::make_unique<Engine>(link)) {}
VirtualNetwork::~VirtualNetwork() = default;

void VirtualNetwork::run(const std::function<void(Transport&)>& fn) {
  engine_->run(fn);
}

const model::CostModel& VirtualNetwork::cost() const {
  return engine_->cost();
}

void VirtualNetwork::change_link(const model::LinkParams& link) {
  engine_->change_link(link);
}

}  // namespace commgauge::net
