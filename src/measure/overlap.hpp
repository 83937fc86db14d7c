#pragma once
// LogGPO parameters from measurement (seed 001 takes them from tools and judgement; commgauge
// measures them). Per message size, with nonblocking calls:
//   E0  blocking ping-pong (the one-way time, and the computation length C that is "sufficient")
//   E1  both sides compute C outside the library after posting: what still waits in MPI_Wait
//       decides the progress strategy (ICP: the transfer completed during the computation)
//   E2  no computation: the waits alone (the sender's shows the rendezvous synchronisation)
//   E3  the receiver posts late (computes C first): the time in MPI_Irecv shows Oc (eager copy)
//       or the answer to a waiting request (DCP: O'_r + O'_s)
//   E4  the sender waits late (computes 2C, the receiver C): if the receiver's Wait absorbs the
//       sender's extra computation, the data moves in the sender's call (RAT); if not, the
//       receiver pulls it (RTA)
//   E5  the receiver posts late (computes C first), the sender waits at once: a rendezvous
//       send's Wait absorbs the receiver's computation, an eager one's does not
// Each experiment is repeated and summarised by medians; a barrier precedes every trial. Scp and
// Tm are voted trial by trial (OverlapVotes) and re-measured while the sign test is undecided.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/loggp.hpp"
#include "measure/progress.hpp"
#include "model/closed_forms.hpp"
#include "model/link_params.hpp"
#include "net/transport.hpp"

namespace commgauge::measure {

struct OverlapOptions {
  std::vector<std::uint64_t> sizes;  ///< explicit sizes; empty: geometric sweep
  std::uint64_t min_size = 1;
  std::uint64_t max_size = 1u << 20;
  double points_per_octave = 1;
  std::uint32_t repetitions = 11;  ///< trials per experiment (medians)
  double min_comp_us = 20;         ///< C = max(min_comp_us, 4 x one-way(k))
  double comp_us = -1;             ///< computation for Rso/Rro (< 0: C of each size)
  void validate() const;           ///< throws InputError
  std::vector<std::uint64_t> sweep_sizes() const;
};

void to_json(nlohmann::json& j, const OverlapOptions& o);
void from_json(const nlohmann::json& j, OverlapOptions& o);

/// A verdict voted trial by trial: how many trials read the first way (ICP for Scp, RAT for Tm)
/// of how many, and whether the majority is decided: the exact sign test puts the chance of so
/// large a majority, were either reading as likely, below kVerdictLevel.
struct OverlapVotes {
  std::uint32_t for_first = 0;
  std::uint32_t trials = 0;
  bool decided = false;
};
inline constexpr double kVerdictLevel = 0.05;

struct OverlapPoint {
  std::uint64_t bytes = 0;
  double one_way_us = 0;                    ///< E0
  double comp_us = 0;                       ///< C used for E1, E3, E4
  double isend_us = 0;                      ///< E1: time inside MPI_Isend
  double irecv_us = 0;                      ///< E1: time inside MPI_Irecv (posted early)
  double sender_wait_us = 0;                ///< E1: Osw after sufficient computation
  double receiver_wait_us = 0;              ///< E1: Orw after sufficient computation
  double sender_wait_nocomp_us = 0;         ///< E2
  double receiver_wait_nocomp_us = 0;       ///< E2
  double irecv_late_us = 0;                 ///< E3: MPI_Irecv after the data/request arrived
  double receiver_wait_late_us = 0;         ///< E3
  double receiver_wait_sender_late_us = 0;  ///< E4
  double sender_wait_sender_late_us = 0;    ///< E4
  double sender_wait_receiver_late_us = 0;  ///< E5
  /// The low ends of E2's trials (stats::floor_of), which E1's votes compare with: load only
  /// adds time to a trial, so the low end is the cost without it.
  struct Floors {
    double sender_in_library_nocomp_us = 0, receiver_in_library_nocomp_us = 0;  ///< E2: call+wait
  } floors;
  /// The trials the protocol, Scp and Tm are voted on, in trial order (E1's i-th values of both
  /// sides belong together): E1's calls and waits, E4's receiver waits, E5's sender waits;
  /// re-measuring adds to them.
  struct Trials {
    std::vector<double> isend_us, sender_wait_us, irecv_us, receiver_wait_us;
    std::vector<double> sender_wait_nocomp_us, receiver_wait_nocomp_us;  ///< E2, alternated with E1
    std::vector<double> sender_in_library_nocomp_us, receiver_in_library_nocomp_us;
    std::vector<double> receiver_wait_sender_late_us;
    std::vector<double> sender_wait_receiver_late_us;
  } trials;
  bool synchronizing = false;  ///< the send waits for the receiver (rendezvous): sync_votes'
  OverlapVotes sync_votes;     ///< E5 trials whose send waited for the late receiver
  std::optional<model::Progress> progress;  ///< rendezvous sizes only: the majority of icp_votes
  model::TransferMechanism mechanism = model::TransferMechanism::T;  ///< rat_votes' majority
  OverlapVotes icp_votes;   ///< E1 trials that read ICP (synchronizing sizes)
  OverlapVotes rat_votes;   ///< E4 trials that read RAT (synchronizing sizes)
  int remeasured = 0;       ///< times E1/E4 were run again for an undecided vote
  double rso = 0, rro = 0;  ///< overlap ratios for the reported computation
  double rso_comp_us = 0;
};

struct OverlapRange {
  std::uint64_t from_bytes = 0;
  bool rendezvous = false;
  std::optional<model::Progress> progress;  ///< Scp: the majority of the pooled icp_votes
  model::TransferMechanism mechanism = model::TransferMechanism::T;  ///< rat_votes' majority
  OverlapVotes icp_votes, rat_votes;  ///< the range's synchronizing sizes' trials pooled
  bool resolved = true;               ///< both votes decided (else neither is used by the profile)
  bool supported = true;              ///< resolved, and a combination seed 001 has formulas for
  double control_send_us = -1;        ///< O'_s (median over the range's sizes)
  double control_recv_us = -1;        ///< O'_r (least over the range's sizes)
  double rso = 0, rro = 0;
  double comp_us = 0;
  std::vector<std::string> notes;
};

struct OverlapResult {
  std::vector<OverlapPoint> points;
  std::vector<OverlapRange> ranges;
  std::uint64_t switch_bytes = 0;  ///< S as overlap sees it (first size of the last run of
                                   ///< synchronizing sizes); 0: none
  std::optional<std::uint64_t> loggp_switch_bytes;  ///< S from loggp, if one was given
  std::optional<bool> agrees_with_loggp;
  /// Where the first sweep disagreed with loggp: what re-measuring both sides found (resolved
  /// or unresolved, with both figures); empty if they agreed at once.
  std::string resolution;
  net::Counters source_counters;
  double seconds = 0;
  std::vector<std::string> notes;
  /// Empty for a complete sweep; else the transport failure that ended it after the points
  /// kept (of the sizes asked for, in order).
  std::string interrupted;
};

/// Runs the method on either end; returns the result on the source. `loggp_link`, if given,
/// supplies the protocol ranges (and its S for the comparison); otherwise ranges follow the
/// synchronizing/eager classification. A TransportError after the first size returns the sizes
/// measured with `interrupted` set; before that it propagates.
std::optional<OverlapResult> measure_overlap(net::Transport& transport, const OverlapOptions& o,
                                             const std::optional<model::LinkParams>& loggp_link,
                                             ProgressSink* progress);

/// The link with the overlap findings merged in: per rendezvous range the progress strategy and
/// the control overheads O'_s, O'_r (what the loggpo model and the simulator use).
model::LinkParams merge_overlap(const model::LinkParams& link, const OverlapResult& r);

/// Takes overlap's progress, Tm and O' into a loggp result: into the seeds' set as measured,
/// and into the calibrated set by fitting it again with them held (calibrate_loggp), so that
/// the set predict and simulate use still reproduces the PRTT curves it came from. (Merged
/// without the refit, overlap's O' of vader's rendezvous, 0.15 us where the fit had charged the
/// hand-shake 0.84 us, made the calibrated set predict the ping-pong at 4871 B 46 % short.)
void adopt_overlap(LoggpResult& loggp, const LoggpOptions& options, const OverlapResult& r);

}  // namespace commgauge::measure
