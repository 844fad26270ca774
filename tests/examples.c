/*
 * examples.c -- the example programs do what their comments say, checked
 * against what each program itself knows (how many events it recorded):
 *
 *   1. examples/flight (a LOOP stream with a log, dumped on SIGUSR1 by a
 *      thread in sigwait): after its workers recorded 5000 steps each,
 *      SIGUSR1 writes the latest of them; a second SIGUSR1 writes no step
 *      (the first took them all); SIGTERM ends it with status 0.  The log,
 *      read by examples/readlog: each worker's steps are a run without a
 *      hole ending at its last step (4999) when it has any (the oldest
 *      are lost, whoever wrote them), the log opens with its START and an
 *      OVERFLOW and a RESUME precedes the first step (64 KiB cannot hold
 *      10000 steps),
 *      as many RESUMEs as OVERFLOWs, all steps before the first flush; the
 *      count lines agree with the lines, and with the log read directly;
 *      the steps kept and the events `posixtrace info` counts lost add up
 *      to every step recorded (and the START, which is kept).
 *   2. examples/readlog on a log of examples/app written by `posixtrace
 *      record`: the counts of app's own types are those app records (3
 *      workers x 20 rounds of request and reply, 10 ticks, 5 child steps,
 *      1 app_start), and every line names its type.
 *   3. readlog on what is not a log fails with a message.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

#define STEPS 5000

static const char *flight = PT_BUILD_DIR "/examples/flight";
static const char *readlog = PT_BUILD_DIR "/examples/readlog";

/* A line from fd (the child's stdout), or NULL at EOF. */
static char *read_line(FILE *f, char *buf, size_t cap)
{
	return fgets(buf, (int)cap, f);
}

/* The count readlog prints for type name after "--", 0 if none, or -1
 * when there is no "--". */
static long count_of(const char *out, const char *name)
{
	const char *p = strncmp(out, "--\n", 3) ? strstr(out, "\n--\n") : out - 1;
	if (!p)
		return -1;
	for (p += 4; *p;) {
		const char *nl = strchr(p, '\n');
		char got[TRACE_EVENT_NAME_MAX + 1];
		long n;
		if (sscanf(p, "%ld %63s", &n, got) == 2 && !strcmp(got, name))
			return n;
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

static void flight_case(void)
{
	const char *log = cli_path("flight.ptlog");
	int out[2];
	char line[256], steps[16];

	snprintf(steps, sizeof steps, "%d", STEPS);
	REQUIRE(pipe(out) == 0);
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		execl(flight, flight, log, steps, (char *)NULL);
		_exit(126);
	}
	close(out[1]);
	FILE *f = fdopen(out[0], "r");
	REQUIRE(f != NULL);
	char want[128];
	snprintf(want, sizeof want, "flight: 2 workers recorded %d steps each\n", STEPS);
	CHECK(read_line(f, line, sizeof line) && !strcmp(line, want));
	CHECK(read_line(f, line, sizeof line) && cli_contains(line, "kill -USR1"));
	for (int k = 0; k < 2; k++) { /* two dumps: the second finds no step */
		kill(pid, SIGUSR1);
		snprintf(want, sizeof want, "flight: dumped to %s\n", log);
		CHECK(read_line(f, line, sizeof line) && !strcmp(line, want));
	}
	kill(pid, SIGTERM);
	CHECK(read_line(f, line, sizeof line) && !strcmp(line, "flight: last dump written; ended\n"));
	CHECK(read_line(f, line, sizeof line) == NULL);
	fclose(f);
	CHECK_EQ(t_wait_for(pid, 20000), 0);

	char *o = NULL, *e = NULL;
	CHECK_EQ(cli_run((char *const[]){ (char *)readlog, (char *)log, NULL }, &o, &e), 0);
	REQUIRE(o != NULL);
	/* per worker: the steps seen, the last, holes; where the flushes are */
	long seen[2] = { 0, 0 }, last[2] = { -1, -1 }, holes = 0, steps_after_flush = 0;
	long first_overflow = -1, first_resume = -1, first_step_at = -1, flush_starts = 0, nline = 0;
	long lines_steps = 0;
	for (const char *p = o; *p && strncmp(p, "--\n", 3);) {
		const char *nl = strchr(p, '\n');
		REQUIRE(nl != NULL);
		char name[64] = "";
		int w = -1;
		long n = -1;
		CHECK(sscanf(p, "%*s %*s %63s", name) == 1);
		if (!strcmp(name, "step")) {
			CHECK(sscanf(p, "%*s %*s step \"worker %d step %ld\"", &w, &n) == 2);
			CHECK(w == 0 || w == 1);
			if (w == 0 || w == 1) {
				holes += last[w] >= 0 && n != last[w] + 1;
				last[w] = n;
				seen[w]++;
			}
			lines_steps++;
			steps_after_flush += flush_starts > 0;
			if (first_step_at < 0)
				first_step_at = nline;
		} else if (!strcmp(name, "posix_trace_overflow")) {
			if (first_overflow < 0)
				first_overflow = nline;
		} else if (!strcmp(name, "posix_trace_resume")) {
			if (first_resume < 0)
				first_resume = nline;
		} else if (!strcmp(name, "posix_trace_flush_start")) {
			flush_starts++;
		}
		nline++;
		p = nl + 1;
	}
	CHECK_EQ(holes, 0);
	/* the stream lost its oldest: a worker whose steps are kept has its
	 * latest kept (the workers may have run one after the other: then
	 * only the last one's are) */
	for (int w = 0; w < 2; w++)
		CHECK(seen[w] == 0 || last[w] == STEPS - 1);
	CHECK(seen[0] + seen[1] > 0 && seen[0] + seen[1] < STEPS); /* it holds ~1500 */
	CHECK_EQ(steps_after_flush, 0);
	CHECK_EQ(flush_starts, 3); /* two dumps and shutdown's */
	/* the oldest lost come first: the log opens with the START (the
	 * controller's events are not overwritten by the threads') and the
	 * pair of what was lost (either way round: both are stamped at its
	 * time when the loss reports were overwritten), and a RESUME comes
	 * before the first kept step; when the workers ran side by side, the
	 * older steps of one were lost while the other's were kept: more
	 * pairs, each where it happened */
	CHECK_EQ(count_of(o, "posix_trace_start"), 1);
	CHECK(first_overflow <= 1 && first_resume > first_overflow && first_resume < first_step_at);
	CHECK(count_of(o, "posix_trace_overflow") >= 1);
	CHECK_EQ(count_of(o, "posix_trace_resume"), count_of(o, "posix_trace_overflow"));
	CHECK_EQ(count_of(o, "step"), lines_steps);
	CHECK_EQ(count_of(o, "posix_trace_flush_start"), 3);
	/* what was lost, as `posixtrace info` counts it: with what was kept,
	 * every step the workers recorded and the START */
	char *info = NULL;
	unsigned long long lost = 0;
	CHECK_EQ(cli_run(CLI("info", (char *)log), &info, NULL), 0);
	const char *lp = info ? strstr(info, "\nlost events") : NULL;
	CHECK(lp && sscanf(lp, "\nlost events %llu events lost", &lost) == 1);
	CHECK_EQ((long long)lost + lines_steps + count_of(o, "posix_trace_start"), 2 * STEPS + 1);
	free(info);
	struct cli_ev *ev = NULL;
	int n = cli_read_log(log, &ev);
	CHECK_EQ(cli_count(ev, n, "step"), lines_steps);
	CHECK_EQ(n, nline);
	free(ev);
	free(o);
	free(e);
}

static void app_case(void)
{
	const char *log = cli_path("app.ptlog");
	char *o = NULL, *e = NULL;

	REQUIRE(cli_record_app(log, "0") == 0);
	CHECK_EQ(cli_run((char *const[]){ (char *)readlog, (char *)log, NULL }, &o, &e), 0);
	REQUIRE(o != NULL);
	CHECK_EQ(count_of(o, "request"), 3 * 20);
	CHECK_EQ(count_of(o, "reply"), 3 * 20);
	CHECK_EQ(count_of(o, "tick"), 10);
	CHECK_EQ(count_of(o, "child_step"), 5);
	CHECK_EQ(count_of(o, "app_start"), 1);
	CHECK_EQ(count_of(o, "posix_trace_start"), 1);
	CHECK(cli_contains(o, " app_start \"constructor\"\n"));
	CHECK(cli_contains(o, " request \"GET /item/2/19\"\n"));
	CHECK(cli_contains(o, " child_step \"child step 4\"\n"));
	/* every line before "--" names one of the log's types */
	long lines = 0, named = 0;
	for (const char *p = o; *p && strncmp(p, "--\n", 3); lines++) {
		const char *nl = strchr(p, '\n');
		REQUIRE(nl != NULL);
		named += strncmp(strchr(strchr(p, ' ') + 1, ' ') + 1, "event-", 6) != 0;
		p = nl + 1;
	}
	CHECK_EQ(named, lines);
	CHECK_EQ(lines, 1 + 1 + 60 + 60 + 10 + 5 + 3); /* + START, STOP, the flush pair */
	free(o);
	free(e);
}

static void bad_case(void)
{
	char *o = NULL, *e = NULL;
	const char *p = cli_path("not-a-log");
	FILE *f = fopen(p, "w");
	REQUIRE(f != NULL);
	fputs("hello\n", f);
	fclose(f);
	CHECK_EQ(cli_run((char *const[]){ (char *)readlog, (char *)p, NULL }, &o, &e), 1);
	CHECK(cli_contains(e, "readlog: ") && cli_contains(e, "not-a-log"));
	free(o);
	free(e);
}

int main(void)
{
	T_BEGIN(120);
	cli_setup();
	if (access(flight, X_OK) || access(readlog, X_OK))
		T_SKIP("examples/flight or examples/readlog is not built (make examples)");
	flight_case();
	app_case();
	bad_case();
	T_END();
}
