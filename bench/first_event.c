/*
 * first_event.c -- what a thread's first posix_trace_event() costs (run by
 * `make bench`; issue 39: it was 9-16 ms under `posixtrace record` in a
 * process that had started its threads, the membarrier registration).
 *
 * Two cases, each timed with CLOCK_MONOTONIC around the call, against the
 * same thread's second event:
 *  - under `posixtrace record`: a new process each round (ROUNDS), which
 *    starts BUSY threads, then a new thread records the process's first
 *    event;
 *  - a stream the process made itself: NEW threads, one after the other,
 *    each timing its first and its second event, while BUSY threads run.
 * A first event costs what an event that starts a chunk costs (a chunk:
 * a few atomics, the thread's name read with prctl), so the first is
 * expected a few microseconds, not milliseconds.  Figures on a loaded
 * machine are noisy: the median is the figure, the worst is shown too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>
#include "bench_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif
#define ROUNDS 15
#define NEW 200
#define BUSY 4

static trace_event_id_t ev;
static _Atomic int stop;
static double first_us, second_us;

static void *busy(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		usleep(1000);
	return NULL;
}

static void *measure(void *arg)
{
	uint64_t v = 1;
	(void)arg;
	double t0 = bench_now_us();
	posix_trace_event(ev, &v, sizeof v);
	double t1 = bench_now_us();
	posix_trace_event(ev, &v, sizeof v);
	double t2 = bench_now_us();
	first_us = t1 - t0;
	second_us = t2 - t1;
	return NULL;
}

static void start_busy(pthread_t *b)
{
	atomic_store(&stop, 0);
	for (int i = 0; i < BUSY; i++)
		pthread_create(&b[i], NULL, busy, NULL);
	usleep(10000);
}

static void stop_busy(pthread_t *b)
{
	atomic_store(&stop, 1);
	for (int i = 0; i < BUSY; i++)
		pthread_join(b[i], NULL);
}

static void one_new_thread(void)
{
	pthread_t t;
	pthread_create(&t, NULL, measure, NULL);
	pthread_join(t, NULL);
}

static void show(const char *what, double *f, double *s, int n)
{
	qsort(f, (size_t)n, sizeof *f, bench_cmp_double);
	qsort(s, (size_t)n, sizeof *s, bench_cmp_double);
	printf("| %s | %d | %.2f | %.2f | %.2f | %.2f |\n", what, n, f[n / 2], f[n - 1], s[n / 2],
	       s[n - 1]);
	bench_json("first_event", what, "rounds", (double)n, "first_us", f[n / 2], "first_worst_us",
	           f[n - 1], "second_us", s[n / 2], "second_worst_us", s[n - 1], NULL);
}

int main(int argc, char **argv)
{
	pthread_t b[BUSY];

	posix_trace_eventid_open("first", &ev);
	if (argc > 1 && !strcmp(argv[1], "--child")) { /* one round under record */
		start_busy(b);
		one_new_thread();
		stop_busy(b);
		printf("first %.3f second %.3f\n", first_us, second_us);
		return 0;
	}
	printf("\nposixtrace first-event benchmark: a new thread's first and second event "
	       "(us), %d threads already running\n\n", BUSY);
	printf("| case | rounds | first, median | first, worst | second, median | second, worst |\n");
	printf("|---|---:|---:|---:|---:|---:|\n");

	/* under record: a new process each round */
	double f[NEW], s[NEW];
	int n = 0;
	char self[4096] = { 0 }, cmd[8400];
	if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0)
		return 1;
	/* the log goes to a file on tmpfs, removed after (record refuses to
	 * write over anything but a regular file, /dev/null included) */
	char log[64] = "/dev/shm/pt-bench-first-XXXXXX";
	int lfd = mkstemp(log);
	if (lfd < 0) {
		snprintf(log, sizeof log, "/tmp/pt-bench-first-XXXXXX");
		if ((lfd = mkstemp(log)) < 0)
			return 1;
	}
	close(lfd);
	for (int r = 0; r < ROUNDS; r++) {
		snprintf(cmd, sizeof cmd, "'%s/posixtrace' record --force -o '%s' -- '%s' --child "
		         "2>/dev/null", PT_BUILD_DIR, log, self);
		FILE *p = popen(cmd, "r");
		char line[128];
		double a, c;
		while (p && fgets(line, sizeof line, p))
			if (sscanf(line, "first %lf second %lf", &a, &c) == 2)
				f[n] = a, s[n++] = c;
		if (p)
			pclose(p);
	}
	unlink(log);
	if (n)
		show("posixtrace record, the process's first event", f, s, n);
	else
		printf("| posixtrace record | 0 | (could not run %s/posixtrace) | | | |\n", PT_BUILD_DIR);

	/* a stream of its own: new threads one after the other */
	trace_attr_t attr;
	trace_id_t trid;
	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamsize(&attr, 16 << 20);
	if (posix_trace_create(0, &attr, &trid) != 0 || posix_trace_start(trid) != 0)
		return 1;
	start_busy(b);
	for (n = 0; n < NEW; n++) {
		one_new_thread();
		f[n] = first_us, s[n] = second_us;
	}
	stop_busy(b);
	posix_trace_shutdown(trid);
	show("own stream, each new thread's first event", f, s, NEW);
	printf("\n(median of the rounds; the worst shows the machine's noise: it is shared)\n");
	return 0;
}
