/*
 * worker_util.h -- a worker process that tests of tracing another process
 * drive over two pipes (remote.c, log_remote.c): forked with
 * t_fork_piped(), it reads a struct cmd at a time (register a name,
 * record n events from nthr threads, paced or not, as the test's
 * record() does; quit) and answers each with a struct rep (worker_serve).
 * The test starts it (spawn_worker), asks (ask, reg) and ends it
 * (end_worker: it must exit 0).  Needs t.h and helpers.h.
 */
#ifndef POSIXTRACE_TEST_WORKER_UTIL_H
#define POSIXTRACE_TEST_WORKER_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <trace.h>

/* OP_REC_LATE: recorded after a while (remote.c: 50 ms) */
enum { OP_REG = 1, OP_REC, OP_REC_LATE, OP_QUIT };
struct cmd { int op, n, nthr, pace; trace_event_id_t id; char name[TRACE_EVENT_NAME_MAX + 1]; };
struct rep { int rc; trace_event_id_t id; };
struct worker { pid_t pid; int cmd, rep; };

/* The worker: a command at a time from cfd until OP_QUIT (or the end of
 * the pipe), each answered on rfd; OP_REG done here, the others by the
 * test's record(c); then it exits with 0. */
_Noreturn static inline void worker_serve(int cfd, int rfd, void (*record)(const struct cmd *c))
{
	struct cmd c;
	alarm(60);
	while (t_read_full(cfd, &c, sizeof c) == 0 && c.op != OP_QUIT) {
		struct rep r = { 0, 0 };
		if (c.op == OP_REG)
			r.rc = posix_trace_eventid_open(c.name, &r.id);
		else
			record(&c);
		t_write_full(rfd, &r, sizeof r);
	}
	_exit(0);
}

static inline struct worker spawn_worker(void (*record)(const struct cmd *c))
{
	struct t_pipes p;
	pid_t pid = t_fork_piped(&p);
	if (pid == 0)
		worker_serve(p.cmd, p.rep, record);
	return (struct worker){ pid, p.cmd, p.rep };
}

/* The command op (name, id, n events from nthr threads, not paced) done
 * by the worker: its answer; the test stops if the worker died. */
static inline struct rep ask(struct worker *w, int op, const char *name, trace_event_id_t id,
                             int n, int nthr)
{
	struct cmd c = { op, n, nthr, 0, id, "" };
	struct rep r;
	if (name)
		snprintf(c.name, sizeof c.name, "%s", name);
	t_write_full(w->cmd, &c, sizeof c);
	if (t_read_full(w->rep, &r, sizeof r) != 0) {
		fprintf(stderr, "worker %d died (op %d)\n", (int)w->pid, op);
		exit(1);
	}
	return r;
}

/* name registered by the worker: its id there */
static inline trace_event_id_t reg(struct worker *w, const char *name)
{
	struct rep r = ask(w, OP_REG, name, 0, 0, 0);
	CHECK_RC(r.rc, 0);
	return r.id;
}

static inline void end_worker(struct worker *w)
{
	int st;
	struct cmd c = { OP_QUIT, 0, 0, 0, 0, "" };
	t_write_full(w->cmd, &c, sizeof c);
	close(w->cmd);
	close(w->rep);
	REQUIRE(waitpid(w->pid, &st, 0) == w->pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

#endif
