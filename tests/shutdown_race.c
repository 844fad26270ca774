/*
 * shutdown_race.c -- posix_trace_shutdown() while threads are recording.
 *
 * Two threads call posix_trace_event() in a tight loop for the whole test
 * while the main thread creates, starts and shuts down a stream 200 times
 * (LOOP streams, and every fourth time a tiny UNTIL_FULL stream that stops
 * itself; every fifth time a reader thread is blocked in
 * posix_trace_getnext_event() during the shutdown and must get EINVAL).
 * Checked: nothing crashes or hangs, every create/start/shutdown returns 0,
 * identifiers are never 0 and not reused by the next streams, events read
 * before the shutdown are intact, the old identifier is invalid afterwards
 * (EINVAL), and posix_trace_event() with no stream is a harmless no-op.
 * Finally the same threads, whose thread-local state refers to 200 dead
 * streams, record exactly 1000 events each into a fresh stream, and exactly
 * those come back.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"

#define ROUNDS 200
#define NREC 2
#define FINAL 1000u

struct payload {
	uint32_t src;
	uint32_t check;
	uint64_t seq;
};

static trace_event_id_t ev_spin, ev_final;
static atomic_int stop_spinning;
static pthread_barrier_t b_stopped, b_final;
static pthread_t recorders[NREC];
static trace_id_t reader_trid;
static uint64_t reader_bad, events_read;

static uint32_t checksum(uint32_t src, uint64_t seq)
{
	uint64_t h = seq * 0x9e3779b97f4a7c15ull + src * 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h ^ (h >> 32));
}

static void record(trace_event_id_t id, uint32_t src, uint64_t seq)
{
	struct payload p = { src, checksum(src, seq), seq };
	posix_trace_event(id, &p, sizeof p);
}

/* A user event read back must be intact: 0 if it is, 1 if not. */
static int bad_event(const struct posix_trace_event_info *ev, const void *data, size_t len)
{
	struct payload p;

	if (ev->posix_event_id != ev_spin && ev->posix_event_id != ev_final)
		return 0;
	if (len != sizeof p)
		return 1;
	memcpy(&p, data, sizeof p);
	return p.src > NREC || p.check != checksum(p.src, p.seq);
}

static void *recorder_main(void *arg)
{
	uint32_t src = (uint32_t)(uintptr_t)arg;
	uint64_t seq = 0;

	while (!atomic_load_explicit(&stop_spinning, memory_order_relaxed))
		record(ev_spin, src, seq++);
	pthread_barrier_wait(&b_stopped);
	pthread_barrier_wait(&b_final); /* the final stream is running now */
	for (uint64_t k = 0; k < FINAL; k++)
		record(ev_final, src, k);
	return NULL;
}

/* Blocks in getnext until the stream is shut down under it. */
static void *reader_main(void *arg)
{
	struct posix_trace_event_info ev;
	unsigned char data[64];
	size_t len;
	int unavail, rc;

	(void)arg;
	while ((rc = posix_trace_getnext_event(reader_trid, &ev, data, sizeof data, &len,
	                                       &unavail)) == 0)
		reader_bad += !unavail && bad_event(&ev, data, len), events_read += !unavail;
	return (void *)(intptr_t)rc;
}

static void one_round(int round, trace_id_t *recent)
{
	trace_attr_t attr;
	trace_id_t trid;
	int until_full = round % 4 == 3, with_reader = round % 5 == 0;
	pthread_t rd;

	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, until_full ? 4096 : 256u << 10), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, until_full ? POSIX_TRACE_UNTIL_FULL
	                                                                : POSIX_TRACE_LOOP),
	         0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&attr, sizeof(struct payload)), 0);
	CHECK_RC(posix_trace_create(0, &attr, &trid), 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	CHECK(trid != 0);
	for (int i = 0; i < 8; i++)
		CHECK(trid != recent[i]);
	recent[round % 8] = trid;
	CHECK_RC(posix_trace_start(trid), 0);

	if (with_reader) {
		reader_trid = trid;
		REQUIRE(pthread_create(&rd, NULL, reader_main, NULL) == 0);
	} else {
		/* read a little while the recorders keep going */
		struct posix_trace_event_info ev;
		unsigned char data[64];
		size_t len;
		int unavail;
		for (int i = 0; i < 100; i++) {
			CHECK_RC(posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len,
			                                      &unavail), 0);
			if (unavail)
				sched_yield();
			else
				CHECK(!bad_event(&ev, data, len));
			events_read += !unavail;
		}
	}
	sched_yield();
	CHECK_RC(posix_trace_shutdown(trid), 0);
	if (with_reader) {
		void *rc;
		CHECK_RC(pthread_join(rd, &rc), 0);
		CHECK_EQ((intptr_t)rc, EINVAL);
	}

	/* the identifier is dead now */
	struct posix_trace_status_info st;
	CHECK_RC(posix_trace_get_status(trid, &st), EINVAL);
	CHECK_RC(posix_trace_start(trid), EINVAL);
	CHECK_RC(posix_trace_shutdown(trid), EINVAL);
}

static void final_stream(void)
{
	trace_attr_t attr;
	trace_id_t trid;
	struct posix_trace_event_info ev;
	struct payload p;
	unsigned char data[64];
	size_t len;
	int unavail, rc;
	uint64_t next[NREC + 1] = { 0 }, bad = 0, spin = 0, starts = 0, stops = 0, others = 0;

	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL), 0);
	CHECK_RC(posix_trace_create(0, &attr, &trid), 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	pthread_barrier_wait(&b_final);
	for (uint64_t k = 0; k < FINAL; k++)
		record(ev_final, NREC, k);
	for (int i = 0; i < NREC; i++)
		CHECK_RC(pthread_join(recorders[i], NULL), 0);
	CHECK_RC(posix_trace_stop(trid), 0);

	for (;;) {
		rc = posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &unavail);
		if (rc || unavail) {
			CHECK_RC(rc, 0);
			break;
		}
		if (ev.posix_event_id == POSIX_TRACE_STOP) {
			stops++;
			break;
		}
		if (ev.posix_event_id == POSIX_TRACE_START) {
			starts++;
		} else if (ev.posix_event_id == ev_spin) {
			spin++;
		} else if (ev.posix_event_id != ev_final) {
			others++;
		} else if (bad_event(&ev, data, len)) {
			bad++;
		} else {
			memcpy(&p, data, sizeof p);
			if (p.seq != next[p.src])
				bad++;
			next[p.src] = p.seq + 1;
			if (p.src == NREC && !pthread_equal(ev.posix_thread_id, pthread_self()))
				bad++;
			if (p.src < NREC && !pthread_equal(ev.posix_thread_id, recorders[p.src]))
				bad++;
		}
	}
	for (int i = 0; i <= NREC; i++)
		CHECK_EQ(next[i], FINAL);
	CHECK_EQ(bad, 0);
	CHECK_EQ(spin, 0);
	CHECK_EQ(starts, 1);
	CHECK_EQ(stops, 1);
	CHECK_EQ(others, 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

int main(void)
{
	trace_id_t recent[8] = { 0 };

	T_BEGIN(120);
	CHECK_RC(posix_trace_eventid_open("shutdown_race.spin", &ev_spin), 0);
	CHECK_RC(posix_trace_eventid_open("shutdown_race.final", &ev_final), 0);
	REQUIRE(pthread_barrier_init(&b_stopped, NULL, NREC + 1) == 0);
	REQUIRE(pthread_barrier_init(&b_final, NULL, NREC + 1) == 0);
	for (uintptr_t i = 0; i < NREC; i++)
		REQUIRE(pthread_create(&recorders[i], NULL, recorder_main, (void *)i) == 0);

	for (int round = 0; round < ROUNDS; round++)
		one_round(round, recent);
	CHECK_EQ(reader_bad, 0);
	printf("%d streams shut down under recording threads, %llu events read from them\n",
	       ROUNDS, (unsigned long long)events_read);

	atomic_store(&stop_spinning, 1);
	pthread_barrier_wait(&b_stopped);
	/* no stream: recording is a no-op */
	for (uint64_t k = 0; k < 1000; k++)
		record(ev_final, NREC, k);
	final_stream();
	pthread_barrier_destroy(&b_stopped);
	pthread_barrier_destroy(&b_final);
	T_END();
}
