/*
 * worker_util.h -- a worker process that tests of tracing another process
 * drive over two pipes (remote.c, log_remote.c): forked with
 * t_fork_piped(), it runs the test's worker_main(cmd_fd, rep_fd), which
 * reads a struct cmd at a time (register a name, record n events from
 * nthr threads, paced or not; quit) and answers each with a struct rep.
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

static inline struct worker spawn_worker(void (*worker_main)(int cfd, int rfd))
{
	struct t_pipes p;
	pid_t pid = t_fork_piped(&p);
	if (pid == 0)
		worker_main(p.cmd, p.rep);
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
