/*
 * cli_spans_html.c -- spans in the page of `export --format html`, looked
 * at in Debian's chromium (headless, driven over the DevTools protocol,
 * tests/cdp.h), against an independent witness: this program, run as
 * `cli_spans_html witness FILE` under `posixtrace record`, makes spans
 * and writes what it made to FILE, each duration timed with
 * CLOCK_MONOTONIC (the midpoint of two clock reads around each event):
 *
 *   req    20 on the main thread, each with one "sub" nested in it
 *   job    15 on each of 2 other threads
 *   hop    10 keyed: begun on the main thread, ended on a third thread
 *   open   1 begun and never ended (incomplete)
 *
 * In the page, per span name: the bars drawn in the timeline (<rect
 * class="sp">, each of a width above 0) are as many as the program made,
 * each "sub" bar lies within a "req" bar of the same lane, above it,
 * the "job" bars are on 2 lanes; the histogram's bins add up to the
 * program's count and the longest span the program timed is in a bin
 * that holds one; the p99-over-time points add up to the count and their
 * largest p99 is the program's longest span (within 1% or 2 us: each
 * time bucket holds fewer than 100 spans, so its p99 is its longest);
 * "open" is counted incomplete and has no bar.  No script exception.
 * Screenshots go to build/spans-html.png (the timeline) and
 * build/spans-html-plots.png (the histograms and p99 plots).  Skipped without chromium.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "cdp.h"
#include "span_witness.h"

static void sleep_us(unsigned us)
{
	sleep_ns((uint64_t)us * 1000);
}

/* ------------------------------------------------ the witness */
#define NREQ 20
#define NJOB 15
#define NHOP 10
enum { S_REQ, S_SUB, S_JOB, S_HOP, S_N };
static const char *const sname[S_N] = { "req", "sub", "job", "hop" };
static uint64_t wmax[S_N];
static unsigned wcount[S_N];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int hop_req[2], hop_ack[2];

static void note(int s, uint64_t d)
{
	pthread_mutex_lock(&mu);
	wcount[s]++;
	wmax[s] = d > wmax[s] ? d : wmax[s];
	pthread_mutex_unlock(&mu);
}

static void *jobs(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	trace_event_id_t b = tid_of("job/begin"), e = tid_of("job/end");
	for (unsigned i = 0; i < NJOB; i++) {
		uint64_t t0 = ev(b, NULL, 0);
		sleep_us(200 + 137 * ((i * 7 + k * 3) % 15));
		note(S_JOB, ev(e, NULL, 0) - t0);
		sleep_us(300);
	}
	return NULL;
}

static void *hop_end(void *arg)
{
	(void)arg;
	trace_event_id_t e = tid_of("hop/async-end");
	for (unsigned i = 0; i < NHOP; i++) {
		uint64_t key;
		REQUIRE(read(hop_req[0], &key, sizeof key) == sizeof key);
		sleep_us(400 + 250 * i);
		uint64_t t1 = ev(e, &key, sizeof key);
		REQUIRE(write(hop_ack[1], &t1, sizeof t1) == sizeof t1);
	}
	return NULL;
}

static int witness(const char *out)
{
	trace_event_id_t rb = tid_of("req/begin"), re = tid_of("req/end");
	trace_event_id_t sb = tid_of("sub/begin"), se = tid_of("sub/end");
	trace_event_id_t hb = tid_of("hop/async-begin");
	REQUIRE(pipe(hop_req) == 0 && pipe(hop_ack) == 0);
	pthread_t t[3];
	REQUIRE(pthread_create(&t[0], NULL, jobs, (void *)1) == 0);
	REQUIRE(pthread_create(&t[1], NULL, jobs, (void *)2) == 0);
	REQUIRE(pthread_create(&t[2], NULL, hop_end, NULL) == 0);
	for (unsigned i = 0; i < NREQ; i++) {
		uint64_t a = ev(rb, NULL, 0);
		sleep_us(100 + 50 * (i % 5));
		uint64_t b = ev(sb, NULL, 0);
		sleep_us(300 + 211 * (i % 7));
		note(S_SUB, ev(se, NULL, 0) - b);
		sleep_us(100);
		note(S_REQ, ev(re, NULL, 0) - a);
		if (i < NHOP) {
			uint64_t key = 100 + i, t1;
			uint64_t h = ev(hb, &key, sizeof key);
			REQUIRE(write(hop_req[1], &key, sizeof key) == sizeof key);
			REQUIRE(read(hop_ack[0], &t1, sizeof t1) == sizeof t1);
			note(S_HOP, t1 - h);
		}
	}
	posix_trace_event(tid_of("open/begin"), NULL, 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	FILE *f = fopen(out, "w");
	REQUIRE(f);
	for (int s = 0; s < S_N; s++)
		fprintf(f, "%s %u %" PRIu64 "\n", sname[s], wcount[s], wmax[s]);
	REQUIRE(fclose(f) == 0);
	return 0;
}

/* ------------------------------------------------ the checks */
static double tol(double want)
{
	return 0.01 * want > 2000 ? 0.01 * want : 2000;
}

static int near(double got, double want)
{
	return fabs(got - want) <= tol(want);
}

static double num(struct cdp *c, const char *fmt, const char *name)
{
	char expr[1200];
	snprintf(expr, sizeof expr, fmt, name, name, name);
	return cdp_eval_num(c, expr);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "witness"))
		return witness(argv[2]);
	T_BEGIN(300);
	const char *chromium = cli_which("chromium");
	if (!chromium)
		chromium = cli_which("chromium-browser");
	if (!chromium)
		T_SKIP("chromium is not installed (Debian: chromium)");
	cli_setup();
	char self[512] = "";
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	const char *log = cli_path("spans.ptlog"), *wf = cli_path("spans.txt");
	const char *page = cli_path("spans.html");
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--", self, "witness", (char *)wf), NULL,
	                 NULL), 0);
	CHECK_EQ(cli_run(CLI("export", "-f", "html", (char *)log, "-o", (char *)page), NULL, NULL),
	         0);
	char *w = cli_slurp(wf);
	REQUIRE(w);
	unsigned count[S_N] = { 0 };
	unsigned long long maxd[S_N] = { 0 };
	for (int s = 0, off = 0, k; s < S_N; s++, off += k) {
		char nm[16];
		REQUIRE(sscanf(w + off, "%15s %u %llu%n", nm, &count[s], &maxd[s], &k) == 3);
		REQUIRE(!strcmp(nm, sname[s]));
	}
	free(w);
	CHECK_EQ(count[S_REQ], NREQ);
	CHECK_EQ(count[S_JOB], 2 * NJOB);

	struct cdp c;
	char url[600], params[700];
	REQUIRE(cdp_start(&c, chromium, cli_path("profile")) == 0);
	REQUIRE(cdp_page(&c) == 0);
	snprintf(url, sizeof url, "file://%s", page);
	snprintf(params, sizeof params, "{\"url\":\"%s\"}", url);
	free(cdp_call(&c, 1, "Page.navigate", params));
	CHECK_EQ(cdp_wait(&c, "document.readyState==='complete'&&!!document.getElementById('plot')",
	                  30000), 0);
	for (int s = 0; s < S_N; s++) {
		const char *n = sname[s];
		/* the bars: as many as the program made, each drawn (a width) */
		double bars = num(&c, "document.querySelectorAll('#plot rect.sp[data-s=\"%s\"]').length", n);
		double wide = num(&c, "[].filter.call(document.querySelectorAll('#plot rect.sp[data-s=\"%s\"]'),"
		                      "function(r){return r.getBBox().width>0&&getComputedStyle(r).display!=='none';}).length", n);
		double attr = num(&c, "+document.querySelector('.span[data-name=\"%s\"]').dataset.count", n);
		double incomplete = num(&c, "+document.querySelector('.span[data-name=\"%s\"]').dataset.incomplete", n);
		/* the histogram: its bins add up; the longest is in a bin that holds one */
		double hsum = num(&c, "[].reduce.call(document.querySelectorAll('.span[data-name=\"%s\"] rect.hb'),"
		                      "function(a,r){return a+ +r.dataset.n;},0)", n);
		char expr[800];
		snprintf(expr, sizeof expr, "[].filter.call(document.querySelectorAll('.span[data-name=\"%s\"] rect.hb'),"
		         "function(r){return +r.dataset.n>0&&r.getBoundingClientRect().height>0&&"
		         "+r.dataset.lo<=%.0f&&+r.dataset.hi>%.0f;}).length", n,
		         (double)maxd[s] + tol((double)maxd[s]), (double)maxd[s] - tol((double)maxd[s]));
		double hmax = cdp_eval_num(&c, expr);
		/* p99 over time */
		double tsum = num(&c, "[].reduce.call(document.querySelectorAll('.span[data-name=\"%s\"] circle.tp'),"
		                      "function(a,r){return a+ +r.dataset.n;},0)", n);
		double tmax = num(&c, "[].reduce.call(document.querySelectorAll('.span[data-name=\"%s\"] circle.tp'),"
		                      "function(a,r){return Math.max(a,+r.dataset.p99);},0)", n);
		CHECK_EQ((long long)bars, (long long)count[s]);
		CHECK_EQ((long long)wide, (long long)count[s]);
		CHECK_EQ((long long)attr, (long long)count[s]);
		CHECK_EQ((long long)incomplete, 0);
		CHECK_EQ((long long)hsum, (long long)count[s]);
		CHECK(hmax >= 1);
		CHECK_EQ((long long)tsum, (long long)count[s]);
		CHECK(near(tmax, (double)maxd[s]));
		if (bars != count[s] || hsum != count[s] || tsum != count[s] || hmax < 1 ||
		    !near(tmax, (double)maxd[s]))
			fprintf(stderr, "%s: the program made %u (longest %llu ns); the page: %g bars "
			        "(%g drawn), histogram %g (%g bins hold the longest), over time %g, "
			        "largest p99 %g\n", n, count[s], maxd[s], bars, wide, hsum, hmax, tsum, tmax);
	}
	/* nesting: each sub bar within a req bar of its lane, above it */
	double nested = cdp_eval_num(&c, "(function(){var r=[].slice.call(document.querySelectorAll("
		"'#plot rect.sp[data-s=\"req\"]')).map(function(e){return e.getBBox();}),n=0;"
		"document.querySelectorAll('#plot rect.sp[data-s=\"sub\"]').forEach(function(e){var b=e.getBBox();"
		"if(r.some(function(a){return a.x<=b.x&&b.x+b.width<=a.x+a.width&&b.y<a.y&&a.y-b.y<22;}))n++;});"
		"return n;})()");
	CHECK_EQ((long long)nested, NREQ);
	double lanes = cdp_eval_num(&c, "(function(){var y={};document.querySelectorAll("
		"'#plot rect.sp[data-s=\"job\"]').forEach(function(e){y[Math.floor(e.getBBox().y/22)]=1;});"
		"return Object.keys(y).length;})()");
	CHECK_EQ((long long)lanes, 2);
	/* the span never ended: incomplete, no bar */
	CHECK_EQ((long long)num(&c, "+document.querySelector('.span[data-name=\"%s\"]').dataset.incomplete",
	                        "open"), 1);
	CHECK_EQ((long long)num(&c, "document.querySelectorAll('#plot rect.sp[data-s=\"%s\"]').length",
	                        "open"), 0);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/spans-html.png"), 0);
	free(cdp_eval(&c, "document.querySelector('.span').scrollIntoView(),1"));
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/spans-html-plots.png"), 0);
	CHECK_EQ(c.exceptions, 0);
	if (c.exceptions)
		fprintf(stderr, "script exception: %s\n", c.exception);
	cdp_stop(&c);
	T_END();
}
