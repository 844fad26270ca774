/*
 * view_test.h -- what the tests of `posixtrace view` share
 * (tests/cli_view*.c): the start (skipped when the command was built
 * without libmicrohttpd, or, for the browser tests, without chromium; a
 * scratch directory; the index cache kept in it) and the event count
 * `posixtrace info` gives, the witness of the page's counts.
 * Include after <trace.h>, "t.h" and "cli_util.h".
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

#endif
