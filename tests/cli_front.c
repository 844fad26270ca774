/*
 * cli_front.c -- the program in front, the recorder behind: a log of
 * examples/app made by `posixtrace record`.  The recorder's pid is the
 * witness read from the log itself (the writer of POSIX_TRACE_START, an
 * event the app never writes); the program's pids are the writers of its
 * own events.  Without --all no output of show, info, stats --json or the
 * Chrome export names the recorder's pid, and info lists none of its
 * loaded code; its system events are all still there, as the trace's
 * (pid 0).  With --all the recorder comes back.  A program that traces
 * itself (this test, run as "self LOG") writes its own START: nothing of
 * it is left out.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

/* How many lines of s contain w. */
static int lines_with(const char *s, const char *w)
{
	char line[4096];
	int k = 0;
	for (int i = 0; cli_line(s, i, line, sizeof line) == 0; i++)
		k += strstr(line, w) != NULL;
	return k;
}

static trace_event_id_t mine;

static void *worker(void *arg)
{
	(void)arg;
	posix_trace_event(mine, "w", 1);
	return NULL;
}

/* The program that traces itself into log: 0 on success. */
static int self(const char *log)
{
	trace_attr_t a;
	trace_id_t t;
	pthread_t th;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || posix_trace_attr_init(&a) || posix_trace_create_withlog(0, &a, fd, &t) ||
	    posix_trace_eventid_open("mine", &mine) || posix_trace_start(t))
		return 1;
	posix_trace_event(mine, "m", 1);
	if (pthread_create(&th, NULL, worker, NULL) || pthread_join(th, NULL))
		return 1;
	return posix_trace_stop(t) || posix_trace_shutdown(t);
}

/* A log of this program tracing itself: nothing is left out. */
static void run_self(const char *me)
{
	const char *log = cli_path("self.ptlog");
	char *out = NULL, *err = NULL, who[32];
	struct cli_ev *ev;

	CHECK_EQ(cli_run((char *const[]){ (char *)me, "self", (char *)log, NULL }, NULL, NULL), 0);
	int n = cli_read_log(log, &ev);
	REQUIRE(n >= 6);
	snprintf(who, sizeof who, "%d/", (int)ev[0].info.posix_pid);
	CHECK_EQ(ev[0].info.posix_event_id, POSIX_TRACE_START);
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), n);
	int k = 0;
	for (int i = 0; i < n; i++)
		k += ev[i].info.posix_pid == ev[0].info.posix_pid;
	CHECK_EQ(lines_with(out, who), k); /* all of its events, START included */
	CHECK_EQ(k, n);
	printf("a program tracing itself: %d events, all under pid %d\n", n, (int)ev[0].info.posix_pid);
	free(out), free(err), free(ev);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "self"))
		return self(argv[2]);
	char *out = NULL, *err = NULL, rec[32], recq[48];
	struct cli_ev *ev;

	T_BEGIN(120);
	cli_setup();
	const char *log = cli_path("app.ptlog"), *json = cli_path("app.json");
	/* record, info and live count the program's processes and threads:
	 * examples/app is 2 processes (it forks one child) and 5 threads
	 * (main, 3 workers; the child's main) */
	const char *counts = "from 2 processes (5 threads)";
	CHECK_EQ(cli_run(CLI("record", "--force", "-o", (char *)log, "--", (char *)cli_app, "0"),
	                 NULL, &err), 0);
	CHECK(cli_contains(err, counts));
	free(err);
	CHECK_EQ(cli_run(CLI("live", "--", (char *)cli_app, "0"), &out, &err), 0);
	CHECK(cli_contains(err, counts));
	free(out), free(err);
	int n = cli_read_log(log, &ev), nsys = 0;
	pid_t recorder = 0, app = 0;
	for (int i = 0; i < n; i++) {
		if (ev[i].info.posix_event_id == POSIX_TRACE_START)
			recorder = ev[i].info.posix_pid;
		if (!strcmp(ev[i].name, "app_start"))
			app = ev[i].info.posix_pid;
		nsys += ev[i].info.posix_event_id < 17 && !strncmp(ev[i].name, "posix_trace_", 12);
	}
	REQUIRE(recorder > 0 && app > 0 && recorder != app);
	CHECK_EQ(nsys, 4); /* start, stop, flush start and stop */
	snprintf(rec, sizeof rec, "\n  %8d  ", (int)recorder); /* a row of processes (its pid may be the program's ppid) */
	snprintf(recq, sizeof recq, "\"pid\":%d,", (int)recorder);
	char recslash[32];
	snprintf(recslash, sizeof recslash, "%d/", (int)recorder);

	/* show: the system events are the trace's, no lane of the recorder */
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), n);
	CHECK_EQ(lines_with(out, recslash), 0);
	CHECK_EQ(lines_with(out, "posix_trace_"), nsys);
	free(out), free(err);
	CHECK_EQ(cli_run(CLI("show", "--all", (char *)log), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), n);
	CHECK_EQ(lines_with(out, recslash), nsys);
	free(out), free(err);

	/* info: neither the process, its threads nor its loaded code */
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, &err), 0);
	CHECK(!cli_contains(out, rec) && !cli_contains(out, recslash));
	CHECK(!cli_contains(out, "/posixtrace\n"));
	CHECK(cli_contains(out, "/examples/app\n"));
	CHECK(cli_contains(out, "processes (2)\n") && cli_contains(out, "threads (5)\n"));
	free(out), free(err);
	CHECK_EQ(cli_run(CLI("info", "--all", (char *)log), &out, &err), 0);
	CHECK(cli_contains(out, rec) && cli_contains(out, recslash));
	CHECK(cli_contains(out, "/posixtrace\n"));
	CHECK(cli_contains(out, "processes (3)\n")); /* the recorder's too */
	free(out), free(err);

	/* stats --json: the same counts, no trace of the pid */
	CHECK_EQ(cli_run(CLI("stats", "--json", (char *)log), &out, &err), 0);
	CHECK(!cli_contains(out, recq));
	CHECK(cli_contains(out, "\"name\":\"posix_trace_start\",\"count\":1"));
	free(out), free(err);
	CHECK_EQ(cli_run(CLI("stats", "--json", "--all", (char *)log), &out, &err), 0);
	CHECK(cli_contains(out, recq));
	free(out), free(err);

	/* the Chrome export: no process of the recorder, its events kept */
	CHECK_EQ(cli_run(CLI("export", "-f", "chrome", "--force", "-o", (char *)json, (char *)log),
	                 &out, &err), 0);
	free(out), free(err);
	char *c = cli_slurp(json);
	REQUIRE(c != NULL);
	CHECK(!cli_contains(c, recq));
	CHECK(cli_contains(c, "\"name\":\"posix_trace_start\""));
	free(c);
	CHECK_EQ(cli_run(CLI("export", "--all", "-f", "chrome", "--force", "-o", (char *)json,
	                     (char *)log), &out, &err), 0);
	free(out), free(err);
	c = cli_slurp(json);
	REQUIRE(c != NULL);
	CHECK(cli_contains(c, recq));
	free(c);

	free(ev);
	run_self("/proc/self/exe");
	cli_cleanup();
	T_END();
}
