/* osu_latency's timed loop for one size, shared by the reference program (osu_style_pingpong.c)
 * and the side-by-side comparison (latency_side_by_side.cpp), so that both run the same loop. */
#ifndef COMMGAUGE_OSU_LOOP_H
#define COMMGAUGE_OSU_LOOP_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* osu_latency's counts: 100 warm-up and 10,000 timed iterations up to LARGE_MESSAGE_SIZE
 * (8 KiB), 10 and 1,000 above. */
int osu_skip(long bytes);
int osu_iterations(long bytes);

/* Blocking ping-pongs of `bytes` between ranks 0 and 1 of `comm` (rank 0 sends first), after a
 * barrier: osu_skip warm-up, then osu_iterations timed ones. On rank 0 `one_way_us` (room for
 * osu_iterations values) gets every timed iteration's round trip / 2, in microseconds, sorted
 * ascending; returns the sum of the timed round trips in seconds (OSU's figure is
 * sum / (2 iterations)). */
double osu_pingpong(MPI_Comm comm, long bytes, char* sbuf, char* rbuf, double* one_way_us);

/* The median of sorted `v` and its distribution-free 95 % interval from order statistics (the
 * normal approximation of the binomial, exact enough for 1,000 samples and more). */
void osu_median_interval(const double* sorted, int n, double* median, double* lower, double* upper);

/* Message sizes from argv[first] on into `sizes` (room for `capacity`); without any there the
 * `count` defaults already in `sizes` stay. Returns how many, or -1 if one lies outside
 * 1..max_bytes. */
int osu_sizes_from_args(int argc, char** argv, int first, long* sizes, int count, int capacity,
                        long max_bytes);

/* Sorts `v` (n values) ascending. */
void osu_sort(double* v, int n);

/* Sorts `v` and prints "  WHAT median [lower, upper]" (osu_median_interval, 3 decimals). */
void osu_print_median(const char* what, double* v, int n);

#ifdef __cplusplus
}
#endif

#endif
