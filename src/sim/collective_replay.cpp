// Collectives in the replay: communicators' members, the schedule each call runs (Open MPI's
// tuned rules or --coll), its steps posted as point-to-point messages and its local work.

#include <algorithm>

#include <fmt/format.h>

#include "collectives/intercomm.hpp"

#include "sim/engine.hpp"

namespace commgauge::sim::detail {
namespace {  // one unit with the other parts (CMake unity group "engine")

const std::vector<std::int32_t>& Engine::members_of(std::uint64_t comm, std::int32_t me) {
  if (comm == 0) return world_;
  if (comm == 1) {
    self_[0] = me;
    return self_;
  }
  const auto it = comms_.find(comm);
  if (it == comms_.end())
    throw trace::TraceError(
        fmt::format("rank {}: communicator {} is used before its comm_create "
                    "record",
                    me, comm));
  return it->second;
}

void Engine::register_intercomm(std::uint64_t comm, const std::vector<std::int32_t>& members,
                                std::uint32_t remote_size) {
  const auto split = members.end() - static_cast<std::ptrdiff_t>(remote_size);
  Intercomm ic;
  ic.groups[0].assign(members.begin(), split);
  ic.groups[1].assign(split, members.end());
  const auto least = [](const std::vector<std::int32_t>& g) {
    return *std::min_element(g.begin(), g.end());
  };
  if (least(ic.groups[1]) < least(ic.groups[0])) std::swap(ic.groups[0], ic.groups[1]);
  for (std::size_t g = 0; g < 2; ++g) {
    // An id that no recorded communicator has (those are 64-bit hashes): the
    // intercommunicator's, mixed with the group's number. The same on every rank.
    ic.group_ids[g] = comm ^ (0x9E3779B97F4A7C15ULL * (g + 1));
    comms_.emplace(ic.group_ids[g], ic.groups[g]);
  }
  intercomms_.emplace(comm, std::move(ic));
}

// An intercommunicator collective in the parts Open MPI runs it in (collectives/intercomm.hpp):
// collectives on the caller's group, expanded as any other, and steps across the groups.
void Engine::expand_intercomm_collective(Rank& r, std::int32_t me, const PendingCollective& pc,
                                         const Intercomm& ic) {
  const auto fail = [&](const std::string& why) {
    return trace::TraceError(
        fmt::format("{}: rank {}, event {}: {} on intercommunicator {:#x} "
                    "cannot be replayed: {}",
                    r.reader->file_name(), me, r.reader->event_count() - 1,
                    collectives::to_string(pc.op), pc.comm, why));
  };
  const auto in = [me](const std::vector<std::int32_t>& g) {
    return std::find(g.begin(), g.end(), me) != g.end();
  };
  const std::size_t g = in(ic.groups[1]) ? 1 : 0;
  if (!in(ic.groups[g])) throw fail("this rank is in neither group");
  if (!pc.counts.empty() || !pc.recv_counts.empty())
    throw fail("per-member counts (v and w collectives) are not implemented on intercommunicators");
  collectives::InterCollective c;
  c.op = pc.op;
  c.local = ic.groups[g];
  c.remote = ic.groups[1 - g];
  c.me = static_cast<std::size_t>(std::find(c.local.begin(), c.local.end(), me) - c.local.begin());
  c.role = trace::inter_role(pc.root);
  c.root_world = pc.root;
  c.bytes = pc.bytes;
  std::vector<collectives::InterPart> parts;
  try {
    parts = collectives::intercomm_parts(c);
  } catch (const std::invalid_argument& error) {
    throw fail(error.what());
  }
  for (const auto& part : parts) {
    if (part.local) {
      PendingCollective sub;
      sub.request = pc.request;
      sub.comm = ic.group_ids[g];
      sub.op = part.op;
      sub.root = c.local.front();
      sub.bytes = part.bytes;
      sub.commutative = pc.commutative || pc.op == collectives::Operation::barrier;
      sub.element_bytes = pc.op == collectives::Operation::barrier ? 4 : pc.element_bytes;
      expand_collective(r, me, sub);
    } else {
      r.steps.insert(r.steps.end(), part.steps.begin(), part.steps.end());
      r.step_comms.resize(r.steps.size(), pc.comm);
    }
  }
  auto [use, added] =
      collective_uses_.try_emplace(UseKey{pc.op, 0, collectives::Algorithm::linear, kIntercomm});
  if (added) {
    use->second.operation = fmt::format("{} (intercommunicator)", collectives::to_string(pc.op));
    use->second.algorithm = "intercommunicator";
    use->second.openmpi =
        pc.op == collectives::Operation::barrier || pc.op == collectives::Operation::alltoall
            ? "basic"
            : "inter";
    use->second.exact = pc.op != collectives::Operation::alltoall;
    use->second.note =
        pc.op == collectives::Operation::alltoall
            ? "every member with every member of the other group, one exchange at a time"
            : "a collective inside each group rooted at its first member and one message "
              "between the groups (the inner collectives are listed as well)";
  }
  ++use->second.calls;
}

// The steps of one collective call, appended to the rank's step list (steps run in order).
void Engine::expand_collective(Rank& r, std::int32_t me, const PendingCollective& pc) {
  if (!intercomms_.empty()) {
    if (const auto it = intercomms_.find(pc.comm); it != intercomms_.end()) {
      expand_intercomm_collective(r, me, pc, it->second);
      return;
    }
  }
  const auto& members = members_of(pc.comm, me);
  auto index_of = [&](std::int32_t world) -> std::size_t {
    if (pc.comm == 0) return static_cast<std::size_t>(world);
    const auto it = std::find(members.begin(), members.end(), world);
    if (it == members.end())
      throw trace::TraceError(
          fmt::format("rank {}: rank {} is not a member of communicator {}", me, world, pc.comm));
    return static_cast<std::size_t>(it - members.begin());
  };
  for (const auto* counts : {&pc.counts, &pc.recv_counts}) {
    if (!counts->empty() && counts->size() != members.size())
      throw trace::TraceError(fmt::format(
          "{}: rank {}, event {}: {} has {} per-member counts, but communicator {:#x} has {} "
          "members",
          r.reader->file_name(), me, r.reader->event_count() - 1, collectives::to_string(pc.op),
          counts->size(), pc.comm, members.size()));
  }
  const std::size_t my_index = index_of(me);
  const std::size_t root_index = collectives::rooted(pc.op) && pc.root >= 0 ? index_of(pc.root) : 0;
  // The communicator's member list is lent to the scratch collective, not copied.
  auto& shared = const_cast<std::vector<std::int32_t>&>(members);
  scratch_.members.swap(shared);
  struct Restore {
    std::vector<std::int32_t>& a;
    std::vector<std::int32_t>& b;
    ~Restore() { a.swap(b); }
  } restore{scratch_.members, shared};
  scratch_.op = pc.op;
  scratch_.me = my_index;
  scratch_.root = root_index;
  scratch_.bytes = pc.bytes;
  scratch_.counts = pc.counts;
  scratch_.recv_counts = pc.recv_counts;
  try {
    std::vector<collectives::Step> steps;
    UseKey key{pc.op, 0, collectives::Algorithm::linear, 0};
    collectives::TunedChoice choice;
    if (const auto it = policy_.algorithms.find(pc.op); it != policy_.algorithms.end()) {
      steps = collectives::schedule(scratch_, it->second);
      key.used = it->second;
      key.how = kChosenWithColl;
    } else {
      steps =
          collectives::openmpi_tuned_schedule(scratch_, pc.commutative, pc.element_bytes, &choice);
      key.openmpi_id = choice.decision.algorithm_id;
      key.used = choice.used;
      key.how = pc.request != 0 ? kNonblocking : kTuned;
    }
    if (!pulled_results_.empty()) note_pulled_result(me, pc, steps);
    if (net_.charges_copy_after_rendezvous()) note_copy_after_rendezvous(me, steps);
    r.steps.insert(r.steps.end(), steps.begin(), steps.end());
    r.step_comms.resize(r.steps.size(), pc.comm);
    auto [use, added] = collective_uses_.try_emplace(key);
    if (added) use->second = describe_use(pc.op, key, choice);
    ++use->second.calls;
  } catch (const std::invalid_argument& error) {
    throw trace::TraceError(fmt::format("{}: rank {}, event {}: {} cannot be replayed: {}",
                                        r.reader->file_name(), me, r.reader->event_count() - 1,
                                        collectives::to_string(pc.op), error.what()));
  }
}

// A call that repeats the rank's previous collective (same communicator, operation and size: a
// loop, which passes the same vector) copies its own data into the result vector that call's
// allgather phase sent from, where the peers pulled it (DCP with Tm = RTA) and so read its
// lines; what this call leaves pulled is kept for the next.
void Engine::note_pulled_result(std::int32_t me, const PendingCollective& pc,
                                std::vector<collectives::Step>& steps) {
  PulledResult& last = pulled_results_[static_cast<std::size_t>(me)];
  const bool repeats = last.comm == pc.comm && last.op == pc.op && last.bytes == pc.bytes;
  if (repeats && !steps.empty())
    steps.front().copy_into_sent_bytes = std::min(steps.front().copy_bytes, last.pulled_bytes);
  std::uint64_t pulled = 0;
  for (const collectives::Step& st : steps)
    if (st.recv_into_sent && st.send_to >= 0 && net_.protocol(me, st.send_to, st.send_bytes).pulled)
      pulled += st.send_bytes;
  last = {pc.comm, pc.op, pc.bytes, pulled};
}

// A call whose messages on this rank are rendezvous enters the kernel for their transfers (a
// single copy, a socket): its own-data copy, at the start or in a loop between two such calls,
// finds its lines cold and slows the next transfer (profile: copy_after_rendezvous_us_per_byte).
void Engine::note_copy_after_rendezvous(std::int32_t me, std::vector<collectives::Step>& steps) {
  if (steps.empty() || steps.front().copy_bytes == 0) return;
  for (const collectives::Step& st : steps) {
    if ((st.send_to >= 0 && net_.protocol(me, st.send_to, st.send_bytes).rendezvous) ||
        (st.recv_from >= 0 && net_.protocol(st.recv_from, me, st.recv_bytes).rendezvous)) {
      steps.front().copy_after_rendezvous = true;
      return;
    }
  }
}

// How one (operation, algorithm) pair was chosen, said once when it is first used.
CollectiveUse Engine::describe_use(collectives::Operation op, const UseKey& key,
                                   const collectives::TunedChoice& choice) {
  CollectiveUse use;
  use.operation = std::string(collectives::to_string(op));
  use.algorithm = std::string(collectives::to_string(key.used));
  if (key.how == kChosenWithColl) {
    use.note = "chosen with --coll";
    return use;
  }
  const auto& d = choice.decision;
  use.exact = choice.exact;
  if (d.algorithm_id == 0) {
    use.openmpi = fmt::format("basic:{}", use.algorithm);
    use.note = "Open MPI serves it from coll/basic (not decided by coll/tuned)";
  } else {
    use.openmpi = fmt::format("tuned:{} ({})", d.openmpi_name, d.algorithm_id);
    if (choice.composed)
      use.note = "composed of other collectives, each under its own tuned rule";
    else if (choice.fallback)
      use.note = "Open MPI's algorithm falls back to this one for fewer elements than members";
    else if (choice.exact)
      use.note = "Open MPI 4.1 tuned fixed rules, same messages";
    else
      use.note = "Open MPI 4.1 tuned fixed rules; not implemented, the nearest algorithm ran";
  }
  if (key.how == kNonblocking) {
    use.operation = "i" + use.operation;
    use.exact = false;
    use.note +=
        "; nonblocking: coll/libnbc's schedule approximated by the blocking rules, "
        "progressing only inside MPI calls";
  }
  return use;
}

bool Engine::run_steps(Rank& r, std::int32_t me) {
  while (r.step < r.steps.size()) {
    if (!r.step_posted) {
      const collectives::Step& st = r.steps[r.step];
      if (st.copy_bytes > 0) {
        const std::uint64_t plain = st.copy_bytes - st.copy_into_sent_bytes;
        charge_local(r, (st.copy_after_rendezvous ? net_.copy_after_rendezvous(plain)
                                                  : net_.local_work(0, plain)) +
                            net_.copy_into_sent(st.copy_into_sent_bytes));
      }
      const std::uint64_t ctx = r.step_comms[r.step] | kCollectiveContext;
      // coll/base's steps exchange as MPI_Sendrecv does.
      post_sendrecv(
          me, st.send_to, st.send_bytes,
          [&] {
            if (st.recv_from >= 0)
              r.temps.push_back(
                  post_recv(r, me, st.recv_from, 0, ctx, st.recv_bytes, true, st.recv_into_sent));
          },
          [&] {
            // Steps send from the caller's buffers (their starts not traced) or the library's.
            r.temps.push_back(post_send(r, me, st.send_to, 0, ctx, st.send_bytes,
                                        SendMode::standard,
                                        st.send_from_temporary ? model::kUnknownPageOffset
                                                               : policy_.buffer_page_offset_bytes,
                                        st.send_written));
          });
      r.step_posted = true;
    }
    if (!wait_all(r, r.temps)) return false;
    consume(r, r.temps);
    const collectives::Step& st = r.steps[r.step];
    if (st.reduce_bytes > 0 || st.copy_back_bytes > 0) {
      const bool into_sent_rendezvous =
          st.reduce_into_sent && st.send_to >= 0 &&
          net_.protocol(static_cast<std::int32_t>(me), st.send_to, st.send_bytes).rendezvous;
      // The copy back goes from the temporary into the vector, which no peer read: at the warm
      // rate (docs/measurements.md, "A copy into what the peer pulled").
      charge_local(r, net_.local_work(st.reduce_bytes, st.copy_back_bytes, into_sent_rendezvous));
    }
    ++r.step;
    r.step_posted = false;
  }
  return true;
}

}  // namespace
}  // namespace commgauge::sim::detail
