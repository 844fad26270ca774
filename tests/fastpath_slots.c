/*
 * fastpath_slots.c -- the fast path's writer moves with the running
 * stream (src/producer/event.c, struct pt_fast).
 *
 * The fast path keeps the level-0 writer of one slot, the one stream
 * running, at a fixed place in the thread's TLS, and slot 0's writer in
 * that slot's row; it moves the two back when another stream becomes the
 * one running, and the general way finds each slot's writer through the
 * same rule.  Two streams, A (made first) and B, and one thread that
 * records a numbered event after each change of which run:
 *   B alone, then A and B, then A alone, then B alone, then A alone
 * (so the writer is bound to B's slot, then both run, then it moves to
 * A's, to B's and back), N events per phase, a second thread recording
 * the same way meanwhile.  Each stream must hold exactly the events
 * recorded while it ran, each thread's in order, payloads intact: a
 * writer found in the wrong row or a chunk address not its writer's
 * would lose, mix or corrupt them.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"

#define N      3000 /* events per phase and thread: several chunks */
#define PHASES 5
#define PAY    24

static trace_event_id_t ev;
static pthread_barrier_t bar;

/* which streams run in each phase: bit 0 A, bit 1 B */
static const unsigned runs[PHASES] = { 2, 3, 1, 2, 1 };

static void record_phase(unsigned thread, unsigned phase)
{
	for (uint32_t i = 0; i < N; i++) {
		uint32_t p[PAY / 4] = { thread, phase, i, ~i };
		for (unsigned k = 4; k < PAY / 4; k++)
			p[k] = thread * 0x01010101u ^ i * 2654435761u ^ k;
		posix_trace_event(ev, p, sizeof p);
	}
}

static void *other(void *arg)
{
	(void)arg;
	for (unsigned ph = 0; ph < PHASES; ph++) {
		pthread_barrier_wait(&bar);
		record_phase(1, ph);
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

/* the events of stream t, checked against the phases it ran in */
static void check_stream(trace_id_t t, unsigned bit)
{
	struct posix_trace_event_info e;
	uint32_t p[PAY / 4 + 4];
	size_t len;
	uint32_t want_phase[2] = { 0, 0 }, want_i[2] = { 0, 0 }, got = 0, expect = 0;

	for (unsigned ph = 0; ph < PHASES; ph++)
		expect += runs[ph] & bit ? 2 * N : 0;
	for (unsigned th = 0; th < 2; th++)
		while (want_phase[th] < PHASES && !(runs[want_phase[th]] & bit))
			want_phase[th]++;
	while (t_try(t, &e, p, sizeof p, &len) == 0) {
		if (e.posix_event_id != ev)
			continue;
		got++;
		uint32_t th = p[0];
		if (len != PAY || th > 1 || want_phase[th] >= PHASES) {
			CHECK(0);
			break;
		}
		unsigned ok = p[1] == want_phase[th] && p[2] == want_i[th] && p[3] == ~p[2];
		for (unsigned k = 4; k < PAY / 4; k++)
			ok &= p[k] == (th * 0x01010101u ^ p[2] * 2654435761u ^ k) ? 1 : 0;
		if (!ok) {
			fprintf(stderr, "stream %u: thread %u: phase %u event %u, want %u/%u\n", bit, th,
			        p[1], p[2], want_phase[th], want_i[th]);
			CHECK(0);
			break;
		}
		if (++want_i[th] == N) {
			want_i[th] = 0;
			do
				want_phase[th]++;
			while (want_phase[th] < PHASES && !(runs[want_phase[th]] & bit));
		}
	}
	if (got != expect)
		fprintf(stderr, "stream %u: %u events, want %u\n", bit, got, expect);
	CHECK(got == expect);
}

int main(void)
{
	trace_attr_t attr;
	trace_id_t t[2];
	pthread_t th;

	T_BEGIN(60);
	CHECK_RC(posix_trace_eventid_open("fastpath.slots", &ev), 0);
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, 4u << 20), 0);
	CHECK_RC(posix_trace_create(0, &attr, &t[0]), 0);
	CHECK_RC(posix_trace_create(0, &attr, &t[1]), 0);
	posix_trace_attr_destroy(&attr);

	pthread_barrier_init(&bar, NULL, 2);
	CHECK_RC(pthread_create(&th, NULL, other, NULL), 0);
	unsigned now = 0;
	for (unsigned ph = 0; ph < PHASES; ph++) {
		for (unsigned s = 0; s < 2; s++) {
			if ((runs[ph] >> s & 1) && !(now >> s & 1))
				CHECK_RC(posix_trace_start(t[s]), 0);
			if (!(runs[ph] >> s & 1) && (now >> s & 1))
				CHECK_RC(posix_trace_stop(t[s]), 0);
		}
		now = runs[ph];
		pthread_barrier_wait(&bar);
		record_phase(0, ph);
		pthread_barrier_wait(&bar);
	}
	pthread_join(th, NULL);
	for (unsigned s = 0; s < 2; s++)
		if (now >> s & 1)
			CHECK_RC(posix_trace_stop(t[s]), 0);
	for (unsigned s = 0; s < 2; s++) {
		int run, full, overrun;
		t_status(t[s], &run, &full, &overrun);
		CHECK(full == POSIX_TRACE_NOT_FULL);
		check_stream(t[s], 1u << s);
		CHECK_RC(posix_trace_shutdown(t[s]), 0);
	}
	T_END();
}
