/* A 2-D five-point stencil (Jacobi) on a periodic process grid: halo exchange with the four
 * neighbours (Irecv/Isend/Waitall), a sweep over the local block, and every 10 iterations an
 * Allreduce of the residual. Usage: stencil2d [iterations] [local_n]
 * Prints the time from after MPI_Init to before MPI_Finalize on rank 0. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 200;
  const int n = argc > 2 ? atoi(argv[2]) : 128;
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  int up, down, left, right;
  MPI_Cart_shift(grid, 0, 1, &up, &down);
  MPI_Cart_shift(grid, 1, 1, &left, &right);
  const int w = n + 2;
  double* a = calloc((size_t)w * w, sizeof(double));
  double* b = calloc((size_t)w * w, sizeof(double));
  double* col_out[2] = {malloc(sizeof(double) * n), malloc(sizeof(double) * n)};
  double* col_in[2] = {malloc(sizeof(double) * n), malloc(sizeof(double) * n)};
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j) a[i * w + j] = (double)((rank * 7 + i * 3 + j) % 11);
  const double t0 = MPI_Wtime();
  double residual = 0;
  for (int it = 0; it < iterations; ++it) {
    MPI_Request req[8];
    MPI_Irecv(&a[0 * w + 1], n, MPI_DOUBLE, up, 0, grid, &req[0]);
    MPI_Irecv(&a[(n + 1) * w + 1], n, MPI_DOUBLE, down, 1, grid, &req[1]);
    MPI_Irecv(col_in[0], n, MPI_DOUBLE, left, 2, grid, &req[2]);
    MPI_Irecv(col_in[1], n, MPI_DOUBLE, right, 3, grid, &req[3]);
    for (int i = 1; i <= n; ++i) {
      col_out[0][i - 1] = a[i * w + 1];
      col_out[1][i - 1] = a[i * w + n];
    }
    MPI_Isend(&a[1 * w + 1], n, MPI_DOUBLE, up, 1, grid, &req[4]);
    MPI_Isend(&a[n * w + 1], n, MPI_DOUBLE, down, 0, grid, &req[5]);
    MPI_Isend(col_out[0], n, MPI_DOUBLE, left, 3, grid, &req[6]);
    MPI_Isend(col_out[1], n, MPI_DOUBLE, right, 2, grid, &req[7]);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    for (int i = 1; i <= n; ++i) {
      a[i * w + 0] = col_in[0][i - 1];
      a[i * w + n + 1] = col_in[1][i - 1];
    }
    double local = 0;
    for (int i = 1; i <= n; ++i)
      for (int j = 1; j <= n; ++j) {
        const double v = 0.25 * (a[(i - 1) * w + j] + a[(i + 1) * w + j] + a[i * w + j - 1] + a[i * w + j + 1]);
        local += fabs(v - a[i * w + j]);
        b[i * w + j] = v;
      }
    double* t = a;
    a = b;
    b = t;
    if (it % 10 == 9) MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, grid);
  }
  const double t1 = MPI_Wtime();
  if (rank == 0)
    printf("stencil2d: %d ranks (%dx%d), %d iterations, %dx%d local: %.6f s, residual %.3e\n", size,
           dims[0], dims[1], iterations, n, n, t1 - t0, residual);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
