/*
 * remote_errors.c -- posix_trace_create() for another process: the errors,
 * and processes that never record.
 *
 * ESRCH for a pid that no longer exists (a reaped child) and for negative
 * pids.  EPERM, as root: a child that became nobody (setgid/setuid 65534)
 * may not trace its root parent nor pid 1, and can still trace itself.
 * A process that never calls posix_trace_event() -- a forked child idle on
 * a pipe, and /bin/cat exec'd with none of our fds and no POSIXTRACE_*
 * environment -- can be traced: create, start and stop succeed and the
 * stream holds exactly START and STOP, both with this process's pid.
 */
#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

/* Every event in the stream: ids and pids. */
static trace_event_id_t ids[64];
static pid_t pids[64];

static void keep(void *arg, int n, const struct posix_trace_event_info *ev, const void *buf,
                 size_t len)
{
	(void)arg, (void)buf, (void)len;
	ids[n] = ev->posix_event_id;
	pids[n] = ev->posix_pid;
}

static int collect(trace_id_t trid)
{
	unsigned char buf[2 * sizeof(trace_event_set_t)];
	return t_drain(trid, buf, sizeof buf, 64, keep, NULL);
}

/* ------------------------------------------------------- 2: ESRCH, EPERM */
static void errors(void)
{
	trace_id_t trid;
	int st;
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(0);
	REQUIRE(waitpid(pid, NULL, 0) == pid);
	CHECK_RC(posix_trace_create(pid, NULL, &trid), ESRCH);
	CHECK_RC(posix_trace_create(-1, NULL, &trid), ESRCH);
	CHECK_RC(posix_trace_create(-5, NULL, &trid), ESRCH);

	if (geteuid() != 0) {
		printf("SKIP-PART: EPERM needs root\n");
		return;
	}
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
			_exit(10);
		if (posix_trace_create(getppid(), NULL, &trid) != EPERM)
			_exit(11);
		if (posix_trace_create(1, NULL, &trid) != EPERM)
			_exit(12);
		if (posix_trace_create(0, NULL, &trid) != 0 || posix_trace_shutdown(trid) != 0)
			_exit(13);  /* tracing itself still works as nobody */
		_exit(0);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	if (WEXITSTATUS(st))
		fprintf(stderr, "EPERM child: exit %d (10 setuid failed, 11 create(parent) "
		        "!= EPERM, 12 create(1) != EPERM, 13 create(0) failed)\n", WEXITSTATUS(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
}

/* ----------------------------------------- 3: a process that never records */
static void only_start_stop(pid_t pid)
{
	trace_id_t trid;
	trid = t_create_ok(pid, NULL);
	CHECK_RC(posix_trace_start(trid), 0);
	CHECK_RC(posix_trace_stop(trid), 0);
	int n = collect(trid);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK(ids[0] == POSIX_TRACE_START && pids[0] == getpid());
		CHECK(ids[1] == POSIX_TRACE_STOP && pids[1] == getpid());
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

static void never_records(void)
{
	int p[2], e[2], st, err = 0;
	pid_t pid;

	REQUIRE(pipe(p) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {              /* links the library, never records */
		char c;
		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	only_start_stop(pid);
	close(p[1]);
	REQUIRE(waitpid(pid, &st, 0) == pid);

	/* /bin/cat with none of our fds and no POSIXTRACE_* in its environment */
	REQUIRE(pipe(p) == 0 && pipe2(e, O_CLOEXEC) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(p[0], 0);
		dup2(devnull, 1);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != e[1])
				close(fd);
		unsetenv("POSIXTRACE_CTL");
		execl("/bin/cat", "cat", (char *)NULL);
		err = errno;
		t_write_full(e[1], &err, sizeof err);
		_exit(127);
	}
	close(p[0]);
	close(e[1]);
	if (t_read_full(e[0], &err, sizeof err) == 0) {   /* (EOF means exec done) */
		printf("SKIP-PART: cannot exec /bin/cat: %s\n", strerror(err));
	} else {
		only_start_stop(pid);
	}
	close(e[0]);
	close(p[1]);
	REQUIRE(waitpid(pid, &st, 0) == pid);
}

int main(void)
{
	T_BEGIN(60);
	signal(SIGPIPE, SIG_IGN);   /* a dead peer: EPIPE and a message */
	errors();
	never_records();
	T_END();
}
