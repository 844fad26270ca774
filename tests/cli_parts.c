/*
 * cli_parts.c -- a directory of logs, the parts of one recording, read as
 * one trace by every reading command (cli/read/parts.c), against a
 * witness: this program writes the parts itself (parts_util.h).
 *
 *  - show DIR: every event of the parts (as each part read alone has
 *    them), one line each; per thread the seqs 0, 1, 2... in order across
 *    the parts, none missing or twice.
 *  - info, stats --json: totals the sums of the parts' (tick under one
 *    name whatever its id in each part, system types at their own ids),
 *    the span across the cut complete; the lost events those of the lossy
 *    part (babeltrace2 says as many discarded).
 *  - query DIR: the count of events; a directory and a file: two logs.
 *  - parts of a recording by another process (`cli_parts recorded DIR`),
 *    the second without a START (overwritten): the recorder is known in
 *    both, its pid no process of the trace (but with --all).
 *  - the parts named one by one (several LOG operands) read as the
 *    directory does; a file named twice read once.
 * The parts and their witness: parts_util.h.
 */
#include <dirent.h>
#include <pthread.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "view_http.h"
#include "parts_util.h"

static int have_query; /* query is built (SQLite) */

/* The recorder's part without a START of its own is still the recorder's:
 * its events the trace's (pid 0), its pid no process of the set. */
static void check_recorded(void)
{
	const char *rd = cli_path("recorded");
	char *out = NULL, r2[600], pidtxt[32], line[1024];
	struct cli_ev *ev;
	REQUIRE(mkdir(rd, 0700) == 0);
	CHECK_EQ(cli_run((char *const[]){ self, "recorded", (char *)rd, NULL }, &out, NULL), 0);
	long rec = out ? strtol(out, NULL, 10) : 0;
	free(out);
	REQUIRE(rec > 0);
	snprintf(r2, sizeof r2, "%s/r-2.ptlog", rd);
	int n = cli_read_log(r2, &ev);
	CHECK_EQ(cli_count(ev, n, "posix_trace_start"), 0); /* (overwritten) */
	int mine = 0;
	for (int i = 0; i < n; i++)
		mine += ev[i].info.posix_pid == (pid_t)rec;
	CHECK(mine > 0); /* its STOP and flush events */
	free(ev);
	CHECK_EQ(cli_run(CLI("stats", (char *)rd), &out, NULL), 0);
	snprintf(pidtxt, sizeof pidtxt, "%ld ", rec);
	int listed = 0, in_procs = 0;
	for (const char *p = out; cli_next_line(&p, line, sizeof line) == 0;) {
		if (!strncmp(line, "process ", 8))
			in_procs = 1;
		else if (!line[0])
			in_procs = 0;
		else if (in_procs && !strncmp(line, pidtxt, strlen(pidtxt)))
			listed++;
	}
	CHECK_EQ(listed, 0);
	free(out);
	CHECK_EQ(cli_run(CLI("stats", "--all", (char *)rd), &out, NULL), 0);
	CHECK(cli_contains(out, pidtxt)); /* (with --all it is there) */
	free(out);
}

/* Two logs recorded at the same time, given together: read together,
 * merged by time (the turns alternate in show), said in a note. */
static void check_overlap(void)
{
	const char *pd = cli_path("pp");
	char *out = NULL, *err = NULL, line[1024], pa[600], pb[600];
	REQUIRE(mkdir(pd, 0700) == 0);
	snprintf(pa, sizeof pa, "%s/ping.ptlog", pd);
	snprintf(pb, sizeof pb, "%s/pong.ptlog", pd);
	CHECK_EQ(cli_run((char *const[]){ self, "pingpong", pa, pb, NULL }, NULL, NULL), 0);
	struct cli_ev *ev;
	long na = cli_read_log(pa, &ev);
	free(ev);
	long nb = cli_read_log(pb, &ev);
	free(ev);
	CHECK_EQ(cli_run(CLI("show", (char *)pd), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), na + nb);
	CHECK(cli_contains(err, "overlap in time: read together"));
	/* the turns: 200/0, 201/0, 200/1, 201/1... and the times in order */
	long k = 0, bad = 0;
	double prev = -1e30;
	for (const char *p = out; cli_next_line(&p, line, sizeof line) == 0;) {
		double tm = strtod(line, NULL);
		bad += tm < prev;
		prev = tm;
		const char *a = strstr(line, "t="), *b = strstr(line, "seq=");
		if (!a || !b || !strstr(line, " pp "))
			continue;
		bad += strtol(a + 2, NULL, 10) != 200 + k % 2 || strtol(b + 4, NULL, 10) != k / 2;
		k++;
	}
	CHECK_EQ(k, 2 * PP);
	CHECK_EQ(bad, 0);
	free(out);
	free(err);
	/* query of the directory (one log): every event, ids in time order */
	if (have_query) {
		char want[64];
		CHECK_EQ(cli_run(CLI("query", "--csv", (char *)pd,
		                     "SELECT count(*), sum(name = 'pp'), sum(d < 0) FROM "
		                     "(SELECT name, ts - lag(ts) OVER (ORDER BY id) AS d FROM event)"),
		                 &out, NULL), 0);
		snprintf(want, sizeof want, "\n%ld,%d,0\r", na + nb, 2 * PP);
		CHECK(cli_contains(out, want));
		if (!cli_contains(out, want))
			fprintf(stderr, "query: %s (want %s)\n", out ? out : "", want + 1);
		free(out);
	}
}

static void run(const char *dir, char *const *part)
{
	char *out = NULL, *err = NULL, *info = NULL;

	/* show: every event once, per thread in order across the parts */
	CHECK_EQ(cli_run(CLI("show", (char *)dir), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), total);
	check_witness("show", out, "t=", "seq=");
	CHECK(!cli_contains(err, "missing"));
	free(out);
	free(err);

	/* the map of loaded code: each part's entries, each once */
	static char objs_parts[1 << 16], objs_set[1 << 16];
	for (int k = 0; k < NALL; k++) {
		CHECK_EQ(cli_run(CLI("info", part[k]), &info, NULL), 0);
		objects_of(info, objs_parts, sizeof objs_parts);
		free(info);
	}
	sort_unique(objs_parts);
	CHECK_EQ(cli_run(CLI("info", (char *)dir), &info, NULL), 0);
	objects_of(info, objs_set, sizeof objs_set);
	free(info);
	cli_sort_lines(objs_set);
	CHECK(objs_parts[0] && !strcmp(objs_parts, objs_set));
	if (strcmp(objs_parts, objs_set))
		fprintf(stderr, "the parts' objects:\n%s\nthe set's:\n%s", objs_parts, objs_set);

	/* info and stats: the sums; tick one type; the span across the cut */
	CHECK_EQ(cli_run(CLI("info", (char *)dir), &info, NULL), 0);
	CHECK_EQ(info_lost(info), lost);
	CHECK_EQ(info_events(info), total);
	CHECK_EQ(info_type_count(info, "tick"), (long)NTH * NPARTS * PER + PER);
	CHECK_EQ(info_type_count(info, "zzz"), 1);
	CHECK(info_type_id(info, "zzz") > POSIX_TRACE_UNNAMED_USEREVENT); /* a user type's id */
	/* system types keep their ids whatever a part lists */
	CHECK_EQ(info_type_id(info, "posix_trace_start"), POSIX_TRACE_START);
	CHECK_EQ(info_type_count(info, "posix_trace_start"), starts);
	CHECK(starts >= NPARTS + 1); /* (the lossy part's may be overwritten) */
	long eid = info_type_id(info, "posix_trace_error");
	CHECK(eid == -1 || eid == POSIX_TRACE_ERROR);
	CHECK_EQ(count_of(info, ".ptlog ("), NALL); /* the parts listed */
	CHECK(cli_contains(info, "job"));
	free(info);
	CHECK_EQ(cli_run(CLI("stats", "--json", (char *)dir), &out, NULL), 0);
	CHECK(cli_contains(out, "{\"name\":\"job\",\"begin\""));
	const char *j = strstr(out ? out : "", "{\"name\":\"job\",\"begin\"");
	CHECK(j && strstr(j, "\"count\":1,") && strstr(j, "\"incomplete\":0"));
	free(out);
	/* a part alone has half a span: incomplete */
	CHECK_EQ(cli_run(CLI("stats", "--json", part[0]), &out, NULL), 0);
	j = strstr(out ? out : "", "{\"name\":\"job\",\"begin\"");
	CHECK(j && strstr(j, "\"count\":0,"));
	free(out);

	/* several LOG operands: the same as the directory */
	CHECK_EQ(cli_run(CLI("show", part[2], part[0], part[1], part[3], part[5], part[4]), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), total);
	check_witness("show FILE...", out, "t=", "seq=");
	free(out);

	/* a part named twice, or in its directory and alone: read once */
	CHECK_EQ(cli_run(CLI("show", part[0], part[0]), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), part_n[0]);
	CHECK(cli_contains(err, "read once"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("show", part[1], (char *)dir), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), total);
	free(out);

	/* query: the directory is one log; with a file beside it, two */
	int rc = cli_run(CLI("query", "--csv", (char *)dir, "SELECT count(*), count(DISTINCT utid) FROM event"), &out, &err);
	have_query = rc == 0 || !cli_contains(err, "SQLite");
	if (have_query) {
		char want[64];
		CHECK_EQ(rc, 0);
		snprintf(want, sizeof want, "\n%ld,", total);
		CHECK(cli_contains(out, want));
		free(out);
		free(err);
		CHECK_EQ(cli_run(CLI("query", "--csv", (char *)dir, part[0],
		                     "SELECT count(*), count(DISTINCT log) FROM event"), &out, &err), 0);
		snprintf(want, sizeof want, "\n%ld,2", total + part_n[0]);
		CHECK(cli_contains(out, want));
		free(out);
		free(err);
		CHECK_EQ(cli_run(CLI("query", "--csv", (char *)dir,
		                     "SELECT count(*) FROM slice WHERE name = 'job' AND dur > 0"), &out,
		                 &err), 0);
		CHECK(cli_contains(out, "\n1\r\n"));
		free(out);
		free(err);
		out = err = NULL;
		/* the map of loaded code: what the writer's parts repeat, once */
		long objs[NALL + 1];
		for (int k = 0; k <= NALL; k++) {
			CHECK_EQ(cli_run(CLI("query", "--csv", k < NALL ? part[k] : (char *)dir,
			                     "SELECT count(*) FROM object"), &out, NULL), 0);
			const char *nl = out ? strchr(out, '\n') : NULL;
			objs[k] = nl ? strtol(nl + 1, NULL, 10) : -1;
			free(out);
			out = NULL;
		}
		for (int k = 1; k < NPARTS; k++)
			CHECK_EQ(objs[k], objs[0]); /* (one process: the same map in each) */
		CHECK(objs[0] > 0);
		CHECK_EQ(objs[NALL], objs[0] + objs[NPARTS] + objs[NPARTS + 1]);
	} else {
		printf("note: query is not built (no SQLite): not checked\n");
	}
	free(out);
	free(err);

	check_recorded();
	check_overlap();
}

int main(int argc, char **argv)
{
	return parts_main(argc, argv, run);
}
