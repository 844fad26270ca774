/*
 * flood_threads.h -- threads that record as fast as they can, each event
 * a witness: its thread's number and its own sequence number (struct pl,
 * type uid, which the test opens).  start_flood() starts `threads` of
 * them, `events` each, released together (a barrier) once all are made;
 * join_flood() waits for them.  tids[i]: thread i's pthread_t.
 * flood_witness() checks an event read back; flood_record() records a
 * flood into a stream with a log.  For
 * tests/log_order and tests/loop_exact.
 */
#ifndef PT_FLOOD_THREADS_H
#define PT_FLOOD_THREADS_H

#include <pthread.h>
#include <time.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"

#define MAXT 4

struct pl { uint32_t thr, seq; };
static trace_event_id_t uid;
static unsigned nthr, per;
static pthread_t tids[MAXT];
static pthread_barrier_t bar;

static void *flood(void *arg)
{
	struct pl p = { (uint32_t)(uintptr_t)arg, 0 };

	tids[p.thr] = pthread_self();
	pthread_barrier_wait(&bar);
	for (; p.seq < per; p.seq++)
		posix_trace_event(uid, &p, sizeof p);
	return NULL;
}

static inline void start_flood(pthread_t *th, unsigned threads, unsigned events)
{
	nthr = threads, per = events;
	REQUIRE(pthread_barrier_init(&bar, NULL, threads + 1) == 0);
	for (unsigned i = 0; i < threads; i++)
		REQUIRE(pthread_create(&th[i], NULL, flood, (void *)(uintptr_t)i) == 0);
	pthread_barrier_wait(&bar);
}

/* Is e (its payload p, len bytes) an intact witness, in its thread's
 * order: a number above the last one taken (next[thr] - 1, its numbers
 * increasing, none twice; a flight recorder loses whole stretches)?  If
 * so next[thr] moves past it. */
static inline int flood_witness(const struct posix_trace_event_info *e, const struct pl *p,
                                size_t len, uint32_t *next)
{
	if (len != sizeof *p || p->thr >= nthr || p->seq < next[p->thr] || p->seq >= per ||
	    !pthread_equal(e->posix_thread_id, tids[p->thr]))
		return 0;
	next[p->thr] = p->seq + 1;
	return 1;
}

static inline void join_flood(pthread_t *th)
{
	for (unsigned i = 0; i < nthr; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
}

/* A stream of this process with an APPEND log on fd, flooded by `threads`
 * threads of `events` each: FLUSH, or (loop) a flight recorder written to
 * the log three times while they record; shut down. */
static inline void flood_record(int fd, int loop, unsigned threads, unsigned events)
{
	trace_attr_t at;
	trace_id_t t;
	pthread_t th[MAXT];

	posix_trace_attr_init(&at);
	REQUIRE(posix_trace_attr_setstreamsize(&at, loop ? 1u << 20 : 256u << 10) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&at, loop ? POSIX_TRACE_LOOP
	                                                       : POSIX_TRACE_FLUSH) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&at, POSIX_TRACE_APPEND) == 0);
	REQUIRE(posix_trace_create_withlog(0, &at, fd, &t) == 0);
	posix_trace_attr_destroy(&at);
	REQUIRE(posix_trace_start(t) == 0);
	start_flood(th, threads, events);
	if (loop) /* a flight recorder: written to the log three times */
		for (int f = 0; f < 3; f++) {
			struct timespec d = { 0, 3000000 };
			nanosleep(&d, NULL);
			CHECK_RC(posix_trace_flush(t), 0);
		}
	join_flood(th);
	CHECK_RC(posix_trace_shutdown(t), 0);
}

#endif
