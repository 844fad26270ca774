/*
 * query_slice_push.c -- what the table slice passes to the reader
 * (cli/query/slices.c), instead of pairing the whole log (issue 51: the
 * quantiles of a span name over 10 M slices in 2 s, 1% of a 50 M-event
 * log in 0.2 s): a ts range seeks to its start through the log's block
 * index and stops once the spans begun in it have ended; a name pairs
 * only that name's begins and ends.
 *
 * On a log whose every row is known (tests/query_log.h: spans req and db
 * on one thread, hand keyed and ended on another thread every other
 * round, a gap in the middle, a req left open at the end), for ranges at
 * the start, in the middle, across the gap, at the end, open on one side
 * and empty: every column the range may seek with (ts, dur, name, utid,
 * end_utid, key, args, end_args) gives the same rows as the same
 * statement with the pushdown defeated (ts + 0: the whole log paired);
 * EXPLAIN QUERY PLAN names ts>= and ts<= for slice; 1% of the log reads
 * under 5% of its events (pt_visited()); a statement that reads id,
 * depth or parent_id (which need the log from its start) reads it all and
 * answers the same.  Each span name (req, db, hand: same-thread and
 * keyed), and one no span has, gives the rows the same statement gives
 * with the name not passed on (name || ''), with and without depth; so
 * does a name that both conventions use (keyed and same-thread).
 */
#include <fcntl.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "query_log.h"

#define NR 20000 /* rounds: 180 003 events */

static const char *log_path;

/* A log with both conventions under one name: x/async-begin, x/async-end
 * (types 17, 18: keyed by the first 8 bytes) and x/begin, x/end (19, 20),
 * the keyed types first.  Round r: thread A x/begin at t, x/async-begin
 * key r at t+10, x/end at t+100 (dur 100); x/async-end key r at t+200 on
 * thread B (dur 190). */
static int two_kinds(const char *path, uint64_t rounds)
{
	static const char *const names[] = { "x/async-begin", "x/async-end", "x/begin", "x/end" };
	struct pt_logw w;
	int fd, rc = biglog_open(&w, &fd, path, "twokinds", QLOG_T0, names, 4);
	if (rc)
		return rc;
	for (uint64_t r = 0; r < rounds && !rc; r++) {
		uint64_t t = QLOG_T0 + r * 1000;
		rc = pt_logw_event(&w, t, 100, QLOG_A, 0x401000, 19, 0, NULL, 0);
		if (!rc)
			rc = pt_logw_event(&w, t + 10, 100, QLOG_A, 0x401000, 17, 0, &r, 8);
		if (!rc)
			rc = pt_logw_event(&w, t + 100, 100, QLOG_A, 0x401000, 20, 0, NULL, 0);
		if (!rc)
			rc = pt_logw_event(&w, t + 200, 100, QLOG_B, 0x401000, 18, 0, &r, 8);
	}
	return biglog_end(&w, fd, rc, 1, 0);
}

/* cli_query_csv() of the log */
static char *q(const char *sql)
{
	return cli_query_csv(log_path, sql);
}

/* pt_visited() after sql (the events its tables read) */
static long long visited(const char *sql)
{
	char both[1200];
	snprintf(both, sizeof both, "%s; SELECT pt_visited()", sql);
	char *r = q(both), *v = strstr(r, "pt_visited()\n");
	long long n = v ? strtoll(v + 13, NULL, 10) : -1;
	free(r);
	return n;
}

/* The rows of a digest of the slices in `where` (ts written as TS), by
 * the reader's range and by a whole pairing (ts + 0): equal, and not
 * empty where rows are wanted. */
static void same(const char *what, const char *cols, const char *where, int want_rows)
{
	char a[1000], b[1000], w[300];
	const char *ts = strstr(where, "TS");
	REQUIRE(ts != NULL);
	snprintf(w, sizeof w, "%.*sts%s", (int)(ts - where), where, ts + 2);
	snprintf(a, sizeof a, "SELECT %s FROM slice WHERE %s GROUP BY name ORDER BY name", cols, w);
	snprintf(w, sizeof w, "%.*sts + 0%s", (int)(ts - where), where, ts + 2);
	snprintf(b, sizeof b, "SELECT %s FROM slice WHERE %s GROUP BY name ORDER BY name", cols, w);
	char *x = q(a), *y = q(b);
	if (strcmp(x, y))
		fprintf(stderr, "%s: %s\n ranged: [%s]\n whole:  [%s]\n", what, where, x, y);
	CHECK(!strcmp(x, y));
	if (want_rows ? x[0] == 0 : x[0] != 0)
		fprintf(stderr, "%s: %s: rows [%s], %s wanted\n", what, where, x, want_rows ? "some" : "none");
	CHECK(want_rows ? x[0] != 0 : x[0] == 0);
	free(x);
	free(y);
}

int main(void)
{
	T_BEGIN(120);
	cli_setup();
	cli_need_sqlite();
	log_path = strdup(cli_path("slices.ptlog"));
	REQUIRE(qlog_write(log_path, NR) == 0);
	const uint64_t R = QLOG_ROUND, end = QLOG_T0 + NR * R;
	const uint64_t mid = QLOG_T0 + NR / 2 * R, pct = NR / 100 * R;
	char where[300], sql[600];
	static const char cols[] =
		"name, count(*), sum(dur), sum(ts % 1000003), min(ts), max(ts), sum(utid), "
		"sum(end_utid), sum(coalesce(key, 0)), sum(length(args)), sum(length(end_args))";
	struct { const char *what; uint64_t lo, hi; int rows; } r[] = {
		{ "the start", QLOG_T0, QLOG_T0 + pct, 1 },
		{ "from before the start", QLOG_T0 - 5000, QLOG_T0 + 3 * R + 10, 1 },
		{ "1% in the middle", mid + 3 * R + 17, mid + 3 * R + 17 + pct, 1 },
		{ "across the gap", mid - 2 * R + 500, mid + 2 * R + 600, 1 },
		{ "a begin's time to the end's", QLOG_T0 + 7 * R, QLOG_T0 + 7 * R + 1000, 1 },
		{ "between a round's begins and the next's", QLOG_T0 + 7 * R + 101,
		  QLOG_T0 + 7 * R + 999, 0 },
		{ "the end", end - pct, end + 10, 1 },
		{ "past the end", end + 1, end + 100 * R, 0 },
		{ "before the start", 0, QLOG_T0 - 1, 0 },
	};
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
		snprintf(where, sizeof where, "TS BETWEEN %llu AND %llu", (unsigned long long)r[i].lo,
		         (unsigned long long)r[i].hi);
		same(r[i].what, cols, where, r[i].rows);
	}
	/* one side only, strict bounds, and with name and utid */
	snprintf(where, sizeof where, "TS > %llu", (unsigned long long)(end - 7 * R));
	same("from a time on", cols, where, 1);
	snprintf(where, sizeof where, "TS < %llu", (unsigned long long)(QLOG_T0 + 5 * R));
	same("up to a time", cols, where, 1);
	snprintf(where, sizeof where, "TS >= %llu AND TS < %llu AND name = 'hand' AND utid = 0",
	         (unsigned long long)(mid - pct), (unsigned long long)mid);
	same("a name and a thread", cols, where, 1);
	snprintf(where, sizeof where, "TS = %llu", (unsigned long long)(mid + 50));
	same("one begin's time", cols, where, 1);

	/* the plan passes the range on */
	snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN SELECT count(*) FROM slice WHERE ts BETWEEN "
	         "%llu AND %llu", (unsigned long long)mid, (unsigned long long)(mid + pct));
	char *plan = q(sql);
	CHECK(cli_contains(plan, "ts>=") && cli_contains(plan, "ts<="));
	free(plan);
	/* 1% reads about that much: the spans begun in it end within a round */
	snprintf(sql, sizeof sql, "SELECT count(*), sum(dur) FROM slice WHERE ts BETWEEN %llu AND %llu",
	         (unsigned long long)(mid + 3 * R), (unsigned long long)(mid + 3 * R + pct));
	long long v = visited(sql);
	CHECK(v > 0 && v < (long long)qlog_events(NR) / 20);
	char *n = q(sql);
	/* 3 slices a round begun in the range (req, db, hand), and the req
	 * that begins at its end */
	unsigned long long cnt = 0, dur = 0;
	CHECK(sscanf(n, "%llu,%llu", &cnt, &dur) == 2);
	CHECK_EQ(cnt, 3ull * (NR / 100) + 1);
	free(n);
	/* ids, depth and parent count from the start: read from there */
	snprintf(sql, sizeof sql, "SELECT count(*), sum(depth), sum(parent_id), sum(id) FROM slice "
	         "WHERE ts BETWEEN %llu AND %llu", (unsigned long long)mid,
	         (unsigned long long)(mid + pct));
	CHECK_EQ(visited(sql), (long long)qlog_events(NR));
	char *x = q(sql);
	snprintf(sql, sizeof sql, "SELECT count(*), sum(depth), sum(parent_id), sum(id) FROM slice "
	         "WHERE ts + 0 BETWEEN %llu AND %llu", (unsigned long long)mid,
	         (unsigned long long)(mid + pct));
	char *y = q(sql);
	CHECK(!strcmp(x, y));
	free(x);
	free(y);

	/* a name: only its begins and ends paired, the same rows */
	static const char *const names[] = { "req", "db", "hand", "tick" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char *a, *b;
		static const char *const dcols[] = {
			"count(*), sum(dur), sum(ts % 1000003), sum(utid), sum(end_utid), "
			"sum(coalesce(key, 0)), pt_quantile(dur, 0.5), pt_quantile(dur, 0.99)",
			"count(*), sum(depth), sum(coalesce(parent_id, 0)), sum(dur)",
		};
		for (int k = 0; k < 2; k++) {
			snprintf(sql, sizeof sql, "SELECT %s FROM slice WHERE name = '%s'", dcols[k], names[i]);
			a = q(sql);
			snprintf(sql, sizeof sql, "SELECT %s FROM slice WHERE name || '' = '%s'", dcols[k],
			         names[i]);
			b = q(sql);
			if (strcmp(a, b))
				fprintf(stderr, "name %s: [%s], whole: [%s]\n", names[i], a, b);
			CHECK(!strcmp(a, b));
			CHECK(!strncmp(a, i < 3 ? "20000," : "0,", i < 3 ? 6 : 2));
			free(a);
			free(b);
		}
	}
	/* and with a range (req and db: read in batches; hand: keyed, not),
	 * across the gap and to the end */
	for (size_t i = 0; i < 3; i++)
		for (int k = 0; k < 2; k++) {
			uint64_t lo = k ? end - pct : mid - pct, hi = k ? end + R : mid + pct;
			snprintf(sql, sizeof sql, "SELECT count(*), sum(dur), sum(ts %% 1000003) FROM slice "
			         "WHERE name = '%s' AND ts BETWEEN %llu AND %llu", names[i],
			         (unsigned long long)lo, (unsigned long long)hi);
			char *a = q(sql);
			snprintf(sql, sizeof sql, "SELECT count(*), sum(dur), sum(ts %% 1000003) FROM slice "
			         "WHERE name || '' = '%s' AND ts + 0 BETWEEN %llu AND %llu", names[i],
			         (unsigned long long)lo, (unsigned long long)hi);
			char *b = q(sql);
			if (strcmp(a, b))
				fprintf(stderr, "name %s, range %d: [%s], whole: [%s]\n", names[i], k, a, b);
			CHECK(!strcmp(a, b) && strncmp(a, "0,", 2));
			free(a);
			free(b);
		}
	/* one name, both conventions (a keyed and a same-thread definition):
	 * the keyed one's pairing needs payloads, whichever comes first */
	char *two = strdup(cli_path("two.ptlog"));
	REQUIRE(two_kinds(two, 1000) == 0);
	free((char *)log_path);
	log_path = two;
	char *a2 = q("SELECT count(*), sum(dur), sum(end_utid) FROM slice WHERE name = 'x'");
	char *b2 = q("SELECT count(*), sum(dur), sum(end_utid) FROM slice WHERE name || '' = 'x'");
	if (strcmp(a2, b2) || strcmp(a2, "2000,290000,1000\n"))
		fprintf(stderr, "x: [%s], whole: [%s], want [2000,290000,1000]\n", a2, b2);
	CHECK(!strcmp(a2, b2));
	CHECK(!strcmp(a2, "2000,290000,1000\n"));
	free(a2);
	free(b2);
	free(two);
	T_END();
}
