// A rank's progress through its trace: reading records, the computation between calls
// (recorded or CPU time, --denoise, --compute-scale, --noise), what each call starts and how
// its time is split into the breakdown.

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"
#include "sim/engine.hpp"
#include "trace/function_ids.hpp"

namespace commgauge::sim::detail {
namespace {  // one unit with the other parts (CMake unity group "engine")

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
    const bool init = e.kind == trace::RecordKind::function && e.function < calls_.size() &&
                      calls_[e.function].kind == CallKind::init;
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
        // An intercommunicator lists the local group, then the remote one.
        if (e.remote_size > 0 && e.members.size() > e.remote_size)
          register_intercomm(e.comm, e.members, e.remote_size);
        comms_.emplace(e.comm, e.members);
      }
      continue;
    }
    if (e.kind == trace::RecordKind::function || e.kind == trace::RecordKind::poll_run) break;
  }
  return true;
}

Picoseconds Engine::computation(Rank& r, const Event& e) {
  Picoseconds ps{};
  if (policy_.cpu_compute) {
    if (!e.has(trace::kCpu))
      throw InputError("compute cpu", fmt::format("{}: the trace has no CPU times (record it with "
                                                  "commgauge trace --cpu-time)",
                                                  r.reader->file_name()));
    // CPU time since the previous event ended, less what this call itself used (at most its
    // duration).
    const double call_ns = r.duration_ns(e.end_tick - e.start_tick);
    const double cpu_ns = static_cast<double>(e.cpu_ns - r.previous_cpu_ns) - call_ns;
    ps = r.previous_cpu_ns < 0
             ? Picoseconds{}
             : model::checked_picoseconds(std::max(0.0, cpu_ns) * 1000.0, "a recorded CPU time");
  } else {
    ps = ticks_to_ps(r, e.start_tick - r.previous_end_tick - e.local_ticks - e.fresh_look_ticks -
                            r.overhead_ticks);
  }
  if (e.has(trace::kCpu)) r.previous_cpu_ns = e.cpu_ns;
  return policy_.scale(ps);
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
  r.latest_partner = {};
  r.poll_until = {};
  r.poll_fixed = {};
  r.opaque_ps = {};
  if (e.kind == trace::RecordKind::poll_run) {
    // A run of failed polls: its time less its time inside MPI is computation spread over the
    // run (fixed); the rank is inside MPI meanwhile, so communication progresses.
    const Picoseconds run = ticks_to_ps(r, e.end_tick - e.start_tick);
    const Picoseconds in_mpi = ticks_to_ps(r, e.in_mpi_ticks);
    const Picoseconds fixed = policy_.scale(std::max(Picoseconds{}, run - in_mpi));
    r.poll_fixed = fixed;
    // Each failed call costs the profile's poll time, inside MPI (seed-independent: the
    // profile measures it; 0 when it does not have it).
    const auto polls = static_cast<std::int64_t>(std::min<std::uint64_t>(e.calls, 1ULL << 40));
    std::int64_t polling_ps = 0;
    if (__builtin_mul_overflow(polls, net_.failed_poll().count(), &polling_ps) ||
        Picoseconds{polling_ps} > model::kMaxMessageCostPs)
      throw TimeRangeError(
          fmt::format("rank {}: {} failed polls cost more than the simulated "
                      "clock holds",
                      me, e.calls));
    const Picoseconds polling{polling_ps};
    r.busy += polling;
    r.poll_until = r.clock + fixed + polling;
    // Polled requests already complete in the simulation: the replay lags behind the trace.
    for (const std::uint64_t id : e.requests) {
      const std::uint32_t op = op_of_request(r, id, false);
      if (op != kNone && done_by(ops_[op], r.clock)) {
        ++r.result.early_completions;
        break;
      }
    }
    return;
  }
  // The process's first call of a function does the library's one-time work first (the
  // profile's first_call_us), inside the call.
  if (const int bit = net_.first_call_bit(e.function);
      bit >= 0 && (r.first_calls_done & (1u << bit)) == 0) {
    r.first_calls_done |= 1u << bit;
    charge_local(r, net_.first_call(bit));
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
      if (paths_ && (!result_.critical_path || r.call_start > result_.predicted_ps)) {
        // The slowest rank so far: its path to MPI_Finalize is the run's critical path.
        paths_->grow(me, e.function, r.call_start);
        result_.predicted_ps = r.call_start;
        result_.critical_path = paths_->of(me);
        result_.critical_path_rank = me;
      }
      break;
    case CallKind::opaque:
      r.opaque_ps = ticks_to_ps(r, e.end_tick - e.start_tick);
      r.clock += r.opaque_ps;
      break;
    case CallKind::send:
      if (e.peer >= 0)
        r.waits.push_back(post_send(r, me, e.peer, e.tag, e.comm, e.bytes, mode, send_start(e)));
      break;
    case CallKind::isend:
      if (e.peer >= 0)
        add_request(r, e.request,
                    post_send(r, me, e.peer, e.tag, e.comm, e.bytes, mode, send_start(e)));
      break;
    case CallKind::recv:
    case CallKind::sendrecv: {
      const bool has_status = !e.completions.empty();
      const std::int32_t asked = r.call == CallKind::recv ? e.peer : e.root;
      const std::int32_t source = has_status ? e.completions[0].source : asked;
      const std::int32_t tag = has_status ? e.completions[0].tag : e.tag;
      const std::uint64_t bytes = r.call == CallKind::recv ? e.bytes : e.recv_bytes;
      post_sendrecv(
          me, r.call == CallKind::sendrecv ? e.peer : -1, e.bytes,
          [&] {
            if (source >= 0)
              r.waits.push_back(
                  post_recv(r, me, source, tag, e.comm, bytes, true, false, e.fresh_bytes));
          },
          [&] {
            r.waits.push_back(post_send(r, me, e.peer, e.tag, e.comm, e.bytes, SendMode::standard,
                                        send_start(e)));
          });
      break;
    }
    case CallKind::irecv:
      if (e.peer != trace::kProcNull) {
        // MPI_ANY_TAG is -1: a negative tag asks for any tag, flagged or not (as trace-check
        // reads it).
        const bool wildcard = e.peer < 0 || e.tag < 0 || e.flag(trace::kWildcardSource) ||
                              e.flag(trace::kWildcardTag);
        add_request(
            r, e.request,
            post_recv(r, me, e.peer, e.tag, e.comm, e.bytes, !wildcard, false, e.fresh_bytes));
      }
      break;
    case CallKind::send_init:
    case CallKind::recv_init:
      r.rare_state().persistent.push_back({e.request, r.call == CallKind::send_init, mode, e.peer,
                                           e.tag, e.comm, e.bytes, send_start(e)});
      break;
    case CallKind::start:
      for (std::size_t i = 0; i < e.requests.size(); ++i) {
        auto& persistent = r.rare_state().persistent;
        const auto it = std::find_if(persistent.begin(), persistent.end(),
                                     [&](const Persistent& p) { return p.id == e.requests[i]; });
        if (it == persistent.end() || it->peer < 0) continue;
        const std::uint64_t id = e.request + i;
        const std::uint32_t op =
            it->is_send ? post_send(r, me, it->peer, it->tag, it->comm, it->bytes, it->mode,
                                    it->page_offset_bytes)
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
        if (r.call != CallKind::wait && !done_by(ops_[op], r.clock)) ++r.result.forced_completions;
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
      const std::uint32_t op = post_recv(r, me, it->second.first, it->second.second, e.comm,
                                         e.bytes, true, false, e.fresh_bytes);
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
        settle_departure(ops_[op]);  // nobody waits for it: done when it leaves, unobserved
        release_if_finished(op);
      }
      break;
    case CallKind::comm_free:
      charge_local(r, net_.comm_release());
      break;
    case CallKind::comm_creation: {
      // The library's local work (the profile's comm_create_us: context id, collective modules),
      // then what the members must agree on over the parent: the split colours and keys (an
      // allgather of two ints each, as Open MPI's ompi_comm_split does) and the context id
      // (an allreduce of one int, ompi_comm_nextcid's first round). comm_create_us is a dup less
      // a measured MPI_Allreduce, which held the collective framework's own cost: that is
      // charged once as well.
      charge_local(r, net_.comm_creation() + net_.collective_call());
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
      // The collective framework's own cost, once per call (the profile's collective_call_us).
      charge_local(r, net_.collective_call());
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

void Engine::finish_call(Rank& r) {
  const CallRecord& e = r.ev;
  const Picoseconds call = r.clock - r.call_start;
  Breakdown& b = r.result.predicted;
  b.overhead += r.busy;
  b.opaque += r.opaque_ps;
  b.compute += r.poll_fixed;
  const Picoseconds waiting = std::max(Picoseconds{}, call - r.busy - r.opaque_ps - r.poll_fixed);
  if (r.in_collective) {
    b.synchronization += waiting;
  } else {
    const Picoseconds late = std::clamp(r.latest_partner - r.call_start, Picoseconds{}, waiting);
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
  if (policy_.timeline) emit_timeline(r, call);
  if (paths_) paths_->grow(static_cast<std::int32_t>(&r - ranks_.data()), e.function, r.clock);
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
        if (policy_.timeline) {
          // Kept beside the rank, not in it: a replay without --timeline reads none of it.
          constexpr std::uint32_t kShown =
              trace::kPeer | trace::kTag | trace::kRoot | trace::kComm | trace::kBytes;
          timeline_arguments_[ri] = {e.fields & kShown, e.peer, e.tag, e.root, e.comm, e.bytes};
        }
        const CallInfo info = e.kind == trace::RecordKind::poll_run ? CallInfo{CallKind::test, true}
                              : e.function < calls_.size()          ? calls_[e.function]
                                                                    : CallInfo{};
        r.call = info.kind;
        r.progressing = info.progresses;
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
        if (policy_.noise.mean_us > 0 && compute > Picoseconds{}) {
          const Picoseconds noise = noise_ps(policy_.noise, ri, r.result.records);
          compute += noise;
          noise_added_ += noise;
          ++noisy_computations_;
        }
        r.previous_function = e.function;
        r.call_compute = compute;
        if (paths_) paths_->grow(me, CriticalPath::kCompute, r.clock + compute);
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
        r.busy = {};
        if (r.progressing && !r.pending.empty()) {
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
        if (r.progressing) r.progressed_at = r.clock;
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

}  // namespace
}  // namespace commgauge::sim::detail
