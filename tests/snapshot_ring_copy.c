/*
 * snapshot_ring_copy.c -- a snapshot copied, then written
 * elsewhere, and of truncated payloads (src/control/snapshot.c), in process.
 *
 *  7. Copied, then written by another thread after the stream's shutdown:
 *     the same events as one step's.
 *  8. Truncated payloads (largest 16 bytes, events of 24): each in the
 *     snapshot, cut and said so, in order, and counted in its summary.
 * Every snapshot read back has its summary checked against its events
 * (snapring_util.h).
 */
#include "t.h"
#include "snapring_util.h"

struct wjob { struct pt_ext_snapcopy *c; int fd, rc; struct pt_ext_snap s; };

static void *write_copy(void *arg)
{
	struct wjob *j = arg;
	j->rc = pt_ext_snapshot_write(j->c, j->fd, &j->s);
	return NULL;
}

static void part7(void)
{
	pthread_t w;
	struct pt_ext_snap s1;
	struct pt_ext_snapcopy *c = NULL;
	uint64_t total = (uint64_t)THREADS * (N / 4);

	writers_run(16u << 20, N / 4);
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
	part7();
	part8();
	T_END();
}
