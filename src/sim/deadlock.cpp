// When replay cannot progress: who is blocked on what, and whether the program itself deadlocks
// under the simulated protocols or the trace cannot be replayed.

#include <fmt/format.h>

#include "sim/engine.hpp"

namespace commgauge::sim::detail {
namespace {  // one unit with the other parts (CMake unity group "engine")

void Engine::deadlock() {
  std::string report = "replay cannot progress: ";
  std::vector<std::uint32_t> blocked;
  for (std::uint32_t i = 0; i < ranks_.size(); ++i)
    if (ranks_[i].phase != Phase::finished) blocked.push_back(i);
  report += fmt::format("{} of {} ranks are blocked", blocked.size(), ranks_.size());
  bool rendezvous_wait = false, receive_wait = false;
  constexpr std::size_t kListed = 16;
  for (std::size_t n = 0; n < blocked.size(); ++n) {
    const Rank& r = ranks_[blocked[n]];
    std::vector<std::uint32_t> waiting;
    for (const auto* list : {&r.temps, &r.waits})
      for (const std::uint32_t id : *list)
        if (!ops_[id].done) waiting.push_back(id);
    for (const std::uint32_t id : waiting) {
      const Op& o = ops_[id];
      if (o.is_send && o.cost.rendezvous && o.match == kNone) rendezvous_wait = true;
      if (!o.is_send && o.match == kNone) receive_wait = true;
    }
    if (n >= kListed) continue;
    report += fmt::format(
        "\n  rank {}: event {} ({}{}), at {:.3f} us, waits for", blocked[n],
        r.reader->event_count() - 1, trace::function_name(r.ev.function),
        r.in_collective ? fmt::format(", collective step {} of {}", r.step + 1, r.steps.size())
                        : std::string(),
        model::to_microseconds(r.clock));
    if (r.probing)
      report += fmt::format(" [probe for a message from rank {}, tag {}: none arrives]",
                            r.probe_source, r.probe_tag);
    else if (waiting.empty())
      report += " nothing it can name";
    for (const std::uint32_t id : waiting) {
      const Op& o = ops_[id];
      const bool collective = (o.comm & kCollectiveContext) != 0;
      if (o.is_send)
        report += fmt::format(" [send of {} B to rank {}, tag {}{}: {}]", o.bytes, o.peer, o.tag,
                              collective ? " (collective)" : "",
                              o.match == kNone ? (o.cost.rendezvous ? "rendezvous, no matching "
                                                                      "receive posted"
                                                                    : "no matching receive")
                                               : "in flight");
      else
        report += fmt::format(" [receive from rank {}, tag {}{}: {}]", o.peer, o.tag,
                              collective ? " (collective)" : "",
                              o.match == kNone ? "no matching send posted" : "in flight");
    }
  }
  if (blocked.size() > kListed)
    report += fmt::format("\n  ... and {} more", blocked.size() - kListed);
  std::string cls;
  if (rendezvous_wait) {
    cls = "protocol";
    report +=
        "\nclassification: the program itself deadlocks under the simulated protocols: "
        "sends of k >= S (rendezvous) wait for their receive to be posted, and each "
        "receive is posted after a blocked send (e.g. every rank sends first). With a "
        "larger rendezvous threshold, buffered or nonblocking sends it would not.";
  } else {
    cls = "replay";
    report +=
        "\nclassification: an artefact of replaying this trace, not a property of the "
        "program: a receive has no matching send in the trace (an incomplete or "
        "inconsistent trace, e.g. a rank's file from another run)";
    if (!receive_wait) report += ", or the recorded order cannot be reproduced";
  }
  throw DeadlockError(report, cls);
}

}  // namespace
}  // namespace commgauge::sim::detail
