/*
 * log_merge.c -- the flusher merges the records of many threads whose
 * events interleave finely (src/flush/flushrun.c), and the log it writes
 * is the exact, time-ordered union of what they recorded.
 *
 * The witness is the program's own: each thread, after recording its event
 * number s, publishes s + 1 in an atomic counter of its own; before each
 * event it reads the counter of one other thread (a different one each
 * time) and puts what it read in the payload.  An event that carries
 * "thread j had published p" happened after thread j's event p - 1 was
 * recorded, whatever the library does; so, with a clock that keeps the
 * program's order (POSIXTRACE_CLOCK=ordered or monotonic, each run in a
 * child started with it), the log must hold j's event p - 1 before it,
 * unless both carry the same timestamp (events of equal timestamps come
 * in no promised order).  Threads free-run (no lock between them), 2, 7
 * (more than this machine's CPUs), 64 (the most the flusher merges at
 * once) and 70 (more: its run of one writer at a time), into a FLUSH
 * stream with a log in no-loss mode (nothing is dropped), small enough
 * that the flusher drains it while they record.  For each:
 *  - exactly N events per thread, numbered 0..N-1 in each thread's order,
 *    with that thread's id and this pid, intact payloads;
 *  - (reported only: events stamped before the event before them in the
 *    log.  A thread preempted between taking its timestamp and publishing
 *    its event publishes it after events stamped later, which the reader
 *    may already have returned: docs/implementation-defined.md, "Reading".)
 *  - no OVERFLOW, RESUME or ERROR event;
 *  - the witness above (counted only, with the default clock: rdtsc may
 *    read ahead of the instructions before it).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "../src/ext.h"

#define MAXTHR 70
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define TOTAL 60000u
#else
#define TOTAL 600000u
#endif

struct payload {
	uint32_t thr, seq;    /* this event */
	uint32_t other, seen; /* thread `other` had published `seen` before it */
};

static trace_event_id_t ev_id;
static pthread_barrier_t bar;
static _Atomic uint32_t published[MAXTHR];
static pthread_t tids[MAXTHR];
static unsigned nthr, per;

static void *worker(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;

	tids[me] = pthread_self();
	pthread_barrier_wait(&bar);
	for (uint32_t s = 0; s < per; s++) {
		uint32_t j = (me + 1 + s % (nthr - 1)) % nthr; /* never me */
		struct payload p = { me, s, j, atomic_load_explicit(&published[j],
		                                                    memory_order_acquire) };
		posix_trace_event(ev_id, &p, sizeof p);
		atomic_store_explicit(&published[me], s + 1, memory_order_release);
	}
	return NULL;
}

struct seen {
	long long ts;
	uint32_t thr, seq;
	uint32_t other, want; /* the witness: other's event want - 1 first */
};

static void run(unsigned n, int strict)
{
	char path[] = "/tmp/pt-log-merge-XXXXXX";
	int fd = mkstemp(path);
	trace_attr_t at;
	trace_id_t t, log;
	pthread_t th[MAXTHR];

	REQUIRE(fd >= 0);
	unlink(path);
	nthr = n;
	per = TOTAL / n;
	for (unsigned i = 0; i < n; i++)
		atomic_store(&published[i], 0);
	posix_trace_attr_init(&at);
	REQUIRE(posix_trace_attr_setstreamsize(&at, 4u << 20) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&at, POSIX_TRACE_APPEND) == 0);
	REQUIRE(posixtrace_attr_setnoloss(&at, 10000) == 0);
	REQUIRE(posix_trace_create_withlog(0, &at, fd, &t) == 0);
	posix_trace_attr_destroy(&at);
	REQUIRE(posix_trace_start(t) == 0);
	REQUIRE(pthread_barrier_init(&bar, NULL, n) == 0);
	for (unsigned i = 0; i < n; i++)
		REQUIRE(pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i) == 0);
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	CHECK_RC(posix_trace_shutdown(t), 0);

	/* read it all back */
	size_t cap = (size_t)n * per, got = 0;
	struct seen *ev = calloc(cap, sizeof *ev);
	uint32_t *count = calloc(n, sizeof *count), **pos = calloc(n, sizeof *pos);
	REQUIRE(ev && count && pos);
	for (unsigned i = 0; i < n; i++)
		REQUIRE((pos[i] = calloc(per, sizeof **pos)));
	long long last_ts = 0, backwards = 0, back_worst = 0, bad = 0, extra = 0, system = 0;
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0 && posix_trace_open(fd, &log) == 0);
	for (;;) {
		struct posix_trace_event_info e;
		struct payload p;
		size_t len = 0;
		if (t_get(log, &e, &p, sizeof p, &len))
			break;
		trace_event_id_t id = e.posix_event_id;
		if (id == POSIX_TRACE_OVERFLOW || id == POSIX_TRACE_RESUME || id == POSIX_TRACE_ERROR)
			system++;
		if (id != ev_id)
			continue;
		long long ts = e.posix_timestamp.tv_sec * 1000000000LL + e.posix_timestamp.tv_nsec;
		if (ts < last_ts) {
			backwards++;
			back_worst = last_ts - ts > back_worst ? last_ts - ts : back_worst;
		}
		last_ts = ts;
		if (len != sizeof p || p.thr >= n || p.seq >= per || p.other >= n ||
		    p.other == p.thr || p.seen > per || e.posix_pid != getpid() ||
		    !pthread_equal(e.posix_thread_id, tids[p.thr]) ||
		    e.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED) {
			bad++;
			continue;
		}
		if (p.seq != count[p.thr] || got == cap) { /* out of the thread's order, or twice */
			extra++;
			continue;
		}
		count[p.thr]++;
		pos[p.thr][p.seq] = (uint32_t)got;
		ev[got++] = (struct seen){ ts, p.thr, p.seq, p.other, p.seen };
	}
	CHECK_RC(posix_trace_close(log), 0);
	close(fd);

	long long short_of = 0, witness = 0, worst = 0;
	for (unsigned i = 0; i < n; i++)
		short_of += per - count[i];
	for (size_t k = 0; k < got; k++) {
		const struct seen *s = &ev[k];
		if (!s->want || count[s->other] < s->want)
			continue; /* (a missing event is counted above) */
		const struct seen *before = &ev[pos[s->other][s->want - 1]];
		if (pos[s->other][s->want - 1] > k && before->ts != s->ts) {
			witness++;
			if (before->ts - s->ts > worst)
				worst = before->ts - s->ts;
		}
	}
	CHECK_EQ(got, cap);
	CHECK_EQ(short_of, 0);
	CHECK_EQ(bad, 0);
	CHECK_EQ(extra, 0);
	CHECK_EQ(system, 0);
	if (strict)
		CHECK_EQ(witness, 0);
	printf("%s, %u threads: %zu events in the log; before an event they had seen "
	       "recorded: %lld (stamped up to %lld ns later)%s; stamped before the event "
	       "before them: %lld (by up to %lld ns, not checked)\n",
	       getenv("POSIXTRACE_CLOCK") ? getenv("POSIXTRACE_CLOCK") : "default clock", n, got,
	       witness, worst, strict ? "" : " [not checked: this clock does not promise it]",
	       backwards, back_worst);
	for (unsigned i = 0; i < n; i++)
		free(pos[i]);
	free(pos);
	free(count);
	free(ev);
}

static void run_all(int strict)
{
	static const unsigned counts[] = { 2, 7, 64, MAXTHR };

	for (unsigned i = 0; i < sizeof counts / sizeof counts[0]; i++)
		run(counts[i], strict);
}

int main(int argc, char **argv)
{
	static const char *const clocks[] = { "ordered", "monotonic" };

	(void)argc;
	T_BEGIN(240);
	REQUIRE(posix_trace_eventid_open("log_merge.ev", &ev_id) == 0);
	if (getenv("POSIXTRACE_CLOCK")) { /* a child: the clock it was started with */
		run_all(1);
		T_END();
	}
	t_rerun_with_env(argv[0], "POSIXTRACE_CLOCK", clocks, sizeof clocks / sizeof clocks[0]);
	run_all(0);
	T_END();
}
