/*
 * snapshot_ring_loss.c -- the flight recorder's looks at a LOOP
 * stream (src/control/snapshot.c) take nothing from it, in process.
 *
 *  4. The stream loses nothing it would not have lost without them: one
 *     thread records 300 000 events into a 1 MiB LOOP stream (it wraps
 *     many times), once alone and once while the main thread follows the
 *     stream and takes snapshots; afterwards getnext finds the same
 *     events (the same first sequence number, the same count, contiguous)
 *     and the stream the same count lost, kept + lost = 300 000 (and
 *     START and STOP).
 * Every snapshot read back has its summary checked against its events
 * (snapring_util.h).
 */
#include "t.h"
#include "snapring_util.h"

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

int main(void)
{
	T_BEGIN(120);
	part4();
	T_END();
}
