/*
 * keeper.c -- the clock keeper: while this process has trace streams, a
 * thread that wakes every 40 ms and adds a calibration point to each
 * stream's clock whose last point is that old (pt_clock_keep, clock.c).
 *
 * Readers take points themselves when they convert an event past the
 * last one, so a reader that keeps up needs no keeper.  The keeper is for
 * the others: a reader starved of CPU, stopped, or a flight recorder read
 * only at the end would otherwise interpolate across all the time it did
 * not read, and CLOCK_MONOTONIC is a straight line in TSC ticks only
 * while the kernel does not change its rate (NTP slewing).  It never
 * records an event, holds a stream's lock only to take one sample, and
 * ends when the last stream is gone.  It blocks every signal.
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include "lib.h"

static int running; /* under pt_ctl_lock */

#ifndef PT_NO_CLOCK_KEEPER /* (the stream fuzzer: its runs must be deterministic) */
static void *keeper(void *arg)
{
	(void)arg;
	for (;;) {
		nanosleep(&(struct timespec){ 0, 40000000 }, NULL);
		if (pt_trid_keep_clocks())
			continue;
		pthread_mutex_lock(&pt_ctl_lock); /* no stream is being made meanwhile */
		if (!pt_trid_keep_clocks()) {
			running = 0;
			pthread_mutex_unlock(&pt_ctl_lock);
			return NULL;
		}
		pthread_mutex_unlock(&pt_ctl_lock);
	}
}
#endif

void pt_keeper_start(void)
{
#ifndef PT_NO_CLOCK_KEEPER
	pthread_attr_t a;
	pthread_t th;
	sigset_t all, old;

	if (running || pthread_attr_init(&a) != 0)
		return;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* without it (no thread to be had) readers still take their points */
	if (pthread_create(&th, &a, keeper, NULL) == 0)
		running = 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
#endif
}

void pt_keeper_atfork_child(void)
{
	running = 0; /* the thread stayed with the parent */
}
