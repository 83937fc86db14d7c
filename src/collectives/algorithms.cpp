#include "collectives/algorithms.hpp"

#include <stdexcept>

namespace commgauge::collectives {

namespace {

using Index = std::int64_t;  // member indices in arithmetic (modular, may go negative)

struct Builder {
  const Collective& c;
  std::vector<Step> steps;
  Index n() const { return static_cast<Index>(c.members.size()); }
  Index me() const { return static_cast<Index>(c.me); }
  std::int32_t rank(Index i) const {
    return c.members[static_cast<std::size_t>(((i % n()) + n()) % n())];
  }
  void send(Index to, std::uint64_t bytes) { steps.push_back({rank(to), bytes, -1, 0}); }
  void recv(Index from, std::uint64_t bytes) { steps.push_back({-1, 0, rank(from), bytes}); }
  void exchange(Index to, std::uint64_t send_bytes, Index from, std::uint64_t recv_bytes) {
    steps.push_back({rank(to), send_bytes, rank(from), recv_bytes});
  }
  std::uint64_t count(Index i) const {
    return c.counts.empty() ? c.bytes : c.counts[static_cast<std::size_t>(((i % n()) + n()) % n())];
  }
  std::uint64_t recv_count(Index i) const {
    return c.recv_counts.empty() ? c.bytes
                                 : c.recv_counts[static_cast<std::size_t>(((i % n()) + n()) % n())];
  }
};

Index highest_power_of_two_at_most(Index n) {
  Index p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

// ---- trees ----

/// Binomial tree over ranks relative to the root (MPICH's numbering): parent clears the
/// lowest set bit; children are vr + 2^k for 2^k below that bit.
void binomial_down(Builder& b, std::uint64_t bytes) {
  const Index n = b.n();
  const Index vr = (b.me() - static_cast<Index>(b.c.root) + n) % n;
  Index mask = 1;
  while (mask < n) {
    if (vr & mask) {
      b.recv(vr - mask + static_cast<Index>(b.c.root), bytes);
      break;
    }
    mask <<= 1;
  }
  mask >>= 1;
  while (mask > 0) {
    if (vr + mask < n) b.send(vr + mask + static_cast<Index>(b.c.root), bytes);
    mask >>= 1;
  }
}

void binomial_up(Builder& b, std::uint64_t bytes) {
  const Index n = b.n();
  const Index vr = (b.me() - static_cast<Index>(b.c.root) + n) % n;
  Index mask = 1;
  while (mask < n) {
    if ((vr & mask) == 0) {
      if ((vr | mask) < n) b.recv((vr | mask) + static_cast<Index>(b.c.root), bytes);
    } else {
      b.send((vr & ~mask) + static_cast<Index>(b.c.root), bytes);
      break;
    }
    mask <<= 1;
  }
}

/// Binomial gather: a subtree's blocks travel together, so messages grow towards the root.
void binomial_gather(Builder& b) {
  const Index n = b.n();
  const Index root = static_cast<Index>(b.c.root);
  const Index vr = (b.me() - root + n) % n;
  auto subtree_bytes = [&](Index v, Index mask) {  // blocks of v .. min(v + mask, n) - 1
    std::uint64_t total = 0;
    for (Index k = v; k < std::min(v + mask, n); ++k)
      total += b.count(k + root);
    return total;
  };
  Index mask = 1;
  while (mask < n) {
    if ((vr & mask) == 0) {
      if ((vr | mask) < n) b.recv((vr | mask) + root, subtree_bytes(vr | mask, mask));
    } else {
      b.send((vr & ~mask) + root, subtree_bytes(vr, mask));
      break;
    }
    mask <<= 1;
  }
}

void binomial_scatter(Builder& b) {
  const Index n = b.n();
  const Index root = static_cast<Index>(b.c.root);
  const Index vr = (b.me() - root + n) % n;
  auto subtree_bytes = [&](Index v, Index mask) {
    std::uint64_t total = 0;
    for (Index k = v; k < std::min(v + mask, n); ++k)
      total += b.count(k + root);
    return total;
  };
  Index mask = 1;
  while (mask < n) {
    if (vr & mask) {
      b.recv(vr - mask + root, subtree_bytes(vr, mask));
      break;
    }
    mask <<= 1;
  }
  mask >>= 1;
  while (mask > 0) {
    if (vr + mask < n) b.send(vr + mask + root, subtree_bytes(vr + mask, mask));
    mask >>= 1;
  }
}

// ---- exchanges ----

/// Recursive doubling with MPICH's fold for non-powers of two: the first 2*rem ranks pair up,
/// the even one of each pair hands its data to the odd one and sits out, gets the result back.
void recursive_doubling(Builder& b, std::uint64_t bytes) {
  const Index n = b.n();
  const Index me = b.me();
  const Index pof2 = highest_power_of_two_at_most(n);
  const Index rem = n - pof2;
  Index newrank;
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      b.send(me + 1, bytes);
      b.recv(me + 1, bytes);
      return;
    }
    b.recv(me - 1, bytes);
    newrank = me / 2;
  } else {
    newrank = me - rem;
  }
  auto real = [&](Index r) { return r < rem ? r * 2 + 1 : r + rem; };
  for (Index mask = 1; mask < pof2; mask <<= 1) {
    const Index partner = real(newrank ^ mask);
    b.exchange(partner, bytes, partner, bytes);
  }
  if (me < 2 * rem) b.send(me - 1, bytes);
}

/// Splits `total` bytes into n nearly equal chunks (the first total % n get one more byte).
std::uint64_t chunk(std::uint64_t total, Index n, Index i) {
  const auto un = static_cast<std::uint64_t>(n);
  const auto ui = static_cast<std::uint64_t>(((i % n) + n) % n);
  return total / un + (ui < total % un ? 1 : 0);
}

/// Ring reduce-scatter: step s sends block (me - s) and receives block (me - s - 1).
void ring_reduce_scatter(Builder& b, const std::vector<std::uint64_t>& blocks) {
  const Index n = b.n();
  const Index me = b.me();
  for (Index s = 0; s < n - 1; ++s) {
    const auto out = static_cast<std::size_t>(((me - s) % n + n) % n);
    const auto in = static_cast<std::size_t>(((me - s - 1) % n + n) % n);
    b.exchange(me + 1, blocks[out], me - 1, blocks[in]);
  }
}

/// Ring allgather: step s forwards block (me - s) and receives block (me - s - 1).
void ring_allgather(Builder& b, const std::vector<std::uint64_t>& blocks) {
  const Index n = b.n();
  const Index me = b.me();
  for (Index s = 0; s < n - 1; ++s) {
    const auto out = static_cast<std::size_t>(((me - s) % n + n) % n);
    const auto in = static_cast<std::size_t>(((me - s - 1) % n + n) % n);
    b.exchange(me + 1, blocks[out], me - 1, blocks[in]);
  }
}

std::vector<std::uint64_t> equal_chunks(std::uint64_t total, Index n) {
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = chunk(total, n, i);
  return v;
}

std::vector<std::uint64_t> member_blocks(const Builder& b) {
  std::vector<std::uint64_t> v(static_cast<std::size_t>(b.n()));
  for (Index i = 0; i < b.n(); ++i)
    v[static_cast<std::size_t>(i)] = b.count(i);
  return v;
}

[[noreturn]] void unsupported(Operation op, Algorithm a) {
  throw std::invalid_argument(std::string("no ") + std::string(to_string(a)) + " algorithm for " +
                              std::string(to_string(op)));
}

}  // namespace

std::string_view to_string(Operation op) {
  switch (op) {
    case Operation::barrier:
      return "barrier";
    case Operation::bcast:
      return "bcast";
    case Operation::reduce:
      return "reduce";
    case Operation::allreduce:
      return "allreduce";
    case Operation::reduce_scatter:
      return "reduce_scatter";
    case Operation::reduce_scatter_block:
      return "reduce_scatter_block";
    case Operation::scan:
      return "scan";
    case Operation::exscan:
      return "exscan";
    case Operation::gather:
      return "gather";
    case Operation::gatherv:
      return "gatherv";
    case Operation::scatter:
      return "scatter";
    case Operation::scatterv:
      return "scatterv";
    case Operation::allgather:
      return "allgather";
    case Operation::allgatherv:
      return "allgatherv";
    case Operation::alltoall:
      return "alltoall";
    case Operation::alltoallv:
      return "alltoallv";
    case Operation::alltoallw:
      return "alltoallw";
  }
  return "?";
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::linear:
      return "linear";
    case Algorithm::binomial:
      return "binomial";
    case Algorithm::recursive_doubling:
      return "recursive_doubling";
    case Algorithm::ring:
      return "ring";
    case Algorithm::pairwise:
      return "pairwise";
    case Algorithm::dissemination:
      return "dissemination";
    case Algorithm::chain:
      return "chain";
  }
  return "?";
}

std::optional<Operation> parse_operation(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Operation::alltoallw); ++i)
    if (to_string(static_cast<Operation>(i)) == name) return static_cast<Operation>(i);
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Algorithm::chain); ++i)
    if (to_string(static_cast<Algorithm>(i)) == name) return static_cast<Algorithm>(i);
  return std::nullopt;
}

std::vector<Algorithm> algorithms_for(Operation op) {
  using A = Algorithm;
  switch (op) {
    case Operation::barrier:
      return {A::dissemination, A::recursive_doubling, A::linear};
    case Operation::bcast:
      return {A::binomial, A::linear};
    case Operation::reduce:
      return {A::binomial, A::linear};
    case Operation::allreduce:
      return {A::recursive_doubling, A::ring, A::binomial};
    case Operation::reduce_scatter:
    case Operation::reduce_scatter_block:
      return {A::ring, A::linear};
    case Operation::scan:
    case Operation::exscan:
      return {A::chain};
    case Operation::gather:
    case Operation::scatter:
      return {A::binomial, A::linear};
    case Operation::gatherv:
    case Operation::scatterv:
      return {A::linear};
    case Operation::allgather:
      return {A::ring, A::recursive_doubling};
    case Operation::allgatherv:
      return {A::ring};
    case Operation::alltoall:
      return {A::pairwise, A::linear};
    case Operation::alltoallv:
    case Operation::alltoallw:
      return {A::pairwise, A::linear};
  }
  return {};
}

std::vector<Step> schedule(const Collective& c, Algorithm a) {
  const std::size_t size = c.members.size();
  if (size == 0 || c.me >= size) throw std::invalid_argument("collective: member out of range");
  if (c.root >= size) throw std::invalid_argument("collective: root out of range");
  const bool per_member = c.op == Operation::gatherv || c.op == Operation::scatterv ||
                          c.op == Operation::allgatherv || c.op == Operation::reduce_scatter ||
                          c.op == Operation::alltoallv || c.op == Operation::alltoallw;
  if (per_member && !c.counts.empty() && c.counts.size() != size)
    throw std::invalid_argument("collective: counts must have one entry per member");
  Builder b{c, {}};
  if (size == 1) return b.steps;
  const Index n = b.n();
  const Index me = b.me();
  const Index root = static_cast<Index>(c.root);
  switch (c.op) {
    case Operation::barrier:
      if (a == Algorithm::dissemination) {
        for (Index d = 1; d < n; d *= 2)
          b.exchange(me + d, 0, me - d, 0);
      } else if (a == Algorithm::recursive_doubling) {
        recursive_doubling(b, 0);
      } else if (a == Algorithm::linear) {  // gather to 0, then release
        if (me == 0) {
          for (Index i = 1; i < n; ++i)
            b.recv(i, 0);
          for (Index i = 1; i < n; ++i)
            b.send(i, 0);
        } else {
          b.send(0, 0);
          b.recv(0, 0);
        }
      } else {
        unsupported(c.op, a);
      }
      break;
    case Operation::bcast:
      if (a == Algorithm::binomial) {
        binomial_down(b, c.bytes);
      } else if (a == Algorithm::linear) {
        if (me == root) {
          for (Index i = 1; i < n; ++i)
            b.send(root + i, c.bytes);
        } else {
          b.recv(root, c.bytes);
        }
      } else {
        unsupported(c.op, a);
      }
      break;
    case Operation::reduce:
      if (a == Algorithm::binomial) {
        binomial_up(b, c.bytes);
      } else if (a == Algorithm::linear) {
        if (me == root) {
          for (Index i = 1; i < n; ++i)
            b.recv(root + i, c.bytes);
        } else {
          b.send(root, c.bytes);
        }
      } else {
        unsupported(c.op, a);
      }
      break;
    case Operation::allreduce:
      if (a == Algorithm::recursive_doubling) {
        recursive_doubling(b, c.bytes);
      } else if (a == Algorithm::ring) {
        const auto chunks = equal_chunks(c.bytes, n);
        ring_reduce_scatter(b, chunks);
        // After the reduce-scatter, member i holds the reduced chunk (i + 1) mod n.
        std::vector<std::uint64_t> shifted(chunks.size());
        for (Index i = 0; i < n; ++i)
          shifted[static_cast<std::size_t>(i)] = chunks[static_cast<std::size_t>((i + 1) % n)];
        ring_allgather(b, shifted);
      } else if (a == Algorithm::binomial) {  // reduce to the first member, then bcast
        Collective to_root = c;
        to_root.root = 0;
        Builder up{to_root, {}};
        binomial_up(up, c.bytes);
        Builder down{to_root, {}};
        binomial_down(down, c.bytes);
        b.steps = up.steps;
        b.steps.insert(b.steps.end(), down.steps.begin(), down.steps.end());
      } else {
        unsupported(c.op, a);
      }
      break;
    case Operation::reduce_scatter:
    case Operation::reduce_scatter_block: {
      const std::vector<std::uint64_t> blocks =
          c.op == Operation::reduce_scatter ? member_blocks(b)
                                            : std::vector<std::uint64_t>(c.members.size(), c.bytes);
      if (a == Algorithm::ring) {
        // Rotated so that member i ends with block i: it starts by sending block i - 1.
        std::vector<std::uint64_t> rotated(blocks.size());
        for (Index i = 0; i < n; ++i)
          rotated[static_cast<std::size_t>(i)] = blocks[static_cast<std::size_t>((i + n - 1) % n)];
        ring_reduce_scatter(b, rotated);
      } else if (a == Algorithm::linear) {  // everyone sends each block to its owner
        for (Index s = 1; s < n; ++s)
          b.exchange(me + s, blocks[static_cast<std::size_t>((me + s) % n)], me - s,
                     blocks[static_cast<std::size_t>(me)]);
      } else {
        unsupported(c.op, a);
      }
      break;
    }
    case Operation::scan:
    case Operation::exscan:
      if (a != Algorithm::chain) unsupported(c.op, a);
      if (me > 0) b.recv(me - 1, c.bytes);
      if (me < n - 1) b.send(me + 1, c.bytes);
      break;
    case Operation::gather:
    case Operation::gatherv:
      if (a == Algorithm::binomial && c.op == Operation::gather) {
        binomial_gather(b);
      } else if (a == Algorithm::linear) {
        if (me == root) {
          for (Index i = 1; i < n; ++i)
            b.recv(root + i, b.count(root + i));
        } else {
          b.send(root, c.bytes);
        }
      } else {
        unsupported(c.op, a);
      }
      break;
    case Operation::scatter:
    case Operation::scatterv:
      if (a == Algorithm::binomial && c.op == Operation::scatter) {
        binomial_scatter(b);
      } else if (a == Algorithm::linear) {
        if (me == root) {
          for (Index i = 1; i < n; ++i)
            b.send(root + i, b.count(root + i));
        } else {
          b.recv(root, c.bytes);
        }
      } else {
        unsupported(c.op, a);
      }
      break;
    case Operation::allgather:
    case Operation::allgatherv:
      if (a == Algorithm::ring) {
        ring_allgather(b, member_blocks(b));
      } else if (a == Algorithm::recursive_doubling && c.op == Operation::allgather) {
        if (highest_power_of_two_at_most(n) != n) {
          ring_allgather(b, member_blocks(b));  // MPICH too falls back for non-powers of two
        } else {
          std::uint64_t held = c.bytes;  // the blocks gathered so far double every round
          for (Index mask = 1; mask < n; mask <<= 1, held *= 2)
            b.exchange(me ^ mask, held, me ^ mask, held);
        }
      } else {
        unsupported(c.op, a);
      }
      break;
    case Operation::alltoall:
    case Operation::alltoallv:
    case Operation::alltoallw:
      if (a == Algorithm::pairwise || a == Algorithm::linear) {
        // (linear posts everything at once in MPI; as steps it is the same exchanges)
        for (Index s = 1; s < n; ++s)
          b.exchange(me + s, b.count(me + s), me - s, b.recv_count(me - s));
      } else {
        unsupported(c.op, a);
      }
      break;
  }
  return b.steps;
}

}  // namespace commgauge::collectives
