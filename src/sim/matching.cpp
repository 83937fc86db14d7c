// Point-to-point: MPI's matching queues, the eager and rendezvous protocols (seed 004's
// transfer mechanisms, the same semantics as net/virtual_network.cpp), probes and requests.

#include <algorithm>

#include <fmt/format.h>

#include "sim/engine.hpp"

namespace commgauge::sim::detail {
namespace {  // one unit with the other parts (CMake unity group "engine")

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
                                std::uint64_t comm, std::uint64_t bytes, SendMode mode,
                                std::uint64_t page_offset_bytes, bool written) {
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
    s.cost = net_.message(me, dest, bytes, page_offset_bytes);
    const bool range_rendezvous = s.cost.rendezvous;
    if (mode == SendMode::synchronous) s.cost.rendezvous = true;
    if (mode == SendMode::ready || mode == SendMode::buffered) s.cost.rendezvous = false;
    // Buffered sends complete locally; a send the mode moves to the other protocol takes that
    // protocol's plain form (a synchronous send of an eager range: the hand-shake, no TA ack).
    if (mode == SendMode::buffered || s.cost.rendezvous != range_rendezvous)
      s.cost.acknowledged = s.cost.pulled = false;
    if (written && s.cost.pulled) s.cost.transfer += net_.written_data(me, dest, bytes);
    // The gap spaces the messages a rank sends, not its calls: the message waits for its turn
    // (start) while the call costs the processor its overhead alone, as LogGOPSim keeps the CPU
    // and the NIC apart (a burst of nonblocking sends over vader: 0.07-0.27 us per MPI_Isend of
    // 1 KiB, where the gap is 1.03 us; docs/simulate.md). A blocking send still ends no
    // earlier than its message leaves: its completion is then.
    const Picoseconds start = std::max(r.clock, r.next_send);
    s.posted_at = start;
    if (net_.charges_crossing()) r.rare_state().latest_send_to[dest] = {id, start};
    if (paths_) paths_->keep_with(id, me, r.ev.function, start);
    r.next_send = start + s.cost.gap;
    if (!s.cost.rendezvous) {
      const Picoseconds leaves = start + s.cost.send_overhead;
      r.clock += s.cost.send_overhead;
      r.busy += s.cost.send_overhead;
      // Local completion when the data has left (a buffered send's at once: it was copied);
      // with acknowledgement (Tm = TA) the ack completes it. Nobody else looks at it: one that
      // leaves after the call is settled by the wait that names it (wait_all), with no event.
      ops_[id].done = !s.cost.acknowledged && (leaves <= r.clock || mode == SendMode::buffered);
      ops_[id].departs_later = !s.cost.acknowledged && !ops_[id].done;
      send_data(id, leaves);
    } else {
      r.clock += s.cost.control_send;
      r.busy += s.cost.control_send;
      schedule(EventKind::request_arrival, id, start + s.cost.control_send + s.cost.latency);
    }
  }
  ++result_.messages;
  if (net_.beyond_measured(me, dest, bytes)) {
    ++result_.beyond_measured.messages;
    result_.beyond_measured.largest_bytes = std::max(result_.beyond_measured.largest_bytes, bytes);
  }
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
                                std::uint64_t comm, std::uint64_t bytes, bool resolved,
                                bool into_sent, std::uint64_t fresh_bytes) {
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
  o.into_sent = into_sent;
  o.fresh_bytes = fresh_bytes;
  if (paths_) paths_->keep_with(id, me, r.ev.function, r.clock);
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
  Op& s = ops_[send_id];
  if (!s.arrived && !(s.cost.rendezvous && s.request_arrived)) return;  // posted before it came
  // Matched at the receiver's posting: what it has seen (it progressed since the arrival) is
  // handled in the posting call; what it has not waits for its next progressing call.
  const std::int32_t receiver = ops_[s.match].owner;
  const bool seen = s.arrived_at <= ranks_[static_cast<std::size_t>(receiver)].progressed_at;
  if (s.arrived) {
    trigger(receiver, {ActionKind::copy, s.match, t}, seen);
    return;
  }
  s.late_request = true;  // matched from the unexpected queue: its answer costs o_u more
  answer_request(send_id, t, seen);
}

// The receive is posted and the request has arrived: the receiver answers (seed 004, T4).
void Engine::answer_request(std::uint32_t send_id, Picoseconds t, bool seen) {
  const Op& s = ops_[send_id];
  if (s.cost.progress == model::Progress::dependent) {
    trigger(ops_[s.match].owner, {ActionKind::answer, send_id, t}, seen);
  } else {
    const Picoseconds late = model::late_answer_cost(s.cost, s.late_request);
    const Picoseconds answered = t + late + s.cost.control_recv + s.cost.control_send;
    schedule(EventKind::ack_arrival, send_id, answered + s.cost.latency);
  }
}

bool Engine::crossed(const Rank& r, const Op& s) const {
  if (!r.rare) return false;
  const auto it = r.rare->latest_send_to.find(s.owner);
  if (it == r.rare->latest_send_to.end()) return false;
  const LatestSend& mine = it->second;
  return mine.posted < s.arrived_at && s.posted_at < mine.arrived;
}

// The receiver sends the acknowledgement of eager data (o'_s from `t` on its CPU); it reaches
// the sender L later (Tm = TA).
void Engine::acknowledge(Rank& r, std::uint32_t send_id, Picoseconds t) {
  Op& s = ops_[send_id];
  s.acknowledged = true;
  r.clock = t + s.cost.control_send;
  r.busy += s.cost.control_send;
  schedule(EventKind::ack_arrival, send_id, r.clock + s.cost.latency);
}

void Engine::trigger(std::int32_t rank, Action a, bool seen) {
  Rank& r = ranks_[static_cast<std::size_t>(rank)];
  if (!r.in_call || !(r.progressing || seen)) {
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
      // Data that arrived before its receive was posted takes the unexpected path (o_u); a
      // message that crossed the receiver's own to its sender costs o_x more.
      Picoseconds copy = s.arrived_at < rv.posted_at ? s.cost.recv_overhead + s.cost.unexpected_recv
                                                     : s.cost.recv_overhead;
      if (net_.charges_crossing() && crossed(r, s)) copy += s.cost.crossing_recv;
      // The receiver's copy writes its buffer: pages never touched fault as it goes (a pulled
      // transfer carries them instead: the receiver's copy is the transfer).
      if (!s.cost.pulled && rv.fresh_bytes > 0)
        copy += net_.fresh_memory(s.owner, rv.owner, rv.fresh_bytes);
      r.clock = start + copy;
      r.busy += copy;
      s.delivered = true;
      if (policy_.timeline_message)
        policy_.timeline_message({static_cast<std::uint32_t>(s.owner),
                                  static_cast<std::uint32_t>(rv.owner), s.bytes,
                                  static_cast<double>(s.posted_at.count()) * 1e-3,
                                  static_cast<double>(r.clock.count()) * 1e-3});
      release_if_finished(rv.match);
      complete_at(a.op, r.clock);
      break;
    }
    case ActionKind::acknowledge: {  // the data has arrived: the receiver acknowledges it
      Op& s = ops_[a.op];
      s.acknowledgement_due = false;
      if (s.cancelled)  // withdrawn meanwhile: no acknowledgement, and nothing names it now
        release_if_finished(a.op);
      else
        acknowledge(r, a.op, start);
      break;
    }
    case ActionKind::take_acknowledgement: {
      const Picoseconds cr = ops_[a.op].cost.control_recv;
      r.clock = start + cr;
      r.busy += cr;
      complete_at(a.op, r.clock);
      break;
    }
    case ActionKind::answer: {
      Op& s = ops_[a.op];
      const Picoseconds late = model::late_answer_cost(s.cost, s.late_request);
      if (s.cost.pulled) {  // the receiver starts the transfer itself (DCP with Tm = RTA)
        if (s.match != kNone && ops_[s.match].into_sent)
          s.cost.transfer += net_.into_sent(s.owner, s.peer, s.bytes);
        if (s.match != kNone && ops_[s.match].fresh_bytes > 0)
          s.cost.transfer += net_.fresh_memory(s.owner, s.peer, ops_[s.match].fresh_bytes);
        r.clock = start + late + s.cost.control_recv + s.cost.send_overhead;
        r.busy += late + s.cost.control_recv + s.cost.send_overhead;
        send_data(a.op, r.clock);
        break;
      }
      r.clock = start + late + s.cost.control_recv + s.cost.control_send;
      r.busy += late + s.cost.control_recv + s.cost.control_send;
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
    if (o.partner_posted > r.latest_partner || r.latest_partner == Picoseconds{}) {
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
  if (paths_ && op != kNone && t >= r.clock && ops_[op].match != kNone)
    paths_->through_partner(ops_[op].owner, ops_[op].match, t);
  r.clock = std::max(r.clock, t);
  resume_at(rank, r.clock);
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

bool Engine::wait_all(Rank& r, std::vector<std::uint32_t>& ops) {
  if (r.wait_remaining == 0) {
    // Sends whose messages leave after the present (the gap) end the wait at the latest
    // departure: one completion event for them all, the others are done by then.
    std::uint32_t last_to_leave = kNone;
    for (const std::uint32_t id : ops) {
      Op& o = ops_[id];
      if (!settle_departure(o)) continue;
      if (departed(o) > r.clock &&
          (last_to_leave == kNone || departed(o) > departed(ops_[last_to_leave])))
        last_to_leave = id;
    }
    if (last_to_leave != kNone) {
      ops_[last_to_leave].done = false;
      schedule(EventKind::completion, last_to_leave, departed(ops_[last_to_leave]));
    }
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

}  // namespace
}  // namespace commgauge::sim::detail
