#include "measure/poll.hpp"

#include "common/error.hpp"
#include "measure/loggp_detail.hpp"

namespace commgauge::measure {

void PollOptions::validate() const {
  if (calls < 1) throw InputError("poll measurement: at least 1 call per round is needed");
  if (rounds < 1) throw InputError("poll measurement: at least 1 round is needed");
}

void to_json(nlohmann::json& j, const PollOptions& o) {
  j = {{"calls", o.calls}, {"rounds", o.rounds}};
}

void from_json(const nlohmann::json& j, PollOptions& o) {
  o.calls = j.at("calls");
  o.rounds = j.at("rounds");
}

std::optional<PollResult> measure_poll(net::Transport& t, const PollOptions& o) {
  o.validate();
  if (t.kind() == "virtual") {
    throw InputError(
        "the virtual network has no poll cost to measure (its calls cost what its "
        "model charges)");
  }
  if (t.role() == net::Role::dest) {
    // Hold the message back until the source has polled for it, then send it.
    t.recv_value();
    t.send(1);
    return std::nullopt;
  }
  net::Request pending = t.irecv(1);
  std::vector<double> per_call;
  for (std::uint32_t round = 0; round < o.rounds; ++round) {
    const double t0 = t.now_us();
    for (std::uint32_t i = 0; i < o.calls; ++i) {
      if (t.test(pending)) throw TransportError("poll measurement: the message came too early");
    }
    per_call.push_back((t.now_us() - t0) / o.calls);
  }
  t.send_value(1);
  t.wait(pending);
  PollResult r;
  r.per_call = detail::stat_of(per_call, 1);
  r.calls = static_cast<std::uint64_t>(o.calls) * o.rounds;
  return r;
}

}  // namespace commgauge::measure
