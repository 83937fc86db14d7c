#include "measure/prtt.hpp"

#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"

namespace commgauge::measure {

namespace {

// A plan: one header word (kPlan | entries << 8 | repetitions << 32), then 3 words per entry:
// kind | n << 8; bytes; delay in picoseconds; the dest acknowledges with the entry count, and
// after the plan returns the probes' receive durations and its delays' overshoot. kDone ends the
// session.
constexpr std::uint64_t kPlan = 0xfe;
constexpr std::uint64_t kDone = 0xff;
constexpr std::uint64_t kMaxEntries = 0xffffff;

// n calls of a collective, or n exchanges, on either end; false where the transport has no
// collectives.
bool run_calls(net::Transport& t, const PrttSpec& spec) {
  for (std::uint32_t i = 0; i < spec.n; ++i) {
    if (spec.kind == PrttKind::exchange) {
      net::Request out = t.isend(spec.bytes);
      net::Request in = t.irecv(spec.bytes);
      t.wait(out);
      t.wait(in);
    } else if (!(spec.kind == PrttKind::allreduce ? t.allreduce(spec.bytes)
                                                  : t.alltoall(spec.bytes))) {
      return false;
    }
  }
  return true;
}

void check(const PrttSpec& s) {
  if (s.n < 1 || s.n > 0xffffff) throw InputError("PRTT: n must be 1..16777215");
  if (!(s.delay_us >= 0) || !std::isfinite(s.delay_us)) {
    throw InputError("PRTT: the delay must be a finite number >= 0");
  }
  if (s.kind == PrttKind::late_receiver && s.n != 1) {
    throw InputError("PRTT: the late-receiver probe sends one message");
  }
}

// The source's side of one entry, once. The late-receiver probe's time comes from the dest; the
// source returns how long its send took.
double run_source(net::Transport& t, const PrttSpec& spec) {
  const std::size_t s = spec.bytes;
  if (runs_calls(spec.kind)) {
    t.barrier();  // both enter together; n calls make the barrier's exit skew 1/n of the time
    const double t0 = t.now_us();
    if (!run_calls(t, spec)) throw InputError("PRTT: this transport has no collectives");
    return (t.now_us() - t0) / spec.n;
  }
  if (spec.kind == PrttKind::stream) {
    std::vector<net::Request> out(spec.n);
    const double t0 = t.now_us();
    for (auto& request : out)
      request = t.isend(s);
    for (auto& request : out)
      t.wait(request);
    t.recv(1);
    return t.now_us() - t0;
  }
  if (spec.kind == PrttKind::send_call) {
    double inside = 0;
    for (std::uint32_t i = 0; i < spec.n; ++i) {
      const double t0 = t.now_us();
      net::Request request = t.isend(s);
      inside += t.now_us() - t0;
      t.wait(request);
      t.recv(1);
    }
    return inside / spec.n;
  }
  if (spec.kind == PrttKind::late_receiver) {
    const double t0 = t.now_us();
    t.send(s);
    const double sent = t.now_us() - t0;
    t.recv(1);
    return sent;
  }
  // The delay as performed: a busy wait that is descheduled near its end overshoots d by a
  // scheduler slice, which is not the send overhead eq. (6) is after. The overshoot is taken out.
  double overshoot = 0;
  const double t0 = t.now_us();
  t.send(s);
  for (std::uint32_t i = 1; i < spec.n; ++i) {
    if (spec.kind == PrttKind::client_delay) {
      const double a = t.now_us();
      t.compute(spec.delay_us);
      overshoot += std::max(0.0, t.now_us() - a - spec.delay_us);
    }
    t.send(s);
  }
  t.recv(s);
  return t.now_us() - t0 - overshoot;
}

// Entries whose dest reports a value after the plan: the probe's receive duration, and the
// overshoot of the server's delays.
bool dest_reports(const PrttSpec& spec) {
  return spec.kind == PrttKind::late_receiver || spec.kind == PrttKind::server_delay;
}

// The dest's side of one entry, once; returns the late receive's duration (probe), or how much
// its delays overshot d (server delay; taken out of the PRTT by the source).
double run_dest(net::Transport& t, const PrttSpec& spec) {
  const std::size_t s = spec.bytes;
  if (runs_calls(spec.kind)) {
    t.barrier();
    if (!run_calls(t, spec)) throw TransportError("PRTT: this transport has no collectives");
    return 0;
  }
  if (spec.kind == PrttKind::stream) {
    std::vector<net::Request> in(spec.n);
    for (auto& request : in)
      request = t.irecv(s);
    for (auto& request : in)
      t.wait(request);
    t.send(1);
    return 0;
  }
  if (spec.kind == PrttKind::send_call) {
    std::vector<net::Request> in(spec.n);
    for (auto& request : in)
      request = t.irecv(s);
    for (auto& request : in) {
      t.wait(request);
      t.send(1);
    }
    return 0;
  }
  if (spec.kind == PrttKind::late_receiver) {
    t.compute(spec.delay_us);
    const double t0 = t.now_us();
    t.recv(s);
    const double received = t.now_us() - t0;
    t.send(1);
    return received;
  }
  double overshoot = 0;
  t.recv(s);
  for (std::uint32_t i = 1; i < spec.n; ++i) {
    if (spec.kind == PrttKind::server_delay) {
      const double a = t.now_us();
      t.compute(spec.delay_us);
      overshoot += std::max(0.0, t.now_us() - a - spec.delay_us);
    }
    t.recv(s);
  }
  t.send(s);
  return overshoot;
}

}  // namespace

std::vector<std::vector<double>> prtt_plan(net::Transport& t, std::span<const PrttSpec> plan,
                                           std::uint32_t reps,
                                           std::vector<std::vector<double>>* send_us) {
  if (plan.size() > kMaxEntries) throw InputError("PRTT: a plan holds at most 16777215 entries");
  for (const auto& spec : plan)
    check(spec);
  t.send_value(kPlan | (static_cast<std::uint64_t>(plan.size()) << 8) |
               (static_cast<std::uint64_t>(reps) << 32));
  for (const auto& spec : plan) {
    t.send_value(static_cast<std::uint64_t>(spec.kind) | (static_cast<std::uint64_t>(spec.n) << 8));
    t.send_value(spec.bytes);
    t.send_value(static_cast<std::uint64_t>(std::llround(spec.delay_us * 1e6)));
  }
  // The dest acknowledges the plan: the first timed send follows a round trip, not the
  // command messages (whose gap would delay it), and finds the first receive posted.
  if (t.recv_value() != plan.size()) throw TransportError("PRTT: the plan was not acknowledged");
  std::vector<std::vector<double>> times(plan.size(), std::vector<double>(reps));
  for (std::size_t e = 0; e < plan.size(); ++e) {
    for (auto& time : times[e])
      time = run_source(t, plan[e]);
  }
  if (send_us) {
    send_us->assign(plan.size(), {});
    for (std::size_t e = 0; e < plan.size(); ++e) {
      if (plan[e].kind == PrttKind::late_receiver) (*send_us)[e] = times[e];
    }
  }
  // The dest's values, in plan order, after everything was timed.
  for (std::size_t e = 0; e < plan.size(); ++e) {
    if (!dest_reports(plan[e])) continue;
    for (auto& time : times[e]) {
      const double value = std::bit_cast<double>(t.recv_value());
      time = plan[e].kind == PrttKind::late_receiver ? value : time - value;
    }
  }
  return times;
}

std::vector<double> prtt_batch(net::Transport& t, const PrttSpec& spec, std::uint32_t reps) {
  return prtt_plan(t, std::span<const PrttSpec>(&spec, 1), reps).front();
}

net::Counters serve_prtt(net::Transport& t) {
  std::vector<PrttSpec> plan;
  for (;;) {
    const std::uint64_t header = t.recv_value();
    if ((header & 0xff) == kDone) break;
    if ((header & 0xff) != kPlan) {
      throw TransportError(fmt::format("PRTT: unknown command {:#x}", header));
    }
    const std::size_t entries = (header >> 8) & kMaxEntries;
    const auto reps = static_cast<std::uint32_t>(header >> 32);
    plan.resize(entries);
    for (auto& spec : plan) {
      const std::uint64_t word = t.recv_value();
      const auto kind = static_cast<PrttKind>(word & 0xff);
      if (kind != PrttKind::client_delay && kind != PrttKind::server_delay &&
          kind != PrttKind::late_receiver && kind != PrttKind::stream &&
          kind != PrttKind::send_call && !runs_calls(kind)) {
        throw TransportError(fmt::format("PRTT: unknown entry kind {:#x}", word));
      }
      spec.kind = kind;
      spec.n = static_cast<std::uint32_t>((word >> 8) & 0xffffff);
      spec.bytes = t.recv_value();
      spec.delay_us = static_cast<double>(t.recv_value()) / 1e6;
    }
    t.send_value(entries);
    std::vector<double> reported;
    for (const auto& spec : plan) {
      for (std::uint32_t r = 0; r < reps; ++r) {
        const double us = run_dest(t, spec);
        if (dest_reports(spec)) reported.push_back(us);
      }
    }
    for (double us : reported)
      t.send_value(std::bit_cast<std::uint64_t>(us));
  }
  const net::Counters mine = t.counters();
  t.send_value(mine.messages);
  t.send_value(mine.bytes);
  return mine;
}

net::Counters finish_prtt(net::Transport& t) {
  t.send_value(kDone);
  net::Counters dest;
  dest.messages = t.recv_value();
  dest.bytes = t.recv_value();
  return dest;
}

}  // namespace commgauge::measure
