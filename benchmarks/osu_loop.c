/* Written here, not copied: osu_latency's loop and counts (OSU Micro-Benchmarks), plus a timer
 * read around every iteration so that a median can be compared with commgauge's. */
#include "osu_loop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { kLargeMessageBytes = 8192 }; /* osu_latency's LARGE_MESSAGE_SIZE */

int osu_skip(long bytes) {
  return bytes > kLargeMessageBytes ? 10 : 100;
}
int osu_iterations(long bytes) {
  return bytes > kLargeMessageBytes ? 1000 : 10000;
}

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

double osu_pingpong(MPI_Comm comm, long bytes, char* sbuf, char* rbuf, double* one_way_us) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const int skip = osu_skip(bytes), iterations = osu_iterations(bytes);
  MPI_Barrier(comm);
  double total = 0;
  for (int i = 0; i < skip + iterations; ++i) {
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(sbuf, (int)bytes, MPI_CHAR, 1, 1, comm);
      MPI_Recv(rbuf, (int)bytes, MPI_CHAR, 1, 1, comm, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(rbuf, (int)bytes, MPI_CHAR, 0, 1, comm, MPI_STATUS_IGNORE);
      MPI_Send(sbuf, (int)bytes, MPI_CHAR, 0, 1, comm);
    }
    const double dt = MPI_Wtime() - t0;
    if (i >= skip) {
      one_way_us[i - skip] = dt * 1e6 / 2;
      total += dt;
    }
  }
  if (rank == 0) osu_sort(one_way_us, iterations);
  return total;
}

void osu_median_interval(const double* sorted, int n, double* median, double* lower,
                         double* upper) {
  const int half = (int)ceil(0.98 * sqrt((double)n));
  *median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  *lower = sorted[n / 2 - half];
  *upper = sorted[n / 2 + half];
}

int osu_sizes_from_args(int argc, char** argv, int first, long* sizes, int count, int capacity,
                        long max_bytes) {
  if (argc > first) {
    count = 0;
    for (int i = first; i < argc && count < capacity; ++i)
      sizes[count++] = atol(argv[i]);
  }
  for (int s = 0; s < count; ++s)
    if (sizes[s] < 1 || sizes[s] > max_bytes) return -1;
  return count;
}

void osu_sort(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), compare);
}

void osu_print_median(const char* what, double* v, int n) {
  double median, lower, upper;
  osu_sort(v, n);
  osu_median_interval(v, n, &median, &lower, &upper);
  printf("  %s %.3f [%.3f, %.3f]", what, median, lower, upper);
}
