/*
 * snapring_util.h -- what the tests of the flight recorder's looks at a
 * LOOP stream share (snapshot_ring*.c: src/control/snapshot.c,
 * pt_ext_follow_*, pt_ext_snapshot, in process): THREADS writers that
 * record numbered events with a check word into the stream start_stream()
 * makes (writers_start, writers_run), the follower's witness (on_ev: each thread's events once, in
 * order) and a snapshot read back (read_snap: its events, gaps and times,
 * its summary checked against them: each type's count and time range,
 * the writers' counts).  Needs t.h.
 */
#ifndef PT_SNAPRING_UTIL_H
#define PT_SNAPRING_UTIL_H
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "../src/ext.h"

#define THREADS 3
#define N 20000
#define ID_NAME "snap_seq"

struct pay { uint32_t th, pad; uint64_t seq, check; };

static trace_id_t trid;
static trace_event_id_t ev;
static atomic_int stop, go;
static atomic_ullong recorded;
static uint64_t limit; /* events per thread; 0: until stop */

static inline uint64_t check_of(uint32_t th, uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)th << 56) ^ 0x5bd1e995u;
}

static inline void *writer(void *arg)
{
	uint32_t th = (uint32_t)(uintptr_t)arg;
	while (!atomic_load(&go))
		;
	for (uint64_t s = 0; (!limit || s < limit) && !atomic_load(&stop); s++) {
		struct pay p = { th, 0, s, check_of(th, s) };
		posix_trace_event(ev, &p, sizeof p);
		atomic_fetch_add_explicit(&recorded, 1, memory_order_relaxed);
	}
	return NULL;
}

static inline void start_stream(size_t size)
{
	trace_attr_t a;
	posix_trace_attr_init(&a);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, size) == 0);
	REQUIRE(posix_trace_create(0, &a, &trid) == 0);
	posix_trace_attr_destroy(&a);
	REQUIRE(posix_trace_eventid_open(ID_NAME, &ev) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
}

/* THREADS writers started on the stream, then let go together. */
static inline void writers_start(pthread_t th[THREADS])
{
	for (uintptr_t i = 0; i < THREADS; i++)
		REQUIRE(pthread_create(&th[i], NULL, writer, (void *)i) == 0);
	atomic_store(&go, 1);
}

/* A fresh stream of size bytes, and THREADS writers of per events each
 * recorded into it whole (joined). */
static inline void writers_run(size_t size, uint64_t per)
{
	pthread_t th[THREADS];
	limit = per;
	atomic_store(&go, 0);
	atomic_store(&stop, 0);
	start_stream(size);
	writers_start(th);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
}

/* ---- the follower's witness */
struct fw { uint64_t next[THREADS], seen, bad, trig; char name[80]; };

static inline int on_ev(void *arg, const struct pt_ext_fev *e)
{
	struct fw *w = arg;
	if (e->id == PT_EXT_TRIGGER) {
		w->trig++;
		snprintf(w->name, sizeof w->name, "%.*s", (int)e->len, (const char *)e->data);
		return 0;
	}
	struct pay p;
	if (e->id != ev || e->len != sizeof p) {
		w->bad++;
		return 0;
	}
	memcpy(&p, e->data, sizeof p);
	if (p.th >= THREADS || p.check != check_of(p.th, p.seq) || p.seq != w->next[p.th])
		w->bad++;
	else
		w->next[p.th]++;
	w->seen++;
	return 0;
}

/* ---- a snapshot read back */
struct sread {
	uint64_t *ts; /* if set: the events' times, in the order read */
	uint64_t n, bad, gaps, first_seq[THREADS], last_seq[THREADS], cnt[THREADS];
	uint64_t ts_min, ts_max;
};

/* Spins until CLOCK_MONOTONIC has moved us microseconds on: around a
 * clock reading that bounds a window, so that no event's time, within
 * 10 us of the truth (implementation-defined.md), falls on its wrong side */
static inline void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static inline uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

static inline void read_snap(int fd, struct sread *r)
{
	trace_id_t l;
	struct posix_trace_event_info e;
	unsigned char buf[256];
	size_t len;
	int unav;
	uint64_t want[THREADS];
	int after_gap[THREADS] = { 0 };

	uint64_t *keep = r->ts;
	memset(r, 0, sizeof *r);
	r->ts = keep;
	r->ts_min = UINT64_MAX;
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	REQUIRE(posix_trace_open(fd, &l) == 0);
	trace_event_id_t lid;
	REQUIRE(posix_trace_trid_eventid_open(l, ID_NAME, &lid) == 0 || 1);
	for (int i = 0; i < THREADS; i++)
		want[i] = UINT64_MAX;
	/* the summary the log carries (the snapshot's writer counted it as it
	 * wrote the blocks) against the events read: every type's count and
	 * time range, and the log's */
	static uint64_t cnt[__TRACE_EVENT_ID_LIMIT], tf[__TRACE_EVENT_ID_LIMIT],
	                tl[__TRACE_EVENT_ID_LIMIT];
	uint64_t all = 0, amin = UINT64_MAX, amax = 0;
	memset(cnt, 0, sizeof cnt);
	while (posix_trace_getnext_event(l, &e, buf, sizeof buf, &len, &unav) == 0 && !unav) {
		uint64_t et = ts_ns(&e.posix_timestamp);
		if (e.posix_event_id < __TRACE_EVENT_ID_LIMIT) {
			if (!cnt[e.posix_event_id]++)
				tf[e.posix_event_id] = et;
			tl[e.posix_event_id] = et;
		}
		all++;
		amin = et < amin ? et : amin;
		amax = et > amax ? et : amax;
		if (e.posix_event_id == POSIX_TRACE_RESUME) {
			r->gaps++;
			for (int i = 0; i < THREADS; i++)
				after_gap[i] = 1;
			continue;
		}
		char nm[TRACE_EVENT_NAME_MAX + 1];
		if (posix_trace_eventid_get_name(l, e.posix_event_id, nm) || strcmp(nm, ID_NAME))
			continue;
		struct pay p;
		if (len != sizeof p) {
			r->bad++;
			continue;
		}
		memcpy(&p, buf, sizeof p);
		if (p.th >= THREADS || p.check != check_of(p.th, p.seq)) {
			r->bad++;
			continue;
		}
		if (want[p.th] != UINT64_MAX && p.seq != want[p.th] && !after_gap[p.th])
			r->bad++;
		if (want[p.th] == UINT64_MAX)
			r->first_seq[p.th] = p.seq;
		after_gap[p.th] = 0;
		want[p.th] = p.seq + 1;
		r->last_seq[p.th] = p.seq;
		r->cnt[p.th]++;
		r->n++;
		uint64_t t = ts_ns(&e.posix_timestamp);
		if (r->ts)
			r->ts[r->n - 1] = t;
		if (t < r->ts_min)
			r->ts_min = t;
		if (t > r->ts_max)
			r->ts_max = t;
	}
	posix_trace_close(l);
	struct pt_ext_summary *sum = NULL;
	REQUIRE(pt_ext_log_summary(fd, &sum) == 0);
	CHECK_EQ(sum->events, all);
	if (all) {
		CHECK_EQ(sum->first, amin);
		CHECK_EQ(sum->last, amax);
	}
	uint64_t bad_types = 0, wsum = 0;
	for (unsigned id = 0; id < __TRACE_EVENT_ID_LIMIT; id++)
		bad_types += sum->count[id] != cnt[id] ||
		             (cnt[id] && (sum->tfirst[id] != tf[id] || sum->tlast[id] != tl[id]));
	CHECK_EQ(bad_types, 0);
	for (size_t i = 0; i < sum->nwriters; i++)
		wsum += sum->writers[i].count;
	CHECK_EQ(wsum, all);
	pt_ext_summary_free(sum);
}

static inline int snap_fd(void)
{
	int fd = memfd_create("snap", 0);
	REQUIRE(fd >= 0);
	return fd;
}
#endif
