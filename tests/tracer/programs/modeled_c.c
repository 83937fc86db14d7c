/* Calls every MPI function the tracer models, in the ways that matter to a replay (wildcards,
 * sub-communicators, derived datatypes, persistent requests, Waitany/Testsome polling,
 * Mprobe/Mrecv, v- and w-collectives, nonblocking collectives, intercommunicators), and counts
 * each call and its bytes (count x type size as passed, the tracer's definition) itself.
 * Run with 4 ranks; writes OUTDIR/counts-<rank>.txt: "MPI_Name calls bytes" per line.
 * Exit status 1 if a result is wrong (the program checks what it receives). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COUNTERS 128
static struct {
  const char* name;
  long long calls, bytes;
} counters[MAX_COUNTERS];
static int ncounters = 0;
static int failures = 0;

static void note(const char* name, long long bytes) {
  for (int i = 0; i < ncounters; ++i)
    if (strcmp(counters[i].name, name) == 0) {
      counters[i].calls++;
      counters[i].bytes += bytes;
      return;
    }
  counters[ncounters].name = name;
  counters[ncounters].calls = 1;
  counters[ncounters].bytes = bytes;
  ncounters++;
}

static long long tsize(MPI_Datatype t) {
  int s = 0;
  MPI_Type_size(t, &s);
  return s;
}

static void expect(int ok, const char* what, int rank) {
  if (!ok) {
    fprintf(stderr, "rank %d: wrong result: %s\n", rank, what);
    failures++;
  }
}

enum { N = 64 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  note("MPI_Init", 0);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4 || argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 4 %s OUTDIR\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double a[N * 4], b[N * 4];
  int ia[N], ib[N];
  for (int i = 0; i < N * 4; ++i) a[i] = rank * 1000 + i;
  for (int i = 0; i < N; ++i) ia[i] = rank;
  MPI_Status st;
  MPI_Request rq[8];

  /* A derived datatype: 3 blocks of 2 doubles, stride 4 (48 bytes). */
  MPI_Datatype vec;
  MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  const long long vec_bytes = tsize(vec);

  /* ---- blocking point to point ---- */
  if (rank % 2 == 0) {
    MPI_Send(a, 1, vec, right, 1, MPI_COMM_WORLD); note("MPI_Send", vec_bytes);
    MPI_Recv(b, 1, vec, left, 1, MPI_COMM_WORLD, &st); note("MPI_Recv", vec_bytes);
    MPI_Ssend(a, 5, MPI_INT, right, 2, MPI_COMM_WORLD); note("MPI_Ssend", 20);
    MPI_Recv(ib, 5, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); note("MPI_Recv", 20);
  } else {
    MPI_Recv(b, 1, vec, left, 1, MPI_COMM_WORLD, &st); note("MPI_Recv", vec_bytes);
    MPI_Send(a, 1, vec, right, 1, MPI_COMM_WORLD); note("MPI_Send", vec_bytes);
    MPI_Recv(ib, 5, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); note("MPI_Recv", 20);
    MPI_Ssend(a, 5, MPI_INT, right, 2, MPI_COMM_WORLD); note("MPI_Ssend", 20);
  }
  expect(b[0] == left * 1000, "vector receive", rank);

  /* Bsend through an attached buffer. */
  int bufsize = 4 * (N * 8 + MPI_BSEND_OVERHEAD);
  char* bsendbuf = malloc((size_t)bufsize);
  MPI_Buffer_attach(bsendbuf, bufsize);
  MPI_Bsend(a, N, MPI_DOUBLE, right, 3, MPI_COMM_WORLD); note("MPI_Bsend", N * 8);
  MPI_Recv(b, N, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  note("MPI_Recv", N * 8);
  expect(st.MPI_SOURCE == left && st.MPI_TAG == 3, "wildcard receive status", rank);

  /* Rsend: the receive is posted before the barrier, the send after it. */
  MPI_Irecv(b, N, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", N * 8);
  MPI_Barrier(MPI_COMM_WORLD); note("MPI_Barrier", 0);
  MPI_Rsend(a, N, MPI_DOUBLE, right, 4, MPI_COMM_WORLD); note("MPI_Rsend", N * 8);
  MPI_Wait(&rq[0], &st); note("MPI_Wait", 0);

  /* (MPI_ANY_TAG here could catch the right neighbour's next message, tag 6) */
  MPI_Sendrecv(a, 10, MPI_DOUBLE, right, 5, b, 20, MPI_DOUBLE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD,
               &st);
  note("MPI_Sendrecv", 80);
  expect(st.MPI_SOURCE == left, "sendrecv wildcard source", rank);
  MPI_Sendrecv_replace(b, 7, MPI_DOUBLE, left, 6, right, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  note("MPI_Sendrecv_replace", 56);

  /* ---- nonblocking point to point ---- */
  MPI_Irecv(b, N, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", N * 8);
  MPI_Irecv(ib, N, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &rq[1]); note("MPI_Irecv", N * 4);
  MPI_Isend(a, N, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &rq[2]); note("MPI_Isend", N * 8);
  MPI_Issend(ia, N, MPI_INT, right, 8, MPI_COMM_WORLD, &rq[3]); note("MPI_Issend", N * 4);
  MPI_Waitall(4, rq, MPI_STATUSES_IGNORE); note("MPI_Waitall", 0);

  /* Two tiny sends in flight at once: Open MPI may return one shared, already completed
     request handle for both (the tracer must still count two requests). */
  MPI_Irecv(b, 1, MPI_DOUBLE, left, 25, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", 8);
  MPI_Irecv(b + 1, 1, MPI_DOUBLE, left, 26, MPI_COMM_WORLD, &rq[1]); note("MPI_Irecv", 8);
  MPI_Isend(a, 1, MPI_DOUBLE, right, 25, MPI_COMM_WORLD, &rq[2]); note("MPI_Isend", 8);
  MPI_Isend(a + 1, 1, MPI_DOUBLE, right, 26, MPI_COMM_WORLD, &rq[3]); note("MPI_Isend", 8);
  MPI_Waitall(4, rq, MPI_STATUSES_IGNORE); note("MPI_Waitall", 0);

  MPI_Irecv(b, N, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", N * 8);
  MPI_Ibsend(a, N, MPI_DOUBLE, right, 9, MPI_COMM_WORLD, &rq[1]); note("MPI_Ibsend", N * 8);
  for (int done = 0; done < 2; ++done) {
    int index = -1;
    MPI_Waitany(2, rq, &index, &st); note("MPI_Waitany", 0);
  }
  int detach_size = 0;
  void* detached = NULL;
  MPI_Buffer_detach(&detached, &detach_size);
  free(bsendbuf);

  MPI_Irecv(b, N, MPI_DOUBLE, left, 10, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", N * 8);
  MPI_Barrier(MPI_COMM_WORLD); note("MPI_Barrier", 0);
  MPI_Irsend(a, N, MPI_DOUBLE, right, 10, MPI_COMM_WORLD, &rq[1]); note("MPI_Irsend", N * 8);
  MPI_Waitsome(2, rq, &(int){0}, (int[2]){0}, MPI_STATUSES_IGNORE); note("MPI_Waitsome", 0);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE); note("MPI_Waitall", 0);

  /* Polling: Test, Testany, Testsome, Testall until done (each call counted). */
  int flag = 0;
  MPI_Irecv(b, 3, MPI_DOUBLE, left, 11, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", 24);
  MPI_Isend(a, 3, MPI_DOUBLE, right, 11, MPI_COMM_WORLD, &rq[1]); note("MPI_Isend", 24);
  do { MPI_Test(&rq[0], &flag, &st); note("MPI_Test", 0); } while (!flag);
  do { MPI_Test(&rq[1], &flag, MPI_STATUS_IGNORE); note("MPI_Test", 0); } while (!flag);
  MPI_Irecv(b, 3, MPI_DOUBLE, left, 12, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", 24);
  MPI_Isend(a, 3, MPI_DOUBLE, right, 12, MPI_COMM_WORLD, &rq[1]); note("MPI_Isend", 24);
  for (int done = 0; done < 2;) {
    int index = -1;
    MPI_Testany(2, rq, &index, &flag, &st); note("MPI_Testany", 0);
    if (flag && index != MPI_UNDEFINED) done++;
  }
  MPI_Irecv(b, 3, MPI_DOUBLE, left, 13, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", 24);
  MPI_Isend(a, 3, MPI_DOUBLE, right, 13, MPI_COMM_WORLD, &rq[1]); note("MPI_Isend", 24);
  for (int done = 0; done < 2;) {
    int outcount = 0, indices[2];
    MPI_Status sts[2];
    MPI_Testsome(2, rq, &outcount, indices, sts); note("MPI_Testsome", 0);
    if (outcount != MPI_UNDEFINED) done += outcount;
  }
  MPI_Irecv(b, 3, MPI_DOUBLE, left, 14, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", 24);
  MPI_Isend(a, 3, MPI_DOUBLE, right, 14, MPI_COMM_WORLD, &rq[1]); note("MPI_Isend", 24);
  do { MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE); note("MPI_Testall", 0); } while (!flag);

  /* ---- persistent requests ---- */
  MPI_Request pr[8];
  MPI_Recv_init(b, N, MPI_DOUBLE, left, 15, MPI_COMM_WORLD, &pr[0]); note("MPI_Recv_init", N * 8);
  MPI_Send_init(a, N, MPI_DOUBLE, right, 15, MPI_COMM_WORLD, &pr[1]); note("MPI_Send_init", N * 8);
  MPI_Recv_init(ib, 4, MPI_INT, left, 16, MPI_COMM_WORLD, &pr[2]); note("MPI_Recv_init", 16);
  MPI_Ssend_init(ia, 4, MPI_INT, right, 16, MPI_COMM_WORLD, &pr[3]); note("MPI_Ssend_init", 16);
  for (int it = 0; it < 3; ++it) {
    MPI_Startall(4, pr); note("MPI_Startall", 0);
    MPI_Waitall(4, pr, MPI_STATUSES_IGNORE); note("MPI_Waitall", 0);
  }
  MPI_Start(&pr[0]); note("MPI_Start", 0);
  MPI_Start(&pr[1]); note("MPI_Start", 0);
  MPI_Wait(&pr[0], &st); note("MPI_Wait", 0);
  MPI_Wait(&pr[1], &st); note("MPI_Wait", 0);
  bufsize = 2 * (N * 8 + MPI_BSEND_OVERHEAD);
  bsendbuf = malloc((size_t)bufsize);
  MPI_Buffer_attach(bsendbuf, bufsize);
  MPI_Recv_init(b, N, MPI_DOUBLE, left, 17, MPI_COMM_WORLD, &pr[4]); note("MPI_Recv_init", N * 8);
  MPI_Bsend_init(a, N, MPI_DOUBLE, right, 17, MPI_COMM_WORLD, &pr[5]); note("MPI_Bsend_init", N * 8);
  MPI_Recv_init(b + N, N, MPI_DOUBLE, left, 18, MPI_COMM_WORLD, &pr[6]); note("MPI_Recv_init", N * 8);
  MPI_Rsend_init(a, N, MPI_DOUBLE, right, 18, MPI_COMM_WORLD, &pr[7]); note("MPI_Rsend_init", N * 8);
  MPI_Start(&pr[4]); note("MPI_Start", 0);
  MPI_Start(&pr[6]); note("MPI_Start", 0);
  MPI_Barrier(MPI_COMM_WORLD); note("MPI_Barrier", 0);
  MPI_Start(&pr[5]); note("MPI_Start", 0);
  MPI_Start(&pr[7]); note("MPI_Start", 0);
  MPI_Waitall(4, pr + 4, MPI_STATUSES_IGNORE); note("MPI_Waitall", 0);
  MPI_Buffer_detach(&detached, &detach_size);
  free(bsendbuf);
  for (int i = 0; i < 8; ++i) { MPI_Request_free(&pr[i]); note("MPI_Request_free", 0); }

  /* ---- probes ---- */
  MPI_Send(a, 6, MPI_DOUBLE, right, 20, MPI_COMM_WORLD); note("MPI_Send", 48);
  MPI_Probe(left, 20, MPI_COMM_WORLD, &st); note("MPI_Probe", 0);
  int count = 0;
  MPI_Get_count(&st, MPI_DOUBLE, &count);
  MPI_Recv(b, count, MPI_DOUBLE, left, 20, MPI_COMM_WORLD, &st); note("MPI_Recv", count * 8);
  MPI_Isend(a, 2, MPI_DOUBLE, right, 21, MPI_COMM_WORLD, &rq[0]); note("MPI_Isend", 16);
  do { MPI_Iprobe(MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &flag, &st); note("MPI_Iprobe", 0); } while (!flag);
  MPI_Recv(b, 2, MPI_DOUBLE, st.MPI_SOURCE, 21, MPI_COMM_WORLD, &st); note("MPI_Recv", 16);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE); note("MPI_Wait", 0);
  MPI_Message msg;
  MPI_Send(a, 9, MPI_DOUBLE, right, 22, MPI_COMM_WORLD); note("MPI_Send", 72);
  MPI_Mprobe(MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &msg, &st); note("MPI_Mprobe", 0);
  MPI_Mrecv(b, 9, MPI_DOUBLE, &msg, &st); note("MPI_Mrecv", 72);
  MPI_Isend(a, 4, MPI_DOUBLE, right, 23, MPI_COMM_WORLD, &rq[0]); note("MPI_Isend", 32);
  do { MPI_Improbe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st); note("MPI_Improbe", 0); } while (!flag);
  MPI_Imrecv(b, 4, MPI_DOUBLE, &msg, &rq[1]); note("MPI_Imrecv", 32);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE); note("MPI_Waitall", 0);

  /* Cancel a receive nobody sends to; Request_free an active send. */
  MPI_Irecv(b, 1, MPI_DOUBLE, rank, 999, MPI_COMM_WORLD, &rq[0]); note("MPI_Irecv", 8);
  MPI_Cancel(&rq[0]); note("MPI_Cancel", 0);
  MPI_Wait(&rq[0], &st); note("MPI_Wait", 0);
  MPI_Test_cancelled(&st, &flag); note("MPI_Test_cancelled", 0);
  expect(flag, "cancelled receive", rank);
  MPI_Isend(a, 5, MPI_DOUBLE, right, 24, MPI_COMM_WORLD, &rq[0]); note("MPI_Isend", 40);
  MPI_Request_free(&rq[0]); note("MPI_Request_free", 0);
  MPI_Recv(b, 5, MPI_DOUBLE, left, 24, MPI_COMM_WORLD, MPI_STATUS_IGNORE); note("MPI_Recv", 40);

  /* ---- collectives on MPI_COMM_WORLD ---- */
  int counts[4] = {1, 2, 3, 4}, displs[4] = {0, 1, 3, 6}, rcounts[4], rdispls[4];
  for (int i = 0; i < 4; ++i) { rcounts[i] = rank + 1; rdispls[i] = i * 4; }
  MPI_Datatype types[4] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
  int wcounts[4] = {2, 2, 2, 2}, wdispls[4] = {0, 16, 32, 48};
  MPI_Barrier(MPI_COMM_WORLD); note("MPI_Barrier", 0);
  MPI_Bcast(a, N, MPI_DOUBLE, 1, MPI_COMM_WORLD); note("MPI_Bcast", N * 8);
  MPI_Reduce(a, b, N, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD); note("MPI_Reduce", N * 8);
  MPI_Allreduce(a, b, N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); note("MPI_Allreduce", N * 8);
  MPI_Allreduce(MPI_IN_PLACE, b, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); note("MPI_Allreduce", 64);
  MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); note("MPI_Reduce_scatter", 80);
  MPI_Reduce_scatter_block(a, b, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); note("MPI_Reduce_scatter_block", 24);
  MPI_Scan(a, b, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); note("MPI_Scan", 40);
  MPI_Exscan(a, b, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); note("MPI_Exscan", 40);
  MPI_Gather(a, 3, MPI_DOUBLE, b, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD); note("MPI_Gather", 24);
  MPI_Gatherv(a, rank + 1, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 3, MPI_COMM_WORLD);
  note("MPI_Gatherv", (rank + 1) * 8);
  MPI_Scatter(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  note("MPI_Scatter", rank == 1 ? 16 : 0);
  MPI_Scatterv(a, counts, displs, MPI_DOUBLE, b, rank + 1, MPI_DOUBLE, 2, MPI_COMM_WORLD);
  note("MPI_Scatterv", rank == 2 ? 80 : 0);
  MPI_Allgather(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, MPI_COMM_WORLD); note("MPI_Allgather", 16);
  for (int i = 0; i < 4; ++i) b[i * 3] = rank;
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 3, MPI_DOUBLE, MPI_COMM_WORLD);
  note("MPI_Allgather", 24);
  MPI_Allgatherv(a, rank + 1, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  note("MPI_Allgatherv", (rank + 1) * 8);
  MPI_Alltoall(a, 4, MPI_DOUBLE, b, 4, MPI_DOUBLE, MPI_COMM_WORLD); note("MPI_Alltoall", 32);
  MPI_Alltoallv(a, rcounts, rdispls, MPI_DOUBLE, b, counts, rdispls, MPI_DOUBLE, MPI_COMM_WORLD);
  /* rank r sends r+1 doubles to every peer and receives p+1 from peer p */
  note("MPI_Alltoallv", 4 * (rank + 1) * 8);
  MPI_Alltoallw(a, wcounts, wdispls, types, b, wcounts, wdispls, types, MPI_COMM_WORLD);
  note("MPI_Alltoallw", 4 * 2 * 8);

  /* ---- nonblocking collectives ---- */
  MPI_Request cr[17];
  double c1[N], c2[N], c3[N], c4[N], c5[N], c6[N], c7[N], c8[N], c9[N], c10[N], c11[N],
      c12[N], c13[N], c14[N], c15[N], c16[N];
  MPI_Ibarrier(MPI_COMM_WORLD, &cr[0]); note("MPI_Ibarrier", 0);
  MPI_Ibcast(c1, 8, MPI_DOUBLE, 3, MPI_COMM_WORLD, &cr[1]); note("MPI_Ibcast", 64);
  MPI_Ireduce(a, c2, 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &cr[2]); note("MPI_Ireduce", 64);
  MPI_Iallreduce(a, c3, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &cr[3]); note("MPI_Iallreduce", 64);
  MPI_Ireduce_scatter(a, c4, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &cr[4]);
  note("MPI_Ireduce_scatter", 80);
  MPI_Ireduce_scatter_block(a, c5, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &cr[5]);
  note("MPI_Ireduce_scatter_block", 16);
  MPI_Iscan(a, c6, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &cr[6]); note("MPI_Iscan", 24);
  MPI_Iexscan(a, c7, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &cr[7]); note("MPI_Iexscan", 24);
  MPI_Igather(a, 2, MPI_DOUBLE, c8, 2, MPI_DOUBLE, 1, MPI_COMM_WORLD, &cr[8]); note("MPI_Igather", 16);
  MPI_Igatherv(a, rank + 1, MPI_DOUBLE, c9, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD, &cr[9]);
  note("MPI_Igatherv", (rank + 1) * 8);
  MPI_Iscatter(a, 2, MPI_DOUBLE, c10, 2, MPI_DOUBLE, 2, MPI_COMM_WORLD, &cr[10]);
  note("MPI_Iscatter", rank == 2 ? 16 : 0);
  MPI_Iscatterv(a, counts, displs, MPI_DOUBLE, c11, rank + 1, MPI_DOUBLE, 3, MPI_COMM_WORLD, &cr[11]);
  note("MPI_Iscatterv", rank == 3 ? 80 : 0);
  MPI_Iallgather(a, 2, MPI_DOUBLE, c12, 2, MPI_DOUBLE, MPI_COMM_WORLD, &cr[12]); note("MPI_Iallgather", 16);
  MPI_Iallgatherv(a, rank + 1, MPI_DOUBLE, c13, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &cr[13]);
  note("MPI_Iallgatherv", (rank + 1) * 8);
  MPI_Ialltoall(a, 2, MPI_DOUBLE, c14, 2, MPI_DOUBLE, MPI_COMM_WORLD, &cr[14]); note("MPI_Ialltoall", 16);
  MPI_Ialltoallv(a, rcounts, rdispls, MPI_DOUBLE, c15, counts, rdispls, MPI_DOUBLE, MPI_COMM_WORLD, &cr[15]);
  note("MPI_Ialltoallv", 4 * (rank + 1) * 8);
  MPI_Ialltoallw(a, wcounts, wdispls, types, c16, wcounts, wdispls, types, MPI_COMM_WORLD, &cr[16]);
  note("MPI_Ialltoallw", 64);
  MPI_Waitall(17, cr, MPI_STATUSES_IGNORE); note("MPI_Waitall", 0);

  /* ---- communicators ---- */
  MPI_Comm half, three, shared, dup, dupi, idup, created, pair, cart, row, graph, dist, dista,
      inter, merged;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half); note("MPI_Comm_split", 0);
  MPI_Comm_split(MPI_COMM_WORLD, rank < 3 ? 0 : MPI_UNDEFINED, rank, &three);
  note("MPI_Comm_split", 0);
  expect((rank < 3) == (three != MPI_COMM_NULL), "MPI_UNDEFINED split", rank);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  note("MPI_Comm_split_type", 0);
  MPI_Comm_dup(half, &dup); note("MPI_Comm_dup", 0);
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dupi); note("MPI_Comm_dup_with_info", 0);
  MPI_Comm_idup(MPI_COMM_WORLD, &idup, &rq[0]); note("MPI_Comm_idup", 0);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE); note("MPI_Wait", 0);
  MPI_Group world_group, first3, evens;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int first3_ranks[3] = {0, 1, 2}, even_ranks[2] = {0, 2};
  MPI_Group_incl(world_group, 3, first3_ranks, &first3);
  MPI_Group_incl(world_group, 2, even_ranks, &evens);
  MPI_Comm_create(MPI_COMM_WORLD, first3, &created); note("MPI_Comm_create", 0);
  pair = MPI_COMM_NULL;
  if (rank % 2 == 0) { MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &pair); note("MPI_Comm_create_group", 0); }
  int dims[2] = {2, 2}, periods[2] = {1, 1}, remain[2] = {0, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart); note("MPI_Cart_create", 0);
  MPI_Cart_sub(cart, remain, &row); note("MPI_Cart_sub", 0);
  int gindex[4] = {2, 4, 6, 8}, gedges[8] = {1, 3, 0, 2, 1, 3, 2, 0};
  MPI_Graph_create(MPI_COMM_WORLD, 4, gindex, gedges, 0, &graph); note("MPI_Graph_create", 0);
  int src[1] = {left}, dst[1] = {right};
  int weights[1] = {1};
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, weights, 1, dst, weights,
                                 MPI_INFO_NULL, 0, &dista);
  note("MPI_Dist_graph_create_adjacent", 0);
  int degrees[1] = {1};
  MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, degrees, dst, weights, MPI_INFO_NULL, 0, &dist);
  note("MPI_Dist_graph_create", 0);
  /* Each half's leader is its hrank 0: world rank 2 (evens) and 3 (odds). */
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 3 : 2, 30, &inter);
  note("MPI_Intercomm_create", 0);
  MPI_Intercomm_merge(inter, rank % 2, &merged); note("MPI_Intercomm_merge", 0);

  /* Traffic on the new communicators. */
  int hrank;
  MPI_Comm_rank(half, &hrank);
  MPI_Allreduce(a, b, 4, MPI_DOUBLE, MPI_SUM, half); note("MPI_Allreduce", 32);
  MPI_Bcast(b, 4, MPI_DOUBLE, 1, dup); note("MPI_Bcast", 32);
  if (three != MPI_COMM_NULL) { MPI_Barrier(three); note("MPI_Barrier", 0); }
  if (created != MPI_COMM_NULL) { MPI_Allreduce(a, b, 2, MPI_DOUBLE, MPI_SUM, created); note("MPI_Allreduce", 16); }
  if (pair != MPI_COMM_NULL) {
    int prank;
    MPI_Comm_rank(pair, &prank);
    MPI_Sendrecv(a, 3, MPI_DOUBLE, 1 - prank, 40, b, 3, MPI_DOUBLE, 1 - prank, 40, pair, MPI_STATUS_IGNORE);
    note("MPI_Sendrecv", 24);
  }
  int csrc, cdst;
  MPI_Cart_shift(cart, 1, 1, &csrc, &cdst);
  MPI_Sendrecv(a, 2, MPI_DOUBLE, cdst, 41, b, 2, MPI_DOUBLE, csrc, 41, cart, MPI_STATUS_IGNORE);
  note("MPI_Sendrecv", 16);
  MPI_Allgather(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, row); note("MPI_Allgather", 8);
  MPI_Barrier(graph); note("MPI_Barrier", 0);
  MPI_Barrier(dista); note("MPI_Barrier", 0);
  MPI_Barrier(dist); note("MPI_Barrier", 0);
  MPI_Barrier(shared); note("MPI_Barrier", 0);
  MPI_Barrier(dupi); note("MPI_Barrier", 0);
  MPI_Barrier(idup); note("MPI_Barrier", 0);
  /* Across the intercommunicator: rank h of the even group talks to rank h of the odd one. */
  if (rank % 2 == 0) {
    MPI_Send(a, 6, MPI_DOUBLE, hrank, 42, inter); note("MPI_Send", 48);
  } else {
    MPI_Recv(b, 6, MPI_DOUBLE, hrank, 42, inter, &st); note("MPI_Recv", 48);
    expect(st.MPI_SOURCE == hrank, "intercommunicator status", rank);
  }
  /* An intercommunicator broadcast from even-group rank 0. */
  int root = rank % 2 == 0 ? (hrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Bcast(a, 5, MPI_DOUBLE, root, inter); note("MPI_Bcast", 40);
  MPI_Allreduce(a, b, 3, MPI_DOUBLE, MPI_SUM, merged); note("MPI_Allreduce", 24);

  MPI_Comm* to_free[] = {&half, &three, &shared, &dup, &dupi, &idup, &created, &pair, &cart, &row,
                         &graph, &dist, &dista, &inter, &merged};
  for (size_t i = 0; i < sizeof to_free / sizeof to_free[0]; ++i)
    if (*to_free[i] != MPI_COMM_NULL) { MPI_Comm_free(to_free[i]); note("MPI_Comm_free", 0); }
  MPI_Group_free(&world_group);
  MPI_Group_free(&first3);
  MPI_Group_free(&evens);
  MPI_Type_free(&vec);

  char path[4096];
  snprintf(path, sizeof path, "%s/counts-%d.txt", argv[1], rank);
  note("MPI_Finalize", 0);
  FILE* f = fopen(path, "w");
  for (int i = 0; i < ncounters; ++i)
    fprintf(f, "%s %lld %lld\n", counters[i].name, counters[i].calls, counters[i].bytes);
  fclose(f);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
