/*
 * attach.c -- what it costs to start tracing a running process.
 *
 *   create + start: posix_trace_create(pid) and posix_trace_start() for a
 *                   forked child, as the controller sees them;
 *   first event:    from before posix_trace_create() to the moment the
 *                   controller holds the child's first event (the child
 *                   records in a loop, one event per microsecond or so);
 *   busy child:     the same while the child records at full speed.
 *
 * Medians of 21 rounds, each with a new child.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "bench_util.h"
#include <unistd.h>

#define ROUNDS 21


static void child(int ready, int busy)
{
	trace_event_id_t ev;
	struct timespec us = { 0, 1000 };
	char c = 1;

	posix_trace_eventid_open("tick", &ev);
	if (write(ready, &c, 1) != 1)
		_exit(1);
	alarm(20);
	for (uint64_t i = 0;; i++) {
		posix_trace_event(ev, &i, sizeof i);
		if (!busy)
			nanosleep(&us, NULL);
	}
}

static void round_once(int busy, double *create_us, double *first_us)
{
	int p[2];
	char c;
	trace_id_t trid;
	struct posix_trace_event_info info;
	uint64_t data;
	size_t len;
	int none;

	if (pipe(p) != 0)
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(p[1], busy);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		exit(1);
	close(p[0]);
	double t0 = bench_now_us();
	if (posix_trace_create(pid, NULL, &trid) != 0 || posix_trace_start(trid) != 0) {
		fprintf(stderr, "attach bench: cannot trace pid %d\n", (int)pid);
		exit(1);
	}
	double t1 = bench_now_us();
	for (;;) {
		if (posix_trace_getnext_event(trid, &info, &data, sizeof data, &len, &none) != 0)
			exit(1);
		if (!none && info.posix_pid == pid)
			break;
	}
	double t2 = bench_now_us();
	posix_trace_shutdown(trid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	*create_us = t1 - t0;
	*first_us = t2 - t0;
}

int main(void)
{
	double cr[2][ROUNDS], fi[2][ROUNDS];

	for (int r = 0; r < ROUNDS; r++)
		for (int busy = 0; busy < 2; busy++)
			round_once(busy, &cr[busy][r], &fi[busy][r]);
	for (int b = 0; b < 2; b++) {
		qsort(cr[b], ROUNDS, sizeof(double), bench_cmp_double);
		qsort(fi[b], ROUNDS, sizeof(double), bench_cmp_double);
	}
	printf("\nposixtrace attach benchmark: median of %d rounds, a new child each\n\n", ROUNDS);
	printf("| case | µs |\n|---|---:|\n");
	printf("| create + start for a running process | %.1f |\n", cr[0][ROUNDS / 2]);
	printf("| create to its first event in hand (child records every ~50 µs) | %.1f |\n",
	       fi[0][ROUNDS / 2]);
	printf("| create to its first event in hand (child records at full speed) | %.1f |\n",
	       fi[1][ROUNDS / 2]);
	bench_json("attach", "create + start", "us", cr[0][ROUNDS / 2], NULL);
	bench_json("attach", "create to first event", "us", fi[0][ROUNDS / 2], NULL);
	bench_json("attach", "create to first event, busy child", "us", fi[1][ROUNDS / 2], NULL);
	return 0;
}
