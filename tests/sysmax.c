/*
 * sysmax.c -- TRACE_SYS_MAX counts the streams of every process.
 *
 * 24 idle children are the traced processes (at most 8 streams may trace
 * one process, so 8 of them carry 64 streams).  A controller child creates
 * 64 streams (8 each for children 0-7), this process 64 more (children
 * 8-15): 128 = TRACE_SYS_MAX exist.  Then any create -- for itself (no
 * stream traces it yet), for child 16, or from the controller child --
 * fails with EAGAIN.  One shutdown here makes room for exactly one stream
 * (EAGAIN again after it), in any process; the slot it held in its traced
 * process can be taken again.  Killing the controller child gives its 64
 * back: 64 new streams (children 16-23) can be created here, the next
 * fails.  Finally, with everything shut down, child 0 -- whose 8 slots were
 * held by the killed controller and which never records -- can be traced
 * again.
 *
 * TRACE_SYS_MAX counts the streams of a network namespace (their names
 * are abstract sockets): the test runs in one of its own (ns_util.h), so
 * that the streams of other programs on the machine -- a `posixtrace
 * record`, another make check -- do not change its counts.
 */
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "ns_util.h"

#define NKIDS 24
#define PER 8           /* streams that may trace one process */

static trace_attr_t attr;
static pid_t kid[NKIDS];

static int create_for(pid_t pid, trace_id_t *trid)
{
	int rc = posix_trace_create(pid, &attr, trid);
	if (rc == ENOSYS) {
		fprintf(stderr, "posix_trace_create(pid %d): ENOSYS -- tracing another process "
		        "is not implemented\n", (int)pid);
		exit(1);
	}
	return rc;
}

/* PER streams for each of kid[from..to); returns how many were made.  An
 * EAGAIN is retried for up to `wait` seconds. */
static int fill(int from, int to, trace_id_t *ids, double wait, int *last_rc)
{
	double end = t_now_s() + wait;
	int n = 0;
	for (int k = from; k < to; k++)
		for (int i = 0; i < PER;) {
			int rc = create_for(kid[k], &ids[n]);
			if (rc == 0) {
				n++;
				i++;
				continue;
			}
			*last_rc = rc;
			if (rc != EAGAIN || t_now_s() > end)
				return n;
			usleep(10000);
		}
	*last_rc = 0;
	return n;
}

/* The controller child: 64 streams, then "try one more" on request. */
static void controller(int cfd, int rfd)
{
	static trace_id_t ids[NKIDS * PER];
	int res[2];
	char c;
	alarm(60);
	res[0] = fill(0, 8, ids, 0, &res[1]);
	if (write(rfd, res, sizeof res) != sizeof res)
		_exit(1);
	while (read(cfd, &c, 1) == 1) {
		trace_id_t t;
		int rc = posix_trace_create(0, &attr, &t);
		if (rc == 0)
			posix_trace_shutdown(t);
		if (write(rfd, &rc, sizeof rc) != sizeof rc)
			_exit(1);
	}
	_exit(0);
}

static int ask_controller(int cfd, int rfd)
{
	int rc = -1;
	REQUIRE(write(cfd, "t", 1) == 1);
	REQUIRE(t_read_full(rfd, &rc, sizeof rc) == 0);
	return rc;
}

int main(void)
{
	static trace_id_t mine[NKIDS * PER];
	trace_id_t self, extra;
	int idle[2], res[2], n, rc;
	struct t_pipes pp;
	struct rlimit rl;

	ns_private(); /* first: before any stream, socket or child */
	T_BEGIN(60);
	signal(SIGPIPE, SIG_IGN);   /* a dead peer: EPIPE and a message */
	REQUIRE(TRACE_SYS_MAX == 2 * 8 * PER);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 4096) == 0);

	REQUIRE(pipe(idle) == 0);
	for (int k = 0; k < NKIDS; k++) {
		kid[k] = fork();
		REQUIRE(kid[k] >= 0);
		if (kid[k] == 0) {
			char b;
			close(idle[1]);
			alarm(60);
			while (read(idle[0], &b, 1) > 0)
				;
			_exit(0);
		}
	}
	close(idle[0]);

	pid_t ctl = t_fork_piped(&pp);
	if (ctl == 0) {
		close(idle[1]);
		controller(pp.cmd, pp.rep);
	}
	REQUIRE(t_read_full(pp.rep, res, sizeof res) == 0);
	CHECK_EQ(res[0], 8 * PER);
	CHECK_RC(res[1], 0);

	n = fill(8, 16, mine, 0, &rc);
	CHECK_EQ(n, 8 * PER);
	CHECK_RC(rc, 0);
	REQUIRE(n == 8 * PER && res[0] == 8 * PER);

	/* 128 exist: full, whoever asks, for whatever process */
	CHECK_RC(posix_trace_create(0, &attr, &extra), EAGAIN);
	CHECK_RC(create_for(kid[16], &extra), EAGAIN);
	CHECK_RC(ask_controller(pp.cmd, pp.rep), EAGAIN);

	/* one shutdown: room for one */
	CHECK_RC(posix_trace_shutdown(mine[0]), 0);
	CHECK_RC(posix_trace_create(0, &attr, &self), 0);
	CHECK_RC(create_for(kid[16], &extra), EAGAIN);
	CHECK_RC(ask_controller(pp.cmd, pp.rep), EAGAIN);
	CHECK_RC(posix_trace_shutdown(self), 0);
	CHECK_RC(ask_controller(pp.cmd, pp.rep), 0);   /* another process may take it */
	CHECK_RC(create_for(kid[8], &mine[0]), 0); /* kid 8 lost a stream: its slot is free */
	CHECK_RC(posix_trace_create(0, &attr, &extra), EAGAIN);

	/* the controller dies: its 64 are shut down */
	kill(ctl, SIGKILL);
	REQUIRE(waitpid(ctl, NULL, 0) == ctl);
	n = fill(16, 24, mine + 8 * PER, 5, &rc);
	if (n < 8 * PER)
		fprintf(stderr, "after the controller was killed only %d of its 64 streams "
		        "were given back (rc %d)\n", n, rc);
	CHECK_EQ(n, 8 * PER);
	CHECK_RC(rc, 0);
	CHECK_RC(posix_trace_create(0, &attr, &extra), EAGAIN);
	for (int i = 0; i < 8 * PER + n; i++)
		CHECK_RC(posix_trace_shutdown(mine[i]), 0);

	/* all gone: kid 0's slots, held by the dead controller, are free again */
	n = fill(0, 1, mine, 5, &rc);
	if (n < PER)
		fprintf(stderr, "kid 0, whose streams' controller was killed, can be traced by "
		        "only %d streams (rc %d)\n", n, rc);
	CHECK_EQ(n, PER);
	for (int i = 0; i < n; i++)
		CHECK_RC(posix_trace_shutdown(mine[i]), 0);

	close(idle[1]);
	for (int k = 0; k < NKIDS; k++)
		waitpid(kid[k], NULL, 0);
	close(pp.cmd);
	close(pp.rep);
	T_END();
}
