/* A program that does not finish: after 300 ping-pongs between ranks 0 and 1 (on a 2-rank
 * run), rank 1 calls MPI_Abort ("abort"), kills itself with SIGKILL ("kill"), or both ranks
 * block in a receive nobody sends ("hang", ended by a SIGTERM from outside). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "abort";
  double x[16] = {0};
  for (int i = 0; i < 300; ++i) {
    if (rank == 0) {
      MPI_Send(x, 16, MPI_DOUBLE, 1, i, MPI_COMM_WORLD);
      MPI_Recv(x, 16, MPI_DOUBLE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(x, 16, MPI_DOUBLE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(x, 16, MPI_DOUBLE, 0, i, MPI_COMM_WORLD);
    }
  }
  fprintf(stderr, "rank %d: 300 ping-pongs done, now: %s\n", rank, mode);
  if (strcmp(mode, "abort") == 0 && rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
  if (strcmp(mode, "kill") == 0 && rank == 1) raise(SIGKILL);
  /* "hang", and what the other ranks do meanwhile: wait for a message that never comes. */
  MPI_Recv(x, 16, MPI_DOUBLE, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
