/* A ring: every iteration each rank computes, then passes a message to its right neighbour and
 * receives from its left one (Isend/Irecv/Waitall). Usage: ring [iterations] [bytes] [compute_us]
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
  const int iterations = argc > 1 ? atoi(argv[1]) : 1000;
  const int bytes = argc > 2 ? atoi(argv[2]) : 1024;
  const double work_us = argc > 3 ? atof(argv[3]) : 20.0;
  char* out = malloc((size_t)bytes + 1);
  char* in = malloc((size_t)bytes + 1);
  memset(out, rank, (size_t)bytes);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    compute_us(work_us);
    MPI_Request req[2];
    MPI_Irecv(in, bytes, MPI_CHAR, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(out, bytes, MPI_CHAR, (rank + 1) % size, 7, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    if (bytes > 0 && in[0] != (char)((rank + size - 1) % size)) {
      fprintf(stderr, "ring: wrong data on rank %d\n", rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  const double t1 = MPI_Wtime();
  if (rank == 0) printf("ring: %d ranks, %d iterations, %d bytes: %.6f s\n", size, iterations, bytes, t1 - t0);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
