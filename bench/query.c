/*
 * query.c -- `make bench`'s query section: SQL over logs of 5 M and 50 M
 * events (tests/query_log.h: 3 processes' threads, spans req, db and hand
 * (keyed), a described payload; 9 events a round, a third of them span
 * ends), each statement timed (wall, and CPU: user + sys) with its peak
 * RSS (getrusage of the child),
 * from `posixtrace query` and from Python's sqlite3 with the extension:
 *
 *   count      SELECT count(*) FROM event
 *   group      SELECT name, count(*) FROM event GROUP BY name
 *   quantiles  p50 and p99 of the span req (pt_quantile), over its slices
 *   slowest    the 100 slowest slices with their thread names
 *   range      count(*) over 1% of the log's time (seeks)
 *   slice range  p50 and p99 of each span name over the slices that begin
 *              in 1% of the log's time (seeks; reads on until they end)
 *
 * and `stats --json` on the same log, whose figures the answers must
 * equal (events, events per type, req's count, p50 and p99): a row that
 * differs says so.
 *
 *   build/bench/query [N1 N2 ...]   sizes in events (default 5000000
 *                                   50000000); QUERY_DIR: where the logs
 *                                   go (default /tmp); QUERY_PY=0: no
 *                                   Python rows
 *
 * The machine may be loaded (a shared VM): the load average is printed
 * with the table.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include "../tests/query_log.h"
#include "../tests/biglog.h"
#include "bench_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

static const char *cli = PT_BUILD_DIR "/posixtrace";
static const char *ext = PT_BUILD_DIR "/libposixtrace_sqlite.so";
static uint64_t trace_events;
static int mismatches;
static double cpu_secs; /* the last run's user + sys (run()) */

/* biglog_run, and the command's CPU time (user + sys) in cpu_secs: what
 * the work costs on a machine others load */
static int run(char *const argv[], const char *out, const char *err, long *rss_kb, double *secs)
{
	struct rusage a, b;
	getrusage(RUSAGE_CHILDREN, &a);
	int rc = biglog_run(argv, out, err, rss_kb, secs);
	getrusage(RUSAGE_CHILDREN, &b);
	cpu_secs = (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec) +
	           (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec) / 1e6 +
	           (double)(b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
	           (double)(b.ru_stime.tv_usec - a.ru_stime.tv_usec) / 1e6;
	return rc;
}

static const char *const cases[][2] = {
	{ "count", "SELECT count(*) FROM event" },
	{ "group", "SELECT name, count(*) FROM event GROUP BY name" },
	{ "quantiles", "SELECT count(*), pt_quantile(dur, 0.5), pt_quantile(dur, 0.99) FROM slice "
	               "WHERE name = 'req'" },
	{ "slowest", "SELECT s.name, s.dur, s.ts, t.name FROM slice s JOIN thread t USING (utid) "
	             "ORDER BY s.dur DESC LIMIT 100" },
	{ "range", NULL },
	{ "slice range", NULL },
};

static const char py_prog[] =
"import sqlite3, sys\n"
"db = sqlite3.connect(':memory:')\n"
"db.enable_load_extension(True)\n"
"db.load_extension(sys.argv[1])\n"
"db.enable_load_extension(False)\n"
"for t in ('event', 'slice', 'thread'):\n"
"    db.execute(\"CREATE VIRTUAL TABLE temp.%s USING posixtrace('%s', '%s')\" % "
"(t, sys.argv[2].replace(\"'\", \"''\"), t))\n"
"for row in db.execute(sys.argv[3]):\n"
"    print(','.join('' if v is None else str(v) for v in row))\n";

/* note: NULL (not compared), "" (the answer is stats'), or how it differs;
 * the row's equal_stats says which: null, 1, 0 */
static void row(const char *what, int rc, double secs, long rss_kb, const char *note)
{
	bench_json("query", what, "trace_events", (double)trace_events, "s", rc ? NAN : secs,
	           "cpu_s", rc ? NAN : cpu_secs,
	           "events_per_s", rc || secs <= 0 ? NAN : (double)trace_events / secs, "rss_mb",
	           (double)rss_kb / 1024.0, "equal_stats",
	           note == NULL || rc ? NAN : note[0] == 0 ? 1.0 : 0.0, NULL);
	printf("  %-24s %7.2f s  %8.2f M events/s  %6.2f s cpu  %7.1f MB%s%s\n", what, secs,
	       secs > 0 ? (double)trace_events / secs / 1e6 : 0.0, cpu_secs, (double)rss_kb / 1024.0,
	       rc ? "  FAILED" : "", note ? note : "");
	fflush(stdout);
}

static char *slurp(const char *p)
{
	FILE *f = fopen(p, "r");
	if (!f)
		return NULL;
	char *s = malloc(1 << 20);
	size_t n = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
	if (s)
		s[n] = 0;
	fclose(f);
	return s;
}

static long long json_num(const char *s, const char *after, const char *key)
{
	const char *p = after ? strstr(s, after) : s, *k;
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	return p && (k = strstr(p, pat)) ? strtoll(k + strlen(pat), NULL, 10) : -1;
}

/* whether body (the rows, CSV) is stats' answer: "" or why not; NULL for
 * a statement stats has no answer to (slowest, the ranges) */
static const char *check(const char *name, const char *body, const char *stats)
{
	static char why[200];
	if (strcmp(name, "count") && strcmp(name, "group") && strcmp(name, "quantiles"))
		return NULL;
	long long v[3], events = json_num(stats, NULL, "events");
	why[0] = 0;
	if (!strcmp(name, "count")) {
		if (strtoll(body, NULL, 10) != events)
			snprintf(why, sizeof why, "  DIFFERS from stats (%lld events)", events);
	} else if (!strcmp(name, "group")) {
		long long sum = 0;
		for (const char *p = body; *p;) {
			const char *nl = strchr(p, '\n'), *c = NULL;
			for (const char *q = p; *q && q != nl; q++)
				c = *q == ',' ? q : c;
			sum += c ? strtoll(c + 1, NULL, 10) : 0;
			p = nl ? nl + 1 : "";
		}
		if (sum != events)
			snprintf(why, sizeof why, "  DIFFERS from stats (%lld, not %lld)", sum, events);
	} else if (!strcmp(name, "quantiles")) {
		if (sscanf(body, "%lld,%lld,%lld", &v[0], &v[1], &v[2]) != 3 ||
		    v[0] != json_num(stats, "{\"name\":\"req\"", "count") ||
		    v[1] != json_num(stats, "{\"name\":\"req\"", "p50_ns") ||
		    v[2] != json_num(stats, "{\"name\":\"req\"", "p99_ns"))
			snprintf(why, sizeof why, "  DIFFERS from stats");
	}
	mismatches += why[0] != 0;
	return why;
}

/* the rows of out: after its header line (posixtrace query) or all (Python) */
static const char *rows_of(const char *out, int header)
{
	const char *nl = header && out ? strchr(out, '\n') : NULL;
	return header ? (nl ? nl + 1 : "") : out ? out : "";
}

static void one(const char *dir, uint64_t n)
{
	char log[600], out[700], stats_out[700], range[300], srange[400], what[64];
	uint64_t rounds = n / 9 ? n / 9 : 1;
	snprintf(log, sizeof log, "%s/pt-bench-query-%llu.ptlog", dir, (unsigned long long)n);
	snprintf(out, sizeof out, "%s.out", log);
	snprintf(stats_out, sizeof stats_out, "%s.stats", log);
	if (qlog_write(log, rounds) != 0) {
		printf("  cannot write %s\n", log);
		return;
	}
	trace_events = qlog_events(rounds);
	printf("\n%llu events (%llu rounds), %s:\n", (unsigned long long)trace_events,
	       (unsigned long long)rounds, log);
	/* stats: the reference */
	long rss = 0;
	double secs = 0;
	int rc = run((char *const[]){ (char *)cli, "stats", "--json", log, NULL }, stats_out,
	                    NULL, &rss, &secs);
	row("stats --json", rc, secs, rss, NULL);
	char *stats = slurp(stats_out);
	/* 1% of the log's time, in its middle */
	uint64_t t0 = QLOG_T0 + rounds / 2 * QLOG_ROUND, span = rounds * QLOG_ROUND / 100;
	snprintf(range, sizeof range, "SELECT count(*) FROM event WHERE ts BETWEEN %llu AND %llu",
	         (unsigned long long)t0, (unsigned long long)(t0 + span));
	snprintf(srange, sizeof srange, "SELECT name, count(*), pt_quantile(dur, 0.5), "
	         "pt_quantile(dur, 0.99) FROM slice WHERE ts BETWEEN %llu AND %llu GROUP BY name",
	         (unsigned long long)t0, (unsigned long long)(t0 + span));
	int py = getenv("QUERY_PY") == NULL || strcmp(getenv("QUERY_PY"), "0") != 0;
	const char *python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : NULL;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *sql = cases[i][1] ? cases[i][1] : !strcmp(cases[i][0], "range") ? range : srange;
		rc = run((char *const[]){ (char *)cli, "query", "--csv", log, (char *)sql, NULL },
		                out, NULL, &rss, &secs);
		char *res = slurp(out);
		snprintf(what, sizeof what, "query %s", cases[i][0]);
		row(what, rc, secs, rss, stats && res ? check(cases[i][0], rows_of(res, 1), stats) : NULL);
		free(res);
		if (!py || !python || access(ext, R_OK) != 0)
			continue;
		rc = run((char *const[]){ (char *)python, "-c", (char *)py_prog, (char *)ext, log,
		                                 (char *)sql, NULL }, out, NULL, &rss, &secs);
		res = slurp(out);
		snprintf(what, sizeof what, "python %s", cases[i][0]);
		row(what, rc, secs, rss, stats && res ? check(cases[i][0], rows_of(res, 0), stats) : NULL);
		free(res);
	}
	free(stats);
	unlink(out);
	unlink(stats_out);
	unlink(log);
}

int main(int argc, char **argv)
{
	static const uint64_t dflt[] = { 5000000, 50000000, 0 };
	const char *dir = getenv("QUERY_DIR") ? getenv("QUERY_DIR") : "/tmp";

	if (access(cli, X_OK) != 0) {
		printf("query: %s is not built\n", cli);
		return 1;
	}
	/* a build without SQLite has no query command to time */
	char probe[700];
	snprintf(probe, sizeof probe, "%s/pt-bench-query-probe", dir);
	if (biglog_run((char *const[]){ (char *)cli, "query", "/dev/null", "SELECT 1", NULL }, NULL,
	               probe, NULL, NULL) == 1) {
		char *why = slurp(probe);
		int without = why && strstr(why, "without SQLite");
		free(why);
		unlink(probe);
		if (without) {
			printf("query: posixtrace was built without SQLite: nothing to time\n");
			return 0;
		}
	}
	unlink(probe);
	bench_sizes("query: SQL over logs (posixtrace query; Python's sqlite3 with "
	            "libposixtrace_sqlite.so)", argc, argv, dir, one, dflt);
	if (mismatches)
		printf("query: %d answers differ from stats'\n", mismatches);
	return mismatches ? 1 : 0;
}
