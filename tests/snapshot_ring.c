/*
 * snapshot_ring.c -- the flight recorder's two looks at a LOOP stream
 * (src/control/snapshot.c: pt_ext_follow_*, pt_ext_snapshot), in process:
 * nothing taken away, never torn.
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
 * Every snapshot read back has its summary checked against its events
 * (snapring_util.h).
 */
#include "t.h"
#include "snapring_util.h"

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
	writers_start(th);
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
	writers_run(16u << 20, N / 4);
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
	writers_start(th);
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

int main(void)
{
	T_BEGIN(120);
	part1();
	part1b();
	part2();
	T_END();
}
