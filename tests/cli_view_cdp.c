/*
 * cli_view_cdp.c -- the page of `posixtrace view` driven like a person
 * would, in Debian's chromium (headless) through the DevTools protocol
 * (tests/cdp.h): real key presses, wheel, drag and clicks.  On a
 * recording of examples/app:
 *   - the overview counts every event `posixtrace info` counts;
 *   - W zooms in by 0.8 and S back out, D pans a tenth of the window and
 *     A back, the wheel zooms around the pointer, a drag of 200 pixels
 *     pans by 200 pixels' worth of time;
 *   - typing the time of the first "request" event (as `posixtrace show`
 *     prints it) into "jump to" and pressing Enter shows
 *     that event's details: type, payload text, source line;
 *   - a click on another event drawn shows it, and it is the event
 *     `posixtrace show` lists at that time;
 *   - a click on that event's type hides exactly its events;
 *   - on 300 004 generated events (PT_VIEW_CDP_EVENTS=50000000: the
 *     issue's 50 M), the overview (drawn from counts) sums to info's
 *     count, and a jump to the time of event 2N/3 shows it (its payload);
 *   - a window of the spans log (tests/view_test.h) draws its three span
 *     bars;
 *   - no script exception anywhere (the protocol's exceptionThrown events
 *     and the page's own record).
 * Screenshots: build/view-cdp-*.png.  Skipped without chromium.
 */
#include <math.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "biglog.h"
#include "view_http.h"
#include "view_test.h"
#include "cdp.h"

static double span(struct cdp *c)
{
	return cdp_eval_num(c, "(function(){var v=posixtraceView.view();return v[1]-v[0];})()");
}

static double left(struct cdp *c)
{
	return cdp_eval_num(c, "posixtraceView.view()[0]");
}

static int near(double a, double b, double rel)
{
	int ok = fabs(a - b) <= rel * fabs(b);
	if (!ok)
		fprintf(stderr, "%.6f is not %.6f (within %g)\n", a, b, rel);
	return ok;
}

static void open_page(struct cdp *c, const char *url)
{
	char params[400];
	free(cdp_eval(c, "document.body && document.body.removeAttribute('data-state')"));
	snprintf(params, sizeof params, "{\"url\":\"%s\"}", url);
	free(cdp_call(c, 1, "Page.navigate", params));
	CHECK_EQ(cdp_wait(c, "document.body.getAttribute('data-state')==='ready'", 30000), 0);
}

/* Wait for the answer to the page's last query (the status line's "answered"). */
static void settle(struct cdp *c)
{
	usleep(60000);
	CHECK_EQ(cdp_wait(c, "document.getElementById('status').textContent.indexOf('answered')>=0", 20000), 0);
}

/* Types time t (s after the first event) into "jump to", presses Enter,
 * and waits for the event there to be shown. */
static void jump(struct cdp *c, double t)
{
	char params[200];
	free(cdp_eval(c, "document.body.removeAttribute('data-selected')"));
	double jx = cdp_eval_num(c, "(function(){var r=document.getElementById('jump').getBoundingClientRect();return r.left+10;})()");
	double jy = cdp_eval_num(c, "(function(){var r=document.getElementById('jump').getBoundingClientRect();return r.top+5;})()");
	cdp_click(c, jx, jy);
	free(cdp_eval(c, "document.getElementById('jump').value=''"));
	snprintf(params, sizeof params, "{\"text\":\"%.9f\"}", t); /* (exact: an event of
	                                          * another thread may lie nearer a time beside it) */
	free(cdp_call(c, 1, "Input.insertText", params));
	free(cdp_call(c, 1, "Input.dispatchKeyEvent", "{\"type\":\"keyDown\",\"key\":\"Enter\",\"code\":\"Enter\",\"windowsVirtualKeyCode\":13}"));
	free(cdp_call(c, 1, "Input.dispatchKeyEvent", "{\"type\":\"keyUp\",\"key\":\"Enter\",\"code\":\"Enter\",\"windowsVirtualKeyCode\":13}"));
	CHECK_EQ(cdp_wait(c, "document.body.getAttribute('data-selected')==='ok'", 60000), 0);
}

int main(void)
{
	struct view_srv s;
	struct cdp c;

	T_BEGIN(300);
	const char *chromium;
	view_test_begin(&chromium);
	const char *o = cli_path("view.out"), *er = cli_path("view.err");
	const char *log = cli_path("app.ptlog");
	REQUIRE(cli_record_app(log, "0") == 0);
	long long n = view_info_events(log);
	char *show = NULL;
	CHECK_EQ(cli_run(CLI("show", (char *)log), &show, NULL), 0);
	REQUIRE(show != NULL);
	const char *req = strstr(show, " request ");
	REQUIRE(req != NULL);
	const char *line = req;
	while (line > show && line[-1] != '\n')
		line--;
	double t_req = strtod(line, NULL);
	char text[64] = "";
	const char *q = strchr(req, '"');
	CHECK(q && sscanf(q + 1, "%63[^\"]", text) == 1);

	REQUIRE(view_start(&s, CLI("view", (char *)log), o, er, 60) == 0);
	REQUIRE(cdp_start(&c, chromium, cli_path("profile")) == 0);
	REQUIRE(cdp_page(&c) == 0);
	open_page(&c, s.url);
	CHECK_EQ((long long)cdp_eval_num(&c, "+document.body.getAttribute('data-events')"), n);
	CHECK_EQ((long long)cdp_eval_num(&c, "+document.body.getAttribute('data-drawn')"), n);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-cdp-overview.png"), 0);

	/* keys */
	double s0 = span(&c), a0 = left(&c);
	CHECK(s0 > 0);
	cdp_key(&c, 'w');
	CHECK(near(span(&c), s0 * 0.8, 1e-9));
	cdp_key(&c, 's');
	CHECK(near(span(&c), s0, 1e-9));
	CHECK(near(left(&c), a0, 1e-6));
	cdp_key(&c, 'w');
	cdp_key(&c, 'w');
	double s1 = span(&c), a1 = left(&c);
	cdp_key(&c, 'd');
	CHECK(near(left(&c) - a1, s1 * 0.1, 1e-6));
	cdp_key(&c, 'a');
	CHECK(near(left(&c), a1, 1e-6));
	/* the wheel, in the middle of the plot */
	double x = cdp_eval_num(&c, "(function(){var r=document.getElementById('cv').getBoundingClientRect();"
	                            "return r.left+230+(r.width-230)/2;})()");
	double y = cdp_eval_num(&c, "document.getElementById('cv').getBoundingClientRect().top+60");
	double pw = cdp_eval_num(&c, "document.getElementById('cv').width-230");
	cdp_mouse(&c, "mouseWheel", x, y, -500, 0);
	CHECK(near(span(&c), s1 * pow(1.0015, -500), 1e-6));
	/* a drag of 200 pixels to the right: the window moves left by as much time */
	double s2 = span(&c), a2 = left(&c);
	cdp_mouse(&c, "mouseMoved", x, y, 0, 0);
	cdp_mouse(&c, "mousePressed", x, y, 0, 1);
	for (int k = 1; k <= 4; k++)
		cdp_mouse(&c, "mouseMoved", x + 50 * k, y, 0, 1);
	cdp_mouse(&c, "mouseReleased", x + 200, y, 0, 0);
	CHECK(near(a2 - left(&c), 200 / pw * s2, 1e-6));
	CHECK(near(span(&c), s2, 1e-9));

	/* jump to the first request, typed into the box */
	jump(&c, t_req);
	char *d = cdp_eval(&c, "document.getElementById('detail').textContent");
	CHECK(cli_contains(d, "request (type"));
	CHECK(cli_contains(d, text));
	CHECK(cli_contains(d, "(app.c:"));
	if (!cli_contains(d, text))
		fprintf(stderr, "detail: %s\n", d ? d : "(none)");
	free(d);
	char *at = cdp_eval(&c, "document.getElementById('detail').getAttribute('data-at')");
	CHECK(at && fabs(strtod(at + 1, NULL) - t_req * 1e9) < 1.5);
	free(at);

	/* zoom out (S) until several events are drawn, then click another */
	for (int k = 0; k < 40 && cdp_eval_num(&c, "posixtraceView.events().length") < 4; k++) {
		cdp_key(&c, 's');
		settle(&c);
	}
	/* an event at least 10 px from any other of its lane, not the selected one */
	char *pick = cdp_eval(&c,
		"(function(){var ev=posixtraceView.events(),v=posixtraceView.view(),"
		"w=document.getElementById('cv').width-230,px=(v[1]-v[0])/w,sel=+document.getElementById('detail').getAttribute('data-at')+posixtraceView.t0();"
		"for(var i=0;i<ev.length;i++){var e=ev[i],ok=e[1]!==sel&&e[1]>v[0]&&e[1]<v[1];"
		"for(var j=0;j<ev.length&&ok;j++)if(j!==i&&ev[j][0]===e[0]&&Math.abs(ev[j][1]-e[1])<10*px)ok=false;"
		"if(ok){var p=posixtraceView.where(e[1],e[0]);return p[0]+' '+p[1]+' '+e[1]+' '+e[2];}}return '';})()");
	double px = 0, py = 0, pat = 0;
	int pid_type = -1;
	CHECK(pick && sscanf(pick, "\"%lf %lf %lf %d", &px, &py, &pat, &pid_type) == 4);
	if (!pick || pid_type < 0)
		fprintf(stderr, "pick: %s; %g events drawn\n", pick ? pick : "(none)", cdp_eval_num(&c, "posixtraceView.events().length"));
	free(pick);
	cdp_click(&c, px, py);
	char cond[200];
	pat -= cdp_eval_num(&c, "posixtraceView.t0()"); /* (data-at: since time 0, as show) */
	snprintf(cond, sizeof cond, "document.getElementById('detail').getAttribute('data-at')==='%.0f'", pat);
	CHECK_EQ(cdp_wait(&c, cond, 20000), 0);
	char *type = cdp_eval(&c, "document.getElementById('detail').getAttribute('data-type')");
	/* the witness: show's line at that time */
	char stamp[40], want[80];
	snprintf(stamp, sizeof stamp, "%.9f ", pat / 1e9);
	const char *sl = strstr(show, stamp);
	CHECK(sl != NULL);
	CHECK(type && strlen(type) > 2);
	if (sl && type) {
		snprintf(want, sizeof want, " %.*s ", (int)strlen(type) - 2, type + 1);
		const char *eol = strchr(sl, '\n');
		const char *hit = strstr(sl, want);
		CHECK(hit && (!eol || hit < eol));
	}
	free(type);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-cdp-event.png"), 0);

	/* hide that type: its events, exactly, are no longer drawn */
	char expr[300];
	snprintf(expr, sizeof expr, "(function(){var v=posixtraceView.view(),n=0;posixtraceView.events().forEach("
	         "function(e){if(e[2]===%d&&e[1]>=v[0]&&e[1]<=v[1])n++;});return n;})()", pid_type);
	double of_type = cdp_eval_num(&c, expr);
	double vis0 = cdp_eval_num(&c, "+document.body.getAttribute('data-visible')");
	snprintf(expr, sizeof expr, "(function(){var r=document.querySelector('#types span[data-type=\"%d\"]')"
	         ".getBoundingClientRect();return (r.left+r.width/2)+' '+(r.top+r.height/2);})()", pid_type);
	char *chip = cdp_eval(&c, expr);
	double cx = 0, cy = 0;
	CHECK(chip && sscanf(chip, "\"%lf %lf", &cx, &cy) == 2);
	free(chip);
	cdp_click(&c, cx, cy);
	CHECK(of_type >= 1);
	CHECK_EQ(cdp_eval_num(&c, "+document.body.getAttribute('data-visible')"), vis0 - of_type);
	cdp_click(&c, cx, cy);
	CHECK_EQ(cdp_eval_num(&c, "+document.body.getAttribute('data-visible')"), vis0);
	char *errs = cdp_eval(&c, "document.body.getAttribute('data-errors')");
	CHECK(errs && strcmp(errs, "\"\"") == 0);
	free(errs);
	CHECK_EQ(view_stop(&s), 0);

	/* generated events (PT_VIEW_CDP_EVENTS, default 300 000; the issue's
	 * 50 M: PT_VIEW_CDP_EVENTS=50000000): the overview from counts; one
	 * event two thirds in, jumped to: its payload is its number */
	const char *big = cli_path("big.ptlog"), *ne = getenv("PT_VIEW_CDP_EVENTS");
	uint64_t nbig = ne && *ne ? strtoull(ne, NULL, 10) : 300000;
	REQUIRE(nbig >= 1000);
	REQUIRE(biglog_write(big, nbig, 1) == 0);
	n = view_info_events(big);
	REQUIRE(view_start(&s, CLI("view", (char *)big), o, er, 900) == 0);
	open_page(&c, s.url);
	CHECK(cdp_eval_num(&c, "document.body.getAttribute('data-mode')==='density'?1:0") == 1);
	CHECK_EQ((long long)cdp_eval_num(&c, "+document.body.getAttribute('data-drawn')"), n);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-cdp-big.png"), 0);
	for (int k = 0; k < 30; k++)
		cdp_key(&c, 'w');
	settle(&c);
	/* (a larger log: on until a window is narrow enough for its events) */
	for (int k = 0; k < 60 && cdp_eval_num(&c, "posixtraceView.events().length") == 0; k++) {
		cdp_key(&c, 'w');
		settle(&c);
	}
	CHECK(cdp_eval_num(&c, "posixtraceView.events().length") > 0);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-cdp-big-zoomed.png"), 0);
	uint64_t k = nbig / 3 * 2 + 1;
	char hex[40]; /* as the details print it: "hex:  41 0d 03 ..." */
	for (int i = 0; i < 8; i++)
		snprintf(hex + 3 * i, 4, "%02x ", (unsigned)(k >> (8 * i) & 0xff));
	hex[23] = 0;
	jump(&c, (double)(k * 200) / 1e9);
	d = cdp_eval(&c, "document.getElementById('detail').textContent");
	CHECK(cli_contains(d, hex));
	if (!cli_contains(d, hex))
		fprintf(stderr, "event %llu: detail %s\n", (unsigned long long)k, d ? d : "(none)");
	free(d);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-cdp-big-event.png"), 0);
	errs = cdp_eval(&c, "document.body.getAttribute('data-errors')");
	CHECK(errs && strcmp(errs, "\"\"") == 0);
	free(errs);
	CHECK_EQ(view_stop(&s), 0);

	/* spans: a window of one period draws its three bars */
	const char *spl = cli_path("spans.ptlog");
	spans_log(spl);
	REQUIRE(view_start(&s, CLI("view", (char *)spl), o, er, 60) == 0);
	char url[300];
	snprintf(url, sizeof url, "%s#view=500000,509999", s.url);
	open_page(&c, url);
	CHECK_EQ(cdp_wait(&c, "+document.body.getAttribute('data-spans')===3", 20000), 0);
	CHECK_EQ((long long)cdp_eval_num(&c, "posixtraceView.spans().length"), 3);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-cdp-spans.png"), 0);
	vt_no_errors(&c);
	CHECK_EQ(view_stop(&s), 0);
	cdp_stop(&c);
	free(show);
	T_END();
}
