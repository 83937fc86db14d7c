/* A pipeline: rank 0 produces blocks; every other rank receives a block from its left neighbour
 * (MPI_Recv), works on it and passes it right (MPI_Send). The last stage works longest, so each
 * send finds its receiver still busy with the previous block. Below the eager limit the send
 * returns at once and the block waits at the receiver; above it (rendezvous) the sender waits
 * until the receiver posts its receive: the synchronisation LogGPS (Ino et al., 2001) adds to
 * LogGP, which charges every send as eager.
 * Usage: pipeline [blocks] [bytes] [stage_us] [last_stage_us]
 * Prints the time from after MPI_Init to before MPI_Finalize on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void compute_us(double us) {
  const double end = MPI_Wtime() + us * 1e-6;
  while (MPI_Wtime() < end) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int blocks = argc > 1 ? atoi(argv[1]) : 200;
  const int bytes = argc > 2 ? atoi(argv[2]) : 131072;
  const double stage_us = argc > 3 ? atof(argv[3]) : 100.0;
  const double last_stage_us = argc > 4 ? atof(argv[4]) : 300.0;
  if (size < 2 || blocks < 1 || bytes < 1 || stage_us < 0 || last_stage_us < 0) {
    if (rank == 0) fprintf(stderr, "pipeline: needs 2 or more ranks, blocks >= 1, bytes >= 1, times >= 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* block = malloc((size_t)bytes);
  const int last = rank == size - 1;
  const double t0 = MPI_Wtime();
  for (int i = 0; i < blocks; ++i) {
    if (rank > 0) {
      MPI_Recv(block, bytes, MPI_CHAR, rank - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (block[0] != (char)i || (bytes > 1 && block[bytes - 1] != (char)(rank - 1))) {
        fprintf(stderr, "pipeline: wrong data on rank %d, block %d\n", rank, i);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    compute_us(last ? last_stage_us : stage_us);
    if (!last) {
      block[bytes - 1] = (char)rank;
      block[0] = (char)i;
      MPI_Send(block, bytes, MPI_CHAR, rank + 1, 5, MPI_COMM_WORLD);
    }
  }
  const double t1 = MPI_Wtime();
  if (rank == 0)
    printf("pipeline: %d ranks, %d blocks, %d bytes, stages %.1f/%.1f us: %.6f s\n", size, blocks,
           bytes, stage_us, last_stage_us, t1 - t0);
  free(block);
  MPI_Finalize();
  return 0;
}
