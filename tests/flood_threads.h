/*
 * flood_threads.h -- threads that record as fast as they can, each event
 * a witness: its thread's number and its own sequence number (struct pl,
 * type uid, which the test opens).  start_flood() starts `threads` of
 * them, `events` each, released together (a barrier) once all are made;
 * join_flood() waits for them.  tids[i]: thread i's pthread_t.
 * flood_witness() checks an event read back.  For
 * tests/log_order and tests/loop_exact.
 */
#ifndef PT_FLOOD_THREADS_H
#define PT_FLOOD_THREADS_H

#include <pthread.h>
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

#endif
