/*
 * log_clear.c -- posix_trace_clear() on a stream with a log reinitializes
 * the log "as if it were returning from posix_trace_create_withlog()".
 *
 * For each stream policy (FLUSH: drained all the time; LOOP: flushed by
 * posix_trace_flush) and log policy LOOP and UNTIL_FULL: events "before"
 * are recorded and flushed into the log (for UNTIL_FULL, until the log is
 * full: posix_log_full_status says FULL); then posix_trace_clear(), after
 * which posix_trace_get_status() says the log is not full (at once) and
 * has no overrun; events "after" are recorded, flushed, the stream shut
 * down.  The log holds exactly the "after" events, none of "before", its
 * first user event is the first recorded after the clear, and its final
 * status is not full.  A clear with nothing in the log yet, and two clears
 * in a row, too.  An APPEND log (the standard leaves it unspecified) keeps
 * what it had and gets the events after the clear, as
 * docs/implementation-defined.md says.
 */
#include <trace.h>
#include "log_util.h"

#define PAYLOAD 48
#define AFTER   200

static trace_event_id_t id_before, id_after;

static void record(trace_event_id_t id, uint32_t seq)
{
	unsigned char p[PAYLOAD];
	lu_make(p, seq, 0, sizeof p);
	posix_trace_event(id, p, sizeof p);
}

static struct posix_trace_status_info status(trace_id_t trid)
{
	return lu_status(trid);
}

static void one(int spol, int lpol, int fill, int clears)
{
	char path[256];
	int fd = lu_tmpfile(path, sizeof path, "clear", O_RDWR);
	trace_attr_t a;
	trace_id_t trid;
	int before = 0;

	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, spol) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&a, lpol) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&a, PAYLOAD) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 1 << 20) == 0);
	REQUIRE(posix_trace_attr_setlogsize(&a, 256 << 10) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	posix_trace_attr_destroy(&a);
	CHECK_RC(posix_trace_start(trid), 0);

	if (fill) {
		/* UNTIL_FULL: until the log is full; else a few blocks' worth */
		int full = 0;
		while (before < 200000 && !full) {
			for (int i = 0; i < 500; i++)
				record(id_before, (uint32_t)before++);
			CHECK_RC(lu_flush_wait(trid, NULL), 0);
			full = lu_polled.log_full ||
			       status(trid).posix_log_full_status == POSIX_TRACE_FULL;
			if (lpol != POSIX_TRACE_UNTIL_FULL && before >= 5000)
				break;
		}
		if (lpol == POSIX_TRACE_UNTIL_FULL) {
			CHECK(full);
			if (!full)
				fprintf(stderr, "the log never filled (%d events)\n", before);
		}
	}

	for (int c = 0; c < clears; c++)
		CHECK_RC(posix_trace_clear(trid), 0);
	struct posix_trace_status_info si = status(trid);
	CHECK_EQ(si.posix_log_full_status, POSIX_TRACE_NOT_FULL);
	CHECK_EQ(si.posix_log_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_EQ(si.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	CHECK_EQ(si.posix_stream_status, POSIX_TRACE_RUNNING);

	for (uint32_t i = 0; i < AFTER; i++)
		record(id_after, i);
	CHECK_RC(lu_flush_wait(trid, NULL), 0);
	si = status(trid);
	CHECK_EQ(si.posix_log_full_status, POSIX_TRACE_NOT_FULL);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(fd);

	trace_id_t log;
	int kfd;
	int n = lu_load(path, &log, &kfd);
	si = lu_status(log);
	CHECK_EQ(si.posix_log_full_status, POSIX_TRACE_NOT_FULL);
	CHECK_RC(posix_trace_close(log), 0);
	close(kfd);

	int nb = lu_count(n, id_before, -1), na = lu_count(n, id_after, -1);
	if (lpol == POSIX_TRACE_APPEND) {
		CHECK_EQ(nb, before); /* kept (docs/implementation-defined.md) */
	} else {
		CHECK_EQ(nb, 0);
		int first = -1;
		for (int i = 0; i < n && first < 0; i++)
			if (lu_ev[i].id >= POSIX_TRACE_UNNAMED_USEREVENT)
				first = i;
		CHECK(first >= 0 && lu_ev[first].id == id_after && lu_ev[first].seq == 0);
	}
	CHECK_EQ(na, AFTER);
	CHECK_EQ(lu_user(n, id_after, getpid(), 1, 1, NULL, NULL), AFTER);
	if ((nb && lpol != POSIX_TRACE_APPEND) || na != AFTER)
		fprintf(stderr, "stream policy %d, log policy %d, %d clear(s): %d before (of %d), "
		        "%d after (of %d) in the log\n", spol, lpol, clears, nb, before, na, AFTER);
	lu_rmfile(path);
}

int main(void)
{
	static const int spols[] = { POSIX_TRACE_FLUSH, POSIX_TRACE_LOOP };
	static const int lpols[] = { POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND };

	T_BEGIN(120);
	REQUIRE(posix_trace_eventid_open("log-clear/before", &id_before) == 0);
	REQUIRE(posix_trace_eventid_open("log-clear/after", &id_after) == 0);
	for (unsigned i = 0; i < 2; i++)
		for (unsigned j = 0; j < 3; j++) {
			one(spols[i], lpols[j], 1, 1);
			one(spols[i], lpols[j], 1, 2);
		}
	one(POSIX_TRACE_FLUSH, POSIX_TRACE_UNTIL_FULL, 0, 1);
	one(POSIX_TRACE_LOOP, POSIX_TRACE_LOOP, 0, 1);
	T_END();
}
