/*
 * view_test.h -- what the tests of `posixtrace view` share
 * (tests/cli_view*.c): the start (skipped when the command was built
 * without libmicrohttpd, or, for the browser tests, without chromium; a
 * scratch directory; the index cache kept in it), the event count
 * `posixtrace info` gives, the witness of the page's counts, and a log
 * of known spans; for the tests that drive a browser (cdp.h), a view
 * opened on a window and the page's own error report.
 * Include after <trace.h>, "t.h", "cli_util.h" and "biglog.h".
 */
#ifndef POSIXTRACE_TEST_VIEW_TEST_H
#define POSIXTRACE_TEST_VIEW_TEST_H

#include "view_http.h"
#include "cdp.h"

/* The page of s (through about:blank, so that it loads anew) on the
 * window [a, b] ns, waited for until ready and answered (and more, a
 * script condition "&&..." or ""), then for a later answer if the page
 * asked twice. */
static inline void vt_open_view(struct cdp *c, const struct view_srv *s, uint64_t a, uint64_t b,
                                const char *more)
{
	char params[400], ready[600];
	free(cdp_call(c, 1, "Page.navigate", "{\"url\":\"about:blank\"}"));
	CHECK_EQ(cdp_wait(c, "location.href==='about:blank'", 10000), 0);
	snprintf(params, sizeof params, "{\"url\":\"%s#view=%llu,%llu\"}", s->url,
	         (unsigned long long)a, (unsigned long long)b);
	free(cdp_call(c, 1, "Page.navigate", params));
	snprintf(ready, sizeof ready, "%s%s",
	         "document.body&&document.body.getAttribute('data-state')==='ready'&&"
	         "document.getElementById('status').textContent.indexOf('answered')>=0", more);
	CHECK_EQ(cdp_wait(c, ready, 30000), 0);
	usleep(300000); /* (a later answer, if the page asked twice) */
	CHECK_EQ(cdp_wait(c, "document.getElementById('status').textContent.indexOf('answered')>=0", 20000), 0);
}

/* No script error on the page (it keeps them in data-errors) and no
 * exception seen by the browser. */
static inline void vt_no_errors(struct cdp *c)
{
	char *errs = cdp_eval(c, "document.body.getAttribute('data-errors')");
	CHECK(errs && strcmp(errs, "\"\"") == 0);
	free(errs);
	CHECK_EQ(c->exceptions, 0);
	if (c->exceptions)
		fprintf(stderr, "script exception: %s\n", c->exception);
}

/* chromium: NULL for a test without a browser; else it gets the path
 * of the browser, or the test is skipped. */
static inline void view_test_begin(const char **chromium)
{
	if (chromium) {
		*chromium = cli_which("chromium");
		if (!*chromium)
			*chromium = cli_which("chromium-browser");
		if (!*chromium)
			T_SKIP("chromium is not installed (Debian: chromium)");
		if (!cli_which("timeout"))
			T_SKIP("no timeout(1) to bound the browser");
	}
	cli_setup();
	cli_need_view();
	static char cache[300];
	snprintf(cache, sizeof cache, "%s/cache", cli_dir);
	setenv("XDG_CACHE_HOME", cache, 1);
}

static inline long long view_info_events(const char *log)
{
	char *out = NULL;
	long long n = -1;
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	const char *p = out ? strstr(out, "\nevents ") : NULL;
	if (p)
		n = strtoll(p + 8, NULL, 10);
	free(out);
	return n;
}

/* Begins a log in path (created or truncated) with w: a stream called
 * name under policy (POSIX_TRACE_LOOP or POSIX_TRACE_FLUSH), an APPEND
 * log, user types 17.. named names[0..n-1].  Its fd; the test stops on
 * an error. */
static inline int vt_log_open(struct pt_logw *w, const char *path, const char *name, int policy,
                              const char *const *names, unsigned n)
{
	struct pt_attr_img a;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	REQUIRE(fd >= 0);
	memset(&a, 0, sizeof a);
	snprintf(a.name, sizeof a.name, "%s", name);
	a.res_nsec = 1;
	a.stream_size = 1 << 20, a.max_data = 256;
	a.stream_policy = policy, a.log_policy = POSIX_TRACE_APPEND, a.has_log = 1;
	REQUIRE(pt_logw_init(w, fd, &a, POSIX_TRACE_APPEND, 0) == 0);
	for (unsigned k = 0; k < n; k++)
		REQUIRE(pt_logw_name(w, 17 + k, names[k]) == 0);
	return fd;
}

/* Ends what vt_log_open() began: the END block (SUSPENDED), w freed, fd
 * closed; the test stops on an error. */
static inline void vt_log_end(struct pt_logw *w, int fd)
{
	struct posix_trace_status_info st;

	memset(&st, 0, sizeof st);
	st.posix_stream_status = POSIX_TRACE_SUSPENDED;
	REQUIRE(pt_logw_finish(w, &st) == 0);
	pt_logw_free(w);
	REQUIRE(close(fd) == 0);
}

/* A log of spans (the NAME/begin, NAME/end convention): every 10 us,
 * thread 1 of pid 5000 a "req" [100, 900] holding a "lock" [200, 700],
 * thread 2 a "req" [300, 5300] (ns after the period's start). */
#define SPAN_K 100u
#define SPAN_T0 (BIGLOG_T0 + 1000000u)
static inline void spans_log(const char *path)
{
	static const char *const names[] = { "req/begin", "req/end", "lock/begin", "lock/end" };
	struct pt_logw w;
	int fd = vt_log_open(&w, path, "spans", POSIX_TRACE_LOOP, names, 4);

	for (uint64_t k = 0; k < SPAN_K; k++) {
		uint64_t b = SPAN_T0 + k * 10000;
		uint64_t t1 = 0x7f0000001000ull, t2 = 0x7f0000002000ull;
		REQUIRE(pt_logw_event(&w, b + 100, 5000, t1, 0x401000, 17, 0, NULL, 0) == 0);
		REQUIRE(pt_logw_event(&w, b + 200, 5000, t1, 0x401000, 19, 0, NULL, 0) == 0);
		REQUIRE(pt_logw_event(&w, b + 300, 5000, t2, 0x401000, 17, 0, NULL, 0) == 0);
		REQUIRE(pt_logw_event(&w, b + 700, 5000, t1, 0x401000, 20, 0, NULL, 0) == 0);
		REQUIRE(pt_logw_event(&w, b + 900, 5000, t1, 0x401000, 18, 0, NULL, 0) == 0);
		REQUIRE(pt_logw_event(&w, b + 5300, 5000, t2, 0x401000, 18, 0, NULL, 0) == 0);
	}
	vt_log_end(&w, fd);
}

/* A job queue's log, for the flame chart (tests/cli_view_flame.c): over
 * 200 ms, pid 6000's three workers (threads JOB_TID + 0x1000 * w) each
 * run "job" spans back to back (1 ms: [k, k + 0.9 ms]) but for one slow
 * job each, JOB_SLOW_* (worker 2's is the slowest, 33.96 ms); inside
 * every job, every 50 us, a "db" span of 30 us holding a "lock" span of
 * 10 us (depths 0, 1, 2).  Thread JOB_TID + 0x4000 (the dispatcher) hands
 * work over every 2 ms: a keyed "handoff" span (async-begin there, its
 * 8-byte key k, async-end 300 us later on worker k % 3).  One gap
 * (OVERFLOW at 50 ms, RESUME 100 us later).  Times in ns after the
 * first event (at JOB_T0). */
#define JOB_T0 (BIGLOG_T0 + 5000000u)
#define JOB_TID 0x7f0000010000ull
#define JOB_END 200000000ull
static const uint64_t job_slow[3][2] = { { 104000000, 126000000 }, { 110000000, 128000000 },
                                         { 100000000, 133960000 } };
struct job_ev { uint64_t ts, tid; uint16_t id; uint64_t key; };
static int job_ev_cmp(const void *a, const void *b)
{
	const struct job_ev *x = a, *y = b;
	return (x->ts > y->ts) - (x->ts < y->ts);
}
static inline void jobs_log(const char *path)
{
	struct pt_logw w;
	size_t cap = 1 << 20, n = 0;
	struct job_ev *ev = malloc(cap * sizeof *ev);

	REQUIRE(ev);
#define JOB_ADD(t, th, i, k) do { REQUIRE(n < cap); ev[n++] = (struct job_ev){ (t), (th), (i), (k) }; } while (0)
	/* ids: 17 job/begin, 18 job/end, 19 db/begin, 20 db/end, 21 lock/begin,
	 * 22 lock/end, 23 handoff/async-begin, 24 handoff/async-end */
	for (unsigned wk = 0; wk < 3; wk++) {
		uint64_t tid = JOB_TID + 0x1000ull * wk;
		for (uint64_t t = 0; t + 1000000 <= JOB_END;) {
			uint64_t b = t, e = t + 900000;
			if (t + 1000000 > job_slow[wk][0] && t < job_slow[wk][1]) {
				b = job_slow[wk][0], e = job_slow[wk][1];
				t = (e / 1000000 + 1) * 1000000;
			} else {
				t += 1000000;
			}
			JOB_ADD(b, tid, 17, 0);
			for (uint64_t d = b + 10000; d + 40000 <= e; d += 50000) {
				JOB_ADD(d, tid, 19, 0);
				JOB_ADD(d + 5000, tid, 21, 0);
				JOB_ADD(d + 15000, tid, 22, 0);
				JOB_ADD(d + 30000, tid, 20, 0);
			}
			JOB_ADD(e, tid, 18, 0);
		}
	}
	for (uint64_t k = 0; k * 2000000 + 1300000 <= JOB_END; k++) {
		uint64_t t = k * 2000000 + 1000000;
		JOB_ADD(t, JOB_TID + 0x4000, 23, k);
		JOB_ADD(t + 300000, JOB_TID + 0x1000ull * (k % 3), 24, k);
	}
	qsort(ev, n, sizeof *ev, job_ev_cmp);
	static const char *const names[] = { "job/begin", "job/end", "db/begin", "db/end",
	                                     "lock/begin", "lock/end", "handoff/async-begin",
	                                     "handoff/async-end" };
	int fd = vt_log_open(&w, path, "jobs", POSIX_TRACE_LOOP, names, 8);
	int gap = 0;
	for (size_t i = 0; i < n; i++) {
		if (!gap && ev[i].ts >= 50000000) {
			REQUIRE(pt_logw_event(&w, JOB_T0 + 50000000, 0, 0, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0) == 0);
			REQUIRE(pt_logw_event_lost(&w, JOB_T0 + 50100000, 0, 0, 0, POSIX_TRACE_RESUME, 7) == 0);
			gap = 1;
		}
		REQUIRE(pt_logw_event(&w, JOB_T0 + ev[i].ts, 6000, ev[i].tid, 0x401000, ev[i].id, 0,
		                      ev[i].id >= 23 ? &ev[i].key : NULL, ev[i].id >= 23 ? 8 : 0) == 0);
	}
#undef JOB_ADD
	free(ev);
	vt_log_end(&w, fd);
}

#endif
