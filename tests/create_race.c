/*
 * create_race.c -- a stream made for a process that is forking or
 * exec'ing reaches it, or creation fails; it never silently gets nothing.
 *
 * The traced program ("--rec") records "tick" events numbered 1, 2, ...
 * until it reads a byte on its stop pipe, then one "end" event, and writes
 * how many ticks it recorded on its report pipe: that count is the
 * witness.  Each round checks that the stream got ticks k..count, each
 * once and in order, for some k >= 1, then "end".  The rounds:
 *
 *  - exec: fork, then at once execl() of this program in "--rec" mode,
 *    the stream made at once (and after 0..7 short delays), while the
 *    child is between fork, its exec and the new image's constructors;
 *  - fork: fork, the child records without exec, the stream made at once
 *    (the child may still show its parent's control segment);
 *  - late exec: a child made with a raw clone (no fork handler: it shows
 *    its parent's control segment) that execs "--rec" only 300 ms later,
 *    longer than creation used to look before it took the child for a
 *    process without the library;
 *  - made late: a raw clone child as in late exec that, after its 300 ms,
 *    shows a segment being made (a memfd named like the library's, its
 *    magic not yet written) in place of its parent's for 50 ms, then
 *    execs: how a new image looks to a controller between its exec and
 *    the end of its constructor (CI caught a late exec round there once:
 *    creation had spent the new image's time on the 300 ms before and
 *    took it for a process without the library);
 *  - stuck: a raw clone child that keeps its parent's segment until told:
 *    posix_trace_create() fails with EAGAIN (it used to succeed with a
 *    stream the child could never see).
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"

#define EXEC_ROUNDS 40
#define FORK_ROUNDS 20
#define LATE_ROUNDS 3
#define MADE_ROUNDS 2
#define STOP_AFTER  50 /* ticks received before the stop byte is sent */

extern char **environ;

/* The traced program: ticks until the stop pipe has a byte. */
static int rec(int stopfd, int repfd)
{
	trace_event_id_t tick, end;
	struct timespec pause = { 0, 20000 };
	int n = 0;
	char b;

	if (posix_trace_eventid_open("tick", &tick) != 0 || posix_trace_eventid_open("end", &end) != 0)
		return 2;
	fcntl(stopfd, F_SETFL, O_NONBLOCK);
	while (read(stopfd, &b, 1) != 1 && n < 1000000) {
		n++;
		posix_trace_event(tick, &n, sizeof n);
		nanosleep(&pause, NULL);
	}
	posix_trace_event(end, &n, sizeof n);
	return write(repfd, &n, sizeof n) == sizeof n ? 0 : 2;
}

struct pipes { int stop[2], rep[2]; };

static void rec_argv(const struct pipes *p, char *sfd, char *rfd, char **argv)
{
	snprintf(sfd, 16, "%d", p->stop[0]);
	snprintf(rfd, 16, "%d", p->rep[1]);
	argv[0] = (char *)"/proc/self/exe";
	argv[1] = (char *)"--rec";
	argv[2] = sfd;
	argv[3] = rfd;
	argv[4] = NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
	syscall(SYS_nanosleep, &ts, NULL);
}

/* A child by a raw clone: no fork handler runs, so it shows this
 * process's control segment.  It waits for a byte on wait_fd, or
 * wait_ms; then, if made_ms, shows a segment being made in place of this
 * process's for made_ms; then execs "--rec" (exec_it) or exits; system
 * calls only. */
static pid_t raw_child(const struct pipes *p, int wait_fd, long wait_ms, long made_ms,
                       int exec_it)
{
	char sfd[16], rfd[16], *argv[5];
	const char *ctl = getenv("POSIXTRACE_CTL"); /* this process's segment's fd */

	rec_argv(p, sfd, rfd, argv);
	if (made_ms && !ctl)
		return -1;
	long pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	if (pid != 0)
		return (pid_t)pid;
	if (wait_fd >= 0) {
		char b;
		syscall(SYS_read, wait_fd, &b, 1L);
	} else {
		sleep_ms(wait_ms);
	}
	if (made_ms) { /* zeros, sized as the library's first step sizes it */
		long fd = syscall(SYS_memfd_create, "posixtrace-ctl", (long)MFD_CLOEXEC);
		if (fd < 0 || syscall(SYS_ftruncate, fd, 4096L) != 0)
			syscall(SYS_exit_group, 3L);
		syscall(SYS_close, (long)atoi(ctl));
		sleep_ms(made_ms);
	}
	if (exec_it)
		syscall(SYS_execve, argv[0], argv, environ);
	syscall(SYS_exit_group, 0L);
	return 0;
}

/* Read the stream of pid until "end"; check the ticks against the count
 * the program reports.  1 if the round passed. */
static int collect(trace_id_t t, pid_t pid, const struct pipes *p, const char *what, int round)
{
	struct posix_trace_event_info ev;
	struct timespec dl;
	char name[TRACE_EVENT_NAME_MAX + 1];
	int buf[4], none, first = 0, last = 0, ended = 0, bad = 0, got = 0, count = -1;
	size_t len;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10; /* a hang bound: the first tick comes in microseconds */
	while (!ended && posix_trace_timedgetnext_event(t, &ev, buf, sizeof buf, &len, &none, &dl) == 0 &&
	       !none) {
		if (ev.posix_pid != pid || posix_trace_eventid_get_name(t, ev.posix_event_id, name) != 0)
			continue;
		if (strcmp(name, "tick") == 0 && len == sizeof(int)) {
			if (!first)
				first = buf[0];
			else if (buf[0] != last + 1)
				bad++;
			last = buf[0];
			if (++got == STOP_AFTER && write(p->stop[1], "s", 1) != 1)
				bad++;
		} else if (strcmp(name, "end") == 0 && len == sizeof(int)) {
			ended = 1;
			if (buf[0] != last)
				bad++;
		}
	}
	if (!ended) /* nothing reached the stream: stop the program anyway */
		(void)!write(p->stop[1], "s", 1);
	if (read(p->rep[0], &count, sizeof count) != sizeof count)
		count = -1;
	if (!ended || bad || first < 1 || last != count || got != last - first + 1) {
		fprintf(stderr, "%s round %d: ended %d, ticks %d..%d (%d received, %d out of order), "
		        "program's count %d\n", what, round, ended, first, last, got, bad, count);
		return 0;
	}
	return 1;
}

static int open_pipes(struct pipes *p)
{
	if (pipe2(p->stop, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(p->rep, O_CLOEXEC) != 0) {
		close(p->stop[0]);
		close(p->stop[1]);
		return -1;
	}
	/* the program's ends reach its exec'd image */
	fcntl(p->stop[0], F_SETFD, 0);
	fcntl(p->rep[1], F_SETFD, 0);
	return 0;
}

static void close_pipes(struct pipes *p)
{
	close(p->stop[0]);
	close(p->stop[1]);
	close(p->rep[0]);
	close(p->rep[1]);
}

static int child_status(pid_t pid)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* 0 exec at once, 1 record in the forked child, 2 raw clone + late exec,
 * 3 the same with a segment being made before the exec */
static int round_of(int kind, int round)
{
	trace_attr_t a;
	trace_id_t t;
	struct pipes p;
	char sfd[16], rfd[16], *argv[5];
	pid_t pid;
	int ok = 0, rc;
	static const char *const kinds[] = { "exec", "fork", "late exec", "made late" };

	REQUIRE(open_pipes(&p) == 0);
	rec_argv(&p, sfd, rfd, argv);
	if (kind >= 2) {
		pid = raw_child(&p, -1, 300, kind == 3 ? 50 : 0, 1);
	} else if ((pid = fork()) == 0) {
		if (kind == 1)
			_exit(rec(p.stop[0], p.rep[1]));
		execv(argv[0], argv);
		_exit(127);
	}
	REQUIRE(pid > 0);
	for (volatile int spin = 0; spin < (round % 8) * 20000; spin++)
		;
	posix_trace_attr_init(&a);
	posix_trace_attr_setstreamsize(&a, 8u << 20);
	if ((rc = posix_trace_create(pid, &a, &t)) != 0) {
		fprintf(stderr, "%s round %d: posix_trace_create: %s\n",
		        kinds[kind], round, strerror(rc));
		kill(pid, SIGKILL);
	} else {
		CHECK_RC(posix_trace_start(t), 0);
		ok = collect(t, pid, &p, kinds[kind], round);
		CHECK_RC(posix_trace_shutdown(t), 0);
	}
	posix_trace_attr_destroy(&a);
	rc = child_status(pid);
	if (ok)
		CHECK_EQ(rc, 0);
	close_pipes(&p);
	return ok;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--rec") == 0)
		return rec(atoi(argv[2]), atoi(argv[3]));
	T_BEGIN(240);

	/* (a kind stops at its third failed round: a lost round waits 10 s) */
	int ok = 0, r;
	for (r = 0; r < EXEC_ROUNDS && r - ok < 3; r++)
		ok += round_of(0, r);
	CHECK_EQ(ok, EXEC_ROUNDS);

	for (ok = 0, r = 0; r < FORK_ROUNDS && r - ok < 3; r++)
		ok += round_of(1, r);
	CHECK_EQ(ok, FORK_ROUNDS);

	for (ok = 0, r = 0; r < LATE_ROUNDS && r - ok < 3; r++)
		ok += round_of(2, r * 8); /* no spin before the create */
	CHECK_EQ(ok, LATE_ROUNDS);

	for (ok = 0, r = 0; r < MADE_ROUNDS && r - ok < 3; r++)
		ok += round_of(3, r * 8);
	CHECK_EQ(ok, MADE_ROUNDS);

	/* a child that keeps showing this process's segment: EAGAIN */
	{
		struct pipes p;
		int go[2];
		trace_attr_t a;
		trace_id_t t;
		REQUIRE(open_pipes(&p) == 0);
		REQUIRE(pipe2(go, O_CLOEXEC) == 0);
		pid_t pid = raw_child(&p, go[0], 0, 0, 0);
		REQUIRE(pid > 0);
		posix_trace_attr_init(&a);
		CHECK_RC(posix_trace_create(pid, &a, &t), EAGAIN);
		CHECK_EQ(write(go[1], "g", 1), 1);
		CHECK_EQ(child_status(pid), 0);
		posix_trace_attr_destroy(&a);
		close(go[0]);
		close(go[1]);
		close_pipes(&p);
	}
	T_END();
}
