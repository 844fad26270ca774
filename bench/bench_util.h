/*
 * bench_util.h -- what the benchmark programs share: a monotonic clock in
 * microseconds, the comparison qsort needs for their medians, and the
 * machine's own write rate to a file system.
 */
#ifndef POSIXTRACE_BENCH_UTIL_H
#define POSIXTRACE_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* The machine's own rate: plain write() of 64 KiB blocks into a new file
 * in dir, in MB/s, for `bytes` bytes (the file is removed after); -1 if
 * the file cannot be made or written.  On a VM whose host backs guest
 * memory lazily, pages the guest has not touched lately cost the host a
 * fault each: a first pass pays that, a pass right after reuses the pages
 * the first one freed. */
static inline double bench_write_rate(const char *dir, uint64_t bytes)
{
	static unsigned char blk[65536];
	char path[512];
	int fd, ok = 1;

	snprintf(path, sizeof path, "%s/posixtrace-bench-dd-XXXXXX", dir);
	if ((fd = mkstemp(path)) < 0)
		return -1;
	memset(blk, 0x5a, sizeof blk);
	double t0 = bench_now_us();
	for (uint64_t done = 0; ok && done < bytes; done += sizeof blk)
		ok = write(fd, blk, sizeof blk) == (ssize_t)sizeof blk;
	double dt = bench_now_us() - t0;
	close(fd);
	unlink(path);
	return ok ? (double)bytes / dt : -1; /* bytes per microsecond = MB/s */
}

#endif
