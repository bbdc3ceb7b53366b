/*
 * bench_clock.h - what the C benchmarks (core_bench.c, cuckoo_bench.c) time
 * with: a monotonic clock in seconds and the median of a run's samples.
 * Static inline, so each bench includes it with no object of its own; it
 * wants _GNU_SOURCE (or _POSIX_C_SOURCE) for clock_gettime, as the benches
 * are built.
 */
#ifndef AMQ_BENCH_CLOCK_H
#define AMQ_BENCH_CLOCK_H

#include <stdlib.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC. */
static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n); sorts v. */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), by_value);
	return v[n / 2];
}

#endif
