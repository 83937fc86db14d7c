/* Receives into memory never touched, for the tracer's fresh_bytes (2 ranks). Rank 0 sends
 * 256 KiB five times; rank 1 receives them into, in order:
 *   1. fresh anonymous memory (MPI_Recv): every page untouched -> fresh_bytes = 262144
 *   2. the same memory again: now resident -> no fresh_bytes
 *   3. fresh memory it wrote first (MPI_Irecv + MPI_Wait): resident -> no fresh_bytes
 *   4. fresh memory, through MPI_Sendrecv's receive half -> fresh_bytes = 262144
 *   5. fresh memory, but only 16 KiB of it (below the tracer's 64 KiB threshold) -> none
 * and rank 0 answers each through MPI_Sendrecv (its own receive buffers touched). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

enum { kBytes = 262144, kSmall = 16384 };

static char* fresh(size_t bytes) {
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "fresh_buffers: run on 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  static char out[kBytes], back[kBytes];
  memset(out, 1, sizeof out);
  memset(back, 2, sizeof back);
  if (rank == 0) {
    for (int i = 0; i < 3; ++i)
      MPI_Send(out, kBytes, MPI_CHAR, 1, i, MPI_COMM_WORLD);
    MPI_Sendrecv(out, kBytes, MPI_CHAR, 1, 3, back, kBytes, MPI_CHAR, 1, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Send(out, kSmall, MPI_CHAR, 1, 4, MPI_COMM_WORLD);
  } else {
    char* a = fresh(kBytes);
    MPI_Recv(a, kBytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(a, kBytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char* b = fresh(kBytes);
    memset(b, 3, kBytes);
    MPI_Request request;
    MPI_Irecv(b, kBytes, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    char* c = fresh(kBytes);
    MPI_Sendrecv(out, kBytes, MPI_CHAR, 0, 3, c, kBytes, MPI_CHAR, 0, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    char* d = fresh(kSmall);
    MPI_Recv(d, kSmall, MPI_CHAR, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    munmap(a, kBytes);
    munmap(b, kBytes);
    munmap(c, kBytes);
    munmap(d, kSmall);
  }
  MPI_Finalize();
  return 0;
}
