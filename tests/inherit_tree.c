/*
 * inherit_tree.c -- TRI: one stream, a process tree, one id space.
 *
 * A process creates a stream for itself with POSIX_TRACE_INHERITED, forks
 * a child, which forks a grandchild; each of the three records K events of
 * a name it registered itself after the forks, K of a name all three
 * register (from a second thread), and K of a name registered before the
 * forks.  The creator reads
 * exact counts per pid and per id, in order, with intact payloads.  Names
 * registered in different processes get different ids when the names
 * differ and one id when they are equal; the creator's stream knows them
 * all (posix_trace_trid_eventid_open, posix_trace_eventid_get_name).  The
 * trace id is EINVAL in the child.  With POSIX_TRACE_CLOSE_FOR_CHILD the
 * children's events are not in the stream.  fork() while two threads of the
 * traced process record in a loop (three times): every event of the parent
 * and of the children arrives, in order and intact.  (A child of a
 * multi-threaded process starts no threads: POSIX allows only
 * async-signal-safe calls there, and ThreadSanitizer refuses.)
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#define K 300

struct payload { int pid, thr, seq; unsigned sum; };

static unsigned sum_of(int pid, int thr, int seq)
{
	return (unsigned)pid * 2654435761u ^ (unsigned)thr * 97u ^ (unsigned)seq * 40503u;
}

static void rec(trace_event_id_t id, int thr, int seq)
{
	struct payload p = { getpid(), thr, seq, sum_of(getpid(), thr, seq) };
	posix_trace_event(id, &p, sizeof p);
}

static void rec_n(trace_event_id_t id, int thr, int n)
{
	for (int i = 0; i < n; i++)
		rec(id, thr, i);
}

/* Per (pid, id, thr): how many user events, all in sequence and intact? */
struct writer { int pid, thr, n, bad; trace_event_id_t id; };
static struct writer w[64];
static int nw, w_bad;

static void tally(void *arg, int k, const struct posix_trace_event_info *ev, const void *data,
                  size_t len)
{
	struct payload p;
	(void)arg, (void)k;
	if (ev->posix_event_id < PT_SYS_IDS)
		return;
	memcpy(&p, data, sizeof p);
	if (len != sizeof p || p.pid != ev->posix_pid || p.sum != sum_of(p.pid, p.thr, p.seq)) {
		w_bad++;
		return;
	}
	int i = 0;
	while (i < nw && !(w[i].pid == p.pid && w[i].thr == p.thr && w[i].id == ev->posix_event_id))
		i++;
	REQUIRE(i < 64);
	if (i == nw)
		w[nw++] = (struct writer){ p.pid, p.thr, 0, 0, ev->posix_event_id };
	if (p.seq != w[i].n++)
		w[i].bad++;
}

static void drain(trace_id_t trid)
{
	struct payload p;
	nw = w_bad = 0;
	t_drain(trid, &p, sizeof p, INT_MAX, tally, NULL);
	for (int i = 0; i < nw; i++)
		w_bad += w[i].bad;
}

/* Events from pid with id (thr < 0: any thread). */
static int got(int pid, trace_event_id_t id, int thr)
{
	int n = 0;
	for (int i = 0; i < nw; i++)
		if (w[i].pid == pid && (id == 0 || w[i].id == id) && (thr < 0 || w[i].thr == thr))
			n += w[i].n;
	return n;
}

struct ids { int rc, pid; trace_event_id_t own, common; };

static void *common_thread(void *arg)
{
	rec_n(*(trace_event_id_t *)arg, 1, K);
	return NULL;
}

/* Register own + common; record K of own and K of pre from this thread,
 * K of common from a new thread (thr 1); report. */
static struct ids register_and_record(const char *own, trace_event_id_t pre)
{
	struct ids r = { 0, getpid(), 0, 0 };
	pthread_t th;
	r.rc = posix_trace_eventid_open(own, &r.own);
	r.rc |= posix_trace_eventid_open("tree-common", &r.common);
	r.rc |= pthread_create(&th, NULL, common_thread, &r.common);
	rec_n(r.own, 0, K);
	rec_n(pre, 0, K);
	if (r.rc == 0)
		pthread_join(th, NULL);
	return r;
}

static void check_name(trace_id_t trid, trace_event_id_t id, const char *want)
{
	char buf[TRACE_EVENT_NAME_MAX + 1] = "";
	trace_event_id_t x = 0;
	CHECK_RC(posix_trace_eventid_get_name(trid, id, buf), 0);
	if (strcmp(buf, want) != 0)
		fprintf(stderr, "  id %d is \"%s\", expected \"%s\"\n", (int)id, buf, want);
	CHECK(strcmp(buf, want) == 0);
	CHECK_RC(posix_trace_trid_eventid_open(trid, want, &x), 0);
	CHECK_EQ(x, id);
}

static void tree(void)
{
	trace_event_id_t pre, late;
	trace_id_t trid = t_own_started(POSIX_TRACE_INHERITED, 16 << 20);
	int cg[2], gp[2], cp[2], st;
	struct ids c, gc, p;

	REQUIRE(posix_trace_eventid_open("tree-pre", &pre) == 0);
	rec_n(pre, 1, K);
	REQUIRE(pipe(cg) == 0 && pipe(gp) == 0 && pipe(cp) == 0);
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		struct posix_trace_status_info si;
		trace_event_id_t x;
		alarm(30);
		if (posix_trace_get_status(trid, &si) != EINVAL ||
		    posix_trace_trid_eventid_open(trid, "tree-x", &x) != EINVAL)
			_exit(3);
		pid_t g = fork();        /* before anyone registers a new name */
		if (g < 0)
			_exit(4);
		if (g == 0) {
			char t;
			if (t_read_full(cg[0], &t, 1) != 0)
				_exit(5);
			struct ids r = register_and_record("tree-g", pre);
			t_write_full(gp[1], &r, sizeof r);
			_exit(0);
		}
		struct ids r = register_and_record("tree-c", pre);
		t_write_full(cp[1], &r, sizeof r);
		t_write_full(cg[1], "t", 1);
		waitpid(g, &st, 0);
		_exit(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 6);
	}
	REQUIRE(t_read_full(cp[0], &c, sizeof c) == 0);
	REQUIRE(t_read_full(gp[0], &gc, sizeof gc) == 0);
	p = register_and_record("tree-p", pre);   /* after the other two */
	REQUIRE(waitpid(child, &st, 0) == child);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	REQUIRE(posix_trace_eventid_open("tree-late", &late) == 0);
	CHECK_RC(posix_trace_stop(trid), 0);

	CHECK_RC(c.rc, 0);
	CHECK_RC(gc.rc, 0);
	CHECK_RC(p.rc, 0);
	trace_event_id_t all[] = { pre, c.own, gc.own, p.own, c.common, late };
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < i; j++)
			if (all[i] == all[j]) {
				fprintf(stderr, "  names %d and %d share id %d\n", j, i, (int)all[i]);
				CHECK(!"different names, one id");
			}
	CHECK_EQ(gc.common, c.common);
	CHECK_EQ(p.common, c.common);
	check_name(trid, pre, "tree-pre");
	check_name(trid, c.own, "tree-c");
	check_name(trid, gc.own, "tree-g");
	check_name(trid, p.own, "tree-p");
	check_name(trid, c.common, "tree-common");
	check_name(trid, late, "tree-late");

	drain(trid);
	CHECK_EQ(w_bad, 0);
	CHECK_EQ(c.pid, child);
	CHECK(gc.pid != child && gc.pid != getpid());
	CHECK_EQ(got(getpid(), pre, 1), K);
	CHECK_EQ(got(getpid(), pre, 0), K);
	CHECK_EQ(got(getpid(), p.own, -1), K);
	CHECK_EQ(got(getpid(), c.common, -1), K);
	CHECK_EQ(got(getpid(), 0, -1), 4 * K);
	for (int i = 0; i < 2; i++) {
		struct ids *r = i ? &gc : &c;
		CHECK_EQ(got(r->pid, r->own, -1), K);
		CHECK_EQ(got(r->pid, c.common, -1), K);
		CHECK_EQ(got(r->pid, pre, -1), K);
		CHECK_EQ(got(r->pid, 0, -1), 3 * K);
	}
	CHECK_EQ(nw, 10);                   /* nobody else */
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(cg[0]); close(cg[1]); close(gp[0]); close(gp[1]); close(cp[0]); close(cp[1]);
}

static void close_for_child(void)
{
	trace_id_t trid;
	trace_event_id_t id;
	int st;
	REQUIRE(posix_trace_create(0, NULL, &trid) == 0);   /* default: CLOSE_FOR_CHILD */
	REQUIRE(posix_trace_start(trid) == 0);
	REQUIRE(posix_trace_eventid_open("tree-close", &id) == 0);
	rec_n(id, 0, K);
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		alarm(30);
		if (posix_trace_stop(trid) != EINVAL)
			_exit(3);
		rec_n(id, 0, K);
		pid_t g = fork();
		if (g == 0) {
			rec_n(id, 0, K);
			_exit(0);
		}
		waitpid(g, &st, 0);
		_exit(g > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 4);
	}
	REQUIRE(waitpid(child, &st, 0) == child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	rec_n(id, 1, K);
	CHECK_RC(posix_trace_stop(trid), 0);
	drain(trid);
	CHECK_EQ(w_bad, 0);
	CHECK_EQ(got(getpid(), id, 0), K);
	CHECK_EQ(got(getpid(), id, 1), K);
	CHECK_EQ(nw, 2);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

/* ------------------------------------------- fork while threads record */
static trace_event_id_t load_id;
static atomic_int stop_spin;
static atomic_int produced[2];

static void *spin(void *arg)
{
	int me = (int)(long)arg, i = 0;
	while (!atomic_load(&stop_spin) && i < 100000) {
		rec(load_id, me, i++);
		atomic_store_explicit(&produced[me], i, memory_order_relaxed);
	}
	return NULL;
}

static void fork_under_load(void)
{
	trace_id_t trid = t_own_started(POSIX_TRACE_INHERITED, 16 << 20);
	pthread_t th[2];
	pid_t kids[3];
	int st;

	REQUIRE(posix_trace_eventid_open("tree-load", &load_id) == 0);
	atomic_store(&stop_spin, 0);
	for (long i = 0; i < 2; i++) {
		atomic_store(&produced[i], 0);
		REQUIRE(pthread_create(&th[i], NULL, spin, (void *)i) == 0);
	}
	/* fork only once both threads record: on a busy machine a thread may
	 * not have run at all before the children are done */
	while (atomic_load(&produced[0]) < 1000 || atomic_load(&produced[1]) < 1000)
		sched_yield();
	for (int k = 0; k < 3; k++) {
		kids[k] = fork();
		REQUIRE(kids[k] >= 0);
		if (kids[k] == 0) {        /* only this thread came along */
			alarm(30);
			rec_n(load_id, 2, K);
			_exit(0);
		}
	}
	for (int k = 0; k < 3; k++) {
		REQUIRE(waitpid(kids[k], &st, 0) == kids[k]);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	atomic_store(&stop_spin, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_RC(posix_trace_stop(trid), 0);
	struct posix_trace_status_info si;
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	drain(trid);
	CHECK_EQ(w_bad, 0);
	CHECK_EQ(got(getpid(), load_id, 0), produced[0]);
	CHECK_EQ(got(getpid(), load_id, 1), produced[1]);
	for (int k = 0; k < 3; k++) {
		CHECK_EQ(got(kids[k], load_id, 2), K);
		CHECK_EQ(got(kids[k], 0, -1), K);
	}
	CHECK_EQ(nw, 2 + 3);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

int main(void)
{
	T_BEGIN(60);
	signal(SIGPIPE, SIG_IGN);   /* a dead peer: EPIPE and a message */
	tree();
	close_for_child();
	fork_under_load();
	T_END();
}
