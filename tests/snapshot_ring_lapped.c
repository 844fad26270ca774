/*
 * snapshot_ring_lapped.c -- a snapshot of a window the program
 * overwrote (src/control/snapshot.c), in process.
 *
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
 * Every snapshot read back has its summary checked against its events
 * (snapring_util.h).
 */
#include "t.h"
#include "snapring_util.h"

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
	/* the window's end: a clock reading with 50 us on either side of it
	 * after the last event and before the hook's, more than the error of
	 * an event's time (within 10 us, implementation-defined.md) */
	struct timespec now;
	spin_us(50);
	clock_gettime(CLOCK_REALTIME, &now);
	spin_us(50);
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

int main(void)
{
	T_BEGIN(120);
	part5();
	part6();
	T_END();
}
