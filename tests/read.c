/*
 * read.c -- the event record as posix_trace_trygetnext_event() gives it back.
 * For events recorded by the main thread and by a second thread it checks
 * the event id, posix_pid == getpid(), posix_thread_id == the recording
 * thread, posix_prog_address inside the (noinline) function that called
 * posix_trace_event(), a CLOCK_REALTIME timestamp between readings taken
 * around the call (2 ms slack) and non-decreasing along the stream, and the
 * data copied exactly with its data_len.  Zero-length events with NULL data;
 * truncation at record time (payload longer than max-data-size M is cut to
 * M bytes, POSIX_TRACE_TRUNCATED_RECORD) and at read time (a buffer smaller
 * than the data gets num_bytes bytes, data_len == num_bytes and
 * POSIX_TRACE_TRUNCATED_READ, which overrides RECORD), num_bytes 0.
 * trygetnext on an empty stream returns 0 with unavailable != 0; events
 * recorded before start, with system ids (< 16) or ids >= 1024 are not
 * recorded at all.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#define M 32          /* max-data-size of the stream */
#define SLACK_NS 2000000LL
#define ID_A ((trace_event_id_t)100)
#define ID_T ((trace_event_id_t)200)

static trace_id_t trid;
static volatile int calls; /* written after the call: no tail call */
static unsigned char payload[256];

/* Every user event of this test is recorded from here. */
NOINLINE static void record_here(trace_event_id_t id, const void *data, size_t len)
{
	posix_trace_event(id, data, len);
	calls++;
}

static long long ns_of(const struct timespec *ts)
{
	return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ns_of(&ts);
}

static int in_record_here(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, f = (uintptr_t)record_here;
	return a > f && a - f < 4096;
}

/* One event without blocking; returns the unavailable flag (-1 on error). */
static int try_get(struct posix_trace_event_info *ev, void *buf, size_t num, size_t *len)
{
	int unavailable = -1;
	int rc = posix_trace_trygetnext_event(trid, ev, buf, num, len, &unavailable);
	CHECK_RC(rc, 0);
	return rc ? -1 : unavailable;
}

/* Lengths recorded by the main thread; the data is always payload[]. */
static const size_t lens[] = { 0, 1, 7, 8, 9, 31, M, M + 1, 100, 255 };
#define NLENS (sizeof lens / sizeof lens[0])
#define NTHREAD 3

static long long before_ns[NLENS], after_ns[NLENS];
static long long th_before[NTHREAD], th_after[NTHREAD];
static pthread_t th_self;

static void *thread_main(void *arg)
{
	(void)arg;
	th_self = pthread_self();
	for (int i = 0; i < NTHREAD; i++) {
		unsigned char v = (unsigned char)(0xA0 + i);
		th_before[i] = now_ns();
		record_here(ID_T, &v, 1);
		th_after[i] = now_ns();
	}
	return NULL;
}

int main(void)
{
	T_BEGIN(60);
	trace_attr_t attr;
	struct posix_trace_event_info ev;
	unsigned char buf[512];
	size_t len;
	long long last_ts;

	for (size_t i = 0; i < sizeof payload; i++)
		payload[i] = (unsigned char)(i * 7 + 3);

	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&attr, M), 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);

	/* Never started: nothing to read, and recording has no effect. */
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 1);
	record_here(ID_A, payload, 4);
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 1);

	CHECK_RC(posix_trace_start(trid), 0);
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_START);
	CHECK_EQ(ev.posix_pid, getpid());
	CHECK(pthread_equal(ev.posix_thread_id, pthread_self()));
	last_ts = ns_of(&ev.posix_timestamp);
	/* Empty now: returns 0 at once with unavailable set. */
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 1);
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 1);

	/* --- data, lengths, ids, pid, thread, address, timestamps --- */
	for (size_t i = 0; i < NLENS; i++) {
		before_ns[i] = now_ns();
		record_here(ID_A, lens[i] ? payload : NULL, lens[i]);
		after_ns[i] = now_ns();
	}
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, thread_main, NULL) == 0);
	pthread_join(th, NULL);
	CHECK(!pthread_equal(th_self, pthread_self()));

	for (size_t i = 0; i < NLENS; i++) {
		size_t want = lens[i] > M ? M : lens[i];
		memset(buf, 0xEE, sizeof buf);
		len = 12345;
		CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 0);
		CHECK_EQ(ev.posix_event_id, ID_A);
		CHECK_EQ(ev.posix_pid, getpid());
		CHECK(pthread_equal(ev.posix_thread_id, pthread_self()));
		CHECK(in_record_here(ev.posix_prog_address));
		CHECK_EQ(len, want);
		CHECK(memcmp(buf, payload, want) == 0);
		CHECK_EQ(buf[want], 0xEE); /* nothing copied past the data */
		CHECK_EQ(ev.posix_truncation_status, lens[i] > M ? POSIX_TRACE_TRUNCATED_RECORD
		                                                 : POSIX_TRACE_NOT_TRUNCATED);
		long long ts = ns_of(&ev.posix_timestamp);
		CHECK(ts >= before_ns[i] - SLACK_NS);
		CHECK(ts <= after_ns[i] + SLACK_NS);
		CHECK(ts >= last_ts);
		last_ts = ts;
	}
	for (int i = 0; i < NTHREAD; i++) {
		memset(buf, 0xEE, sizeof buf);
		CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 0);
		CHECK_EQ(ev.posix_event_id, ID_T);
		CHECK_EQ(ev.posix_pid, getpid());
		CHECK(pthread_equal(ev.posix_thread_id, th_self));
		CHECK(!pthread_equal(ev.posix_thread_id, pthread_self()));
		CHECK(in_record_here(ev.posix_prog_address));
		CHECK_EQ(len, 1);
		CHECK_EQ(buf[0], 0xA0 + i);
		CHECK_EQ(buf[1], 0xEE);
		CHECK_EQ(ev.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
		long long ts = ns_of(&ev.posix_timestamp);
		CHECK(ts >= th_before[i] - SLACK_NS);
		CHECK(ts <= th_after[i] + SLACK_NS);
		CHECK(ts >= last_ts);
		last_ts = ts;
	}
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 1);

	/* --- truncation at read time --- */
	record_here(ID_A, payload, 20);    /* a: 20 bytes, buffer 5 */
	record_here(ID_A, payload, 100);   /* b: cut to M, buffer 10 */
	record_here(ID_A, payload, 100);   /* c: cut to M, buffer exactly M */
	record_here(ID_A, payload, 20);    /* d: buffer exactly 20 */
	record_here(ID_A, payload, 20);    /* e: num_bytes 0 */
	record_here(ID_A, NULL, 0);        /* f: empty, num_bytes 0 */
	record_here(ID_A, payload, 19);    /* g: buffer 18 */

	memset(buf, 0xEE, sizeof buf);
	CHECK_EQ(try_get(&ev, buf, 5, &len), 0);
	CHECK_EQ(ev.posix_event_id, ID_A);
	CHECK_EQ(len, 5);
	CHECK(memcmp(buf, payload, 5) == 0);
	CHECK_EQ(buf[5], 0xEE);
	CHECK_EQ(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);

	memset(buf, 0xEE, sizeof buf);
	CHECK_EQ(try_get(&ev, buf, 10, &len), 0);
	CHECK_EQ(len, 10);
	CHECK(memcmp(buf, payload, 10) == 0);
	CHECK_EQ(buf[10], 0xEE);
	CHECK_EQ(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);

	memset(buf, 0xEE, sizeof buf);
	CHECK_EQ(try_get(&ev, buf, M, &len), 0);
	CHECK_EQ(len, M);
	CHECK(memcmp(buf, payload, M) == 0);
	CHECK_EQ(buf[M], 0xEE);
	CHECK_EQ(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_RECORD);

	memset(buf, 0xEE, sizeof buf);
	CHECK_EQ(try_get(&ev, buf, 20, &len), 0);
	CHECK_EQ(len, 20);
	CHECK(memcmp(buf, payload, 20) == 0);
	CHECK_EQ(ev.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);

	memset(buf, 0xEE, sizeof buf);
	len = 12345;
	CHECK_EQ(try_get(&ev, buf, 0, &len), 0);
	CHECK_EQ(ev.posix_event_id, ID_A);
	CHECK_EQ(len, 0);
	CHECK_EQ(buf[0], 0xEE);
	CHECK_EQ(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);

	len = 12345;
	CHECK_EQ(try_get(&ev, buf, 0, &len), 0);
	CHECK_EQ(ev.posix_event_id, ID_A);
	CHECK_EQ(len, 0);
	CHECK_EQ(buf[0], 0xEE);
	CHECK_EQ(ev.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);

	memset(buf, 0xEE, sizeof buf);
	CHECK_EQ(try_get(&ev, buf, 18, &len), 0);
	CHECK_EQ(len, 18);
	CHECK(memcmp(buf, payload, 18) == 0);
	CHECK_EQ(buf[18], 0xEE);
	CHECK_EQ(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 1);

	/* --- ids outside 16..1023 are not recorded --- */
	trace_event_id_t named;
	CHECK_RC(posix_trace_eventid_open("read.c/named", &named), 0);
	CHECK(named >= 17 && named < 1024);
	for (trace_event_id_t id = 0; id < PT_SYS_IDS; id++)
		record_here(id, payload, 4);
	const trace_event_id_t bad[] = { 1024, 1025, 2048, 4095, 4096, 65536, 0x7fffffffu,
	                                 0xffffffffu };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		record_here(bad[i], payload, 4);
	record_here(POSIX_TRACE_UNNAMED_USEREVENT, payload, 1);
	record_here(1023, payload, 2);
	record_here(named, payload, 3);

	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_UNNAMED_USEREVENT);
	CHECK_EQ(len, 1);
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 0);
	CHECK_EQ(ev.posix_event_id, 1023);
	CHECK_EQ(len, 2);
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 0);
	CHECK_EQ(ev.posix_event_id, named);
	CHECK_EQ(len, 3);
	CHECK(memcmp(buf, payload, 3) == 0);
	CHECK_EQ(try_get(&ev, buf, sizeof buf, &len), 1);

	CHECK_RC(posix_trace_shutdown(trid), 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	T_END();
}
