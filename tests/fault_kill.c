/*
 * fault_kill.c -- either side of a stream SIGKILLed at a random moment.
 *
 * 1. The traced process dies.  A forked child T runs 4 threads that each
 *    record up to CAP events (payload: pid, thread, sequence number,
 *    checksum) into an UNTIL_FULL stream made for T here, big enough that
 *    nothing is ever dropped.  After a random delay of 0-20 ms (fixed seed,
 *    several rounds; in odd rounds this process reads concurrently
 *    meanwhile) T is killed.  Everything is then read back: every user
 *    event is T's, well-formed and intact, each thread's sequence numbers
 *    are a gap-free prefix 0..n-1 (no duplicates, nothing half-written),
 *    exactly one START, no ERROR; an OVERFLOW (the reader stepping over an
 *    entry a killed writer left half-published, docs/design.md) only as a
 *    pair with RESUME; then trygetnext reports nothing available, even past
 *    the reader's 50 ms wait; get_status: RUNNING, NOT_FULL, NO_OVERRUN.
 * 2. The controller dies.  T records at full speed (one thread, polling a
 *    command pipe every 1000 events) into a LOOP stream a controller child
 *    C made for it; C is killed.  T's shared memory falls back (it freed
 *    the dead stream), its event rate over 200 ms afterwards is at least
 *    half of what it was while traced (a loose sanity bound), its VmRSS +
 *    RssShmem does not grow over the next second, and a new stream made
 *    here gets exactly the 5000 events T records into it.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#define ROUNDS 8
#define NTHR 4
#define CAP 400000 /* events per thread: 4 * CAP * 40 bytes fit the stream */

struct payload { uint32_t pid, thr; uint64_t seq, sum; };

static trace_event_id_t ev_id;
static uint32_t my_pid; /* set in T: getpid() is a syscall */

static void rec(uint32_t thr, uint64_t seq)
{
	struct payload p = { my_pid, thr, seq, t_check64(my_pid, thr, seq) };
	posix_trace_event(ev_id, &p, sizeof p);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* A field of /proc/PID/status in kB, -1 if unknown. */
static long status_kb(pid_t pid, const char *key)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	return t_proc_kb(path, key);
}

/* What a drain found. */
struct tally {
	uint64_t n[NTHR], bad, gaps, dups;
	int start, stop, overflow, resume, error, other;
};

static void tally_one(struct tally *t, pid_t pid, const struct posix_trace_event_info *ev,
                      const struct payload *p, size_t len)
{
	switch (ev->posix_event_id) {
	case POSIX_TRACE_START: t->start++; return;
	case POSIX_TRACE_STOP: t->stop++; return;
	case POSIX_TRACE_OVERFLOW: t->overflow++; return;
	case POSIX_TRACE_RESUME: t->resume++; return;
	case POSIX_TRACE_ERROR: t->error++; return;
	}
	if (ev->posix_event_id != ev_id || ev->posix_pid != pid) {
		t->other++;
		return;
	}
	if (len != sizeof *p || p->pid != (uint32_t)pid || p->thr >= NTHR ||
	    p->sum != t_check64(p->pid, p->thr, p->seq) ||
	    ev->posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED) {
		t->bad++;
		return;
	}
	t->dups += p->seq < t->n[p->thr];
	t->gaps += p->seq > t->n[p->thr];
	t->n[p->thr] = p->seq + 1;
}

/* Everything available now (or until the time end, if not 0); returns
 * how many events. */
static uint64_t drain_until(trace_id_t trid, pid_t pid, struct tally *t, double end)
{
	uint64_t got = 0;
	for (;;) {
		if (end > 0 && (got & 63) == 0 && t_now_s() >= end)
			return got;
		struct posix_trace_event_info ev;
		struct payload p;
		size_t len;
		if (!t_next(trid, &ev, &p, sizeof p, &len))
			return got;
		got++;
		tally_one(t, pid, &ev, &p, len);
	}
}

static uint64_t drain(trace_id_t trid, pid_t pid, struct tally *t)
{
	return drain_until(trid, pid, t, 0);
}

/* ------------------------------------------- 1: the traced process dies */
static pthread_barrier_t bar;

static void *recorder(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;
	pthread_barrier_wait(&bar);
	for (uint64_t i = 0; i < CAP; i++)
		rec(me, i);
	for (;;)
		pause();
	return NULL;
}

static void traced_threads(int gofd, int repfd)
{
	pthread_t th;
	char c;
	alarm(60);
	my_pid = (uint32_t)getpid();
	if (posix_trace_eventid_open("fault-kill", &ev_id) != 0)
		_exit(2);
	pthread_barrier_init(&bar, NULL, NTHR + 1);
	for (uintptr_t i = 0; i < NTHR; i++)
		if (pthread_create(&th, NULL, recorder, (void *)i) != 0)
			_exit(3);
	if (t_read_full(gofd, &c, 1) != 0)
		_exit(4);
	pthread_barrier_wait(&bar);
	t_write_full(repfd, "r", 1);
	for (;;)
		pause();
}

static uint64_t seed = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
	return seed;
}

static void kill_traced(int round)
{
	struct t_pipes pp;
	trace_attr_t attr;
	trace_id_t trid;
	char c;

	pid_t tp = t_fork_piped(&pp);
	if (tp == 0)
		traced_threads(pp.cmd, pp.rep);
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 96 << 20) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&attr, sizeof(struct payload)) == 0);
	int rc = posix_trace_create(tp, &attr, &trid);
	if (rc)
		fprintf(stderr, "posix_trace_create(T): %s\n", strerror(rc));
	REQUIRE(rc == 0);
	REQUIRE(posix_trace_trid_eventid_open(trid, "fault-kill", &ev_id) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	t_write_full(pp.cmd, "g", 1);
	REQUIRE(t_read_full(pp.rep, &c, 1) == 0);

	struct tally t;
	memset(&t, 0, sizeof t);
	double delay = (double)(rnd() % 20001) * 1e-6, end = t_now_s() + delay;
	if (round & 1) /* reading concurrently until the kill */
		while (t_now_s() < end)
			drain_until(trid, tp, &t, end);
	else
		sleep_s(delay);
	REQUIRE(kill(tp, SIGKILL) == 0);
	REQUIRE(waitpid(tp, NULL, 0) == tp);

	/* an entry a killed writer left half-published is stepped over after
	 * 50 ms: read again until two looks 60 ms apart find nothing new */
	drain(trid, tp, &t);
	for (int quiet = 0, i = 0; quiet < 2 && i < 50; i++) {
		sleep_s(0.06);
		quiet = drain(trid, tp, &t) == 0 ? quiet + 1 : 0;
	}
	uint64_t total = 0;
	for (int i = 0; i < NTHR; i++) {
		total += t.n[i];
		CHECK(t.n[i] <= CAP);
	}
	printf("round %d: killed after %.1f ms: %llu %llu %llu %llu events (%llu)%s\n", round,
	       delay * 1e3, (unsigned long long)t.n[0], (unsigned long long)t.n[1],
	       (unsigned long long)t.n[2], (unsigned long long)t.n[3], (unsigned long long)total,
	       t.overflow ? " (an OVERFLOW/RESUME pair)" : "");
	CHECK_EQ(t.bad, 0);
	CHECK_EQ(t.gaps, 0);
	CHECK_EQ(t.dups, 0);
	CHECK_EQ(t.other, 0);
	CHECK_EQ(t.error, 0);
	CHECK_EQ(t.start, 1);
	CHECK_EQ(t.stop, 0);
	CHECK_EQ(t.overflow, t.resume);
	CHECK(t.overflow <= NTHR);

	struct posix_trace_event_info ev;
	struct payload p;
	size_t len;
	int un = -1;
	CHECK_RC(posix_trace_trygetnext_event(trid, &ev, &p, sizeof p, &len, &un), 0);
	CHECK_EQ(un, 1);
	struct posix_trace_status_info si;
	memset(&si, 0x55, sizeof si);
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	CHECK_EQ(si.posix_stream_status, POSIX_TRACE_RUNNING);
	CHECK_EQ(si.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&attr);
	close(pp.cmd);
	close(pp.rep);
}

/* ---------------------------------------------- 2: the controller dies */
struct tcmd { char op; int n; };
static _Atomic uint64_t *spun; /* shared with T: events T recorded so far */

static void traced_spin(int cfd, int rfd)
{
	uint64_t seq = 0;
	int spinning = 1;
	alarm(60);
	my_pid = (uint32_t)getpid();
	if (posix_trace_eventid_open("fault-spin", &ev_id) != 0)
		_exit(2);
	for (;;) {
		struct tcmd c;
		if (spinning) {
			for (int i = 0; i < 1000; i++)
				rec(0, seq++);
			atomic_store_explicit(spun, seq, memory_order_relaxed);
			struct pollfd pfd = { cfd, POLLIN, 0 };
			if (poll(&pfd, 1, 0) <= 0)
				continue;
		}
		if (t_read_full(cfd, &c, sizeof c) != 0 || c.op == 'Q')
			_exit(0);
		spinning = c.op == 'S' ? 1 : c.op == 'P' ? 0 : spinning;
		for (int i = 0; c.op == 'B' && i < c.n; i++)
			rec(0, seq++);
		t_write_full(rfd, &seq, sizeof seq);
	}
}

static uint64_t tell(int cfd, int rfd, char op, int n)
{
	struct tcmd c = { op, n };
	uint64_t seq;
	t_write_full(cfd, &c, sizeof c);
	REQUIRE(t_read_full(rfd, &seq, sizeof seq) == 0);
	return seq;
}

/* Events per second T records, over ~200 ms. */
static double rate(void)
{
	uint64_t a = atomic_load(spun);
	double t0 = t_now_s();
	sleep_s(0.2);
	return (double)(atomic_load(spun) - a) / (t_now_s() - t0);
}

/* Poll (up to 5 s) until T's RssShmem is above kb, or (!above) at most kb. */
static long wait_shmem(pid_t tp, long kb, int above)
{
	double end = t_now_s() + 5;
	long v;
	while ((v = status_kb(tp, "RssShmem")) >= 0 && (above ? v <= kb : v > kb) && t_now_s() < end)
		sleep_s(0.005);
	return v;
}

static void kill_controller(void)
{
	int tc[2], tr[2], cr[2], st, rc = -1;
	trace_id_t trid;

	spun = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	REQUIRE(spun != MAP_FAILED);
	REQUIRE(pipe(tc) == 0 && pipe(tr) == 0 && pipe(cr) == 0);
	pid_t tp = fork();
	REQUIRE(tp >= 0);
	if (tp == 0)
		traced_spin(tc[0], tr[1]);
	long base = status_kb(tp, "RssShmem");
	pid_t cp = fork();
	REQUIRE(cp >= 0);
	if (cp == 0) { /* C: a LOOP stream for T, then wait to be killed */
		trace_attr_t a;
		alarm(60);
		posix_trace_attr_init(&a);
		posix_trace_attr_setstreamsize(&a, 8 << 20);
		rc = posix_trace_create(tp, &a, &trid);
		if (rc == 0)
			rc = posix_trace_start(trid);
		t_write_full(cr[1], &rc, sizeof rc);
		for (;;)
			pause();
	}
	REQUIRE(t_read_full(cr[0], &rc, sizeof rc) == 0);
	CHECK_RC(rc, 0);
	long v = wait_shmem(tp, base + 4096, 1); /* T fills C's 8 MiB stream */
	CHECK(base < 0 || v > base + 4096);
	double before = rate();

	REQUIRE(kill(cp, SIGKILL) == 0);
	REQUIRE(waitpid(cp, &st, 0) == cp);
	v = wait_shmem(tp, base + 1024, 0); /* T notices and frees the stream */
	if (base >= 0 && v > base + 1024)
		fprintf(stderr, "T's RssShmem %ld kB, %ld kB before the stream\n", v, base);
	CHECK(base < 0 || v <= base + 1024);
	double after = rate();
	printf("controller killed: T records %.0f events/s traced, %.0f after\n", before, after);
	CHECK(after >= 0.5 * before);

	long m0 = status_kb(tp, "VmRSS") + status_kb(tp, "RssShmem");
	sleep_s(1.0);
	long m1 = status_kb(tp, "VmRSS") + status_kb(tp, "RssShmem");
	if (m1 > m0 + 1024)
		fprintf(stderr, "T's VmRSS + RssShmem grew from %ld kB to %ld kB in 1 s\n", m0, m1);
	CHECK(m1 <= m0 + 1024);

	/* a new controller gets exactly what T records now */
	uint64_t first = tell(tc[1], tr[0], 'P', 0);
	rc = posix_trace_create(tp, NULL, &trid);
	CHECK_RC(rc, 0);
	if (rc == 0) {
		REQUIRE(posix_trace_trid_eventid_open(trid, "fault-spin", &ev_id) == 0);
		CHECK_RC(posix_trace_start(trid), 0);
		uint64_t last = tell(tc[1], tr[0], 'B', 5000);
		CHECK_EQ(last - first, 5000);
		struct tally t;
		memset(&t, 0, sizeof t);
		t.n[0] = first;
		drain(trid, tp, &t);
		CHECK_EQ(t.n[0], last);
		CHECK_EQ(t.bad + t.gaps + t.dups + t.other + t.error + t.overflow, 0);
		CHECK_EQ(t.start, 1);
		CHECK_RC(posix_trace_shutdown(trid), 0);
	}
	t_write_full(tc[1], &(struct tcmd){ 'Q', 0 }, sizeof(struct tcmd));
	REQUIRE(waitpid(tp, &st, 0) == tp);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(tc[0]); close(tc[1]); close(tr[0]); close(tr[1]); close(cr[0]); close(cr[1]);
}

int main(void)
{
	T_BEGIN(120);
	signal(SIGPIPE, SIG_IGN);
	for (int r = 0; r < ROUNDS; r++)
		kill_traced(r);
	kill_controller();
	T_END();
}
