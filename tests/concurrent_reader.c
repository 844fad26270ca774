/*
 * concurrent_reader.c -- reading a stream while threads are recording into it.
 *
 * Part 1: a reader thread calls posix_trace_getnext_event() (blocking) while
 * 2, 3 and 4 writer threads record; the UNTIL_FULL stream can hold every
 * event, so none may be lost.  The writers finish, the controller stops the
 * stream and the reader ends at the STOP event: START first, exact counts
 * per thread, per-thread program order, intact payloads, the recording
 * thread's id, no OVERFLOW or ERROR, status NO_OVERRUN.  Part 2 is the same
 * with a reader polling posix_trace_trygetnext_event().  Part 3: a small
 * LOOP stream read concurrently while 2 writers record as fast as they can:
 * every user event the reader returns has an intact payload (checksum),
 * per-thread sequence numbers strictly increase, every gap is preceded by
 * an OVERFLOW immediately followed by a RESUME (stamped like the event after
 * it, or like its OVERFLOW: when the reader reached the end of what was
 * recorded during the loss, or the event after it is a late one stamped
 * before the OVERFLOW; never before the OVERFLOW), no ERROR, STOP last, and a reported OVERFLOW shows up as OVERRUN.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define N_FULL 20000u
#define N_LOOP 100000u
#else
#define N_FULL 200000u
#define N_LOOP 1000000u
#endif
#define MAX_WRITERS 4

struct payload {
	uint32_t writer;
	uint32_t check;
	uint64_t seq;
	uint64_t noise;
};

struct writer {
	pthread_t self;
	unsigned index;
	uint64_t count; /* events to record */
};

/* What the reader found. */
struct result {
	uint64_t got[MAX_WRITERS];
	uint64_t next_seq[MAX_WRITERS];     /* last sequence number seen + 1 */
	uint64_t pairs_at_last[MAX_WRITERS]; /* OVERFLOW/RESUME pairs when last seen */
	uint64_t bad_payload, bad_order, bad_thread, bad_gap, bad_rc;
	uint64_t starts, stops, overflows, resumes, errors, others;
	uint64_t pairs, bad_pairing, bad_resume_ts, gaps;
	int first_is_start, stop_data;
};

static trace_event_id_t ev_id;
static trace_id_t trid;
static unsigned nwriters;
static int use_try;
static int loop_mode;
static pthread_barrier_t barrier;
static struct writer writers[MAX_WRITERS];
static struct result res;

static uint32_t checksum(uint32_t w, uint64_t seq, uint64_t noise)
{
	uint64_t h = (seq + 0x9e3779b97f4a7c15ull * (w + 1)) ^ (noise * 0xbf58476d1ce4e5b9ull);
	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	return (uint32_t)(h ^ (h >> 29));
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct payload p;

	w->self = pthread_self(); /* before any event the reader could see */
	pthread_barrier_wait(&barrier);
	for (uint64_t seq = 0; seq < w->count; seq++) {
		p.writer = w->index;
		p.seq = seq;
		p.noise = seq * 0x2545f4914f6cdd1dull;
		p.check = checksum(p.writer, p.seq, p.noise);
		posix_trace_event(ev_id, &p, sizeof p);
	}
	return NULL;
}

static int ts_equal(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static int ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void user_event(const struct posix_trace_event_info *ev, const void *data, size_t len)
{
	struct payload p;

	if (len != sizeof p || ev->posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED) {
		res.bad_payload++;
		return;
	}
	memcpy(&p, data, sizeof p);
	if (p.writer >= nwriters || p.check != checksum(p.writer, p.seq, p.noise) ||
	    p.seq >= writers[p.writer].count) {
		res.bad_payload++;
		return;
	}
	unsigned w = p.writer;
	if (p.seq < res.next_seq[w] || (res.got[w] && p.seq == res.next_seq[w] - 1)) {
		res.bad_order++;
	} else if (p.seq != res.next_seq[w]) {
		/* events were lost: an OVERFLOW/RESUME pair must have come since */
		res.gaps++;
		if (!loop_mode || res.pairs == res.pairs_at_last[w])
			res.bad_gap++;
	}
	res.next_seq[w] = p.seq + 1;
	res.pairs_at_last[w] = res.pairs;
	res.got[w]++;
	if (!pthread_equal(ev->posix_thread_id, writers[w].self) || ev->posix_pid != getpid())
		res.bad_thread++;
}

static void *reader_main(void *arg)
{
	struct posix_trace_event_info ev;
	unsigned char data[64];
	size_t len;
	int unavail, rc, first = 1;
	trace_event_id_t prev_id = POSIX_TRACE_START;
	struct timespec resume_ts = { 0, 0 }, overflow_ts = { 0, 0 };

	(void)arg;
	for (;;) {
		if (use_try)
			rc = posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len, &unavail);
		else
			rc = posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &unavail);
		if (rc) {
			res.bad_rc++;
			fprintf(stderr, "reader: getnext returned %d (%s)\n", rc, strerror(rc));
			break;
		}
		if (unavail) {
			if (!use_try)
				res.bad_rc++; /* a blocking call returned without an event */
			sched_yield();
			continue;
		}
		trace_event_id_t id = ev.posix_event_id;
		if (first) /* START, or in LOOP its loss: writers may fill the stream
		            * before the reader's first call */
			res.first_is_start = id == POSIX_TRACE_START ||
			                     (loop_mode && id == POSIX_TRACE_OVERFLOW);
		first = 0;
		/* OVERFLOW is always followed by RESUME, RESUME only follows OVERFLOW
		 * and carries the timestamp of the event after it, or its
		 * OVERFLOW's (docs/implementation-defined.md, "Where losses are
		 * told") */
		if ((prev_id == POSIX_TRACE_OVERFLOW) != (id == POSIX_TRACE_RESUME))
			res.bad_pairing++;
		if (id == POSIX_TRACE_RESUME && prev_id == POSIX_TRACE_OVERFLOW &&
		    ts_before(&ev.posix_timestamp, &overflow_ts))
			res.bad_resume_ts++;
		if (prev_id == POSIX_TRACE_RESUME && !ts_equal(&resume_ts, &ev.posix_timestamp) &&
		    !ts_equal(&resume_ts, &overflow_ts))
			res.bad_resume_ts++;
		prev_id = id;

		if (id == ev_id) {
			user_event(&ev, data, len);
		} else if (id == POSIX_TRACE_START) {
			res.starts++;
		} else if (id == POSIX_TRACE_STOP) {
			res.stops++;
			res.stop_data = -1;
			if (len == sizeof(int))
				memcpy(&res.stop_data, data, sizeof(int));
			break;
		} else if (id == POSIX_TRACE_OVERFLOW) {
			res.overflows++;
			overflow_ts = ev.posix_timestamp;
		} else if (id == POSIX_TRACE_RESUME) {
			res.resumes++;
			res.pairs++;
			resume_ts = ev.posix_timestamp;
		} else if (id == POSIX_TRACE_ERROR) {
			res.errors++;
		} else {
			res.others++;
		}
	}
	return NULL;
}

/* Record n events from each of nw writers while a reader reads them. */
static void run(unsigned nw, int try, int loop, size_t stream_size, uint64_t n)
{
	trace_attr_t attr;
	pthread_t th[MAX_WRITERS], rd;

	nwriters = nw;
	use_try = try;
	loop_mode = loop;
	memset(&res, 0, sizeof res);
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, stream_size), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr,
	                                              loop ? POSIX_TRACE_LOOP : POSIX_TRACE_UNTIL_FULL),
	         0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&attr, sizeof(struct payload)), 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	CHECK_RC(posix_trace_start(trid), 0);

	REQUIRE(pthread_create(&rd, NULL, reader_main, NULL) == 0);
	REQUIRE(pthread_barrier_init(&barrier, NULL, nw) == 0);
	for (unsigned i = 0; i < nw; i++) {
		writers[i].index = i;
		writers[i].count = n;
		REQUIRE(pthread_create(&th[i], NULL, writer_main, &writers[i]) == 0);
	}
	for (unsigned i = 0; i < nw; i++)
		CHECK_RC(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&barrier);
	CHECK_RC(posix_trace_stop(trid), 0);
	CHECK_RC(pthread_join(rd, NULL), 0);

	CHECK(res.first_is_start);
	CHECK_EQ(res.starts, loop && res.starts == 0 && res.overflows ? 0 : 1);
	CHECK_EQ(res.stops, 1);
	CHECK_EQ(res.stop_data, 0);
	CHECK_EQ(res.bad_rc, 0);
	CHECK_EQ(res.bad_payload, 0);
	CHECK_EQ(res.bad_order, 0);
	CHECK_EQ(res.bad_thread, 0);
	CHECK_EQ(res.bad_gap, 0);
	CHECK_EQ(res.errors, 0);
	CHECK_EQ(res.others, 0);

	struct posix_trace_status_info st;
	CHECK_RC(posix_trace_get_status(trid, &st), 0);
	if (!loop) {
		for (unsigned i = 0; i < nw; i++) {
			CHECK_EQ(res.got[i], n);
			CHECK_EQ(res.next_seq[i], n);
		}
		CHECK_EQ(res.gaps, 0);
		CHECK_EQ(res.overflows, 0);
		CHECK_EQ(res.resumes, 0);
		CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	} else {
		CHECK_EQ(res.bad_pairing, 0);
		CHECK_EQ(res.bad_resume_ts, 0);
		CHECK_EQ(res.overflows, res.resumes);
		if (res.overflows)
			CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
		printf("loop: read %llu + %llu events, %llu gaps, %llu overflows\n",
		       (unsigned long long)res.got[0], (unsigned long long)res.got[1],
		       (unsigned long long)res.gaps, (unsigned long long)res.overflows);
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);
	if (t_failures)
		fprintf(stderr, "concurrent_reader: failures so far (writers %u, %s, %s)\n", nw,
		        try ? "trygetnext" : "getnext", loop ? "LOOP" : "UNTIL_FULL");
}

int main(void)
{
	T_BEGIN(120);
	CHECK_RC(posix_trace_eventid_open("concurrent_reader.record", &ev_id), 0);
	for (unsigned nw = 2; nw <= MAX_WRITERS; nw++)
		run(nw, 0, 0, 64u << 20, N_FULL);
	for (unsigned nw = 2; nw <= MAX_WRITERS; nw++)
		run(nw, 1, 0, 64u << 20, N_FULL);
	run(2, 0, 1, 128u << 10, N_LOOP);
	run(2, 1, 1, 128u << 10, N_LOOP);
	T_END();
}
