#include "collectives/openmpi_tuned.hpp"

#include <limits>
#include <stdexcept>

namespace commgauge::collectives {

namespace {

// ---- The tables of ompi/mca/coll/tuned/coll_tuned_decision_fixed.c (v4.1.x) ----
//
// Each rule is an if-chain on the communicator size, then on a byte count: a Band applies while
// comm_size < `below`, a Cut while bytes < `below` (the last of each list is the `else`). The
// rules' "communicator_size == 2" is written as a band below 3.

constexpr std::uint64_t kRest = std::numeric_limits<std::uint64_t>::max();

struct Cut {
  std::uint64_t below;
  int algorithm;
};

struct Band {
  std::size_t below;
  std::vector<Cut> cuts;
};

using Table = std::vector<Band>;

int pick(const Table& table, std::size_t comm_size, std::uint64_t bytes) {
  for (const Band& band : table) {
    if (comm_size >= band.below) continue;
    for (const Cut& cut : band.cuts)
      if (bytes < cut.below) return cut.algorithm;
  }
  throw std::logic_error("openmpi_tuned: a table without an else");
}

// clang-format off
// ompi_coll_tuned_allreduce_intra_dec_fixed, !ompi_op_is_commute(op): ring, segmented ring and
// Rabenseifner need commutativity.
const Table kAllreduceNonCommutative = {
    {4, {{131072, 3}, {kRest, 1}}},
    {8, {{kRest, 3}}},
    {16, {{1048576, 3}, {kRest, 2}}},
    {128, {{kRest, 3}}},
    {256, {{131072, 2}, {524288, 3}, {kRest, 2}}},
    {512, {{4096, 2}, {524288, 3}, {kRest, 2}}},
    {kRest, {{2048, 2}, {kRest, 3}}},
};

// ompi_coll_tuned_allreduce_intra_dec_fixed, commutative operations.
const Table kAllreduceCommutative = {
    {4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}, {kRest, 6}}},
    {8, {{16, 4}, {8192, 3}, {kRest, 6}}},
    {16, {{8192, 3}, {kRest, 6}}},
    {32, {{64, 5}, {4096, 3}, {kRest, 6}}},
    {64, {{128, 5}, {kRest, 6}}},
    {128, {{262144, 3}, {kRest, 6}}},
    {256, {{131072, 2}, {262144, 3}, {kRest, 6}}},
    {512, {{4096, 2}, {kRest, 6}}},
    {2048, {{2048, 2}, {16384, 3}, {kRest, 6}}},
    {4096, {{2048, 2}, {4096, 5}, {16384, 3}, {kRest, 6}}},
    {kRest, {{2048, 2}, {16384, 5}, {32768, 3}, {kRest, 6}}},
};

// ompi_coll_tuned_alltoall_intra_dec_fixed: bytes = dsize * scount (one peer's block).
const Table kAlltoall = {
    {3,
     {{2, 2}, {4, 5}, {16, 2}, {64, 5}, {256, 2}, {4096, 5}, {32768, 2}, {262144, 4},
      {1048576, 5}, {kRest, 2}}},
    {8, {{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}, {kRest, 1}}},
    {16, {{262144, 4}, {kRest, 1}}},
    {32, {{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}, {kRest, 4}}},
    {64, {{512, 3}, {524288, 1}, {kRest, 4}}},
    {128, {{1024, 3}, {2048, 1}, {4096, 4}, {262144, 1}, {kRest, 2}}},
    {256, {{1024, 3}, {2048, 4}, {262144, 1}, {kRest, 2}}},
    {512, {{1024, 3}, {8192, 4}, {32768, 1}, {kRest, 2}}},
    {1024, {{512, 3}, {8192, 4}, {16384, 1}, {131072, 4}, {262144, 1}, {kRest, 2}}},
    {2048, {{512, 3}, {1024, 4}, {2048, 1}, {16384, 4}, {262144, 1}, {kRest, 4}}},
    {4096, {{1024, 3}, {4096, 4}, {8192, 1}, {131072, 4}, {kRest, 1}}},
    {kRest, {{2048, 3}, {8192, 4}, {16384, 1}, {32768, 4}, {65536, 1}, {kRest, 4}}},
};

// ompi_coll_tuned_alltoallv_intra_dec_fixed: by communicator size only.
const Table kAlltoallv = {
    {4, {{kRest, 2}}},   {64, {{kRest, 1}}},  {128, {{kRest, 2}}},
    {256, {{kRest, 1}}}, {1024, {{kRest, 2}}}, {kRest, {{kRest, 1}}},
};

// ompi_coll_tuned_barrier_intra_dec_fixed: by communicator size only.
const Table kBarrier = {
    {4, {{kRest, 3}}},   {8, {{kRest, 1}}},   {64, {{kRest, 3}}},   {256, {{kRest, 4}}},
    {512, {{kRest, 6}}}, {1024, {{kRest, 4}}}, {4096, {{kRest, 6}}}, {kRest, {{kRest, 4}}},
};

// ompi_coll_tuned_bcast_intra_dec_fixed: bytes = dsize * count.
const Table kBcast = {
    {4,
     {{32, 3}, {256, 5}, {512, 3}, {1024, 7}, {32768, 1}, {131072, 5}, {262144, 2}, {524288, 1},
      {1048576, 6}, {kRest, 5}}},
    {8, {{64, 5}, {128, 6}, {2048, 5}, {8192, 6}, {1048576, 1}, {kRest, 2}}},
    {16, {{8, 7}, {64, 5}, {4096, 7}, {16384, 5}, {32768, 6}, {kRest, 1}}},
    {32, {{4096, 7}, {1048576, 6}, {kRest, 8}}},
    {64, {{2048, 6}, {kRest, 7}}},
    {128, {{kRest, 7}}},
    {256, {{2, 6}, {16384, 5}, {32768, 1}, {65536, 5}, {kRest, 7}}},
    {1024, {{16384, 7}, {32768, 4}, {kRest, 7}}},
    {2048, {{524288, 7}, {kRest, 8}}},
    {4096, {{262144, 7}, {kRest, 8}}},
    {kRest, {{8192, 7}, {16384, 5}, {262144, 7}, {kRest, 8}}},
};

// ompi_coll_tuned_reduce_intra_dec_fixed, !ompi_op_is_commute(op): only linear and in-order
// binary keep the order of operations.
const Table kReduceNonCommutative = {
    {4, {{8, 6}, {kRest, 1}}},
    {8, {{kRest, 1}}},
    {16, {{1024, 6}, {8192, 1}, {16384, 6}, {262144, 1}, {kRest, 6}}},
    {128, {{kRest, 6}}},
    {256, {{512, 6}, {1024, 1}, {kRest, 6}}},
    {kRest, {{kRest, 6}}},
};

// ompi_coll_tuned_reduce_intra_dec_fixed, commutative operations.
const Table kReduceCommutative = {
    {4, {{8, 7}, {16, 4}, {32, 3}, {262144, 1}, {524288, 3}, {1048576, 2}, {kRest, 3}}},
    {8, {{4096, 4}, {65536, 2}, {262144, 5}, {524288, 1}, {1048576, 5}, {kRest, 1}}},
    {16, {{8192, 4}, {kRest, 5}}},
    {32, {{4096, 4}, {kRest, 5}}},
    {256, {{kRest, 5}}},
    {512, {{8192, 5}, {16384, 6}, {kRest, 5}}},
    {2048, {{kRest, 5}}},
    {4096, {{512, 5}, {1024, 6}, {8192, 5}, {16384, 6}, {kRest, 5}}},
    {kRest, {{16, 5}, {32, 6}, {1024, 5}, {2048, 6}, {8192, 5}, {16384, 6}, {kRest, 5}}},
};

// ompi_coll_tuned_reduce_scatter_intra_dec_fixed, commutative (non-commutative: always 1,
// "capability needs re-investigation"); bytes = dsize * sum(rcounts).
const Table kReduceScatter = {
    {4, {{65536, 3}, {131072, 4}, {kRest, 3}}},
    {8, {{8, 1}, {262144, 2}, {kRest, 3}}},
    {32, {{262144, 2}, {kRest, 3}}},
    {64, {{64, 1}, {2048, 2}, {524288, 4}, {kRest, 3}}},
    {128, {{256, 1}, {512, 2}, {2048, 4}, {4096, 2}, {kRest, 4}}},
    {256, {{256, 1}, {512, 2}, {kRest, 4}}},
    {512, {{256, 1}, {1024, 2}, {kRest, 4}}},
    {1024, {{512, 1}, {2048, 2}, {8192, 4}, {16384, 2}, {kRest, 4}}},
    {2048, {{512, 1}, {4096, 2}, {16384, 4}, {32768, 2}, {kRest, 4}}},
    {4096, {{512, 1}, {4096, 2}, {kRest, 4}}},
    {kRest, {{1024, 1}, {8192, 2}, {kRest, 4}}},
};

// ompi_coll_tuned_reduce_scatter_block_intra_dec_fixed, commutative (non-commutative: always 1);
// bytes = dsize * rcount (one block).
const Table kReduceScatterBlock = {
    {4,
     {{4, 2}, {8, 4}, {16, 3}, {128, 4}, {256, 3}, {4096, 4}, {8192, 3}, {131072, 4},
      {kRest, 1}}},
    {8, {{8, 3}, {32, 2}, {256, 4}, {8192, 3}, {16384, 4}, {1048576, 3}, {kRest, 1}}},
    {16, {{4, 1}, {32, 3}, {128, 4}, {524288, 3}, {4194304, 1}, {kRest, 4}}},
    {32, {{32, 1}, {524288, 3}, {2097152, 1}, {4194304, 3}, {kRest, 4}}},
    {kRest, {{4, 3}, {16, 1}, {65536, 4}, {262144, 1}, {kRest, 4}}},
};

// ompi_coll_tuned_allgather_intra_dec_fixed: bytes = dsize * scount (one contribution).
const Table kAllgather = {
    {3, {{kRest, 6}}},
    {32, {{kRest, 3}}},
    {64, {{1024, 3}, {65536, 5}, {kRest, 4}}},
    {128, {{512, 3}, {65536, 5}, {kRest, 4}}},
    {256, {{512, 3}, {131072, 5}, {524288, 4}, {1048576, 5}, {kRest, 4}}},
    {512, {{32, 3}, {128, 2}, {1024, 3}, {131072, 5}, {524288, 4}, {1048576, 5}, {kRest, 4}}},
    {1024, {{64, 3}, {256, 2}, {2048, 3}, {kRest, 5}}},
    {2048, {{4, 3}, {8, 2}, {16, 3}, {32, 2}, {256, 3}, {512, 2}, {4096, 3}, {kRest, 5}}},
    {4096, {{32, 2}, {128, 3}, {512, 2}, {4096, 3}, {kRest, 5}}},
    {kRest, {{2, 3}, {8, 2}, {16, 3}, {512, 2}, {4096, 3}, {kRest, 5}}},
};

// ompi_coll_tuned_allgatherv_intra_dec_fixed: bytes = sum of the contributions / comm size
// ("per_rank_dsize", Open MPI PR #8224 in v4.1.0).
const Table kAllgatherv = {
    {3, {{2048, 3}, {4096, 5}, {8192, 3}, {kRest, 5}}},
    {8, {{256, 1}, {4096, 4}, {8192, 3}, {16384, 4}, {262144, 2}, {kRest, 4}}},
    {16, {{1024, 1}, {kRest, 2}}},
    {32, {{128, 1}, {262144, 2}, {kRest, 3}}},
    {64, {{256, 1}, {8192, 2}, {kRest, 3}}},
    {128, {{256, 1}, {4096, 2}, {kRest, 3}}},
    {256, {{1024, 2}, {65536, 4}, {kRest, 3}}},
    {512, {{1024, 2}, {kRest, 3}}},
    {1024, {{512, 2}, {1024, 1}, {4096, 2}, {1048576, 4}, {kRest, 3}}},
    {kRest, {{4096, 2}, {kRest, 4}}},
};

// ompi_coll_tuned_gather_intra_dec_fixed: bytes = dsize * rcount at the root, dsize * scount
// elsewhere (one contribution).
const Table kGather = {
    {4, {{2, 3}, {4, 1}, {32768, 2}, {65536, 1}, {131072, 2}, {kRest, 3}}},
    {8, {{1024, 2}, {8192, 1}, {32768, 2}, {262144, 1}, {kRest, 3}}},
    {256, {{kRest, 2}}},
    {512, {{2048, 2}, {8192, 1}, {kRest, 2}}},
    {kRest, {{kRest, 2}}},
};

// ompi_coll_tuned_scatter_intra_dec_fixed: bytes = dsize * scount at the root, dsize * rcount
// elsewhere (one block).
const Table kScatter = {
    {4, {{2, 3}, {131072, 1}, {262144, 3}, {kRest, 1}}},
    {8, {{2048, 2}, {4096, 1}, {8192, 2}, {32768, 1}, {1048576, 3}, {kRest, 1}}},
    {16, {{16384, 2}, {1048576, 3}, {kRest, 1}}},
    {32, {{16384, 2}, {32768, 1}, {kRest, 3}}},
    {64, {{512, 2}, {8192, 3}, {16384, 2}, {kRest, 3}}},
    {kRest, {{512, 2}, {kRest, 3}}},
};

// clang-format on

// Open MPI's names, by algorithm number (the "Algorithms:" comments of each decision function
// and the coll_tuned_<op>_algorithm MCA enumerations).
std::string_view openmpi_name(Operation op, int id) {
  static const std::vector<std::string_view> allreduce = {"basic_linear",       "nonoverlapping",
                                                          "recursive_doubling", "ring",
                                                          "segmented_ring",     "rabenseifner"};
  static const std::vector<std::string_view> alltoall = {"linear", "pairwise", "modified_bruck",
                                                         "linear_sync", "two_proc"};
  static const std::vector<std::string_view> alltoallv = {"basic_linear", "pairwise"};
  static const std::vector<std::string_view> barrier = {
      "linear", "double_ring", "recursive_doubling", "bruck", "two_proc", "tree"};
  static const std::vector<std::string_view> bcast = {
      "basic_linear", "chain",   "pipeline",          "split_binary_tree",     "binary_tree",
      "binomial",     "knomial", "scatter_allgather", "scatter_allgather_ring"};
  static const std::vector<std::string_view> reduce = {
      "linear", "chain", "pipeline", "binary", "binomial", "in-order_binary", "rabenseifner"};
  static const std::vector<std::string_view> reduce_scatter = {
      "non-overlapping", "recursive_halving", "ring", "butterfly"};
  static const std::vector<std::string_view> reduce_scatter_block = {
      "basic_linear", "recursive_doubling", "recursive_halving", "butterfly"};
  static const std::vector<std::string_view> allgather = {
      "linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"};
  static const std::vector<std::string_view> allgatherv = {"default", "bruck", "ring", "neighbor",
                                                           "two_proc"};
  static const std::vector<std::string_view> gather = {"basic_linear", "binomial", "linear_sync"};
  static const std::vector<std::string_view> scatter = {"basic_linear", "binomial", "linear_nb"};
  const std::vector<std::string_view>* names = nullptr;
  switch (op) {
    case Operation::allreduce:
      names = &allreduce;
      break;
    case Operation::alltoall:
      names = &alltoall;
      break;
    case Operation::alltoallv:
      names = &alltoallv;
      break;
    case Operation::barrier:
      names = &barrier;
      break;
    case Operation::bcast:
      names = &bcast;
      break;
    case Operation::reduce:
      names = &reduce;
      break;
    case Operation::reduce_scatter:
      names = &reduce_scatter;
      break;
    case Operation::reduce_scatter_block:
      names = &reduce_scatter_block;
      break;
    case Operation::allgather:
      names = &allgather;
      break;
    case Operation::allgatherv:
      names = &allgatherv;
      break;
    case Operation::gather:
      names = &gather;
      break;
    case Operation::scatter:
      names = &scatter;
      break;
    case Operation::scan:
    case Operation::exscan:
    case Operation::gatherv:
    case Operation::scatterv:
    case Operation::alltoallw:
      return "basic_linear (coll/basic)";
  }
  if (id < 1 || static_cast<std::size_t>(id) > names->size()) return "?";
  return (*names)[static_cast<std::size_t>(id - 1)];
}

bool power_of_two(std::size_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

std::size_t highest_power_of_two_at_most(std::size_t n) {
  std::size_t p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

void append(std::vector<Step>& steps, const std::vector<Step>& more) {
  steps.insert(steps.end(), more.begin(), more.end());
}

}  // namespace

TunedDecision openmpi_tuned_decision(Operation op, std::size_t comm_size, std::uint64_t bytes,
                                     bool commutative) {
  int id = 0;
  switch (op) {
    case Operation::allreduce:
      id = pick(commutative ? kAllreduceCommutative : kAllreduceNonCommutative, comm_size, bytes);
      break;
    case Operation::alltoall:
      id = pick(kAlltoall, comm_size, bytes);
      break;
    case Operation::alltoallv:
      id = pick(kAlltoallv, comm_size, 0);
      break;
    case Operation::barrier:
      id = pick(kBarrier, comm_size, 0);
      break;
    case Operation::bcast:
      id = pick(kBcast, comm_size, bytes);
      break;
    case Operation::reduce:
      id = pick(commutative ? kReduceCommutative : kReduceNonCommutative, comm_size, bytes);
      break;
    case Operation::reduce_scatter:
      id = commutative ? pick(kReduceScatter, comm_size, bytes) : 1;
      break;
    case Operation::reduce_scatter_block:
      id = commutative ? pick(kReduceScatterBlock, comm_size, bytes) : 1;
      break;
    case Operation::allgather:
      id = pick(kAllgather, comm_size, bytes);
      break;
    case Operation::allgatherv:
      id = pick(kAllgatherv, comm_size, bytes);
      break;
    case Operation::gather:
      id = pick(kGather, comm_size, bytes);
      break;
    case Operation::scatter:
      id = pick(kScatter, comm_size, bytes);
      break;
    case Operation::scan:
    case Operation::exscan:
    case Operation::gatherv:
    case Operation::scatterv:
    case Operation::alltoallw:
      break;  // coll/tuned leaves these to coll/basic
  }
  TunedDecision d;
  d.algorithm_id = id;
  d.openmpi_name = openmpi_name(op, id);
  // Every 4.1 rule ends in <op>_intra_do_this(..., alg, faninout 0, segsize 0); knomial bcast
  // takes its radix from coll_tuned_bcast_knomial_radix (default 4) instead.
  d.fanout = op == Operation::bcast && id == 7 ? 4 : 0;
  return d;
}

TunedDecision openmpi_tuned_decision(const Collective& c, bool commutative) {
  std::uint64_t bytes = c.bytes;
  if ((c.op == Operation::reduce_scatter || c.op == Operation::allgatherv) && !c.counts.empty()) {
    bytes = 0;
    for (auto x : c.counts)
      bytes += x;
    if (c.op == Operation::allgatherv) bytes /= c.counts.size();
  }
  return openmpi_tuned_decision(c.op, c.members.size(), bytes, commutative);
}

std::optional<NearestAlgorithm> nearest_algorithm(Operation op, int id, std::size_t comm_size) {
  using A = Algorithm;
  auto exact = [](Algorithm a) { return std::optional<NearestAlgorithm>{{a, true}}; };
  auto near = [](Algorithm a) { return std::optional<NearestAlgorithm>{{a, false}}; };
  const bool two = comm_size == 2;
  switch (op) {
    case Operation::allreduce:
      switch (id) {
        case 1:
          return exact(A::linear);  // basic linear reduce + basic linear bcast
        case 2:
          return near(A::binomial);  // tuned reduce + tuned bcast: see _schedule
        case 3:
          return exact(A::recursive_doubling);
        case 4:
          return exact(A::ring);
        case 5:
          return exact(A::segmented_ring);  // segsize 0: Open MPI runs the plain ring
        case 6:
          return exact(A::rabenseifner);
      }
      break;
    case Operation::bcast:
      switch (id) {
        case 1:
          return exact(A::linear);
        case 2:
          return exact(A::chain);
        case 3:
          return exact(A::pipeline);
        case 4:
          return exact(A::split_binary_tree);
        case 5:
          return exact(A::binary_tree);
        case 6:
          return exact(A::ompi_binomial);
        case 7:
          return exact(A::knomial);
        case 8:
          return exact(A::scatter_allgather);
        case 9:
          return exact(A::scatter_allgather_ring);
      }
      break;
    case Operation::reduce:
      switch (id) {
        case 1:
          return exact(A::linear);
        case 2:
          return exact(A::chain);
        case 3:
          return exact(A::pipeline);
        case 4:
          return exact(A::binary_tree);
        case 5:
          return exact(A::binomial);  // Open MPI's in-order binomial = MPICH's
        case 6:
          return exact(A::in_order_binary);
        case 7:
          return exact(A::rabenseifner);
      }
      break;
    case Operation::barrier:
      switch (id) {
        case 1:
          return exact(A::linear);
        case 2:
          return near(A::dissemination);  // double ring: no commgauge equivalent
        // Open MPI folds the ranks above the power of two onto rank - 2^k, MPICH (commgauge)
        // pairs the first 2r ranks: the same only on powers of two.
        case 3:
          return std::optional<NearestAlgorithm>{{A::recursive_doubling, power_of_two(comm_size)}};
        case 4:
          return exact(A::dissemination);  // Open MPI's "bruck" barrier
        case 5:
          return std::optional<NearestAlgorithm>{{A::recursive_doubling, two}};
        case 6:
          return exact(A::binomial);
      }
      break;
    case Operation::allgather:
      switch (id) {
        case 1:
          return near(A::ring);  // linear: gather to 0 + bcast from 0
        case 2:
          return exact(A::bruck);
        case 3:  // Open MPI switches to Bruck below a power of two; commgauge to the ring
          return exact(power_of_two(comm_size) ? A::recursive_doubling : A::bruck);
        case 4:
          return exact(A::ring);
        case 5:
          return exact(A::neighbor_exchange);
        case 6:
          return std::optional<NearestAlgorithm>{{A::ring, two}};
      }
      break;
    case Operation::allgatherv:
      switch (id) {
        case 1:
          return near(A::ring);  // default: linear gatherv + tuned bcast: see _schedule
        case 2:
          return exact(A::bruck);
        case 3:
          return exact(A::ring);
        case 4:
          return exact(A::neighbor_exchange);
        case 5:
          return std::optional<NearestAlgorithm>{{A::ring, two}};
      }
      break;
    case Operation::alltoall:
      switch (id) {
        case 1:
          return exact(A::linear);
        case 2:
          return exact(A::pairwise);
        case 3:
          return exact(A::bruck);
        case 4:
          return exact(A::linear);  // max requests 0 (the default): no limit, = linear
        case 5:
          return std::optional<NearestAlgorithm>{{A::pairwise, two}};
      }
      break;
    case Operation::alltoallv:
      switch (id) {
        case 1:
          return exact(A::linear);
        case 2:
          return exact(A::pairwise);
      }
      break;
    case Operation::gather:
      switch (id) {
        case 1:
          return exact(A::linear);
        case 2:
          return exact(A::binomial);
        case 3:
          return exact(A::linear_sync);
      }
      break;
    case Operation::scatter:
      switch (id) {
        case 1:
          return exact(A::linear);
        case 2:
          return exact(A::binomial);
        case 3:
          return exact(A::linear);  // linear_nb: the same sends, nonblocking
      }
      break;
    case Operation::reduce_scatter:
      switch (id) {
        case 1:
          return near(A::linear);  // tuned reduce + linear scatterv: see _schedule
        case 2:
          return exact(A::recursive_halving);
        case 3:
          return exact(A::ring);
        case 4:
          return exact(A::butterfly);
      }
      break;
    case Operation::reduce_scatter_block:
      switch (id) {
        case 1:
          return near(A::linear);  // tuned reduce + tuned scatter: see _schedule
        case 2:
          return exact(A::recursive_doubling);
        case 3:
          return exact(A::recursive_halving);
        case 4:
          return exact(A::butterfly);
      }
      break;
    case Operation::scan:
    case Operation::exscan:
      if (id == 0) return exact(A::chain);  // coll/basic: receive from rank - 1, send to rank + 1
      break;
    case Operation::gatherv:
    case Operation::scatterv:
    case Operation::alltoallw:
      if (id == 0) return exact(A::linear);  // coll/basic's linear algorithms
      break;
  }
  return std::nullopt;
}

std::optional<NearestAlgorithm> nearest_algorithm(Operation op, const TunedDecision& decision,
                                                  std::size_t comm_size) {
  return nearest_algorithm(op, decision.algorithm_id, comm_size);
}

std::vector<Step> openmpi_tuned_schedule(const Collective& c, bool commutative,
                                         std::uint64_t element_bytes, TunedChoice* choice) {
  const std::size_t n = c.members.size();
  if (n == 0 || c.me >= n) throw std::invalid_argument("collective: member out of range");
  if (element_bytes == 0) element_bytes = 1;
  Collective call = c;
  if (call.op == Operation::reduce_scatter && call.counts.empty()) {  // bytes: the vector
    for (std::size_t i = 0; i < n; ++i)
      call.counts.push_back(c.bytes / n + (i < c.bytes % n ? 1 : 0));
  }
  const TunedDecision d = openmpi_tuned_decision(call, commutative);
  const std::uint64_t count = call.bytes / element_bytes;  // elements, for Open MPI's fallbacks
  auto block = [&](std::size_t i) { return call.counts.empty() ? call.bytes : call.counts[i]; };
  std::uint64_t total = 0;  // all blocks (reduce_scatter, allgatherv)
  for (std::size_t i = 0; i < n; ++i)
    total += block(i);
  // One collective of a composed algorithm, rooted at member 0 as Open MPI roots them.
  auto part = [&](Operation op, std::uint64_t bytes, bool keep_counts) {
    Collective p = call;
    p.op = op;
    p.root = 0;
    p.bytes = bytes;
    if (!keep_counts) p.counts.clear();
    p.recv_counts.clear();
    return p;
  };
  auto tuned = [&](const Collective& p) {
    return openmpi_tuned_schedule(p, commutative, element_bytes);
  };
  std::vector<Step> steps;
  const NearestAlgorithm nearest = nearest_algorithm(call.op, d, n).value();
  Algorithm a = nearest.algorithm;
  auto report = [&](bool composed) {
    if (choice == nullptr) return;
    *choice = {d, a, nearest.exact, a != nearest.algorithm, composed};
  };
  switch (call.op) {
    case Operation::allreduce:
      if (d.algorithm_id == 2) {  // ompi_coll_base_allreduce_intra_nonoverlapping
        steps = tuned(part(Operation::reduce, call.bytes, false));
        append(steps, tuned(part(Operation::bcast, call.bytes, false)));
        mark_written_sends(steps, false);
        report(true);
        return steps;
      }
      // ompi_coll_base_allreduce_intra_ring (and _ring_segmented, which runs it when the
      // vector is below n segments): fewer elements than members -> recursive doubling.
      if ((d.algorithm_id == 4 || d.algorithm_id == 5) && count < n)
        a = Algorithm::recursive_doubling;
      // ..._redscat_allgather: fewer elements than the power of two -> basic linear.
      if (d.algorithm_id == 6 && count < highest_power_of_two_at_most(n)) a = Algorithm::linear;
      break;
    case Operation::bcast:
      // ..._split_bintree: a half would be empty -> chain of fan-out 1 (= pipeline).
      if (d.algorithm_id == 4 && count < 2) a = Algorithm::pipeline;
      // ..._scatter_allgather(_ring): fewer elements than members -> basic linear.
      if ((d.algorithm_id == 8 || d.algorithm_id == 9) && count < n) a = Algorithm::linear;
      break;
    case Operation::reduce:
      // ompi_coll_base_reduce_intra_redscat_gather: fewer elements than p' -> basic linear.
      if (d.algorithm_id == 7 && count < highest_power_of_two_at_most(n)) a = Algorithm::linear;
      break;
    case Operation::reduce_scatter:
      if (d.algorithm_id == 1) {  // ompi_coll_base_reduce_scatter_intra_nonoverlapping
        steps = tuned(part(Operation::reduce, total, false));
        append(steps, schedule(part(Operation::scatterv, block(call.me), true),
                               Algorithm::linear));  // coll/basic's scatterv
        mark_written_sends(steps, false);
        report(true);
        return steps;
      }
      break;
    case Operation::reduce_scatter_block:
      if (d.algorithm_id == 1) {  // ompi_coll_base_reduce_scatter_block_basic_linear
        steps = tuned(part(Operation::reduce, call.bytes * n, false));
        append(steps, tuned(part(Operation::scatter, call.bytes, false)));
        mark_written_sends(steps, false);
        report(true);
        return steps;
      }
      break;
    case Operation::allgatherv:
      if (d.algorithm_id == 1) {  // ompi_coll_base_allgatherv_intra_basic_default
        steps = schedule(part(Operation::gatherv, block(call.me), true),
                         Algorithm::linear);  // coll/basic's gatherv
        // Then a tuned bcast of one element of an indexed datatype: the rules see all the
        // bytes, the algorithms' fallbacks see count 1.
        Collective bcast = part(Operation::bcast, total, false);
        const TunedDecision bd = openmpi_tuned_decision(Operation::bcast, n, total, commutative);
        Algorithm ba = nearest_algorithm(Operation::bcast, bd, n).value().algorithm;
        if (bd.algorithm_id == 4) ba = Algorithm::pipeline;
        if ((bd.algorithm_id == 8 || bd.algorithm_id == 9) && n > 1) ba = Algorithm::linear;
        bcast.segment_bytes = bd.segment_bytes;
        bcast.fanout = bd.fanout;
        append(steps, schedule(bcast, ba));
        mark_written_sends(steps, false);
        report(true);
        return steps;
      }
      break;
    default:
      break;
  }
  call.segment_bytes = d.segment_bytes;
  call.fanout = d.fanout;
  report(false);
  return schedule(call, a);
}

}  // namespace commgauge::collectives
