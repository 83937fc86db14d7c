#include "collectives/intercomm.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace commgauge::collectives {
namespace {

InterPart local_part(Operation op, std::uint64_t bytes) {
  InterPart p;
  p.local = true;
  p.op = op;
  p.bytes = bytes;
  return p;
}

InterPart across(Step step) {
  InterPart p;
  p.steps.push_back(step);
  return p;
}

Step send(std::int32_t to, std::uint64_t bytes) {
  Step s;
  s.send_to = to;
  s.send_bytes = bytes;
  return s;
}

Step recv(std::int32_t from, std::uint64_t bytes) {
  Step s;
  s.recv_from = from;
  s.recv_bytes = bytes;
  return s;
}

// coll/inter's allreduce (and so coll/basic's intercommunicator barrier): reduce to the local
// group's first member, which swaps the result with the remote group's first member, then bcast.
std::vector<InterPart> allreduce_parts(const InterCollective& c, std::uint64_t bytes) {
  std::vector<InterPart> parts;
  parts.push_back(local_part(Operation::reduce, bytes));
  if (c.me == 0) {
    Step swap = recv(c.remote.front(), bytes);
    swap.send_to = c.remote.front();
    swap.send_bytes = bytes;
    parts.push_back(across(swap));
  }
  parts.push_back(local_part(Operation::bcast, bytes));
  return parts;
}

}  // namespace

std::vector<InterPart> intercomm_parts(const InterCollective& c) {
  if (c.local.empty() || c.remote.empty() || c.me >= c.local.size())
    throw std::invalid_argument("an intercommunicator collective needs both groups and the caller");
  const bool receiver = c.role == InterRole::receiver;
  if (rooted(c.op) && receiver &&
      std::find(c.remote.begin(), c.remote.end(), c.root_world) == c.remote.end()) {
    throw std::invalid_argument("the root (world rank " + std::to_string(c.root_world) +
                                ") is not in the other group");
  }
  if (rooted(c.op) && c.role == InterRole::idle) return {};
  const std::int32_t leader = c.remote.front();  // the other group's first member
  const auto local_n = static_cast<std::uint64_t>(c.local.size());
  const auto remote_n = static_cast<std::uint64_t>(c.remote.size());
  std::vector<InterPart> parts;
  switch (c.op) {
    case Operation::barrier:
      return allreduce_parts(c, 4);  // MPI_Allreduce of one int (MPI_MAX)
    case Operation::allreduce:
      return allreduce_parts(c, c.bytes);
    case Operation::bcast:
      if (!receiver) return {across(send(leader, c.bytes))};
      if (c.me == 0) parts.push_back(across(recv(c.root_world, c.bytes)));
      parts.push_back(local_part(Operation::bcast, c.bytes));
      return parts;
    case Operation::reduce:
      if (!receiver) return {across(recv(leader, c.bytes))};
      parts.push_back(local_part(Operation::reduce, c.bytes));
      if (c.me == 0) parts.push_back(across(send(c.root_world, c.bytes)));
      return parts;
    case Operation::gather:
      // The root's record counts one member's block; the others' their contribution.
      if (!receiver) return {across(recv(leader, c.bytes * remote_n))};
      parts.push_back(local_part(Operation::gather, c.bytes));
      if (c.me == 0) parts.push_back(across(send(c.root_world, c.bytes * local_n)));
      return parts;
    case Operation::scatter:
      if (!receiver) return {across(send(leader, c.bytes * remote_n))};
      if (c.me == 0) parts.push_back(across(recv(c.root_world, c.bytes * local_n)));
      parts.push_back(local_part(Operation::scatter, c.bytes));
      return parts;
    case Operation::allgather: {
      // Local gather, the first members swap their groups' blocks, local bcast (each skipped
      // for zero bytes, as coll/inter does).
      if (c.bytes > 0) parts.push_back(local_part(Operation::gather, c.bytes));
      if (c.me == 0) {
        Step swap = recv(leader, c.bytes * remote_n);
        swap.send_to = leader;
        swap.send_bytes = c.bytes * local_n;
        parts.push_back(across(swap));
      }
      if (c.bytes > 0) parts.push_back(local_part(Operation::bcast, c.bytes * remote_n));
      return parts;
    }
    case Operation::alltoall: {
      // coll/basic posts every exchange at once; one at a time in remote rank order here (the
      // step rule), which is deadlock-free: member j's exchange with remote member i waits only
      // for exchanges with smaller i on its side and smaller j on the other.
      InterPart p;
      for (const std::int32_t peer : c.remote) {
        Step s = recv(peer, c.bytes);
        s.send_to = peer;
        s.send_bytes = c.bytes;
        p.steps.push_back(s);
      }
      parts.push_back(std::move(p));
      return parts;
    }
    default:
      break;
  }
  throw std::invalid_argument(std::string(to_string(c.op)) +
                              " on an intercommunicator is not implemented (bcast, reduce, "
                              "allreduce, gather, scatter, allgather, alltoall, barrier are)");
}

}  // namespace commgauge::collectives
