/*
 * pace.h -- pacing a producer: sleep until a moment given as an offset
 * from a start time, so that batch after batch keeps a rate without the
 * drift of relative sleeps.  Shared by tests/paced_log.c and bench/paced.c.
 */
#ifndef POSIXTRACE_TEST_PACE_H
#define POSIXTRACE_TEST_PACE_H

#include <errno.h>
#include <time.h>

/* Sleep (CLOCK_MONOTONIC) until t0 + `due` seconds; at once if past. */
static inline void pace_until(const struct timespec *t0, double due)
{
	struct timespec d = *t0;

	d.tv_sec += (time_t)due;
	d.tv_nsec += (long)((due - (double)(time_t)due) * 1e9);
	if (d.tv_nsec >= 1000000000L) {
		d.tv_nsec -= 1000000000L;
		d.tv_sec++;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) == EINTR)
		;
}

#endif
