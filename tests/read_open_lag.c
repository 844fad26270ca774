/*
 * read_open_lag.c -- the reader's lag on open chunks (rd->open_lag, set
 * by the flusher between flushes: flush/flusher.c, OPEN_LAG_NS, so that a
 * busy thread's chunk goes into the log whole once sealed).  With a lag,
 * a record in a chunk its writer still records into, stamped less than
 * the lag before the look, is not read, nor is anything after it; the
 * records of a sealed chunk are, however young; with the lag off again,
 * everything is, in order, exactly once.  Each case on a stream of this
 * process (UNTIL_FULL, 1 MiB), read with trygetnext, its lag (an hour)
 * set through the reader's own call under the stream's lock.
 *
 * 1. 100 events in this thread's open chunk: none read with the lag; the
 *    100 with none.
 * 2. A lag turned on while a run (the reader's way of reading one writer's
 *    records without a look) is allowed on the open chunk: 50 of 200 read
 *    before, none after, the other 150 once the lag is off.
 * 3. Three and a half chunks' worth: with the lag, exactly the records of
 *    this thread's sealed chunks (their counts, off the segment), the
 *    first ones; then the rest.
 * 4. A quiet thread's one event, in its open chunk, before three and a
 *    half chunks' worth of this thread's: with the lag, its event and the
 *    records of this thread's sealed chunks (a young record in an open
 *    chunk holds back nothing sealed), then nothing; then the rest.
 * 5. A lag of 400 ms on 100 events recorded 800 ms before 100 more, all
 *    in the open chunk (800 ms is under 2^32 ticks of any TSC up to 5
 *    GHz: the later records are short, and a run of the reader's, which
 *    a wide record would end, reaches them): read with the lag, those
 *    stamped over 400 ms before the read (the first 100, unless this
 *    thread was held up as long), none of those stamped less than 400 ms
 *    before it ends (the others); an event's time is within 10 us of the
 *    truth (docs/implementation-defined.md).
 * 6. A child's 10 events in a stream of its own that this process made
 *    (so that the reader can tell a process gone), in its open chunk, the
 *    child ended (_exit: nothing sealed): read with the lag all the same,
 *    its process being gone (its chunk is never sealed, and goes back to
 *    the pool only once read).
 */
#include <stdatomic.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "../src/api/api.h"
#include "helpers.h"

#define LAG_NS 3600000000000ull
#define EPS_NS 10000u /* (an event's time against the truth) */
#define LAG5_NS 400000000 /* case 5's lag */

static trace_event_id_t id;
static uint64_t seq, want; /* the next sequence recorded, and read */

static void record(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++, seq++)
		posix_trace_event(id, &seq, sizeof seq);
}

static void lag(trace_id_t trid, uint64_t ns)
{
	struct pt_trid *t;
	REQUIRE(pt_trid_lock(trid, &t) == 0);
	pt_read_open_lag(&t->s, ns);
	pt_trid_unlock(t);
}

/* Case 4's quiet thread: one event, then it waits (its chunk open) */
static pthread_mutex_t quiet_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int quiet_done;
static trace_event_id_t quiet_id;
static void *quiet(void *arg)
{
	uint64_t v = 7;
	posix_trace_event(quiet_id, &v, sizeof v);
	atomic_store(&quiet_done, 1);
	pthread_mutex_lock(&quiet_mu);
	pthread_mutex_unlock(&quiet_mu);
	return arg;
}

static int64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Up to max of this thread's events read now, each the one expected next
 * (its time kept in when[] for case 5), the quiet thread's counted in
 * quiet_n, system events skipped: how many of this thread's */
static int64_t when[200];
static uint64_t quiet_n;
static uint64_t read_some(trace_id_t trid, uint64_t max)
{
	struct posix_trace_event_info ev;
	uint64_t v, n = 0;
	size_t len;

	while (n < max && t_next(trid, &ev, &v, sizeof v, &len)) {
		quiet_n += ev.posix_event_id == quiet_id;
		if (ev.posix_event_id != id)
			continue;
		int ok = len == sizeof v && v == want;
		CHECK(ok);
		if (!ok) {
			fprintf(stderr, "read %llu (%zu bytes), expected %llu\n", (unsigned long long)v,
			        len, (unsigned long long)want);
			exit(1);
		}
		if (want < sizeof when / sizeof when[0])
			when[want] = (int64_t)ev.posix_timestamp.tv_sec * 1000000000 +
			             ev.posix_timestamp.tv_nsec;
		want++, n++;
	}
	return n;
}

/* The records in this thread's sealed chunks (level 0), and the chunk size */
static uint64_t sealed_records(trace_id_t trid, uint32_t *chunk_size)
{
	struct pt_trid *t;
	uint64_t n = 0;

	REQUIRE(pt_trid_lock(trid, &t) == 0);
	const struct pt_view *v = &t->s.view;
	for (uint32_t c = 0; c < v->nchunks; c++) {
		const struct pt_chunk *ck = &v->chunks[c];
		if (PT_SS_STATE(atomic_load(&ck->ss)) == PT_CK_SEALED && !atomic_load(&ck->level) &&
		    atomic_load(&ck->pid) == getpid() &&
		    atomic_load(&ck->thread) == (uint64_t)pthread_self())
			n += atomic_load(&ck->nevents);
	}
	*chunk_size = v->chunk_size;
	pt_trid_unlock(t);
	return n;
}

static trace_id_t stream(void)
{
	seq = want = 0;
	return t_own_started(0, 1u << 20);
}

static void done(trace_id_t trid)
{
	REQUIRE(posix_trace_shutdown(trid) == 0);
}

int main(void)
{
	T_BEGIN(60);
	REQUIRE(posix_trace_eventid_open("lag.event", &id) == 0);
	REQUIRE(posix_trace_eventid_open("lag.quiet", &quiet_id) == 0);

	/* 1 */
	trace_id_t trid = stream();
	record(100);
	lag(trid, LAG_NS);
	CHECK(read_some(trid, UINT64_MAX) == 0);
	lag(trid, 0);
	CHECK(read_some(trid, UINT64_MAX) == 100);
	done(trid);

	/* 2 */
	trid = stream();
	record(200);
	CHECK(read_some(trid, 50) == 50);
	lag(trid, LAG_NS);
	CHECK(read_some(trid, UINT64_MAX) == 0);
	lag(trid, 0);
	CHECK(read_some(trid, UINT64_MAX) == 150);
	done(trid);

	/* 3 */
	trid = stream();
	uint32_t cs;
	(void)sealed_records(trid, &cs);
	uint64_t n = (uint64_t)cs * 7 / 2 / 16; /* (16 bytes a short record) */
	record(n);
	uint64_t sealed = sealed_records(trid, &cs);
	printf("%llu events, %llu of them in sealed chunks of %u bytes\n", (unsigned long long)n,
	       (unsigned long long)sealed, cs);
	CHECK(sealed >= 3 * (cs / 16 - 1) && sealed < n);
	lag(trid, LAG_NS);
	uint64_t got = read_some(trid, UINT64_MAX);
	printf("read with the lag: %llu\n", (unsigned long long)got);
	CHECK(got == sealed);
	CHECK(read_some(trid, UINT64_MAX) == 0);
	lag(trid, 0);
	CHECK(read_some(trid, UINT64_MAX) == n - sealed);
	done(trid);

	/* 4 */
	trid = stream();
	pthread_t q;
	REQUIRE(pthread_mutex_lock(&quiet_mu) == 0);
	REQUIRE(pthread_create(&q, NULL, quiet, NULL) == 0);
	while (!atomic_load(&quiet_done))
		t_nap_ms(1);
	record(n);
	sealed = sealed_records(trid, &cs);
	lag(trid, LAG_NS);
	quiet_n = 0;
	uint64_t mine = read_some(trid, UINT64_MAX), other = quiet_n;
	printf("with a quiet thread: %llu of its events and %llu of %llu read with the lag "
	       "(%llu in sealed chunks)\n", (unsigned long long)other, (unsigned long long)mine,
	       (unsigned long long)n, (unsigned long long)sealed);
	CHECK(other == 1 && mine == sealed);
	lag(trid, 0);
	CHECK(read_some(trid, UINT64_MAX) == n - sealed);
	REQUIRE(pthread_mutex_unlock(&quiet_mu) == 0);
	REQUIRE(pthread_join(q, NULL) == 0);
	done(trid);

	/* 5 */
	trid = stream();
	record(100);
	t_nap_ms(800);
	record(100);
	t_nap_ms(1); /* (older than the reader's slack, 20 us: a run may reach them) */
	lag(trid, LAG5_NS);
	int64_t before = real_ns();
	uint64_t k = read_some(trid, UINT64_MAX);
	int64_t after = real_ns();
	lag(trid, 0);
	CHECK(read_some(trid, UINT64_MAX) == 200 - k);
	uint64_t must = 0, may = 0;
	for (int i = 0; i < 200; i++) {
		must += when[i] < before - LAG5_NS - EPS_NS;
		may += when[i] < after - LAG5_NS + EPS_NS;
	}
	printf("lag of 400 ms: %llu of 200 read (at least %llu, at most %llu)\n",
	       (unsigned long long)k, (unsigned long long)must, (unsigned long long)may);
	CHECK(must >= 100 && k >= must && k <= may);
	done(trid);

	/* 6 */
	struct t_pipes pp;
	pid_t child = t_fork_piped(&pp);
	if (child == 0) {
		char go;
		if (t_read_full(pp.cmd, &go, 1) != 0)
			_exit(1);
		seq = 0;
		record(10);
		_exit(0);
	}
	trace_attr_t attr;
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 1u << 20) == 0);
	trid = t_create_ok(child, &attr);
	REQUIRE(posix_trace_start(trid) == 0);
	/* (its START, in this process's chunk, which stays open: read first) */
	REQUIRE(posix_trace_trid_eventid_open(trid, "lag.event", &id) == 0);
	seq = want = 0;
	CHECK(read_some(trid, UINT64_MAX) == 0);
	t_write_full(pp.cmd, "g", 1);
	int st;
	REQUIRE(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	lag(trid, LAG_NS);
	uint64_t got6 = read_some(trid, UINT64_MAX);
	printf("a child gone: %llu of its 10 events read with the lag\n", (unsigned long long)got6);
	CHECK_EQ(got6, 10);
	done(trid);
	T_END();
}
