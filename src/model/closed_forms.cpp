#include "model/closed_forms.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::model {

namespace {

// One message's terms by the names the recurrences use: o'_s, o'_r, L, T1, T2, T3.
struct Terms {
  Picoseconds cs, cr, L, t1, t2, t3;
};
Terms terms(const MessageCost& m) {
  return {m.control_send, m.control_recv, m.latency, m.send_overhead, m.transfer, m.recv_overhead};
}

Picoseconds eager_one_way(const MessageCost& m) {
  return m.send_overhead + m.transfer + m.recv_overhead;
}

// The cycle of n eager messages in a row, the client's sends `sent` apart, the server computing
// `server_delay` before each receive after the first. A server slower than the sends posts
// every receive after its message arrived: each costs o_r + o_u (the unexpected path) from then
// on; one as fast or faster waits for each message.
Picoseconds eager_cycle(const MessageCost& m, Picoseconds sent, Picoseconds server_delay) {
  const Picoseconds received = server_delay + m.recv_overhead;
  return sent < received ? received + m.unexpected_recv : sent;
}

// When the receiver answers a rendezvous request that arrives at `request`, its receive posted
// at `posted`: a request that came first is matched from the unexpected queue (o_u more; the
// virtual network and the replay count a request arriving at the posting as first).
Picoseconds late_answer(const MessageCost& m, Picoseconds request, Picoseconds posted) {
  return request <= posted ? posted + m.unexpected_recv : request;
}

// The rendezvous rounds of PRTT as a max-plus recurrence, message by message. `client_delay`
// is d between the client's sends; `server_delay` is d before each of the server's receives
// after the first. Returns the client's time from its first send to the reply received.
Picoseconds rendezvous_prtt(const MessageCost& m, std::uint32_t n, Picoseconds client_delay,
                            Picoseconds server_delay) {
  const auto [cs, cr, L, t1, t2, t3] = terms(m);
  Picoseconds start{};   // the client starts send i (its request)
  Picoseconds posted{};  // the server has posted receive i
  Picoseconds done{};    // receive i completed at the server
  for (std::uint32_t i = 0; i < n; ++i) {
    const Picoseconds answered = late_answer(m, start + cs + L, posted);  // seed 004 T4
    const Picoseconds returned = answered + cr + cs + L + cr + t1;        // T5, then T1
    done = returned + t2 + t3;
    posted = done + (i + 1 < n ? server_delay : Picoseconds{});
    // The next request: after the delay, and no sooner than the gap after this one.
    start = std::max(returned + client_delay, start + m.gap);
  }
  // The reply: the client's receive is posted (it returned from its last send long ago).
  return done + (cs + L + cr) + (cs + L + cr) + t1 + t2 + t3;
}

// PRTT over a pulled rendezvous (DCP with Tm = RTA), message by message as the virtual network
// runs it. Receive j pulls message j once it is posted and the request is there (o'_r + T1 on
// the server's CPU), the data arrives T2 later, the server sends the FIN (o'_s) and copies (T3);
// the client's send ends when it has taken the FIN (o'_r, L after it left). Nothing runs ahead:
// send i ends only after receive i has pulled it.
Picoseconds pulled_prtt(const MessageCost& m, std::uint32_t n, Picoseconds client_delay,
                        Picoseconds server_delay) {
  const auto [cs, cr, L, t1, t2, t3] = terms(m);
  Picoseconds start{};   // the client starts send i (its request)
  Picoseconds posted{};  // the server has posted receive i
  Picoseconds done{};    // receive i completed at the server
  Picoseconds sent{};    // send i completed at the client
  for (std::uint32_t i = 0; i < n; ++i) {
    const Picoseconds arrival = late_answer(m, start + cs + L, posted) + cr + t1 + t2;
    done = arrival + cs + t3;
    sent = arrival + cs + L + cr;
    posted = done + (i + 1 < n ? server_delay : Picoseconds{});
    if (i + 1 < n) start = std::max(sent + client_delay, start + m.gap);
  }
  // The reply: its request reaches the client, whose receive is posted once its last send ended.
  const Picoseconds pulled = late_answer(m, done + cs + L, sent);
  return pulled + cr + t1 + t2 + cs + t3;
}

// PRTT with acknowledged eager messages (Tm = TA), message by message as the virtual network
// runs it. The server acknowledges a message (o'_s) when it arrives if it is inside a call then,
// else as its next receive begins (DCP; ICP: at once, off its CPU); it copies message j out (T3)
// in receive j, after every acknowledgement due by then. The client's send i ends when it has
// taken its ack (o'_r, L after it left), so the client may run ahead of the server's receives.
// The server's first receive is posted at the client's first send (seed 000's Listing 1 from a
// quiet start).
Picoseconds acknowledged_prtt(const MessageCost& m, std::uint32_t n, Picoseconds client_delay,
                              Picoseconds server_delay) {
  const bool dcp = m.progress == Progress::dependent;
  const Picoseconds cs = dcp ? m.control_send : Picoseconds{}, cr = m.control_recv;
  const Picoseconds ack_flight = m.control_send + m.latency;  // from handled to arrived
  const Picoseconds t1 = m.send_overhead, t2 = m.transfer, t3 = m.recv_overhead;
  // The client's side of message `acks` (the next one to be acknowledged).
  std::uint32_t acks = 0;
  Picoseconds start{}, arrival = t1 + t2, inj{}, acked{}, done{};
  // Each message's arrival, to tell whether it came before its receive was posted (o_u); on
  // the stack for seed 000's n = 16 (the calibration evaluates this most of a loggp run).
  const bool track = m.unexpected_recv > Picoseconds{};
  std::array<Picoseconds, 32> few{};
  std::vector<Picoseconds> many(track && n > few.size() ? n : 0);
  Picoseconds* const arrival_of = !track ? nullptr : many.empty() ? few.data() : many.data();
  const auto acknowledge = [&](Picoseconds handled) {
    if (arrival_of) arrival_of[acks] = arrival;
    inj = start + t1;
    acked = handled + ack_flight;
    done = dcp ? std::max(acked, inj) + cr : std::max(acked + cr, inj);
    if (++acks < n) {
      start = std::max(done + client_delay, start + m.gap);
      arrival = start + t1 + t2;
    }
  };
  Picoseconds clock{};  // the server: its CPU, inside receive j or at its end
  for (std::uint32_t j = 0; j < n; ++j) {
    if (j > 0) clock += server_delay;  // receive j begins
    if (!dcp) {  // the ack leaves at the arrival; the copy waits for the receive
      const Picoseconds arrived = arrival;
      acknowledge(arrived);
      // Arrived before receive j was posted: the unexpected path.
      clock = arrived < clock ? clock + t3 + m.unexpected_recv : arrived + t3;
      continue;
    }
    const Picoseconds posted = clock;
    const auto drain = [&] {  // every arrival by now, in this call
      while (acks < n && arrival <= clock) {
        acknowledge(clock);
        clock += cs;
      }
    };
    drain();
    // Message j came before receive j was posted (taken by an earlier call, or by the drain at
    // this one's start): the unexpected path.
    const bool unexpected = acks > j && arrival_of && arrival_of[j] < posted;
    if (acks == j) {  // message j is still on its way: the call waits for it
      clock = arrival;
      acknowledge(clock);
      clock += cs;
    }
    clock += t3;  // receive j copies message j out
    if (unexpected) clock += m.unexpected_recv;
    drain();
  }
  // The reply (acknowledged as well): sent once receive n is done; the client takes its own ack
  // and the reply's arrival in time order, inside its send and then its receive.
  // A reply that arrives before the client's last send has ended finds no receive posted: the
  // unexpected path.
  const Picoseconds reply = clock + t1 + t2;
  const Picoseconds late = reply < done ? m.unexpected_recv : Picoseconds{};
  if (!dcp) return std::max(reply, done) + t3 + late;
  if (reply < acked) {  // the client acknowledges the reply before its own ack is back
    const Picoseconds taken = std::max(acked, std::max(reply, inj) + cs) + cr;
    return taken + t3 + m.unexpected_recv;
  }
  return std::max(reply, done) + cs + t3 + late;
}

}  // namespace

Picoseconds one_way(const CostModel& c, std::uint64_t k) {
  return c.blocking_one_way(k);
}

Picoseconds round_trip(const CostModel& c, std::uint64_t k) {
  // With acknowledgement, a reply's ack can reach the client before its own: PRTT(1,0,s).
  if (c.message(k).acknowledged) return prtt(c, 1, Picoseconds{}, k);
  return std::max(2 * one_way(c, k), c.message(k).gap);
}

Picoseconds prtt(const CostModel& c, std::uint32_t n, Picoseconds d, std::uint64_t k) {
  const MessageCost m = c.message(k);
  if (n == 0) return Picoseconds{};
  if (m.pulled) return pulled_prtt(m, n, d, Picoseconds{});
  if (m.rendezvous) return rendezvous_prtt(m, n, d, Picoseconds{});
  if (m.acknowledged) return acknowledged_prtt(m, n, d, Picoseconds{});
  // seed 000 eq. (5): PRTT(1,0,s) + (n-1) max(o + d, G_all), with o_s, o_r and per-byte terms.
  return 2 * eager_one_way(m) +
         eager_cycle(m, std::max(m.send_overhead + d, m.gap), Picoseconds{}) *
             static_cast<std::int64_t>(n - 1);
}

Picoseconds prtt_server_delay(const CostModel& c, std::uint32_t n, Picoseconds d, std::uint64_t k) {
  const MessageCost m = c.message(k);
  if (n == 0) return Picoseconds{};
  if (m.pulled) return pulled_prtt(m, n, Picoseconds{}, d);
  if (m.rendezvous) return rendezvous_prtt(m, n, Picoseconds{}, d);
  if (m.acknowledged) return acknowledged_prtt(m, n, Picoseconds{}, d);
  return 2 * eager_one_way(m) +
         eager_cycle(m, std::max(m.send_overhead, m.gap), d) * static_cast<std::int64_t>(n - 1);
}

LogGPSTerms loggps_terms(const CostModel& c, std::uint64_t k, Picoseconds t_s, Picoseconds t_r) {
  const MessageCost m = c.message(k);
  LogGPSTerms t;
  t.rendezvous = m.rendezvous;
  t.t1 = m.send_overhead;
  t.t2 = m.transfer;
  t.t3 = m.recv_overhead;
  t.t4 = std::max(m.control_send + m.latency, t_r - t_s) + m.control_recv;
  t.t5 = m.control_send + m.latency + m.control_recv;
  return t;
}

Picoseconds loggps_communication_time(const CostModel& c, std::uint64_t k, Picoseconds t_s,
                                      Picoseconds t_r) {
  const LogGPSTerms t = loggps_terms(c, k, t_s, t_r);
  return (t.rendezvous ? t.t4 + t.t5 : Picoseconds{}) + t.t1 + t.t2 + t.t3;
}

Picoseconds loggps_send_time(const CostModel& c, std::uint64_t k, Picoseconds t_s,
                             Picoseconds t_r) {
  const LogGPSTerms t = loggps_terms(c, k, t_s, t_r);
  return t.rendezvous ? t.t4 + t.t5 + t.t1 : t.t1;  // Table 4, eqs. (4), (5)
}

Picoseconds loggps_recv_time(const CostModel& c, std::uint64_t k, Picoseconds t_s,
                             Picoseconds t_r) {
  const LogGPSTerms t = loggps_terms(c, k, t_s, t_r);
  const Picoseconds late = t_r - t_s;
  if (!t.rendezvous) return std::max(t.t1 + t.t2 - late, Picoseconds{}) + t.t3;  // eq. (7)
  const MessageCost m = c.message(k);
  return std::max(m.control_send + m.latency - late, Picoseconds{}) + m.control_recv + t.t5 + t.t1 +
         t.t2 + t.t3;  // eq. (9)
}

Picoseconds loggps_round_trip(const CostModel& c, std::uint64_t k) {
  return 2 * loggps_communication_time(c, k, Picoseconds{}, Picoseconds{});
}

std::string to_string(TransferMechanism t) {
  switch (t) {
    case TransferMechanism::T:
      return "T";
    case TransferMechanism::TA:
      return "TA";
    case TransferMechanism::RAT:
      return "RAT";
    case TransferMechanism::RTA:
      return "RTA";
  }
  return "?";
}

TransferMechanism transfer_mechanism_from_string(const std::string& s) {
  if (s == "T") return TransferMechanism::T;
  if (s == "TA") return TransferMechanism::TA;
  if (s == "RAT") return TransferMechanism::RAT;
  if (s == "RTA") return TransferMechanism::RTA;
  throw InputError(fmt::format("transfer mechanism must be T, TA, RAT or RTA, not \"{}\"", s));
}

OverlapCase overlap_case(const MessageCost& m) {
  if (!m.rendezvous) return m.acknowledged ? OverlapCase::eager_TA : OverlapCase::eager_T;
  if (m.pulled) return OverlapCase::dcp_RTA;
  return m.progress == Progress::dependent ? OverlapCase::dcp_RAT : OverlapCase::icp_RTA;
}

OverlapCosts isend_compute_wait(const CostModel& c, std::uint64_t k, Picoseconds comp,
                                Picoseconds t_r) {
  const MessageCost m = c.message(k);
  const auto [cs, cr, L, t1, t2, t3] = terms(m);
  OverlapCosts o;
  o.mechanism = overlap_case(m);
  Picoseconds receiver_free{};  // the receiver's CPU is free (inside MPI) from here
  Picoseconds arrival{};        // the data reaches the receiver
  Picoseconds t_rw{};           // the receiver enters MPI_Wait
  Picoseconds t_sw{};           // the sender enters MPI_Wait
  switch (o.mechanism) {
    case OverlapCase::eager_T: {
      // seed 001 §2.2.1: Os = Oi, Or = Oc, Tc = Oi + G(K-1) + L + Oc.
      o.isend = t1;
      t_sw = t1 + comp;
      o.sender_done = t_sw;
      // The copy happens in the receiver's Wait ("finished at the routine of MPI_Wait"): data
      // that arrived while the receiver computed before MPI_Irecv is not seen by that call,
      // which does not progress (trace::progresses); it costs o_u more if it came first.
      arrival = t1 + t2;
      t_rw = t_r + comp;
      o.receiver_done =
          std::max(arrival, t_rw) + t3 + (arrival < t_r ? m.unexpected_recv : Picoseconds{});
      break;
    }
    case OverlapCase::eager_TA: {
      // As eager, and the receiver acknowledges the data before its copy: under DCP in its
      // Wait (o'_s on its CPU; MPI_Irecv does not progress), under ICP at arrival. The sender's
      // Wait ends once it has taken the ack (o'_r).
      const bool dcp = m.progress == Progress::dependent;
      const Picoseconds ack_cpu = dcp ? cs : Picoseconds{};
      o.isend = t1;
      t_sw = t1 + comp;
      arrival = t1 + t2;
      t_rw = t_r + comp;
      const Picoseconds handled = dcp ? std::max(arrival, t_rw) : arrival;
      o.receiver_done = std::max(arrival, t_rw) + ack_cpu + t3 +
                        (arrival < t_r ? m.unexpected_recv : Picoseconds{});
      const Picoseconds acked = handled + cs + L;
      o.sender_done = dcp ? std::max(acked, t_sw) + cr : std::max(acked + cr, t_sw);
      break;
    }
    case OverlapCase::dcp_RAT: {
      // seed 001 §2.2.2, DCP/RAT: the receiver's Wait answers the request; the sender's Wait
      // receives the ack and sends the data. (The seed has MPI_Irecv answer a request that
      // arrived before it, Tr > Ts + O' + L; in Open MPI it does only if the receiver
      // progressed since, in some other call: here it computed, so its Wait answers, o_u later.)
      o.isend = cs;
      t_sw = cs + comp;
      const Picoseconds request = cs + L;
      t_rw = t_r + comp;
      const Picoseconds answered = std::max(request, t_rw) + late_answer_cost(m, request <= t_r);
      receiver_free = answered + cr + cs;
      const Picoseconds ack = receiver_free + L;
      o.sender_done = std::max(ack, t_sw) + cr + t1;
      arrival = o.sender_done + t2;
      o.receiver_done = std::max({arrival, t_rw, receiver_free}) + t3;
      break;
    }
    case OverlapCase::dcp_RTA: {
      // DCP with RTA (no formulas in seed 001): the receiver pulls the data when it handles the
      // request in its Wait (o'_r + T1, o_u more if the request came before MPI_Irecv); the data
      // arrives T2 later and, inside the Wait, the receiver sends the FIN (o'_s) and copies (T3).
      // The sender's Wait ends once it has taken the FIN (o'_r).
      o.isend = cs;
      t_sw = cs + comp;
      const Picoseconds request = cs + L;
      t_rw = t_r + comp;
      arrival = std::max(request, t_rw) + late_answer_cost(m, request <= t_r) + cr + t1 + t2;
      const Picoseconds handled = std::max(arrival, t_rw);
      o.receiver_done = handled + cs + t3;
      o.sender_done = std::max(handled + cs + L, t_sw) + cr;
      break;
    }
    case OverlapCase::icp_RTA: {
      // seed 001 §2.2.2, ICP: the hand-shake and the data proceed while both sides compute;
      // here they cost no application CPU (an offload engine or progress thread).
      o.isend = cs;
      t_sw = cs + comp;
      t_rw = t_r + comp;
      const Picoseconds answered = late_answer(m, cs + L, t_r);
      const Picoseconds injected = answered + cr + cs + L + cr + t1;
      o.sender_done = std::max(injected, t_sw);
      arrival = injected + t2;
      o.receiver_done = std::max(arrival, t_rw) + t3;
      break;
    }
  }
  o.osw = o.sender_done - t_sw;
  o.orw = o.receiver_done - t_rw;
  o.os = o.isend + o.osw;
  o.orr = o.irecv + o.orw;
  o.tc = o.receiver_done;
  const double c_us = to_microseconds(comp);
  o.rso = c_us > 0 ? c_us / (c_us + to_microseconds(o.os)) : 0;
  o.rro = c_us > 0 ? c_us / (c_us + to_microseconds(o.orr)) : 0;
  return o;
}

}  // namespace commgauge::model
