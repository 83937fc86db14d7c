/* MPI_THREAD_MULTIPLE: on each of 2 ranks, 3 threads exchange 50 messages each with the same
 * thread of the other rank (tag = thread number), concurrently. Writes nothing; exit status 1
 * if MPI does not provide MPI_THREAD_MULTIPLE or a message is wrong. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

enum { kThreads = 3, kMessages = 50 };
static int rank;
static int failures;

static void* exchange(void* arg) {
  const int t = (int)(long)arg;
  for (int i = 0; i < kMessages; ++i) {
    int out = rank * 1000 + t * 100 + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, 1 - rank, t, &in, 1, MPI_INT, 1 - rank, t, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (in != (1 - rank) * 1000 + t * 100 + i) __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, exchange, (void*)t);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
