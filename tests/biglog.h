/*
 * biglog.h -- a trace log of any number of events, written straight with
 * the log writer (src/log), for the tests and benchmarks of the commands
 * that read logs (tests/cli_stream.c, bench/reader.c); and a command run
 * with its peak RSS.
 *
 * Event i: 2 processes x 4 threads, 8 named user types (ids 17..24) and
 * the unnamed one, 8 bytes of payload (i itself), an address (one of 16
 * call sites, or of as many as biglog_write_sites() is given: biglog_addr),
 * 200 ns apart; every 100 000th event a gap (OVERFLOW, then RESUME with the
 * stream's count of lost events, 7 more each time) stamped by the reader
 * (pid 0).  The counts are known in closed form (biglog_count).
 */
#ifndef POSIXTRACE_TEST_BIGLOG_H
#define POSIXTRACE_TEST_BIGLOG_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <trace.h>
#include "../src/log/log.h"

#define BIGLOG_T0   1764255600000000000ull
#define BIGLOG_GAP  100000u   /* a gap every this many events */
#define BIGLOG_LOST 7u        /* events each gap lost */

static inline unsigned biglog_id(uint64_t i)
{
	unsigned k = (unsigned)(i % 9);
	return k == 8 ? POSIX_TRACE_UNNAMED_USEREVENT : 17 + k;
}

static inline int32_t biglog_pid(uint64_t i) { return 4000 + (int32_t)(i / 4 % 2); }
static inline uint64_t biglog_thread(uint64_t i) { return 0x7f0000001000ull + i / 8 % 4 * 0x1000; }

/* The number of events of type id among n (gaps not counted). */
static inline uint64_t biglog_count(uint64_t n, unsigned id)
{
	unsigned k = id == POSIX_TRACE_UNNAMED_USEREVENT ? 8 : id - 17;
	return n / 9 + (n % 9 > k);
}

static inline uint64_t biglog_gaps(uint64_t n)
{
	return n ? (n - 1) / BIGLOG_GAP : 0;
}

/* The address of event i: one of 16 call sites, whatever its type (the
 * default), or of sites: sites / 9 of them for each type, as a program
 * records a type from a few places of its own. */
static inline uint64_t biglog_addr(uint64_t i, uint64_t sites)
{
	uint64_t per = sites / 9 ? sites / 9 : 1;
	return sites == 16 ? 0x401000 + (i % 16) * 0x10
	                   : 0x401000 + (i % 9 + 9 * (i / 9 % per)) * 0x10;
}

/* Opens path (created or truncated) and begins a log in it with w: the
 * attributes of a 1 MiB LOOP stream called name made at t0 (ns), an
 * APPEND log, then user types 17.. named names[0..n-1].  0 (*fd open,
 * to end with biglog_end) or an errno (nothing left open). */
static inline int biglog_open(struct pt_logw *w, int *fd, const char *path, const char *name,
                              uint64_t t0, const char *const *names, unsigned n)
{
	struct pt_attr_img a;
	int rc;

	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (*fd < 0)
		return errno;
	memset(&a, 0, sizeof a);
	snprintf(a.name, sizeof a.name, "%s", name);
	strcpy(a.version, "posixtrace 0.1.0");
	a.create_sec = (int64_t)(t0 / 1000000000u);
	a.res_nsec = 1;
	a.stream_size = 1 << 20, a.max_data = 256, a.log_size = 0;
	a.stream_policy = POSIX_TRACE_LOOP, a.log_policy = POSIX_TRACE_APPEND;
	a.inherit = POSIX_TRACE_CLOSE_FOR_CHILD, a.has_log = 1;
	if ((rc = pt_logw_init(w, *fd, &a, POSIX_TRACE_APPEND, 0)) != 0) {
		close(*fd);
		return rc;
	}
	for (unsigned k = 0; k < n && !rc; k++)
		rc = pt_logw_name(w, 17 + k, names[k]);
	if (rc) {
		pt_logw_free(w);
		close(*fd);
	}
	return rc;
}

/* Ends what biglog_open() began, after rc (an error so far, or 0): when
 * finish, the END block (SUSPENDED; lost events told, overrun if any),
 * else only a sync; then w freed and fd closed.  rc, or the first error. */
static inline int biglog_end(struct pt_logw *w, int fd, int rc, int finish, uint64_t lost)
{
	if (!rc && finish) {
		struct posix_trace_status_info st;
		memset(&st, 0, sizeof st);
		st.posix_stream_status = POSIX_TRACE_SUSPENDED;
		st.posix_stream_overrun_status = lost ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
		w->stream_lost = lost;
		rc = pt_logw_finish(w, &st);
	} else if (!rc) {
		rc = pt_logw_sync(w);
	}
	pt_logw_free(w);
	if (close(fd) && !rc)
		rc = errno;
	return rc;
}

/* n user events (plus biglog_gaps(n) OVERFLOW/RESUME pairs) to path,
 * finished (END block) unless cut, event i recorded at biglog_addr(i,
 * sites); 0 or an errno. */
static inline int biglog_write_sites(const char *path, uint64_t n, int finish, uint64_t sites)
{
	struct pt_logw w;
	static const char *const names[] = { "alpha", "beta", "gamma", "delta",
	                                     "epsilon", "zeta", "eta", "theta" };
	uint64_t lost = 0;
	int fd, rc = biglog_open(&w, &fd, path, "biglog", BIGLOG_T0, names, 8);

	if (rc)
		return rc;
	for (uint64_t i = 0; i < n && !rc; i++) {
		uint64_t ts = BIGLOG_T0 + i * 200;
		if (i && i % BIGLOG_GAP == 0) {
			lost += BIGLOG_LOST;
			rc = pt_logw_event(&w, ts - 100, 0, 0, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0);
			if (!rc)
				rc = pt_logw_event_lost(&w, ts - 50, 0, 0, 0, POSIX_TRACE_RESUME, lost);
		}
		if (!rc)
			rc = pt_logw_event(&w, ts, biglog_pid(i), biglog_thread(i),
			                   biglog_addr(i, sites), biglog_id(i), 0, &i, sizeof i);
	}
	return biglog_end(&w, fd, rc, finish, lost);
}

/* The same, 16 call sites. */
static inline int biglog_write(const char *path, uint64_t n, int finish)
{
	return biglog_write_sites(path, n, finish, 16);
}

/* Run argv with stdout to out (a path, or NULL for /dev/null), stderr to
 * err (or /dev/null); its exit status, or -1; its peak RSS in KiB and
 * its time in seconds. */
static inline int biglog_run(char *const argv[], const char *out, const char *err,
                             long *maxrss_kb, double *secs)
{
	struct timespec a, b;
	struct rusage ru;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (maxrss_kb)
		*maxrss_kb = ru.ru_maxrss;
	if (secs)
		*secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
