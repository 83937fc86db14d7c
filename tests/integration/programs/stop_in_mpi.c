/* A rank that stops itself (SIGSTOP) at a chosen point of an MPI job's start or end, launched
 * beside commgauge's ranks (mpirun ... commgauge ... : -np 1 stop_in_mpi MODE) by the liveness
 * tests, so that commgauge's collective start-up and end calls meet a stopped rank for certain:
 *   init      stops before MPI_Init (the others wait in MPI_Init);
 *   split     stops after MPI_Init (the others wait in the pair's MPI_Comm_split);
 *   finalize  plays a rank outside commgauge's pair: joins the split, waits for the source's
 *             release (commgauge's tag 0x6367 from rank 0), then stops before MPI_Finalize (the
 *             others wait in MPI_Finalize). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "init") != 0 && strcmp(mode, "split") != 0 && strcmp(mode, "finalize") != 0) {
    fprintf(stderr, "usage: stop_in_mpi init|split|finalize\n");
    return 2;
  }
  if (strcmp(mode, "init") == 0) raise(SIGSTOP);
  MPI_Init(&argc, &argv);
  if (strcmp(mode, "split") == 0) raise(SIGSTOP);
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 1, &pair);
  MPI_Recv(NULL, 0, MPI_BYTE, 0, 0x6367, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  raise(SIGSTOP);
  MPI_Finalize();
  return 0;
}
