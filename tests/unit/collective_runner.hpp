#pragma once
// Executes collective schedules together, for the collective tests: every member's steps run
// in order (post the receive, post the send, finish both), messages queue per (sender,
// receiver) pair. Members are world ranks 100 + index (not their index, to catch a mix-up).

#include <bitset>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "collectives/algorithms.hpp"

namespace commgauge::collectives::testing {

using Knowledge = std::bitset<64>;

inline constexpr std::int32_t kFirstRank = 100;

/// A call of `op` over n members (world ranks 100..), root index `root`.
inline Collective make(Operation op, std::size_t n, std::size_t root, std::uint64_t bytes) {
  Collective c;
  c.op = op;
  for (std::size_t i = 0; i < n; ++i)
    c.members.push_back(kFirstRank + static_cast<std::int32_t>(i));
  c.root = root;
  c.bytes = bytes;
  return c;
}

struct Outcome {
  bool completed = false;               ///< every member finished its schedule
  bool sizes_agree = true;              ///< every receive expected the bytes sent to it
  std::size_t unreceived = 0;           ///< messages left in the queues at the end
  std::vector<Knowledge> knows;         ///< contributions each member has seen (of members 0-63)
  std::vector<std::uint64_t> received;  ///< bytes each member received
};

/// Runs the members' schedules (plans[i] is member i's). `synchronous`: a send completes only
/// once its receiver took it.
inline Outcome run_schedules(const std::vector<std::vector<Step>>& plans, bool synchronous) {
  struct Message {
    std::uint64_t bytes;
    Knowledge knows;
    bool consumed = false;
  };
  const std::size_t n = plans.size();
  auto index_of = [](std::int32_t rank) { return static_cast<std::size_t>(rank - kFirstRank); };
  Outcome out;
  out.knows.resize(n);
  out.received.assign(n, 0);
  for (std::size_t i = 0; i < n && i < Knowledge().size(); ++i)
    out.knows[i].set(i);  // contributions are tracked for the first 64 members
  std::map<std::pair<std::size_t, std::size_t>, std::deque<std::shared_ptr<Message>>> channels;
  std::vector<std::size_t> pos(n, 0);
  std::vector<bool> started(n, false), received(n, false);
  std::vector<std::shared_ptr<Message>> sent(n);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (pos[i] >= plans[i].size()) continue;
      const Step& s = plans[i][pos[i]];
      if (!started[i]) {
        started[i] = true;
        received[i] = s.recv_from < 0;
        sent[i] = nullptr;
        if (s.send_to >= 0) {
          sent[i] = std::make_shared<Message>(Message{s.send_bytes, out.knows[i]});
          channels[{i, index_of(s.send_to)}].push_back(sent[i]);
        }
        progress = true;
      }
      if (!received[i]) {
        auto& q = channels[{index_of(s.recv_from), i}];
        if (!q.empty()) {
          auto m = q.front();
          q.pop_front();
          out.sizes_agree = out.sizes_agree && m->bytes == s.recv_bytes;
          m->consumed = true;
          out.knows[i] |= m->knows;
          out.received[i] += m->bytes;
          received[i] = true;
          progress = true;
        }
      }
      const bool send_done = !synchronous || sent[i] == nullptr || sent[i]->consumed;
      if (received[i] && send_done) {
        ++pos[i];
        started[i] = false;
        progress = true;
      }
    }
  }
  out.completed = true;
  for (std::size_t i = 0; i < n; ++i)
    out.completed = out.completed && pos[i] == plans[i].size();
  for (const auto& [key, q] : channels)
    out.unreceived += q.size();
  return out;
}

}  // namespace commgauge::collectives::testing
