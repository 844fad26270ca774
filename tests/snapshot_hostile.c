/*
 * snapshot_hostile.c -- the flight recorder's looks at a stream
 * (src/control/snapshot.c) across the trust boundary: while two threads
 * record into a LOOP stream, a third writes random words over its segment
 * (chunk descriptors, the logs, the event records, the pool counters), and
 * the main thread follows the stream and takes snapshots of it.  Neither
 * may crash, hang or hand out a record that is not well-formed: every
 * event the follower gives has an id below 1024 and at most max-data-size
 * bytes, and every snapshot is a log that opens and reads back, event by
 * event, exactly as many events as the snapshot said it wrote, each
 * well-formed.  Afterwards the stream shuts down and a fresh one records
 * and snapshots normally.  Run it under SANITIZE=address,undefined too.
 *
 * Like tests/hostile.c, it reaches into the library's internals to find
 * the segment, as a hostile traced process would find its own mapping.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "../src/api/api.h"
#include "hostile_util.h"

#define MAXDATA 64
#define SECONDS 1.5

static trace_event_id_t ev;

static uint64_t fbad, fseen;

static int on_ev(void *arg, const struct pt_ext_fev *e)
{
	(void)arg;
	fseen++;
	if (e->id >= 1024 || e->len > MAXDATA + 64 || (e->len && !e->data))
		fbad++;
	return 0;
}

/* Read snapshot fd back: its events, and how many were not well-formed. */
static long read_back(int fd, long *bad)
{
	trace_id_t l;
	struct posix_trace_event_info e;
	unsigned char buf[4096];
	size_t len;
	int unav;
	long n = 0;

	*bad = 0;
	if (lseek(fd, 0, SEEK_SET) != 0 || posix_trace_open(fd, &l) != 0)
		return -1;
	while (posix_trace_getnext_event(l, &e, buf, sizeof buf, &len, &unav) == 0 && !unav) {
		if (e.posix_event_id >= 1024 || len > sizeof buf ||
		    (e.posix_event_id >= PT_SYS_IDS && len > MAXDATA))
			(*bad)++;
		n++;
		REQUIRE(n < 10000000);
	}
	posix_trace_close(l);
	return n;
}

static void run(int scribble)
{
	trace_attr_t a;
	trace_id_t trid;
	pthread_t w[2], s;
	uint64_t want[__TRACE_EVENT_ID_LIMIT / 64];
	struct pt_ext_follow *f;
	int snaps = 0;

	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 256 << 10) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&a, MAXDATA) == 0);
	REQUIRE(posix_trace_create(0, &a, &trid) == 0);
	posix_trace_attr_destroy(&a);
	REQUIRE(posix_trace_eventid_open("hostile_snap", &ev) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	memset(want, 0xff, sizeof want); /* every id: the follower decodes all */
	REQUIRE(pt_ext_follow_open(trid, want, &f) == 0);
	struct hu_writer wr[2];
	struct hu_scribble sc = { hu_segment(trid), 0x2545f4914f6cdd1dull, 0 };
	atomic_store(&hu_stop, 0);
	for (long i = 0; i < 2; i++) {
		wr[i] = (struct hu_writer){ ev, MAXDATA, (uint64_t)(i + 1) * 104729 + 3 };
		REQUIRE(pthread_create(&w[i], NULL, hu_writer, &wr[i]) == 0);
	}
	if (scribble)
		REQUIRE(pthread_create(&s, NULL, hu_scribbler, &sc) == 0);
	fbad = fseen = 0;
	for (double end = t_now_s() + SECONDS; t_now_s() < end;) {
		CHECK(pt_ext_follow_poll(f, on_ev, NULL) >= 0);
		int fd = memfd_create("snap", 0);
		REQUIRE(fd >= 0);
		struct pt_ext_snap sn;
		CHECK_RC(pt_ext_snapshot(trid, fd, 0, UINT64_MAX, &sn), 0);
		long bad, n = read_back(fd, &bad);
		CHECK_EQ(n, (long)(sn.events + 2 * sn.gaps));
		CHECK_EQ(bad, 0);
		close(fd);
		snaps++;
	}
	atomic_store(&hu_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	if (scribble)
		pthread_join(s, NULL);
	CHECK_EQ(fbad, 0);
	CHECK(fseen > 0);
	CHECK(snaps > 0);
	pt_ext_follow_close(f);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

int main(void)
{
	T_BEGIN(60);
	run(1); /* scribbled on */
	run(0); /* then a fresh stream, as usual */
	T_END();
}
