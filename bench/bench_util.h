/*
 * bench_util.h -- what the benchmark programs share: a monotonic clock in
 * microseconds and the comparison qsort needs for their medians.
 */
#ifndef POSIXTRACE_BENCH_UTIL_H
#define POSIXTRACE_BENCH_UTIL_H

#include <time.h>

static inline double bench_now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#endif
