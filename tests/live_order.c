/*
 * live_order.c -- a live reader returns events in timestamp order even when
 * a writer is held between stamping an event and committing it (issue 46,
 * item 5), and counts an event as late when the hold outlasts its bound.
 *
 * The hold needs no hook in the library: the held event's payload is a
 * page made PROT_NONE, so the copy into the chunk faults after the event
 * was stamped; the writer's SIGSEGV handler waits (for the other writer to
 * be done, and in the short-bound case for the reader to have returned
 * its events), makes the page readable and returns, and the copy then
 * completes: stamped before the hold, committed after it.  Meanwhile
 * another thread records events stamped during the hold, and the
 * controller reads with posix_trace_getnext_event().  Each payload is a
 * witness (a sequence number per id), so every event is counted exactly.
 *
 *   armed    the held event goes the fast path (the writer recorded
 *            from the same site before), bound 10 s: 0 steps back, 0 late
 *   general  the held event is its writer's first (the general way, a new
 *            chunk taken marked), bound 10 s: 0 steps back, 0 late
 *   short    as armed, bound 20 ms, shorter than the hold: the held
 *            event comes out after later ones, once, counted late (1)
 *   many     8 writers (more than CPUs) x 20000 events, bound 10 s:
 *            0 steps back, every event once
 *   log      as armed, in a stream with a log (FLUSH), read back from the
 *            log: 0 steps back, every event once
 *   killed   a forked child (an inherited stream) is killed while held
 *            in an event, bound 60 s: the reader finds its writer gone
 *            and returns the events after it long before the bound
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "helpers.h"
#include "../src/ext.h"

#define WARM   5     /* held writer's events before the held one */
#define NFLOW  40    /* events the other writer records during the hold */
#define NMANY  8
#define EMANY  20000

static trace_event_id_t id_held, id_flow;
static atomic_int faulted, flow_done, reader_flow, wait_reader;
static int hold_pipe = -1; /* killed: the child says it is held, and stays */

/* Every event from one call site, so that after the first the fast path
 * takes them (its caller is the last record's). */
__attribute__((noinline)) static void emit(trace_event_id_t id, const void *p, size_t n)
{
	posix_trace_event(id, p, n);
}

/* The held writer's fault (t_held_init): wait, then let the copy go on.
 * (Only async-signal-safe calls.) */
static void hold(void)
{
	if (hold_pipe >= 0) {
		(void)!write(hold_pipe, "h", 1);
		for (;;)
			pause();
	}
	atomic_store(&faulted, 1);
	for (int i = 0; i < 20000 && !atomic_load(&flow_done); i++)
		t_nap_ms(1);
	if (atomic_load(&wait_reader)) /* short bound: until the reader passed us */
		for (int i = 0; i < 20000 && atomic_load(&reader_flow) < NFLOW; i++)
			t_nap_ms(1);
	else
		t_nap_ms(100); /* the reader, waiting for us, is given time to err */
}

static void *held_writer(void *arg)
{
	int warm = *(int *)arg;
	uint64_t seq = 0;

	for (; seq < (uint64_t)warm; seq++)
		emit(id_held, &seq, sizeof seq);
	const void *page = t_held_page(&seq, sizeof seq);
	seq++;
	REQUIRE(page != NULL);
	emit(id_held, page, sizeof seq); /* stamped, then held in the copy */
	emit(id_held, &seq, sizeof seq); /* after the hold */
	return NULL;
}

static void *flow_writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&faulted))
		t_nap_ms(1);
	for (uint64_t seq = 0; seq < NFLOW; seq++) {
		emit(id_flow, &seq, sizeof seq);
		t_nap_ms(1);
	}
	atomic_store(&flow_done, 1);
	return NULL;
}

static trace_id_t start_stream_inh(const char *wait_ms, int inherit)
{
	trace_attr_t attr;
	trace_id_t trid;

	REQUIRE(setenv("POSIXTRACE_LATE_WAIT_MS", wait_ms, 1) == 0);
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 8u << 20) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_attr_setinherited(&attr, inherit) == 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	posix_trace_attr_destroy(&attr);
	REQUIRE(posix_trace_eventid_open("held", &id_held) == 0);
	REQUIRE(posix_trace_eventid_open("flow", &id_flow) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	return trid;
}

static trace_id_t start_stream(const char *wait_ms)
{
	return start_stream_inh(wait_ms, POSIX_TRACE_CLOSE_FOR_CHILD);
}

/* The events of trid until `want` user events came, checked: steps back,
 * and each (id, seq) once.  seen[k][seq]: k 0 held, 1 flow, 2+ the many. */
struct tally {
	unsigned back, dup, bad;
	unsigned got;
};

static long long ns_of(const struct timespec *ts)
{
	return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* (want 0: until the end of a log) */
static void read_all(trace_id_t trid, unsigned want, unsigned char *seen, size_t per,
                     struct tally *t, trace_event_id_t *ids, unsigned nids)
{
	struct posix_trace_event_info ev;
	uint64_t seq;
	size_t len;
	int none;
	long long last = 0;

	memset(t, 0, sizeof *t);
	while (!want || t->got < want) {
		REQUIRE(posix_trace_getnext_event(trid, &ev, &seq, sizeof seq, &len, &none) == 0);
		if (none && !want)
			break;
		if (none)
			continue;
		long long now = ns_of(&ev.posix_timestamp);
		if (now < last)
			t->back++;
		if (now > last)
			last = now;
		unsigned k = 0;
		while (k < nids && ids[k] != ev.posix_event_id)
			k++;
		if (k == nids)
			continue; /* a system event */
		t->got++;
		if (len != sizeof seq || seq >= per) {
			t->bad++;
			continue;
		}
		if (seen[k * per + seq]++)
			t->dup++;
		if (ev.posix_event_id == id_flow)
			atomic_fetch_add(&reader_flow, 1);
	}
}

static void held_case(const char *name, int warm, const char *wait_ms, unsigned late)
{
	atomic_store(&faulted, 0);
	atomic_store(&flow_done, 0);
	atomic_store(&reader_flow, 0);
	atomic_store(&wait_reader, late != 0);
	trace_id_t trid = start_stream(wait_ms);
	pthread_t h, f;
	REQUIRE(pthread_create(&f, NULL, flow_writer, NULL) == 0);
	REQUIRE(pthread_create(&h, NULL, held_writer, &warm) == 0);

	unsigned char seen[2 * 64] = { 0 };
	trace_event_id_t ids[2] = { id_held, id_flow };
	struct tally t;
	read_all(trid, (unsigned)warm + 2 + NFLOW, seen, 64, &t, ids, 2);
	pthread_join(h, NULL);
	pthread_join(f, NULL);

	struct pt_ext_losses x;
	CHECK_RC(pt_ext_losses(trid, &x), 0);
	printf("%-8s steps back %u, late %llu, events %u (duplicates %u, bad %u)\n", name, t.back,
	       (unsigned long long)x.late, t.got, t.dup, t.bad);
	CHECK_EQ(t.back, late);
	CHECK_EQ(x.late, late);
	CHECK_EQ(t.dup, 0);
	CHECK_EQ(t.bad, 0);
	unsigned missing = 0;
	for (int s = 0; s < warm + 2; s++)
		missing += !seen[s];
	for (int s = 0; s < NFLOW; s++)
		missing += !seen[64 + s];
	CHECK_EQ(missing, 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

static trace_event_id_t many_ids[NMANY];

static void *many_writer(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	for (uint64_t seq = 0; seq < EMANY; seq++) {
		emit(many_ids[k], &seq, sizeof seq);
		if (seq % 256 == 0)
			sched_yield();
	}
	return NULL;
}

static void many_case(void)
{
	trace_id_t trid = start_stream("10000");
	char name[16];
	for (unsigned k = 0; k < NMANY; k++) {
		snprintf(name, sizeof name, "many%u", k);
		REQUIRE(posix_trace_eventid_open(name, &many_ids[k]) == 0);
	}
	pthread_t th[NMANY];
	for (unsigned k = 0; k < NMANY; k++)
		REQUIRE(pthread_create(&th[k], NULL, many_writer, (void *)(uintptr_t)k) == 0);
	unsigned char *seen = calloc((size_t)NMANY * EMANY, 1);
	REQUIRE(seen);
	struct tally t;
	read_all(trid, NMANY * EMANY, seen, EMANY, &t, many_ids, NMANY);
	for (unsigned k = 0; k < NMANY; k++)
		pthread_join(th[k], NULL);
	struct pt_ext_losses x;
	CHECK_RC(pt_ext_losses(trid, &x), 0);
	printf("many     steps back %u, late %llu, events %u (duplicates %u, bad %u, lost %llu)\n",
	       t.back, (unsigned long long)x.late, t.got, t.dup, t.bad,
	       (unsigned long long)x.total);
	CHECK_EQ(t.back, 0);
	CHECK_EQ(x.late, 0);
	CHECK_EQ(t.got, NMANY * EMANY);
	CHECK_EQ(t.dup, 0);
	CHECK_EQ(t.bad, 0);
	CHECK_EQ(x.total, 0);
	free(seen);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

/* The held writer's events with a log: the flusher reads the stream (it
 * does not wait for a writer in flight), the log reads in timestamp
 * order, every event once. */
static void log_case(void)
{
	atomic_store(&faulted, 0);
	atomic_store(&flow_done, 0);
	atomic_store(&reader_flow, 0);
	atomic_store(&wait_reader, 0);
	int fd = memfd_create("live_order", 0);
	REQUIRE(fd >= 0);
	trace_attr_t attr;
	trace_id_t trid, lt;
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 8u << 20) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH) == 0);
	REQUIRE(posix_trace_create_withlog(0, &attr, fd, &trid) == 0);
	posix_trace_attr_destroy(&attr);
	REQUIRE(posix_trace_eventid_open("held", &id_held) == 0);
	REQUIRE(posix_trace_eventid_open("flow", &id_flow) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	int warm = WARM;
	pthread_t h, f;
	REQUIRE(pthread_create(&f, NULL, flow_writer, NULL) == 0);
	REQUIRE(pthread_create(&h, NULL, held_writer, &warm) == 0);
	pthread_join(h, NULL);
	pthread_join(f, NULL);
	CHECK_RC(posix_trace_shutdown(trid), 0);

	REQUIRE(lseek(fd, 0, SEEK_SET) == 0 && posix_trace_open(fd, &lt) == 0);
	/* (the log keeps the stream's ids, and their names) */
	trace_event_id_t ids[2] = { id_held, id_flow };
	char name[TRACE_EVENT_NAME_MAX + 1]; /* (the most characters, and the NUL) */
	CHECK(posix_trace_eventid_get_name(lt, id_held, name) == 0 && !strcmp(name, "held"));
	CHECK(posix_trace_eventid_get_name(lt, id_flow, name) == 0 && !strcmp(name, "flow"));
	unsigned char seen[2 * 64] = { 0 };
	struct tally t;
	read_all(lt, 0, seen, 64, &t, ids, 2);
	printf("log      steps back %u, events %u (duplicates %u, bad %u)\n", t.back, t.got, t.dup,
	       t.bad);
	CHECK_EQ(t.back, 0);
	CHECK_EQ(t.got, WARM + 2 + NFLOW);
	CHECK_EQ(t.dup, 0);
	CHECK_EQ(t.bad, 0);
	CHECK_RC(posix_trace_close(lt), 0);
	close(fd);
}

static void killed_case(void)
{
	int pfd[2];
	REQUIRE(pipe(pfd) == 0);
	trace_id_t trid = start_stream_inh("60000", POSIX_TRACE_INHERITED);
	pid_t c = fork();
	REQUIRE(c >= 0);
	if (c == 0) {
		close(pfd[0]);
		hold_pipe = pfd[1];
		uint64_t seq = 0;
		emit(id_held, &seq, sizeof seq);
		seq = 1;
		emit(id_held, t_held_page(&seq, sizeof seq), sizeof seq); /* held until killed */
		_exit(1);
	}
	close(pfd[1]);
	char x;
	REQUIRE(read(pfd[0], &x, 1) == 1);
	close(pfd[0]);
	double t0 = t_now_s();
	REQUIRE(kill(c, SIGKILL) == 0);
	REQUIRE(waitpid(c, NULL, 0) == c);
	for (uint64_t seq = 0; seq < NFLOW; seq++)
		emit(id_flow, &seq, sizeof seq);

	unsigned char seen[2 * 64] = { 0 };
	trace_event_id_t ids[2] = { id_held, id_flow };
	struct tally t;
	read_all(trid, 1 + NFLOW, seen, 64, &t, ids, 2);
	double took = t_now_s() - t0;
	struct pt_ext_losses x2;
	CHECK_RC(pt_ext_losses(trid, &x2), 0);
	printf("killed   steps back %u, late %llu, events %u (duplicates %u, bad %u), %.3f s\n",
	       t.back, (unsigned long long)x2.late, t.got, t.dup, t.bad, took);
	CHECK_EQ(t.back, 0);
	CHECK_EQ(t.dup, 0);
	CHECK_EQ(t.bad, 0);
	CHECK(seen[0] && !seen[1]); /* the held event never came */
	unsigned missing = 0;
	for (int s = 0; s < NFLOW; s++)
		missing += !seen[64 + s];
	CHECK_EQ(missing, 0);
	CHECK(took < 30.0); /* not the bound's 60 s: its writer was found gone */
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

int main(void)
{
	T_BEGIN(120);
	REQUIRE(t_held_init(hold) == 0);

	held_case("armed", WARM, "10000", 0);
	held_case("general", 0, "10000", 0);
	held_case("short", WARM, "20", 1);
	many_case();
	killed_case();
	log_case();
	T_END();
}
