/*
 * view_test.h -- what the tests of `posixtrace view` share
 * (tests/cli_view*.c): the start (skipped when the command was built
 * without libmicrohttpd, or, for the browser tests, without chromium; a
 * scratch directory; the index cache kept in it), the event count
 * `posixtrace info` gives, the witness of the page's counts, and a log
 * of known spans.
 * Include after <trace.h>, "t.h", "cli_util.h" and "biglog.h".
 */
#ifndef POSIXTRACE_TEST_VIEW_TEST_H
#define POSIXTRACE_TEST_VIEW_TEST_H

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
	char *e = NULL;
	if (cli_run(CLI("view", (char *)cli_path("none")), NULL, &e) == 1 &&
	    cli_contains(e, "without libmicrohttpd"))
		T_SKIP("posixtrace was built without libmicrohttpd");
	free(e);
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

/* A log of spans (the NAME/begin, NAME/end convention): every 10 us,
 * thread 1 of pid 5000 a "req" [100, 900] holding a "lock" [200, 700],
 * thread 2 a "req" [300, 5300] (ns after the period's start). */
#define SPAN_K 100u
#define SPAN_T0 (BIGLOG_T0 + 1000000u)
static inline void spans_log(const char *path)
{
	struct pt_attr_img a;
	struct pt_logw w;
	struct posix_trace_status_info st;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	REQUIRE(fd >= 0);
	memset(&a, 0, sizeof a);
	strcpy(a.name, "spans");
	a.res_nsec = 1;
	a.stream_size = 1 << 20, a.max_data = 256;
	a.stream_policy = POSIX_TRACE_LOOP, a.log_policy = POSIX_TRACE_APPEND, a.has_log = 1;
	REQUIRE(pt_logw_init(&w, fd, &a, POSIX_TRACE_APPEND, 0) == 0);
	static const char *const names[] = { "req/begin", "req/end", "lock/begin", "lock/end" };
	for (unsigned k = 0; k < 4; k++)
		REQUIRE(pt_logw_name(&w, 17 + k, names[k]) == 0);
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
	memset(&st, 0, sizeof st);
	st.posix_stream_status = POSIX_TRACE_SUSPENDED;
	REQUIRE(pt_logw_finish(&w, &st) == 0);
	pt_logw_free(&w);
	REQUIRE(close(fd) == 0);
}

#endif
