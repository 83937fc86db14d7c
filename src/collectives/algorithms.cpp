#include "collectives/algorithms.hpp"

#include <algorithm>
#include <stdexcept>

namespace commgauge::collectives {

namespace {

using Index = std::int64_t;  // member indices in arithmetic (modular, may go negative)

struct Builder;

/// A distribution phase inside a reduction (allgather, bcast, gather of results): what it
/// receives is not combined.
struct Distributing {
  Builder& b;
  bool was;
  explicit Distributing(Builder& builder);
  ~Distributing();
  Distributing(const Distributing&) = delete;
  Distributing& operator=(const Distributing&) = delete;
};

struct Builder {
  const Collective& c;
  std::vector<Step> steps;
  /// In a reduction phase: what a step receives is combined with the operation (reduce_bytes).
  bool reducing = false;
  Index n() const { return static_cast<Index>(c.members.size()); }
  Index me() const { return static_cast<Index>(c.me); }
  std::int32_t rank(Index i) const {
    return c.members[static_cast<std::size_t>(((i % n()) + n()) % n())];
  }
  void send(Index to, std::uint64_t bytes) { steps.push_back({rank(to), bytes, -1, 0}); }
  void recv(Index from, std::uint64_t bytes) {
    steps.push_back({-1, 0, rank(from), bytes, reducing ? bytes : 0});
  }
  void exchange(Index to, std::uint64_t send_bytes, Index from, std::uint64_t recv_bytes) {
    steps.push_back({rank(to), send_bytes, rank(from), recv_bytes, reducing ? recv_bytes : 0});
  }
  /// A receive of a result (not combined), whatever the phase.
  void recv_result(Index from, std::uint64_t bytes) { steps.push_back({-1, 0, rank(from), bytes}); }
  std::uint64_t count(Index i) const {
    return c.counts.empty() ? c.bytes : c.counts[static_cast<std::size_t>(((i % n()) + n()) % n())];
  }
  std::uint64_t recv_count(Index i) const {
    return c.recv_counts.empty() ? c.bytes
                                 : c.recv_counts[static_cast<std::size_t>(((i % n()) + n()) % n())];
  }
};

Distributing::Distributing(Builder& builder) : b(builder), was(builder.reducing) {
  b.reducing = false;
}
Distributing::~Distributing() {
  b.reducing = was;
}

/// Every receive of the steps from `first` on goes into a block this member sent earlier in the
/// call (an allreduce's allgather phase).
void receive_into_sent_from(Builder& b, std::size_t first) {
  for (std::size_t i = first; i < b.steps.size(); ++i)
    if (b.steps[i].recv_from >= 0 && b.steps[i].recv_bytes > 0) b.steps[i].recv_into_sent = true;
}

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
  const Distributing d(b);
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
  // coll/base's allreduce sends from a temporary copy of the vector (tmpsend = inplacebuf) and
  // receives into the vector (tmprecv = rbuf): the result so far starts in the temporary, and
  // every send is from the buffer that holds it.
  bool in_temporary = b.reducing;
  auto sent_from_temporary = [&] { b.steps.back().send_from_temporary = in_temporary; };
  Index newrank;
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      b.send(me + 1, bytes);
      sent_from_temporary();
      b.recv_result(me + 1, bytes);
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
    sent_from_temporary();
    // The lower rank combines into the buffer it received into and swaps the two, the higher
    // one into the buffer it has just sent from (ompi_coll_base_allreduce_intra_
    // recursivedoubling, "tmpsend = tmprecv (op) tmpsend").
    b.steps.back().reduce_into_sent = b.reducing && me > partner;
    if (b.reducing && me < partner) in_temporary = !in_temporary;
  }
  if (me < 2 * rem) {
    b.send(me - 1, bytes);
    sent_from_temporary();
  }
  // Then "Ensure that the final result is in rbuf" (tmpsend != rbuf): copied back from the
  // temporary after the last step (the folded pair's send included).
  if (in_temporary && !b.steps.empty()) b.steps.back().copy_back_bytes = bytes;
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
  const Distributing d(b);
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

// ---- linear ----

void linear_bcast(Builder& b, Index root, std::uint64_t bytes) {
  const Distributing d(b);
  if (b.me() == root) {
    for (Index i = 1; i < b.n(); ++i)
      b.send(root + i, bytes);
  } else {
    b.recv(root, bytes);
  }
}

void linear_reduce(Builder& b, Index root, std::uint64_t bytes) {
  if (b.me() == root) {
    for (Index i = 1; i < b.n(); ++i)
      b.recv(root + i, bytes);
  } else {
    b.send(root, bytes);
  }
}

// ---- Open MPI's trees (ompi/mca/coll/base/coll_base_topo.c), as member indices ----

struct Tree {
  Index parent = -1;            ///< -1 at the tree's root
  std::vector<Index> children;  ///< in the order Open MPI serves them
};

Index power(Index base, Index exponent) {
  Index p = 1;
  for (Index i = 0; i < exponent; ++i)
    p *= base;
  return p;
}

/// ompi_coll_base_topo_build_tree: level-order tree; the children of shifted rank s on level l
/// are s + k * fanout^l (k = 1..fanout).
Tree level_tree(Index n, Index root, Index me, Index fanout) {
  Tree t;
  const Index s = (me - root + n) % n;
  Index level = 0;
  for (Index num = 0; num <= s; ++level)
    num += power(fanout, level);
  --level;
  const Index delta = power(fanout, level);
  for (Index k = 1; k <= fanout && s + delta * k < n; ++k)
    t.children.push_back((s + delta * k + root) % n);
  if (s != 0) {
    const Index above = fanout == 1 ? level : (power(fanout, level) - 1) / (fanout - 1);
    Index p = s;
    if (p < fanout) {
      p = 0;
    } else {
      while (p >= above)
        p -= delta / fanout;
    }
    t.parent = (p + root) % n;
  }
  return t;
}

/// ompi_coll_base_topo_build_chain: `fanout` chains hang from the root (0 means 1: a pipeline).
Tree chain_tree(Index n, Index root, Index me, Index fanout) {
  Tree t;
  fanout = std::clamp<Index>(fanout, 1, 32);  // MAXTREEFANOUT
  fanout = std::min(fanout, n - 1);
  const Index s = (me - root + n) % n;
  auto real = [&](Index v) { return (v + root) % n; };
  if (n == 1) return t;
  if (fanout == 1) {
    if (s > 0) t.parent = real(s - 1);
    if (s + 1 < n) t.children.push_back(real(s + 1));
    return t;
  }
  Index longest = (n - 1) / fanout, mark = fanout + 1;  // chains before `mark` are longest
  if ((n - 1) % fanout != 0) {
    ++longest;
    mark = (n - 1) % fanout;
  }
  if (s == 0) {
    for (Index i = 0, head = 1; i < fanout; ++i) {
      if (i > 0) head += longest - (i > mark ? 1 : 0);
      t.children.push_back(real(head));
    }
    return t;
  }
  Index head, length;
  if (s - 1 < mark * longest) {
    head = 1 + (s - 1) / longest * longest;
    length = longest;
  } else {
    const Index column = mark + (s - 1 - mark * longest) / (longest - 1);
    head = mark * longest + 1 + (column - mark) * (longest - 1);
    length = longest - 1;
  }
  t.parent = real(s == head ? 0 : s - 1);
  if (s != head + length - 1 && s + 1 < n) t.children.push_back(real(s + 1));
  return t;
}

/// ompi_coll_base_topo_build_bmtree (Open MPI's bcast binomial): the parent clears the highest
/// set bit of the shifted rank; the children set each higher bit, nearest first.
Tree high_binomial_tree(Index n, Index root, Index me) {
  Tree t;
  const Index v = (me - root + n) % n;
  Index mask = 1;
  while (mask <= v)
    mask <<= 1;
  if (v != 0) t.parent = ((v ^ (mask >> 1)) + root) % n;
  for (; mask < n && (v ^ mask) < n; mask <<= 1)
    t.children.push_back(((v ^ mask) + root) % n);
  return t;
}

/// ompi_coll_base_topo_build_in_order_bmtree (= MPICH's binomial): the parent clears the lowest
/// set bit; children in ascending distance, or largest subtree first.
Tree low_binomial_tree(Index n, Index root, Index me, bool largest_first) {
  Tree t;
  const Index v = (me - root + n) % n;
  for (Index mask = 1; mask < n; mask <<= 1) {
    const Index remote = v ^ mask;
    if (remote < v) {
      t.parent = (remote + root) % n;
      break;
    }
    if (remote < n) t.children.push_back((remote + root) % n);
  }
  if (largest_first) std::reverse(t.children.begin(), t.children.end());
  return t;
}

/// ompi_coll_base_topo_build_kmtree: k-nomial tree, farthest subtrees first.
Tree knomial_tree(Index n, Index root, Index me, Index radix) {
  Tree t;
  const Index v = (me - root + n) % n;
  Index mask = 1;
  for (; mask < n; mask *= radix) {
    if (v % (radix * mask) != 0) {
      t.parent = (v / (radix * mask) * (radix * mask) + root) % n;
      break;
    }
  }
  for (mask /= radix; mask > 0; mask /= radix) {
    for (Index r = 1; r < radix; ++r)
      if (v + mask * r < n) t.children.push_back((v + mask * r + root) % n);
  }
  return t;
}

/// ompi_coll_base_topo_build_in_order_bintree: rooted at member n - 1, left subtree first, so
/// that a reduction along it keeps the member order.
Tree in_order_binary_tree(Index n, Index me) {
  Tree t;
  Index size = n, mine = me, parent = n - 1, delta = 0;
  for (;;) {
    const Index right_size = size >> 1;
    Index left = -1, right = -1;
    if (size - 1 > 0) {
      left = parent - 1;
      if (left > 0) right = right_size - 1;
    }
    if (mine == parent) {
      if (left >= 0) t.children.push_back(left + delta);
      if (right >= 0) t.children.push_back(right + delta);
      return t;
    }
    if (mine > right) {  // left subtree
      if (mine == left) t.parent = parent + delta;
      size = size - right_size - 1;
      delta += right_size;
      mine -= right_size;
      parent = size - 1;
    } else {  // right subtree
      if (mine == right) t.parent = parent + delta;
      size = right_size;
      parent = right;
    }
  }
}

/// `total` bytes in segments of `segment` (0 or at least `total`: one segment).
std::vector<std::uint64_t> segments(std::uint64_t total, std::uint64_t segment) {
  if (segment == 0 || segment >= total) return {total};
  std::vector<std::uint64_t> v;
  for (std::uint64_t left = total; left > 0; left -= std::min(segment, left))
    v.push_back(std::min(segment, left));
  return v;
}

/// ompi_coll_base_bcast_intra_generic: segment by segment down the tree; an inner node receives
/// segment s while it forwards segment s - 1.
void tree_bcast(Builder& b, const Tree& t, const std::vector<std::uint64_t>& segs) {
  const Distributing d(b);
  const std::size_t count = segs.size();
  if (t.parent < 0) {
    for (std::size_t s = 0; s < count; ++s)
      for (Index child : t.children)
        b.send(child, segs[s]);
  } else if (t.children.empty()) {
    for (std::size_t s = 0; s < count; ++s)
      b.recv(t.parent, segs[s]);
  } else {
    b.recv(t.parent, segs[0]);
    for (std::size_t s = 1; s <= count; ++s) {
      if (s < count) {
        b.exchange(t.children[0], segs[s - 1], t.parent, segs[s]);
      } else {
        b.send(t.children[0], segs[s - 1]);
      }
      for (std::size_t k = 1; k < t.children.size(); ++k)
        b.send(t.children[k], segs[s - 1]);
    }
  }
}

/// ompi_coll_base_reduce_generic: segment by segment up the tree, children in order; an inner
/// node sends segment s - 1 up while it receives segment s from its first child.
void tree_reduce(Builder& b, const Tree& t, const std::vector<std::uint64_t>& segs) {
  const std::size_t count = segs.size();
  if (t.children.empty()) {
    for (std::size_t s = 0; s < count; ++s)
      b.send(t.parent, segs[s]);
    return;
  }
  for (std::size_t s = 0; s < count; ++s) {
    for (std::size_t k = 0; k < t.children.size(); ++k) {
      if (k == 0 && s > 0 && t.parent >= 0) {
        b.exchange(t.parent, segs[s - 1], t.children[0], segs[s]);
      } else {
        b.recv(t.children[k], segs[s]);
      }
    }
  }
  if (t.parent >= 0) b.send(t.parent, segs[count - 1]);
}

/// ompi_coll_base_bcast_intra_split_bintree: the root sends the first half down the left
/// subtree (odd shifted ranks) and the second down the right one; then each node swaps halves
/// with its twin in the other subtree (with an even size, the last node gets its half from the
/// root).
void split_binary_bcast(Builder& b) {
  const Index n = b.n(), me = b.me(), root = static_cast<Index>(b.c.root);
  const std::uint64_t segment = b.c.segment_bytes;
  const std::uint64_t half[2] = {b.c.bytes - b.c.bytes / 2, b.c.bytes / 2};
  if (half[0] == 0 || half[1] == 0 || segment > half[0] || segment > half[1]) {
    tree_bcast(b, chain_tree(n, root, me, 1), segments(b.c.bytes, segment));  // Open MPI's fallback
    return;
  }
  const Tree t = level_tree(n, root, me, 2);
  const Index v = (me - root + n) % n;
  const int side = static_cast<int>((v + 1) % 2);  // 0: left (odd v), 1: right (even v, root)
  const std::vector<std::uint64_t> segs[2] = {segments(half[0], segment),
                                              segments(half[1], segment)};
  if (v == 0) {
    for (std::size_t s = 0; s < segs[0].size(); ++s)
      for (std::size_t k = 0; k < t.children.size() && k < 2; ++k)
        if (s < segs[k].size()) b.send(t.children[k], segs[k][s]);
  } else {
    tree_bcast(b, t, segs[side]);
  }
  const Index twin = side == 0 ? v + 1 : v - 1;
  if (n % 2 != 0) {
    if (v != 0) b.exchange(twin + root, half[side], twin + root, half[1 - side]);
  } else if (v == 0) {
    b.send(root + n - 1, half[1]);
  } else if (v == n - 1) {
    b.recv(root, half[1]);
  } else {
    b.exchange(twin + root, half[side], twin + root, half[1 - side]);
  }
}

/// Bytes of chunks [first, first + count) of a `total`-byte message cut in chunks of `chunk`.
std::uint64_t chunk_range(std::uint64_t total, std::uint64_t chunk, Index first, Index count) {
  const std::uint64_t lo = std::min(total, chunk * static_cast<std::uint64_t>(first));
  const std::uint64_t hi = std::min(total, chunk * static_cast<std::uint64_t>(first + count));
  return hi - lo;
}

/// ompi_coll_base_bcast_intra_scatter_allgather(_ring): binomial scatter of ceil(m / n)-byte
/// chunks (MPICH tree), then a recursive-doubling (with Open MPI's fix-up sends for non-powers
/// of two) or ring allgather. Below n bytes Open MPI falls back to linear.
void scatter_allgather_bcast(Builder& b, bool ring) {
  const Index n = b.n(), root = static_cast<Index>(b.c.root);
  const Index v = (b.me() - root + n) % n;
  const std::uint64_t total = b.c.bytes;
  if (total < static_cast<std::uint64_t>(n)) {
    linear_bcast(b, root, total);
    return;
  }
  const std::uint64_t chunk =
      (total + static_cast<std::uint64_t>(n) - 1) / static_cast<std::uint64_t>(n);
  auto range = [&](Index first, Index count) { return chunk_range(total, chunk, first, count); };
  Index mask = 1;
  for (; mask < n; mask <<= 1) {
    if (v & mask) {
      if (total > chunk * static_cast<std::uint64_t>(v))
        b.recv(v - mask + root, range(v, std::min(mask, n - v)));
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const Index child = v + mask;
    if (child < n && range(child, std::min(mask, n - child)) > 0)
      b.send(child + root, range(child, std::min(mask, n - child)));
  }
  if (ring) {
    for (Index s = 0; s < n - 1; ++s)
      b.exchange(v + 1 + root, range(v - s < 0 ? v - s + n : v - s, 1), v - 1 + root,
                 range(v - s - 1 < 0 ? v - s - 1 + n : v - s - 1, 1));
    return;
  }
  for (mask = 1; mask < n; mask <<= 1) {
    const Index remote = v ^ mask;
    const Index mine = v & ~(mask - 1), theirs = remote & ~(mask - 1);
    const std::uint64_t got = range(theirs, mask);
    if (remote < n) b.exchange(remote + root, range(mine, mask), remote + root, got);
    if (theirs + mask > n) {  // pass what the subtree got to those without a partner
      const Index with_data = n - mine - mask;
      for (Index half = mask >> 1; half > 0; half >>= 1) {
        const Index peer = v ^ half, base = v & ~((half << 1) - 1);
        if (peer > v && v < base + with_data && peer >= base + with_data) {
          b.send(peer + root, got);
        } else if (peer < v && peer < base + with_data && v >= base + with_data) {
          b.recv(peer + root, got);
        }
      }
    }
  }
}

/// Halving reduce-scatter of ompi_coll_base_allreduce_intra_redscat_allgather and
/// ompi_coll_base_reduce_intra_redscat_gather, after the first 2r members pair up (the odd one
/// keeps out). Returns the window sizes kept (`kept`) and given (`given`) at each step.
struct Halving {
  Index pof2 = 1, rem = 0, vrank = -1;
  std::vector<std::uint64_t> kept, given;
  Index real(Index vr) const { return vr < rem ? vr * 2 : vr + rem; }
};

Halving rabenseifner_reduce_scatter(Builder& b, std::uint64_t total) {
  Halving h;
  const Index n = b.n(), me = b.me();
  h.pof2 = highest_power_of_two_at_most(n);
  h.rem = n - h.pof2;
  if (me < 2 * h.rem) {
    const std::uint64_t lower = total / 2, upper = total - lower;
    if (me % 2 != 0) {
      b.exchange(me - 1, lower, me - 1, upper);
      b.send(me - 1, upper);
    } else {
      b.exchange(me + 1, upper, me + 1, lower);
      b.recv_result(me + 1, upper);  // the pair's reduced upper half
      h.vrank = me / 2;
    }
  } else {
    h.vrank = me - h.rem;
  }
  if (h.vrank < 0) return h;
  std::uint64_t window = total;
  for (Index mask = 1; mask < h.pof2; mask <<= 1) {
    const Index dest = h.real(h.vrank ^ mask);
    const std::uint64_t keep = me < dest ? window / 2 : window - window / 2;
    h.kept.push_back(keep);
    h.given.push_back(window - keep);
    b.exchange(dest, window - keep, dest, keep);
    window = keep;
  }
  return h;
}

void rabenseifner_allreduce(Builder& b) {
  const Index n = b.n(), me = b.me();
  const std::uint64_t total = b.c.bytes;
  if (total < static_cast<std::uint64_t>(highest_power_of_two_at_most(n))) {
    linear_reduce(b, 0, total);  // Open MPI's fallback: basic linear allreduce
    linear_bcast(b, 0, total);
    return;
  }
  const Halving h = rabenseifner_reduce_scatter(b, total);
  const Distributing d(b);  // the allgather of the reduced parts, into the parts it gave away
  const std::size_t allgather = b.steps.size();
  if (h.vrank >= 0) {
    std::size_t step = h.kept.size();
    for (Index mask = h.pof2 >> 1; mask > 0; mask >>= 1) {
      --step;
      const Index dest = h.real(h.vrank ^ mask);
      b.exchange(dest, h.kept[step], dest, h.given[step]);
    }
  }
  if (me < 2 * h.rem) {
    if (me % 2 != 0) {
      b.recv(me - 1, total);
    } else {
      b.send(me + 1, total);
    }
  }
  receive_into_sent_from(b, allgather);
}

void rabenseifner_reduce(Builder& b) {
  const Index n = b.n(), me = b.me(), root = static_cast<Index>(b.c.root);
  const std::uint64_t total = b.c.bytes;
  const Index pof2 = highest_power_of_two_at_most(n);
  if (pof2 < 2 || total < static_cast<std::uint64_t>(pof2)) {
    linear_reduce(b, root, total);  // Open MPI's fallback
    return;
  }
  Halving h = rabenseifner_reduce_scatter(b, total);
  const Distributing d(b);  // the binomial gather of the reduced parts
  Index vroot = root < 2 * h.rem ? root / 2 : root - h.rem;
  const bool root_left_out = root < 2 * h.rem && root % 2 != 0;
  if (root_left_out) {  // the root takes vrank 0's place; vrank 0 hands it its part
    vroot = 0;
    if (me == root) {
      std::uint64_t window = total;
      for (Index mask = 1; mask < pof2; mask <<= 1) {
        h.kept.push_back(window / 2);
        h.given.push_back(window - window / 2);
        window /= 2;
      }
      b.recv(0, h.kept.back());
      h.vrank = 0;
    } else if (h.vrank == 0) {
      b.send(root, h.kept.back());
      h.vrank = -1;
    }
  }
  if (h.vrank < 0) return;
  std::size_t step = h.kept.size();
  for (Index mask = pof2 >> 1; mask > 0; mask >>= 1) {
    --step;
    const Index vdest = h.vrank ^ mask;
    const Index dest = vdest == 0 && root_left_out ? root : h.real(vdest);
    if ((vdest >> step) == (vroot >> step)) {
      b.send(dest, h.kept[step]);
      break;
    }
    b.recv(dest, h.given[step]);
  }
}

/// ompi_coll_base_allreduce_intra_ring_segmented: the ring reduce-scatter repeated per phase
/// on a slice of every block, then one ring allgather of the whole blocks. Below n segments
/// Open MPI runs the plain ring.
void segmented_ring_allreduce(Builder& b, std::uint64_t segment) {
  const Index n = b.n();
  const std::uint64_t total = b.c.bytes, un = static_cast<std::uint64_t>(n);
  const std::uint64_t seg = segment == 0 || segment >= total ? total : segment;
  const auto blocks = equal_chunks(total, n);
  if (total < un * seg) {
    ring_reduce_scatter(b, blocks);
  } else {
    std::uint64_t phases = total / (un * seg);
    const std::uint64_t rest = total % (un * seg);
    if (rest >= un && rest > un * seg / 2) ++phases;
    const Index np = static_cast<Index>(phases);
    for (Index phase = 0; phase < np; ++phase) {
      std::vector<std::uint64_t> slice(blocks.size());
      for (std::size_t i = 0; i < blocks.size(); ++i)
        slice[i] = chunk(blocks[i], np, phase);
      ring_reduce_scatter(b, slice);
    }
  }
  std::vector<std::uint64_t> shifted(blocks.size());
  for (Index i = 0; i < n; ++i)
    shifted[static_cast<std::size_t>(i)] = blocks[static_cast<std::size_t>((i + 1) % n)];
  const std::size_t allgather = b.steps.size();
  ring_allgather(b, shifted);
  receive_into_sent_from(b, allgather);  // each block into the one it sent in the first phase
}

/// ompi_coll_base_allgather(v)_intra_bruck: at distance d, send the blocks gathered so far to
/// me - d and receive as many from me + d.
void bruck_allgather(Builder& b) {
  const Index n = b.n(), me = b.me();
  for (Index d = 1; d < n; d <<= 1) {
    const Index blocks = d <= n / 2 ? d : n - d;
    std::uint64_t out = 0, in = 0;
    for (Index i = 0; i < blocks; ++i) {
      out += b.count(me + i);
      in += b.count(me + d + i);
    }
    b.exchange(me - d, out, me + d, in);
  }
}

/// ompi_coll_base_allgather(v)_intra_neighborexchange: even members first swap with the right
/// neighbour, odd ones with the left; then n/2 - 1 swaps of two blocks, alternating sides.
void neighbor_exchange_allgather(Builder& b) {
  const Index n = b.n(), me = b.me();
  if (n % 2 != 0) {
    ring_allgather(b, member_blocks(b));  // Open MPI's fallback
    return;
  }
  const bool even = me % 2 == 0;
  const Index neighbor[2] = {even ? me + 1 : me - 1, even ? me - 1 : me + 1};
  const Index offset[2] = {even ? 2 : -2, even ? -2 : 2};
  Index from[2] = {even ? me : me - 1, even ? me : me - 1};  // first block of the pair
  auto pair = [&](Index first) { return b.count(first) + b.count(first + 1); };
  b.exchange(neighbor[0], b.count(me), neighbor[0], b.count(neighbor[0]));
  Index send_from = even ? me : me - 1;
  for (Index i = 1; i < n / 2; ++i) {
    const int p = static_cast<int>(i % 2);
    from[p] = (from[p] + offset[p] + n) % n;
    b.exchange(neighbor[p], pair(send_from), neighbor[p], pair(from[p]));
    send_from = from[p];
  }
}

/// ompi_coll_base_alltoall_intra_bruck (modified Bruck): at distance d, the blocks whose index
/// has bit d go to me + d.
void bruck_alltoall(Builder& b) {
  const Index n = b.n(), me = b.me();
  for (Index d = 1; d < n; d <<= 1) {
    std::uint64_t blocks = 0;
    for (Index i = 1; i < n; ++i)
      if (i & d) ++blocks;
    b.exchange(me + d, blocks * b.c.bytes, me - d, blocks * b.c.bytes);
  }
}

/// ompi_coll_base_gather_intra_linear_sync: the root invites each member in turn with a
/// zero-byte message, takes its first segment, and the rest at the end.
void linear_sync_gather(Builder& b) {
  const Index n = b.n(), me = b.me(), root = static_cast<Index>(b.c.root);
  auto first = [&](std::uint64_t block) {
    const std::uint64_t seg = b.c.segment_bytes;
    return seg == 0 || seg >= block ? block : seg;
  };
  if (me != root) {
    b.recv(root, 0);
    b.send(root, first(b.c.bytes));
    b.send(root, b.c.bytes - first(b.c.bytes));
    return;
  }
  for (Index i = 0; i < n; ++i)
    if (i != root) b.exchange(i, 0, i, first(b.count(i)));
  for (Index i = 0; i < n; ++i)
    if (i != root) b.recv(i, b.count(i) - first(b.count(i)));
}

/// A step that skips a side with nothing to move (and is dropped when both are empty).
void exchange_if(Builder& b, Index peer, std::uint64_t out, std::uint64_t in) {
  if (out == 0 && in == 0) return;
  b.steps.push_back(
      {out > 0 ? b.rank(peer) : -1, out, in > 0 ? b.rank(peer) : -1, in, b.reducing ? in : 0});
}

/// ompi_coll_base_reduce_scatter(_block)_intra(_basic)_recursivehalving: the first 2r members
/// pair up (the even one hands everything to the odd one), halving exchanges at distance
/// p'/2 .. 1 over the blocks, then the odd members return the even ones' blocks.
void recursive_halving_reduce_scatter(Builder& b, const std::vector<std::uint64_t>& blocks) {
  const Index n = b.n(), me = b.me();
  const Index pof2 = highest_power_of_two_at_most(n), rem = n - pof2;
  std::uint64_t total = 0;
  for (auto x : blocks)
    total += x;
  auto block = [&](Index i) { return blocks[static_cast<std::size_t>(i)]; };
  Index vrank = -1;
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      b.send(me + 1, total);
    } else {
      b.recv(me - 1, total);
      vrank = me / 2;
    }
  } else {
    vrank = me - rem;
  }
  if (vrank >= 0) {
    std::vector<std::uint64_t> merged(static_cast<std::size_t>(pof2));
    for (Index i = 0; i < pof2; ++i)
      merged[static_cast<std::size_t>(i)] =
          i < rem ? block(2 * i) + block(2 * i + 1) : block(i + rem);
    auto sum = [&](Index lo, Index hi) {  // merged blocks [lo, hi)
      std::uint64_t s = 0;
      for (Index i = lo; i < hi; ++i)
        s += merged[static_cast<std::size_t>(i)];
      return s;
    };
    Index send_index = 0, recv_index = 0, last = pof2;
    for (Index mask = pof2 >> 1; mask > 0; mask >>= 1) {
      const Index vpeer = vrank ^ mask;
      const Index peer = vpeer < rem ? vpeer * 2 + 1 : vpeer + rem;
      std::uint64_t out, in;
      if (vrank < vpeer) {
        send_index = recv_index + mask;
        out = sum(send_index, last);
        in = sum(recv_index, send_index);
      } else {
        recv_index = send_index + mask;
        out = sum(send_index, recv_index);
        in = sum(recv_index, last);
      }
      exchange_if(b, peer, out, in);
      send_index = recv_index;
      last = recv_index + mask;
    }
  }
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      if (block(me) > 0) b.recv_result(me + 1, block(me));
    } else if (block(me - 1) > 0) {
      b.send(me - 1, block(me - 1));
    }
  }
}

Index mirror(Index x, Index bits) {
  Index y = 0;
  for (Index i = 0; i < bits; ++i)
    if (x & (Index{1} << i)) y |= Index{1} << (bits - 1 - i);
  return y;
}

/// ompi_coll_base_reduce_scatter(_block)_intra_butterfly (Traff): the first 2r members pair up,
/// butterfly exchanges at distance 1 .. p'/2 over the blocks, then each result goes to the
/// member at the bit-reversed position. reduce_scatter_block on a power of two permutes the
/// blocks beforehand instead (..._butterfly_pof2).
void butterfly_reduce_scatter(Builder& b, const std::vector<std::uint64_t>& blocks,
                              bool equal_blocks) {
  const Index n = b.n(), me = b.me();
  const Index pof2 = highest_power_of_two_at_most(n), rem = n - pof2;
  Index bits = 0;
  while ((Index{1} << bits) < pof2)
    ++bits;
  std::uint64_t total = 0;
  for (auto x : blocks)
    total += x;
  auto block = [&](Index i) { return blocks[static_cast<std::size_t>(i)]; };
  if (equal_blocks && pof2 == n) {
    std::uint64_t half = total;
    for (Index mask = 1; mask < n; mask <<= 1) {
      half /= 2;
      b.exchange(me ^ mask, half, me ^ mask, half);
    }
    return;
  }
  auto real = [&](Index vr) { return vr < rem ? vr * 2 + 1 : vr + rem; };
  auto sum = [&](Index lo, Index hi) {  // blocks of the p' positions lo..hi, both included
    const Index from = lo < rem ? lo * 2 : lo + rem, to = hi < rem ? hi * 2 + 1 : hi + rem;
    std::uint64_t s = 0;
    for (Index i = from; i <= to; ++i)
      s += block(i);
    return s;
  };
  Index vrank = -1;
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      b.send(me + 1, total);
      b.recv_result(real(mirror((me + 1) / 2, bits)), block(me));
      return;
    }
    b.recv(me - 1, total);
    vrank = me / 2;
  } else {
    vrank = me - rem;
  }
  Index width = pof2, send_index = 0, recv_index = 0;
  for (Index mask = 1; mask < pof2; mask <<= 1) {
    const Index peer = real(vrank ^ mask);
    width /= 2;
    if ((vrank & mask) == 0) {
      send_index += width;
    } else {
      recv_index += width;
    }
    b.exchange(peer, sum(send_index, send_index + width - 1), peer,
               sum(recv_index, recv_index + width - 1));
    send_index = recv_index;
  }
  const Distributing d(b);  // each result to the member at the bit-reversed position
  const Index vpeer = mirror(vrank, bits), peer = real(vpeer);
  Index index = send_index < rem ? 2 * send_index : rem + send_index;
  if (vpeer < rem) b.send(peer - 1, block(index++));
  if (vpeer != vrank) b.exchange(peer, block(index), peer, block(me));
}

/// ompi_coll_base_reduce_scatter_block_intra_recursivedoubling: exchanges at distance 1, 2, 4,
/// ... of everything outside the two subtrees' own blocks; members without a partner get it
/// from inside their subtree (non-powers of two).
void recursive_doubling_reduce_scatter_block(Builder& b) {
  const Index n = b.n(), me = b.me();
  const std::uint64_t block = b.c.bytes;
  auto outside = [&](Index tree, Index mask) {
    return block * static_cast<std::uint64_t>(tree + (n >= tree + mask ? n - tree - mask : 0));
  };
  for (Index mask = 1; mask < n; mask <<= 1) {
    const Index remote = me ^ mask;
    const Index mine = me & ~(mask - 1), theirs = remote & ~(mask - 1);
    const std::uint64_t in = outside(theirs, mask);
    if (remote < n) b.exchange(remote, outside(mine, mask), remote, in);
    if (theirs + mask > n) {
      const Index with_data = n - mine - mask;
      for (Index half = mask >> 1; half > 0; half >>= 1) {
        const Index peer = me ^ half, base = me & ~((half << 1) - 1);
        if (peer > me && me < base + with_data && peer >= base + with_data) {
          b.send(peer, in);
        } else if (peer < me && peer < base + with_data && me >= base + with_data) {
          b.recv(peer, in);
        }
      }
    }
  }
}

[[noreturn]] void unsupported(Operation op, Algorithm a) {
  throw std::invalid_argument(std::string("no ") + std::string(to_string(a)) + " algorithm for " +
                              std::string(to_string(op)));
}

}  // namespace

bool rooted(Operation op) {
  switch (op) {
    case Operation::bcast:
    case Operation::reduce:
    case Operation::gather:
    case Operation::gatherv:
    case Operation::scatter:
    case Operation::scatterv:
      return true;
    default:
      return false;
  }
}

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
    case Algorithm::pipeline:
      return "pipeline";
    case Algorithm::binary_tree:
      return "binary_tree";
    case Algorithm::split_binary_tree:
      return "split_binary_tree";
    case Algorithm::ompi_binomial:
      return "ompi_binomial";
    case Algorithm::knomial:
      return "knomial";
    case Algorithm::scatter_allgather:
      return "scatter_allgather";
    case Algorithm::scatter_allgather_ring:
      return "scatter_allgather_ring";
    case Algorithm::in_order_binary:
      return "in_order_binary";
    case Algorithm::rabenseifner:
      return "rabenseifner";
    case Algorithm::segmented_ring:
      return "segmented_ring";
    case Algorithm::bruck:
      return "bruck";
    case Algorithm::neighbor_exchange:
      return "neighbor_exchange";
    case Algorithm::linear_sync:
      return "linear_sync";
    case Algorithm::recursive_halving:
      return "recursive_halving";
    case Algorithm::butterfly:
      return "butterfly";
  }
  return "?";
}

std::optional<Operation> parse_operation(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Operation::alltoallw); ++i)
    if (to_string(static_cast<Operation>(i)) == name) return static_cast<Operation>(i);
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Algorithm::butterfly); ++i)
    if (to_string(static_cast<Algorithm>(i)) == name) return static_cast<Algorithm>(i);
  return std::nullopt;
}

std::vector<Algorithm> algorithms_for(Operation op) {
  using A = Algorithm;
  switch (op) {
    case Operation::barrier:
      return {A::dissemination, A::recursive_doubling, A::linear, A::binomial};
    case Operation::bcast:
      return {A::binomial,
              A::linear,
              A::chain,
              A::pipeline,
              A::binary_tree,
              A::split_binary_tree,
              A::ompi_binomial,
              A::knomial,
              A::scatter_allgather,
              A::scatter_allgather_ring};
    case Operation::reduce:
      return {A::binomial,    A::linear,          A::chain,       A::pipeline,
              A::binary_tree, A::in_order_binary, A::rabenseifner};
    case Operation::allreduce:
      return {A::recursive_doubling, A::ring,        A::binomial, A::linear,
              A::segmented_ring,     A::rabenseifner};
    case Operation::reduce_scatter:
      return {A::ring, A::linear, A::recursive_halving, A::butterfly};
    case Operation::reduce_scatter_block:
      return {A::ring, A::linear, A::recursive_halving, A::butterfly, A::recursive_doubling};
    case Operation::scan:
    case Operation::exscan:
      return {A::chain};
    case Operation::gather:
      return {A::binomial, A::linear, A::linear_sync};
    case Operation::scatter:
      return {A::binomial, A::linear};
    case Operation::gatherv:
    case Operation::scatterv:
      return {A::linear};
    case Operation::allgather:
      return {A::ring, A::recursive_doubling, A::bruck, A::neighbor_exchange};
    case Operation::allgatherv:
      return {A::ring, A::bruck, A::neighbor_exchange};
    case Operation::alltoall:
      return {A::pairwise, A::linear, A::bruck};
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
  if (c.fanout < 0) throw std::invalid_argument("collective: negative fanout");
  Builder b{c, {}};
  if (size == 1) return b.steps;
  const Index n = b.n();
  const Index me = b.me();
  const Index root = static_cast<Index>(c.root);
  b.reducing = c.op == Operation::reduce || c.op == Operation::allreduce ||
               c.op == Operation::reduce_scatter || c.op == Operation::reduce_scatter_block ||
               c.op == Operation::scan || c.op == Operation::exscan;
  // The caller's own data copied into the result first (coll/base, not MPI_IN_PLACE).
  std::uint64_t copied = 0;
  switch (c.op) {
    case Operation::allreduce:
      if (a == Algorithm::recursive_doubling || a == Algorithm::ring ||
          a == Algorithm::segmented_ring || a == Algorithm::rabenseifner)
        copied = c.bytes;
      break;
    case Operation::allgather:
    case Operation::allgatherv:
      copied = b.count(me);
      break;
    case Operation::alltoall:
    case Operation::alltoallv:
    case Operation::alltoallw:
      copied = b.count(me);
      break;
    default:
      break;
  }
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
      } else if (a == Algorithm::binomial) {  // Open MPI's "tree": fan-in to 0, fan-out from 0
        Collective at_zero = c;
        at_zero.root = 0;
        Builder up{at_zero, {}};
        binomial_up(up, 0);
        binomial_down(up, 0);
        b.steps = up.steps;
      } else {
        unsupported(c.op, a);
      }
      break;
    case Operation::bcast: {
      const auto segs = segments(c.bytes, c.segment_bytes);
      if (a == Algorithm::binomial) {
        if (segs.size() == 1) {
          binomial_down(b, c.bytes);
        } else {
          tree_bcast(b, low_binomial_tree(n, root, me, true), segs);
        }
      } else if (a == Algorithm::linear) {
        linear_bcast(b, root, c.bytes);
      } else if (a == Algorithm::chain) {
        tree_bcast(b, chain_tree(n, root, me, c.fanout), segs);
      } else if (a == Algorithm::pipeline) {
        tree_bcast(b, chain_tree(n, root, me, 1), segs);
      } else if (a == Algorithm::binary_tree) {
        tree_bcast(b, level_tree(n, root, me, 2), segs);
      } else if (a == Algorithm::split_binary_tree) {
        split_binary_bcast(b);
      } else if (a == Algorithm::ompi_binomial) {
        tree_bcast(b, high_binomial_tree(n, root, me), segs);
      } else if (a == Algorithm::knomial) {
        tree_bcast(b, knomial_tree(n, root, me, c.fanout >= 2 ? c.fanout : 4), segs);
      } else if (a == Algorithm::scatter_allgather || a == Algorithm::scatter_allgather_ring) {
        scatter_allgather_bcast(b, a == Algorithm::scatter_allgather_ring);
      } else {
        unsupported(c.op, a);
      }
      break;
    }
    case Operation::reduce: {
      const auto segs = segments(c.bytes, c.segment_bytes);
      if (a == Algorithm::binomial) {
        if (segs.size() == 1) {
          binomial_up(b, c.bytes);
        } else {
          tree_reduce(b, low_binomial_tree(n, root, me, false), segs);
        }
      } else if (a == Algorithm::linear) {
        linear_reduce(b, root, c.bytes);
      } else if (a == Algorithm::chain) {
        tree_reduce(b, chain_tree(n, root, me, c.fanout), segs);
      } else if (a == Algorithm::pipeline) {
        tree_reduce(b, chain_tree(n, root, me, 1), segs);
      } else if (a == Algorithm::binary_tree) {
        tree_reduce(b, level_tree(n, root, me, 2), segs);
      } else if (a == Algorithm::in_order_binary) {
        tree_reduce(b, in_order_binary_tree(n, me), segs);
        if (root != n - 1) {  // the tree's root (n - 1) hands the result over
          if (me == n - 1) b.send(root, c.bytes);
          if (me == root) b.recv_result(n - 1, c.bytes);
        }
      } else if (a == Algorithm::rabenseifner) {
        rabenseifner_reduce(b);
      } else {
        unsupported(c.op, a);
      }
      break;
    }
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
        const std::size_t allgather = b.steps.size();
        ring_allgather(b, shifted);
        receive_into_sent_from(b, allgather);  // each block into the one it sent before
      } else if (a == Algorithm::binomial) {   // reduce to the first member, then bcast
        Collective to_root = c;
        to_root.root = 0;
        Builder up{to_root, {}};
        up.reducing = true;
        binomial_up(up, c.bytes);
        Builder down{to_root, {}};
        binomial_down(down, c.bytes);
        b.steps = up.steps;
        b.steps.insert(b.steps.end(), down.steps.begin(), down.steps.end());
      } else if (a == Algorithm::linear) {  // linear reduce to the first member, linear bcast
        linear_reduce(b, 0, c.bytes);
        linear_bcast(b, 0, c.bytes);
      } else if (a == Algorithm::segmented_ring) {
        segmented_ring_allreduce(b, c.segment_bytes);
      } else if (a == Algorithm::rabenseifner) {
        rabenseifner_allreduce(b);
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
      } else if (a == Algorithm::recursive_halving) {
        recursive_halving_reduce_scatter(b, blocks);
      } else if (a == Algorithm::butterfly) {
        butterfly_reduce_scatter(b, blocks, c.op == Operation::reduce_scatter_block);
      } else if (a == Algorithm::recursive_doubling && c.op == Operation::reduce_scatter_block) {
        recursive_doubling_reduce_scatter_block(b);
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
      } else if (a == Algorithm::linear_sync && c.op == Operation::gather) {
        linear_sync_gather(b);
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
      } else if (a == Algorithm::bruck) {
        bruck_allgather(b);
      } else if (a == Algorithm::neighbor_exchange) {
        neighbor_exchange_allgather(b);
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
      } else if (a == Algorithm::bruck && c.op == Operation::alltoall) {
        bruck_alltoall(b);
      } else {
        unsupported(c.op, a);
      }
      break;
  }
  if (!b.steps.empty()) b.steps.front().copy_bytes = copied;
  const bool alltoall_family =
      c.op == Operation::alltoall || c.op == Operation::alltoallv || c.op == Operation::alltoallw;
  mark_written_sends(b.steps,
                     alltoall_family && (a == Algorithm::pairwise || a == Algorithm::linear));
  return b.steps;
}

void mark_written_sends(std::vector<Step>& steps, bool from_callers_buffer) {
  if (from_callers_buffer) return;
  bool written = false;  // anything copied, received or combined so far in the call
  for (Step& st : steps) {
    written = written || st.copy_bytes > 0;
    if (st.send_to >= 0 && st.send_bytes > 0 && written) st.send_written = true;
    written = written || (st.recv_from >= 0 && st.recv_bytes > 0) || st.reduce_bytes > 0;
  }
}

}  // namespace commgauge::collectives
