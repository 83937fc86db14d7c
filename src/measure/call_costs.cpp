#include "measure/call_costs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "common/error.hpp"
#include "measure/loggp_detail.hpp"
#include "net/page_aligned.hpp"
#include "stats/filtering.hpp"

namespace commgauge::measure {

void CallCostOptions::validate() const {
  if (poll_calls < 1 || comm_calls < 1 || local_calls < 1) {
    throw InputError("call costs: at least 1 call per round is needed");
  }
  if (rounds < 1) throw InputError("call costs: at least 1 round is needed");
  if (mode_attempts < 1) throw InputError("call costs: at least 1 attempt is needed");
  ModeWaitOptions{mode, mode_wait_s}.validate();
}

void to_json(nlohmann::json& j, const CallCostOptions& o) {
  j = {{"poll_calls", o.poll_calls},   {"comm_calls", o.comm_calls},
       {"local_calls", o.local_calls}, {"rounds", o.rounds},
       {"mode_wait_s", o.mode_wait_s}, {"mode_attempts", o.mode_attempts}};
  // Not `mode`: the dest learns the probe's size in agree_band; the source alone judges probes.
}

void from_json(const nlohmann::json& j, CallCostOptions& o) {
  o.poll_calls = j.at("poll_calls");
  o.comm_calls = j.at("comm_calls");
  o.local_calls = j.value("local_calls", 40u);
  o.rounds = j.at("rounds");
  o.mode_wait_s = j.value("mode_wait_s", kModeWait_s);
  o.mode_attempts = j.value("mode_attempts", kModeAttempts);
}

namespace {

// The sizes the per-byte costs are timed at.
constexpr std::size_t kLarge = 65536, kSmall = 4096;

// Per byte of `bytes`: `timed(true)` less `timed(false)` (each a time per call) in every round,
// which variant goes first alternating by round (drift falls on both alike); a round whose
// difference is negative counts 0.
template <class Timed>
PrttStat alternating_per_byte(std::uint32_t rounds, std::size_t bytes, Timed&& timed) {
  std::vector<double> per_byte;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    const bool with_first = round % 2 == 0;
    const double first = timed(with_first);
    const double second = timed(!with_first);
    const double with = with_first ? first : second, without = with_first ? second : first;
    per_byte.push_back(std::max(0.0, with - without) / static_cast<double>(bytes));
  }
  return detail::stat_of(per_byte, 1);
}

// One exchange of `bytes` each way, as the held-out exchange cells run it (Isend, Irecv, both
// waited for).
void exchange(net::Transport& t, std::size_t bytes) {
  net::Request out = t.isend(bytes);
  net::Request in = t.irecv(bytes);
  t.wait(out);
  t.wait(in);
}

// The mean time of runs of `body`, as many as `each` holds, each timed on its own, leaving out
// those that took more than kPreempted times their median (seed 002's filter, stats/filtering):
// a run the scheduler or an interrupt stopped (over vader on a 2-core VM 1 % of 64 KiB exchanges
// took 3 times the median or more).
template <class Body>
double mean_unpreempted_us(net::Transport& t, std::vector<double>& each, Body&& body) {
  constexpr double kPreempted = 3;
  for (double& e : each) {
    const double t0 = t.now_us();
    body();
    e = t.now_us() - t0;
  }
  const std::vector<double> kept = stats::filter_above_median(each, kPreempted).kept;
  return std::accumulate(kept.begin(), kept.end(), 0.0) / static_cast<double>(kept.size());
}

// Per byte: `calls` operations of kLarge bytes less `calls` of kSmall, in rounds alternating
// which size goes first.
template <class Operation>
PrttStat per_byte(net::Transport& t, const CallCostOptions& o, Operation&& op) {
  auto timed = [&](bool large) {
    const std::size_t bytes = large ? kLarge : kSmall;
    const double t0 = t.now_us();
    for (std::uint32_t i = 0; i < o.local_calls; ++i)
      op(bytes);
    return (t.now_us() - t0) / o.local_calls;
  };
  op(kLarge);  // warm: the buffers are touched once before anything is timed
  return alternating_per_byte(o.rounds, kLarge - kSmall, timed);
}

}  // namespace

void measure_local_work(net::Transport& t, const CallCostOptions& o, CallCosts& r) {
  if (t.reduce_local(kSmall)) {
    r.reduce_per_byte = per_byte(t, o, [&](std::size_t bytes) { t.reduce_local(bytes); });
    // One double per call, in rounds of kCalls (each call lasts about as long as the clock's
    // resolution), less the double's bytes at the per-byte rate.
    constexpr std::uint32_t kCalls = 1000;
    constexpr std::size_t kOne = sizeof(double);
    const double bytes_us = kOne * r.reduce_per_byte->median_us;
    std::vector<double> per_call;
    for (std::uint32_t round = 0; round < o.rounds; ++round) {
      const double t0 = t.now_us();
      for (std::uint32_t i = 0; i < kCalls; ++i)
        t.reduce_local(kOne);
      per_call.push_back(std::max(0.0, (t.now_us() - t0) / kCalls - bytes_us));
    }
    r.reduce_per_call = detail::stat_of(per_call, 1);
  }
  // Page-aligned, as the transports' buffers: a destination a few bytes past the source's page
  // offset copies several times more slowly (net/page_aligned.hpp).
  net::PageAlignedBytes from(kLarge, 1), to(kLarge, 0);
  r.copy_per_byte = per_byte(t, o, [&](std::size_t bytes) {
    std::memcpy(to.data(), from.data(), bytes);
    // Keep the copy: the compiler may not drop a copy whose result it must assume is read.
    asm volatile("" : : "r"(to.data()) : "memory");
  });
}

namespace {

// One measurement of the phase (both ends; the result on the source).
std::optional<CallCosts> measure_once(net::Transport& t, const CallCostOptions& o) {
  const bool source = t.role() == net::Role::source;
  CallCosts r;
  if (source) r.first_calls = t.first_calls();
  if (source) {
    net::Request pending = t.irecv(1);
    std::vector<double> per_call;
    // A round ends after poll_calls or kPollRoundBudgetUs, whichever comes first: ranks that
    // yield when idle (mpi_yield_when_idle) give their core away in every failed test, and on a
    // busy machine each test then lasts a scheduler slice (milliseconds): 15 rounds of 2000 would
    // hold the dest in one wait for longer than the call limit. The clock is read every
    // kPollCheck calls, so that reading it adds little to the cost measured.
    constexpr double kPollRoundBudgetUs = 100'000;
    constexpr std::uint32_t kPollCheck = 16;
    for (std::uint32_t round = 0; round < o.rounds; ++round) {
      const double t0 = t.now_us();
      std::uint32_t calls = 0;
      while (calls < o.poll_calls) {
        if (t.test(pending)) throw TransportError("call costs: the message came too early");
        if (++calls % kPollCheck == 0 && t.now_us() - t0 > kPollRoundBudgetUs) break;
      }
      per_call.push_back((t.now_us() - t0) / calls);
      r.poll_calls_timed += calls;
    }
    t.send_value(1);
    t.wait(pending);
    r.poll = detail::stat_of(per_call, 1);
  } else {
    // Hold the message back until the source has polled for it, then send it.
    t.recv_value();
    t.send(1);
  }
  // Communicator creation and freeing against an allreduce of 4 bytes in the same rounds; which
  // goes first alternates by round (drift falls on both alike).
  std::vector<double> create, free;
  bool have = true;
  auto timed = [&](auto&& call) {
    t.barrier();
    const double t0 = t.now_us();
    have = have && call();
    return (t.now_us() - t0) / o.comm_calls;
  };
  for (std::uint32_t round = 0; round < o.rounds && have; ++round) {
    auto allreduces = [&] {
      for (std::uint32_t i = 0; i < o.comm_calls; ++i)
        if (!t.allreduce(4)) return false;
      return true;
    };
    const bool dup_first = round % 2 == 0;
    const double before = dup_first ? 0 : timed(allreduces);
    const double dup = timed([&] { return t.comm_dup(o.comm_calls); });
    const double freed = timed([&] { return t.comm_free_all(); });
    const double allreduce = dup_first ? timed(allreduces) : before;
    create.push_back(std::max(0.0, dup - allreduce));
    free.push_back(freed);
  }
  // A collective call's own cost: barriers against exchanges of 0 bytes in the same rounds,
  // which goes first alternating by round (only where the transport has collectives: `have`).
  std::optional<PrttStat> collective;
  if (have) {
    collective = alternating_per_byte(o.rounds, 1, [&](bool barriers) {
      return timed([&] {
        for (std::uint32_t i = 0; i < o.comm_calls; ++i) {
          if (barriers) {
            t.barrier();
            continue;
          }
          exchange(t, 0);
        }
        return true;
      });
    });
  }
  // A reduction, and a copy, into the buffer just sent: both ends exchange kLarge bytes, the
  // source times the local work `into_sent(kLarge)` that follows each exchange.
  auto after_exchanges = [&](auto&& into_sent) {
    constexpr std::uint32_t kCalls = 10;  // exchanges of 64 KiB: about 1 ms per round on vader
    std::vector<double> per_byte;
    for (std::uint32_t round = 0; round < o.rounds; ++round) {
      t.barrier();
      double working = 0;
      for (std::uint32_t i = 0; i < kCalls; ++i) {
        exchange(t, kLarge);
        if (source) {
          const double t0 = t.now_us();
          into_sent(kLarge);
          working += t.now_us() - t0;
        }
      }
      per_byte.push_back(working / kCalls / static_cast<double>(kLarge));
    }
    return detail::stat_of(per_byte, 1);
  };
  if (t.reduce_local_into_send_buffer(0)) {
    const PrttStat s =
        after_exchanges([&](std::size_t bytes) { t.reduce_local_into_send_buffer(bytes); });
    if (source) r.reduce_into_sent_per_byte = s;
  }
  if (t.copy_into_send_buffer(0)) {
    const PrttStat s = after_exchanges([&](std::size_t bytes) { t.copy_into_send_buffer(bytes); });
    if (source) r.copy_into_sent_per_byte = s;
  }
  // A copy between rendezvous exchanges: in each round kCalls exchanges of kLarge bytes (a
  // rendezvous on every shared-memory BTL's default eager limit) alone and kCalls each followed
  // on both ends by a copy of kLarge bytes (between two buffers of each end's own that the
  // exchanges do not touch), which goes first alternating by round; the source times both runs,
  // and the difference per byte is the parameter. Timed so, not the copy alone: over vader on a
  // 2-core VM (2026-12-06, C loops) a 64 KiB copy timed alone after an exchange took 0.72 us
  // (0.62 warm) but added 0.82-0.87 us to the loop, the next exchange slowed by it. A line
  // through a second, smaller copy had no fixed part above 0 in 8 quiet profiles of 8: the
  // difference of 4 KiB was lost in the loops' noise. Each exchange (with its copy) is timed on
  // its own and those a preemption stopped are left out: timing loops of 50 whole, the interval
  // lay above the warm copy in 1 of 8 quiet profiles (e.g. 0.0065-0.018 us per KiB, warm 0.0094),
  // so timed in 6 of 6 (lower ends 0.0098-0.0126, warm 0.0089-0.0096; 2026-12-06).
  {
    constexpr std::uint32_t kCalls = 100;
    std::vector<double> each(kCalls);
    net::PageAlignedBytes from(kLarge, 1), to(kLarge, 0);
    const PrttStat between = alternating_per_byte(o.rounds, kLarge, [&](bool copying) {
      t.barrier();
      return mean_unpreempted_us(t, each, [&] {
        exchange(t, kLarge);
        if (!copying) return;
        std::memcpy(to.data(), from.data(), kLarge);
        asm volatile("" : : "r"(to.data()) : "memory");  // the copy's result counts as read
      });
    });
    if (source) r.copy_after_rendezvous_per_byte = between;
  }
  // A transfer of data its sender has just written: exchanges of kLarge bytes, in each round
  // kCalls with the send buffers as they are and kCalls with each end writing its send buffer
  // first (untimed, then a barrier), which goes first alternating by round; the source times
  // each exchange, and the difference per byte is the parameter.
  if (t.write_send_buffer(0)) {
    constexpr std::uint32_t kCalls = 8;
    auto exchanges = [&](bool written) {
      double total = 0;
      for (std::uint32_t i = 0; i < kCalls; ++i) {
        if (written) t.write_send_buffer(kLarge);
        t.barrier();
        const double t0 = t.now_us();
        net::Request in = t.irecv(kLarge);
        net::Request out = t.isend(kLarge);
        t.wait(out);
        t.wait(in);
        total += t.now_us() - t0;
      }
      return total / kCalls;
    };
    const PrttStat written = alternating_per_byte(o.rounds, kLarge, exchanges);  // both ends run it
    if (source) r.written_send_per_byte = written;
  }
  // A transfer into the buffer the receiver has just sent from: the dest sends kLarge bytes to
  // the source (which reads that buffer), then receives kLarge bytes from it, in each round
  // kCalls times into that buffer and kCalls times into its receive buffer, which goes first
  // alternating by round; the source times its second send (it completes once the dest has
  // taken the data), and the difference per byte is the parameter.
  if (t.receives_into_send_buffer()) {
    constexpr std::uint32_t kCalls = 8;
    auto transfers = [&](bool into_sent) {
      double total = 0;
      for (std::uint32_t i = 0; i < kCalls; ++i) {
        if (source) {
          t.recv(kLarge);
          t.barrier();  // the dest has posted its receive
          const double t0 = t.now_us();
          t.send(kLarge);
          total += t.now_us() - t0;
        } else {
          t.send(kLarge);
          net::Request in = into_sent ? t.irecv_into_send_buffer(kLarge) : t.irecv(kLarge);
          t.barrier();
          t.wait(in);
        }
      }
      return total / kCalls;
    };
    const PrttStat into_sent = alternating_per_byte(o.rounds, kLarge, transfers);
    if (source) r.recv_into_sent_per_byte = into_sent;
  }
  // A receive into memory never touched: in each round kCalls receives of kFresh bytes into fresh
  // memory and kCalls into the receive buffer, which goes first alternating by round; the dest
  // times each from the barrier after which the source sends, and gives the source its round's
  // difference per call (picoseconds).
  if (t.recv_into_fresh_memory(0)) {
    constexpr std::size_t kFresh = 262144;
    constexpr std::uint32_t kCalls = 4;  // about 1 ms per fresh receive on a VM with slow faults
    std::vector<double> per_byte;
    for (std::uint32_t round = 0; round < o.rounds; ++round) {
      double total[2] = {0, 0};  // [0] into the receive buffer, [1] into fresh memory
      for (int half = 0; half < 2; ++half) {
        const int fresh = (half == 0) == (round % 2 == 0) ? 1 : 0;
        for (std::uint32_t i = 0; i < kCalls; ++i) {
          t.barrier();
          if (source) {
            t.send(kFresh);
            continue;
          }
          const double t0 = t.now_us();
          if (fresh)
            t.recv_into_fresh_memory(kFresh);
          else
            t.recv(kFresh);
          total[fresh] += t.now_us() - t0;
        }
      }
      if (source) {
        per_byte.push_back(static_cast<double>(t.recv_value()) * 1e-6 / kFresh);
      } else {
        t.send_value(static_cast<std::uint64_t>(
            std::llround(std::max(0.0, total[1] - total[0]) / kCalls * 1e6)));
      }
    }
    if (source) r.fresh_memory_per_byte = detail::stat_of(per_byte, 1);
  }
  if (!source) return std::nullopt;
  if (t.self_message(0)) {
    constexpr std::uint64_t kSelfSizes[] = {8, 1024, 4096, 16384, 65536};
    constexpr std::size_t kSizes = std::size(kSelfSizes);
    constexpr std::uint32_t kSelfCalls = 50;  // 5-35 us a size over vader
    std::vector<double> per_message[kSizes];
    for (const std::uint64_t bytes : kSelfSizes)
      t.self_message(bytes);  // buffers touched once
    for (std::uint32_t round = 0; round < o.rounds; ++round) {
      for (std::size_t j = 0; j < kSizes; ++j) {
        const std::size_t i = (j + round) % kSizes;
        const double t0 = t.now_us();
        for (std::uint32_t c = 0; c < kSelfCalls; ++c)
          t.self_message(kSelfSizes[i]);
        per_message[i].push_back((t.now_us() - t0) / kSelfCalls);
      }
    }
    for (std::size_t i = 0; i < kSizes; ++i)
      r.self_message.push_back({kSelfSizes[i], detail::stat_of(per_message[i], 1)});
  }
  if (have) {
    r.comm_create = detail::stat_of(create, 1);
    r.comm_free = detail::stat_of(free, 1);
    r.collective_call = collective;
  }
  measure_local_work(t, o, r);
  return r;
}

}  // namespace

std::optional<CallCosts> measure_call_costs(net::Transport& t, const CallCostOptions& o) {
  o.validate();
  if (t.kind() == "virtual") {
    throw InputError(
        "the virtual network has no call costs to measure (its calls cost what "
        "its model charges)");
  }
  const bool source = t.role() == net::Role::source;
  const auto agreed_band = agree_band(t, o.mode);
  if (!agreed_band) return measure_once(t, o);
  const LatencyModeBand& band = *agreed_band;
  PhaseModeCheck check;
  const Wall start = Wall::clock::now();
  std::optional<CallCosts> r;
  for (std::uint32_t attempt = 1;; ++attempt) {
    const Wall wait_from = Wall::clock::now();
    const auto before =
        await_latency_mode(t, band, std::max(0.0, o.mode_wait_s - check.waited_s), start);
    check.waited_s += seconds_between(wait_from, Wall::clock::now());
    for (const auto& p : before)
      check.probes.push_back({p, attempt, false});
    // Another attempt out of the mode would only replace one that began in it.
    if (attempt > 1 && !agreed(t, source && before.back().in_band)) break;
    r = measure_once(t, o);
    const auto after = await_latency_mode(t, band, kModeRecheckWait_s, start);
    if (source) {
      for (const auto& p : after)
        check.probes.push_back({p, attempt, true});
      check.attempts = attempt;
      check.held = before.back().in_band && after.back().in_band;
    }
    if (!agreed(t, !check.held && attempt < o.mode_attempts && check.waited_s < o.mode_wait_s))
      break;
  }
  if (source) {
    check.band = band;
    r->mode = std::move(check);
  }
  return r;
}

bool collective_call_shown(const CallCosts& costs) {
  return costs.collective_call && costs.collective_call->lower_us > 0;
}

void adopt_call_costs(LoggpResult& result, const CallCosts& costs) {
  auto adopt = [&](double model::LinkParams::*field, const std::optional<PrttStat>& stat) {
    if (stat) result.link.*field = result.seed_link.*field = stat->median_us;
  };
  adopt(&model::LinkParams::poll_us, costs.poll);
  adopt(&model::LinkParams::copy_us_per_byte, costs.copy_per_byte);
  adopt(&model::LinkParams::reduce_us_per_byte, costs.reduce_per_byte);
  adopt(&model::LinkParams::reduce_call_us, costs.reduce_per_call);
  adopt(&model::LinkParams::reduce_into_sent_us_per_byte, costs.reduce_into_sent_per_byte);
  adopt(&model::LinkParams::copy_into_sent_us_per_byte, costs.copy_into_sent_per_byte);
  adopt(&model::LinkParams::written_send_us_per_byte, costs.written_send_per_byte);
  adopt(&model::LinkParams::recv_into_sent_us_per_byte, costs.recv_into_sent_per_byte);
  adopt(&model::LinkParams::fresh_memory_us_per_byte, costs.fresh_memory_per_byte);
  // Only where shown above the warm copy (its interval's lower end): over TCP under two busy loops
  // a loop of 64 KiB exchanges is milliseconds of noise, and one profile read 0.38 ns a byte
  // (2026-12-06), which the replay would have charged every collective's own-data copy.
  if (costs.copy_after_rendezvous_per_byte &&
      costs.copy_after_rendezvous_per_byte->lower_us > costs.copy_per_byte.median_us)
    adopt(&model::LinkParams::copy_after_rendezvous_us_per_byte,
          costs.copy_after_rendezvous_per_byte);
  if (costs.comm_create) {  // measured together with comm_free
    adopt(&model::LinkParams::comm_create_us, costs.comm_create);
    adopt(&model::LinkParams::comm_free_us, costs.comm_free);
  }
  if (collective_call_shown(costs))
    adopt(&model::LinkParams::collective_call_us, costs.collective_call);
  if (!costs.self_message.empty()) {
    result.link.self_message.clear();
    for (const auto& m : costs.self_message)
      result.link.self_message.push_back({m.bytes, m.stat.median_us});
    result.seed_link.self_message = result.link.self_message;
  }
  for (const auto& f : costs.first_calls) {
    if (f.preempted) continue;  // the scheduler's time, not the library's
    const double extra = std::max(0.0, f.first_us - f.second_us);
    result.link.first_call_us[f.function] = result.seed_link.first_call_us[f.function] = extra;
  }
}

}  // namespace commgauge::measure
