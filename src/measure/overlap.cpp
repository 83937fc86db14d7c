#include "measure/overlap.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"
#include "measure/limits.hpp"
#include "model/models.hpp"
#include "stats/descriptive.hpp"
#include "stats/floor_shift.hpp"
#include "stats/median_ci.hpp"

namespace commgauge::measure {

void OverlapOptions::validate() const {
  if (sizes.empty() && min_size > max_size) {
    throw InputError("min_size",
                     fmt::format("{} is larger than the largest size, {}", min_size, max_size));
  }
  if (repetitions < 1) throw InputError("repetitions", "must be at least 1");
  if (!(points_per_octave > 0) || points_per_octave > kMaxPointsPerOctave)
    throw InputError("points_per_octave",
                     fmt::format("must be > 0 and at most {}", kMaxPointsPerOctave));
  if (!(min_comp_us >= 0) || min_comp_us > kMaxComputation_us)
    throw InputError("min_comp", fmt::format("must be 0 to {:g} us", kMaxComputation_us));
  if ((comp_us < 0 && comp_us != -1) || !(comp_us <= kMaxComputation_us))
    throw InputError("comp_us", fmt::format("must be 0 to {:g} us", kMaxComputation_us));
}

std::vector<std::uint64_t> OverlapOptions::sweep_sizes() const {
  std::vector<std::uint64_t> out = sizes;
  if (out.empty()) {
    const double step = std::pow(2.0, 1.0 / points_per_octave);
    for (double s = static_cast<double>(std::max<std::uint64_t>(min_size, 1));
         s <= static_cast<double>(max_size) * (1 + 1e-12); s *= step) {
      out.push_back(static_cast<std::uint64_t>(std::llround(s)));
    }
    if (out.empty() || out.back() != max_size) out.push_back(max_size);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void to_json(nlohmann::json& j, const OverlapOptions& o) {
  j = {{"sizes", o.sizes},
       {"min_size", o.min_size},
       {"max_size", o.max_size},
       {"points_per_octave", o.points_per_octave},
       {"repetitions", o.repetitions},
       {"min_comp_us", o.min_comp_us},
       {"comp_us", o.comp_us}};
}

void from_json(const nlohmann::json& j, OverlapOptions& o) {
  o.sizes = j.at("sizes").get<std::vector<std::uint64_t>>();
  o.min_size = j.at("min_size");
  o.max_size = j.at("max_size");
  o.points_per_octave = j.at("points_per_octave");
  o.repetitions = j.at("repetitions");
  o.min_comp_us = j.at("min_comp_us");
  o.comp_us = j.at("comp_us");
}

namespace {

enum class Experiment : std::uint64_t {
  pingpong = 1,
  both_compute,
  no_compute,
  receiver_late,
  sender_late,
  sender_waits_receiver_late,
  // E1 and E2 alternately, trial by trial: E1's votes compare with E2, and a burst of load
  // must fall on both alike (run one after the other, a burst over E2's 11 trials once read
  // vader's DCP as ICP in 10 of 11 votes).
  both_compute_with_no_compute,
  done = 0xff
};

// One side's trials of an experiment, in trial order (trial i of both sides followed the same
// barrier, so the two sides' i-th values belong together).
struct SideTrials {
  std::vector<double> call_us;  // inside the nonblocking call (or the one-way time for ping-pong)
  std::vector<double> wait_us;  // inside the wait
};

// The medians of one side's trials.
struct SideTimes {
  double call_us = 0, wait_us = 0;
};

SideTimes summarise(const SideTrials& v) {
  return {stats::median(v.call_us), stats::median(v.wait_us)};
}

// One trial of an experiment on either side; appends this side's times.
void trial(net::Transport& t, Experiment e, std::size_t k, double comp_us, SideTrials& out) {
  const bool sender = t.role() == net::Role::source;
  t.barrier();
  if (e == Experiment::pingpong) {
    double one_way = 0;
    if (sender) {
      const double a = t.now_us();
      t.send(k);
      t.recv(k);
      one_way = (t.now_us() - a) / 2;
    } else {
      t.recv(k);
      t.send(k);
    }
    out.call_us.push_back(one_way);
    out.wait_us.push_back(0);
    return;
  }
  // How long each side computes before and after posting.
  double before = 0, after = comp_us;
  if (e == Experiment::no_compute) after = 0;
  if (e == Experiment::receiver_late && !sender) {
    before = comp_us;
    after = 0;
  }
  if (e == Experiment::sender_late && sender) after = 2 * comp_us;
  if (e == Experiment::sender_waits_receiver_late) {
    before = sender ? 0 : comp_us;
    after = 0;
  }
  t.compute(before);
  const double a = t.now_us();
  net::Request r = sender ? t.isend(k) : t.irecv(k);
  const double b = t.now_us();
  t.compute(after);
  const double w = t.now_us();
  t.wait(r);
  const double end = t.now_us();
  out.call_us.push_back(b - a);
  out.wait_us.push_back(end - w);
}

// Both sides run `reps` trials (of each experiment alternated); the dest sends its trials to
// the source, which returns both sides' (the dest returns nothing).
std::pair<SideTrials, SideTrials> run_experiment(net::Transport& t, Experiment e, std::size_t k,
                                                 double comp_us, std::uint32_t reps) {
  SideTrials mine;
  const bool alternate = e == Experiment::both_compute_with_no_compute;
  const std::uint32_t n = alternate ? 2 * reps : reps;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Experiment one =
        !alternate ? e : (i % 2 == 0 ? Experiment::both_compute : Experiment::no_compute);
    trial(t, one, k, comp_us, mine);
  }
  if (t.role() == net::Role::dest) {
    for (std::uint32_t i = 0; i < n; ++i) {
      t.send_value(std::bit_cast<std::uint64_t>(mine.call_us[i]));
      t.send_value(std::bit_cast<std::uint64_t>(mine.wait_us[i]));
    }
    return {};
  }
  SideTrials remote;
  for (std::uint32_t i = 0; i < n; ++i) {
    remote.call_us.push_back(std::bit_cast<double>(t.recv_value()));
    remote.wait_us.push_back(std::bit_cast<double>(t.recv_value()));
  }
  return {std::move(mine), std::move(remote)};
}

void command(net::Transport& t, Experiment e, std::uint64_t k, double comp_us) {
  t.send_value(static_cast<std::uint64_t>(e));
  t.send_value(k);
  t.send_value(std::bit_cast<std::uint64_t>(comp_us));
}

void serve(net::Transport& t, std::uint32_t reps) {
  for (;;) {
    const auto e = static_cast<Experiment>(t.recv_value());
    if (e == Experiment::done) return;
    const std::uint64_t k = t.recv_value();
    const double comp = std::bit_cast<double>(t.recv_value());
    run_experiment(t, e, k, comp, reps);
  }
}

// E1 (both sides compute C after posting) alternated with E2 (no computation); the trials are
// added to the size's earlier ones.
void run_both_compute(net::Transport& t, OverlapPoint& p, std::uint32_t reps) {
  command(t, Experiment::both_compute_with_no_compute, p.bytes, p.comp_us);
  const auto [s, r] =
      run_experiment(t, Experiment::both_compute_with_no_compute, p.bytes, p.comp_us, reps);
  auto& tr = p.trials;
  SideTrials s2, r2;  // E2's trials, odd positions
  for (std::size_t i = 0; i < s.call_us.size(); ++i) {
    if (i % 2 == 0) {
      tr.isend_us.push_back(s.call_us[i]);
      tr.sender_wait_us.push_back(s.wait_us[i]);
      tr.irecv_us.push_back(r.call_us[i]);
      tr.receiver_wait_us.push_back(r.wait_us[i]);
    } else {
      tr.sender_wait_nocomp_us.push_back(s.wait_us[i]);
      tr.receiver_wait_nocomp_us.push_back(r.wait_us[i]);
      tr.sender_in_library_nocomp_us.push_back(s.call_us[i] + s.wait_us[i]);
      tr.receiver_in_library_nocomp_us.push_back(r.call_us[i] + r.wait_us[i]);
    }
  }
  p.isend_us = stats::median(tr.isend_us);
  p.sender_wait_us = stats::median(tr.sender_wait_us);
  p.irecv_us = stats::median(tr.irecv_us);
  p.receiver_wait_us = stats::median(tr.receiver_wait_us);
  p.sender_wait_nocomp_us = stats::median(tr.sender_wait_nocomp_us);
  p.receiver_wait_nocomp_us = stats::median(tr.receiver_wait_nocomp_us);
  p.floors.sender_in_library_nocomp_us = stats::floor_of(tr.sender_in_library_nocomp_us);
  p.floors.receiver_in_library_nocomp_us = stats::floor_of(tr.receiver_in_library_nocomp_us);
}

// E4: the sender computes 2C, the receiver C; the receiver's waits per trial.
void run_sender_late(net::Transport& t, OverlapPoint& p, std::uint32_t reps) {
  command(t, Experiment::sender_late, p.bytes, p.comp_us);
  const auto [s, r] = run_experiment(t, Experiment::sender_late, p.bytes, p.comp_us, reps);
  p.trials.receiver_wait_sender_late_us.insert(p.trials.receiver_wait_sender_late_us.end(),
                                               r.wait_us.begin(), r.wait_us.end());
  p.sender_wait_sender_late_us = summarise(s).wait_us;
  p.receiver_wait_sender_late_us = stats::median(p.trials.receiver_wait_sender_late_us);
}

// E5: the receiver posts after computing C, the sender waits at once; the sender's waits.
void run_sender_waits(net::Transport& t, OverlapPoint& p, std::uint32_t reps) {
  command(t, Experiment::sender_waits_receiver_late, p.bytes, p.comp_us);
  const auto s =
      run_experiment(t, Experiment::sender_waits_receiver_late, p.bytes, p.comp_us, reps).first;
  p.trials.sender_wait_receiver_late_us.insert(p.trials.sender_wait_receiver_late_us.end(),
                                               s.wait_us.begin(), s.wait_us.end());
  p.sender_wait_receiver_late_us = stats::median(p.trials.sender_wait_receiver_late_us);
}

OverlapPoint measure_point(net::Transport& t, std::uint64_t k, const OverlapOptions& o) {
  OverlapPoint p;
  p.bytes = k;
  auto run = [&](Experiment e, double comp) {
    command(t, e, k, comp);
    const auto [s, r] = run_experiment(t, e, k, comp, o.repetitions);
    return std::pair{summarise(s), summarise(r)};
  };
  const SideTimes ping = run(Experiment::pingpong, 0).first;
  p.one_way_us = ping.call_us;
  p.comp_us = std::max(o.min_comp_us, 4 * p.one_way_us);
  run_both_compute(t, p, o.repetitions);
  const auto [s3, r3] = run(Experiment::receiver_late, p.comp_us);
  (void)s3;
  p.irecv_late_us = r3.call_us;
  p.receiver_wait_late_us = r3.wait_us;
  run_sender_late(t, p, o.repetitions);
  run_sender_waits(t, p, o.repetitions);
  return p;
}

constexpr int kResolveAttempts = 3;

// A verdict of trials, each of which read one way or the other, by the sign test.
OverlapVotes vote(std::uint32_t for_first, std::uint32_t trials) {
  OverlapVotes v{for_first, trials, false};
  const std::uint32_t majority = std::max(for_first, trials - for_first);
  v.decided = trials > 0 && 2 * majority != trials &&
              stats::sign_test_p_value(trials, majority) < kVerdictLevel;
  return v;
}

// The per-size decisions, each voted trial by trial (OverlapVotes), never read from one order
// statistic: under load the low end of a few trials is exactly the trial whose peer was
// descheduled (seen: vader's DCP read as ICP, TCP's RAT as RTA, in CI runs under two busy loops).
void classify(OverlapPoint& p, double rso_comp) {
  const auto& f = p.floors;
  const auto& tr = p.trials;
  // E5, rendezvous: the send cannot complete before the receiver posts, so the sender's Wait
  // absorbs the receiver's computation (more than C/2); an eager send's Wait does not. (E2's
  // Wait against a small one-way time flipped run to run on vader's 1 KiB sends, whose Wait
  // with the receiver already in the library is about 1 us: 5 of 30 runs eager under load.)
  std::uint32_t sync = 0;
  for (double w : tr.sender_wait_receiver_late_us)
    sync += w > 0.5 * p.comp_us ? 1 : 0;
  p.sync_votes = vote(sync, static_cast<std::uint32_t>(tr.sender_wait_receiver_late_us.size()));
  p.synchronizing = 2 * sync > p.sync_votes.trials;
  p.progress.reset();
  p.mechanism = model::TransferMechanism::T;
  p.icp_votes = p.rat_votes = {};  // eager: no Scp or Tm to vote on
  if (p.synchronizing) {
    // E1, ICP: the transfer completed while both sides computed outside the library, so each
    // side spent less than half the time inside it (call + wait: a receiver posting after the
    // data's header arrived copies inside MPI_Irecv, not its Wait) than with no computation (E2).
    std::uint32_t icp = 0;
    for (std::size_t i = 0; i < tr.isend_us.size(); ++i) {
      if (tr.isend_us[i] + tr.sender_wait_us[i] < 0.5 * f.sender_in_library_nocomp_us &&
          tr.irecv_us[i] + tr.receiver_wait_us[i] < 0.5 * f.receiver_in_library_nocomp_us)
        ++icp;
    }
    p.icp_votes = vote(icp, static_cast<std::uint32_t>(tr.isend_us.size()));
    p.progress =
        2 * icp > p.icp_votes.trials ? model::Progress::independent : model::Progress::dependent;
    // E4, RAT: the receiver's Wait absorbs the sender's extra computation (more than half of C)
    // when the data moves only in the sender's call; otherwise the receiver pulled it (RTA).
    std::uint32_t rat = 0;
    for (double w : tr.receiver_wait_sender_late_us)
      rat += w > 0.5 * p.comp_us ? 1 : 0;
    p.rat_votes = vote(rat, static_cast<std::uint32_t>(tr.receiver_wait_sender_late_us.size()));
    p.mechanism = 2 * rat > p.rat_votes.trials ? model::TransferMechanism::RAT
                                               : model::TransferMechanism::RTA;
  }
  p.rso_comp_us = rso_comp >= 0 ? rso_comp : p.comp_us;
  const double os = p.isend_us + p.sender_wait_us;
  const double orr = p.irecv_us + p.receiver_wait_us;
  p.rso = p.rso_comp_us / (p.rso_comp_us + os);
  p.rro = p.rso_comp_us / (p.rso_comp_us + orr);
}

// A size whose protocol, or (rendezvous) Scp or Tm, the sign test left undecided gets that
// experiment again (its trials added to the first ones), in alternating order over such sizes,
// up to kResolveAttempts times.
void settle_votes(net::Transport& t, const OverlapOptions& o, OverlapResult& r,
                  ProgressSink* progress) {
  const auto open_votes = [](const OverlapPoint& p) {
    return !p.sync_votes.decided ||
           (p.synchronizing && (!p.icp_votes.decided || !p.rat_votes.decided));
  };
  for (int attempt = 1; attempt <= kResolveAttempts; ++attempt) {
    std::vector<OverlapPoint*> open;
    for (auto& p : r.points) {
      if (open_votes(p)) open.push_back(&p);
    }
    if (open.empty()) return;
    if (progress) {
      progress->update(fmt::format("overlap: re-measuring undecided votes of {} size(s) ({} of {})",
                                   open.size(), attempt, kResolveAttempts),
                       1.0);
    }
    if (attempt % 2 == 0) std::reverse(open.begin(), open.end());
    for (OverlapPoint* p : open) {
      if (!p->sync_votes.decided) run_sender_waits(t, *p, o.repetitions);
      if (p->synchronizing && !p->icp_votes.decided) run_both_compute(t, *p, o.repetitions);
      if (p->synchronizing && !p->rat_votes.decided) run_sender_late(t, *p, o.repetitions);
      ++p->remeasured;
      classify(*p, o.comp_us);
    }
  }
}

double median_of(const std::vector<double>& v) {
  return v.empty() ? -1 : stats::median(v);
}

// The ranges of the sweep's points between the given starts: the protocol by majority of the
// sizes; Scp and Tm by the votes of all the range's synchronizing trials pooled (one verdict for
// the range, decided or not by the same sign test as a size's); O'_s, O'_r, Rso, Rro. With
// loggp's link (whose starts these are), only the ranges it reads rendezvous share their O'_r.
std::vector<OverlapRange> ranges_over(const OverlapResult& r,
                                      const std::vector<std::uint64_t>& starts,
                                      const model::LinkParams* loggp_link = nullptr) {
  std::vector<OverlapRange> out;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    OverlapRange range;
    range.from_bytes = starts[k];
    const std::uint64_t end = k + 1 < starts.size() ? starts[k + 1] : UINT64_MAX;
    int sync = 0, total = 0;
    std::uint32_t icp = 0, icp_trials = 0, rat = 0, rat_trials = 0;
    std::vector<double> ctrl_s, ctrl_r, rso, rro, comp;
    for (const auto& p : r.points) {
      if (p.bytes < range.from_bytes || p.bytes >= end) continue;
      ++total;
      rso.push_back(p.rso);
      rro.push_back(p.rro);
      comp.push_back(p.rso_comp_us);
      if (!p.synchronizing) continue;
      ++sync;
      icp += p.icp_votes.for_first;
      icp_trials += p.icp_votes.trials;
      rat += p.rat_votes.for_first;
      rat_trials += p.rat_votes.trials;
      ctrl_s.push_back(p.isend_us);  // the request's send overhead O'_s
      if (p.progress == model::Progress::dependent) {
        ctrl_r.push_back(std::max(0.0, p.irecv_late_us - p.isend_us));  // O'_r + O'_s answered
      }
    }
    if (total == 0) {
      range.notes.push_back("no measured size in this range");
    }
    range.rendezvous = total > 0 && 2 * sync > total;
    if (range.rendezvous) {
      range.icp_votes = vote(icp, icp_trials);
      range.rat_votes = vote(rat, rat_trials);
      range.progress =
          2 * icp > icp_trials ? model::Progress::independent : model::Progress::dependent;
      range.mechanism =
          2 * rat > rat_trials ? model::TransferMechanism::RAT : model::TransferMechanism::RTA;
      range.resolved = range.icp_votes.decided && range.rat_votes.decided;
      range.supported =
          range.resolved && model::loggpo_combination_supported(*range.progress, range.mechanism);
      range.control_send_us = median_of(ctrl_s);
      // The least of the sizes', not their median: where the receiver pulls the data itself
      // (vader's single copy), a late MPI_Irecv that finds the request already there can also
      // copy the message before it returns, at some sizes and not others (profiles of
      // 2026-12-07: 2.0 us at 8 KiB, 17.4 us at 256 KiB, 0.05 us at 16 KiB in the same run).
      // The control overhead does not grow with the size; the copy does, and the median of
      // 2.6 us made the refitted set miss its curves by 26 % rms.
      range.control_recv_us = ctrl_r.empty() ? -1 : *std::min_element(ctrl_r.begin(), ctrl_r.end());
      if (!range.resolved) {
        range.notes.push_back(fmt::format(
            "unresolved: ICP in {} of {} trials, RAT in {} of {} (the sign test leaves a "
            "majority this small undecided at {:g}); the profile keeps no Scp or Tm for it",
            icp, icp_trials, rat, rat_trials, kVerdictLevel));
      } else if (!range.supported) {
        range.notes.push_back(fmt::format(
            "measured {} with {}: seed 001 has no formulas for this combination, so the loggpo "
            "model rejects this range",
            *range.progress == model::Progress::dependent ? "DCP" : "ICP",
            model::to_string(range.mechanism)));
      }
    }
    range.rso = rso.empty() ? 0 : stats::median(rso);
    range.rro = rro.empty() ? 0 : stats::median(rro);
    range.comp_us = comp.empty() ? 0 : stats::median(comp);
    out.push_back(range);
  }
  // Neighbouring rendezvous ranges with the same Scp and Tm (loggp's per-byte changes) handle
  // their requests alike: O'_r is the least over all their sizes. A range with a single sweep
  // size (4096 B between vader's switch at 4041 B and a per-byte change at 8192 B) whose late
  // receive copied the message read 1.7 us alone. Not with a range loggp reads eager (its sends
  // wait for an acknowledgement, Tm = TA: no request to answer).
  const auto rendezvous = [&](std::size_t k) {
    return out[k].rendezvous && out[k].control_recv_us >= 0 &&
           (loggp_link == nullptr ||
            (k < loggp_link->ranges.size() && loggp_link->ranges[k].rendezvous));
  };
  const auto alike = [&](std::size_t a, std::size_t b) {
    return rendezvous(a) && rendezvous(b) && out[a].progress == out[b].progress &&
           out[a].mechanism == out[b].mechanism;
  };
  for (std::size_t first = 0; first < out.size();) {
    std::size_t end = first + 1;
    double least = out[first].control_recv_us;
    for (; end < out.size() && alike(end - 1, end); ++end)
      least = std::min(least, out[end].control_recv_us);
    for (std::size_t k = first; k < end; ++k)
      out[k].control_recv_us = least;
    first = end;
  }
  return out;
}

std::vector<std::uint64_t> starts_of(const model::LinkParams& link) {
  std::vector<std::uint64_t> starts;
  for (const auto& lr : link.ranges)
    starts.push_back(lr.from_bytes);
  return starts;
}

void build_ranges(OverlapResult& r, const std::optional<model::LinkParams>& loggp_link) {
  // Range starts: loggp's where the two agree on S, otherwise where this sweep's classification
  // changes (loggp's ranges would contradict overlap's own S: a switch it measured in every
  // trial described as no range at all). merge_overlap reads the sweep over loggp's ranges
  // either way.
  const bool follow_loggp = loggp_link && r.agrees_with_loggp.value_or(false);
  if (loggp_link && !follow_loggp) {
    r.notes.push_back(
        "the ranges follow this sweep's own classification, not loggp's, as the two disagree on "
        "S");
  }
  std::vector<std::uint64_t> starts;
  if (follow_loggp) {
    starts = starts_of(*loggp_link);
    r.ranges = ranges_over(r, starts, &*loggp_link);
    // A range loggp reads eager (no hand-shake before a late receive) whose sends here wait for
    // the late receiver: eager with acknowledgement (Tm = TA); the data went before the receive
    // was posted, so the RAT/RTA vote does not apply, only Scp (who must be in a call to ack).
    for (std::size_t k = 0; k < r.ranges.size(); ++k) {
      OverlapRange& range = r.ranges[k];
      if (!range.rendezvous || loggp_link->ranges[k].rendezvous) continue;
      range.mechanism = model::TransferMechanism::TA;
      range.control_send_us = range.control_recv_us = -1;  // no request: Isend is the send
      range.resolved = range.icp_votes.decided;
      range.supported = range.resolved;
      range.notes.clear();
      range.notes.push_back(
          range.resolved
              ? "eager with acknowledgement (Tm = TA): loggp reads no hand-shake before a late "
                "receive, yet the sends wait for the receiver"
              : fmt::format("eager with acknowledgement (Tm = TA), Scp unresolved: ICP in {} of {} "
                            "trials; the profile keeps no Scp or Tm for it",
                            range.icp_votes.for_first, range.icp_votes.trials));
    }
    return;
  } else {
    for (std::size_t i = 0; i < r.points.size(); ++i) {
      if (i == 0 || r.points[i].synchronizing != r.points[i - 1].synchronizing) {
        starts.push_back(i == 0 ? std::min<std::uint64_t>(r.points[i].bytes, 1)
                                : r.points[i].bytes);
      }
    }
  }
  r.ranges = ranges_over(r, starts);
}

// S: the first size of the last run of synchronizing sizes (0: none).
void find_switch(OverlapResult& r) {
  r.switch_bytes = 0;
  for (std::size_t i = r.points.size(); i-- > 0;) {
    if (!r.points[i].synchronizing) break;
    r.switch_bytes = r.points[i].bytes;
  }
}

// Whether the sends that wait for a late receiver (from overlap's S on) begin where one of
// loggp's ranges begins, between the last non-synchronizing size overlap measured and its S: at
// loggp's rendezvous switch S, or at an eager range below it whose sends complete on the
// receiver's acknowledgement (Tm = TA). `starts`: loggp's ranges; `loggp_s`: its S, 0 if none.
bool agrees(const OverlapResult& r, const std::vector<std::uint64_t>& starts,
            std::uint64_t loggp_s) {
  if (r.switch_bytes == 0) return loggp_s == 0;
  std::uint64_t before = 0;
  for (const auto& p : r.points) {
    if (p.bytes < r.switch_bytes) before = p.bytes;
  }
  return std::any_of(starts.begin(), starts.end(), [&](std::uint64_t b) {
    return b > before && b <= r.switch_bytes && (loggp_s == 0 || b <= loggp_s);
  });
}

// loggp and overlap disagree on S: the sizes on both sides of either method's S (loggp's S - 1
// and S, overlap's S and the size below it) are measured again, in alternating order, up to
// kResolveAttempts times; each size's protocol is the majority of all its measurements (ties:
// the latest), so one trial blurred by load cannot flip it. Either the two agree, or the note
// reports both figures unresolved.
void resolve_disagreement(net::Transport& t, const OverlapOptions& o, OverlapResult& r,
                          const std::vector<std::uint64_t>& starts, ProgressSink* progress) {
  const std::uint64_t loggp_s = *r.loggp_switch_bytes;
  const std::uint64_t first_s = r.switch_bytes;
  std::vector<std::uint64_t> sizes;
  auto add = [&](std::uint64_t s) {
    if (s >= 1 && std::find(sizes.begin(), sizes.end(), s) == sizes.end()) sizes.push_back(s);
  };
  if (loggp_s > 0) {
    add(loggp_s - 1);
    add(loggp_s);
  }
  if (first_s > 0) {
    for (std::size_t i = 0; i < r.points.size(); ++i) {
      if (r.points[i].bytes == first_s && i > 0) add(r.points[i - 1].bytes);
    }
    add(first_s);
  }
  std::sort(sizes.begin(), sizes.end());
  // Votes per size: [eager, synchronizing]; the sweep's own measurement counts once.
  std::map<std::uint64_t, std::array<int, 2>> votes;
  for (const auto& p : r.points) {
    if (std::find(sizes.begin(), sizes.end(), p.bytes) != sizes.end())
      ++votes[p.bytes][p.synchronizing ? 1 : 0];
  }
  int attempt = 0;
  while (attempt < kResolveAttempts && !*r.agrees_with_loggp) {
    ++attempt;
    if (progress) {
      progress->update(fmt::format("overlap: re-measuring S ({} of {})", attempt, kResolveAttempts),
                       1.0);
    }
    // Alternate the direction: drift falls on both ends alike.
    std::vector<std::uint64_t> order = sizes;
    if (attempt % 2 == 0) std::reverse(order.begin(), order.end());
    for (std::uint64_t s : order) {
      OverlapPoint p = measure_point(t, s, o);
      classify(p, o.comp_us);
      auto& v = votes[s];
      ++v[p.synchronizing ? 1 : 0];
      const bool majority = v[1] != v[0] ? v[1] > v[0] : p.synchronizing;
      auto at = std::find_if(r.points.begin(), r.points.end(),
                             [&](const OverlapPoint& q) { return q.bytes >= s; });
      if (at != r.points.end() && at->bytes == s) {
        // The latest measurement of the majority's protocol stands for the size.
        if (p.synchronizing == majority) *at = p;
        at->synchronizing = majority;
      } else if (p.synchronizing == majority) {
        r.points.insert(at, p);
      }
    }
    find_switch(r);
    r.agrees_with_loggp = agrees(r, starts, loggp_s);
  }
  std::string tally;
  for (std::uint64_t s : sizes) {
    const auto& v = votes[s];
    tally += fmt::format("{}{} B {} of {}", tally.empty() ? "" : ", ", s, v[1], v[0] + v[1]);
  }
  const auto name = [](std::uint64_t s) { return s ? fmt::format("{} B", s) : "none"; };
  r.resolution = fmt::format(
      "{} after re-measuring {} sizes {} time(s) (synchronizing: {}): loggp's S {}, overlap's S {} "
      "(first sweep: {})",
      *r.agrees_with_loggp ? "resolved" : "unresolved", sizes.size(), attempt, tally, name(loggp_s),
      name(r.switch_bytes), name(first_s));
  r.notes.push_back(r.resolution);
}

}  // namespace

std::optional<OverlapResult> measure_overlap(net::Transport& t, const OverlapOptions& o,
                                             const std::optional<model::LinkParams>& loggp_link,
                                             ProgressSink* progress) {
  o.validate();
  if (t.role() == net::Role::dest) {
    serve(t, o.repetitions);
    return std::nullopt;
  }
  const auto start = std::chrono::steady_clock::now();
  OverlapResult r;
  const auto sizes = o.sweep_sizes();
  // Warm-up, discarded.
  command(t, Experiment::pingpong, sizes.front(), 0);
  run_experiment(t, Experiment::pingpong, sizes.front(), 0, o.repetitions);
  // A transport failure after the first size keeps the sizes measured (the one in progress is
  // dropped): they are analysed as a sweep of their own, without re-measuring.
  try {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (progress) {
        progress->update(fmt::format("overlap {} B", sizes[i]),
                         static_cast<double>(i) / static_cast<double>(sizes.size()));
      }
      r.points.push_back(measure_point(t, sizes[i], o));
    }
  } catch (const TransportError& e) {
    if (r.points.empty()) throw;
    r.interrupted = e.what();
  }
  for (auto& p : r.points)
    classify(p, o.comp_us);
  find_switch(r);
  if (loggp_link) {
    r.loggp_switch_bytes = loggp_link->rendezvous_threshold_bytes();
    r.agrees_with_loggp = agrees(r, starts_of(*loggp_link), *r.loggp_switch_bytes);
    // Unresolved when the sweep was cut short or re-measuring failed: both figures, said so.
    const auto unresolved = [&](const char* why) {
      r.resolution =
          fmt::format("unresolved ({}): loggp's S {} B, overlap's S {}", why, *r.loggp_switch_bytes,
                      r.switch_bytes ? std::to_string(r.switch_bytes) + " B" : "none");
    };
    if (!*r.agrees_with_loggp && !r.interrupted.empty()) {
      unresolved("the sweep was interrupted before re-measuring");
    } else if (!*r.agrees_with_loggp) {
      OverlapResult before = r;  // what the sweep found, kept if re-measuring fails
      try {
        resolve_disagreement(t, o, r, starts_of(*loggp_link), progress);
      } catch (const TransportError& e) {
        r = std::move(before);
        r.interrupted = e.what();
        unresolved("interrupted while re-measuring; the first sweep's figure");
      }
    }
  }
  if (r.interrupted.empty()) {
    try {
      settle_votes(t, o, r, progress);
    } catch (const TransportError& e) {
      r.interrupted = e.what();  // the votes stand as counted; undecided ones say so
    }
  }
  if (r.interrupted.empty()) {
    // The sweep is complete: a peer lost now costs only the goodbye, not the result.
    try {
      t.send_value(static_cast<std::uint64_t>(Experiment::done));
    } catch (const TransportError& e) {
      r.notes.push_back(fmt::format("the peer was lost after the last measurement: {}", e.what()));
    }
  }
  if (progress) progress->done();
  build_ranges(r, loggp_link);
  r.source_counters = t.counters();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

model::LinkParams merge_overlap(const model::LinkParams& link, const OverlapResult& r) {
  model::LinkParams out = link;
  // The sweep read over the link's own ranges (the same as r.ranges where the two agree on S).
  const std::vector<OverlapRange> over_link = ranges_over(r, starts_of(link), &link);
  for (auto& lr : out.ranges) {
    if (!lr.rendezvous) {
      // Eager with acknowledgement: the sends wait for the receiver (build_ranges).
      for (const auto& range : r.ranges) {
        if (range.from_bytes != lr.from_bytes || range.mechanism != model::TransferMechanism::TA ||
            !range.progress || !range.resolved)
          continue;
        lr.progress = *range.progress;
        lr.transfer = "TA";
        model::price_acknowledgement(lr, out.ranges.front());
      }
      continue;
    }
    for (const auto& range : over_link) {
      if (range.from_bytes != lr.from_bytes || !range.rendezvous || !range.progress ||
          !range.resolved)
        continue;
      lr.progress = *range.progress;
      lr.transfer = model::to_string(range.mechanism);
      if (range.control_send_us >= 0) lr.control_send_us = range.control_send_us;
      if (range.control_recv_us >= 0) lr.control_recv_us = range.control_recv_us;
    }
  }
  return out;
}

void adopt_overlap(LoggpResult& loggp, const LoggpOptions& options, const OverlapResult& r) {
  loggp.seed_link = merge_overlap(loggp.seed_link, r);
  if (options.calibrate) {
    calibrate_loggp(loggp, options);
  } else {
    loggp.link = loggp.seed_link;
  }
}

}  // namespace commgauge::measure
