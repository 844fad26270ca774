/*
 * remote.c -- posix_trace_create() for another, running process.
 *
 * A forked worker (it links the library) obeys commands from a pipe:
 * register a name, record N events from 1 or 3 threads.  The controller
 * (this process) creates and starts a stream for the worker's pid; the
 * worker attaches at its next posix_trace_event().  Checked: exact counts,
 * posix_pid == the worker, per-thread order and thread ids, START/STOP
 * recorded with the controller's pid, nothing recorded while suspended;
 * names registered by the worker before or after the stream existed, or
 * first by the controller (posix_trace_trid_eventid_open), get one id on
 * both sides and posix_trace_eventid_get_name() gives the name back; a
 * reader blocked in posix_trace_getnext_event() wakes for the worker's
 * event.  Two streams in this process and a third in another controller
 * process on the same worker: each gets every event its filter lets
 * through (filters set before start and on a running stream, FILTER
 * recorded), and shutting one down leaves the others working.
 * (Errors and never-recording processes: remote_errors.c.)
 */
#include <pthread.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "worker_util.h"

struct payload { int thr, seq; unsigned sum; };

static unsigned sum_of(int thr, int seq)
{
	return (unsigned)thr * 2654435761u ^ (unsigned)seq * 40503u ^ 0x5a5a5a5au;
}

/* ------------------------------------------------------------ the worker */
struct job { trace_event_id_t id; int thr, n; };

static void *job_run(void *arg)
{
	struct job *j = arg;
	for (int i = 0; i < j->n; i++) {
		struct payload p = { j->thr, i, sum_of(j->thr, i) };
		posix_trace_event(j->id, &p, sizeof p);
	}
	return NULL;
}

/* the worker's OP_REC and OP_REC_LATE */
static void worker_record(const struct cmd *c)
{
	if (c->nthr == 1) {
		if (c->op == OP_REC_LATE)
			usleep(50000);
		struct job j = { c->id, 0, c->n };
		job_run(&j);
	} else {
		pthread_t th[8];
		struct job j[8];
		for (int i = 0; i < c->nthr; i++) {
			j[i] = (struct job){ c->id, i, c->n };
			REQUIRE(pthread_create(&th[i], NULL, job_run, &j[i]) == 0);
		}
		for (int i = 0; i < c->nthr; i++)
			pthread_join(th[i], NULL);
	}
}

/* ------------------------------------------------------------ reading */
struct got { trace_event_id_t id; pid_t pid; pthread_t thr; size_t len; struct payload p; };
static struct got g[8192];

static void keep(void *arg, int n, const struct posix_trace_event_info *ev, const void *buf,
                 size_t len)
{
	(void)arg;
	memset(&g[n], 0, sizeof g[n]);
	g[n] = (struct got){ ev->posix_event_id, ev->posix_pid, ev->posix_thread_id, len, { 0, 0, 0 } };
	memcpy(&g[n].p, buf, len < sizeof g[n].p ? len : sizeof g[n].p);
}

static int collect(trace_id_t trid)
{
	unsigned char buf[2 * sizeof(trace_event_set_t)];
	return t_drain(trid, buf, sizeof buf, 8192, keep, NULL);
}

/* Events with this id (and pid, unless -1) among the n collected. */
static int count(int n, trace_event_id_t id, pid_t pid)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += g[i].id == id && (pid == -1 || g[i].pid == pid);
	return k;
}

/* The user events with id: from pid, nthr threads x per events each, in
 * program order per thread, one thread id per thread. */
static void check_user(int n, trace_event_id_t id, pid_t pid, int nthr, int per)
{
	int next[8] = { 0 }, bad = 0, total = 0;
	pthread_t tid[8];
	for (int i = 0; i < n; i++) {
		struct got *e = &g[i];
		if (e->id != id)
			continue;
		total++;
		int t = e->p.thr;
		if (e->pid != pid || e->len != sizeof e->p || t < 0 || t >= nthr ||
		    e->p.sum != sum_of(t, e->p.seq)) {
			bad++;
			continue;
		}
		if (e->p.seq != next[t])
			bad++;
		if (next[t]++ == 0)
			tid[t] = e->thr;
		else if (!pthread_equal(tid[t], e->thr))
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(total, nthr * per);
	for (int t = 0; t < nthr; t++) {
		CHECK_EQ(next[t], per);
		for (int u = 0; u < t; u++)
			if (next[t] && next[u])
				CHECK(!pthread_equal(tid[t], tid[u]));
	}
}

static void check_name(trace_id_t trid, trace_event_id_t id, const char *want)
{
	char buf[TRACE_EVENT_NAME_MAX + 1] = "";
	CHECK_RC(posix_trace_eventid_get_name(trid, id, buf), 0);
	if (strcmp(buf, want) != 0) {
		CHECK(!"eventid_get_name gives another name");
		fprintf(stderr, "  id %d: \"%s\", expected \"%s\"\n", (int)id, buf, want);
	}
}

/* ----------------------------------------------------- 1: ids and events */
static void ids_and_events(void)
{
	struct worker w = spawn_worker(worker_record);
	trace_event_id_t early = reg(&w, "remote-early"), late, ctl_first, x = 0;
	trace_id_t trid;
	struct posix_trace_event_info ev;
	struct payload p;
	size_t len;
	int n, un;

	trid = t_create_ok(w.pid, NULL);
	CHECK_RC(posix_trace_trid_eventid_open(trid, "remote-early", &x), 0);
	CHECK_EQ(x, early);
	check_name(trid, early, "remote-early");
	late = reg(&w, "remote-late");                 /* registered after create */
	CHECK(late != early);
	CHECK_RC(posix_trace_trid_eventid_open(trid, "remote-late", &x), 0);
	CHECK_EQ(x, late);
	check_name(trid, late, "remote-late");
	CHECK_RC(posix_trace_trid_eventid_open(trid, "remote-ctl-first", &ctl_first), 0);
	CHECK(ctl_first != early && ctl_first != late);
	CHECK_EQ(reg(&w, "remote-ctl-first"), ctl_first); /* controller named it first */
	check_name(trid, ctl_first, "remote-ctl-first");

	ask(&w, OP_REC, NULL, early, 10, 1);            /* suspended: nothing */
	CHECK_EQ(collect(trid), 0);

	CHECK_RC(posix_trace_start(trid), 0);
	ask(&w, OP_REC, NULL, early, 1000, 1);
	n = collect(trid);
	CHECK_EQ(n, 1001);
	CHECK(n > 0 && g[0].id == POSIX_TRACE_START && g[0].pid == getpid());
	CHECK_EQ(count(n, POSIX_TRACE_START, -1), 1);
	check_user(n, early, w.pid, 1, 1000);

	ask(&w, OP_REC, NULL, late, 1000, 3);
	n = collect(trid);
	CHECK_EQ(n, 3000);
	check_user(n, late, w.pid, 3, 1000);

	/* a reader blocked in getnext is woken by the other process's event
	 * (recorded 50 ms late, so that the reader is most likely asleep) */
	struct cmd c = { OP_REC_LATE, 1, 1, 0, ctl_first, "" };
	t_write_full(w.cmd, &c, sizeof c);
	CHECK_RC(posix_trace_getnext_event(trid, &ev, &p, sizeof p, &len, &un), 0);
	CHECK_EQ(ev.posix_event_id, ctl_first);
	CHECK_EQ(ev.posix_pid, w.pid);
	CHECK(len == sizeof p && p.seq == 0 && p.sum == sum_of(0, 0));
	struct rep r;
	REQUIRE(t_read_full(w.rep, &r, sizeof r) == 0);

	CHECK_RC(posix_trace_stop(trid), 0);
	ask(&w, OP_REC, NULL, early, 10, 1);            /* stopped: nothing */
	n = collect(trid);
	CHECK_EQ(n, 1);
	CHECK(n == 1 && g[0].id == POSIX_TRACE_STOP && g[0].pid == getpid());
	CHECK_RC(posix_trace_shutdown(trid), 0);
	ask(&w, OP_REC, NULL, early, 10, 1);            /* after shutdown: harmless */
	end_worker(&w);
}

/* ----------------------------------------------- 4: several controllers */
static void other_controller(pid_t target, trace_event_id_t ida, int cfd, int rfd)
{
	int res[8] = { 0 };
	trace_id_t t;
	trace_event_id_t x = 0;
	trace_event_set_t set;
	char c;

	alarm(60);
	posix_trace_eventset_empty(&set);
	posix_trace_eventset_add(ida, &set);
	res[0] = posix_trace_create(target, NULL, &t);
	if (res[0] == 0) {
		res[1] = posix_trace_trid_eventid_open(t, "remote-two-a", &x);
		res[2] = (int)x;
		res[3] = posix_trace_set_filter(t, &set, POSIX_TRACE_SET_EVENTSET);
		res[4] = posix_trace_start(t);
	}
	t_write_full(rfd, res, sizeof res);
	if (res[0] != 0 || read(cfd, &c, 1) != 1)
		_exit(1);
	int n = collect(t);
	res[0] = n;
	res[1] = count(n, ida, target);
	res[2] = count(n, POSIX_TRACE_START, getpid());
	res[3] = 0;
	for (int i = 0; i < n; i++)
		if (g[i].id >= PT_SYS_IDS && g[i].pid == target)
			res[3]++;
	t_write_full(rfd, res, sizeof res);
	_exit(posix_trace_shutdown(t) == 0 && !t_failures ? 0 : 2);
}

static void two_controllers(void)
{
	struct worker w = spawn_worker(worker_record);
	trace_event_id_t a = reg(&w, "remote-two-a"), b = reg(&w, "remote-two-b");
	trace_event_set_t fa, fb;
	trace_id_t t1, t2;
	int n, st, res[8];
	struct t_pipes p;

	posix_trace_eventset_empty(&fa);
	posix_trace_eventset_add(a, &fa);
	posix_trace_eventset_empty(&fb);
	posix_trace_eventset_add(b, &fb);
	t1 = t_create_ok(w.pid, NULL);
	t2 = t_create_ok(w.pid, NULL);
	CHECK_RC(posix_trace_set_filter(t2, &fb, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_RC(posix_trace_start(t1), 0);
	CHECK_RC(posix_trace_start(t2), 0);
	ask(&w, OP_REC, NULL, a, 100, 1);
	ask(&w, OP_REC, NULL, b, 100, 1);
	n = collect(t1);
	CHECK_EQ(n, 201);
	check_user(n, a, w.pid, 1, 100);
	check_user(n, b, w.pid, 1, 100);
	n = collect(t2);
	CHECK_EQ(n, 101);
	check_user(n, a, w.pid, 1, 100);
	CHECK_EQ(count(n, b, -1), 0);

	/* filter changed on a running stream: applies from the next event */
	CHECK_RC(posix_trace_set_filter(t1, &fa, POSIX_TRACE_SET_EVENTSET), 0);
	ask(&w, OP_REC, NULL, a, 50, 1);
	ask(&w, OP_REC, NULL, b, 50, 1);
	n = collect(t1);
	CHECK_EQ(n, 51);
	CHECK_EQ(count(n, POSIX_TRACE_FILTER, getpid()), 1);
	CHECK_EQ(count(n, a, -1), 0);
	check_user(n, b, w.pid, 1, 50);
	n = collect(t2);
	CHECK_EQ(n, 50);
	check_user(n, a, w.pid, 1, 50);

	/* a third stream, in another controller process, filtering a out */
	pid_t ctl = t_fork_piped(&p);
	if (ctl == 0)
		other_controller(w.pid, a, p.cmd, p.rep);
	REQUIRE(t_read_full(p.rep, res, sizeof res) == 0);
	CHECK_RC(res[0], 0);
	REQUIRE(res[0] == 0);
	CHECK_RC(res[1], 0);
	CHECK_EQ(res[2], a);                 /* the same id in that controller */
	CHECK_RC(res[3], 0);
	CHECK_RC(res[4], 0);
	ask(&w, OP_REC, NULL, a, 70, 1);
	ask(&w, OP_REC, NULL, b, 70, 1);
	t_write_full(p.cmd, "r", 1);
	REQUIRE(t_read_full(p.rep, res, sizeof res) == 0);
	CHECK_EQ(res[0], 71);                /* START + 70 b */
	CHECK_EQ(res[1], 0);
	CHECK_EQ(res[2], 1);
	CHECK_EQ(res[3], 70);
	REQUIRE(waitpid(ctl, &st, 0) == ctl);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	n = collect(t1);
	CHECK_EQ(n, 70);
	check_user(n, b, w.pid, 1, 70);
	n = collect(t2);
	CHECK_EQ(n, 70);
	check_user(n, a, w.pid, 1, 70);

	/* one stream shut down: the other goes on */
	CHECK_RC(posix_trace_shutdown(t1), 0);
	ask(&w, OP_REC, NULL, a, 10, 3);
	n = collect(t2);
	CHECK_EQ(n, 30);
	check_user(n, a, w.pid, 3, 10);
	CHECK_RC(posix_trace_shutdown(t2), 0);
	end_worker(&w);
	close(p.cmd);
	close(p.rep);
}

int main(void)
{
	T_BEGIN(60);
	signal(SIGPIPE, SIG_IGN);   /* a dead peer: EPIPE and a message */
	ids_and_events();
	two_controllers();
	T_END();
}
