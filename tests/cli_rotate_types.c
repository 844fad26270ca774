/*
 * cli_rotate_types.c -- `record --rotate`: the parts after a process
 * ended keep the latest payload description of each event type, even one
 * that process gave, and drop the rest of what it wrote (its identity,
 * its threads, its map of loaded code: no later part holds its events).
 *
 * The program is this test again ("app"): its first child describes
 * "req" (status:i32) and records one; 99 more children record one
 * "child" event each (their entries fill the stream's map area, so the
 * recorder drops those of processes gone); all have ended before the
 * program records 40 000 "req" events of its own, which it never
 * described, across several parts of 64K.  A reader decodes a process's
 * payloads by another's description of the type when it has none of its
 * own (cli/read/tracetypes.c), so:
 *   - `show` of the last part decodes the program's req events
 *     (status=-N): the description is there, though its process is gone;
 *   - the last part's summary holds that description (given by the first
 *     child), and not the first child's identity (dropped with the rest
 *     of what it wrote).
 */
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "../src/ext.h"
#include "rotate_util.h"

#define CHILDREN 100
#define EVENTS 40000

static int app(const char *pidfile)
{
	trace_event_id_t req, child;
	alarm(60);
	posix_trace_eventid_open("req", &req);
	posix_trace_eventid_open("child", &child);
	for (int c = 0; c < CHILDREN; c++) {
		pid_t p = fork();
		if (p < 0)
			return 2;
		if (p == 0) {
			if (c == 0) {
				int32_t st = 1;
				posixtrace_eventid_describe(req, "status:i32");
				posix_trace_event(req, &st, sizeof st);
			}
			posix_trace_event(child, &c, sizeof c);
			_exit(0);
		}
		int ws;
		if (waitpid(p, &ws, 0) != p || !WIFEXITED(ws) || WEXITSTATUS(ws))
			return 3;
		if (c == 0) { /* the describer's pid, for the checks */
			FILE *f = fopen(pidfile, "w");
			if (!f || fprintf(f, "%d\n", (int)p) < 0 || fclose(f))
				return 4;
		}
	}
	for (int32_t i = 1; i <= EVENTS; i++) {
		int32_t st = -i;
		posix_trace_event(req, &st, sizeof st);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "app"))
		return app(argv[2]);
	T_BEGIN(120);
	cli_setup();
	const char *dir = cli_path("parts");
	char *err = NULL;
	const char *pidfile = cli_path("describer");
	int rc = cli_run(CLI("record", "--rotate", "64K", "-o", (char *)dir, "--", argv[0], "app",
	                     (char *)pidfile), NULL, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "record said:\n%s\n", err ? err : "");
	free(err);

	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	char last[600];
	static struct ru_part p[RU_MAXPARTS];
	unsigned parts = ru_list(dir, base, p);
	CHECK(parts >= 3);
	REQUIRE(parts);
	CHECK_EQ(p[parts - 1].n, parts); /* numbered 1 .. parts */
	snprintf(last, sizeof last, "%s/%s-%u.ptlog", dir, base, p[parts - 1].n);

	/* the last part decodes the program's req events by the child's description */
	char *out = NULL;
	CHECK_EQ(cli_run(CLI("show", last, "--type", "req"), &out, NULL), 0);
	char want[32];
	snprintf(want, sizeof want, "status=-%d", EVENTS);
	CHECK(cli_contains(out, want));
	if (!cli_contains(out, want))
		fprintf(stderr, "show %s --type req: %.300s\n", last, out ? out : "");
	free(out);

	/* its summary: the describer's description, not its identity */
	char *pf = cli_slurp(pidfile);
	REQUIRE(pf != NULL);
	int32_t describer = atoi(pf);
	free(pf);
	int fd = open(last, O_RDONLY);
	struct pt_ext_summary *s = NULL;
	REQUIRE(fd >= 0 && pt_ext_log_summary(fd, &s) == 0);
	close(fd);
	int described = 0, ident = 0;
	for (size_t i = 0; i < s->ntypes; i++)
		described += s->types[i].pid == describer && s->types[i].id < __TRACE_EVENT_ID_LIMIT &&
		             !strcmp(s->names[s->types[i].id], "req") &&
		             !strcmp(s->types[i].desc, "status:i32");
	for (size_t i = 0; i < s->nprocs; i++)
		ident += s->procs[i].pid == describer;
	CHECK_EQ(described, 1);
	CHECK_EQ(ident, 0);
	pt_ext_summary_free(s);
	T_END();
}
