/*
 * policy_until_full.c -- POSIX_TRACE_UNTIL_FULL on a small stream (16 KiB,
 * max-data-size 64).  More events than fit are recorded (sequence numbers as
 * payload): the stream stops itself, get_status shows SUSPENDED + FULL +
 * OVERRUN.  Reading gives START, the first K events with sequence numbers
 * 0..K-1 (0 < K < number generated), then STOP with int 1 (automatic stop).
 * Once STOP is read the stream runs again (RUNNING, NOT_FULL, NO_OVERRUN),
 * and the events recorded next come back preceded by a START; the cycle is
 * run twice.  Then a writer thread records while the main thread reads with
 * posix_trace_getnext_event(), the writer never more than a few events ahead:
 * nothing is lost, the stream is never FULL nor OVERRUN, and an explicit
 * stop reads back as STOP with int 0.  posix_trace_create() with
 * POSIX_TRACE_FLUSH fails with EINVAL.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"
#include "policy_util.h"

#define STREAM_SIZE (16 * 1024)
#define ID ((trace_event_id_t)500)
#define N 2000
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define NCONC 1500
#else
#define NCONC 20000
#endif
#define WINDOW 32

static trace_id_t trid;

static void fill(unsigned char *p, uint32_t seq)
{
	memcpy(p, &seq, sizeof seq);
	for (int i = 4; i < MAXDATA; i++)
		p[i] = (unsigned char)(seq * 13 + (uint32_t)i);
}

static void record(uint32_t seq)
{
	unsigned char p[MAXDATA];
	fill(p, seq);
	posix_trace_event(ID, p, sizeof p);
}


/* Fill the stream, check it stopped itself, read it all back. */
static void cycle(int first)
{
	struct posix_trace_event_info ev;
	unsigned char buf[PU_BUF], want[MAXDATA];
	size_t len;
	int run, full, ovr;

	for (uint32_t s = 0; s < N; s++)
		record(s);
	CHECK_STATUS(trid, POSIX_TRACE_SUSPENDED, POSIX_TRACE_FULL, POSIX_TRACE_OVERRUN);
	CHECK_STATUS(trid, POSIX_TRACE_SUSPENDED, POSIX_TRACE_FULL, POSIX_TRACE_NO_OVERRUN);
	/* posix_trace_event on the stopped stream: another overrun */
	record(N);
	t_status(trid, &run, &full, &ovr);
	CHECK_EQ(run, POSIX_TRACE_SUSPENDED);
	CHECK_EQ(ovr, POSIX_TRACE_OVERRUN);

	REQUIRE(t_try(trid, &ev, buf, 256, &len) == 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_START);
	CHECK_EQ(len, sizeof(trace_event_set_t));
	if (first)
		CHECK_EQ(ev.posix_pid, getpid());

	uint32_t k = 0;
	int bad_seq = 0, bad_data = 0;
	for (uint32_t seq; next_seq(trid, ID, &ev, buf, &len, &seq);) {
		bad_seq += seq != k;
		fill(want, k);
		bad_data += memcmp(buf, want, MAXDATA) != 0;
		k++;
	}
	CHECK_EQ(bad_seq, 0);
	CHECK_EQ(bad_data, 0);
	CHECK(k > 0);
	CHECK(k < N);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_STOP);
	CHECK_EQ(len, sizeof(int));
	int stopdata = -1;
	memcpy(&stopdata, buf, sizeof stopdata);
	CHECK_EQ(stopdata, 1);
	CHECK_EQ(t_try(trid, &ev, buf, 256, &len), 1);

	/* drained: running again, with room */
	CHECK_STATUS(trid, POSIX_TRACE_RUNNING, POSIX_TRACE_NOT_FULL, POSIX_TRACE_NO_OVERRUN);
}

static atomic_uint consumed;  /* user events the reader has taken */
static int writer_full, writer_overrun, writer_stopped, writer_rc;

static void *writer(void *arg)
{
	(void)arg;
	for (uint32_t s = 0; s < NCONC; s++) {
		while (s >= atomic_load(&consumed) + WINDOW)
			sched_yield();
		record(s);
		if (s % 64 == 0) {
			struct posix_trace_status_info si;
			int rc = posix_trace_get_status(trid, &si);
			if (rc)
				writer_rc = rc;
			writer_full += si.posix_stream_full_status != POSIX_TRACE_NOT_FULL;
			writer_overrun += si.posix_stream_overrun_status != POSIX_TRACE_NO_OVERRUN;
			writer_stopped += si.posix_stream_status != POSIX_TRACE_RUNNING;
		}
	}
	return NULL;
}

static void concurrent(void)
{
	struct posix_trace_event_info ev;
	unsigned char buf[256], want[MAXDATA];
	size_t len;
	int unavailable, bad = 0;
	pthread_t th;

	REQUIRE(t_try(trid, &ev, buf, 256, &len) == 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_START);
	REQUIRE(pthread_create(&th, NULL, writer, NULL) == 0);
	for (uint32_t s = 0; s < NCONC; s++) {
		int rc = posix_trace_getnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable);
		if (rc != 0 || unavailable || ev.posix_event_id != ID || len != MAXDATA) {
			CHECK_RC(rc, 0);
			CHECK_EQ(unavailable, 0);
			CHECK_EQ(ev.posix_event_id, ID);
			fprintf(stderr, "concurrent: event %u is wrong\n", s);
			bad++;
			break;
		}
		fill(want, s);
		bad += memcmp(buf, want, MAXDATA) != 0;
		atomic_store(&consumed, s + 1);
	}
	pthread_join(th, NULL);
	CHECK_EQ(bad, 0);
	CHECK_RC(writer_rc, 0);
	CHECK_EQ(writer_full, 0);
	CHECK_EQ(writer_overrun, 0);
	CHECK_EQ(writer_stopped, 0);
	CHECK_STATUS(trid, POSIX_TRACE_RUNNING, POSIX_TRACE_NOT_FULL, POSIX_TRACE_NO_OVERRUN);

	CHECK_RC(posix_trace_stop(trid), 0);
	REQUIRE(t_try(trid, &ev, buf, 256, &len) == 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_STOP);
	CHECK_EQ(len, sizeof(int));
	int stopdata = -1;
	memcpy(&stopdata, buf, sizeof stopdata);
	CHECK_EQ(stopdata, 0);
	CHECK_EQ(t_try(trid, &ev, buf, 256, &len), 1);
}

int main(void)
{
	T_BEGIN(60);
	trace_attr_t attr;

	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, STREAM_SIZE), 0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&attr, MAXDATA), 0);

	/* FLUSH needs a log */
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH), 0);
	trace_id_t bad = 0;
	CHECK_RC(posix_trace_create(0, &attr, &bad), EINVAL);

	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL), 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	cycle(1);
	cycle(0);
	CHECK_RC(posix_trace_shutdown(trid), 0);

	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	concurrent();
	CHECK_RC(posix_trace_shutdown(trid), 0);

	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	T_END();
}
