/*
 * cli_loss.c -- a recording that loses events: examples/app (30 rounds)
 * into a tiny LOOP stream flushed only at the end.  The summary of
 * `record` and `info` report the gaps (one per posix_trace_overflow in
 * the log, counted here with posix_trace_open()); `show` prints the
 * synthesized OVERFLOW/RESUME events with "-" for the process; the CTF
 * export keeps every event and babeltrace2 reports discarded events.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

int main(void)
{
	char *out = NULL, *err = NULL, want[128], line[1024];
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
	snprintf(want, sizeof want, "EVENTS LOST: %d gap%s in the stream", gaps, gaps == 1 ? "" : "s");
	CHECK(cli_contains(err, want));
	free(err);

	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	snprintf(want, sizeof want, "lost events   %d gap", gaps);
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

	const char *dir = cli_path("loss.ctf");
	CHECK_EQ(cli_run(CLI("export", "-f", "ctf", (char *)log, "-o", (char *)dir), NULL, NULL), 0);
	if (access("/usr/bin/babeltrace2", X_OK) == 0) {
		CHECK_EQ(cli_run((char *const[]){ "/usr/bin/babeltrace2", (char *)dir, NULL }, &out, &err), 0);
		CHECK_EQ(cli_nlines(out), n);
		CHECK(cli_contains(err, "discarded"));
		free(out);
		free(err);
	} else {
		printf("note: no /usr/bin/babeltrace2; the CTF trace was not read back\n");
	}
	free(ev);
	T_END();
}
