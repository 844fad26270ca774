/*
 * pool_cold.c -- after a burst, a stream's memory goes back to its
 * working set (issue 54): the chunks a burst had in use at once are given
 * back to the system as the reader frees them, beyond the few the free
 * stack keeps ready (ring/pool.c, pt_pool_give_back), and a later burst
 * takes them again, losing nothing.
 *
 * A stream of this process (16 MiB: 65 sealed chunks of 256 KiB, 24 hot
 * at least, or the most in use over the last 5 to 10 s and 4 more), read
 * by this thread.  A burst: 40 threads, each recording 900 events of
 * 248 bytes (a chunk each, nearly full), all holding their chunks at once
 * before they end; then this thread records a trickle for up to 11 s,
 * until the burst has left the working set (5 to 10 s).  Checked,
 * twice: every event read, each thread's in sequence; at the burst's
 * height this process maps the 40 chunks (RssShmem); after the trickle,
 * at most the 24 hot ones and 4 beyond what it mapped before the first
 * burst, and the map of loaded code (1 MiB: a process that takes 8
 * chunks maps its base chunks and the map at once, shm/segment.c,
 * pt_slot_warm).  Before, the 40 chunks stayed resident for good.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "helpers.h"

#define THREADS 40
#define EVENTS  900
#define PAYLOAD 248
#define CHUNK   (256u << 10)
#define HOT     24
#define MAP     (2048u * 512u) /* the map of loaded code, mapped with the base chunks */

struct pl {
	int32_t thr, seq;
	char fill[PAYLOAD - 8];
};

static trace_event_id_t ev;
static pthread_barrier_t filled, go;
static _Atomic int nfilled;

/* This process's resident shared memory (the stream's pages it maps). */
static long long shm_bytes(void)
{
	long kb = t_proc_kb("/proc/self/status", "RssShmem");
	return kb < 0 ? -1 : (long long)kb << 10;
}

static void *burst(void *arg)
{
	struct pl p;
	memset(&p, 0x5a, sizeof p);
	p.thr = (int32_t)(intptr_t)arg;
	for (p.seq = 0; p.seq < EVENTS; p.seq++)
		posix_trace_event(ev, &p, sizeof p);
	atomic_fetch_add(&nfilled, 1);
	pthread_barrier_wait(&filled); /* all hold their chunks */
	pthread_barrier_wait(&go);
	return NULL;
}

/* Reads what there is; counts each thread's events, and those out of order. */
static void drain(trace_id_t trid, int *seen, int *bad)
{
	struct posix_trace_event_info info;
	struct pl p;
	size_t len;

	while (t_next(trid, &info, &p, sizeof p, &len)) {
		if (info.posix_event_id != ev || (len == sizeof p && p.thr == -1))
			continue; /* (the first event, ours) */
		if (len != sizeof p || p.thr < 0 || p.thr >= THREADS || p.seq != seen[p.thr])
			++*bad;
		else
			seen[p.thr]++;
	}
}

int main(void)
{
	T_BEGIN(90);
	trace_attr_t attr;
	trace_id_t trid;

	REQUIRE(posix_trace_eventid_open("cold-burst", &ev) == 0);
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 16u << 20) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&attr, PAYLOAD) == 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	posix_trace_event(ev, &(struct pl){ .thr = -1 }, sizeof(struct pl)); /* (a chunk of ours) */
	long long before = shm_bytes();
	REQUIRE(before >= 0);

	for (int round = 0; round < 2; round++) {
		pthread_t th[THREADS];
		int seen[THREADS] = { 0 }, bad = 0;
		atomic_store(&nfilled, 0);
		REQUIRE(pthread_barrier_init(&filled, NULL, THREADS + 1) == 0);
		REQUIRE(pthread_barrier_init(&go, NULL, THREADS + 1) == 0);
		for (intptr_t i = 0; i < THREADS; i++)
			REQUIRE(pthread_create(&th[i], NULL, burst, (void *)i) == 0);
		while (atomic_load(&nfilled) < THREADS) {
			drain(trid, seen, &bad);
			usleep(1000);
		}
		pthread_barrier_wait(&filled);
		long long height = shm_bytes();
		pthread_barrier_wait(&go);
		for (int i = 0; i < THREADS; i++)
			pthread_join(th[i], NULL);
		for (int k = 0; k < 3; k++) /* (what the threads sealed as they ended) */
			drain(trid, seen, &bad), usleep(10000);
		/* the working set is the most chunks in use over the last 5 to
		 * 10 s: a trickle of this thread's events for up to 11 s, read
		 * as they come, and the burst's chunks leave (the trickle stops
		 * once they have: the bound below is what it waits for) */
		double t0 = t_now_s();
		struct pl p;
		memset(&p, 0, sizeof p);
		p.thr = -1;
		long long after = shm_bytes();
		while (t_now_s() - t0 < 11 && after - before > (long long)(HOT + 4) * CHUNK + MAP) {
			for (int k = 0; k < 200; k++)
				posix_trace_event(ev, &p, sizeof p);
			drain(trid, seen, &bad);
			usleep(5000);
			after = shm_bytes();
		}
		drain(trid, seen, &bad);
		int whole = 0;
		for (int i = 0; i < THREADS; i++)
			whole += seen[i] == EVENTS;
		printf("pool_cold: round %d: %lld kB before, %lld kB at the height, %lld kB after\n",
		       round, before >> 10, height >> 10, after >> 10);
		CHECK_EQ(bad, 0);
		CHECK_EQ(whole, THREADS);
		CHECK(height - before >= (long long)THREADS * EVENTS * PAYLOAD);
		CHECK(after - before <= (long long)(HOT + 4) * CHUNK + MAP);
		pthread_barrier_destroy(&filled);
		pthread_barrier_destroy(&go);
	}
	struct posix_trace_status_info st;
	REQUIRE(posix_trace_get_status(trid, &st) == 0);
	CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	posix_trace_shutdown(trid);
	posix_trace_attr_destroy(&attr);
	T_END();
}
