/*
 * cli_view_browser.c -- the page of `posixtrace view` in a real browser:
 * Debian's chromium, headless, loads it from the server (its script then
 * asks the server for the trace) and the DOM is dumped once the page's
 * requests are answered (--virtual-time-budget).  Two traces:
 *   - a recording of examples/app: the page's event count equals the one
 *     `posixtrace info` prints, and so does the sum of what its first
 *     view draws; the URL's #at= jumps to the time `posixtrace show`
 *     gives for the first "request" event, and the details panel shows
 *     that event (its type, payload text and source line);
 *   - a generated log of 300 004 events (tests/biglog.h): the overview is
 *     drawn from counts (density) and they sum to info's count; #at=
 *     the time of event 123457 shows it (its type name and its payload,
 *     the number itself in hex).
 * No script error in any of them (the page records them in data-errors).
 * Screenshots of each go to build/view-*.png for a person to look at.
 * Skipped without chromium.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "biglog.h"
#include "view_http.h"
#include "view_test.h"

static const char *chromium;

/* The page at url#hash, dumped (or a screenshot to png): chromium's stdout. */
static char *browse(const char *url, const char *hash, const char *png)
{
	char cmd[2000], *out = NULL, *err = NULL;
	if (png)
		unlink(png);
	snprintf(cmd, sizeof cmd, "HOME='%s' timeout 90 '%s' --headless --no-sandbox --disable-gpu "
	         "--virtual-time-budget=20000 --window-size=1400,800 %s%s%s '%s%s'", cli_dir,
	         chromium, png ? "--screenshot='" : "--dump-dom", png ? png : "", png ? "'" : "",
	         url, hash);
	int rc = cli_run((char *const[]){ "/bin/sh", "-c", cmd, NULL }, &out, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "chromium: %s\n", err ? err : "");
	if (png) {
		char *p = cli_slurp(png);
		CHECK(p && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0);
		free(p);
	}
	free(err);
	return out;
}

static long long attr(const char *dom, const char *name)
{
	char key[64];
	snprintf(key, sizeof key, " %s=\"", name);
	const char *p = dom ? strstr(dom, key) : NULL;
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static void no_errors(const char *dom)
{
	CHECK(cli_contains(dom, "data-errors=\"\""));
	CHECK(cli_contains(dom, "data-state=\"ready\""));
	if (!cli_contains(dom, "data-errors=\"\"") || !cli_contains(dom, "data-state=\"ready\""))
		fprintf(stderr, "page: %.1500s\n", dom ? dom : "(none)");
}

int main(void)
{
	struct view_srv s;
	char hash[64];

	T_BEGIN(400);
	view_test_begin(&chromium);
	const char *o = cli_path("view.out"), *er = cli_path("view.err");

	/* 1: a recording of examples/app */
	const char *log = cli_path("app.ptlog");
	REQUIRE(cli_record_app(log, "0") == 0);
	long long n = view_info_events(log);
	CHECK(n > 50);
	char *show = NULL;
	CHECK_EQ(cli_run(CLI("show", (char *)log, "-e", "request"), &show, NULL), 0);
	double t = -1;
	CHECK(show && sscanf(show, " %lf", &t) == 1 && t > 0);
	char text[64] = "";
	const char *q = show ? strchr(show, '"') : NULL;
	CHECK(q && sscanf(q + 1, "%63[^\"]", text) == 1);
	free(show);
	REQUIRE(view_start(&s, CLI("view", (char *)log), o, er, 60) == 0);
	char *dom = browse(s.url, "", NULL);
	no_errors(dom);
	CHECK_EQ(attr(dom, "data-events"), n);
	CHECK_EQ(attr(dom, "data-drawn"), n);
	free(dom);
	free(browse(s.url, "", PT_BUILD_DIR "/view-app.png"));
	snprintf(hash, sizeof hash, "#at=%.0f", t * 1e9);
	dom = browse(s.url, hash, NULL);
	no_errors(dom);
	CHECK(cli_contains(dom, "data-selected=\"ok\""));
	const char *d = dom ? strstr(dom, "id=\"detail\"") : NULL;
	CHECK(d && cli_contains(d, "data-type=\"request\""));
	CHECK(cli_contains(d, text));           /* the payload, as text */
	CHECK(cli_contains(d, "(app.c:"));      /* symbolized: its source line */
	if (!d || !cli_contains(d, text))
		fprintf(stderr, "want %s in: %.800s\n", text, d ? d : "(no detail)");
	free(dom);
	free(browse(s.url, hash, PT_BUILD_DIR "/view-app-event.png"));
	CHECK_EQ(view_stop(&s), 0);

	/* 2: 300 000 generated events */
	const char *big = cli_path("big.ptlog");
	REQUIRE(biglog_write(big, 300000, 1) == 0);
	n = view_info_events(big);
	CHECK_EQ(n, 300000 + 2 * (long long)biglog_gaps(300000));
	REQUIRE(view_start(&s, CLI("view", (char *)big), o, er, 60) == 0);
	dom = browse(s.url, "", NULL);
	no_errors(dom);
	CHECK(cli_contains(dom, "data-mode=\"density\""));
	CHECK_EQ(attr(dom, "data-events"), n);
	CHECK_EQ(attr(dom, "data-drawn"), n);
	free(dom);
	free(browse(s.url, "", PT_BUILD_DIR "/view-big.png"));
	uint64_t i = 123457;
	snprintf(hash, sizeof hash, "#at=%llu", (unsigned long long)(i * 200));
	dom = browse(s.url, hash, NULL);
	no_errors(dom);
	CHECK(cli_contains(dom, "data-mode=\"events\""));
	d = dom ? strstr(dom, "id=\"detail\"") : NULL;
	static const char *const names[] = { "alpha", "beta", "gamma", "delta",
	                                     "epsilon", "zeta", "eta", "theta" };
	char want[64];
	snprintf(want, sizeof want, "data-type=\"%s\"", names[biglog_id(i) - 17]);
	CHECK(d && cli_contains(d, want));
	CHECK(cli_contains(d, "41 e2 01 00 00 00 00 00"));
	if (!d || !cli_contains(d, want))
		fprintf(stderr, "want %s in: %.800s\n", want, d ? d : "(no detail)");
	free(dom);
	free(browse(s.url, hash, PT_BUILD_DIR "/view-big-event.png"));
	CHECK_EQ(view_stop(&s), 0);
	T_END();
}
