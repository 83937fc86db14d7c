#include "measure/call_costs.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "measure/loggp_detail.hpp"
#include "net/page_aligned.hpp"

namespace commgauge::measure {

void CallCostOptions::validate() const {
  if (poll_calls < 1 || comm_calls < 1 || local_calls < 1) {
    throw InputError("call costs: at least 1 call per round is needed");
  }
  if (rounds < 1) throw InputError("call costs: at least 1 round is needed");
}

void to_json(nlohmann::json& j, const CallCostOptions& o) {
  j = {{"poll_calls", o.poll_calls},
       {"comm_calls", o.comm_calls},
       {"local_calls", o.local_calls},
       {"rounds", o.rounds}};
}

void from_json(const nlohmann::json& j, CallCostOptions& o) {
  o.poll_calls = j.at("poll_calls");
  o.comm_calls = j.at("comm_calls");
  o.local_calls = j.value("local_calls", 40u);
  o.rounds = j.at("rounds");
}

namespace {

// Per byte: `calls` operations of kLarge bytes less `calls` of kSmall, in rounds alternating
// which size goes first.
constexpr std::size_t kLarge = 65536, kSmall = 4096;

template <class Operation>
PrttStat per_byte(net::Transport& t, const CallCostOptions& o, Operation&& op) {
  std::vector<double> slopes;
  auto timed = [&](std::size_t bytes) {
    const double t0 = t.now_us();
    for (std::uint32_t i = 0; i < o.local_calls; ++i)
      op(bytes);
    return (t.now_us() - t0) / o.local_calls;
  };
  op(kLarge);  // warm: the buffers are touched once before anything is timed
  for (std::uint32_t round = 0; round < o.rounds; ++round) {
    const bool large_first = round % 2 == 0;
    const double first = timed(large_first ? kLarge : kSmall);
    const double second = timed(large_first ? kSmall : kLarge);
    const double large = large_first ? first : second, small = large_first ? second : first;
    slopes.push_back(std::max(0.0, large - small) / static_cast<double>(kLarge - kSmall));
  }
  return detail::stat_of(slopes, 1);
}

}  // namespace

void measure_local_work(net::Transport& t, const CallCostOptions& o, CallCosts& r) {
  if (t.reduce_local(kSmall)) {
    r.reduce_per_byte = per_byte(t, o, [&](std::size_t bytes) { t.reduce_local(bytes); });
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

std::optional<CallCosts> measure_call_costs(net::Transport& t, const CallCostOptions& o) {
  o.validate();
  if (t.kind() == "virtual") {
    throw InputError(
        "the virtual network has no call costs to measure (its calls cost what "
        "its model charges)");
  }
  const bool source = t.role() == net::Role::source;
  CallCosts r;
  if (source) {
    net::Request pending = t.irecv(1);
    std::vector<double> per_call;
    for (std::uint32_t round = 0; round < o.rounds; ++round) {
      const double t0 = t.now_us();
      for (std::uint32_t i = 0; i < o.poll_calls; ++i) {
        if (t.test(pending)) throw TransportError("call costs: the message came too early");
      }
      per_call.push_back((t.now_us() - t0) / o.poll_calls);
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
  if (!source) return std::nullopt;
  if (have) {
    r.comm_create = detail::stat_of(create, 1);
    r.comm_free = detail::stat_of(free, 1);
  }
  measure_local_work(t, o, r);
  return r;
}

}  // namespace commgauge::measure
