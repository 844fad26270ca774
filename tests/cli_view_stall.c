/*
 * cli_view_stall.c -- `posixtrace view`: a thread's no-loss waits
 * (posixtrace_noloss_wait: stamped when the wait ended, its payload the
 * wait in ns) shaded on that thread's lane over [end - wait, end], and
 * the threads named in /meta as stats --json names them.
 *
 * A log written with the tests' helpers (pid 7000, threads "worker"
 * (kernel TID 7001), "second" (7002) and one with no identity in the log;
 * a "tick" every 20 us on each, but for the stalls):
 *   - worker waits 2 ms, [3, 5] ms: no tick of its in between, its wait
 *     event and its next tick at 5 ms; second waits 0.8 ms, [7.2, 8] ms,
 *     inside a "job" span [6, 9] ms of its own;
 *   - /meta: each lane's "thread" ("7000/7001"), "tid" (7001, or null for
 *     the thread the log does not name), "name", "pthread_t"; the waits
 *     as markers [lane, end, 8, ns], exactly two, each length read after
 *     a seek to its wait; the same through the filtered index (--name
 *     worker: one), in a log with no spans, and in a log of 5000 waits
 *     (more than the index reads by seeks: one more pass), each its own;
 *   - /event names the thread the same way;
 *   - in headless chromium (tests/cdp.h), at a [2, 10] ms window and over
 *     the whole trace: posixtraceView.drawn().waits has each wait on its
 *     thread's lane from its start to its end (pixels), the pixel in the
 *     middle of worker's wait is the stall's colour there and not on the
 *     other lanes at that time, and pointing there (the tooltip) and a
 *     real click there describe the wait (its thread, its length, its
 *     times); the lane labels name the threads
 *     "7000/7001 worker".
 * Screenshots: build/view-stall-{window,overview}.png.  The browser part
 * is skipped without chromium.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "biglog.h"
#include "view_http.h"
#include "view_test.h"
#include "cdp.h"
#include "../src/ext.h"

#define ST_T0 (BIGLOG_T0 + 7000000u)
#define ST_PID 7000
#define ST_END 10000000ull
static const uint64_t st_thr[3] = { 0x7f0000020000ull, 0x7f0000021000ull, 0x7f0000022000ull };
/* per thread: the wait's end and length (0: none) */
static const uint64_t st_wait[3][2] = { { 5000000, 2000000 }, { 8000000, 800000 }, { 0, 0 } };

static void thread_entry(struct pt_logw *w, unsigned k, int32_t tid, const char *name)
{
	struct pt_ext_obj m;
	memset(&m, 0, sizeof m);
	m.kind = PT_EXT_OBJ_THREAD, m.pid = ST_PID, m.base = st_thr[k], m.lo = (uint64_t)tid;
	m.ts = ST_T0;
	snprintf(m.path, sizeof m.path, "%s", name);
	REQUIRE(pt_logw_obj(w, &m) == 0);
}

static void stall_log(const char *path, int with_job)
{
	static const char *const names[] = { "tick", "job/begin", "job/end" };
	struct pt_logw w;
	int fd = vt_log_open(&w, path, "stalls", POSIX_TRACE_FLUSH, names, 3);

	thread_entry(&w, 0, 7001, "worker");
	thread_entry(&w, 1, 7002, "second");
	for (uint64_t t = 0; t <= ST_END; t += 20000)
		for (unsigned k = 0; k < 3; k++) {
			uint64_t end = st_wait[k][0], len = st_wait[k][1];
			if (with_job && k == 1 && (t == 6000000 || t == 9000000))
				REQUIRE(pt_logw_event(&w, ST_T0 + t, ST_PID, st_thr[k], 0x401000,
				                      t == 6000000 ? 18 : 19, 0, NULL, 0) == 0);
			if (len && t > end - len && t < end)
				continue; /* held: nothing recorded */
			if (len && t == end)
				REQUIRE(pt_logw_event(&w, ST_T0 + t, ST_PID, st_thr[k], 0x401000,
				                      PT_EXT_NOLOSS_WAIT, 0, &len, sizeof len) == 0);
			REQUIRE(pt_logw_event(&w, ST_T0 + t, ST_PID, st_thr[k], 0x401000, 17, 0, &t,
			                      sizeof t) == 0);
		}
	vt_log_end(&w, fd);
}

/* One thread's 5000 waits: at k * 10 us + 5 us, 1000 + k ns long. */
#define MANY 5000u
static void many_log(const char *path)
{
	static const char *const names[] = { "tick" };
	struct pt_logw w;
	int fd = vt_log_open(&w, path, "many", POSIX_TRACE_FLUSH, names, 1);

	for (uint64_t k = 0; k < MANY; k++) {
		uint64_t t = k * 10000, len = 1000 + k;
		REQUIRE(pt_logw_event(&w, ST_T0 + t, ST_PID, st_thr[0], 0x401000, 17, 0, NULL, 0) == 0);
		REQUIRE(pt_logw_event(&w, ST_T0 + t + 5000, ST_PID, st_thr[0], 0x401000,
		                      PT_EXT_NOLOSS_WAIT, 0, &len, sizeof len) == 0);
		REQUIRE(pt_logw_event(&w, ST_T0 + t + 5000, ST_PID, st_thr[0], 0x401000, 17, 0, NULL, 0) == 0);
	}
	vt_log_end(&w, fd);
}

static int count_of(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; p && (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* The lane /meta gives the thread with pthread_t th, -1 if none. */
static int lane_of(const char *meta, uint64_t th)
{
	char want[64];
	snprintf(want, sizeof want, "\"pthread_t\":\"0x%llx\"", (unsigned long long)th);
	const char *l = strstr(meta, "\"lanes\":["), *hit = strstr(meta, want);
	if (!l || !hit)
		return -1;
	return count_of(l, "{\"pid\":") - count_of(hit, "{\"pid\":") - 1;
}

/* /meta of a server on log (view ARGS... LOG): its body (malloc'd). */
static char *meta_of(char *const argv[])
{
	struct view_srv s;
	char *m = NULL;
	REQUIRE(view_start(&s, argv, cli_path("v2.out"), cli_path("v2.err"), 60) == 0);
	CHECK_EQ(view_get(&s, "/meta", NULL, 0, &m), 200);
	CHECK_EQ(view_stop(&s), 0);
	REQUIRE(m);
	return m;
}

/* The waits marked in meta: exactly those of the threads in which (bit k:
 * thread k), each on its lane, at its end, its length after. */
static void waits_marked(const char *meta, unsigned which)
{
	char want[96];
	CHECK_EQ(count_of(meta, ",8,"), __builtin_popcount(which));
	for (unsigned k = 0; k < 3; k++) {
		if (!(which >> k & 1))
			continue;
		snprintf(want, sizeof want, "[%d,%llu,8,%llu]", lane_of(meta, st_thr[k]),
		         (unsigned long long)st_wait[k][0], (unsigned long long)st_wait[k][1]);
		CHECK(cli_contains(meta, want));
		if (!cli_contains(meta, want))
			fprintf(stderr, "no %s in %s\n", want, meta);
	}
}

/* Each wait drawn on its thread's lane, from its start to its end; the
 * middle of worker's in the stall's colour there, not on the other lanes. */
static void waits_drawn(struct cdp *c)
{
	char expr[2400];
	snprintf(expr, sizeof expr,
	         "(function(){var d=posixtraceView.drawn(),v=posixtraceView.view(),W=[[%llu,%llu],[%llu,%llu]],L=[-1,-1,-1];"
	         "for(var k=0;k<d.lanes.length;k++){var l=posixtraceView.lane(k);"
	         "if(l.pthread_t==='0x%llx')L[0]=k;if(l.pthread_t==='0x%llx')L[1]=k;if(l.pthread_t==='0x%llx')L[2]=k;}"
	         "if(L.indexOf(-1)>=0)return 'lanes '+L;"
	         "if(d.waits.length!==2)return d.waits.length+' waits drawn';"
	         "function X(t){return d.plot[0]+(t-v[0])/(v[1]-v[0])*(d.plot[1]-d.plot[0]);}"
	         "for(var i=0;i<2;i++){var o=d.waits.filter(function(w){return w.lane===L[i];})[0];"
	         "if(!o)return 'no wait on lane '+L[i];"
	         "if(o.start!==W[i][0]-W[i][1]||o.dur!==W[i][1])return 'wait '+i+': '+o.start+'+'+o.dur;"
	         "if(Math.abs(o.x0-Math.max(X(o.start),d.plot[0]))>0.5||Math.abs(o.x1-Math.max(X(o.start+o.dur),o.x0+2))>0.5)return 'wait '+i+' at '+o.x0+'..'+o.x1;"
	         "if(o.y0!==d.lanes[L[i]].y||o.y1!==d.lanes[L[i]].y+d.lanes[L[i]].h)return 'wait '+i+' not its lane';}"
	         "var x=Math.round(X(W[0][0]-W[0][1]/2)),p=[];"
	         "for(var j=0;j<3;j++)p.push(posixtraceView.pixel(x,d.lanes[L[j]].y+9));"
	         "if(!(p[0][2]>p[0][1]+40&&p[0][0]>p[0][1]+20))return 'not the stall colour: '+p[0];"
	         "for(var j2=1;j2<3;j2++)if(p[j2].join()===p[0].join())return 'lane '+j2+' shaded too: '+p[j2];"
	         "return 'ok';})()",
	         (unsigned long long)st_wait[0][0], (unsigned long long)st_wait[0][1],
	         (unsigned long long)st_wait[1][0], (unsigned long long)st_wait[1][1],
	         (unsigned long long)st_thr[0], (unsigned long long)st_thr[1],
	         (unsigned long long)st_thr[2]);
	char *r = cdp_eval(c, expr);
	CHECK(r && strcmp(r, "\"ok\"") == 0);
	if (!r || strcmp(r, "\"ok\""))
		fprintf(stderr, "waits: %s\n", r ? r : "(no answer)");
	free(r);
}

int main(void)
{
	struct view_srv s;
	struct cdp c;
	char *m, want[200];

	T_BEGIN(300);
	view_test_begin(NULL);
	const char *log = cli_path("stall.ptlog"), *log2 = cli_path("stall2.ptlog");
	stall_log(log, 1);
	stall_log(log2, 0);
	const char *log3 = cli_path("many.ptlog");
	many_log(log3);

	/* /meta: the threads named; the waits (read in the span pass) */
	m = meta_of(CLI("view", (char *)log));
	snprintf(want, sizeof want, "{\"pid\":%d,\"thread\":\"%d/7001\",\"tid\":7001,\"name\":\"worker\","
	         "\"pthread_t\":\"0x%llx\",", ST_PID, ST_PID, (unsigned long long)st_thr[0]);
	CHECK(cli_contains(m, want));
	snprintf(want, sizeof want, "\"thread\":\"%d/7002\",\"tid\":7002,\"name\":\"second\","
	         "\"pthread_t\":\"0x%llx\",", ST_PID, (unsigned long long)st_thr[1]);
	CHECK(cli_contains(m, want));
	snprintf(want, sizeof want, "\"tid\":null,\"name\":null,\"pthread_t\":\"0x%llx\",",
	         (unsigned long long)st_thr[2]);
	CHECK(cli_contains(m, want));
	CHECK(!cli_contains(m, "\"tid\":\"0x"));
	waits_marked(m, 3);
	free(m);
	/* the filtered index: worker's only */
	m = meta_of(CLI("view", "--name", "worker", (char *)log));
	waits_marked(m, 1);
	free(m);
	/* no spans: the waits' own pass */
	m = meta_of(CLI("view", (char *)log2));
	waits_marked(m, 3);
	free(m);
	/* 5000 waits: read in a pass, each with its own length */
	m = meta_of(CLI("view", (char *)log3));
	CHECK_EQ(count_of(m, ",8,"), (int)MANY);
	int own = 0;
	for (unsigned k = 0; k < MANY; k += 7) {
		snprintf(want, sizeof want, "[0,%llu,8,%llu]", k * 10000ull + 5000, 1000ull + k);
		own += cli_contains(m, want);
	}
	CHECK_EQ(own, (int)(MANY + 6) / 7);
	free(m);

	const char *chromium = cli_which("chromium");
	if (!chromium)
		chromium = cli_which("chromium-browser");
	if (!chromium || !cli_which("timeout")) {
		printf("(the browser part skipped: no chromium or timeout(1))\n");
		T_END();
	}
	REQUIRE(view_start(&s, CLI("view", (char *)log), cli_path("v.out"), cli_path("v.err"), 60) == 0);
	/* /event: the thread named as in /meta */
	char path[200], *b = NULL;
	m = NULL;
	CHECK_EQ(view_get(&s, "/meta", NULL, 0, &m), 200);
	snprintf(path, sizeof path, "/event?at=%llu&lane=%d", (unsigned long long)st_wait[0][0],
	         m ? lane_of(m, st_thr[0]) : 0);
	free(m);
	CHECK_EQ(view_get(&s, path, NULL, 0, &b), 200);
	snprintf(want, sizeof want, "\"thread\":\"%d/7001\",\"tid\":7001,\"name\":\"worker\","
	         "\"pthread_t\":\"0x%llx\"", ST_PID, (unsigned long long)st_thr[0]);
	CHECK(cli_contains(b, want));
	CHECK(cli_contains(b, "\"type\":\"posixtrace_noloss_wait\""));
	free(b);

	REQUIRE(cdp_start(&c, chromium, cli_path("profile")) == 0);
	REQUIRE(cdp_page(&c) == 0);
	vt_open_view(&c, &s, 2000000, ST_END, "");
	CHECK(cdp_eval_num(&c, "document.body.getAttribute('data-mode')==='events'?1:0") == 1);
	waits_drawn(&c);
	/* the lane labels: "7000/7001 worker" */
	CHECK(cdp_eval_num(&c, "posixtraceView.drawn().labels.filter(function(l){return l.kind==='lane'&&"
	                       "l.text.indexOf('7000/7001 worker')>=0;}).length") == 1);
	/* a click in the middle of worker's wait (no event of its there) */
	char *xy = cdp_eval(&c,
		"(function(){var d=posixtraceView.drawn(),o=d.waits.filter(function(w){return posixtraceView.lane(w.lane).tid===7001;})[0];"
		"var r=document.getElementById('cv').getBoundingClientRect();"
		"return (r.left+(o.x0+o.x1)/2)+' '+(r.top+o.y0+9);})()");
	double x = 0, y = 0;
	CHECK(xy && sscanf(xy, "\"%lf %lf\"", &x, &y) == 2);
	free(xy);
	/* pointing at it: the canvas's tooltip tells it */
	cdp_mouse(&c, "mouseMoved", x, y, 0, 0);
	CHECK_EQ(cdp_wait(&c, "document.getElementById('cv').title.indexOf('no-loss wait: thread 7000/7001 worker')===0", 5000), 0);
	cdp_click(&c, x, y);
	CHECK_EQ(cdp_wait(&c, "document.getElementById('detail').textContent.indexOf('no-loss wait')===0", 5000), 0);
	char *d = cdp_eval(&c, "document.getElementById('detail').textContent");
	CHECK(d && cli_contains(d, "thread 7000/7001 worker") && cli_contains(d, "held 2.0000 ms") &&
	      cli_contains(d, "from 3.0000 ms to 5.0000 ms"));
	if (d && !cli_contains(d, "held 2.0000 ms"))
		fprintf(stderr, "detail: %s\n", d);
	free(d);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-stall-window.png"), 0);

	/* the whole trace (density or events: the waits from /meta all the same) */
	vt_open_view(&c, &s, 0, ST_END, "");
	waits_drawn(&c);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-stall-overview.png"), 0);
	vt_no_errors(&c);
	CHECK_EQ(view_stop(&s), 0);
	cdp_stop(&c);
	T_END();
}
