/*
 * bench/clock -- how true the timestamps are on a loaded machine.
 *
 * 2 x (CPUs + 1) threads record bursts of events and spin between them;
 * each, every few bursts, and the main thread every 200 us, reads
 * CLOCK_REALTIME (t0), records a mark, reads it again (t1) and keeps
 * (t0, t1).  The marks are read back live by a reader thread (getnext on a
 * LOOP stream) and, in a second run, from a FLUSH log written meanwhile
 * and opened with posix_trace_open.  For each mark: its distance from the
 * middle of [t0, t1] (the real time, known to within half the bracket)
 * and how far outside the bracket it lies (0 when it is inside).  Prints
 * the median distance, the worst over the brackets 1 us wide or less (a
 * preempted thread's bracket is wide, and its middle no witness), the
 * worst distance outside any bracket, and the median bracket width.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <trace.h>
#include "bench_util.h"

#define MAXM (1 << 20)
struct bracket { int64_t t0, t1; };
static struct bracket *br;       /* by mark number */
static atomic_uint nmarks;
static trace_event_id_t ev_busy, ev_mark;
static atomic_int stop;

static int64_t real_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void mark(void)
{
	unsigned k = atomic_fetch_add(&nmarks, 1);
	if (k >= MAXM)
		return;
	int64_t t0 = real_ns();
	posix_trace_event(ev_mark, &k, sizeof k);
	br[k].t1 = real_ns();
	br[k].t0 = t0;
}

static void *busy(void *arg)
{
	uint64_t x = (uintptr_t)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int b = 0; b < 8; b++) {
			for (int i = 0; i < 8; i++)
				posix_trace_event(ev_busy, &x, sizeof x);
			for (volatile int s = 0; s < 20000; s++)
				;
		}
		mark();
	}
	return NULL;
}

static void load(int ms)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = (int)(2 * ((cpus < 1 ? 1 : cpus > 15 ? 15 : cpus) + 1));
	pthread_t th[32];

	atomic_store(&stop, 0);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, busy, (void *)(uintptr_t)i);
	int64_t end = real_ns() + (int64_t)ms * 1000000;
	while (real_ns() < end) {
		mark();
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* the marks read: number and timestamp (brackets are complete only once
 * the load is over) */
static unsigned *rk;
static int64_t *rts;
static size_t nread;

static void take(const struct posix_trace_event_info *e, const void *data, size_t len)
{
	unsigned k;
	if (e->posix_event_id != ev_mark || len != sizeof k || nread >= MAXM)
		return;
	memcpy(&k, data, sizeof k);
	rk[nread] = k;
	rts[nread++] = (int64_t)e->posix_timestamp.tv_sec * 1000000000 + e->posix_timestamp.tv_nsec;
}

static atomic_int reader_done;
static void *reader(void *arg)
{
	trace_id_t trid = *(trace_id_t *)arg;
	struct posix_trace_event_info e;
	char buf[64];
	size_t len;
	int none;
	while (!atomic_load(&reader_done)) {
		if (posix_trace_trygetnext_event(trid, &e, buf, sizeof buf, &len, &none) == 0 && !none)
			take(&e, buf, len);
		else if (none)
			nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	}
	return NULL;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *what)
{
	static int64_t dmid[MAXM], dout[MAXM], width[MAXM], dtight[MAXM];
	int64_t tight = 0; /* worst |ts - middle| of brackets 1 us wide or less */
	size_t n = 0, nt = 0;

	for (size_t i = 0; i < nread; i++) {
		if (rk[i] >= MAXM)
			continue;
		const struct bracket *b = &br[rk[i]];
		int64_t ts = rts[i], mid = b->t0 + (b->t1 - b->t0) / 2;
		dmid[n] = ts > mid ? ts - mid : mid - ts;
		dout[n] = ts < b->t0 ? b->t0 - ts : ts > b->t1 ? ts - b->t1 : 0;
		width[n] = b->t1 - b->t0;
		if (width[n] <= 1000 && dmid[n] > tight)
			tight = dmid[n];
		if (width[n] <= 1000)
			dtight[nt++] = dmid[n];
		n++;
	}
	if (!n) {
		printf("| %s | no marks read | | | |\n", what);
		bench_json("clock", what, "marks", 0.0, NULL);
		return;
	}
	qsort(dmid, n, sizeof *dmid, cmp64);
	qsort(dout, n, sizeof *dout, cmp64);
	qsort(width, n, sizeof *width, cmp64);
	qsort(dtight, nt, sizeof *dtight, cmp64);
	printf("| %s | %zu of %u | %" PRId64 " | %" PRId64 " | %" PRId64 " | %" PRId64 " |\n",
	       what, n, atomic_load(&nmarks), dmid[n / 2], tight, dout[n - 1], width[n / 2]);	bench_json("clock", what, "marks", (double)n, "posted", (double)atomic_load(&nmarks),
	           "threads", (double)(2 * (sysconf(_SC_NPROCESSORS_ONLN) + 1)), "median_ns",
	           (double)dmid[n / 2], "p90_ns", (double)dmid[n * 9 / 10], "p99_ns",
	           (double)dmid[n * 99 / 100], "p999_ns", (double)dmid[n * 999 / 1000], "max_ns",
	           (double)dmid[n - 1], "worst_narrow_ns", (double)tight, "worst_outside_ns",
	           (double)dout[n - 1], "median_bracket_ns", (double)width[n / 2], "narrow", (double)nt,
	           "narrow_median_ns", nt ? (double)dtight[nt / 2] : NAN, "narrow_p99_ns",
	           nt ? (double)dtight[nt * 99 / 100] : NAN, "narrow_p999_ns",
	           nt ? (double)dtight[nt * 999 / 1000] : NAN, "outside_p99_ns",
	           (double)dout[n * 99 / 100], NULL);
}

int main(void)
{
	trace_attr_t a;
	trace_id_t trid;
	pthread_t th;
	struct posix_trace_event_info e;
	char buf[64];
	size_t len;
	int none;

	br = calloc(MAXM, sizeof *br);
	rk = calloc(MAXM, sizeof *rk);
	rts = calloc(MAXM, sizeof *rts);
	if (!br || !rk || !rts)
		return 1;
	posix_trace_eventid_open("busy", &ev_busy);
	posix_trace_eventid_open("mark", &ev_mark);
	printf("\ntimestamps under load: 2 x (%ld CPUs + 1) threads recording and spinning, "
	       "marks bracketed by CLOCK_REALTIME reads (ns)\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("| read | marks read | median \\|ts - middle\\| | worst \\|ts - middle\\|, "
	       "brackets <= 1 us | worst outside the bracket | median bracket width |\n"
	       "|---|---:|---:|---:|---:|---:|\n");

	/* live: a LOOP stream, a reader thread competing for the CPUs */
	posix_trace_attr_init(&a);
	posix_trace_attr_setstreamsize(&a, 64u << 20);
	if (posix_trace_create(0, &a, &trid) != 0 || posix_trace_start(trid) != 0)
		return 1;
	pthread_create(&th, NULL, reader, &trid);
	load(2000);
	posix_trace_stop(trid);
	atomic_store(&reader_done, 1);
	pthread_join(th, NULL);
	while (posix_trace_trygetnext_event(trid, &e, buf, sizeof buf, &len, &none) == 0 && !none)
		take(&e, buf, len);
	posix_trace_shutdown(trid);
	report("live, getnext (LOOP)");

	/* a log: FLUSH, the flusher competing for the CPUs */
	char path[] = "/tmp/pt-bench-clock-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	unlink(path);
	posix_trace_attr_setlogsize(&a, 1u << 30);
	atomic_store(&nmarks, 0);
	nread = 0;
	if (posix_trace_create_withlog(0, &a, fd, &trid) != 0 || posix_trace_start(trid) != 0)
		return 1;
	load(2000);
	posix_trace_shutdown(trid);
	lseek(fd, 0, SEEK_SET);
	if (posix_trace_open(fd, &trid) != 0)
		return 1;
	while (posix_trace_getnext_event(trid, &e, buf, sizeof buf, &len, &none) == 0 && !none)
		take(&e, buf, len);
	posix_trace_close(trid);
	close(fd);
	report("log (FLUSH), posix_trace_open");
	posix_trace_attr_destroy(&a);
	return 0;
}
