/*
 * snapshot_ring.c -- the flight recorder's two looks at a LOOP stream
 * (src/trid/snapshot.c: pt_ext_follow_*, pt_ext_snapshot), in process.
 *
 *  1. Nothing taken away: three threads record exactly N events each
 *     (payload: thread, sequence number, a check word) into a LOOP stream
 *     that holds them all, while the main thread follows the stream and
 *     takes snapshots of it.  The follower sees every event of the id it
 *     asked for exactly once, each thread's in order; the stream, read
 *     with getnext afterwards, still holds all 3 N events, contiguous,
 *     with no loss; a snapshot of the whole time holds them too, and one
 *     of a window holds exactly the events stamped in it (the getnext
 *     times are the witness).
 *  2. Never torn: the same threads hammer a 256 KiB LOOP stream, which
 *     wraps many times while snapshots are taken; every event of every
 *     snapshot has a sound check word, each thread's sequence numbers go
 *     up by one except right after an OVERFLOW/RESUME pair the snapshot
 *     wrote for a missing chunk, and the chunks dropped mid-copy are
 *     counted (nothing is read from them).
 *  3. posixtrace_trigger(): the follower sees the system event with the
 *     name as payload, cut at 63 bytes; with no stream running it does
 *     nothing.  A callback that returns non-zero ends the poll there: two
 *     threads' triggers, one a poll, in order, then none.
 *  4. The stream loses nothing it would not have lost without them: one
 *     thread records 300 000 events into a 1 MiB LOOP stream (it wraps
 *     many times), once alone and once while the main thread follows the
 *     stream and takes snapshots; afterwards getnext finds the same
 *     events (the same first sequence number, the same count, contiguous)
 *     and the stream the same count lost, kept + lost = 300 000 (and
 *     START and STOP).
 *  5. The window overwritten before the copy (the program lapped the
 *     stream between the follower's look at the trigger and the
 *     snapshot; one thread, no timing): 100 events, the trigger, the
 *     follower's look, then 60 000 events into a 256 KiB stream.  A
 *     snapshot of [0, T] says the writer lapped it (lapped 1) and holds
 *     none of the 100; given the trigger event the follower saw, it holds
 *     that event (its name, payload and time) after an OVERFLOW/RESUME
 *     pair (trig_kept 1); taken before the lapping, it holds the 100 and
 *     the trigger once (not twice), with nothing lapped nor kept.
 *  6. Lapped during the copy: 20 000 events fill a 256 KiB stream; the
 *     snapshot's first chunk copied, the thread (from the copy hook)
 *     records 4 000 more, which overwrite the oldest chunks, the copied
 *     one among them.  Those are dropped and counted (dropped, and their
 *     events in dropped_events); the newest are there: the events up to
 *     the last one before the copy, contiguous, none torn.
 *  7. Copied, then written by another thread after the stream's shutdown:
 *     the same events as one step's.
 *  8. Truncated payloads (largest 16 bytes, events of 24): each in the
 *     snapshot, cut and said so, in order, and counted in its summary.
 * Every snapshot read back has its summary checked against its events
 * (each type's count and time range, the writers' counts).
 */
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

static uint64_t check_of(uint32_t th, uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)th << 56) ^ 0x5bd1e995u;
}

static void *writer(void *arg)
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

static void start_stream(size_t size)
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

/* ---- the follower's witness */
struct fw { uint64_t next[THREADS], seen, bad, trig; char name[80]; };

static int on_ev(void *arg, const struct pt_ext_fev *e)
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

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

static void read_snap(int fd, struct sread *r)
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

static int snap_fd(void)
{
	int fd = memfd_create("snap", 0);
	REQUIRE(fd >= 0);
	return fd;
}

static void part1(void)
{
	pthread_t th[THREADS];
	struct fw fw = { { 0 }, 0, 0, 0, "" };
	uint64_t want[__TRACE_EVENT_ID_LIMIT / 64] = { 0 };
	struct pt_ext_follow *f;
	struct pt_ext_snap s;

	limit = N;
	start_stream(16u << 20); /* 3 N events of 40 bytes: 2.4 MB, no wrap */
	want[ev / 64] |= 1ull << (ev % 64);
	REQUIRE(pt_ext_follow_open(trid, want, &f) == 0);
	for (uintptr_t i = 0; i < THREADS; i++)
		REQUIRE(pthread_create(&th[i], NULL, writer, (void *)i) == 0);
	atomic_store(&go, 1);
	int snaps = 0;
	for (int done = 0; !done;) {
		CHECK(pt_ext_follow_poll(f, on_ev, &fw) >= 0);
		done = fw.seen >= (uint64_t)THREADS * N;
		if (snaps < 20) { /* snapshots while the threads record */
			int fd = snap_fd();
			CHECK_RC(pt_ext_snapshot(trid, fd, 0, UINT64_MAX, &s), 0);
			CHECK_EQ(s.dropped, 0);
			close(fd);
			snaps++;
		}
		struct timespec ms = { 0, 200000 };
		nanosleep(&ms, NULL);
		static int loops;
		REQUIRE(++loops < 200000);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK(pt_ext_follow_poll(f, on_ev, &fw) >= 0);
	CHECK_EQ(fw.seen, (uint64_t)THREADS * N);
	CHECK_EQ(fw.bad, 0);
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(fw.next[i], N);
	CHECK_EQ(pt_ext_follow_missed(f), 0);
	pt_ext_follow_close(f);

	/* the whole time: everything */
	int fd = snap_fd();
	struct sread r = { 0 };
	CHECK_RC(pt_ext_snapshot(trid, fd, 0, UINT64_MAX, &s), 0);
	read_snap(fd, &r);
	close(fd);
	CHECK_EQ(r.n, (uint64_t)THREADS * N);
	CHECK_EQ(r.bad, 0);
	CHECK_EQ(r.gaps, 0);

	/* the stream still holds everything (getnext: the witness of times) */
	REQUIRE(posix_trace_stop(trid) == 0);
	struct posix_trace_event_info e;
	struct pay p;
	size_t len;
	int unav;
	uint64_t got = 0, nextseq[THREADS] = { 0 }, bad = 0;
	uint64_t *ts = malloc((size_t)THREADS * N * sizeof *ts);
	REQUIRE(ts);
	while (posix_trace_trygetnext_event(trid, &e, &p, sizeof p, &len, &unav) == 0 && !unav) {
		if (e.posix_event_id != ev)
			continue;
		if (len != sizeof p || p.th >= THREADS || p.seq != nextseq[p.th] ||
		    p.check != check_of(p.th, p.seq)) {
			bad++;
			continue;
		}
		nextseq[p.th]++;
		if (got < (uint64_t)THREADS * N)
			ts[got] = ts_ns(&e.posix_timestamp);
		got++;
	}
	CHECK_EQ(got, (uint64_t)THREADS * N);
	CHECK_EQ(bad, 0);
	struct pt_ext_losses lo;
	CHECK_RC(pt_ext_losses(trid, &lo), 0);
	CHECK_EQ(lo.total, 0);

	/* a window: exactly the events stamped in it (the stream was read,
	 * but a snapshot of a stopped stream read to its end holds nothing:
	 * so record the window again, in a new stream) */
	posix_trace_shutdown(trid);
	free(ts);
}

/* A window checked against getnext's times, on a fresh stream. */
static void part1b(void)
{
	pthread_t th[THREADS];
	limit = N / 4;
	atomic_store(&go, 0);
	start_stream(16u << 20);
	for (uintptr_t i = 0; i < THREADS; i++)
		REQUIRE(pthread_create(&th[i], NULL, writer, (void *)i) == 0);
	atomic_store(&go, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	REQUIRE(posix_trace_stop(trid) == 0);
	/* the times, from a whole snapshot's events (what getnext will give) */
	int fd = snap_fd();
	struct pt_ext_snap s;
	struct sread all = { 0 }, win = { 0 };
	all.ts = malloc((size_t)THREADS * N * sizeof *all.ts);
	REQUIRE(all.ts);
	CHECK_RC(pt_ext_snapshot(trid, fd, 0, UINT64_MAX, &s), 0);
	read_snap(fd, &all);
	close(fd);
	REQUIRE(all.n == (uint64_t)THREADS * (N / 4));
	/* the middle third of the events (a snapshot's events come in time
	 * order: checked) */
	for (uint64_t i = 1; i < all.n; i++)
		CHECK(all.ts[i - 1] <= all.ts[i]);
	uint64_t from = all.ts[all.n / 3], to = all.ts[2 * all.n / 3];
	free(all.ts);
	fd = snap_fd();
	CHECK_RC(pt_ext_snapshot(trid, fd, from, to, &s), 0);
	read_snap(fd, &win);
	close(fd);
	/* the witness: getnext over the whole stream, counting those in it */
	struct posix_trace_event_info e;
	struct pay p;
	size_t len;
	int unav;
	uint64_t in = 0, total = 0;
	while (posix_trace_trygetnext_event(trid, &e, &p, sizeof p, &len, &unav) == 0 && !unav) {
		uint64_t t = ts_ns(&e.posix_timestamp);
		total += e.posix_event_id == ev;
		if (e.posix_event_id == ev && t >= from && t <= to)
			in++;
	}
	CHECK_EQ(total, (uint64_t)THREADS * (N / 4));
	CHECK(in > 0);
	CHECK_EQ(win.n, in);
	CHECK_EQ(win.bad, 0);
	CHECK(win.ts_min >= from && win.ts_max <= to);
	posix_trace_shutdown(trid);
}

static void part2(void)
{
	pthread_t th[THREADS];
	uint64_t dropped = 0, events = 0, gaps = 0, bad = 0;

	limit = 0;
	atomic_store(&stop, 0);
	atomic_store(&go, 0);
	start_stream(256u << 10);
	for (uintptr_t i = 0; i < THREADS; i++)
		REQUIRE(pthread_create(&th[i], NULL, writer, (void *)i) == 0);
	atomic_store(&go, 1);
	/* until the stream wrapped many times, and 60 snapshots were taken */
	for (int k = 0; k < 60 || atomic_load(&recorded) < 40000; k++) {
		REQUIRE(k < 100000);
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
		int fd = snap_fd();
		struct pt_ext_snap s;
		struct sread r = { 0 };
		CHECK_RC(pt_ext_snapshot(trid, fd, 0, UINT64_MAX, &s), 0);
		read_snap(fd, &r);
		close(fd);
		CHECK(r.n <= s.events && r.gaps == s.gaps);
		dropped += s.dropped, events += r.n, gaps += r.gaps, bad += r.bad;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(bad, 0);
	CHECK(events > 0);
	printf("part 2: snapshots of a wrapping 256 KiB stream: %llu events, %llu chunks "
	       "dropped mid-copy, %llu gaps told\n", (unsigned long long)events,
	       (unsigned long long)dropped, (unsigned long long)gaps);
	posix_trace_shutdown(trid);
}

/* One thread records K events into a 1 MiB LOOP stream, which wraps
 * many times; with snaps, the main thread follows the stream and takes
 * snapshots all the while.  What the stream holds afterwards (getnext)
 * and what it says it lost. */
struct kept { uint64_t lost, first, count, all, bad; int snaps; };

static atomic_int writer_done, snaps_taken;

static void *writer_k(void *arg)
{
	int snaps = (int)(uintptr_t)arg;
	while (!atomic_load(&go))
		;
	for (uint64_t s = 0; s < 300000; s++) {
		if (s == 100000 && snaps) /* (two snapshots at least while it records) */
			while (atomic_load(&snaps_taken) < 2)
				;
		struct pay p = { 0, 0, s, check_of(0, s) };
		posix_trace_event(ev, &p, sizeof p);
	}
	atomic_store(&writer_done, 1);
	return NULL;
}

static struct kept run_k(int snaps)
{
	pthread_t th;
	struct kept k = { 0, UINT64_MAX, 0, 0, 0, 0 };
	uint64_t want[__TRACE_EVENT_ID_LIMIT / 64] = { 0 };
	struct pt_ext_follow *f = NULL;
	struct fw fw = { { 0 }, 0, 0, 0, "" };

	atomic_store(&go, 0);
	atomic_store(&writer_done, 0);
	atomic_store(&snaps_taken, 0);
	start_stream(1u << 20);
	want[ev / 64] |= 1ull << (ev % 64);
	if (snaps)
		REQUIRE(pt_ext_follow_open(trid, want, &f) == 0);
	REQUIRE(pthread_create(&th, NULL, writer_k, (void *)(uintptr_t)snaps) == 0);
	atomic_store(&go, 1);
	while (snaps && !atomic_load(&writer_done)) {
		int fd = snap_fd();
		struct pt_ext_snap sn;
		CHECK_RC(pt_ext_snapshot(trid, fd, 0, UINT64_MAX, &sn), 0);
		close(fd);
		CHECK(pt_ext_follow_poll(f, on_ev, &fw) >= 0);
		k.snaps++;
		atomic_fetch_add(&snaps_taken, 1);
	}
	pthread_join(th, NULL);
	REQUIRE(posix_trace_stop(trid) == 0);
	struct posix_trace_event_info e;
	struct pay p;
	size_t len;
	int unav;
	uint64_t next = UINT64_MAX;
	while (posix_trace_trygetnext_event(trid, &e, &p, sizeof p, &len, &unav) == 0 && !unav) {
		k.all += e.posix_event_id != POSIX_TRACE_OVERFLOW &&
		         e.posix_event_id != POSIX_TRACE_RESUME;
		if (e.posix_event_id != ev)
			continue;
		if (len != sizeof p || p.check != check_of(0, p.seq) ||
		    (next != UINT64_MAX && p.seq != next))
			k.bad++;
		if (k.first == UINT64_MAX)
			k.first = p.seq;
		next = p.seq + 1;
		k.count++;
	}
	struct pt_ext_losses lo;
	CHECK_RC(pt_ext_losses(trid, &lo), 0);
	k.lost = lo.total;
	if (f)
		pt_ext_follow_close(f);
	posix_trace_shutdown(trid);
	return k;
}

/* 4. The stream loses nothing it would not have lost without the
 * recorder's looks: the same events kept, the same count lost. */
static void part4(void)
{
	struct kept a = run_k(0), b = run_k(1);
	CHECK(a.lost > 0); /* (it wrapped) */
	CHECK_EQ(a.bad, 0);
	CHECK_EQ(b.bad, 0);
	CHECK(b.snaps > 0);
	CHECK_EQ(b.lost, a.lost);
	CHECK_EQ(b.first, a.first);
	CHECK_EQ(b.count, a.count);
	CHECK_EQ(b.all, a.all);
	CHECK_EQ(a.all + a.lost, 300000 + 2); /* and START and STOP */
	printf("part 4: 300000 events into a 1 MiB loop stream: %llu kept, %llu lost, with %d "
	       "snapshots taken meanwhile as without\n", (unsigned long long)b.count,
	       (unsigned long long)b.lost, b.snaps);
}

static int stop_at_one(void *arg, const struct pt_ext_fev *e)
{
	struct fw *w = arg;
	on_ev(w, e);
	return 1;
}

static void *trig_thread(void *arg)
{
	posixtrace_trigger(arg);
	return NULL;
}

static void part3(void)
{
	uint64_t want[__TRACE_EVENT_ID_LIMIT / 64] = { 0 };
	struct pt_ext_follow *f;
	struct fw fw = { { 0 }, 0, 0, 0, "" };
	char longname[100];

	posixtrace_trigger("nothing runs"); /* no stream: nothing, no crash */
	posixtrace_trigger(NULL);
	start_stream(1u << 20);
	want[PT_EXT_TRIGGER / 64] |= 1ull << (PT_EXT_TRIGGER % 64);
	REQUIRE(pt_ext_follow_open(trid, want, &f) == 0);
	posixtrace_trigger("slow-disk");
	CHECK_EQ(pt_ext_follow_poll(f, on_ev, &fw), 1);
	CHECK_EQ(fw.trig, 1);
	CHECK(strcmp(fw.name, "slow-disk") == 0);
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	posixtrace_trigger(longname);
	CHECK_EQ(pt_ext_follow_poll(f, on_ev, &fw), 1);
	CHECK_EQ(strlen(fw.name), 63);
	/* stopped after one: two writers (two chunks), one a poll */
	pthread_t th;
	posixtrace_trigger("first");
	REQUIRE(pthread_create(&th, NULL, trig_thread, "second") == 0);
	pthread_join(th, NULL);
	fw.trig = 0;
	CHECK_EQ(pt_ext_follow_poll(f, stop_at_one, &fw), 1);
	CHECK_EQ(fw.trig, 1);
	CHECK_EQ(pt_ext_follow_poll(f, stop_at_one, &fw), 1);
	CHECK_EQ(fw.trig, 2);
	CHECK_EQ(pt_ext_follow_poll(f, stop_at_one, &fw), 0);
	char nm[TRACE_EVENT_NAME_MAX + 1];
	CHECK_RC(posix_trace_eventid_get_name(trid, PT_EXT_TRIGGER, nm), 0);
	CHECK(strcmp(nm, "posixtrace_trigger") == 0);
	pt_ext_follow_close(f);
	posix_trace_shutdown(trid);
}

/* 5. */
struct tcatch { struct pt_ext_fev e; unsigned char data[64]; int n; };

static int on_trig(void *arg, const struct pt_ext_fev *e)
{
	struct tcatch *c = arg;
	if (e->id == PT_EXT_TRIGGER && e->len <= sizeof c->data) {
		c->e = *e;
		memcpy(c->data, e->data, e->len);
		c->e.data = c->data;
		c->n++;
	}
	return 0;
}

/* the snapshot in fd read back: events of ID_NAME, trigger events named
 * "lap" at time t (and whether a RESUME came before the first) */
struct lapread { uint64_t seqs, trig, resume_before, other; };

static void read_lap(int fd, uint64_t t, struct lapread *r)
{
	trace_id_t l;
	struct posix_trace_event_info e;
	unsigned char buf[256];
	size_t len;
	int unav, resumed = 0;

	memset(r, 0, sizeof *r);
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	REQUIRE(posix_trace_open(fd, &l) == 0);
	while (posix_trace_getnext_event(l, &e, buf, sizeof buf, &len, &unav) == 0 && !unav) {
		char nm[TRACE_EVENT_NAME_MAX + 1] = "";
		if (e.posix_event_id == POSIX_TRACE_RESUME) {
			resumed = 1;
			continue;
		}
		posix_trace_eventid_get_name(l, e.posix_event_id, nm);
		if (!strcmp(nm, ID_NAME))
			r->seqs++;
		else if (!strcmp(nm, "posixtrace_trigger") && len == 3 && !memcmp(buf, "lap", 3) &&
		         ts_ns(&e.posix_timestamp) == t)
			r->resume_before += !r->trig++ && resumed;
		else if (e.posix_event_id != POSIX_TRACE_OVERFLOW)
			r->other++;
	}
	posix_trace_close(l);
}

static void part5(void)
{
	uint64_t want[__TRACE_EVENT_ID_LIMIT / 64] = { 0 };
	struct pt_ext_follow *f;
	struct tcatch c = { .n = 0 };
	struct pt_ext_snap s;
	struct lapread r;

	start_stream(256u << 10);
	want[PT_EXT_TRIGGER / 64] |= 1ull << (PT_EXT_TRIGGER % 64);
	REQUIRE(pt_ext_follow_open(trid, want, &f) == 0);
	for (uint64_t k = 0; k < 100; k++) {
		struct pay p = { 0, 0, k, check_of(0, k) };
		posix_trace_event(ev, &p, sizeof p);
	}
	posixtrace_trigger("lap");
	CHECK_EQ(pt_ext_follow_poll(f, on_trig, &c), 1);
	REQUIRE(c.n == 1);
	uint64_t t = c.e.ns;

	/* before the lapping: all there, the trigger once */
	int fd = snap_fd();
	CHECK_RC(pt_ext_snapshot_trig(trid, fd, 0, t, &c.e, &s), 0);
	read_lap(fd, t, &r);
	close(fd);
	CHECK_EQ(r.seqs, 100);
	CHECK_EQ(r.trig, 1);
	CHECK_EQ(s.lapped, 0);
	CHECK_EQ(s.trig_kept, 0);
	CHECK_EQ(s.trig_alone, 0);
	CHECK_EQ(s.gaps, 0);

	/* the program laps the stream: 60 000 x 32 bytes, 7 times its size */
	for (uint64_t k = 100; k < 60100; k++) {
		struct pay p = { 0, 0, k, check_of(0, k) };
		posix_trace_event(ev, &p, sizeof p);
	}
	fd = snap_fd();
	CHECK_RC(pt_ext_snapshot(trid, fd, 0, t, &s), 0);
	read_lap(fd, t, &r);
	close(fd);
	CHECK_EQ(r.seqs, 0);
	CHECK_EQ(r.trig, 0);
	CHECK_EQ(s.lapped, 1);
	CHECK_EQ(s.trig_kept, 0);
	uint64_t without = s.events;

	fd = snap_fd();
	CHECK_RC(pt_ext_snapshot_trig(trid, fd, 0, t, &c.e, &s), 0);
	read_lap(fd, t, &r);
	close(fd);
	CHECK_EQ(r.seqs, 0);
	CHECK_EQ(r.trig, 1);
	CHECK_EQ(r.resume_before, 1);
	CHECK_EQ(s.lapped, 1);
	CHECK_EQ(s.trig_kept, 1);
	CHECK_EQ(s.events, without + 1);
	CHECK_EQ(s.gaps, 1);
	/* a trigger event outside the window is not added */
	fd = snap_fd();
	CHECK_RC(pt_ext_snapshot_trig(trid, fd, 0, t - 1, &c.e, &s), 0);
	close(fd);
	CHECK_EQ(s.trig_kept, 0);
	printf("part 5: the window lapped before the copy: said (lapped %llu), the trigger event "
	       "kept after a gap\n", (unsigned long long)s.lapped);
	pt_ext_follow_close(f);
	posix_trace_shutdown(trid);
}

/* 6. */
static void lap_now(void *arg)
{
	int *once = arg;
	if ((*once)++)
		return;
	for (uint64_t k = 1000000; k < 1004000; k++) {
		struct pay p = { 1, 0, k, check_of(1, k) };
		posix_trace_event(ev, &p, sizeof p);
	}
}

static void part6(void)
{
	struct pt_ext_snap s;
	struct sread r = { 0 };
	int once = 0;

	start_stream(256u << 10);
	for (uint64_t k = 0; k < 20000; k++) {
		struct pay p = { 0, 0, k, check_of(0, k) };
		posix_trace_event(ev, &p, sizeof p);
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	pt_ext_snapshot_copy_hook = lap_now;
	pt_ext_snapshot_copy_arg = &once;
	int fd = snap_fd();
	CHECK_RC(pt_ext_snapshot(trid, fd, 0, ts_ns(&now), &s), 0);
	pt_ext_snapshot_copy_hook = NULL;
	CHECK_EQ(once, (int)s.chunks + (int)s.dropped);
	read_snap(fd, &r);
	close(fd);
	CHECK(s.dropped >= 1);
	CHECK(s.dropped_events >= 1);
	CHECK_EQ(r.bad, 0);
	CHECK_EQ(r.gaps, 0);
	CHECK_EQ(r.cnt[1], 0); /* (written after the window) */
	CHECK(r.n > 0);
	CHECK_EQ(r.last_seq[0], 19999);
	CHECK_EQ(r.last_seq[0] - r.first_seq[0] + 1, r.cnt[0]);
	CHECK(r.first_seq[0] > 0);
	printf("part 6: lapped during the copy: %llu chunks (%llu events) dropped and said, the "
	       "newest %llu events (to the last) held\n", (unsigned long long)s.dropped,
	       (unsigned long long)s.dropped_events, (unsigned long long)r.cnt[0]);
	posix_trace_shutdown(trid);
}

/* A snapshot in two steps: the window copied, the stream shut down, the
 * copy written by another thread; the log is the one-step snapshot's,
 * event for event and time for time (the copy carries its own names and
 * clock). */
struct wjob { struct pt_ext_snapcopy *c; int fd, rc; struct pt_ext_snap s; };

static void *write_copy(void *arg)
{
	struct wjob *j = arg;
	j->rc = pt_ext_snapshot_write(j->c, j->fd, &j->s);
	return NULL;
}

static void part7(void)
{
	pthread_t th[THREADS], w;
	struct pt_ext_snap s1;
	struct pt_ext_snapcopy *c = NULL;
	uint64_t total = (uint64_t)THREADS * (N / 4);

	limit = N / 4;
	atomic_store(&go, 0);
	atomic_store(&stop, 0);
	start_stream(16u << 20);
	for (uintptr_t i = 0; i < THREADS; i++)
		REQUIRE(pthread_create(&th[i], NULL, writer, (void *)i) == 0);
	atomic_store(&go, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_RC(pt_ext_snapshot_copy(trid, 2, 1, NULL, &c), EINVAL);
	CHECK(c == NULL);
	CHECK_RC(pt_ext_snapshot_write(NULL, 1, &s1), EINVAL);
	int fd1 = snap_fd();
	CHECK_RC(pt_ext_snapshot(trid, fd1, 0, UINT64_MAX, &s1), 0);
	CHECK_RC(pt_ext_snapshot_copy(trid, 0, UINT64_MAX, NULL, &c), 0);
	REQUIRE(c != NULL);
	posix_trace_shutdown(trid);
	struct wjob j = { c, snap_fd(), -1, { 0 } };
	REQUIRE(pthread_create(&w, NULL, write_copy, &j) == 0);
	pthread_join(w, NULL);
	pt_ext_snapshot_free(c);
	CHECK_RC(j.rc, 0);
	CHECK_EQ(j.s.events, s1.events);
	CHECK_EQ(j.s.chunks, s1.chunks);
	CHECK_EQ(j.s.first, s1.first);
	CHECK_EQ(j.s.last, s1.last);
	struct sread r1 = { 0 }, r2 = { 0 };
	r1.ts = malloc(total * sizeof *r1.ts);
	r2.ts = malloc(total * sizeof *r2.ts);
	REQUIRE(r1.ts && r2.ts);
	read_snap(fd1, &r1);
	read_snap(j.fd, &r2);
	CHECK_EQ(r2.n, total);
	CHECK_EQ(r2.bad, 0);
	CHECK_EQ(r2.gaps, 0);
	for (int i = 0; i < THREADS; i++) {
		CHECK_EQ(r2.first_seq[i], 0);
		CHECK_EQ(r2.last_seq[i], N / 4 - 1);
	}
	CHECK_EQ(r1.n, r2.n);
	CHECK(r1.n == r2.n && !memcmp(r1.ts, r2.ts, r1.n * sizeof *r1.ts));
	printf("part 7: copied, the stream shut down, written by another thread: %llu events, "
	       "the same as one step's, time for time\n", (unsigned long long)r2.n);
	free(r1.ts);
	free(r2.ts);
	close(fd1);
	close(j.fd);
}

/* 8. Truncated payloads (a stream whose largest payload is 16 bytes, the
 * events 24): the snapshot holds each, cut and said so, in order; its
 * summary counts them (runs of truncated records are not counted as runs
 * of their type: the summary reads them). */
static void part8(void)
{
	trace_attr_t a;
	const uint64_t n = 3000;
	posix_trace_attr_init(&a);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&a, 16) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 4u << 20) == 0);
	REQUIRE(posix_trace_create(0, &a, &trid) == 0);
	posix_trace_attr_destroy(&a);
	REQUIRE(posix_trace_eventid_open(ID_NAME, &ev) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	for (uint64_t i = 0; i < n; i++) {
		struct pay p = { 0, 0, i, check_of(0, i) };
		posix_trace_event(ev, &p, sizeof p);
	}
	int fd = snap_fd();
	struct pt_ext_snap st;
	CHECK_RC(pt_ext_snapshot(trid, fd, 0, UINT64_MAX, &st), 0);
	posix_trace_shutdown(trid);
	trace_id_t l;
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	REQUIRE(posix_trace_open(fd, &l) == 0);
	struct posix_trace_event_info e;
	unsigned char buf[64];
	size_t len;
	int unav;
	uint64_t got = 0, bad = 0, all = 0;
	while (posix_trace_getnext_event(l, &e, buf, sizeof buf, &len, &unav) == 0 && !unav) {
		char nm[TRACE_EVENT_NAME_MAX + 1];
		all++;
		if (posix_trace_eventid_get_name(l, e.posix_event_id, nm) || strcmp(nm, ID_NAME))
			continue;
		uint64_t seq;
		memcpy(&seq, buf + 8, 8);
		bad += len != 16 || e.posix_truncation_status != POSIX_TRACE_TRUNCATED_RECORD ||
		       seq != got;
		got++;
	}
	posix_trace_close(l);
	CHECK_EQ(got, n);
	CHECK_EQ(bad, 0);
	struct pt_ext_summary *sum = NULL;
	CHECK_RC(pt_ext_log_summary(fd, &sum), 0);
	if (sum) {
		CHECK_EQ(sum->events, all);
		CHECK_EQ(sum->count[ev], n);
		pt_ext_summary_free(sum);
	}
	printf("part 8: %llu truncated payloads, each said so, counted in the summary\n",
	       (unsigned long long)got);
	close(fd);
}

int main(void)
{
	T_BEGIN(120);
	part1();
	part1b();
	part2();
	part3();
	part4();
	part5();
	part6();
	part7();
	part8();
	T_END();
}
