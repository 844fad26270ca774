/*
 * life_limits.c -- resource limits give the library an error, never the
 * program a signal.
 *
 * 1. This program run again (exec) with only the library linked in, under
 *    RLIMIT_FSIZE 0, 4 KiB and 50 KiB (less than the 72 KiB control
 *    segment made at load) and 1000 KiB (less than the file of a stream of
 *    the default size, sparse as it is: docs/implementation-defined.md), RLIMIT_NOFILE 4 (one fd free, which the
 *    dynamic loader needs to start the program at all), RLIMIT_MEMLOCK 0,
 *    each with SIGXFSZ's default action: it
 *    reaches main and ends with its own status (42); under the FSIZE
 *    limits posix_trace_create(0) gives ENOMEM (the stream's memory cannot
 *    be had: posix_trace_create(3)) and posix_trace_event() is harmless.
 * 2. RLIMIT_FSIZE 32 MiB, a handler counting SIGXFSZ: a 256 MiB stream
 *    gives ENOMEM, a 64 KiB one works (100 events read back, exact), the
 *    handler never ran and no SIGXFSZ is pending; then the program's own
 *    write past the limit still gets its SIGXFSZ (the handler ran once:
 *    the library takes back only the signals it caused).
 * 3. A log past RLIMIT_FSIZE (200 000 bytes, set after the create, SIGXFSZ
 *    at its default action): a FLUSH stream with an APPEND log, 20 000
 *    events of 40 bytes flushed: posix_stream_flush_error is EFBIG,
 *    posix_trace_shutdown() gives EFBIG, the process lives on, the file
 *    is no bigger than the limit.  And the same in a child whose main
 *    then calls pthread_exit(), the limit passed while recording or only
 *    by the log's end at the exit: the flusher ends it with status 0, not
 *    killed by a SIGXFSZ its writes left pending or raised once the
 *    program's mask was back.
 * 4. RLIMIT_NOFILE at the lowest free fd: posix_trace_create() and
 *    posix_trace_create_withlog() give EAGAIN ("no more trace streams can
 *    be started now"); RLIMIT_AS a little above what the process maps: a
 *    64 MiB stream gives ENOMEM.  The process lives on in each case.
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#define LINKS_ONLY "--links-only"

/* A sanitizer's runtime opens files of its own at exit (/proc/PID/task):
 * the RLIMIT_NOFILE case gives it room */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define NOFILE_MIN 32
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define NOFILE_MIN 32
#endif
#endif
#ifndef NOFILE_MIN
#define NOFILE_MIN 4
#endif

static volatile sig_atomic_t xfsz_seen;

static void on_xfsz(int sig)
{
	(void)sig;
	xfsz_seen++;
}

/* The image run under a limit: it only has the library linked in. */
static int links_only(void)
{
	trace_id_t t;
	struct rlimit r;
	int rc = posix_trace_create(0, NULL, &t);

	posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, NULL, 0);
	if (getrlimit(RLIMIT_FSIZE, &r) == 0 && r.rlim_cur < (1u << 20) && rc != ENOMEM)
		return 1;
	return 42;
}

static int run_under(int res, rlim_t v, const char *self)
{
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0) {
		struct rlimit r = { v, v };
		signal(SIGXFSZ, SIG_DFL);
		if (setrlimit(res, &r) != 0)
			_exit(99);
		execl(self, self, LINKS_ONLY, (char *)NULL);
		_exit(98);
	}
	return t_wait_for(p, 5000);
}

static int count_events(trace_id_t t, trace_event_id_t id, int want)
{
	struct posix_trace_event_info ev;
	char buf[64];
	size_t len;
	int un, got = 0;

	for (int i = 0; i < want; i++)
		posix_trace_event(id, &i, sizeof i);
	while (posix_trace_trygetnext_event(t, &ev, buf, sizeof buf, &len, &un) == 0 && !un)
		got += ev.posix_event_id == id;
	return got;
}

static void fsize_stream(void)
{
	struct rlimit old, r = { 32u << 20, 32u << 20 };
	trace_attr_t a;
	trace_id_t t;
	trace_event_id_t id;
	sigset_t pend;

	REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
	r.rlim_max = old.rlim_max;
	signal(SIGXFSZ, on_xfsz);
	REQUIRE(setrlimit(RLIMIT_FSIZE, &r) == 0);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 256u << 20) == 0);
	CHECK_RC(posix_trace_create(0, &a, &t), ENOMEM);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 64 << 10) == 0);
	int rc = posix_trace_create(0, &a, &t);
	CHECK_RC(rc, 0);
	if (rc == 0) {
		REQUIRE(posix_trace_eventid_open("limits", &id) == 0);
		CHECK_RC(posix_trace_start(t), 0);
		CHECK_EQ(count_events(t, id, 100), 100);
		CHECK_RC(posix_trace_shutdown(t), 0);
	}
	CHECK_EQ(xfsz_seen, 0);
	CHECK(sigpending(&pend) == 0 && !sigismember(&pend, SIGXFSZ));
	/* the program's own */
	char path[] = "/tmp/pt-life-limits-XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	unlink(path);
	CHECK(ftruncate(fd, 64u << 20) != 0 && errno == EFBIG);
	for (int i = 0; i < 1000 && !xfsz_seen; i++)
		usleep(1000); /* (ThreadSanitizer delivers it at its next call) */
	CHECK_EQ(xfsz_seen, 1);
	close(fd);
	REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
	signal(SIGXFSZ, SIG_DFL);
	printf("RLIMIT_FSIZE 32 MiB: 256 MiB stream ENOMEM, 64 KiB stream works, SIGXFSZ "
	       "from the library 0, from the program's own ftruncate %d\n", (int)xfsz_seen);
}

/* A FLUSH stream with an APPEND log on fd and the type "big", not
 * started: 0, or the first failed call's error. */
static int big_stream(int fd, trace_id_t *t, trace_event_id_t *id)
{
	trace_attr_t a;
	int rc;

	if ((rc = posix_trace_attr_init(&a)) != 0)
		return rc;
	if ((rc = posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH)) == 0 &&
	    (rc = posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND)) == 0 &&
	    (rc = posix_trace_create_withlog(0, &a, fd, t)) == 0)
		rc = posix_trace_eventid_open("big", id);
	posix_trace_attr_destroy(&a);
	return rc;
}

/* n events of 40 bytes into t (room for the flusher every 1000: FLUSH
 * drops nothing needed here), then a flush: its error once there is one,
 * or 0 once it is done (500 looks 10 ms apart at most); -1: no status. */
static int big_events(trace_id_t t, trace_event_id_t id, int n)
{
	struct posix_trace_status_info si;
	char buf[40] = { 0 };
	int err = 0;

	for (int i = 0; i < n; i++) {
		memcpy(buf, &i, sizeof i);
		posix_trace_event(id, buf, sizeof buf);
		if (i % 1000 == 999)
			usleep(1000);
	}
	posix_trace_flush(t);
	for (int i = 0; i < 500; i++) {
		if (posix_trace_get_status(t, &si) != 0)
			return -1;
		err = si.posix_stream_flush_error;
		if (err || si.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			break;
		usleep(10000);
	}
	return err;
}

static void fsize_log(void)
{
	struct rlimit old, r = { 200000, 200000 };
	trace_id_t t;
	trace_event_id_t id;
	char path[] = "/tmp/pt-life-log-XXXXXX";
	int fd = mkstemp(path);
	struct stat st;

	REQUIRE(fd >= 0);
	REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
	r.rlim_max = old.rlim_max;
	signal(SIGXFSZ, SIG_DFL);
	REQUIRE(big_stream(fd, &t, &id) == 0);
	REQUIRE(setrlimit(RLIMIT_FSIZE, &r) == 0);
	CHECK_RC(posix_trace_start(t), 0);
	int err = big_events(t, id, 20000);
	int rc = posix_trace_shutdown(t);
	CHECK_EQ(err, EFBIG);
	CHECK_RC(rc, EFBIG);
	REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
	CHECK(fstat(fd, &st) == 0 && st.st_size <= 200000);
	printf("a log past RLIMIT_FSIZE 200000: flush error %d, shutdown %d, %lld bytes, alive\n",
	       err, rc, (long long)st.st_size);
	close(fd);
	unlink(path);
}

/* 3b, in a child: the same log past the limit, then main's pthread_exit
 * with the stream running.  The flusher ends the program (exit(0), with
 * the program's signal mask back): a SIGXFSZ its own writes raised and
 * left pending would kill it then, at its default action.  at_exit: the
 * limit set at the log's size once everything is written instead, so that
 * the first write past it is the end of the log, written at that exit
 * with the program's mask. */
static int fsize_log_exit_child(int at_exit)
{
	struct rlimit r;
	struct stat st;
	trace_id_t t;
	trace_event_id_t id;
	char path[] = "/tmp/pt-life-exit-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return 10;
	unlink(path);
	signal(SIGXFSZ, SIG_DFL);
	if (getrlimit(RLIMIT_FSIZE, &r) != 0)
		return 11;
	r.rlim_cur = 200000;
	if (big_stream(fd, &t, &id) || (!at_exit && setrlimit(RLIMIT_FSIZE, &r)) ||
	    posix_trace_start(t))
		return 12;
	if (big_events(t, id, at_exit ? 1000 : 20000) != (at_exit ? 0 : EFBIG))
		return 14;
	if (at_exit) {
		if (fstat(fd, &st) != 0)
			return 15;
		r.rlim_cur = (rlim_t)st.st_size;
		if (setrlimit(RLIMIT_FSIZE, &r) != 0)
			return 16;
	}
	pthread_exit(NULL);
}

static void fsize_log_exit(int at_exit)
{
	const char *what = at_exit ? "at the exit" : "while recording";

	/* (the flusher ends a program once its threads are the main one,
	 * gone, and the flushers: ThreadSanitizer's own thread keeps it
	 * running, as tests/life_threads says) */
	if (UNDER_TSAN) {
		printf("a log past RLIMIT_FSIZE %s, then pthread_exit from main: SKIP under "
		       "ThreadSanitizer (its own thread)\n", what);
		return;
	}
	fflush(NULL); /* (the child ends by exit(), which flushes what it has) */
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(fsize_log_exit_child(at_exit));
	int st = t_wait_for(pid, 30000);
	CHECK_EQ(st, 0);
	printf("a log past RLIMIT_FSIZE %s, then pthread_exit from main: %s %d\n", what,
	       st < 0 ? "still running after 30 s (killed)" : st >= 128 ? "killed by signal" : "exit status",
	       st >= 128 ? st - 128 : st);
}

static void nofile_as(void)
{
	struct rlimit old, r;
	trace_attr_t a;
	trace_id_t t;
	int lowest = 0, rc;

	REQUIRE(getrlimit(RLIMIT_NOFILE, &old) == 0);
	while (fcntl(lowest, F_GETFD) != -1)
		lowest++;
	int logfd = dup(1);
	REQUIRE(logfd >= 0);
	while (fcntl(lowest, F_GETFD) != -1)
		lowest++;
	r = old;
	r.rlim_cur = (rlim_t)lowest;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &r) == 0);
	CHECK_RC(rc = posix_trace_create(0, NULL, &t), EAGAIN);
	if (rc == 0)
		posix_trace_shutdown(t);
	CHECK_RC(rc = posix_trace_create_withlog(0, NULL, logfd, &t), EAGAIN);
	if (rc == 0)
		posix_trace_shutdown(t);
	REQUIRE(setrlimit(RLIMIT_NOFILE, &old) == 0);
	close(logfd);

	/* RLIMIT_AS: what is mapped now + 16 MiB */
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long vm = 0;
	REQUIRE(f);
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "VmSize:", 7))
			vm = atol(line + 7);
	fclose(f);
	REQUIRE(vm > 0 && getrlimit(RLIMIT_AS, &old) == 0);
	r = old;
	r.rlim_cur = (rlim_t)vm * 1024 + (16u << 20);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 64u << 20) == 0);
	REQUIRE(setrlimit(RLIMIT_AS, &r) == 0);
	CHECK_RC(rc = posix_trace_create(0, &a, &t), ENOMEM);
	REQUIRE(setrlimit(RLIMIT_AS, &old) == 0);
	if (rc == 0)
		posix_trace_shutdown(t);
	printf("RLIMIT_NOFILE at the lowest free fd: EAGAIN; RLIMIT_AS + 16 MiB, a 64 MiB stream: "
	       "ENOMEM\n");
}

int main(int argc, char **argv)
{
	char self[4096] = { 0 };

	if (argc > 1 && !strcmp(argv[1], LINKS_ONLY))
		return links_only();
	T_BEGIN(120);
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	static const struct { int res; rlim_t v; const char *what; } lims[] = {
		{ RLIMIT_FSIZE, 0, "RLIMIT_FSIZE 0" },
		{ RLIMIT_FSIZE, 4096, "RLIMIT_FSIZE 4 KiB" },
		{ RLIMIT_FSIZE, 51200, "RLIMIT_FSIZE 50 KiB" },
		{ RLIMIT_FSIZE, 1000 * 1024, "RLIMIT_FSIZE 1000 KiB" },
		{ RLIMIT_NOFILE, NOFILE_MIN, "RLIMIT_NOFILE low" },
		{ RLIMIT_MEMLOCK, 0, "RLIMIT_MEMLOCK 0" },
	};
	for (unsigned i = 0; i < sizeof lims / sizeof lims[0]; i++) {
		/* ThreadSanitizer's runtime grows a file at start: under RLIMIT_FSIZE 0
		 * a program built with it dies of SIGXFSZ with or without the library */
		if (UNDER_TSAN && lims[i].res == RLIMIT_FSIZE && lims[i].v == 0) {
			printf("only linked, %-20s: SKIP under ThreadSanitizer\n", lims[i].what);
			continue;
		}
		int st = run_under(lims[i].res, lims[i].v, self);
		CHECK_EQ(st, 42);
		printf("only linked, %-20s: status %d%s\n", lims[i].what, st,
		       st == 128 + SIGXFSZ ? " (SIGXFSZ)" : "");
	}
	fsize_stream();
	fsize_log();
	fsize_log_exit(0);
	fsize_log_exit(1);
	nofile_as();
	T_END();
}
