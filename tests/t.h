/*
 * Tiny test harness shared by every program in tests/.
 *
 *   T_BEGIN(seconds)    arm an alarm: a hang kills the test (SIGALRM -> fail)
 *   CHECK(cond)         record a failure (and go on) when cond is false
 *   CHECK_EQ(a, b)      same, printing both values as long long
 *   CHECK_RC(expr, rc)  expr returns error number rc (0 = success)
 *   T_SKIP("why")       exit 77: the test cannot run here
 *   T_END()             exit 0 if no CHECK failed, else 1 (1 too if no CHECK was made)
 *   t_rerun_with_env()  this program again in a child per environment value
 *   CHECK_STATUS(trid, run, full, overrun)  the stream's three statuses (with <trace.h>)
 */
#ifndef POSIXTRACE_TEST_H
#define POSIXTRACE_TEST_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static int t_failures;
static int t_checks;

#define T_BEGIN(seconds) do { alarm(seconds); } while (0)

#define CHECK(cond) do { \
	t_checks++; \
	if (!(cond)) { \
		t_failures++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long t_a_ = (long long)(a), t_b_ = (long long)(b); \
	t_checks++; \
	if (t_a_ != t_b_) { \
		t_failures++; \
		fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, expected %s == %lld\n", \
		        __FILE__, __LINE__, #a, t_a_, #b, t_b_); \
	} \
} while (0)

#define CHECK_RC(expr, rc) do { \
	int t_rc_ = (expr), t_want_ = (rc); \
	t_checks++; \
	if (t_rc_ != t_want_) { \
		t_failures++; \
		fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", \
		        __FILE__, __LINE__, #expr, t_rc_, strerror(t_rc_), t_want_, \
		        strerror(t_want_)); \
	} \
} while (0)

/* A check that must hold for the rest of the test to make sense. */
#define REQUIRE(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
		exit(1); \
	} \
} while (0)

#define T_SKIP(why) do { printf("SKIP: %s\n", why); exit(77); } while (0)

/* Wait for child pid at most ms; its exit status (128+N if killed by
 * signal N), or -1 (then it is killed). */
static inline int t_wait_for(pid_t pid, int ms)
{
	int st;
	for (int i = 0; i < ms; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* The source directory into buf: the current one when it has
 * include/trace.h and docs/man (tests/run.sh runs tests there), else the
 * parent of the build directory (PT_BUILD_DIR, which the Makefile gives). */
#ifdef PT_BUILD_DIR
static inline void t_source_dir(char *buf, size_t cap)
{
	if (access("include/trace.h", R_OK) == 0 && access("docs/man", R_OK) == 0) {
		REQUIRE(getcwd(buf, cap) != NULL);
	} else {
		snprintf(buf, cap, "%s", PT_BUILD_DIR);
		char *slash = strrchr(buf, '/');
		REQUIRE(slash);
		*slash = 0;
	}
}
#endif

/* Run this program again, in a child, once with name=vals[i] in its
 * environment for each of the n values, one after the other; a child that
 * does not exit with 0 is a failed check. */
static inline void t_rerun_with_env(const char *argv0, const char *name,
                                    const char *const *vals, unsigned n)
{
	char self[4096] = { 0 };
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	for (unsigned i = 0; i < n; i++) {
		fflush(NULL);
		pid_t p = fork();
		REQUIRE(p >= 0);
		if (p == 0) {
			setenv(name, vals[i], 1);
			execl(self, argv0, (char *)NULL);
			_exit(127);
		}
		int st = 0;
		REQUIRE(waitpid(p, &st, 0) == p);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "%s=%s: the child ended with %s %d\n", name, vals[i],
			        WIFEXITED(st) ? "status" : "signal",
			        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			CHECK(0);
		}
	}
}

/* Helpers for trace tests (static inline: a test that does not use them
 * pays nothing).  The harness does not include <trace.h> itself. */
#ifdef POSIXTRACE_TRACE_H
/* One event without blocking; returns `unavailable` (0: *ev was filled). */
static inline int t_try(trace_id_t trid, struct posix_trace_event_info *ev, void *buf,
                        size_t cap, size_t *len)
{
	int unavailable = -1;
	CHECK_RC(posix_trace_trygetnext_event(trid, ev, buf, cap, len, &unavailable), 0);
	return unavailable;
}

/* The same with posix_trace_getnext_event() (a log: 1 at its end). */
static inline int t_get(trace_id_t trid, struct posix_trace_event_info *ev, void *buf,
                        size_t cap, size_t *len)
{
	int unavailable = -1;
	CHECK_RC(posix_trace_getnext_event(trid, ev, buf, cap, len, &unavailable), 0);
	return unavailable;
}

/* The stream's running, full and overrun status (reading resets overrun). */
static inline void t_status(trace_id_t trid, int *run, int *full, int *overrun)
{
	struct posix_trace_status_info si;
	memset(&si, 0x55, sizeof si);
	CHECK_RC(posix_trace_get_status(trid, &si), 0);
	*run = si.posix_stream_status;
	*full = si.posix_stream_full_status;
	*overrun = si.posix_stream_overrun_status;
}

/* t_status() and a check of each of the three (a macro: failures name the
 * caller's line) */
#define CHECK_STATUS(trid, run, full, overrun) do { \
	int t_run_, t_full_, t_ovr_; \
	t_status(trid, &t_run_, &t_full_, &t_ovr_); \
	CHECK_EQ(t_run_, run); \
	CHECK_EQ(t_full_, full); \
	CHECK_EQ(t_ovr_, overrun); \
} while (0)
#endif

/* A test that made no check tested nothing: it fails (a skip is T_SKIP). */
#define T_END() do { \
	if (t_failures) { \
		fprintf(stderr, "%d of %d checks failed\n", t_failures, t_checks); \
		exit(1); \
	} \
	if (t_checks == 0) { \
		fprintf(stderr, "%s: no check was made (a test that checks nothing fails)\n", \
		        __FILE__); \
		exit(1); \
	} \
	exit(0); \
} while (0)

#endif
