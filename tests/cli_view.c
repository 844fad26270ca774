/*
 * cli_view.c -- `posixtrace view` as a server, over loopback: on a
 * generated log of 250 004 events (tests/biglog.h, whose counts, times,
 * threads and payloads are known in closed form: the witness),
 *   - refusals: no token, a wrong token (same length, one character
 *     off, longer), a Host that is not 127.0.0.1:PORT or localhost:PORT
 *     (another name, another port, none), a POST, a body, a path outside
 *     the page and its queries, each bad argument of /query and /event;
 *     raw bytes that are not HTTP, and a 100 KB header: an error, and the
 *     server still answers after them;
 *   - answers: /meta counts the log's events and its 2 gaps (4 markers);
 *     /query of the whole trace counts every event (density); a window of
 *     1000 events gives exactly those, each at its time and type; /event
 *     of a known event gives its process, type and payload;
 *   - the index cache: a second start reads it and answers the same; a
 *     damaged cache file is built again;
 *   - a missing, non-log and empty directory LOG get the same message as show;
 *   - spans (NAME/begin, NAME/end): a window's query gives exactly the
 *     spans that overlap it, with their lane, start, duration, nesting
 *     depth, name and end's lane; a --span of types the log does not
 *     have is refused;
 *   - spans begun long before a window (tests/view_test.h's job queue):
 *     a 0.4 ms window inside 18 to 34 ms jobs gives each job whole, on
 *     its lane, and so does the overview, from the index or its cache;
 *     a cached span with a lane out of range, or other --span options:
 *     built again;
 *   - `export --format html` of the same log (more than a page holds):
 *     the overview of the whole trace, and exactly the events of the
 *     window, by default the start (up to the time the page names), or
 *     the one --from/--to gives.
 */
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "cli_util.h"
#include "biglog.h"
#include "view_http.h"
#include "view_test.h"

#define N 250000u

/* (by hand: a sanitizer's strstr measures the whole string at each call) */
static int count_of(const char *s, const char *what)
{
	size_t k = strlen(what);
	int n = 0;
	for (const char *p = s; p && *p; p++)
		if (*p == *what && strncmp(p, what, k) == 0) {
			n++;
			p += k - 1;
		}
	return n;
}

/* The lane of (pid, pthread_t) in /meta's lane list, -1 if none (a lane
 * is {"pid":P,"thread":"P/TID",...,"pthread_t":"0x..",...}). */
static int lane_of(const char *meta, int32_t pid, uint64_t tid)
{
	char want[64], lp[32];
	snprintf(want, sizeof want, "\"pthread_t\":\"0x%llx\"", (unsigned long long)tid);
	snprintf(lp, sizeof lp, "{\"pid\":%d,", (int)pid);
	const char *l = strstr(meta, "\"lanes\":[");
	for (const char *hit = l; hit && (hit = strstr(hit, want)); hit++) {
		const char *start = hit;
		while (start > l && strncmp(start, "{\"pid\":", 7))
			start--;
		if (start > l && !strncmp(start, lp, strlen(lp)))
			return count_of(l, "{\"pid\":") - count_of(start, "{\"pid\":");
	}
	return -1;
}

static void refusals(const struct view_srv *s)
{
	char tok[64], path[256], host[64], *b = NULL;

	CHECK_EQ(view_get(s, "/", NULL, 1, NULL), 403);
	CHECK_EQ(view_get(s, "/meta", NULL, 1, NULL), 403);
	snprintf(path, sizeof path, "/meta?t=%s", s->token);
	CHECK_EQ(view_get(s, path, NULL, 1, NULL), 200);
	snprintf(tok, sizeof tok, "%s", s->token);
	tok[5] = tok[5] == 'a' ? 'b' : 'a';
	snprintf(path, sizeof path, "/meta?t=%s", tok);
	CHECK_EQ(view_get(s, path, NULL, 1, NULL), 403);
	snprintf(path, sizeof path, "/meta?t=%s0", s->token);
	CHECK_EQ(view_get(s, path, NULL, 1, NULL), 403);
	snprintf(path, sizeof path, "/meta?t=%.31s", s->token);
	CHECK_EQ(view_get(s, path, NULL, 1, NULL), 403);
	CHECK_EQ(view_get(s, "/meta?t=00000000000000000000000000000000", NULL, 1, NULL), 403);
	/* Host */
	snprintf(host, sizeof host, "evil.example:%u", s->port);
	CHECK_EQ(view_get(s, "/meta", host, 0, NULL), 403);
	snprintf(host, sizeof host, "127.0.0.1:%u", s->port + 1);
	CHECK_EQ(view_get(s, "/meta", host, 0, NULL), 403);
	CHECK_EQ(view_get(s, "/meta", "127.0.0.1", 0, NULL), 403);
	snprintf(host, sizeof host, "localhost:%u", s->port);
	CHECK_EQ(view_get(s, "/meta", host, 0, NULL), 200);
	snprintf(host, sizeof host, "127.0.0.1:%u ", s->port);
	CHECK_EQ(view_get(s, "/meta", "127.0.0.1:0", 0, NULL), 403);
	char req[512];
	int n = snprintf(req, sizeof req, "GET /meta?t=%s HTTP/1.0\r\n\r\n", s->token);
	CHECK_EQ(view_http_raw(s->port, req, (size_t)n, NULL), 403); /* no Host at all */
	/* methods, bodies, paths */
	n = snprintf(req, sizeof req, "POST /meta?t=%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
	             "Connection: close\r\nContent-Length: 0\r\n\r\n", s->token, s->port);
	CHECK_EQ(view_http_raw(s->port, req, (size_t)n, NULL), 405);
	n = snprintf(req, sizeof req, "GET /meta?t=%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
	             "Connection: close\r\nContent-Length: 5\r\n\r\nhello", s->token, s->port);
	CHECK_EQ(view_http_raw(s->port, req, (size_t)n, NULL), 413);
	CHECK_EQ(view_get(s, "/../../etc/passwd", NULL, 0, NULL), 404);
	CHECK_EQ(view_get(s, "/etc/passwd", NULL, 0, NULL), 404);
	CHECK_EQ(view_get(s, "/meta/x", NULL, 0, NULL), 404);
	/* arguments */
	static const char *const bad[] = {
		"/query", "/query?from=0&to=10", "/query?from=0&to=10&cols=0",
		"/query?from=0&to=10&cols=8193", "/query?from=10&to=0&cols=5",
		"/query?from=-1&to=10&cols=5", "/query?from=abc&to=10&cols=5",
		"/query?from=0&to=99999999999999999999999&cols=5", "/query?from=0x10&to=20&cols=5",
		"/query?from=1%2B1&to=20&cols=5", "/query?from=&to=20&cols=5",
		"/event", "/event?at=5", "/event?at=5&lane=x", "/event?at=5&lane=4294967295",
		"/event?at=5&lane=0&n=-3",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int st = view_get(s, bad[i], NULL, 0, NULL);
		if (st != 400)
			fprintf(stderr, "%s: %d\n", bad[i], st);
		CHECK_EQ(st, 400);
	}
	CHECK_EQ(view_get(s, "/event?at=999999999999999&lane=0", NULL, 0, NULL), 404);
	CHECK_EQ(view_get(s, "/event?at=0&lane=99999", NULL, 0, NULL), 404);
	/* not HTTP at all; a huge header; a request cut short */
	static const char junk[] = "\x00\x01\x02 \xff\xfe garbage\r\n\r\n";
	double t0 = t_now_s();
	int st = view_http_send(s->port, junk, sizeof junk - 1, NULL, 1);
	CHECK(st == 0 || (st >= 400 && st < 500));
	size_t big = 100000;
	char *huge = malloc(big + 200);
	REQUIRE(huge != NULL);
	n = snprintf(huge, 200, "GET /meta?t=%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nX: ", s->token, s->port);
	memset(huge + n, 'a', big);
	memcpy(huge + n + big, "\r\n\r\n", 5);
	st = view_http_send(s->port, huge, (size_t)n + big + 4, NULL, 1);
	CHECK_EQ(st, 431); /* (the library's limit: 64 KiB a connection) */
	free(huge);
	st = view_http_send(s->port, "GET /meta HTTP/1.1\r\nHo", 22, NULL, 1); /* then no more */
	CHECK_EQ(st, 0);
	CHECK(t_now_s() - t0 < 25); /* (not the client's 30 s timeout: the server closed) */
	/* still serving */
	CHECK_EQ(view_get(s, "/meta", NULL, 0, &b), 200);
	CHECK(cli_contains(b, "\"events\":"));
	free(b);
}

/* The answers, against biglog's closed forms.  *whole: the /query of the
 * whole trace, kept for the cache check. */
static void answers(const struct view_srv *s, char **whole)
{
	uint64_t total = N + 2 * biglog_gaps(N), span = (N - 1) * 200ull;
	char path[256], want[128], *meta = NULL, *b = NULL;

	CHECK_EQ(view_get(s, "/", NULL, 0, &b), 200);
	CHECK(cli_contains(b, "<canvas"));
	CHECK(!cli_contains(b, "src=\"http")); /* nothing from elsewhere */
	free(b);
	CHECK_EQ(view_get(s, "/meta", NULL, 0, &meta), 200);
	REQUIRE(meta != NULL);
	snprintf(want, sizeof want, "\"events\":%llu,", (unsigned long long)total);
	CHECK(cli_contains(meta, want));
	/* the span: from the first event to the last (event N-1) */
	snprintf(want, sizeof want, "\"span\":%llu,", (unsigned long long)span);
	CHECK(cli_contains(meta, want));
	CHECK(cli_contains(meta, "\"name\":\"biglog\""));
	CHECK(cli_contains(meta, "\"name\":\"alpha\""));
	/* 2 gaps: OVERFLOW and RESUME each, where biglog put them */
	const char *marks = strstr(meta, "\"marks\":[");
	CHECK_EQ(count_of(marks, ",4]"), 2);
	CHECK_EQ(count_of(marks, ",5]"), 2);
	snprintf(want, sizeof want, ",%llu,4]", (unsigned long long)(BIGLOG_GAP * 200ull - 100));
	CHECK(cli_contains(marks, want));
	CHECK(cli_contains(meta, "\"lost_any\":1"));

	snprintf(path, sizeof path, "/query?from=0&to=%llu&cols=1000", (unsigned long long)span);
	CHECK_EQ(view_get(s, path, NULL, 0, whole), 200);
	CHECK(cli_contains(*whole, "\"mode\":\"density\""));
	CHECK_EQ(view_density_sum(*whole), total);
	/* the second half, in another number of columns */
	snprintf(path, sizeof path, "/query?from=%llu&to=%llu&cols=777", (unsigned long long)(span / 2),
	         (unsigned long long)span);
	CHECK_EQ(view_get(s, path, NULL, 0, &b), 200);
	long long half = view_density_sum(b);
	CHECK(half >= N / 2 - 1 && half <= N / 2 + 2000); /* whole buckets: up to one more */
	free(b);

	/* events 1000..1999 (no gap among them) */
	snprintf(path, sizeof path, "/query?from=%u&to=%u&cols=1000", 1000 * 200, 1999 * 200);
	CHECK_EQ(view_get(s, path, NULL, 0, &b), 200);
	CHECK(cli_contains(b, "\"mode\":\"events\""));
	CHECK_EQ(count_of(b, "],["), 999);
	int ok = 1;
	for (uint64_t i = 1000; i < 2000; i++) {
		int lane = lane_of(meta, biglog_pid(i), biglog_thread(i));
		snprintf(want, sizeof want, "[%d,%llu,%u]", lane, (unsigned long long)(i * 200),
		         biglog_id(i));
		ok &= lane >= 0 && cli_contains(b, want);
	}
	CHECK(ok);
	free(b);

	/* one event: i = 123457 (its payload is i, little-endian) */
	uint64_t i = 123457;
	int lane = lane_of(meta, biglog_pid(i), biglog_thread(i));
	CHECK(lane >= 0);
	snprintf(path, sizeof path, "/event?at=%llu&lane=%d", (unsigned long long)(i * 200), lane);
	CHECK_EQ(view_get(s, path, NULL, 0, &b), 200);
	snprintf(want, sizeof want, "\"pid\":%d,", (int)biglog_pid(i));
	CHECK(cli_contains(b, want));
	CHECK(cli_contains(b, "\"hex\":\"41e2010000000000\""));
	snprintf(want, sizeof want, "\"id\":%u,", biglog_id(i));
	CHECK(cli_contains(b, want));
	CHECK(cli_contains(b, "\"addr\":\"0x401010\""));
	free(b);
	/* the same time in another lane: none there */
	snprintf(path, sizeof path, "/event?at=%llu&lane=%d", (unsigned long long)(i * 200),
	         (lane + 1) % 8);
	CHECK_EQ(view_get(s, path, NULL, 0, NULL), 404);
	free(meta);
}

/* Stop the server: exit status 0 and nothing on its stderr (no warning,
 * no sanitizer report). */
static void stop(struct view_srv *s, const char *errfile)
{
	CHECK_EQ(view_stop(s), 0);
	char *err = cli_slurp(errfile);
	CHECK(err && err[0] == 0);
	if (err && err[0])
		fprintf(stderr, "the server said:\n%s\n", err);
	free(err);
}

static void same_error(const char *path)
{
	char *e1 = NULL, *e2 = NULL;
	CHECK_EQ(cli_run(CLI("view", (char *)path), NULL, &e1), 1);
	CHECK_EQ(cli_run(CLI("show", (char *)path), NULL, &e2), 1);
	const char *a = e1 ? strchr(e1, ':') : NULL, *b = e2 ? strchr(e2, ':') : NULL;
	CHECK(a && b && strcmp(a, b) == 0);
	if (!a || !b || strcmp(a, b))
		fprintf(stderr, "view: %s\nshow: %s\n", e1 ? e1 : "", e2 ? e2 : "");
	free(e1);
	free(e2);
}

/* Markers drawn in an exported page. */
static int markers(const char *page)
{
	return count_of(page, "<line class=\"t");
}

/* The generated events (gaps too) stamped in [a, b], ns after the first. */
static uint64_t events_in(uint64_t a, uint64_t b)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t ts = i * 200;
		if (i && i % BIGLOG_GAP == 0)
			n += (ts - 100 >= a && ts - 100 <= b) + (ts - 50 >= a && ts - 50 <= b);
		n += ts >= a && ts <= b;
	}
	return n;
}

static void export_html(const char *log)
{
	const char *html = cli_path("big.html");
	char *page;
	double hi = 0;

	CHECK_EQ(cli_run(CLI("export", "--format", "html", "--force", "-o", (char *)html, (char *)log),
	                 NULL, NULL), 0);
	page = cli_slurp(html);
	CHECK(cli_contains(page, "Overview of the whole trace"));
	const char *note = page ? strstr(page, "The timeline shows every event from 0.000000000 s to ") : NULL;
	CHECK(note && sscanf(note + 53, "%lf", &hi) == 1 && hi > 0.03 && hi < 0.05);
	CHECK(cli_contains(note, "the start of the trace"));
	uint64_t want = events_in(0, (uint64_t)(hi * 1e9 + 0.5));
	CHECK(want <= 200000 && want > 150000);
	CHECK_EQ((uint64_t)markers(page), want);
	free(page);
	CHECK_EQ(cli_run(CLI("export", "--format", "html", "--force", "-o", (char *)html, "--from",
	                     "0.01", "--to", "0.011", (char *)log), NULL, NULL), 0);
	page = cli_slurp(html);
	CHECK(cli_contains(page, "Overview of the whole trace"));
	CHECK(cli_contains(page, "from 0.010000000 s to 0.011000000 s</b> (the window asked for)"));
	CHECK_EQ(markers(page), 5001);
	free(page);
	/* a window past the end; --from on another format */
	CHECK_EQ(cli_run(CLI("export", "--format", "html", "--force", "-o", (char *)html, "--from",
	                     "5", (char *)log), NULL, NULL), 1);
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", "--force", "-o", (char *)html, "--from",
	                     "0.5", (char *)log), NULL, NULL), 2);
}

/* The spans of a window: exactly the three that overlap it, as bars
 * [lane, start, duration, depth, span, end's lane], named; --span is
 * checked. */
static void spans(const char *o, const char *er)
{
	const char *log = cli_path("spans.ptlog");
	struct view_srv s;
	char path[200], want[3][100];
	char *body = NULL;

	spans_log(log);
	CHECK_EQ(cli_run(CLI("view", "--span", "nosuch,other", (char *)log), NULL, NULL), 1);
	CHECK_EQ(cli_run(CLI("view", "--span", "justone", (char *)log), NULL, NULL), 2);
	REQUIRE(view_start(&s, CLI("view", "--no-cache", (char *)log), o, er, 120) == 0);
	uint64_t from = 50 * 10000, to = from + 9999; /* (ns after the first event, at +100) */
	snprintf(path, sizeof path, "/query?from=%llu&to=%llu&cols=1000", (unsigned long long)from,
	         (unsigned long long)to);
	CHECK_EQ(view_get(&s, path, NULL, 0, &body), 200);
	const char *sp = body ? strstr(body, "\"spans\":[") : NULL;
	const char *nm = body ? strstr(body, "\"span_names\":[") : NULL;
	CHECK(sp && nm);
	if (sp && nm) {
		/* the span numbers, by name */
		int req = strstr(nm, "[\"req\"") ? 0 : 1, lock = 1 - req;
		CHECK(strstr(nm, "\"req\"") && strstr(nm, "\"lock\""));
		snprintf(want[0], sizeof want[0], "[0,%llu,800,0,%d,0]", (unsigned long long)(from + 0), req);
		snprintf(want[1], sizeof want[1], "[0,%llu,500,1,%d,0]", (unsigned long long)(from + 100), lock);
		snprintf(want[2], sizeof want[2], "[1,%llu,5000,0,%d,1]", (unsigned long long)(from + 200), req);
		for (int i = 0; i < 3; i++) {
			const char *hit = strstr(sp, want[i]);
			CHECK(hit && hit < nm);
			if (!hit || hit > nm)
				fprintf(stderr, "no span %s in %.*s\n", want[i], (int)(nm - sp), sp);
		}
		CHECK_EQ(count_of(sp, "],[") - count_of(nm, "],["), 2); /* three, no more */
	}
	free(body);
	CHECK_EQ(view_stop(&s), 0);
}

/* The spans of a window inside slow ones (tests/view_test.h's job
 * queue): at a 0.4 ms window inside each worker's slow job (begun 10 to
 * 20 ms before it), the query gives each slow job, on its worker's lane,
 * with its whole length; the overview (counted) gives them too; and so
 * does a second start, from the cache.  A --span other than the cache
 * entry's pairs its own. */
static void long_spans(const char *o, const char *er)
{
	const char *log = cli_path("jobs.ptlog");
	struct view_srv s;
	char path[200], want[100];
	char *meta = NULL, *body = NULL;

	jobs_log(log);
	/* runs: built; from the cache; the cache's last long span given a
	 * lane out of range: built again; other --span options: built again */
	for (int run = 0; run < 4; run++) {
		if (run == 2) {
			char cmd[600];
			/* (a span is 32 bytes, its lane at 16: enrich.h's struct vspan) */
			snprintf(cmd, sizeof cmd, "f=$(grep -l jobs.ptlog '%s'/posixtrace/view-*.idx) && "
			         "test $(echo \"$f\" | wc -l) = 1 && n=$(stat -c %%s \"$f\") && "
			         "printf '\\377\\377\\377\\177' | dd of=\"$f\" bs=1 seek=$((n - 16)) "
			         "conv=notrunc 2>/dev/null", getenv("XDG_CACHE_HOME"));
			CHECK_EQ(system(cmd), 0);
		}
		REQUIRE(view_start(&s, run < 3 ? CLI("view", (char *)log)
		                             : CLI("view", "--span", "db/begin,db/end,query", (char *)log),
		                   o, er, 120) == 0);
		char *out = cli_slurp(o);
		CHECK_EQ(cli_contains(out, "from the cache"), run == 1);
		free(out);
		CHECK_EQ(view_get(&s, "/meta", NULL, 0, &meta), 200);
		for (int q = 0; q < 2; q++) {
			/* a 0.4 ms window, then the whole trace */
			snprintf(path, sizeof path, "/query?from=%llu&to=%llu&cols=1000",
			         q ? 0ull : 120000000ull, q ? JOB_END : 120400000ull);
			CHECK_EQ(view_get(&s, path, NULL, 0, &body), 200);
			const char *sp = body ? strstr(body, "\"spans\":[") : NULL;
			CHECK(sp != NULL);
			CHECK(cli_contains(body, q ? "\"mode\":\"density\"" : "\"mode\":\"events\""));
			for (int w = 0; sp && w < 3; w++) {
				int lane = lane_of(meta, 6000, JOB_TID + 0x1000ull * (unsigned)w);
				CHECK(lane >= 0);
				snprintf(want, sizeof want, "[%d,%llu,%llu,0,", lane,
				         (unsigned long long)job_slow[w][0],
				         (unsigned long long)(job_slow[w][1] - job_slow[w][0]));
				CHECK(strstr(sp, want) != NULL);
				if (!strstr(sp, want))
					fprintf(stderr, "run %d query %d: no %s in %.300s\n", run, q, want, sp);
			}
			/* --span db/begin,db/end: "query" spans (the db ones), not "db" */
			CHECK_EQ(cli_contains(body, "\"query\""), run == 3);
			free(body);
			body = NULL;
		}
		free(meta);
		meta = NULL;
		CHECK_EQ(view_stop(&s), 0);
	}
}

int main(void)
{
	struct view_srv s;
	char *out = NULL, *whole = NULL, *again = NULL;

	T_BEGIN(240);
	view_test_begin(NULL);
	const char *log = cli_path("big.ptlog"), *o = cli_path("view.out"), *er = cli_path("view.err");
	const char *cache = getenv("XDG_CACHE_HOME"); /* (view_test_begin's) */
	REQUIRE(biglog_write(log, N, 1) == 0);

	/* usage and bad logs */
	CHECK_EQ(cli_run(CLI("view"), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("view", "--port", "70000", (char *)log), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("view", "--bogus", (char *)log), NULL, NULL), 2);
	same_error(cli_path("missing.ptlog"));
	const char *nologs = cli_path("nologs"); /* (a directory of logs is a set: cli_parts) */
	REQUIRE(mkdir(nologs, 0700) == 0);
	same_error(nologs);
	const char *junk = cli_path("junk.ptlog");
	FILE *f = fopen(junk, "w");
	REQUIRE(f != NULL);
	fputs("this is not a trace log, only text long enough to look at\n", f);
	fclose(f);
	same_error(junk);

	/* first start: builds the index */
	REQUIRE(view_start(&s, CLI("view", (char *)log), o, er, 120) == 0);
	CHECK_EQ((int)strlen(s.token), 32);
	out = cli_slurp(o);
	CHECK(!cli_contains(out, "from the cache"));
	free(out);
	refusals(&s);
	answers(&s, &whole);
	stop(&s, er);

	/* second: from the cache, the same answers */
	REQUIRE(view_start(&s, CLI("view", (char *)log), o, er, 120) == 0);
	out = cli_slurp(o);
	CHECK(cli_contains(out, "from the cache"));
	free(out);
	char path[200];
	snprintf(path, sizeof path, "/query?from=0&to=%llu&cols=1000", (N - 1) * 200ull);
	CHECK_EQ(view_get(&s, path, NULL, 0, &again), 200);
	CHECK(whole && again && strcmp(whole, again) == 0);
	free(again);
	/* events too (the log itself is opened in the background meanwhile) */
	char *ev = NULL, *meta = NULL;
	CHECK_EQ(view_get(&s, "/meta", NULL, 0, &meta), 200);
	int lane = meta ? lane_of(meta, biglog_pid(123457), biglog_thread(123457)) : -1;
	snprintf(path, sizeof path, "/event?at=%llu&lane=%d", 123457 * 200ull, lane);
	CHECK_EQ(view_get(&s, path, NULL, 0, &ev), 200);
	CHECK(cli_contains(ev, "\"hex\":\"41e2010000000000\""));
	free(ev);
	free(meta);
	snprintf(path, sizeof path, "/query?from=%u&to=%u&cols=1000", 1000 * 200, 1999 * 200);
	CHECK_EQ(view_get(&s, path, NULL, 0, &ev), 200);
	CHECK_EQ(count_of(ev, "],["), 999);
	free(ev);
	snprintf(path, sizeof path, "/query?from=0&to=%llu&cols=1000", (N - 1) * 200ull);
	stop(&s, er);

	/* a damaged cache file: built again, the same answers */
	char cmd[600];
	/* (the index's sizes, after the log's identity and path: vcache.c) */
	snprintf(cmd, sizeof cmd, "for f in '%s'/posixtrace/view-*.idx; do "
	         "at=$(grep -abo PTVIDX04 \"$f\" | head -1 | cut -d: -f1); test -n \"$at\" || exit 1; "
	         "printf 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' | "
	         "dd of=\"$f\" bs=1 seek=$((at + 8)) conv=notrunc 2>/dev/null; done", cache);
	CHECK_EQ(system(cmd), 0);
	REQUIRE(view_start(&s, CLI("view", (char *)log), o, er, 120) == 0);
	out = cli_slurp(o);
	CHECK(!cli_contains(out, "from the cache"));
	free(out);
	CHECK_EQ(view_get(&s, path, NULL, 0, &again), 200);
	CHECK(whole && again && strcmp(whole, again) == 0);
	free(again);
	stop(&s, er);
	/* a cache file cut short: the same */
	snprintf(cmd, sizeof cmd, "for f in '%s'/posixtrace/view-*.idx; do truncate -s 5000 \"$f\"; done",
	         cache);
	CHECK_EQ(system(cmd), 0);
	REQUIRE(view_start(&s, CLI("view", (char *)log), o, er, 120) == 0);
	CHECK_EQ(view_get(&s, path, NULL, 0, &again), 200);
	CHECK(whole && again && strcmp(whole, again) == 0);
	free(again);
	stop(&s, er);
	free(whole);
	export_html(log);
	spans(o, er);
	long_spans(o, er);
	printf("%d checks\n", t_checks);
	T_END();
}
