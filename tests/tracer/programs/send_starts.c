/* Sends from known places in a page, for the tracer's send_page_offset (2 ranks). Rank 0 sends
 * 100 B from a page-aligned buffer at offsets 0, 16, 2048 and 4095 (MPI_Send, MPI_Isend,
 * MPI_Ssend, MPI_Sendrecv's send half), then 8 doubles of a vector type whose true lower bound is
 * 24 B (from the buffer's start: offset 24), then from offset 16 an MPI_Sendrecv_replace and an
 * MPI_Bsend, which send from copies of their own (no start recorded); rank 1 receives them and
 * answers both exchanges from offset 512. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "send_starts: run on 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  char* page = NULL;
  if (posix_memalign((void**)&page, 4096, 3 * 4096) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(page, 1, 3 * 4096);
  char in[8192];
  /* Every third double from the fourth on: true lower bound 24 B. */
  MPI_Datatype strided, shifted;
  MPI_Type_vector(8, 1, 3, MPI_DOUBLE, &strided);
  int one = 1;
  MPI_Aint at = 24;
  MPI_Type_create_hindexed(1, &one, &at, strided, &shifted);
  MPI_Type_commit(&shifted);
  if (rank == 0) {
    MPI_Request request;
    MPI_Send(page, 100, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
    MPI_Isend(page + 16, 100, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Ssend(page + 2048, 100, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
    MPI_Sendrecv(page + 4095, 100, MPI_CHAR, 1, 3, in, 100, MPI_CHAR, 1, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Send(page, 1, shifted, 1, 4, MPI_COMM_WORLD);
    MPI_Sendrecv_replace(page + 16, 100, MPI_CHAR, 1, 5, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    static char attached[100 + MPI_BSEND_OVERHEAD];
    MPI_Buffer_attach(attached, sizeof attached);
    MPI_Bsend(page + 16, 100, MPI_CHAR, 1, 6, MPI_COMM_WORLD);
    void* detached = NULL;
    int detached_bytes = 0;
    MPI_Buffer_detach(&detached, &detached_bytes);
  } else {
    for (int tag = 0; tag < 3; ++tag)
      MPI_Recv(in, 100, MPI_CHAR, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(page + 512, 100, MPI_CHAR, 0, 3, in, 100, MPI_CHAR, 0, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Recv(in, 8, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(page + 512, 100, MPI_CHAR, 0, 5, in, 100, MPI_CHAR, 0, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Recv(in, 100, MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Type_free(&shifted);
  MPI_Type_free(&strided);
  free(page);
  MPI_Finalize();
  return 0;
}
