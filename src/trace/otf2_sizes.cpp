#include "trace/otf2_sizes.hpp"

#include <numeric>
#include <vector>

namespace commgauge::trace {

namespace {

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
}

std::uint64_t at(const std::vector<std::uint64_t>& v, std::uint64_t i) {
  return i < v.size() ? v[i] : 0;
}

/// `total` spread over `n` peers, the remainder on the last, so that the counts add up.
std::vector<std::uint64_t> spread(std::uint64_t total, std::uint64_t n) {
  if (n == 0) return {};
  std::vector<std::uint64_t> v(n, total / n);
  v.back() += total % n;
  return v;
}

}  // namespace

collectives::Operation collective_operation(collectives::Operation op,
                                            std::string_view function_name) {
  if (function_name == "MPI_Scan" || function_name == "MPI_Iscan")
    return collectives::Operation::scan;
  if (function_name == "MPI_Exscan" || function_name == "MPI_Iexscan")
    return collectives::Operation::exscan;
  return op;
}

CollectiveBytes collective_bytes(collectives::Operation op, const Event& e, std::uint64_t n,
                                 std::uint64_t me, std::uint64_t root) {
  const std::uint64_t b = e.bytes, rb = e.recv_bytes;
  const bool in_place = e.flag(kInPlace);
  const bool at_root = me == root;
  const std::uint64_t others = n > 0 ? n - 1 : 0;
  switch (op) {
    case collectives::Operation::barrier:
      return {};
    case collectives::Operation::bcast:
      return at_root ? CollectiveBytes{n * b, b} : CollectiveBytes{0, b};
    case collectives::Operation::reduce:
      if (!at_root) return {b, 0};
      return in_place ? CollectiveBytes{0, others * b} : CollectiveBytes{b, n * b};
    case collectives::Operation::allreduce:
    case collectives::Operation::reduce_scatter_block:
      return in_place ? CollectiveBytes{others * b, others * b} : CollectiveBytes{n * b, n * b};
    case collectives::Operation::reduce_scatter: {
      const std::uint64_t total = sum(e.recv_counts), mine = at(e.recv_counts, me);
      return in_place ? CollectiveBytes{total - mine, others * mine}
                      : CollectiveBytes{total, n * mine};
    }
    case collectives::Operation::scan:
      return in_place ? CollectiveBytes{(n - me - 1) * b, me * b}
                      : CollectiveBytes{(n - me) * b, (me + 1) * b};
    case collectives::Operation::exscan:
      return {(n - me - 1) * b, me * b};
    case collectives::Operation::gather:
      if (!at_root) return {b, 0};
      return in_place ? CollectiveBytes{0, others * rb} : CollectiveBytes{rb, n * rb};
    case collectives::Operation::gatherv: {
      if (!at_root) return {b, 0};
      const std::uint64_t total = sum(e.recv_counts), mine = at(e.recv_counts, me);
      return in_place ? CollectiveBytes{0, total - mine} : CollectiveBytes{mine, total};
    }
    case collectives::Operation::scatter:
      if (!at_root) return {0, rb};
      return in_place ? CollectiveBytes{others * b, 0} : CollectiveBytes{n * b, b};
    case collectives::Operation::scatterv: {
      if (!at_root) return {0, rb};
      const std::uint64_t total = sum(e.counts), mine = at(e.counts, me);
      return in_place ? CollectiveBytes{total - mine, 0} : CollectiveBytes{total, mine};
    }
    case collectives::Operation::allgather:
    case collectives::Operation::alltoall:
      return in_place ? CollectiveBytes{others * rb, others * rb} : CollectiveBytes{n * b, n * rb};
    case collectives::Operation::allgatherv: {
      const std::uint64_t total = sum(e.recv_counts), mine = at(e.recv_counts, me);
      return in_place ? CollectiveBytes{others * mine, total - mine}
                      : CollectiveBytes{n * b, total};
    }
    case collectives::Operation::alltoallv:
    case collectives::Operation::alltoallw: {
      if (in_place) {
        const std::uint64_t r = sum(e.recv_counts) - at(e.recv_counts, me);
        return {r, r};
      }
      return {sum(e.counts), sum(e.recv_counts)};
    }
  }
  return {};
}

void collective_buffers(collectives::Operation op, CollectiveBytes t, std::uint64_t n,
                        std::uint64_t me, std::uint64_t root, Event& e) {
  const bool at_root = me == root;
  const std::uint64_t members = n > 0 ? n : 1;
  auto bytes = [&e](std::uint64_t v) {
    e.set(kBytes);
    e.bytes = v;
  };
  auto recv_bytes = [&e](std::uint64_t v) {
    e.set(kRecvBytes);
    e.recv_bytes = v;
  };
  switch (op) {
    case collectives::Operation::barrier:
      return;
    case collectives::Operation::bcast:
      bytes(t.received);
      return;
    case collectives::Operation::reduce:
      if (at_root) {
        bytes(t.received / members);
        recv_bytes(t.received / members);
      } else {
        bytes(t.sent);
      }
      return;
    case collectives::Operation::allreduce:
    case collectives::Operation::reduce_scatter_block:
      bytes(t.sent / members);
      return;
    case collectives::Operation::reduce_scatter:
      e.set(kRecvCounts);
      e.recv_counts = spread(t.sent, n);
      bytes(t.sent);
      return;
    case collectives::Operation::scan:
      bytes(t.sent / (n > me ? n - me : 1));
      return;
    case collectives::Operation::exscan:
      bytes(me + 1 < n ? t.sent / (n - me - 1) : (me > 0 ? t.received / me : 0));
      return;
    case collectives::Operation::gather:
      bytes(t.sent);
      if (at_root) recv_bytes(t.received / members);
      return;
    case collectives::Operation::gatherv:
      bytes(t.sent);
      if (at_root) {
        e.set(kRecvCounts);
        e.recv_counts = spread(t.received, n);
      }
      return;
    case collectives::Operation::scatter:
      if (at_root) bytes(t.sent / members);
      recv_bytes(t.received);
      return;
    case collectives::Operation::scatterv:
      if (at_root) {
        e.set(kCounts);
        e.counts = spread(t.sent, n);
        bytes(t.sent);
      }
      recv_bytes(t.received);
      return;
    case collectives::Operation::allgather:
    case collectives::Operation::alltoall:
      bytes(t.sent / members);
      recv_bytes(t.received / members);
      return;
    case collectives::Operation::allgatherv:
      bytes(t.sent / members);
      e.set(kRecvCounts);
      e.recv_counts = spread(t.received, n);
      return;
    case collectives::Operation::alltoallv:
    case collectives::Operation::alltoallw:
      e.set(kCounts);
      e.counts = spread(t.sent, n);
      e.set(kRecvCounts);
      e.recv_counts = spread(t.received, n);
      bytes(t.sent);
      return;
  }
}

}  // namespace commgauge::trace
