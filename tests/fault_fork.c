/*
 * fault_fork.c -- fork() from a traced process while its threads record.
 *
 * The process makes an UNTIL_FULL stream for itself with
 * POSIX_TRACE_INHERITED, big enough that nothing is dropped.  Three
 * threads record in loops (payload: pid, thread, sequence number,
 * checksum) while the main thread records 100 events and forks, ten
 * times.  Each child records K events from the thread that forked (the
 * only thread it has: after a multi-threaded fork POSIX allows only
 * async-signal-safe calls, and posix_trace_event() is one) and _exits.
 * Read back: every event is intact and from a known (pid, thread); each
 * (pid, thread)'s sequence numbers are exactly 0..n-1; the parent's
 * threads have exactly the events they recorded, its main thread
 * 10 x 100, each child exactly K, all with the forking thread's id; no
 * other process, no OVERFLOW or ERROR, START and STOP once, NO_OVERRUN.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#define NTHR 3
#define NFORK 10
#define MAIN_PER_FORK 100
#define K 2000
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CAP 50000
#else
#define CAP 200000 /* per thread: everything fits the stream */
#endif
#define MAIN_THR NTHR

struct payload { uint32_t pid, thr; uint64_t seq, sum; };

static trace_event_id_t ev_id;
static uint32_t my_pid;

static void rec(uint32_t thr, uint64_t seq)
{
	struct payload p = { my_pid, thr, seq, t_check64(my_pid, thr, seq) };
	posix_trace_event(ev_id, &p, sizeof p);
}

static atomic_int stop;
static uint64_t produced[NTHR];
static atomic_uint_fast64_t progress[NTHR];

static void *spin(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;
	uint64_t i = 0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed) && i < CAP) {
		rec(me, i++);
		atomic_store_explicit(&progress[me], i, memory_order_relaxed);
	}
	produced[me] = i;
	return NULL;
}

/* Per (pid, thread): events, and whether they were in sequence. */
struct writer { uint32_t pid, thr; uint64_t n, bad_seq; pthread_t tid; int tid_bad; };
static struct writer w[64];
static int nw;

static struct writer *writer_of(uint32_t pid, uint32_t thr)
{
	for (int i = 0; i < nw; i++)
		if (w[i].pid == pid && w[i].thr == thr)
			return &w[i];
	REQUIRE(nw < 64);
	w[nw] = (struct writer){ pid, thr, 0, 0, 0, 0 };
	return &w[nw++];
}

/* What t_drain() found in the stream besides the writers' sequences. */
struct tally { uint64_t bad, starts, stops, others; };

static void tally(void *arg, int i, const struct posix_trace_event_info *ev, const void *data,
                  size_t len)
{
	struct tally *c = arg;
	struct payload p;
	(void)i;
	if (ev->posix_event_id == POSIX_TRACE_START || ev->posix_event_id == POSIX_TRACE_STOP) {
		c->starts += ev->posix_event_id == POSIX_TRACE_START;
		c->stops += ev->posix_event_id == POSIX_TRACE_STOP;
		return;
	}
	if (ev->posix_event_id != ev_id) {
		c->others++;
		return;
	}
	memcpy(&p, data, sizeof p);
	if (len != sizeof p || p.pid != (uint32_t)ev->posix_pid || p.thr > MAIN_THR ||
	    p.sum != t_check64(p.pid, p.thr, p.seq)) {
		c->bad++;
		return;
	}
	struct writer *x = writer_of(p.pid, p.thr);
	if (x->n == 0)
		x->tid = ev->posix_thread_id;
	else if (!pthread_equal(x->tid, ev->posix_thread_id))
		x->tid_bad++;
	if (p.seq != x->n)
		x->bad_seq++;
	x->n = p.seq + 1;
}

int main(void)
{
	T_BEGIN(60);
	trace_attr_t attr;
	trace_id_t trid;
	pthread_t th[NTHR];
	pid_t kids[NFORK];
	int st;

	my_pid = (uint32_t)getpid();
	REQUIRE(posix_trace_eventid_open("fault-fork", &ev_id) == 0);
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 48 << 20) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&attr, sizeof(struct payload)) == 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);

	for (uintptr_t i = 0; i < NTHR; i++)
		REQUIRE(pthread_create(&th[i], NULL, spin, (void *)i) == 0);
	/* fork only once every thread records (on a busy machine one may not
	 * have run yet) */
	for (int i = 0; i < NTHR; i++)
		while (atomic_load(&progress[i]) < 100)
			sched_yield();
	uint64_t mseq = 0;
	for (int k = 0; k < NFORK; k++) {
		for (int i = 0; i < MAIN_PER_FORK; i++)
			rec(MAIN_THR, mseq++);
		fflush(stdout);
		kids[k] = fork();
		REQUIRE(kids[k] >= 0);
		if (kids[k] == 0) { /* async-signal-safe calls only */
			alarm(30);
			my_pid = (uint32_t)getpid();
			for (uint64_t i = 0; i < K; i++)
				rec(MAIN_THR, i);
			_exit(0);
		}
	}
	for (int k = 0; k < NFORK; k++) {
		REQUIRE(waitpid(kids[k], &st, 0) == kids[k]);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < NTHR; i++)
		pthread_join(th[i], NULL);
	CHECK_RC(posix_trace_stop(trid), 0);

	struct tally tl = { 0 };
	struct payload p;
	t_drain(trid, &p, sizeof p, INT_MAX, tally, &tl);
	CHECK_EQ(tl.bad, 0);
	CHECK_EQ(tl.others, 0);
	CHECK_EQ(tl.starts, 1);
	CHECK_EQ(tl.stops, 1);
	for (int i = 0; i < nw; i++) {
		CHECK_EQ(w[i].bad_seq, 0);
		CHECK_EQ(w[i].tid_bad, 0);
	}
	for (uint32_t i = 0; i < NTHR; i++)
		CHECK_EQ(writer_of(my_pid, i)->n, produced[i]);
	struct writer *m = writer_of(my_pid, MAIN_THR);
	CHECK_EQ(m->n, NFORK * MAIN_PER_FORK);
	for (int k = 0; k < NFORK; k++) {
		struct writer *c = writer_of((uint32_t)kids[k], MAIN_THR);
		CHECK_EQ(c->n, K);
		CHECK(pthread_equal(c->tid, pthread_self()));
	}
	CHECK_EQ(nw, NTHR + 1 + NFORK); /* nobody else */
	struct posix_trace_status_info si;
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	printf("threads %llu %llu %llu, main %llu, %d children x %d events\n",
	       (unsigned long long)produced[0], (unsigned long long)produced[1],
	       (unsigned long long)produced[2], (unsigned long long)m->n, NFORK, K);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&attr);
	T_END();
}
