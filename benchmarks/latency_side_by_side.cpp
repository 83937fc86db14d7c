// commgauge latency's median against osu_latency's loop (osu_loop.c) in one launch.
//
// Why in one launch: this VM's two vCPUs run in one of two speeds that the host sets when they
// wake (8 B one-way about 0.2 or 0.5 us); a launch that keeps both busy stays in one, a sleep
// may switch it. Between launches the two methods differed by up to 2.5x either way, 20 times
// their own intervals, so launches cannot compare their medians. Here every round takes the
// sizes in a new random order and each size's two methods in a random order, so that a switch
// falls on both alike; per size the ratio commgauge / reference of each round, its median over
// the rounds and a distribution-free 95 % interval (stats::median_interval) say whether the
// two medians are equal.
//
// Usage: mpirun -np 2 latency_side_by_side [ROUNDS] [MAX_BYTES] [SEED]  (10, 1 MiB, random)
// Prints per round and size both medians with their 95 % intervals, then per size the ratio.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "measure/latency.hpp"
#include "measure/timer.hpp"
#include "net/mpi/mpi_transport.hpp"
#include "net/page_aligned.hpp"
#include "osu_loop.h"
#include "stats/descriptive.hpp"
#include "stats/median_ci.hpp"

namespace {

using namespace commgauge;

struct Cell {
  double median = 0, lower = 0, upper = 0;
};

}  // namespace

int main(int argc, char** argv) {
  net::MpiEnvironment environment(argc, argv, std::chrono::seconds(60));
  if (environment.world_size() != 2) {
    if (environment.world_rank() == 0) std::fprintf(stderr, "run with exactly 2 ranks\n");
    return 2;
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  const long max_bytes = argc > 2 ? std::atol(argv[2]) : 1L << 20;
  unsigned seed = argc > 3 ? static_cast<unsigned>(std::atol(argv[3])) : std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);  // both ranks draw the same orders
  const bool source = environment.world_rank() == 0;

  net::MpiTransport transport(0, 1, net::make_mpi_clock("steady"), environment.watchdog());
  measure::TimerOptions timer_options;
  timer_options.trials = std::uint64_t{1} << 20;
  const auto timer = measure::characterize_timer(transport.clock(), timer_options);

  net::PageAlignedBytes sbuf(static_cast<std::size_t>(max_bytes), 'a');
  net::PageAlignedBytes rbuf(static_cast<std::size_t>(max_bytes), 'b');
  std::vector<double> osu_times(static_cast<std::size_t>(osu_iterations(1)));
  std::vector<long> sizes;
  for (long s = 1; s <= max_bytes; s *= 2)
    sizes.push_back(s);

  std::mt19937 rng(seed);
  std::map<long, std::vector<std::pair<Cell, Cell>>> cells;  // size: (reference, commgauge)
  if (source)
    std::printf("# seed %u\n# round bytes ref_median [lo, hi] cg_median [lo, hi]\n", seed);
  for (int round = 1; round <= rounds; ++round) {
    std::shuffle(sizes.begin(), sizes.end(), rng);
    for (const long s : sizes) {
      Cell ref, cg;
      const bool reference_first = std::bernoulli_distribution(0.5)(rng);
      for (int k = 0; k < 2; ++k) {
        if ((k == 0) == reference_first) {
          osu_pingpong(MPI_COMM_WORLD, s, reinterpret_cast<char*>(sbuf.data()),
                       reinterpret_cast<char*>(rbuf.data()), osu_times.data());
          if (source)
            osu_median_interval(osu_times.data(), osu_iterations(s), &ref.median, &ref.lower,
                                &ref.upper);
        } else {
          measure::LatencyOptions options;
          options.sizes = {static_cast<std::uint64_t>(s)};
          const auto result = measure::measure_latency(transport, options, timer, nullptr);
          if (source) {
            const auto& p = result->points.front();
            cg = {p.stats.median, p.median_lower_us, p.median_upper_us};
          }
        }
      }
      if (source) {
        cells[s].emplace_back(ref, cg);
        std::printf("%d %ld %.4f [%.4f, %.4f] %.4f [%.4f, %.4f]\n", round, s, ref.median, ref.lower,
                    ref.upper, cg.median, cg.lower, cg.upper);
      }
    }
  }
  if (source) {
    std::printf("# bytes ref_median cg_median ratio [lo, hi] verdict overlapping_rounds\n");
    int equal = 0;
    for (const auto& [s, v] : cells) {
      std::vector<double> ratio, ref, cg;
      int overlap = 0;
      for (const auto& [r, c] : v) {
        ratio.push_back(c.median / r.median);
        ref.push_back(r.median);
        cg.push_back(c.median);
        overlap += r.lower <= c.upper && c.lower <= r.upper;
      }
      const auto ci = stats::median_interval(ratio, 0.95);
      const bool same = ci.lower <= 1 && 1 <= ci.upper;
      equal += same;
      std::printf("%ld %.4f %.4f %.4f [%.4f, %.4f] %s %d/%zu\n", s, stats::median(ref),
                  stats::median(cg), ci.median, ci.lower, ci.upper, same ? "equal" : "different",
                  overlap, v.size());
    }
    std::printf("# %d of %zu sizes equal: the ratio's 95 %% interval over %d rounds holds 1\n",
                equal, cells.size(), rounds);
  }
  return 0;
}
