/*
 * cli_query.c -- `posixtrace query`: SQL over logs (cli/query/,
 * posixtrace-query(1)), against logs whose every row is known
 * (tests/query_log.h) and a recorded examples/app.
 *
 *  - every table and column: exact values (event, thread, process, type,
 *    loss, object, slice, args, flow), call sites from a recorded log;
 *  - the same answers as stats: counts per type, span counts and p50 /
 *    p99 (pt_quantile is stats' histogram);
 *  - pushdown: EXPLAIN QUERY PLAN names the constraints passed to the
 *    reader, and pt_visited() (events read) shows a 1% ts range reads
 *    about 1% of the log, an id range stops at its end, while the answers
 *    equal those of the same statement with the pushdown defeated (ts+0);
 *  - several logs: one set, the column log, ids and utids unique;
 *  - output: --csv, --json, the aligned table, statements from -f FILE
 *    and stdin, and at a terminal a prompt that takes a statement over
 *    two lines and ends at Ctrl-D;
 *  - hostile: a statement cannot write a file (ATTACH, VACUUM INTO); a
 *    file that is not a log, a log cut at any of many lengths, and the
 *    log fuzzers' corpus give an error or an answer, never a crash.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "query_log.h"

#define N 10        /* rounds of the small log */
#define NBIG 100000 /* rounds of the log for pushdown (900 003 events) */

static const char *small, *big;

static long long q_int(const char *log, const char *sql)
{
	char *s = cli_query_csv(log, sql);
	long long v = strtoll(s, NULL, 10);
	free(s);
	return v;
}

#define CHECK_Q(log, sql, want) do { \
	char *got_ = cli_query_csv(log, sql); \
	if (strcmp(got_, want)) \
		fprintf(stderr, "%s:\n got: [%s]\nwant: [%s]\n", sql, got_, want); \
	CHECK(!strcmp(got_, want)); \
	free(got_); \
} while (0)

static void tables(void)
{
	/* type */
	CHECK_Q(small, "SELECT id, name, description, count FROM type WHERE id >= 17 ORDER BY id",
	        "17,req/begin,id:u64,11\n18,req/end,,10\n19,db/begin,,10\n20,db/end,,10\n"
	        "21,hand/async-begin,,10\n22,hand/async-end,key:u64,10\n"
	        "23,tick,\"n:u32,cost:f64,who:string\",10\n24,note,,20\n");
	CHECK_Q(small, "SELECT start_ts - 1764255600000000000, end_ts - 1764255600000000000 "
	               "FROM type WHERE name = 'tick'", "700,90700\n");
	/* thread: utid by first event; the trace's own lane (pid 0) */
	CHECK_Q(small, "SELECT utid, tid, pthread, name, upid, pid, start_ts - 1764255600000000000, "
	               "end_ts - 1764255600000000000, count FROM thread ORDER BY utid",
	        "0,101,545460887552,main,1,100,0,100000,56\n"
	        "1,102,545460891648,worker-1,1,100,500,90800,15\n"
	        "2,201,545460895744,child,2,200,700,92000,20\n"
	        "3,,,,0,0,49800,49900,2\n");
	/* process */
	CHECK_Q(small, "SELECT upid, pid, ppid, parent_upid, cmdline, threads, count, start_ts - "
	               "1764255600000000000, end_ts - 1764255600000000000 FROM process",
	        "0,0,,,,1,2,49800,49900\n1,100,1,,server --port 80,2,71,0,100000\n"
	        "2,200,100,1,child,1,20,700,92000\n");
	/* loss */
	CHECK_Q(small, "SELECT ts - 1764255600000000000, utid, count FROM loss", "49900,3,5\n");
	/* event: every column of one event (round 3's req/begin: 3 * 9) */
	CHECK_Q(small, "SELECT id, ts - 1764255600000000000, type, name, utid, upid, pid, tid, "
	               "thread, hex(payload), args, address FROM event WHERE id = 27",
	        "27,30000,17,req/begin,0,1,100,101,main,0300000000000000,\"{\"\"id\"\":3}\","
	        "4198417\n");
	CHECK_Q(small, "SELECT args FROM event WHERE name = 'tick' AND ts = 1764255600000010700",
	        "\"{\"\"n\"\":1,\"\"cost\"\":0.5,\"\"who\"\":\"\"c\"\"}\"\n");
	CHECK_EQ(q_int(small, "SELECT count(*) FROM event"), qlog_events(N));
	CHECK_Q(small, "SELECT count(*), count(function), count(file), count(line), count(object) "
	               "FROM event", "93,0,0,0,0\n"); /* (no map of loaded code in it) */
	/* slice: ids are their begin's; db inside req */
	CHECK_Q(small, "SELECT name, count(*), sum(dur), min(depth), max(depth) FROM slice "
	               "GROUP BY name ORDER BY name",
	        "db,10,2000,1,1\nhand,10,4500,0,0\nreq,10,10450,0,0\n");
	CHECK_EQ(q_int(small, "SELECT count(*) FROM slice s JOIN slice p ON s.parent_id = p.id "
	                      "WHERE s.name = 'db' AND p.name = 'req' AND p.ts + 100 = s.ts"), N);
	CHECK_Q(small, "SELECT id, ts - 1764255600000000000, dur, utid, depth, parent_id, key, "
	               "arg_set_id, end_id, end_utid, args, end_args FROM slice WHERE name = 'req' "
	               "AND id = 47",
	        "47,50000,1050,0,0,,,47,54,0,\"{\"\"id\"\":5}\",\n");
	CHECK_Q(small, "SELECT id, key, utid, end_utid, parent_id, args, end_args FROM slice WHERE "
	               "name = 'hand' AND key IN (2, 3)",
	        "19,2,0,1,,,\"{\"\"key\"\":2}\"\n28,3,0,0,,,\"{\"\"key\"\":3}\"\n");
	/* flow: the keyed spans that ended on another thread */
	CHECK_Q(small, "SELECT count(*), sum(key), min(utid_out), max(utid_in), "
	               "sum(ts_in - ts_out) FROM flow", "5,20,0,1,2250\n");
	CHECK_Q(small, "SELECT id, slice_out, slice_in, name, key FROM flow WHERE key = 4",
	        "37,37,40,hand,4\n");
	/* --span pairs two other types, as stats --span does (and is checked) */
	char *out = NULL, *err = NULL;
	CHECK_EQ(cli_run(CLI("query", "--csv", "--span", "tick,note,tn", (char *)small,
	                     "SELECT name, count(*), sum(dur), min(depth) FROM slice WHERE name = 'tn'"),
	                 &out, NULL), 0);
	CHECK(out && !strcmp(out, "name,count(*),sum(dur),min(depth)\r\ntn,10,13000,0\r\n"));
	free(out);
	CHECK_EQ(cli_run(CLI("query", "--span", "tick,nope", (char *)small, "SELECT 1"), NULL, &err),
	         1);
	CHECK(cli_contains(err, "no event type 'nope'"));
	free(err);
	/* args: req/begin's id and tick's three fields */
	CHECK_Q(small, "SELECT key, value_type, count(*), sum(int_value), sum(real_value), "
	               "min(string_value) FROM args GROUP BY key ORDER BY key",
	        "cost,real,10,,22.5,\nid,uint,11,55,,\nkey,uint,10,45,,\nn,uint,10,45,,\n"
	        "who,string,10,,,c\n");
	CHECK_Q(small, "SELECT arg_set_id, ts - 1764255600000000000, flat_key, display_value FROM "
	               "args WHERE arg_set_id = 14",
	        "14,10700,n,1\n14,10700,cost,0.5\n14,10700,who,c\n");
	/* a slice's fields: args of its arg_set_id */
	CHECK_EQ(q_int(small, "SELECT sum(a.int_value) FROM slice s JOIN args a ON "
	                      "a.arg_set_id = s.arg_set_id WHERE s.name = 'req'"), 45);
}

/* a recorded examples/app: call sites, objects, executables */
static void recorded(void)
{
	const char *app = cli_path("app.ptlog");
	char *v = NULL;
	REQUIRE(cli_record_app(app, "0") == 0);
	CHECK_EQ(q_int(app, "SELECT count(*) FROM object WHERE kind = 'add' AND name LIKE "
	                    "'%/examples/app' AND start < end AND build_id IS NOT NULL") >= 1, 1);
	CHECK_EQ(q_int(app, "SELECT count(*) FROM process WHERE executable LIKE '%/examples/app' "
	                    "AND name = 'app'"), 2);
	/* every object row belongs to a process of the log, an add's bias is where it loaded */
	CHECK_EQ(q_int(app, "SELECT count(*) FROM object o JOIN process p USING (upid) WHERE "
	                    "o.pid = p.pid AND o.ts > 0 AND (o.kind != 'add' OR o.load_bias <= "
	                    "o.start)"), q_int(app, "SELECT count(*) FROM object"));
	/* the program's map once; its forked child's: its parent's, in one
	 * entry (issue 54: every child wrote the whole map again) */
	CHECK_EQ(q_int(app, "SELECT count(*) FROM object WHERE kind = 'begin'"), 1);
	CHECK_EQ(q_int(app, "SELECT count(*) FROM object WHERE kind = 'fork'"), 1);
	CHECK_EQ(q_int(app, "SELECT count(DISTINCT pid) FROM object WHERE kind = 'add'"), 1);
	CHECK_EQ(q_int(app, "SELECT count(*) FROM event WHERE name = 'reply' AND object LIKE "
	                    "'%/examples/app'"), 60);
	CHECK_EQ(q_int(app, "SELECT count(*) FROM thread WHERE name LIKE 'worker-%'"), 3);
	CHECK_EQ(cli_run(CLI("--version"), &v, NULL), 0);
	if (cli_contains(v, "elfutils libdw")) {
		CHECK_EQ(q_int(app, "SELECT count(*) FROM event WHERE name = 'reply' AND "
		                    "function = 'worker' AND file LIKE '%examples/app.c' AND line > 0"),
		         60);
	}
	free(v);
}

/* "p50_ns":V of span name in stats --json */
static long long stats_span(const char *json, const char *name, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "{\"name\":\"%s\",", name);
	const char *p = strstr(json, pat), *k;
	if (!p)
		return -1;
	snprintf(pat, sizeof pat, "\"%s\":", key);
	return (k = strstr(p, pat)) ? strtoll(k + strlen(pat), NULL, 10) : -1;
}

static void like_stats(void)
{
	char *json = NULL, sql[200];
	CHECK_EQ(cli_run(CLI("stats", "--json", (char *)big), &json, NULL), 0);
	REQUIRE(json);
	static const char *const spans[] = { "req", "db", "hand" };
	for (int i = 0; i < 3; i++) {
		snprintf(sql, sizeof sql, "SELECT count(*) FROM slice WHERE name = '%s'", spans[i]);
		CHECK_EQ(q_int(big, sql), stats_span(json, spans[i], "count"));
		snprintf(sql, sizeof sql, "SELECT pt_quantile(dur, 0.5) FROM slice WHERE name = '%s'",
		         spans[i]);
		CHECK_EQ(q_int(big, sql), stats_span(json, spans[i], "p50_ns"));
		snprintf(sql, sizeof sql, "SELECT pt_quantile(dur, 0.99) FROM slice WHERE name = '%s'",
		         spans[i]);
		CHECK_EQ(q_int(big, sql), stats_span(json, spans[i], "p99_ns"));
	}
	/* the slowest: stats' ten of req, start and duration, in its order (of equal
	 * durations, stats keeps the first) */
	{
		const char *p0 = strstr(json, "{\"name\":\"req\","), *sl = p0 ? strstr(p0, "\"slowest\":[") : NULL;
		char want[1200] = "";
		size_t at = 0;
		for (int k = 0; sl && k < 10; k++) {
			const char *st = strstr(sl, "\"start_ns\":"), *du = st ? strstr(st, "\"duration_ns\":") : NULL;
			if (!du)
				break;
			at += (size_t)snprintf(want + at, sizeof want - at, "%lld,%lld\n",
			                       strtoll(st + 11, NULL, 10), strtoll(du + 14, NULL, 10));
			sl = du;
		}
		CHECK_Q(big, "SELECT ts, dur FROM slice WHERE name = 'req' ORDER BY dur DESC, ts "
		             "LIMIT 10", want);
	}
	/* per type: the counts stats gives */
	const char *p = strstr(json, "\"types\":[");
	REQUIRE(p);
	for (int k = 0; k < 10; k++) {
		const char *id = strstr(p, "{\"id\":"), *cnt = id ? strstr(id, "\"count\":") : NULL;
		if (!id || !cnt)
			break;
		snprintf(sql, sizeof sql, "SELECT count(*) FROM event WHERE type = %lld",
		         strtoll(id + 6, NULL, 10));
		CHECK_EQ(q_int(big, sql), strtoll(cnt + 8, NULL, 10));
		p = cnt;
	}
	free(json);
	CHECK_EQ(q_int(big, "SELECT count(*) FROM event"), qlog_events(NBIG));
}

static void pushdown(void)
{
	char sql[400], *out = NULL;
	/* the plan names what it passes on */
	CHECK_EQ(cli_run(CLI("query", "--csv", (char *)big,
	                     "EXPLAIN QUERY PLAN SELECT count(*) FROM event WHERE ts >= 5 AND "
	                     "ts < 7 AND name = 'tick' AND utid = 1 AND id <= 9"), &out, NULL), 0);
	CHECK(cli_contains(out, "ts>=") && cli_contains(out, "ts<") && cli_contains(out, "name=") &&
	      cli_contains(out, "utid=") && cli_contains(out, "id<="));
	free(out);
	/* 1% of the log by ts: the reader seeks, and reads about that much */
	uint64_t t0 = QLOG_T0 + NBIG / 2 * (uint64_t)QLOG_ROUND, t1 = t0 + NBIG / 100 * (uint64_t)QLOG_ROUND;
	snprintf(sql, sizeof sql, "SELECT count(*) FROM event WHERE ts BETWEEN %llu AND %llu; "
	         "SELECT pt_visited()", (unsigned long long)t0, (unsigned long long)t1);
	char *r = cli_query_csv(big, sql);
	long long n = strtoll(r, NULL, 10), visited = -1;
	char *second = strstr(r, "pt_visited()\n");
	if (second)
		visited = strtoll(second + 13, NULL, 10);
	CHECK_EQ(n, NBIG / 100 * 9 + 1);
	CHECK(visited >= n && visited < (long long)qlog_events(NBIG) / 20);
	free(r);
	/* the same answer with the pushdown defeated, reading everything */
	snprintf(sql, sizeof sql, "SELECT count(*) FROM event WHERE ts + 0 BETWEEN %llu AND %llu; "
	         "SELECT pt_visited()", (unsigned long long)t0, (unsigned long long)t1);
	r = cli_query_csv(big, sql);
	CHECK_EQ(strtoll(r, NULL, 10), n);
	second = strstr(r, "pt_visited()\n");
	CHECK(second && strtoll(second + 13, NULL, 10) == (long long)qlog_events(NBIG));
	free(r);
	/* ids count from the start: a ts range that reads ids reads from there */
	snprintf(sql, sizeof sql, "SELECT min(id) = %llu AND max(id) = %llu FROM event WHERE ts "
	         "BETWEEN %llu AND %llu", (unsigned long long)qlog_events(NBIG / 2) - 1,
	         (unsigned long long)qlog_events(NBIG / 2) - 1 + NBIG / 100 * 9,
	         (unsigned long long)t0, (unsigned long long)t1);
	CHECK_Q(big, sql, "1\n");
	/* the loss table seeks too */
	r = cli_query_csv(big, "SELECT count, ts FROM loss WHERE ts > 1764255600000000000 + 10000; "
	           "SELECT pt_visited()");
	second = strstr(r, "pt_visited()\n");
	CHECK(!strncmp(r, "5,", 2));
	CHECK(second && strtoll(second + 13, NULL, 10) < (long long)qlog_events(NBIG) / 10);
	free(r);
	/* an id range stops once past its end */
	r = cli_query_csv(big, "SELECT count(*) FROM event WHERE id BETWEEN 100 AND 199; SELECT pt_visited()");
	second = strstr(r, "pt_visited()\n");
	CHECK_EQ(strtoll(r, NULL, 10), 100);
	CHECK(second && strtoll(second + 13, NULL, 10) == 201);
	free(r);
	/* a type or thread: the same answers as a full scan */
	CHECK_EQ(q_int(big, "SELECT count(*) FROM event WHERE name = 'tick'"),
	         q_int(big, "SELECT count(*) FROM event WHERE name || '' = 'tick'"));
	CHECK_EQ(q_int(big, "SELECT count(*) FROM event WHERE utid = 1 AND type = 24"), NBIG);
	CHECK_EQ(q_int(big, "SELECT count(*) FROM event WHERE tid = 201"), 2 * NBIG);
	CHECK_EQ(q_int(big, "SELECT count(*) FROM event WHERE pid = 0"), 2);
	/* the pid 0 lane lives 100 ns: seeking there reads a block or so */
	r = cli_query_csv(big, "SELECT count(*) FROM event WHERE pid = 0; SELECT pt_visited()");
	second = strstr(r, "pt_visited()\n");
	CHECK(second && strtoll(second + 13, NULL, 10) < (long long)qlog_events(NBIG) / 10);
	free(r);
	/* grouped or ordered by type or name alone: from the per-type totals,
	 * no event read, the same rows as read */
	CHECK_EQ(cli_run(CLI("query", "--csv", (char *)big, "EXPLAIN QUERY PLAN SELECT name, "
	                     "count(*) FROM event GROUP BY name"), &out, NULL), 0);
	CHECK(cli_contains(out, "[type totals, by name]"));
	free(out);
	char *a = cli_query_csv(big, "SELECT name, count(*) FROM event GROUP BY name; SELECT pt_visited()");
	char *b = cli_query_csv(big, "SELECT name, count(*) FROM event WHERE ts > 0 GROUP BY name");
	CHECK(cli_contains(a, "\npt_visited()\n0\n") && !strncmp(a, b, strlen(b)));
	free(a), free(b);
	CHECK_Q(small, "SELECT type, name FROM event WHERE type IN (4, 5, 18) ORDER BY type DESC, "
	               "name LIMIT 4", "18,req/end\n18,req/end\n18,req/end\n18,req/end\n");
	CHECK_Q(small, "SELECT type FROM event WHERE name = 'tick' ORDER BY name", "23\n23\n23\n"
	               "23\n23\n23\n23\n23\n23\n23\n");
	/* a bound on a column no table has (NULL, text): no rows, no error */
	CHECK_Q(big, "SELECT count(*) FROM event WHERE ts = NULL", "0\n");
	CHECK_Q(big, "SELECT count(*) FROM event WHERE ts < -5 OR type = 'x'", "0\n");
}

static void several(void)
{
	const char *two = cli_path("two.ptlog");
	REQUIRE(qlog_write(two, N) == 0);
	char *out = NULL;
	CHECK_EQ(cli_run(CLI("query", "--csv", (char *)small, (char *)two,
	                     "SELECT log LIKE '%two.ptlog', count(*), count(DISTINCT utid), "
	                     "count(DISTINCT id), min(id), max(id) FROM event GROUP BY log ORDER BY "
	                     "min(id)"), &out, NULL), 0);
	char want[200];
	snprintf(want, sizeof want, "0,93,4,93,0,92\r\n1,93,4,93,93,185\r\n");
	CHECK(cli_contains(out, want));
	free(out);
	CHECK_EQ(cli_run(CLI("query", "--csv", (char *)small, (char *)two,
	                     "SELECT count(*), count(DISTINCT utid), count(DISTINCT upid) FROM thread; "
	                     "SELECT count(*) FROM slice; SELECT count(*) FROM slice s JOIN thread t "
	                     "USING (utid) WHERE t.name = 'main'"), &out, NULL), 0);
	CHECK(cli_contains(out, "8,8,6\r\n") && cli_contains(out, "\r\n60\r\n"));
	free(out);
}

static void output(void)
{
	char *out = NULL;
	CHECK_EQ(cli_run(CLI("query", "--csv", (char *)small, "SELECT 1 AS a, 'x,\"y' AS b, NULL AS c"),
	                 &out, NULL), 0);
	CHECK(out && !strcmp(out, "a,b,c\r\n1,\"x,\"\"y\",\r\n"));
	free(out);
	CHECK_EQ(cli_run(CLI("query", "--json", (char *)small,
	                     "SELECT 1 AS a, 'x\"' AS b, NULL AS c, 0.5 AS d UNION ALL SELECT 2, 'z', "
	                     "x'00ff', 1"), &out, NULL), 0);
	CHECK(out && !strcmp(out, "[\n{\"a\":1,\"b\":\"x\\\"\",\"c\":null,\"d\":0.5},\n"
	                          "{\"a\":2,\"b\":\"z\",\"c\":\"00ff\",\"d\":1}\n]\n"));
	free(out);
	CHECK_EQ(cli_run(CLI("query", "-w", "40", (char *)small,
	                     "SELECT name, count FROM type WHERE id IN (17, 24) ORDER BY id"),
	                 &out, NULL), 0);
	CHECK(out && !strcmp(out, "name       count\n---------  -----\nreq/begin     11\n"
	                          "note          20\n"));
	free(out);
	/* cut to the width: the text column narrows, '~' marks the cut */
	CHECK_EQ(cli_run(CLI("query", "-w", "40", (char *)small,
	                     "SELECT 123 AS n, 'abcdefghijklmnopqrstuvwxyz0123456789abcdefgh' AS t"),
	                 &out, NULL), 0);
	CHECK(out && cli_contains(out, "123  abcdefghijklmnopqrstuvwxyz01234567~\n"));
	free(out);
	/* statements from a file and stdin */
	const char *f = cli_path("q.sql");
	FILE *fp = fopen(f, "w");
	REQUIRE(fp);
	fputs("-- two statements\nSELECT count(*) FROM flow;\nSELECT count(*) FROM loss;\n", fp);
	fclose(fp);
	CHECK_EQ(cli_run(CLI("query", "--csv", (char *)small, "-f", (char *)f), &out, NULL), 0);
	CHECK(out && !strcmp(out, "count(*)\r\n5\r\ncount(*)\r\n1\r\n"));
	free(out);
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "%s query --csv %s < %s", cli_bin, small, f);
	CHECK_EQ(cli_run(((char *const[]){ "/bin/sh", "-c", cmd, NULL }), &out, NULL), 0);
	CHECK(out && !strcmp(out, "count(*)\r\n5\r\ncount(*)\r\n1\r\n"));
	free(out);
	/* errors: the statement's, named */
	char *err = NULL;
	CHECK_EQ(cli_run(CLI("query", (char *)small, "SELECT nope FROM event"), NULL, &err), 1);
	CHECK(cli_contains(err, "no such column: nope"));
	free(err);
	CHECK_EQ(cli_run(CLI("query"), NULL, NULL), 2);
}

/* at a terminal with no SQL: the prompt */
static void prompt(void)
{
	int fd;
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	fflush(NULL);
	pid_t pid = forkpty(&fd, NULL, NULL, &ws);
	if (pid < 0) {
		fprintf(stderr, "no pseudo-terminal: the prompt is not checked\n");
		return;
	}
	if (pid == 0) {
		execl(cli_bin, cli_bin, "query", small, (char *)NULL);
		_exit(126);
	}
	char buf[8192];
	size_t n = 0;
	int sent = 0, st = 0;
	for (int waited = 0; waited < 30000 && n + 1 < sizeof buf;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int r = poll(&p, 1, 100);
		waited += 100;
		if (r > 0) {
			ssize_t k = read(fd, buf + n, sizeof buf - 1 - n);
			if (k <= 0)
				break;
			n += (size_t)k;
			buf[n] = 0;
		}
		if (sent == 0 && strstr(buf, "posixtrace> ")) {
			REQUIRE(write(fd, "SELECT count(*) AS flows\n", 25) == 25);
			sent = 1;
		} else if (sent == 1 && strstr(buf, "...> ")) {
			REQUIRE(write(fd, "FROM flow;\n", 11) == 11);
			sent = 2;
		} else if (sent == 2 && strstr(buf, "    5\r\n")) {
			REQUIRE(write(fd, "\x04", 1) == 1);
			sent = 3;
		}
	}
	buf[n] = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	close(fd);
	CHECK_EQ(sent, 3);
	CHECK(cli_contains(buf, "flows\r\n-----\r\n    5\r\n"));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (sent != 3 || !cli_contains(buf, "    5\r\n"))
		fprintf(stderr, "the terminal showed:\n%s\n", buf);
}

/* a statement writes no file */
static void no_writes(void)
{
	char sql[600], *err = NULL;
	const char *victim = cli_path("written.db");
	snprintf(sql, sizeof sql, "ATTACH '%s' AS w; CREATE TABLE w.t(x)", victim);
	CHECK_EQ(cli_run(CLI("query", (char *)small, sql), NULL, &err), 1);
	CHECK(cli_contains(err, "not authorized") || cli_contains(err, "too many attached"));
	free(err);
	CHECK(access(victim, F_OK) != 0);
	snprintf(sql, sizeof sql, "VACUUM INTO '%s'", victim);
	CHECK_EQ(cli_run(CLI("query", (char *)small, sql), NULL, NULL), 1);
	CHECK(access(victim, F_OK) != 0);
	CHECK_EQ(cli_run(CLI("query", (char *)small, "SELECT load_extension('/nonexistent.so')"),
	                 NULL, NULL), 1);
	/* the tables take no writes */
	CHECK_EQ(cli_run(CLI("query", (char *)small, "DELETE FROM event"), NULL, &err), 1);
	CHECK(cli_contains(err, "may not be modified"));
	free(err);
}

static int run_status(const char *log)
{
	return cli_run(CLI("query", "--csv", (char *)log,
	                   "SELECT count(*), count(DISTINCT name), sum(length(payload)), sum(upid), sum(utid), "
	                   "count(tid), count(thread), count(args) FROM event; "
	                   "SELECT count(*) FROM slice; SELECT count(*) FROM args; "
	                   "SELECT count(*) FROM thread; SELECT count(*) FROM process; "
	                   "SELECT count(*) FROM object; SELECT count(*) FROM loss"),
	               NULL, NULL);
}

static void hostile(void)
{
	char *err = NULL;
	const char *junk = cli_path("junk.ptlog");
	FILE *f = fopen(junk, "w");
	REQUIRE(f);
	fputs("PSXTRLOG but not really a log at all", f);
	fclose(f);
	CHECK_EQ(cli_run(CLI("query", (char *)junk, "SELECT count(*) FROM event"), NULL, &err), 1);
	CHECK(cli_contains(err, junk));
	free(err);
	CHECK_EQ(cli_run(CLI("query", "/nonexistent/x.ptlog", "SELECT 1"), NULL, &err), 1);
	CHECK(cli_contains(err, "/nonexistent/x.ptlog"));
	free(err);
	/* the small log cut at many lengths, and bytes flipped */
	char *all = NULL;
	struct stat sb;
	REQUIRE(stat(small, &sb) == 0);
	int fd = open(small, O_RDONLY);
	REQUIRE(fd >= 0 && (all = malloc((size_t)sb.st_size)) != NULL);
	REQUIRE(read(fd, all, (size_t)sb.st_size) == sb.st_size);
	close(fd);
	const char *cut = cli_path("cut.ptlog");
	int crashes = 0;
	for (long len = 0; len < sb.st_size; len += sb.st_size / 23 + 1) {
		for (int flip = 0; flip < 2; flip++) {
			int o = open(cut, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			REQUIRE(o >= 0);
			if (flip && len > 0)
				all[len / 2] ^= 0x5a;
			REQUIRE(write(o, all, (size_t)(flip ? sb.st_size : len)) ==
			        (flip ? sb.st_size : len));
			if (flip && len > 0)
				all[len / 2] ^= 0x5a;
			close(o);
			int rc = run_status(cut);
			if (rc != 0 && rc != 1) {
				fprintf(stderr, "cut at %ld (flip %d): exit %d\n", len, flip, rc);
				crashes++;
			}
		}
	}
	CHECK_EQ(crashes, 0);
	free(all);
	/* the log fuzzers' corpus (every 8th file: the run stays short) */
	char dir[1200], top[1024];
	t_source_dir(top, sizeof top);
	snprintf(dir, sizeof dir, "%s/fuzz/corpus", top);
	DIR *d = opendir(dir);
	int seen = 0, k = 0;
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.' || k++ % 8)
			continue;
		char p[1600];
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		int rc = run_status(p);
		if (rc != 0 && rc != 1) {
			fprintf(stderr, "%s: exit %d\n", p, rc);
			crashes++;
		}
		seen++;
	}
	if (d)
		closedir(d);
	CHECK_EQ(crashes, 0);
	CHECK(seen > 10);
}

int main(void)
{
	T_BEGIN(240);
	cli_setup();
	char *v = NULL;
	cli_need_sqlite();
	REQUIRE(cli_run(CLI("query", "--help"), &v, NULL) == 0 &&
	        cli_contains(v, "usage: posixtrace query"));
	free(v);
	small = strdup(cli_path("small.ptlog"));
	big = strdup(cli_path("big.ptlog"));
	REQUIRE(qlog_write(small, N) == 0);
	REQUIRE(qlog_write(big, NBIG) == 0);
	tables();
	recorded();
	like_stats();
	pushdown();
	several();
	output();
	prompt();
	no_writes();
	hostile();
	T_END();
}
