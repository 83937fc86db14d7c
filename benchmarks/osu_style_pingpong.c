/* The reference for commgauge latency's cost: a plain blocking ping-pong loop with
 * osu_latency's defaults (osu_loop.c: 100 warm-up and 10,000 timed iterations per size up to
 * 8 KiB, 10 and 1,000 above; sizes 1 B to MAX in powers of 2).
 * Usage: mpirun -np 2 osu_style_pingpong [MAX_BYTES]
 * Prints per size: bytes, mean one-way us (OSU's figure), median one-way us, its 95 % interval;
 * then the total wall time and bytes moved in both directions. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "osu_loop.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long max_bytes = argc > 1 ? atol(argv[1]) : 1L << 20;
  /* Separate send and receive buffers, as osu_latency's s_buf and r_buf, page-aligned as OSU's
     allocate_memory_pt2pt makes them: over vader's single copy a receive buffer a few bytes past
     the send buffer's page offset costs up to 4x (4K aliasing, src/net/page_aligned.hpp). */
  char *sbuf = NULL, *rbuf = NULL;
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (posix_memalign((void**)&sbuf, page, (size_t)max_bytes) ||
      posix_memalign((void**)&rbuf, page, (size_t)max_bytes)) {
    fprintf(stderr, "osu_style_pingpong: cannot allocate %ld bytes\n", max_bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double* t = malloc(sizeof(double) * (size_t)osu_iterations(1));
  for (long i = 0; i < max_bytes; ++i)
    sbuf[i] = 'a', rbuf[i] = 'b';
  double bytes_moved = 0;
  const double start = MPI_Wtime();
  for (long s = 1; s <= max_bytes; s *= 2) {
    const int iterations = osu_iterations(s);
    const double total = osu_pingpong(MPI_COMM_WORLD, s, sbuf, rbuf, t);
    bytes_moved += 2.0 * (double)s * (osu_skip(s) + iterations);
    if (rank == 0) {
      double median, lower, upper;
      osu_median_interval(t, iterations, &median, &lower, &upper);
      printf("%ld %.4f %.4f %.4f %.4f\n", s, total * 1e6 / (2.0 * iterations), median, lower,
             upper);
    }
  }
  const double wall = MPI_Wtime() - start;
  if (rank == 0) printf("# wall_s %.3f bytes %.0f\n", wall, bytes_moved);
  free(t);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
