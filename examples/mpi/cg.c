/* A CG-like solver: conjugate gradients on a 1-D Laplacian distributed in blocks, with a halo
 * exchange of one value per neighbour (Sendrecv) per matrix-vector product and two Allreduce
 * dot products per iteration. Usage: cg [iterations] [local_n]
 * Prints the time from after MPI_Init to before MPI_Finalize on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, n;

static void matvec(const double* x, double* y) {
  double left = 0, right = 0;
  const int lo = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int hi = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  MPI_Sendrecv(&x[n - 1], 1, MPI_DOUBLE, hi, 0, &left, 1, MPI_DOUBLE, lo, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&x[0], 1, MPI_DOUBLE, lo, 1, &right, 1, MPI_DOUBLE, hi, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; ++i) {
    const double l = i > 0 ? x[i - 1] : left;
    const double r = i < n - 1 ? x[i + 1] : right;
    y[i] = 2 * x[i] - l - r;
  }
}

static double dot(const double* a, const double* b) {
  double local = 0, global = 0;
  for (int i = 0; i < n; ++i) local += a[i] * b[i];
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 300;
  n = argc > 2 ? atoi(argv[2]) : 20000;
  double *x = calloc((size_t)n, sizeof(double)), *r = malloc(sizeof(double) * n),
         *p = malloc(sizeof(double) * n), *q = malloc(sizeof(double) * n);
  for (int i = 0; i < n; ++i) r[i] = p[i] = 1.0;
  const double t0 = MPI_Wtime();
  double rr = dot(r, r);
  for (int it = 0; it < iterations; ++it) {
    matvec(p, q);
    const double alpha = rr / dot(p, q);
    for (int i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_new = dot(r, r);
    for (int i = 0; i < n; ++i) p[i] = r[i] + rr_new / rr * p[i];
    rr = rr_new;
  }
  const double t1 = MPI_Wtime();
  if (rank == 0) printf("cg: %d ranks, %d iterations, n=%d per rank: %.6f s, |r|^2 = %.3e\n", size, iterations, n, t1 - t0, rr);
  MPI_Finalize();
  return 0;
}
