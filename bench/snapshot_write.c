/*
 * snapshot_write.c -- where a flight recorder's snapshot spends its time,
 * in one process and with no recorder (run by `make bench`): two threads
 * record EVENTS 16-byte events in all into a 64 MiB loop stream, which
 * holds them all; then ROUNDS snapshots of the whole of it
 * (pt_ext_snapshot_copy, pt_ext_snapshot_write) are taken, each timed in
 * three parts:
 *   - the copy of the window out of the stream (what the follower's
 *     thread does under the trace id's lock);
 *   - the log written from the copy to a file in /dev/shm (tmpfs: fsync
 *     does nothing): the writer's own work, merge, encoding, CRCs,
 *     summary, and the copy into the page cache;
 *   - the same to a file in the build directory (a disk's file system):
 *     that plus fsync.
 * ns per event of each (median of the rounds, and by CPU time for the
 * writing, which a loaded machine does not inflate: the calling thread's,
 * and the process's, which adds the log's own thread that makes the
 * writes, log/logwbg.c; the recording threads have ended by then).
 * EVENTS is 500 000: what a 100 ms window holds at 5 M events/s, the
 * load of issue 52.  `valgrind --tool=callgrind
 * --toggle-collect=pt_ext_snapshot_write build/bench/snapshot_write 1`
 * counts the writer's instructions per event (one round, tmpfs only).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include "bench_util.h"
#include "../src/ext.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif
#define EVENTS 500000
#define ROUNDS 9

static trace_event_id_t ev;

static void *worker(void *arg)
{
	uint64_t p[2] = { (uintptr_t)arg, 0 };
	for (; p[1] < EVENTS / 2; p[1]++)
		posix_trace_event(ev, p, sizeof p);
	return NULL;
}

static double proc_cpu_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double mono_ms(void)
{
	return bench_now_us() / 1e3;
}

/* One snapshot of everything into a new file in dir: ms of the copy, of
 * the write (wall, the calling thread's CPU, all threads' CPU), events
 * written. */
static int one(trace_id_t trid, const char *dir, double *copy, double *wr, double *wr_cpu,
               double *wr_pcpu, uint64_t *events)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/pt-bench-snapwrite-%d.ptlog", dir, (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "bench/snapshot_write: %s: %s\n", path, strerror(errno));
		return -1;
	}
	struct pt_ext_snapcopy *cp;
	struct pt_ext_snap s;
	double t0 = mono_ms();
	int rc = pt_ext_snapshot_copy(trid, 0, UINT64_MAX / 2, NULL, &cp);
	double t1 = mono_ms(), c1 = bench_cpu_us(), p1 = proc_cpu_us();
	if (!rc)
		rc = pt_ext_snapshot_write(cp, fd, &s);
	double t2 = mono_ms(), c2 = bench_cpu_us(), p2 = proc_cpu_us();
	if (!rc || cp)
		pt_ext_snapshot_free(cp);
	close(fd);
	unlink(path);
	if (rc) {
		fprintf(stderr, "bench/snapshot_write: %s: %s\n", path, strerror(rc));
		return -1;
	}
	*copy = t1 - t0, *wr = t2 - t1, *wr_cpu = (c2 - c1) / 1e3, *wr_pcpu = (p2 - p1) / 1e3;
	*events = s.events;
	return 0;
}

static int by_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : ROUNDS;
	trace_attr_t a;
	trace_id_t trid;
	pthread_t th[2];

	if (rounds < 1 || rounds > 99)
		rounds = ROUNDS;
	posix_trace_attr_init(&a);
	posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP);
	posix_trace_attr_setstreamsize(&a, 64u << 20);
	if (posix_trace_create(0, &a, &trid) || posix_trace_eventid_open("bench_snap", &ev) ||
	    posix_trace_start(trid)) {
		printf("bench/snapshot_write: cannot make the stream: skipped\n");
		return 0;
	}
	posix_trace_attr_destroy(&a);
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);

	double copy[2][99], wr[2][99], cpu[2][99], pcpu[2][99];
	uint64_t n = 0;
	const char *dirs[2] = { "/dev/shm", PT_BUILD_DIR };
	for (int r = 0; r < rounds; r++)
		for (int d = 0; d < (rounds == 1 ? 1 : 2); d++)
			if (one(trid, dirs[d], &copy[d][r], &wr[d][r], &cpu[d][r], &pcpu[d][r], &n))
				return 1;
	posix_trace_shutdown(trid);
	if (rounds == 1) {
		printf("one snapshot of %llu events: copy %.2f ms, write %.2f ms\n",
		       (unsigned long long)n, copy[0][0], wr[0][0]);
		return 0;
	}
	for (int d = 0; d < 2; d++) {
		qsort(copy[d], (size_t)rounds, sizeof(double), by_d);
		qsort(wr[d], (size_t)rounds, sizeof(double), by_d);
		qsort(cpu[d], (size_t)rounds, sizeof(double), by_d);
		qsort(pcpu[d], (size_t)rounds, sizeof(double), by_d);
	}
	double load[1] = { -1 };
	getloadavg(load, 1);
	int m = rounds / 2;
	double k = 1e6 / (double)(n ? n : 1);
	printf("a snapshot's parts: %llu events of 16 bytes (a 100 ms window at 5 M events/s), "
	       "median of %d (load average %.2f)\n\n"
	       "| part | ms | ns/event | CPU ns/event, calling thread | all threads |\n"
	       "|---|---:|---:|---:|---:|\n"
	       "| copy out of the stream | %.2f | %.1f | | |\n"
	       "| log written (tmpfs, no fsync) | %.2f | %.1f | %.1f | %.1f |\n"
	       "| log written and fsync'ed (%s) | %.2f | %.1f | %.1f | %.1f |\n",
	       (unsigned long long)n, rounds, load[0], copy[0][m], copy[0][m] * k, wr[0][m],
	       wr[0][m] * k, cpu[0][m] * k, pcpu[0][m] * k, PT_BUILD_DIR, wr[1][m], wr[1][m] * k,
	       cpu[1][m] * k, pcpu[1][m] * k);
	bench_json("snapshot_write", "500k events", "copy_ms", copy[0][m], "write_ms", wr[0][m],
	           "write_cpu_ns_per_event", cpu[0][m] * k, "write_all_cpu_ns_per_event",
	           pcpu[0][m] * k, "write_fsync_ms", wr[1][m], NULL);
	return 0;
}
