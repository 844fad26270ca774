/*
 * life_exec.c -- at exec and at exit, a controller's streams are shut
 * down "as if an explicit call were made to the posix_trace_shutdown()
 * function" (posix_trace_shutdown(3)): the log gets every event recorded
 * and the STOP.
 *
 * A child C creates a stream for itself with a log, starts it, records N
 * events (payload: seq 0..N-1) and then, without shutting the stream
 * down, ends its image one way: each exec function of the library
 * (execl, execle, execlp, execv, execve, execvp, execvpe, fexecve) of
 * /bin/true (the p functions find "true" in PATH), or exit(0) from main,
 * or exit(0) from a second thread while main waits.  Before that it calls
 * the same function on a file that does not exist: ENOENT, and its stream
 * is still there (get_status 0, one more event recorded, which the log
 * must hold too).  Every stream-full policy (LOOP, UNTIL_FULL, FLUSH)
 * with every log-full policy (APPEND, LOOP, UNTIL_FULL).  C ends within
 * 5 s with status 0; the log then holds exactly the N + 1 events, in
 * order, seq 0..N, START once and STOP once.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "log_util.h"
#include "helpers.h"

#define N 3000

extern char **environ;

enum how { H_EXECL, H_EXECLE, H_EXECLP, H_EXECV, H_EXECVE, H_EXECVP, H_EXECVPE, H_FEXECVE,
           H_EXIT, H_EXIT_THREAD, H_N };
static const char *const how_name[H_N] = { "execl",  "execle",   "execlp",  "execv",
                                           "execve", "execvp",   "execvpe", "fexecve",
                                           "exit",   "exit from a thread" };

/* The exec function `how` on path (file for the p functions).  Returns
 * only if the exec failed. */
static void do_exec(enum how how, const char *path, const char *file)
{
	char *argv[] = { (char *)"true", NULL };
	int fd;

	switch (how) {
	case H_EXECL: execl(path, "true", (char *)NULL); break;
	case H_EXECLE: execle(path, "true", (char *)NULL, environ); break;
	case H_EXECLP: execlp(file, "true", (char *)NULL); break;
	case H_EXECV: execv(path, argv); break;
	case H_EXECVE: execve(path, argv, environ); break;
	case H_EXECVP: execvp(file, argv); break;
	case H_EXECVPE: execvpe(file, argv, environ); break;
	case H_FEXECVE:
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return; /* (ENOENT, as the others) */
		fexecve(fd, argv, environ);
		close(fd);
		break;
	default: break;
	}
}

static void *exit_thread(void *arg)
{
	(void)arg;
	exit(0);
}

static void rec(trace_event_id_t id, int seq)
{
	posix_trace_event(id, &seq, sizeof seq);
}

/* The child: its stream, its events, its end.  Problems it finds before
 * the end make it exit non-zero. */
static void child(enum how how, int sp, int lp, const char *path)
{
	trace_attr_t a;
	trace_id_t t;
	trace_event_id_t id;
	struct posix_trace_status_info si;
	int fd = open(path, O_WRONLY | (lp == POSIX_TRACE_APPEND ? O_APPEND : 0));

	t_failures = 0; /* (the parent's, copied) */
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, sp) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&a, lp) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 1 << 20) == 0);
	REQUIRE(posix_trace_attr_setlogsize(&a, 4 << 20) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &t) == 0);
	REQUIRE(posix_trace_eventid_open("life", &id) == 0);
	REQUIRE(posix_trace_start(t) == 0);
	for (int i = 0; i < N; i++)
		rec(id, i);
	if (how <= H_FEXECVE) {
		errno = 0;
		do_exec(how, "/nonexistent/life-exec", "life-exec-nonexistent");
		CHECK_EQ(errno, ENOENT);
	}
	CHECK_RC(posix_trace_get_status(t, &si), 0); /* still there */
	rec(id, N);
	if (t_failures)
		_exit(1);
	switch (how) {
	case H_EXIT:
		exit(0);
	case H_EXIT_THREAD: {
		pthread_t th;
		REQUIRE(pthread_create(&th, NULL, exit_thread, NULL) == 0);
		for (;;)
			pause();
	}
	default:
		do_exec(how, "/bin/true", "true");
		fprintf(stderr, "%s: %s\n", how_name[how], strerror(errno));
		_exit(2);
	}
}

static const char *pol(int p)
{
	return p == POSIX_TRACE_LOOP ? "LOOP" : p == POSIX_TRACE_UNTIL_FULL ? "UNTIL_FULL"
	     : p == POSIX_TRACE_FLUSH ? "FLUSH" : "APPEND";
}

static int one(enum how how, int sp, int lp)
{
	char path[256];
	int fd = lu_tmpfile(path, sizeof path, "life-exec", O_RDWR), fails = t_failures;
	close(fd);
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		child(how, sp, lp, path);
	int st = t_wait_for(pid, 5000);
	CHECK_EQ(st, 0);
	int n = lu_load(path, NULL, NULL);
	struct lu_run r = lu_run_of(n);
	CHECK_EQ(r.user, N + 1);
	CHECK(r.order);
	CHECK_EQ(r.starts, 1);
	CHECK_EQ(r.stops, 1);
	lu_rmfile(path);
	if (t_failures != fails)
		fprintf(stderr, "  (%s, stream %s, log %s: %d events read, %d user, status %d)\n",
		        how_name[how], pol(sp), pol(lp), n, r.user, st);
	return t_failures == fails;
}

int main(void)
{
	static const int sps[] = { POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_FLUSH };
	static const int lps[] = { POSIX_TRACE_APPEND, POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL };

	T_BEGIN(240);
	if (access("/bin/true", X_OK) != 0)
		T_SKIP("no /bin/true");
	setenv("PATH", "/usr/bin:/bin", 1);
	for (int h = 0; h < H_N; h++) {
		int ok = 0;
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++)
				ok += one((enum how)h, sps[i], lps[j]);
		printf("%-18s: %d of 9 policy pairs with a complete log\n", how_name[h], ok);
	}
	T_END();
}
