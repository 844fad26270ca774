/*
 * cli_info.c -- `posixtrace info` and `posixtrace stats` on a recorded
 * examples/app log: attributes and policies as recorded (default and
 * --log-policy loop), status and lost events, each event type's count
 * equal to the log's (read with posix_trace_open()), the processes and
 * threads; stats: per type the count, gaps, a '#' bar scaled to --width
 * (the largest count fills it), the activity chart as wide as asked.
 * Neither lists a system type that has no event (the log names them all).
 * Errors: a missing file exits 1 naming it; no FILE exits 2.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static const char *types[] = { "app_start", "request", "reply", "tick", "child_step",
                               "posix_trace_start" };

/* The line of s that has word w as its column `col` (0-based), or NULL. */
static int find_row(const char *s, int col, const char *w, char *line, size_t cap)
{
	for (int i = 0; cli_line(s, i, line, cap) == 0; i++) {
		char c[6][80];
		int k = sscanf(line, "%79s %79s %79s %79s %79s %79s", c[0], c[1], c[2], c[3], c[4], c[5]);
		if (k > col && !strcmp(c[col], w))
			return 0;
	}
	return -1;
}

int main(void)
{
	char *out = NULL, *err = NULL, line[1024];
	struct cli_ev *ev;

	T_BEGIN(120);
	cli_setup();
	const char *log = cli_path("app.ptlog");
	REQUIRE(cli_record_app(log, "0") == 0);
	int n = cli_read_log(log, &ev);

	/* info */
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, &err), 0);
	CHECK(cli_contains(out, "trace name    app\n"));
	CHECK(cli_contains(out, "stream        16777216 bytes, full policy flush")); /* record's default */
	CHECK(cli_contains(out, "log policy    append"));
	CHECK(cli_contains(out, "inheritance   inherited"));
	CHECK(cli_contains(out, "lost events   none\n"));
	CHECK(cli_contains(out, "no overrun"));
	char want[64];
	snprintf(want, sizeof want, "events        %d\n", n);
	CHECK(cli_contains(out, want));
	CHECK(cli_contains(out, "processes (2)"));
	CHECK(cli_contains(out, "/examples/app\n"));
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		int got = -1;
		if (find_row(out, 2, types[t], line, sizeof line) == 0)
			got = atoi(line);
		CHECK_EQ(got, cli_count(ev, n, types[t]));
	}
	/* the log names every system type (a log carries every type of its
	 * stream), but one with no event is not listed, here nor in stats */
	static const char *none[] = { "posix_trace_error", "posix_trace_filter",
	                              "posix_trace_overflow", "posix_trace_resume" };
	for (size_t t = 0; t < sizeof none / sizeof none[0]; t++) {
		CHECK_EQ(cli_count(ev, n, none[t]), 0);
		CHECK(find_row(out, 2, none[t], line, sizeof line) != 0);
	}
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("stats", (char *)log), &out, NULL), 0);
	for (size_t t = 0; t < sizeof none / sizeof none[0]; t++)
		CHECK(find_row(out, 0, none[t], line, sizeof line) != 0);
	free(out);

	/* stats */
	CHECK_EQ(cli_run(CLI("stats", "--ascii", "--width", "100", (char *)log), &out, NULL), 0);
	int maxbar = 0;
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		if (find_row(out, 0, types[t], line, sizeof line) != 0) {
			CHECK(!"no stats row");
			continue;
		}
		char name[64];
		int count = -1;
		sscanf(line, "%63s %d", name, &count);
		CHECK_EQ(count, cli_count(ev, n, types[t]));
		int bar = (int)strspn(strrchr(line, ' ') + 1, "#");
		CHECK(bar >= 1);
		CHECK_EQ(strlen(line), strlen(line) - strlen(strrchr(line, ' ') + 1) + (size_t)bar);
		maxbar = bar > maxbar ? bar : maxbar;
		if (!strcmp(types[t], "tick"))    /* ~4 ms apart */
			CHECK(strstr(line, " ms ") != NULL);
		if (!strcmp(types[t], "request"))
			CHECK(strlen(line) == 100); /* the largest count fills the width */
	}
	CHECK(maxbar > 10);
	CHECK(cli_contains(out, "activity over time"));
	CHECK(find_row(out, 0, "tick", line, sizeof line) == 0);
	for (int i = 0; cli_line(out, i, line, sizeof line) == 0; i++)
		if (strstr(line, " |") && line[strlen(line) - 1] == '|')
			CHECK_EQ(strlen(line), 100);
	free(out);

	/* another log policy */
	const char *loop = cli_path("loop.ptlog");
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)loop, "--log-policy", "loop", "--log-size",
	                     "1M", "--", (char *)cli_app), NULL, NULL), 0);
	CHECK_EQ(cli_run(CLI("info", (char *)loop), &out, NULL), 0);
	CHECK(cli_contains(out, "log policy    loop, max size 1048576 bytes"));
	free(out);

	/* errors */
	CHECK_EQ(cli_run(CLI("info", "/nonexistent/y.ptlog"), NULL, &err), 1);
	CHECK(cli_contains(err, "/nonexistent/y.ptlog"));
	free(err);
	CHECK_EQ(cli_run(CLI("stats", "/nonexistent/y.ptlog"), NULL, &err), 1);
	CHECK(cli_contains(err, "/nonexistent/y.ptlog"));
	free(err);
	CHECK_EQ(cli_run(CLI("info"), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("stats"), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("stats", "--width", "3", (char *)log), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("info", "--help"), &out, NULL), 0);
	CHECK(cli_contains(out, "usage: posixtrace info"));
	free(out);
	free(ev);
	T_END();
}
