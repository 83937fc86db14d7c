#include "measure/call_costs.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "measure/loggp_detail.hpp"

namespace commgauge::measure {

void CallCostOptions::validate() const {
  if (poll_calls < 1 || comm_calls < 1) {
    throw InputError("call costs: at least 1 call per round is needed");
  }
  if (rounds < 1) throw InputError("call costs: at least 1 round is needed");
}

void to_json(nlohmann::json& j, const CallCostOptions& o) {
  j = {{"poll_calls", o.poll_calls}, {"comm_calls", o.comm_calls}, {"rounds", o.rounds}};
}

void from_json(const nlohmann::json& j, CallCostOptions& o) {
  o.poll_calls = j.at("poll_calls");
  o.comm_calls = j.at("comm_calls");
  o.rounds = j.at("rounds");
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
  return r;
}

}  // namespace commgauge::measure
