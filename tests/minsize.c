/*
 * minsize.c -- stream-min-size is honoured, whatever the number of threads.
 * For several (stream size S, max-data-size M, payload length L) and 1, 4,
 * 16 and 64 recording threads, an UNTIL_FULL stream gets events whose sizes
 * -- posix_trace_attr_getmaxusereventsize(L) each, plus
 * posix_trace_attr_getmaxsystemeventsize() for START and for STOP -- add up
 * to at most S, split across the threads, which start together at a
 * barrier.  Then the stream is stopped and read: START first, every user
 * event present (exact count per thread, in each thread's order, data and
 * truncation status right), STOP with int 0 last, no OVERFLOW or other
 * event, and get_status never showed FULL, SUSPENDED or OVERRUN.
 */
#include <pthread.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"

#define ID ((trace_event_id_t)600)
#define MAXT 64

struct combo {
	size_t s, m, l;
};

static const struct combo combos[] = {
	{ 4096, 16, 8 },
	{ 4096, 64, 64 },
	{ 4096, 8, 100 },        /* payload cut to M */
	{ 65536, 1024, 1000 },
	{ 65536, 32, 200 },
	{ 65536, 256, 24 },
	{ 1 << 20, 64, 64 },
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
	{ 1 << 20, 8, 8 },
#endif
};

static const int nthreads[] = { 1, 4, 16, 64 };

static trace_id_t trid;
static pthread_barrier_t barrier;
static size_t cur_len;

struct worker {
	pthread_t th, self;
	uint32_t idx;
	uint32_t count;   /* events to record */
	uint32_t seen;    /* events read back */
	int bad;          /* events read back out of order or damaged */
};
static struct worker workers[MAXT];

static unsigned char byte_at(uint32_t idx, uint32_t seq, size_t i)
{
	return (unsigned char)(idx * 7 + seq * 3 + i);
}

static void make_payload(unsigned char *p, size_t len, uint32_t idx, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = byte_at(idx, seq, i);
	memcpy(p, &idx, sizeof idx);
	memcpy(p + 4, &seq, sizeof seq);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned char p[1024];

	w->self = pthread_self();
	pthread_barrier_wait(&barrier);
	for (uint32_t s = 0; s < w->count; s++) {
		make_payload(p, cur_len, w->idx, s);
		posix_trace_event(ID, p, cur_len);
	}
	return NULL;
}

static void run(const struct combo *c, int nt)
{
	trace_attr_t attr;
	size_t usz = 0, ssz = 0;
	struct posix_trace_status_info si;
	struct posix_trace_event_info ev;
	unsigned char buf[2048], want[1024];
	size_t len;
	int unavailable;

	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, c->s), 0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&attr, c->m), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL), 0);
	CHECK_RC(posix_trace_attr_getmaxusereventsize(&attr, c->l, &usz), 0);
	CHECK_RC(posix_trace_attr_getmaxsystemeventsize(&attr, &ssz), 0);
	CHECK_EQ(usz, 16 + (((c->l < c->m ? c->l : c->m) + 7) & ~(size_t)7));
	CHECK_EQ(ssz, 272);
	REQUIRE(usz > 0 && 2 * ssz < c->s);

	uint32_t total = (uint32_t)((c->s - 2 * ssz) / usz);
	size_t recorded = c->l < c->m ? c->l : c->m;
	for (int t = 0; t < nt; t++) {
		workers[t].idx = (uint32_t)t;
		workers[t].count = total / (uint32_t)nt + ((uint32_t)t < total % (uint32_t)nt);
		workers[t].seen = 0;
		workers[t].bad = 0;
	}
	cur_len = c->l;

	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	REQUIRE(pthread_barrier_init(&barrier, NULL, (unsigned)nt) == 0);
	for (int t = 0; t < nt; t++)
		REQUIRE(pthread_create(&workers[t].th, NULL, worker_main, &workers[t]) == 0);
	for (int t = 0; t < nt; t++)
		pthread_join(workers[t].th, NULL);
	pthread_barrier_destroy(&barrier);

	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	CHECK_EQ(si.posix_stream_status, POSIX_TRACE_RUNNING);
	CHECK_EQ(si.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_RC(posix_trace_stop(trid), 0);
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);

	CHECK_RC(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable), 0);
	CHECK_EQ(unavailable, 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_START);

	uint32_t users = 0, others = 0;
	int stopped = 0, stopdata = -1;
	for (;;) {
		int rc = posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable);
		CHECK_RC(rc, 0);
		if (rc || unavailable)
			break;
		if (ev.posix_event_id == POSIX_TRACE_STOP) {
			stopped = 1;
			memcpy(&stopdata, buf, sizeof stopdata);
			CHECK_EQ(len, sizeof(int));
			continue; /* nothing may follow */
		}
		if (ev.posix_event_id != ID || stopped || len != recorded || len < 8) {
			if (others++ < 5)
				fprintf(stderr, "unexpected event id %u len %zu (after STOP: %d)\n",
				        ev.posix_event_id, len, stopped);
			continue;
		}
		uint32_t idx, seq;
		memcpy(&idx, buf, sizeof idx);
		memcpy(&seq, buf + 4, sizeof seq);
		if (idx >= (uint32_t)nt) {
			others++;
			continue;
		}
		struct worker *w = &workers[idx];
		make_payload(want, recorded, idx, w->seen);
		w->bad += seq != w->seen || memcmp(buf, want, recorded) != 0 ||
		          !pthread_equal(ev.posix_thread_id, w->self) ||
		          ev.posix_truncation_status != (c->l > c->m ? POSIX_TRACE_TRUNCATED_RECORD
		                                                     : POSIX_TRACE_NOT_TRUNCATED);
		w->seen++;
		users++;
	}
	CHECK_EQ(others, 0);
	CHECK_EQ(stopped, 1);
	CHECK_EQ(stopdata, 0);
	CHECK_EQ(users, total);
	int bad_threads = 0;
	for (int t = 0; t < nt; t++)
		bad_threads += workers[t].seen != workers[t].count || workers[t].bad != 0;
	CHECK_EQ(bad_threads, 0);
	if (users != total || bad_threads)
		fprintf(stderr, "  S=%zu M=%zu L=%zu threads=%d: %u of %u events read\n", c->s, c->m,
		        c->l, nt, users, total);

	CHECK_RC(posix_trace_shutdown(trid), 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
}

int main(void)
{
	T_BEGIN(60);
	for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++)
		for (size_t j = 0; j < sizeof nthreads / sizeof nthreads[0]; j++)
			run(&combos[i], nthreads[j]);
	T_END();
}
