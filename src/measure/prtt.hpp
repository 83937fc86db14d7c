#pragma once
// The parametrized round trip time PRTT(n, d, s) of seed 000 (Listing 1), measured in plans that
// the source commands and the dest obeys, so one protocol serves every transport.
//
// client_delay (Listing 1): the client sends n messages of s bytes with a busy delay d between
//   them; the server receives the n, then replies with one message of s bytes.
// server_delay (commgauge's addition for o_r): the client sends n messages back to back; the
//   server receives the first, then before each further receive computes for d, so that the
//   messages wait for it and each receive's cost shows; then it replies.
// late_receiver (commgauge's rendezvous probe): the server computes for d before it posts its
//   receive and times that receive on its own clock; it replies with 1 byte. An eager message
//   has arrived by then and the receive only copies it out (seed 004's T3); a rendezvous
//   receive must first answer the request and wait for the data (T5 + T1 + T2 + T3). The source
//   also times its send: a send that waits is no proof of a hand-shake (Open MPI's shared-memory
//   BTL completes even eager sends above 256 B only when the receiver has taken the fragment),
//   but one that returns before the receive is posted shows there is none (LogGPS's rendezvous
//   is a synchronous send): over TCP through a rate-limited link the late receive of a message
//   of two segments took 8-11 us more than one of a single segment, a jump the late receive
//   alone read as a hand-shake, while the sends returned at once.
//
// Busy delays are timed as performed: what a descheduled delay overshoots beyond d (a scheduler
// slice under load) is taken out of the PRTT, on either side - it is no part of o.
//
// allreduce, alltoall (held-out cells of profile's validation, never fitted): after a barrier,
//   both ends call the collective n times back to back over the pair with s bytes (alltoall: s
//   per peer); the source's time per call. One call timed alone would carry the barrier's exit
//   skew (up to a one-way time: measured here, quiet, 8 B allreduce 0.67-0.69 us when the source
//   left the barrier first against 0.32-0.38 us when it left last), and the prediction replays
//   n calls too.
//   Only where the transport has collectives (MPI).
// exchange (held-out, never fitted; every transport): after a barrier, both ends run n
//   exchanges back to back, each an Isend and an Irecv of s bytes to and from the other end and
//   a wait for both (what a 2-rank ring or halo step does); the source's time per exchange. The
//   LogGP family charges an exchange o_s + o_r + max(0, L - omega + (s-1)G): one one-way time
//   plus the send overlap omega (LinkParams::send_overlap_us).
// stream (fitted: LinkRange::stream_gap_per_byte_us; every transport): the source starts n
//   nonblocking sends of s bytes back to back and waits for them, the dest has its n receives
//   posted and replies with 1 byte once all arrived; the source's time for the whole round. In
//   a rendezvous range the blocking PRTTs cannot tell whether the per-byte work on either end
//   overlaps the next message's transfer (each send waits for its hand-shake); a stream can.
// send_call (fitted: an acknowledged range's T1 = o_s + kO_s; every transport): n times, the
//   source times its nonblocking send of s bytes alone, then waits for it and for the dest's
//   1-byte reply; the dest has its n receives posted before the first send; the source's mean
//   time inside one send call. Where the sends complete on the receiver's acknowledgement, every
//   PRTT holds T1 only beside the receiver's work before it acknowledges; the call alone does not.
//
// A plan is sent whole before anything is timed, and its entries run back to back: the server
// posts the next entry's first receive as soon as it has sent a reply, as between the
// repetitions of one batch, so no entry starts behind command messages.

#include <cstdint>
#include <span>
#include <vector>

#include "net/transport.hpp"

namespace commgauge::measure {

/// Calls of a held-out collective or exchange cell, timed together (see allreduce above); the
/// profile's prediction of the cell replays as many.
inline constexpr std::uint32_t kHeldOutCollectiveCalls = 8;

enum class PrttKind : std::uint8_t {
  client_delay = 0,
  server_delay = 1,
  late_receiver = 2,
  allreduce = 3,
  alltoall = 4,
  exchange = 5,
  stream = 6,
  send_call = 7,
};

/// Messages of a stream cell (PrttKind::stream).
inline constexpr std::uint32_t kStreamMessages = 4;

/// Send calls of a send-call cell (PrttKind::send_call).
inline constexpr std::uint32_t kSendCallMessages = 4;

/// The kinds that run n calls after a barrier, timed per call: the held-out collectives and the
/// exchange.
constexpr bool runs_calls(PrttKind k) {
  return k == PrttKind::allreduce || k == PrttKind::alltoall || k == PrttKind::exchange;
}

struct PrttSpec {
  PrttKind kind = PrttKind::client_delay;
  std::uint32_t n = 1;  ///< messages in the round, calls of a collective (>= 1; late_receiver: 1)
  std::uint64_t bytes = 1;  ///< s
  double delay_us = 0;      ///< d (busy computation, never a sleep)
};

/// Source: sends the plan, then runs every entry `repetitions` times in order (entry by entry);
/// returns per entry its times in microseconds (late_receiver: the dest's receive duration).
/// `send_us`, if given, receives per entry the source's own send durations (late_receiver
/// entries; empty for the others).
std::vector<std::vector<double>> prtt_plan(net::Transport& source, std::span<const PrttSpec> plan,
                                           std::uint32_t repetitions,
                                           std::vector<std::vector<double>>* send_us = nullptr);

/// Source: one entry, `repetitions` times.
std::vector<double> prtt_batch(net::Transport& source, const PrttSpec& spec,
                               std::uint32_t repetitions);

/// Dest: obeys plans until the source ends the session; returns its own counters.
net::Counters serve_prtt(net::Transport& dest);

/// Source: ends the dest's serve_prtt loop and returns the dest's counters.
net::Counters finish_prtt(net::Transport& source);

}  // namespace commgauge::measure
