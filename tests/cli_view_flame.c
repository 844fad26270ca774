/*
 * cli_view_flame.c -- the flame chart of `posixtrace view`, in Debian's
 * chromium (headless, driven through the DevTools protocol: tests/cdp.h),
 * on tests/view_test.h's job queue (three workers, each with a slow job
 * of 22, 18 and 33.96 ms holding "db" spans that hold "lock" spans, and
 * "handoff" spans begun on a dispatcher and ended on a worker):
 *   - at a 4 ms window and at a 0.4 ms window inside the 33.96 ms job,
 *     each worker's slow job is drawn on its lane, in the first row, and
 *     its rectangle covers the lane from the plot's left edge (it began
 *     before the window) to its right: the page's own account of what it
 *     drew (posixtraceView.drawn()) and the pixels themselves (the job's
 *     colour at the left, middle and right of the row);
 *   - spans are stacked by nesting: job row 0, db row 1, lock row 2;
 *   - no two texts drawn overlap (span labels, axis labels, lane names),
 *     every span label lies inside its span, axis labels differ;
 *   - a handoff (begun on one thread, ended on another) is drawn with an
 *     arrow from its begin's lane to its end's (the pixels of the jobs are
 *     looked at with the arrows off: the "arrows" box);
 *   - the whole trace: the slow jobs are drawn there too, and the gap
 *     (lost events) is shaded;
 *   - no script exception.
 * Screenshots: build/view-flame-{4ms,0.4ms,overview}.png.  Skipped
 * without chromium.
 */
#include <math.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "biglog.h"
#include "view_http.h"
#include "view_test.h"
#include "cdp.h"

/* the view of [a, b] with its spans drawn */
static void open_view(struct cdp *c, const struct view_srv *s, uint64_t a, uint64_t b)
{
	vt_open_view(c, s, a, b, "&&posixtraceView.drawn().spans.length>0");
}

/* Worker w's slow job, as drawn: it covers its lane's whole plot, in
 * row 0, in its colour at the left, middle and right. */
static void job_covers(struct cdp *c, int w, int whole)
{
	char expr[2000];
	snprintf(expr, sizeof expr,
	         "(function(){var d=posixtraceView.drawn(),m=[],lane=-1;"
	         "posixtraceView.spans().forEach(function(s){if(s[1]===%llu&&s[2]===%llu)lane=s[0];});"
	         "var o=d.spans.filter(function(s){return s.lane===lane&&s.name==='job'&&s.start===%llu;})[0];"
	         "if(!o)return 'no job drawn on lane '+lane;"
	         "if(o.row!==0)return 'row '+o.row;"
	         "if(%d&&(o.x0>d.plot[0]+0.5||o.x1<d.plot[1]-0.5))return 'covers '+o.x0+'..'+o.x1+' of '+d.plot;"
	         "if(o.y0<d.lanes[lane].y||o.y1>d.lanes[lane].y+d.lanes[lane].h)return 'not in its lane';"
	         "var y=o.y0+1,xs=[Math.ceil(o.x0)+1,Math.round((o.x0+o.x1)/2),Math.floor(o.x1)-2],p0=posixtraceView.pixel(Math.round(xs[1]),y);"
	         "if(p0[0]>235&&p0[1]>235&&p0[2]>235)return 'background at the middle: '+p0;"
	         "for(var i=0;i<3;i++){var p=posixtraceView.pixel(Math.round(xs[i]),y);"
	         "if(p.join()!==p0.join())return 'pixel '+xs[i]+': '+p+' not '+p0;}"
	         "return 'ok';})()",
	         (unsigned long long)job_slow[w][0], (unsigned long long)(job_slow[w][1] - job_slow[w][0]),
	         (unsigned long long)job_slow[w][0], whole);
	free(cdp_eval(c, "posixtraceView.flows(false)")); /* (the arrows drawn over it) */
	char *r = cdp_eval(c, expr);
	free(cdp_eval(c, "posixtraceView.flows(true)"));
	CHECK(r && strcmp(r, "\"ok\"") == 0);
	if (!r || strcmp(r, "\"ok\""))
		fprintf(stderr, "worker %d's slow job: %s\n", w, r ? r : "(no answer)");
	free(r);
}

/* No two texts overlap; each span label inside its span; at least three
 * axis labels, no two the same. */
static void labels_apart(struct cdp *c)
{
	char *r = cdp_eval(c,
		"(function(){var d=posixtraceView.drawn(),L=d.labels,ax={},nax=0;"
		"for(var i=0;i<L.length;i++){for(var j=i+1;j<L.length;j++){var a=L[i],b=L[j];"
		"if(a.x0<b.x1&&b.x0<a.x1&&a.y0<b.y1&&b.y0<a.y1)return 'overlap: '+a.text+' / '+b.text;}"
		"if(L[i].kind==='axis'){if(ax[L[i].text])return 'axis twice: '+L[i].text;ax[L[i].text]=1;nax++;}}"
		"if(nax<3)return nax+' axis labels';"
		"for(var k=0;k<d.spans.length;k++){var s=d.spans[k];if(!s.label)continue;"
		"var l=L.filter(function(x){return x.kind==='span'&&x.y0>=s.y0&&x.y1<=s.y1&&x.x0>=s.x0&&x.x1<=s.x1;});"
		"if(l.length!==1)return 'label of '+s.name+' at '+s.x0+': '+l.length;}"
		"return 'ok';})()");
	CHECK(r && strcmp(r, "\"ok\"") == 0);
	if (!r || strcmp(r, "\"ok\""))
		fprintf(stderr, "labels: %s\n", r ? r : "(no answer)");
	free(r);
}

int main(void)
{
	struct view_srv s;
	struct cdp c;

	T_BEGIN(300);
	const char *chromium;
	view_test_begin(&chromium);
	const char *o = cli_path("view.out"), *er = cli_path("view.err");
	const char *log = cli_path("jobs.ptlog");
	jobs_log(log);
	REQUIRE(view_start(&s, CLI("view", (char *)log), o, er, 60) == 0);
	REQUIRE(cdp_start(&c, chromium, cli_path("profile")) == 0);
	REQUIRE(cdp_page(&c) == 0);

	/* 4 ms: [112, 116] ms */
	open_view(&c, &s, 112000000, 116000000);
	CHECK(cdp_eval_num(&c, "document.body.getAttribute('data-mode')==='events'?1:0") == 1);
	for (int w = 0; w < 3; w++)
		job_covers(&c, w, 1);
	labels_apart(&c);
	/* handoffs begun on the dispatcher, ended on a worker: arrows */
	CHECK(cdp_eval_num(&c, "posixtraceView.drawn().flows.filter(function(f){return f.lane!==f.elane&&f.x1>f.x0;}).length") >= 1);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-flame-4ms.png"), 0);

	/* 0.4 ms inside the 33.96 ms job: [120, 120.4] ms */
	open_view(&c, &s, 120000000, 120400000);
	CHECK(cdp_eval_num(&c, "document.body.getAttribute('data-mode')==='events'?1:0") == 1);
	for (int w = 0; w < 3; w++)
		job_covers(&c, w, 1);
	labels_apart(&c);
	/* nesting: db in row 1, lock in row 2, each on a worker's lane */
	CHECK(cdp_eval_num(&c, "posixtraceView.drawn().spans.filter(function(s){return s.name==='db'&&s.row===1;}).length") >= 3 * 7);
	CHECK(cdp_eval_num(&c, "posixtraceView.drawn().spans.filter(function(s){return s.name==='lock'&&s.row===2;}).length") >= 3 * 7);
	CHECK_EQ(cdp_eval_num(&c, "posixtraceView.drawn().spans.filter(function(s){return (s.name==='db')!==(s.row===1)&&s.name!=='handoff';}).length"), 0);
	CHECK(cdp_eval_num(&c, "posixtraceView.drawn().labels.filter(function(l){return l.kind==='span'&&l.text.indexOf('job')===0;}).length") >= 3);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-flame-0.4ms.png"), 0);

	/* the whole trace: the slow jobs (whole: not cut at the window) and the gap */
	open_view(&c, &s, 0, JOB_END);
	CHECK(cdp_eval_num(&c, "document.body.getAttribute('data-mode')==='density'?1:0") == 1);
	for (int w = 0; w < 3; w++)
		job_covers(&c, w, 0);
	labels_apart(&c);
	/* the gap at 50 ms, shaded red on the reader's lane */
	CHECK(cdp_eval_num(&c, "(function(){var d=posixtraceView.drawn(),ln=-1;posixtraceView.spans();"
	                       "for(var k=0;k<d.lanes.length;k++)if(d.lanes[k]&&posixtraceView.lanePid(k)===0)ln=k;"
	                       "if(ln<0)return 0;var v=posixtraceView.view(),x=d.plot[0]+(50050000-v[0])/(v[1]-v[0])*(d.plot[1]-d.plot[0]);"
	                       "var p=posixtraceView.pixel(Math.round(x),d.lanes[ln].y+d.lanes[ln].h-2);return p[0]>p[1]+40?1:0;})()") == 1);
	CHECK_EQ(cdp_screenshot(&c, PT_BUILD_DIR "/view-flame-overview.png"), 0);
	vt_no_errors(&c);
	CHECK_EQ(view_stop(&s), 0);
	cdp_stop(&c);
	T_END();
}
