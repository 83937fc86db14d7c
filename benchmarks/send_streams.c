/* How far apart consecutive messages to one peer go, sent blocking and nonblocking.
 *
 * Why: over an acknowledged eager range (Tm = TA: a send ends when its receiver has taken the
 * message, as vader's sends above its inline limit do) PRTT(n,0,s) times blocking sends, whose
 * cycle holds the acknowledgement's round trip; the calibration may read that cycle as a gap g,
 * and the replay then holds every MPI_Isend back by g. This program measures both streams in one
 * launch: per size, in every round and in random order, n blocking MPI_Sends, n MPI_Isends and
 * one MPI_Waitall, and a single MPI_Send (the receiver has every receive posted; it answers with
 * one byte after the last), for n = 2 and 16.
 *
 * Usage: mpirun -np 2 send_streams [ROUNDS] [SIZE...]   (31 rounds; 128 1024 2048 4096 B)
 * Prints per size and n, medians over the rounds with their 95 % intervals: the cycle per extra
 * message ((batch - single) / (n - 1)) blocking and nonblocking, and one MPI_Isend call. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "osu_loop.h"

enum { kMaxBatch = 16, kRepetitions = 200, kSlotBytes = 1 << 16 };

/* variant 0: n blocking sends; 1: n Isends and a Waitall; 2: one blocking send. Returns the
 * mean time per repetition in us on rank 0, and there the mean time per Isend call. */
static double run(int rank, int variant, int n, long bytes, char* buf, double* isend_call_us) {
  const int messages = variant == 2 ? 1 : n;
  double in_isend = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < kRepetitions; ++i) {
    MPI_Request q[kMaxBatch];
    if (rank == 0) {
      if (variant == 1) {
        const double a = MPI_Wtime();
        for (int j = 0; j < n; ++j)
          MPI_Isend(buf + (long)j * kSlotBytes, (int)bytes, MPI_BYTE, 1, j, MPI_COMM_WORLD, &q[j]);
        in_isend += MPI_Wtime() - a;
        MPI_Waitall(n, q, MPI_STATUSES_IGNORE);
      } else {
        for (int j = 0; j < messages; ++j)
          MPI_Send(buf + (long)j * kSlotBytes, (int)bytes, MPI_BYTE, 1, j, MPI_COMM_WORLD);
      }
      MPI_Recv(buf, 1, MPI_BYTE, 1, kMaxBatch, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      for (int j = 0; j < messages; ++j)
        MPI_Irecv(buf + (long)j * kSlotBytes, (int)bytes, MPI_BYTE, 0, j, MPI_COMM_WORLD, &q[j]);
      MPI_Waitall(messages, q, MPI_STATUSES_IGNORE);
      MPI_Send(buf, 1, MPI_BYTE, 0, kMaxBatch, MPI_COMM_WORLD);
    }
  }
  *isend_call_us = in_isend * 1e6 / kRepetitions / n;
  return (MPI_Wtime() - t0) * 1e6 / kRepetitions;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? atoi(argv[1]) : 31;
  long sizes[64] = {128, 1024, 2048, 4096};
  const int n_sizes = osu_sizes_from_args(argc, argv, 2, sizes, 4, 64, kSlotBytes);
  if (size != 2 || rounds < 9 || n_sizes < 0) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np 2 send_streams [ROUNDS >= 9] [SIZE 1..%d ...]\n",
              kSlotBytes);
    MPI_Finalize();
    return 2;
  }
  char* buf = NULL;
  if (posix_memalign((void**)&buf, (size_t)sysconf(_SC_PAGESIZE), (size_t)kMaxBatch * kSlotBytes))
    MPI_Abort(MPI_COMM_WORLD, 1);
  for (long i = 0; i < (long)kMaxBatch * kSlotBytes; ++i)
    buf[i] = (char)i;
  const int batches[2] = {2, kMaxBatch};
  /* per size, batch, variant: the rounds' times; per size, batch: Isend call times */
  double* t = calloc((size_t)n_sizes * 2 * 3 * (size_t)rounds, sizeof(double));
  double* calls = calloc((size_t)n_sizes * 2 * (size_t)rounds, sizeof(double));
  double* cycle = calloc((size_t)rounds, sizeof(double));
  unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD); /* both ranks draw the same order */
  srand(seed);
  for (int k = 0; k < rounds; ++k)
    for (int s = 0; s < n_sizes; ++s)
      for (int b = 0; b < 2; ++b) {
        int order[3] = {0, 1, 2};
        for (int i = 2; i > 0; --i) {
          const int j = rand() % (i + 1), x = order[i];
          order[i] = order[j];
          order[j] = x;
        }
        for (int i = 0; i < 3; ++i) {
          double call = 0;
          const size_t at = (((size_t)s * 2 + (size_t)b) * 3 + (size_t)order[i]) * (size_t)rounds;
          t[at + (size_t)k] = run(rank, order[i], batches[b], sizes[s], buf, &call);
          if (order[i] == 1) calls[((size_t)s * 2 + (size_t)b) * (size_t)rounds + (size_t)k] = call;
        }
      }
  if (rank == 0) {
    printf("# seed %u, %d rounds of %d repetitions; us, median [95 %% interval] over the rounds\n",
           seed, rounds, kRepetitions);
    for (int s = 0; s < n_sizes; ++s)
      for (int b = 0; b < 2; ++b) {
        const int n = batches[b];
        const size_t base = ((size_t)s * 2 + (size_t)b) * 3 * (size_t)rounds;
        printf("%6ld B, n = %2d:", sizes[s], n);
        for (int v = 0; v < 2; ++v) {
          for (int k = 0; k < rounds; ++k)
            cycle[k] = (t[base + (size_t)v * (size_t)rounds + (size_t)k] -
                        t[base + 2 * (size_t)rounds + (size_t)k]) /
                       (n - 1);
          osu_print_median(v == 0 ? "blocking cycle" : "Isend cycle", cycle, rounds);
        }
        osu_print_median("Isend call", calls + ((size_t)s * 2 + (size_t)b) * (size_t)rounds,
                         rounds);
        printf("\n");
      }
  }
  free(t);
  free(calls);
  free(cycle);
  free(buf);
  MPI_Finalize();
  return 0;
}
