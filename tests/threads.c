/*
 * threads.c -- several threads recording into one stream at the same time.
 *
 * For 2, 3 and 4 threads: each thread records PER_THREAD events (payload of
 * 16..32 bytes: thread index, length, sequence number and a byte pattern)
 * into one UNTIL_FULL stream big enough to hold every event, all threads
 * released together by a barrier.  After the threads are joined and the
 * stream is stopped, everything is read back and checked: START first and
 * STOP last, the exact number of events per thread, sequence numbers
 * consecutive per thread (program order), posix_thread_id and posix_pid of
 * the recording thread, intact payloads and lengths, timestamps
 * non-decreasing over the whole stream, no OVERFLOW or ERROR event, nothing
 * left after STOP, and a NO_OVERRUN / NOT_FULL status.
 */
#include <pthread.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define PER_THREAD 100000u
#else
#define PER_THREAD 1000000u
#endif
#define MAX_THREADS 4
#define STREAM_SIZE (256u << 20)

struct writer {
	pthread_t self;
	unsigned index;
	/* filled by the reader */
	uint64_t count;
	uint64_t next_seq;
};

static trace_event_id_t ev_id;
static pthread_barrier_t barrier;
static struct writer writers[MAX_THREADS];

/* Payload length for event seq of thread idx: 16..32 bytes. */
static size_t payload_len(unsigned idx, uint64_t seq)
{
	return 16 + (size_t)((seq * 7 + idx) % 17);
}

static unsigned char pattern(unsigned idx, uint64_t seq, size_t k)
{
	return (unsigned char)(seq * 31 + k * 5 + idx);
}

static size_t fill(unsigned char *buf, unsigned idx, uint64_t seq)
{
	uint32_t w = idx;
	uint32_t n = (uint32_t)payload_len(idx, seq);

	memcpy(buf, &w, 4);
	memcpy(buf + 4, &n, 4);
	memcpy(buf + 8, &seq, 8);
	for (size_t k = 16; k < n; k++)
		buf[k] = pattern(idx, seq, k);
	return n;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	unsigned char buf[32];

	pthread_barrier_wait(&barrier);
	for (uint64_t seq = 0; seq < PER_THREAD; seq++) {
		size_t n = fill(buf, w->index, seq);
		posix_trace_event(ev_id, buf, n);
	}
	return NULL;
}

static int ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Check one user event against what its writer recorded. */
static void check_user_event(const struct posix_trace_event_info *ev, const unsigned char *data,
                             size_t len, uint64_t *bad_payload, uint64_t *bad_order,
                             uint64_t *bad_thread, unsigned nthreads)
{
	uint32_t idx, n;
	uint64_t seq;

	if (len < 16) {
		(*bad_payload)++;
		return;
	}
	memcpy(&idx, data, 4);
	memcpy(&n, data + 4, 4);
	memcpy(&seq, data + 8, 8);
	if (idx >= nthreads || seq >= PER_THREAD || n != len || n != payload_len(idx, seq) ||
	    ev->posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED) {
		(*bad_payload)++;
		return;
	}
	for (size_t k = 16; k < n; k++) {
		if (data[k] != pattern(idx, seq, k)) {
			(*bad_payload)++;
			return;
		}
	}
	struct writer *w = &writers[idx];
	if (seq != w->next_seq)
		(*bad_order)++;
	w->next_seq = seq + 1;
	w->count++;
	if (!pthread_equal(ev->posix_thread_id, w->self) || ev->posix_pid != getpid())
		(*bad_thread)++;
}

static void run(unsigned nthreads)
{
	trace_attr_t attr;
	trace_id_t trid;
	pthread_t th[MAX_THREADS];

	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, STREAM_SIZE), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL), 0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&attr, 64), 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	CHECK_RC(posix_trace_start(trid), 0);

	REQUIRE(pthread_barrier_init(&barrier, NULL, nthreads) == 0);
	for (unsigned i = 0; i < nthreads; i++) {
		memset(&writers[i], 0, sizeof writers[i]);
		writers[i].index = i;
		REQUIRE(pthread_create(&th[i], NULL, writer_main, &writers[i]) == 0);
		writers[i].self = th[i];
	}
	for (unsigned i = 0; i < nthreads; i++)
		CHECK_RC(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&barrier);
	CHECK_RC(posix_trace_stop(trid), 0);

	struct posix_trace_event_info ev;
	unsigned char data[64];
	size_t len;
	int unavail, rc;
	uint64_t total = 0, bad_payload = 0, bad_order = 0, bad_thread = 0, bad_ts = 0;
	uint64_t starts = 0, stops = 0, overflows = 0, errors = 0, others = 0, bad_unavail = 0;
	long long max_inversion = 0;
	int first = 1, stop_data = -1;
	struct timespec last = { 0, 0 };

	for (;;) {
		rc = posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &unavail);
		if (rc) {
			CHECK_EQ(rc, 0);
			break;
		}
		if (unavail)
			bad_unavail++;
		total++;
		if (!first && ts_before(&ev.posix_timestamp, &last)) {
			long long d = (long long)(last.tv_sec - ev.posix_timestamp.tv_sec) * 1000000000 +
			              (last.tv_nsec - ev.posix_timestamp.tv_nsec);
			if (d > max_inversion)
				max_inversion = d;
			bad_ts++;
		}
		last = ev.posix_timestamp;
		if (first)
			CHECK_EQ(ev.posix_event_id, POSIX_TRACE_START);
		first = 0;
		if (ev.posix_event_id == ev_id) {
			check_user_event(&ev, data, len, &bad_payload, &bad_order, &bad_thread, nthreads);
		} else if (ev.posix_event_id == POSIX_TRACE_START) {
			starts++;
		} else if (ev.posix_event_id == POSIX_TRACE_STOP) {
			stops++;
			CHECK_EQ(len, sizeof(int));
			if (len == sizeof(int))
				memcpy(&stop_data, data, sizeof(int));
			break;
		} else if (ev.posix_event_id == POSIX_TRACE_OVERFLOW) {
			overflows++;
		} else if (ev.posix_event_id == POSIX_TRACE_ERROR) {
			errors++;
		} else {
			others++;
		}
	}

	/* nothing after STOP */
	CHECK_RC(posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len, &unavail), 0);
	CHECK(unavail != 0);

	for (unsigned i = 0; i < nthreads; i++) {
		CHECK_EQ(writers[i].count, PER_THREAD);
		CHECK_EQ(writers[i].next_seq, PER_THREAD);
	}
	CHECK_EQ(total, (uint64_t)nthreads * PER_THREAD + 2);
	CHECK_EQ(bad_payload, 0);
	CHECK_EQ(bad_order, 0);
	CHECK_EQ(bad_thread, 0);
	CHECK_EQ(bad_unavail, 0);
	CHECK_EQ(bad_ts, 0);
	if (bad_ts)
		fprintf(stderr, "threads: %llu timestamp inversions, the largest %lld ns\n",
		        (unsigned long long)bad_ts, max_inversion);
	CHECK_EQ(starts, 1);
	CHECK_EQ(stops, 1);
	CHECK_EQ(stop_data, 0); /* an explicit stop, not an automatic one */
	CHECK_EQ(overflows, 0);
	CHECK_EQ(errors, 0);
	CHECK_EQ(others, 0);

	struct posix_trace_status_info st;
	CHECK_RC(posix_trace_get_status(trid, &st), 0);
	CHECK_EQ(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_EQ(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	if (t_failures)
		fprintf(stderr, "threads: failures with %u threads\n", nthreads);
}

int main(void)
{
	T_BEGIN(120);
	CHECK_RC(posix_trace_eventid_open("threads.record", &ev_id), 0);
	for (unsigned n = 2; n <= MAX_THREADS; n++)
		run(n);
	T_END();
}
