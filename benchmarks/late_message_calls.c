/* Which call takes a message that arrived while its receiver computed.
 *
 * Why: the replay (and the virtual network) hands a message that arrived during computation to
 * the next MPI call the receiver makes, whatever it is; its copy, and over an acknowledged range
 * its acknowledgement, then cost that call. Open MPI over shared memory only looks at arrived
 * fragments where it progresses (waits, tests, probes, blocking calls), not in MPI_Irecv. This
 * program measures, per size, the receiver's calls after the message has had 20 us to arrive:
 * MPI_Irecv then MPI_Wait, against MPI_Iprobe, MPI_Irecv, MPI_Wait.
 *
 * Usage: mpirun -np 2 late_message_calls [REPETITIONS] [SIZE...]   (2000; 64 1024 B)
 * Prints per size and variant the median time of each call with its 95 % interval, in us. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "osu_loop.h"

enum { kMaxBytes = 1 << 16 };

static void busy_us(double us) {
  const double until = MPI_Wtime() + us * 1e-6;
  while (MPI_Wtime() < until) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int reps = argc > 1 ? atoi(argv[1]) : 2000;
  long sizes[64] = {64, 1024};
  const int n_sizes = osu_sizes_from_args(argc, argv, 2, sizes, 2, 64, kMaxBytes);
  if (size != 2 || reps < 100 || n_sizes < 0) {
    if (rank == 0)
      fprintf(stderr,
              "usage: mpirun -np 2 late_message_calls [REPETITIONS >= 100] [SIZE 1..%d ...]\n",
              kMaxBytes);
    MPI_Finalize();
    return 2;
  }
  char *sbuf = NULL, *rbuf = NULL;
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (posix_memalign((void**)&sbuf, page, kMaxBytes) ||
      posix_memalign((void**)&rbuf, page, kMaxBytes))
    MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 0; i < kMaxBytes; ++i)
    sbuf[i] = (char)i;
  /* per variant (0: no probe, 1: MPI_Iprobe first), the calls' times */
  double* probe = malloc(sizeof(double) * 2 * (size_t)reps);
  double* post = malloc(sizeof(double) * 2 * (size_t)reps);
  double* wait = malloc(sizeof(double) * 2 * (size_t)reps);
  if (rank == 0)
    printf("# %d repetitions; the receiver's calls after 20 us of computation, us\n", reps);
  for (int s = 0; s < n_sizes; ++s) {
    /* the two variants alternate, so that drift and load fall on both */
    for (int i = 0; i < 2 * reps; ++i) {
      const int probe_first = i % 2;
      const size_t at = (size_t)probe_first * (size_t)reps + (size_t)(i / 2);
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 1) {
        MPI_Send(sbuf, (int)sizes[s], MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        continue;
      }
      busy_us(20);
      const double t0 = MPI_Wtime();
      int found = 0;
      if (probe_first) MPI_Iprobe(1, 1, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
      const double t1 = MPI_Wtime();
      MPI_Request request;
      MPI_Irecv(rbuf, (int)sizes[s], MPI_BYTE, 1, 1, MPI_COMM_WORLD, &request);
      const double t2 = MPI_Wtime();
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      const double t3 = MPI_Wtime();
      probe[at] = (t1 - t0) * 1e6;
      post[at] = (t2 - t1) * 1e6;
      wait[at] = (t3 - t2) * 1e6;
    }
    if (rank == 0) {
      for (int v = 0; v < 2; ++v) {
        const size_t at = (size_t)v * (size_t)reps;
        printf("%6ld B, %s:", sizes[s], v ? "MPI_Iprobe first" : "no probe        ");
        if (v) osu_print_median("Iprobe", probe + at, reps);
        osu_print_median("Irecv", post + at, reps);
        osu_print_median("Wait", wait + at, reps);
        printf("\n");
      }
    }
  }
  free(probe);
  free(post);
  free(wait);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
