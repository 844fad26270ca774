/*
 * cli_loss.c -- a recording that loses events: examples/app (30 rounds,
 * 3906 events of its own) into a tiny LOOP stream flushed only at the
 * end.  The count of lost events is exact everywhere it is shown: the
 * events of the app in the log plus the count that `record` and `info`
 * print make 3906 (plus the controller's own events, if one was
 * overwritten); `show` prints one count per gap (on the RESUME line) and
 * they add up to the same total; the synthesized OVERFLOW/RESUME have
 * "-" for the process; the CTF export keeps every event and babeltrace2
 * reports the same number of discarded events (that part is skipped, with
 * a SKIP line, when babeltrace2 is not in PATH); the Chrome export says it.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

#define APP_EVENTS 3906 /* 1 + 30 rounds x (3 workers x 20 x 2 + 10 ticks) + 5 */

int main(void)
{
	char *out = NULL, *err = NULL, want[160], line[1024];
	struct cli_ev *ev;

	T_BEGIN(120);
	cli_setup();
	const char *log = cli_path("loss.ptlog");
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--policy", "loop", "--size", "4K", "--",
	                     (char *)cli_app, "0", "30"), NULL, &err), 0);
	int n = cli_read_log(log, &ev);
	int gaps = cli_count(ev, n, "posix_trace_overflow");
	CHECK(gaps > 0);
	CHECK_EQ(cli_count(ev, n, "posix_trace_resume"), gaps);
	int app = cli_count(ev, n, "app_start") + cli_count(ev, n, "request") +
	          cli_count(ev, n, "reply") + cli_count(ev, n, "tick") +
	          cli_count(ev, n, "child_step");
	/* the controller's events go through the stream too (START, and at the
	 * end STOP, FLUSH_START, FLUSH_STOP): one overwritten is one more lost */
	static const char *const sys[] = { "posix_trace_start", "posix_trace_stop",
	                                   "posix_trace_flush_start", "posix_trace_flush_stop" };
	int sys_lost = 0;
	for (int i = 0; i < 4; i++) {
		CHECK(cli_count(ev, n, sys[i]) <= 1);
		sys_lost += cli_count(ev, n, sys[i]) == 0;
	}
	unsigned long long lost = (unsigned long long)(APP_EVENTS + sys_lost - app);
	CHECK(app < APP_EVENTS);
	snprintf(want, sizeof want, "EVENTS LOST: %llu events lost in %d gap%s in the stream", lost,
	         gaps, gaps == 1 ? "" : "s");
	CHECK(cli_contains(err, want));
	if (!cli_contains(err, want))
		fprintf(stderr, "want \"%s\" in:\n%s\n", want, err);
	free(err);

	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	snprintf(want, sizeof want, "lost events   %llu events lost in %d gap", lost, gaps);
	CHECK(cli_contains(out, want));
	CHECK(cli_contains(out, "OVERRUN"));
	free(out);

	CHECK_EQ(cli_run(CLI("show", (char *)log, "-e", "posix_trace_overflow"), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), gaps);
	for (int i = 0; cli_line(out, i, line, sizeof line) == 0; i++) {
		char t[32], d[32], who[32];
		CHECK(sscanf(line, "%31s %31s %31s", t, d, who) == 3 && !strcmp(who, "-"));
	}
	free(out);
	/* read after the fact, every loss report is there: the gaps add up */
	CHECK_EQ(cli_run(CLI("show", (char *)log, "-e", "posix_trace_resume"), &out, NULL), 0);
	int nl;
	CHECK_EQ(cli_gap_sum(out, &nl), lost);
	CHECK_EQ(nl, gaps);
	free(out);

	const char *json = cli_path("loss.json");
	CHECK_EQ(cli_run(CLI("export", "-f", "chrome", (char *)log, "-o", (char *)json), NULL, NULL), 0);
	char *js = cli_slurp(json);
	snprintf(want, sizeof want, "\"lost\":%llu,\"lost_exact\":true,\"gaps\":%d", lost, gaps);
	CHECK(js && strstr(js, want));
	free(js);

	const char *dir = cli_path("loss.ctf");
	CHECK_EQ(cli_run(CLI("export", "-f", "ctf", (char *)log, "-o", (char *)dir), NULL, NULL), 0);
	const char *bt = cli_which("babeltrace2");
	if (bt) {
		CHECK_EQ(cli_run((char *const[]){ (char *)bt, (char *)dir, NULL }, &out, &err), 0);
		CHECK_EQ(cli_nlines(out), n);
		/* "Tracer discarded N event(s) between ..." for every gap */
		CHECK_EQ(cli_sum_after(err, "Tracer discarded "), lost);
		CHECK(!cli_contains(err, "may have discarded"));
		free(out);
		free(err);
	} else {
		printf("SKIP: babeltrace2 is not in PATH (Debian: babeltrace2): the CTF trace was not "
		       "read back\n");
		if (t_checks == 0) /* nothing else was checked */
			exit(77);
	}
	free(ev);
	T_END();
}
