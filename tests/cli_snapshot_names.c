/*
 * cli_snapshot_names.c -- `record --flight --snapshot-on TYPE[:WHERE]`
 * with event types whose names hold ':' (cli/cmd/flight.c, trig_parse):
 * the condition is what follows the last ':' that begins a valid one; a
 * ':' at the end closes a name whose tail would read as a condition.
 *
 * The program is this test again ("app KIND DIR"): it records the events
 * of KIND every 10 ms until the snapshot is in DIR.
 *   http:request:status<0  type "http:request" (status:i32): 5, then -7;
 *                          the snapshot's trigger is a -7 one (its last)
 *   event:net:rx           type "net:rx", no condition ("rx" is no
 *                          condition: part of the name)
 *   cmp:a>1:               type "cmp:a>1", no condition (the trailing ':')
 *   x:status<<0            said: the condition does not parse, with the
 *                          way to name such a type
 */
#include <dirent.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static char app_path[160]; /* this test, as "app" (the snapshots' name) */

static int app(const char *kind, const char *dir)
{
	trace_event_id_t id;
	alarm(30);
	posix_trace_eventid_open(!strcmp(kind, "http") ? "http:request" : kind, &id);
	if (!strcmp(kind, "http"))
		posixtrace_eventid_describe(id, "status:i32");
	/* again until the snapshot is there (the recorder follows the stream
	 * from a moment after the program starts: what came before it is not
	 * a trigger) */
	while (cli_count_logs(dir) < 1) {
		if (!strcmp(kind, "http")) {
			int32_t st = 5;
			posix_trace_event(id, &st, sizeof st);
			usleep(2000);
			st = -7;
			posix_trace_event(id, &st, sizeof st);
		} else {
			posix_trace_event(id, "x", 1);
		}
		usleep(10000);
	}
	return 0;
}

/* The snapshot of record KIND with trigger TRIG: how many events of type
 * name it holds, and the status of its last one (http). */
static int run(const char *kind, const char *trig, const char *name, int32_t *last_status)
{
	char d[64];
	snprintf(d, sizeof d, "names-%s", kind);
	const char *dir = cli_path(d);
	char *err = NULL;
	/* --max 1: the program records until it sees the snapshot, and under
	 * load a second trigger can come before the first snapshot is written */
	int rc = cli_run(CLI("record", "--flight", "8M", "--snapshot-on", (char *)trig, "--before",
	                     "1s", "--max", "1", "-o", (char *)dir, "--", app_path, "app",
	                     (char *)kind, (char *)dir), NULL, &err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(cli_count_logs(dir), 1);
	if (rc || cli_count_logs(dir) != 1)
		fprintf(stderr, "record --snapshot-on '%s' said:\n%s\n", trig, err ? err : "");
	free(err);
	char path[600];
	snprintf(path, sizeof path, "%s/app-1.ptlog", dir);
	int fd = open(path, O_RDONLY), n = 0;
	trace_id_t l;
	if (fd < 0 || posix_trace_open(fd, &l)) {
		CHECK(!"the snapshot opens");
		return -1;
	}
	struct posix_trace_event_info e;
	unsigned char buf[64];
	size_t len;
	int unav;
	while (posix_trace_getnext_event(l, &e, buf, sizeof buf, &len, &unav) == 0 && !unav) {
		char nm[TRACE_EVENT_NAME_MAX + 1] = "";
		posix_trace_eventid_get_name(l, e.posix_event_id, nm);
		if (strcmp(nm, name))
			continue;
		n++;
		if (last_status && len == 4)
			memcpy(last_status, buf, 4);
	}
	posix_trace_close(l);
	close(fd);
	return n;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "app"))
		return app(argv[2], argv[3]);
	T_BEGIN(60);
	cli_setup();
	/* the program is this test, run as "app" (the snapshots' name) */
	snprintf(app_path, sizeof app_path, "%s/app", cli_dir);
	char self[4096];
	REQUIRE(realpath(argv[0], self) != NULL);
	REQUIRE(symlink(self, app_path) == 0);

	int32_t st = 0;
	/* a condition after a name that holds ':' */
	CHECK(run("http", "http:request:status<0", "http:request", &st) >= 2);
	CHECK_EQ(st, -7); /* the window ends at the -7 one: it fired, the 5 did not */
	/* a name with ':' and no condition; the keyword prefix too */
	CHECK(run("net:rx", "event:net:rx", "net:rx", NULL) >= 1);
	/* a name whose tail reads as a condition, closed by ':' */
	CHECK(run("cmp:a>1", "cmp:a>1:", "cmp:a>1", NULL) >= 1);

	/* a condition that does not parse, said, with the way to name such a type */
	char *err = NULL;
	CHECK_EQ(cli_run(CLI("record", "--flight", "8M", "--snapshot-on", "x:status<<0", "-o",
	                     (char *)cli_path("bad"), "--", "true"), NULL, &err), 2);
	CHECK(cli_contains(err, "condition 'status<<0'"));
	CHECK(cli_contains(err, "'x:status<<0:'"));
	free(err);
	T_END();
}
