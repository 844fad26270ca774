/*
 * life_edges.c -- the other ways a program's life could meet the
 * library's threads and descriptors.  Each case runs in a child C that
 * owns a stream for itself with a log (a flusher thread runs) and records
 * N events (payload seq) before and N after what it does; C must end
 * within 5 s with the status the case gives, and its log must hold the 2N
 * events in order, START once, STOP once (or, for daemon(), what the
 * daemon's own stream recorded).
 *
 * 1. fork() while the flusher runs: the child (one thread) records into
 *    no stream of the parent's, makes a stream and log of its own, records
 *    N events and exits(0) within 5 s; its log complete; the parent's too.
 * 2. vfork() and execve() of /bin/true in the child (and one of a file
 *    that does not exist, then _exit): the child's exec is not the
 *    parent's, so the parent's stream stays (it records after).
 * 3. posix_spawn() of /bin/true: the same.
 * 4. clone() without CLONE_THREAD or CLONE_VM (a child process that the
 *    C library's fork handlers do not see) whose child calls exit(0): it
 *    ends (the exit destructor waited for ever for the parent's flusher,
 *    which is not in the child), and the parent's stream is not shut down.
 * 5. daemon(): the parent ends with _exit (its log: what a kill leaves);
 *    the daemon, a fork child, makes its own stream and log, records N
 *    and exits within 5 s: its log complete.
 * 6. setuid() to nobody mid-run (as root; skipped otherwise), then the N
 *    events after and exit(0).
 * 7. close_range(3, ~0) over every descriptor of the library, in a child
 *    with a stream without a log (a log's fd is the program's own: closing
 *    it ends the log): the program then opens 4 files of its own, which
 *    take the library's numbers, and writes 13 bytes into one; its 2N
 *    events are read back; posix_trace_shutdown() succeeds; its files are
 *    still open, close-on-exec as it set them, the written one still 13
 *    bytes (the library closes, and punches holes in, only its own files).
 */
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "log_util.h"
#include "helpers.h"

#define N 1000

extern char **environ;
static trace_event_id_t ev;

static void records(int from)
{
	for (int i = from; i < from + N; i++)
		posix_trace_event(ev, &i, sizeof i);
}

static trace_id_t own_stream(const char *path)
{
	trace_attr_t a;
	trace_id_t t;
	int fd = open(path, O_WRONLY | O_TRUNC);

	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 1 << 20) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &t) == 0);
	REQUIRE(posix_trace_eventid_open("life", &ev) == 0);
	REQUIRE(posix_trace_start(t) == 0);
	return t;
}

/* The log at path holds seq 0..n-1 in order, START and STOP once. */
static int log_ok(const char *path, int n)
{
	int k = lu_load(path, NULL, NULL), user = 0, order = 1, fails = t_failures;
	for (int i = 0; i < k; i++)
		if (lu_ev[i].id >= PT_SYS_IDS) {
			order &= lu_ev[i].ival == user;
			user++;
		}
	CHECK_EQ(user, n);
	CHECK(order);
	CHECK_EQ(lu_count(k, POSIX_TRACE_START, -1), 1);
	CHECK_EQ(lu_count(k, POSIX_TRACE_STOP, -1), 1);
	return fails == t_failures;
}

static char path2[256];

static int clone_child(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* (a hang here goes with its parent) */
	exit(0);
}

static int run(int how, const char *path)
{
	pid_t p;
	trace_id_t t;

	if (how == 7) { /* a stream without a log: the program closes every fd */
		struct posix_trace_event_info e;
		int f[4], seq, un, got = 0, ok = 1;
		size_t len;
		REQUIRE(posix_trace_create(0, NULL, &t) == 0);
		REQUIRE(posix_trace_eventid_open("life", &ev) == 0);
		REQUIRE(posix_trace_start(t) == 0);
		records(0);
		if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
			return 77;
		for (int i = 0; i < 4; i++) {
			f[i] = open(i == 3 ? path : "/dev/null",
			            (i == 3 ? O_RDWR : O_RDONLY) | (i == 1 ? O_CLOEXEC : 0));
			REQUIRE(f[i] >= 0);
		}
		REQUIRE(write(f[3], "program's own", 13) == 13);
		records(N); /* (the stream's memory is still mapped) */
		while (posix_trace_trygetnext_event(t, &e, &seq, sizeof seq, &len, &un) == 0 && !un)
			if (e.posix_event_id == ev)
				ok &= seq == got++;
		if (got != 2 * N || !ok)
			return 2;
		if (posix_trace_shutdown(t) != 0)
			return 4;
		for (int i = 0; i < 4; i++)
			if (fcntl(f[i], F_GETFD) != (i == 1 ? FD_CLOEXEC : 0))
				return 3;
		if (lu_fsize(path) != 13)
			return 5; /* (a hole punched in the program's file) */
		return 0;
	}
	t = own_stream(path);
	records(0);
	switch (how) {
	case 1:
		p = fork();
		REQUIRE(p >= 0);
		if (p == 0) {
			t_failures = 0;
			own_stream(path2);
			records(0);
			exit(0);
		}
		if (t_wait_for(p, 5000) != 0 || !log_ok(path2, N))
			return 3;
		break;
	case 2:
		p = vfork();
		if (p == 0) {
			char *argv[] = { (char *)"true", NULL };
			execve("/nonexistent/life", argv, environ);
			execve("/bin/true", argv, environ);
			_exit(127);
		}
		REQUIRE(p > 0);
		if (t_wait_for(p, 5000) != 0)
			return 3;
		p = vfork();
		if (p == 0) {
			char *argv[] = { (char *)"true", NULL };
			execve("/nonexistent/life", argv, environ);
			_exit(5);
		}
		if (t_wait_for(p, 5000) != 5)
			return 3;
		break;
	case 3: {
		char *argv[] = { (char *)"true", NULL };
		REQUIRE(posix_spawn(&p, "/bin/true", NULL, NULL, argv, environ) == 0);
		if (t_wait_for(p, 5000) != 0)
			return 3;
		break;
	}
	case 4: {
		static char stack[1 << 16];
		p = clone(clone_child, stack + sizeof stack, SIGCHLD, NULL);
		REQUIRE(p > 0);
		if (t_wait_for(p, 5000) != 0)
			return 3;
		break;
	}
	case 5:
		fflush(NULL);
		if (daemon(1, 1) != 0)
			return 4;
		/* the daemon: the fork child of daemon(); the parent is gone */
		t_failures = 0;
		own_stream(path2);
		records(0);
		exit(0);
	case 6:
		if (setuid(65534) != 0)
			return 77;
		break;
	}
	struct posix_trace_status_info si;
	if (posix_trace_get_status(t, &si) != 0)
		return 6; /* the stream was shut down by someone else */
	records(N);
	exit(0);
}

static const char *const what[] = { "", "fork()", "vfork() + execve()", "posix_spawn()",
	                            "clone() without CLONE_THREAD", "daemon()", "setuid()",
	                            "close_range()" };

int main(void)
{
	T_BEGIN(120);
	for (int how = 1; how <= 7; how++) {
		char path[256];
		int fails = t_failures;
		close(lu_tmpfile(path, sizeof path, "life-edge", O_RDWR));
		close(lu_tmpfile(path2, sizeof path2, "life-edge2", O_RDWR));
		if ((UNDER_TSAN || UNDER_ASAN) && (how == 1 || how == 5)) {
			printf("%-30s: SKIP under %s (a thread started in the child of a threaded "
			       "fork: tests/helpers.h)\n",
			       what[how], UNDER_TSAN ? "ThreadSanitizer" : "AddressSanitizer");
			continue;
		}
		if (UNDER_ASAN && how == 4) {
			printf("%-30s: SKIP under AddressSanitizer (its leak check at the child's "
			       "exit() takes a lock another thread may hold: tests/helpers.h)\n",
			       what[how]);
			continue;
		}
		if (how == 6 && geteuid() != 0) {
			printf("%-30s: SKIP (not root)\n", what[how]);
			continue;
		}
		if (how == 6) /* nobody writes the log: the fd is open already */
			chmod(path, 0600);
		fflush(NULL);
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0)
			_exit(run(how, path));
		int st = t_wait_for(pid, 5000);
		if (how == 5) {
			/* the daemon is not our child: wait for its log's STOP */
			for (int i = 0; i < 500; i++) {
				int k = lu_fsize(path2) > 0 ? lu_load(path2, NULL, NULL) : 0;
				if (k && lu_count(k, POSIX_TRACE_STOP, -1) == 1)
					break;
				usleep(10000);
			}
			CHECK_EQ(st, 0);
			CHECK(log_ok(path2, N));
		} else if (st == 77) {
			printf("%-30s: SKIP\n", what[how]);
		} else {
			CHECK_EQ(st, 0);
			if (how != 7)
				CHECK(log_ok(path, 2 * N));
		}
		printf("%-30s: status %d, %s\n", what[how], st, fails == t_failures ? "ok" : "FAILED");
		lu_rmfile(path);
		lu_rmfile(path2);
	}
	T_END();
}
