/*
 * cli_rotate_procs.c -- `record --rotate`: every part names the process,
 * the thread and the code of each of its events, even of a process that
 * ended before the part began.  The recorder drops what a process gone
 * wrote to the map (its identity, its threads, its map of loaded code)
 * once the log has it; it dropped it while events of the process were
 * still in the stream, not yet in the log, and those then went into the
 * next part without it: shown with no command, their code as raw
 * addresses (about a third of the events in half the parts, with 600
 * children).
 *
 * The program is this test again ("app"): it forks CHILDREN children one
 * after another, each recording EVENTS "child" events of 200 bytes from
 * child_events() and ending; parts of 200K (about 1 100 events each).
 * Checked, for every part: `show` prints each of its child events with
 * the program's name and at child_events, never at a raw address (built
 * without libdw, the command names code by file and offset only: then at
 * the program's file, "cli_rotate_procs+0x..."); the events of all parts
 * add up to CHILDREN * EVENTS.
 */
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

#define CHILDREN 600
#define EVENTS   10

__attribute__((noinline)) static void child_events(trace_event_id_t ev)
{
	char pl[200] = { 0 };
	for (int k = 0; k < EVENTS; k++) {
		pl[0] = (char)k;
		posix_trace_event(ev, pl, sizeof pl);
	}
}

static int app(void)
{
	trace_event_id_t ev;
	alarm(60);
	if (posix_trace_eventid_open("child", &ev) != 0)
		return 2;
	for (int c = 0; c < CHILDREN; c++) {
		pid_t p = fork();
		if (p < 0)
			return 3;
		if (p == 0) {
			child_events(ev);
			_exit(0);
		}
		int ws;
		if (waitpid(p, &ws, 0) != p || !WIFEXITED(ws) || WEXITSTATUS(ws))
			return 4;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "app"))
		return app();
	T_BEGIN(120);
	cli_setup();
	const char *dir = cli_path("procs");
	char *err = NULL;
	/* (--no-loss: each child takes a chunk of its own, and a recorder kept
	 * off the CPU for a moment on a loaded machine lost 2 800 events to a
	 * stream out of chunks; what is checked here is the names) */
	int rc = cli_run(CLI("record", "--no-loss", "--rotate", "200K", "-o", (char *)dir, "--",
	                     argv[0], "app"),
	                 NULL, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "record said:\n%s\n", err ? err : "");
	free(err);
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	/* where its events are: child_events, or (file+offset only) the program */
	char at[256];
	if (cli_has_libdw())
		snprintf(at, sizeof at, "@ child_events");
	else
		snprintf(at, sizeof at, "@ %s+0x", base);
	int parts = cli_count_logs(dir);
	CHECK(parts >= 3);
	long total = 0;
	for (int k = 1; k <= parts; k++) {
		char path[600], line[1024];
		snprintf(path, sizeof path, "%s/%s-%d.ptlog", dir, base, k);
		char *out = NULL;
		CHECK_EQ(cli_run(CLI("show", path), &out, NULL), 0);
		long events = 0, named = 0, placed = 0;
		for (const char *s = out; cli_next_line(&s, line, sizeof line) == 0;) {
			if (!strstr(line, " child "))
				continue;
			events++;
			named += strstr(line, base) != NULL;
			placed += strstr(line, at) != NULL;
		}
		if (named != events || placed != events)
			fprintf(stderr, "%s: %ld child events, %ld with the program's name, %ld at "
			        "'%s'\n", path, events, named, placed, at);
		CHECK_EQ(named, events);
		CHECK_EQ(placed, events);
		total += events;
		free(out);
	}
	CHECK_EQ(total, (long)CHILDREN * EVENTS);
	T_END();
}
