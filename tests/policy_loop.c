/*
 * policy_loop.c -- POSIX_TRACE_LOOP on a small stream (16 KiB, max-data-size
 * 64).  Far more events than fit are recorded (a sequence number as
 * payload).  While overwriting, the stream keeps RUNNING and reports FULL and
 * OVERRUN; after posix_trace_stop() get_status shows SUSPENDED + FULL +
 * OVERRUN, and a second get_status NO_OVERRUN (reset on read).  Reading all:
 * START (the controller's own events are never overwritten by the traced
 * threads': issue 46), OVERFLOW (its timestamp <= RESUME's), RESUME timestamped as the
 * next event, then the surviving user events -- contiguous, increasing
 * sequence numbers ending with the very last one recorded, data intact --
 * and finally STOP with int 0.  Read to its end, the stream is NOT_FULL.
 * posix_trace_clear() resets FULL to NOT_FULL and the overrun status; a clear
 * while running keeps it running and the events recorded after it come out
 * alone, with no OVERFLOW.  A stream stopped while full (unread) starts
 * again; read to its end while running it is NOT_FULL, stays so while
 * what is recorded fits, and is FULL again once it wraps again.
 */
#include <stdint.h>
#include <trace.h>
#include "t.h"
#include "policy_util.h"

#define STREAM_SIZE (16 * 1024)
#define ID ((trace_event_id_t)400)
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define N 1500
#else
#define N 3000
#endif

static trace_id_t trid;

static void fill(unsigned char *p, uint32_t seq)
{
	memcpy(p, &seq, sizeof seq);
	for (int i = 4; i < MAXDATA; i++)
		p[i] = (unsigned char)(seq * 31 + (uint32_t)i);
}

static void record_range(uint32_t from, uint32_t to)
{
	unsigned char p[MAXDATA];
	for (uint32_t s = from; s < to; s++) {
		fill(p, s);
		posix_trace_event(ID, p, sizeof p);
	}
}


/* Read every event there is (the stream may be running: nothing records
 * meanwhile); their number. */
static int drain(void)
{
	struct posix_trace_event_info ev;
	unsigned char buf[256];
	size_t len;
	int n = 0;

	while (t_try(trid, &ev, buf, sizeof buf, &len) == 0) {
		REQUIRE(n < 100000);
		n++;
	}
	return n;
}

static long long ns_of(const struct timespec *ts)
{
	return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

int main(void)
{
	T_BEGIN(60);
	trace_attr_t attr;
	struct posix_trace_event_info ev;
	unsigned char buf[PU_BUF], want[MAXDATA];
	size_t len;
	int run, full, ovr;

	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, STREAM_SIZE), 0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&attr, MAXDATA), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_LOOP), 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);

	CHECK_STATUS(trid, POSIX_TRACE_RUNNING, POSIX_TRACE_NOT_FULL, POSIX_TRACE_NO_OVERRUN);

	/* wrap: still running, full, overrun */
	record_range(0, N / 2);
	CHECK_STATUS(trid, POSIX_TRACE_RUNNING, POSIX_TRACE_FULL, POSIX_TRACE_OVERRUN);
	CHECK_STATUS(trid, POSIX_TRACE_RUNNING, POSIX_TRACE_FULL, POSIX_TRACE_NO_OVERRUN);

	record_range(N / 2, N);
	CHECK_RC(posix_trace_stop(trid), 0);
	CHECK_STATUS(trid, POSIX_TRACE_SUSPENDED, POSIX_TRACE_FULL, POSIX_TRACE_OVERRUN);
	CHECK_STATUS(trid, POSIX_TRACE_SUSPENDED, POSIX_TRACE_FULL, POSIX_TRACE_NO_OVERRUN);

	/* read: START, OVERFLOW, RESUME, the most recent events, STOP */
	REQUIRE(t_try(trid, &ev, buf, 256, &len) == 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_START);
	CHECK_EQ(ev.posix_pid, getpid());
	CHECK_EQ(len, sizeof(trace_event_set_t));
	long long start_ts = ns_of(&ev.posix_timestamp);
	REQUIRE(t_try(trid, &ev, buf, 256, &len) == 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_OVERFLOW);
	CHECK_EQ(len, 0);
	CHECK_EQ(ev.posix_pid, 0);
	long long ovf_ts = ns_of(&ev.posix_timestamp);
	CHECK(start_ts <= ovf_ts);

	REQUIRE(t_try(trid, &ev, buf, 256, &len) == 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_RESUME);
	CHECK_EQ(len, 0);
	CHECK_EQ(ev.posix_pid, 0);
	long long resume_ts = ns_of(&ev.posix_timestamp);
	CHECK(ovf_ts <= resume_ts);

	long long first = -1, prev = -1, count = 0, last_ts = resume_ts;
	int first_event = 1, bad_data = 0, bad_seq = 0, bad_ts = 0;
	for (uint32_t seq; next_seq(trid, ID, &ev, buf, &len, &seq);) {
		fill(want, seq);
		bad_data += memcmp(buf, want, MAXDATA) != 0;
		long long ts = ns_of(&ev.posix_timestamp);
		if (first_event) {
			CHECK_EQ(ts, resume_ts); /* RESUME carries the next event's time */
			first = seq;
			first_event = 0;
		} else {
			bad_seq += (long long)seq != prev + 1;
		}
		bad_ts += ts < last_ts;
		last_ts = ts;
		prev = seq;
		count++;
	}
	CHECK_EQ(bad_data, 0);
	CHECK_EQ(bad_seq, 0);
	CHECK_EQ(bad_ts, 0);
	CHECK(count > 0);
	CHECK(first > 0);       /* the oldest ones were overwritten */
	CHECK_EQ(prev, N - 1);  /* the most recent one survived */
	CHECK_EQ(count, N - first);
	/* the event that ended the loop: STOP with int 0 */
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_STOP);
	CHECK_EQ(ev.posix_pid, getpid());
	CHECK_EQ(len, sizeof(int));
	int stopdata = -1;
	memcpy(&stopdata, buf, sizeof stopdata);
	CHECK_EQ(stopdata, 0);
	CHECK(ns_of(&ev.posix_timestamp) >= last_ts);
	CHECK_EQ(t_try(trid, &ev, buf, 256, &len), 1);
	/* read to its end: no longer full (it was FULL until the last read) */
	CHECK_STATUS(trid, POSIX_TRACE_SUSPENDED, POSIX_TRACE_NOT_FULL, POSIX_TRACE_NO_OVERRUN);

	/* clear on a suspended stream read to its end */
	CHECK_RC(posix_trace_clear(trid), 0);
	CHECK_STATUS(trid, POSIX_TRACE_SUSPENDED, POSIX_TRACE_NOT_FULL, POSIX_TRACE_NO_OVERRUN);
	CHECK_EQ(t_try(trid, &ev, buf, 256, &len), 1);

	/* wrap again, unread; clear while running; record a few */
	CHECK_RC(posix_trace_start(trid), 0);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(run, POSIX_TRACE_RUNNING);
	CHECK_EQ(full, POSIX_TRACE_NOT_FULL);
	record_range(0, N);
	CHECK_STATUS(trid, POSIX_TRACE_RUNNING, POSIX_TRACE_FULL, POSIX_TRACE_OVERRUN);
	record_range(0, N); /* overrun again, so clear has one to reset */
	CHECK_RC(posix_trace_clear(trid), 0);
	CHECK_STATUS(trid, POSIX_TRACE_RUNNING, POSIX_TRACE_NOT_FULL, POSIX_TRACE_NO_OVERRUN);
	record_range(N, N + 5);
	CHECK_RC(posix_trace_stop(trid), 0);
	for (uint32_t s = N; s < N + 5; s++) {
		REQUIRE(t_try(trid, &ev, buf, 256, &len) == 0);
		CHECK_EQ(ev.posix_event_id, ID);
		CHECK_EQ(len, MAXDATA);
		fill(want, s);
		CHECK(memcmp(buf, want, MAXDATA) == 0);
	}
	REQUIRE(t_try(trid, &ev, buf, 256, &len) == 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_STOP);
	CHECK_EQ(t_try(trid, &ev, buf, 256, &len), 1);
	CHECK_STATUS(trid, POSIX_TRACE_SUSPENDED, POSIX_TRACE_NOT_FULL, POSIX_TRACE_NO_OVERRUN);

	/* stopped while full, unread: start runs it again (only a stream that
	 * stopped itself because it was full ignores start) */
	CHECK_RC(posix_trace_start(trid), 0);
	record_range(0, N);
	CHECK_RC(posix_trace_stop(trid), 0);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(run, POSIX_TRACE_SUSPENDED);
	CHECK_EQ(full, POSIX_TRACE_FULL);
	CHECK_RC(posix_trace_start(trid), 0);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(run, POSIX_TRACE_RUNNING);
	CHECK_EQ(full, POSIX_TRACE_FULL); /* nothing read yet */
	/* wrap while running, read it all while it runs: NOT_FULL */
	record_range(0, N);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(full, POSIX_TRACE_FULL);
	CHECK(drain() > 0);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(run, POSIX_TRACE_RUNNING);
	CHECK_EQ(full, POSIX_TRACE_NOT_FULL);
	/* a few events fit: still NOT_FULL; so many that it wraps: FULL */
	record_range(0, 5);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(full, POSIX_TRACE_NOT_FULL);
	record_range(0, N);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(run, POSIX_TRACE_RUNNING);
	CHECK_EQ(full, POSIX_TRACE_FULL);
	/* clear on a full, suspended stream */
	CHECK_RC(posix_trace_stop(trid), 0);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(run, POSIX_TRACE_SUSPENDED);
	CHECK_EQ(full, POSIX_TRACE_FULL);
	CHECK_RC(posix_trace_clear(trid), 0);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(run, POSIX_TRACE_SUSPENDED);
	CHECK_EQ(full, POSIX_TRACE_NOT_FULL);
	CHECK_EQ(drain(), 0);

	CHECK_RC(posix_trace_shutdown(trid), 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	T_END();
}
