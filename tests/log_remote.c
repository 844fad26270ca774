/*
 * log_remote.c -- a stream with a log tracing another process.
 *
 * A forked worker (it links the library) obeys commands from a pipe:
 * register a name, record N events from 1 or 3 threads (optionally paced).
 * posix_trace_create_withlog(worker pid): the flusher lives in this
 * process (the controller) and the worker attaches at its first event
 * after start.  Names registered by the worker before the create, after
 * it, and first by the controller (posix_trace_trid_eventid_open) get one
 * id; the log names all three.  The log holds, in order: START (the
 * controller's pid), 1000 events of one worker thread, 3 x 1000 of three
 * threads, FLUSH_START/FLUSH_STOP, 500 more, STOP (the controller's pid),
 * nothing recorded while stopped or after shutdown, the final flush pair;
 * every user event has the worker's pid, intact data, per-thread order,
 * one thread id per thread, and a CLOCK_REALTIME timestamp within the
 * controller's readings around the command that recorded it.  The
 * event-type list holds the three names; the worker lives on after the
 * shutdown.
 * Killed controller: another process creates the stream for the worker
 * (FLUSH, APPEND) and is killed with SIGKILL while the worker records
 * paced events; the log opens and yields the worker's events of every
 * block written (strictly increasing, intact, contiguous unless an
 * OVERFLOW says otherwise), no error event; the worker keeps running and
 * exits normally.
 */
#include <sys/wait.h>
#include "log_util.h"
#include "helpers.h"
#include "worker_util.h"

static char path[256];

/* ------------------------------------------------------------ the worker */
struct job { trace_event_id_t id; uint32_t thr; int n, pace; };

static void *job_run(void *arg)
{
	struct job *j = arg;
	unsigned char p[64];
	for (int i = 0; i < j->n; i++) {
		size_t len = lu_len((uint32_t)i, sizeof p);
		lu_make(p, (uint32_t)i, j->thr, len);
		posix_trace_event(j->id, p, len);
		if (j->pace && i % j->pace == j->pace - 1)
			usleep(1000);
	}
	return NULL;
}

/* the worker's OP_REC */
static void worker_record(const struct cmd *c)
{
	pthread_t th[3];
	struct job j[3];
	for (int i = 0; i < c->nthr; i++) {
		j[i] = (struct job){ c->id, (uint32_t)i, c->n, c->pace };
		REQUIRE(pthread_create(&th[i], NULL, job_run, &j[i]) == 0);
	}
	for (int i = 0; i < c->nthr; i++)
		pthread_join(th[i], NULL);
}

/* user events with id: all within [lo, hi] (CLOCK_REALTIME, slack) */
static void in_window(int n, trace_event_id_t id, long long lo, long long hi)
{
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += lu_ev[i].id == id && (lu_ev[i].ts < lo - LU_SLACK_NS || lu_ev[i].ts > hi + LU_SLACK_NS);
	CHECK_EQ(bad, 0);
}

/* one thread id per thread number, different ones for different numbers */
static void thread_ids(int n, trace_event_id_t id, int nthr)
{
	pthread_t tid[3];
	int seen[3] = { 0 }, bad = 0;
	for (int i = 0; i < n; i++) {
		const struct lu_ev *e = &lu_ev[i];
		if (e->id != id || !e->ok || e->tno >= (uint32_t)nthr)
			continue;
		if (!seen[e->tno]++)
			tid[e->tno] = e->thr;
		else
			bad += !pthread_equal(tid[e->tno], e->thr);
	}
	CHECK_EQ(bad, 0);
	for (int t = 0; t < nthr; t++)
		for (int u = 0; u < t; u++)
			CHECK(seen[t] && seen[u] && !pthread_equal(tid[t], tid[u]));
}

/* ------------------------------------------------------- ids and events */
static void remote_log(void)
{
	struct worker w = spawn_worker(worker_record);
	trace_event_id_t early = reg(&w, "log-remote/early"), late, ctl, x = 0;
	int fd = lu_tmpfile(path, sizeof path, "remote", O_WRONLY), per[3], rfd, n;
	long long lo[3], hi[3];
	trace_id_t trid, log;
	trace_attr_t a;

	posix_trace_attr_init(&a);
	posix_trace_attr_setname(&a, "log-remote");
	posix_trace_attr_setmaxdatasize(&a, 64);
	posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
	int rc = posix_trace_create_withlog(w.pid, &a, fd, &trid);
	CHECK_RC(rc, 0);
	REQUIRE(rc == 0);
	posix_trace_attr_destroy(&a);
	late = reg(&w, "log-remote/late");
	CHECK_RC(posix_trace_trid_eventid_open(trid, "log-remote/late", &x), 0);
	CHECK_EQ(x, late);
	CHECK_RC(posix_trace_trid_eventid_open(trid, "log-remote/ctl-first", &ctl), 0);
	CHECK_EQ(reg(&w, "log-remote/ctl-first"), ctl);
	CHECK(early != late && late != ctl && early != ctl);

	ask(&w, OP_REC, NULL, early, 10, 1);                /* suspended: nothing */
	CHECK_RC(posix_trace_start(trid), 0);
	lo[0] = lu_now();
	ask(&w, OP_REC, NULL, early, 1000, 1);
	hi[0] = lo[1] = lu_now();
	ask(&w, OP_REC, NULL, late, 1000, 3);
	hi[1] = lu_now();
	CHECK_RC(lu_flush_wait(trid, NULL), 0);
	lo[2] = lu_now();
	ask(&w, OP_REC, NULL, ctl, 500, 1);
	hi[2] = lu_now();
	CHECK_RC(posix_trace_stop(trid), 0);
	ask(&w, OP_REC, NULL, early, 10, 1);                /* stopped: nothing */
	CHECK_RC(posix_trace_shutdown(trid), 0);
	ask(&w, OP_REC, NULL, early, 10, 1);                /* shut down: harmless */
	close(fd);

	n = lu_load(path, &log, &rfd);
	CHECK_EQ(n, 1 + 1000 + 3000 + 2 + 500 + 1 + 2);
	CHECK(n > 0 && lu_ev[0].id == POSIX_TRACE_START && lu_ev[0].pid == getpid());
	CHECK(n > 4003 && lu_ev[4001].id == POSIX_TRACE_FLUSH_START &&
	      lu_ev[4002].id == POSIX_TRACE_FLUSH_STOP);
	CHECK(n > 4503 && lu_ev[4503].id == POSIX_TRACE_STOP && lu_ev[4503].pid == getpid());
	CHECK_EQ(lu_user(n, early, w.pid, 1, 1, NULL, NULL), 1000);
	CHECK_EQ(lu_user(n, late, w.pid, 3, 1, NULL, per), 3000);
	for (int t = 0; t < 3; t++)
		CHECK_EQ(per[t], 1000);
	CHECK_EQ(lu_user(n, ctl, w.pid, 1, 1, NULL, NULL), 500);
	thread_ids(n, late, 3);
	in_window(n, early, lo[0], hi[0]);
	in_window(n, late, lo[1], hi[1]);
	in_window(n, ctl, lo[2], hi[2]);
	lu_no_damage(n);
	lu_name(log, early, "log-remote/early");
	lu_name(log, late, "log-remote/late");
	lu_name(log, ctl, "log-remote/ctl-first");
	/* every type of the stream, recorded or not (the log carries them all) */
	trace_event_id_t types[LU_STREAM_TYPES];
	lu_stream_types(types, early, late, ctl);
	lu_types(log, types, LU_STREAM_TYPES, 0);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
	end_worker(&w);
	lu_rmfile(path);
}

/* ------------------------------------------------------ killed controller */
static void killed_controller(void)
{
	struct worker w = spawn_worker(worker_record);
	trace_event_id_t id = reg(&w, "log-remote/killed");
	int fd = lu_tmpfile(path, sizeof path, "remote", O_WRONLY), sync[2], st, rfd;
	pid_t ctl;
	char c;

	REQUIRE(pipe(sync) == 0);
	ctl = fork();
	REQUIRE(ctl >= 0);
	if (ctl == 0) {                   /* the controller: create, start, wait */
		trace_attr_t a;
		trace_id_t trid;
		alarm(60);
		posix_trace_attr_init(&a);
		posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
		if (posix_trace_create_withlog(w.pid, &a, fd, &trid) || posix_trace_start(trid))
			_exit(2);
		t_write_full(sync[1], "r", 1);
		for (;;)
			pause();
	}
	close(sync[1]);
	REQUIRE(read(sync[0], &c, 1) == 1);
	struct cmd cm = { OP_REC, 400000, 1, 500, id, "" };   /* about 1 s, paced */
	t_write_full(w.cmd, &cm, sizeof cm);
	long long end = lu_mono_ms() + 20000;
	while (lu_fsize(path) < 300000 && lu_mono_ms() < end)
		usleep(2000);
	CHECK(lu_fsize(path) >= 300000);
	kill(ctl, SIGKILL);
	REQUIRE(waitpid(ctl, &st, 0) == ctl);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	struct rep r;
	CHECK(t_read_full(w.rep, &r, sizeof r) == 0);       /* the worker finished */
	long long size = lu_fsize(path);

	trace_id_t log;
	int n = lu_load(path, &log, &rfd);
	int over = lu_count(n, POSIX_TRACE_OVERFLOW, -1);
	int k = lu_user(n, id, w.pid, 1, over == 0, NULL, NULL);
	CHECK(k >= (size - 256) / 80);                   /* at most 80 bytes an event */
	CHECK(n > 0 && lu_ev[0].id == POSIX_TRACE_START && lu_ev[0].pid == ctl);
	lu_no_damage(n);
	lu_name(log, id, "log-remote/killed");
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
	close(sync[0]);
	close(fd);
	end_worker(&w);
	lu_rmfile(path);
}

int main(void)
{
	T_BEGIN(120);
	remote_log();
	killed_controller();
	T_END();
}
