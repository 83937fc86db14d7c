/* The reference for commgauge latency's cost: a plain blocking ping-pong loop with
 * osu_latency's defaults (OSU Micro-Benchmarks: 100 warm-up and 10,000 timed iterations per
 * size up to 8 KiB, 10 and 1,000 above; sizes 1 B to MAX in powers of 2). Written here, not
 * copied: it keeps OSU's loop and counts, and also times every iteration so that a median with
 * its distribution-free 95 % interval can be compared with commgauge's.
 * Usage: mpirun -np 2 osu_style_pingpong [MAX_BYTES]
 * Prints per size: bytes, mean one-way us (OSU's figure), median one-way us, its 95 % interval;
 * then the total wall time and bytes moved in both directions. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long max_bytes = argc > 1 ? atol(argv[1]) : 1L << 20;
  const long large = 8192; /* osu_latency's LARGE_MESSAGE_SIZE */
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
  double* t = malloc(sizeof(double) * 10000);
  for (long i = 0; i < max_bytes; ++i) sbuf[i] = 'a', rbuf[i] = 'b';
  double bytes_moved = 0;
  const double start = MPI_Wtime();
  for (long s = 1; s <= max_bytes; s *= 2) {
    const int skip = s > large ? 10 : 100, iterations = s > large ? 1000 : 10000;
    MPI_Barrier(MPI_COMM_WORLD);
    double total = 0;
    for (int i = 0; i < skip + iterations; ++i) {
      const double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(sbuf, (int)s, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int)s, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(rbuf, (int)s, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, (int)s, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
      const double dt = MPI_Wtime() - t0;
      if (i >= skip) {
        t[i - skip] = dt * 1e6 / 2;
        total += dt;
      }
    }
    bytes_moved += 2.0 * (double)s * (skip + iterations);
    if (rank == 0) {
      qsort(t, (size_t)iterations, sizeof(double), compare);
      /* Order statistics around the median: a 95 % interval by the normal approximation of
         the binomial (exact enough for 1,000 samples and more). */
      const int half = (int)ceil(0.98 * sqrt((double)iterations));
      const double median = iterations % 2 ? t[iterations / 2]
                                           : (t[iterations / 2 - 1] + t[iterations / 2]) / 2;
      printf("%ld %.4f %.4f %.4f %.4f\n", s, total * 1e6 / (2.0 * iterations), median,
             t[iterations / 2 - half], t[iterations / 2 + half]);
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
