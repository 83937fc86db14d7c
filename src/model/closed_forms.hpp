#pragma once
// Closed forms of the LogGP family on the project's one cost convention (DESIGN.md): every
// formula is written in terms of model::MessageCost, so the models, the virtual network and the
// simulator agree to the picosecond. Each function cites the seed equation it generalises.
//
// Terms for a message of k bytes (seed 004's Table 3 names):
//   T1 = o_s + k O_s        send overhead (seed 001: Oi(k))
//   T2 = L + (k-1) G        transfer (seed 004 writes k G; seeds 000 and 001 and commgauge (k-1) G)
//   T3 = o_r + k O_r        receive overhead (seed 001: Oc(k))
//   T4 = max(o'_s + L, t_r - t_s) + o'_r      rendezvous request, waiting for the receiver
//   T5 = o'_s + L + o'_r                      rendezvous acknowledgement
// with o' the control-message overheads (default o_s and o_r). Rendezvous applies for k >= S
// (seed 001 writes eager for K <= S; commgauge uses k < S everywhere).

#include <cstdint>
#include <string>

#include "model/cost.hpp"

namespace commgauge::model {

// ---- LogGP (seed 000) ---------------------------------------------------------------------

/// One blocking message to a receive posted before it arrives: T1 + T2 + T3, plus T4 + T5 for
/// rendezvous (seed 000 eq. (1) is twice this for LogGP: 2 (L + 2 o + (s-1) G)).
Picoseconds one_way(const CostModel& c, std::uint64_t k);

/// A repeated blocking ping-pong: one round trip is 2 one-way times, but consecutive sends of
/// one endpoint are at least the gap g + (k-1) G apart (seed 000 eq. (1)).
Picoseconds round_trip(const CostModel& c, std::uint64_t k);

/// PRTT(n, d, s) of seed 000 Listing 1: n blocking sends with a busy delay d between them, the
/// server replies after the n-th. For eager messages this is eq. (5) generalised:
///   PRTT(1,0,s) + (n-1) max(T1 + d, g + (s-1) G, T3).
/// Rendezvous rounds follow the same max-plus recurrence message by message.
Picoseconds prtt(const CostModel& c, std::uint32_t n, Picoseconds d, std::uint64_t k);

/// The server-delay variant (commgauge's o_r measurement): the client sends back to back, the
/// server computes d before each receive after the first. Eager:
///   PRTT(1,0,s) + (n-1) max(T1, g + (s-1) G, d + T3).
Picoseconds prtt_server_delay(const CostModel& c, std::uint32_t n, Picoseconds d, std::uint64_t k);

// ---- LogGPS (seed 004) --------------------------------------------------------------------

struct LogGPSTerms {
  Picoseconds t1{}, t2{}, t3{}, t4{}, t5{};
  bool rendezvous = false;
};

/// Table 3's terms for a send called at t_s and a receive posted at t_r (times relative).
LogGPSTerms loggps_terms(const CostModel& c, std::uint64_t k, Picoseconds t_s, Picoseconds t_r);

/// Table 3: communication time, from t_s until the data is in the receive buffer:
/// T1 + T2 + T3 (eq. 1, 2), T4 + T5 + T1 + T2 + T3 (eq. 3).
Picoseconds loggps_communication_time(const CostModel& c, std::uint64_t k, Picoseconds t_s,
                                      Picoseconds t_r);

/// Table 4: MPI_Send execution time: T1 (eq. 4), T4 + T5 + T1 for rendezvous (eq. 5).
Picoseconds loggps_send_time(const CostModel& c, std::uint64_t k, Picoseconds t_s, Picoseconds t_r);

/// Table 4: MPI_Recv execution time, called at t_r: max(T1 + T2 - (t_r - t_s), 0) + T3 (eq. 7);
/// rendezvous max(o'_s + L - (t_r - t_s), 0) + o'_r + T5 + T1 + T2 + T3 (eq. 9).
Picoseconds loggps_recv_time(const CostModel& c, std::uint64_t k, Picoseconds t_s, Picoseconds t_r);

/// Table 6 with no work between the receive and the reply (w = 0): the round trip of a blocking
/// ping-pong, 2 (T1 + T2 + T3), and 2 (T4 + T5 + T1 + T2 + T3) for rendezvous with the reply's
/// receive already posted. (The seed's formulas with w are unreadable in our copy.)
Picoseconds loggps_round_trip(const CostModel& c, std::uint64_t k);

// ---- LogGPO (seed 001 §2.2) ---------------------------------------------------------------

/// Seed 001's transfer mechanisms and progress strategies.
enum class TransferMechanism { T, TA, RAT, RTA };
std::string to_string(TransferMechanism t);
TransferMechanism transfer_mechanism_from_string(const std::string& s);  ///< throws InputError

/// Which formula set applies to a message of k bytes: eager (Tm = T), eager with acknowledgement
/// (Tm = TA: seed 001 names it, gives no formulas; derived in docs/models.md), rendezvous with
/// DCP (Tm = RAT, the sender pushes the data in its Wait after the ack; Tm = RTA, the receiver
/// pulls it and sends a FIN, derived in docs/models.md), or rendezvous with ICP (Tm = RTA,
/// handled off the CPU).
enum class OverlapCase { eager_T, eager_TA, dcp_RAT, dcp_RTA, icp_RTA };
OverlapCase overlap_case(const MessageCost& m);

/// The scenario of seed 001 Fig. 1: the sender calls MPI_Isend at Ts = 0, computes `comp`, then
/// MPI_Wait; the receiver calls MPI_Irecv at Tr, computes `comp`, then MPI_Wait.
struct OverlapCosts {
  OverlapCase mechanism = OverlapCase::eager_T;
  Picoseconds isend{};          ///< time inside MPI_Isend (Oi(k) eager, O' rendezvous)
  Picoseconds irecv{};          ///< time inside MPI_Irecv (O'+O' if the request was there, DCP)
  Picoseconds osw{};            ///< Osw: time inside the sender's MPI_Wait
  Picoseconds orw{};            ///< Orw: time inside the receiver's MPI_Wait
  Picoseconds os{};             ///< Os = isend + Osw: the sender's total overhead
  Picoseconds orr{};            ///< Or = irecv + Orw: the receiver's total overhead
  Picoseconds sender_done{};    ///< when the sender's Wait returns
  Picoseconds receiver_done{};  ///< when the receiver's Wait returns (data in the buffer)
  Picoseconds tc{};             ///< Tc: receiver_done - Ts, from MPI_Isend to the data delivered
  double rso = 0;               ///< Rso = comp / (comp + Os)
  double rro = 0;               ///< Rro = comp / (comp + Or)
};

/// Closed forms for the three cases (derivations in docs/models.md). They differ from seed 001's
/// printed formulas where those charge the ack to the receiver and let the sender's Wait
/// include G(K-1): here, as in the virtual network, the sender pays o'_r for the ack and its
/// Wait ends when the data is injected; with O'_s = O'_r = O' and Oc = 0 the blocking Tc is the
/// seed's 4O' + 3L + Oi + G(K-1).
OverlapCosts isend_compute_wait(const CostModel& c, std::uint64_t k, Picoseconds comp,
                                Picoseconds t_r);

}  // namespace commgauge::model
