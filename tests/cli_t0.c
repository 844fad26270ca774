/*
 * cli_t0.c -- time 0 is the program's first event, in every command that
 * prints relative times, and --t0 moves it the same way everywhere.
 *
 * The witness is the program (this test run as "emit"): it reads
 * CLOCK_REALTIME around each of its three events ("t0_first", 20 ms later
 * "t0_second", 10 ms later "t0_third") and prints the readings.  An
 * event's timestamp lies within the accuracy bound B the documentation
 * states (docs/implementation-defined.md: 10 us) of its brackets.
 *
 *   record -- emit: show prints t0_first at exactly 0.000000000, the
 *       recorder's START (the trace's line, "-") before it, below 0, and
 *       t0_second, t0_third at times inside their witness brackets;
 *       stats --json's t0_ns is t0_first's time (inside its brackets) and
 *       t0_ns - first_ns is what --t0 trace moves every line of show by,
 *       exactly; --t0 t0_second, --t0 0.005, --t0 UTC-TIME and --t0 trace
 *       move every line by the same amount, to the nanosecond; info's
 *       processes, the HTML export and view's /meta (t0: time 0 after
 *       the trace's first event; when built with libmicrohttpd) count
 *       from the same time 0; --all shows the recorder without moving
 *       time 0.
 *   live -- emit: the same lines (START first, at a negative time, on the
 *       trace's line; t0_first at 0); with --all the START is live's own
 *       process's; top counts only the program's events (START with --all).
 *   errors: --t0 with no value, an unknown type, live --t0 TYPE.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "view_http.h"

#define B_NS 10000 /* the clock's accuracy bound, docs/implementation-defined.md */

static long long now_rt(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* ------------------------------------------------ the instrumented side */
static int emit_main(void)
{
	static const char *const names[3] = { "t0_first", "t0_second", "t0_third" };
	trace_event_id_t id[3];
	long long w[3][2];

	for (int i = 0; i < 3; i++)
		if (posix_trace_eventid_open(names[i], &id[i]) != 0)
			return 1;
	for (int i = 0; i < 3; i++) {
		if (i)
			sleep_ms(i == 1 ? 20 : 10);
		w[i][0] = now_rt();
		posix_trace_event(id[i], &i, sizeof i);
		w[i][1] = now_rt();
	}
	printf("witness %lld %lld %lld %lld %lld %lld\n", w[0][0], w[0][1], w[1][0], w[1][1],
	       w[2][0], w[2][1]);
	return 0;
}

/* ------------------------------------------------------- the checks */
static char self[4096];
static long long wit[3][2];

static int get_witness(const char *out)
{
	const char *p = strstr(out ? out : "", "witness ");
	return p && sscanf(p, "witness %lld %lld %lld %lld %lld %lld", &wit[0][0], &wit[0][1],
	                   &wit[1][0], &wit[1][1], &wit[2][0], &wit[2][1]) == 6;
}

/* A show/live line: its time (signed ns, from "[-]S.NNNNNNNNN"), its
 * PID/T column and its type; 0 if it is not an event line. */
struct line { long long t; char who[64], type[64]; };

static int parse_line(const char *s, struct line *l)
{
	long long sec;
	char frac[16];
	int neg = 0;
	while (*s == ' ')
		s++;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (sscanf(s, "%lld.%9[0-9] %*s %63s %*s %63s", &sec, frac, l->who, l->type) != 4 ||
	    strlen(frac) != 9)
		return 0;
	l->t = sec * 1000000000LL + atoll(frac);
	l->t = neg ? -l->t : l->t;
	return 1;
}

/* The lines of a show/live output (at most max). */
static int lines_of(const char *out, struct line *v, int max)
{
	int n = 0;
	for (const char *p = out; p && *p && n < max;) {
		const char *nl = strchr(p, '\n');
		if (parse_line(p, &v[n]))
			n++;
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

static const struct line *find(const struct line *v, int n, const char *type)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].type, type))
			return &v[i];
	return NULL;
}

/* The program's events in v: t0_first at 0, the others inside their
 * brackets as seen from t0_first's. */
static void check_program_times(const char *what, const struct line *v, int n, long long first)
{
	const struct line *a = find(v, n, "t0_first"), *b = find(v, n, "t0_second"),
	                  *c = find(v, n, "t0_third");
	CHECK(a && b && c);
	if (!a || !b || !c) {
		fprintf(stderr, "%s: missing events\n", what);
		return;
	}
	CHECK_EQ(a->t, first);
	for (int k = 1; k < 3; k++) {
		long long t = (k == 1 ? b : c)->t - first;
		long long lo = wit[k][0] - wit[0][1] - 2 * B_NS, hi = wit[k][1] - wit[0][0] + 2 * B_NS;
		if (t < lo || t > hi)
			fprintf(stderr, "%s: event %d at %lld ns, witness [%lld, %lld]\n", what, k, t, lo,
			        hi);
		CHECK(t >= lo && t <= hi);
	}
}

static long long json_num(const char *s, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = strstr(s ? s : "", k);
	return p ? atoll(p + strlen(k)) : -1;
}

/* show with extra options: its lines; each is the default's moved by d. */
static void check_moved(const char *log, const char *opt, const char *val, long long d,
                        const struct line *base, int nbase)
{
	static struct line v[64];
	char *out = NULL;
	CHECK_EQ(cli_run(CLI("show", (char *)opt, (char *)val, (char *)log), &out, NULL), 0);
	int n = lines_of(out, v, 64);
	CHECK_EQ(n, nbase);
	int bad = 0;
	for (int i = 0; i < n && i < nbase; i++)
		bad += v[i].t != base[i].t - d || strcmp(v[i].type, base[i].type);
	if (bad)
		fprintf(stderr, "show %s %s: %d lines not moved by %lld ns:\n%s", opt, val, bad, d,
		        out ? out : "");
	CHECK_EQ(bad, 0);
	free(out);
}

static void recorded(void)
{
	const char *log = cli_path("t0.ptlog");
	char *out = NULL, *err = NULL;
	static struct line v[64];

	long long before = now_rt();
	int rc = cli_run(CLI("record", "-o", (char *)log, "--", self, "emit"), &out, &err);
	CHECK_EQ(rc, 0);
	REQUIRE(get_witness(out));
	free(out);
	free(err);

	/* show: START (the trace's line) below 0, t0_first at 0 */
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, NULL), 0);
	int n = lines_of(out, v, 64);
	CHECK(n >= 5);
	CHECK(!strcmp(v[0].type, "posix_trace_start") && !strcmp(v[0].who, "-"));
	CHECK(v[0].t < 0 && -v[0].t <= wit[0][1] - before + B_NS);
	check_program_times("show", v, n, 0);
	free(out);

	/* stats --json: time 0 is t0_first's time, inside its brackets */
	CHECK_EQ(cli_run(CLI("stats", "--json", (char *)log), &out, NULL), 0);
	long long t0 = json_num(out, "t0_ns"), first = json_num(out, "first_ns");
	CHECK(t0 >= wit[0][0] - B_NS && t0 <= wit[0][1] + B_NS);
	CHECK_EQ(first - t0, v[0].t); /* the START's time: the trace's first */
	free(out);

	/* every --t0 moves every line by the same ns */
	char utc[64], at[64];
	time_t s = (time_t)(t0 / 1000000000LL);
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(utc + strlen(utc), sizeof utc - strlen(utc), ".%09lldZ", t0 % 1000000000LL);
	snprintf(at, sizeof at, "@%lld.%09lld", (t0 - 1000) / 1000000000LL, (t0 - 1000) % 1000000000LL);
	const struct line *b = find(v, n, "t0_second");
	check_moved(log, "--t0", "trace", v[0].t, v, n);
	check_moved(log, "--t0", "first", 0, v, n);
	check_moved(log, "--t0", "t0_second", b ? b->t : 0, v, n);
	check_moved(log, "--t0", "0.005", 5000000, v, n);
	check_moved(log, "--t0", "250us", 250000, v, n);
	check_moved(log, "--t0", utc, 0, v, n);
	check_moved(log, "--t0", at, -1000, v, n);
	check_moved(log, "--all", "--t0=first", 0, v, n);

	/* info: the program's process starts at 0, the trace's line before */
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	char want[96];
	snprintf(want, sizeof want, "-%lld.%09lld ", -v[0].t / 1000000000LL, -v[0].t % 1000000000LL);
	CHECK(cli_contains(out, want));
	CHECK(cli_contains(out, " 0.000000000 "));
	CHECK(cli_contains(out, "(the program's first event; "));
	free(out);
	CHECK_EQ(cli_run(CLI("info", "--t0", "trace", (char *)log), &out, NULL), 0);
	CHECK(!cli_contains(out, want));
	CHECK(cli_contains(out, "(the trace's first event; 0.000000000 s after"));
	free(out);

	/* export html: the event titles count from the same time 0 */
	const char *html = cli_path("t0.html");
	CHECK_EQ(cli_run(CLI("export", "-f", "html", "-o", (char *)html, (char *)log), NULL, NULL), 0);
	out = cli_slurp(html);
	CHECK(cli_contains(out, "t0_first\n0.000000000 s  ")); /* (then PID/TID and name) */
	snprintf(want, sizeof want, "posix_trace_start\n-%lld.%09lld s ", -v[0].t / 1000000000LL,
	         -v[0].t % 1000000000LL);
	CHECK(cli_contains(out, want));
	free(out);

	/* view: the page counts from t0, given in ns after the trace's first
	 * event (when built with libmicrohttpd: else there is no page) */
	int has_view = cli_has_view();
	if (!has_view)
		printf("note: posixtrace was built without libmicrohttpd: view is not checked\n");
	for (int k = 0; k < 2 && has_view; k++) {
		struct view_srv vs;
		char *body = NULL;
		const char *vo = cli_path("view.out"), *ve = cli_path("view.err");
		int up = view_start(&vs, k ? CLI("view", "--t0", "trace", (char *)log)
		                           : CLI("view", (char *)log), vo, ve, 60);
		CHECK_EQ(up, 0);
		if (up == 0) {
			CHECK_EQ(view_get(&vs, "/meta", NULL, 0, &body), 200);
			CHECK_EQ(json_num(body, "t0"), k ? 0 : -v[0].t);
			free(body);
		}
		view_stop(&vs);
	}

	/* errors */
	CHECK_EQ(cli_run(CLI("show", "--t0", "no_such_type", (char *)log), NULL, &err), 1);
	CHECK(cli_contains(err, "no events of type 'no_such_type'"));
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--t0"), NULL, &err), 2);
	CHECK(cli_contains(err, "--t0"));
	free(err);
}

static void live(void)
{
	static struct line v[64];
	char *out = NULL, *err = NULL;

	CHECK_EQ(cli_run(CLI("live", "--", self, "emit"), &out, &err), 0);
	REQUIRE(get_witness(out));
	int n = lines_of(out, v, 64);
	CHECK_EQ(n, 4); /* START, then the program's three */
	CHECK(n > 0 && !strcmp(v[0].type, "posix_trace_start") && !strcmp(v[0].who, "-") &&
	      v[0].t < 0);
	check_program_times("live", v, n, 0);
	CHECK(cli_contains(err, "3 events from 1 process (1 thread)") ||
	      cli_contains(err, "4 events from 1 process (1 thread)"));
	free(out);
	free(err);

	CHECK_EQ(cli_run(CLI("live", "--all", "--", self, "emit"), &out, &err), 0);
	REQUIRE(get_witness(out));
	n = lines_of(out, v, 64);
	CHECK_EQ(n, 4);
	CHECK(n > 0 && !strcmp(v[0].type, "posix_trace_start") && strcmp(v[0].who, "-") != 0);
	check_program_times("live --all", v, n, 0);
	free(out);
	free(err);

	CHECK_EQ(cli_run(CLI("live", "--t0", "trace", "--", self, "emit"), &out, &err), 0);
	REQUIRE(get_witness(out));
	n = lines_of(out, v, 64);
	CHECK(n == 4 && v[0].t == 0 && v[1].t > 0);
	free(out);
	free(err);

	CHECK_EQ(cli_run(CLI("live", "--t0", "t0_first", "--", self, "emit"), NULL, &err), 2);
	CHECK(cli_contains(err, "--t0 t0_first"));
	free(err);

	/* top (not a terminal: a block per second and one at the end) */
	CHECK_EQ(cli_run(CLI("top", "--", self, "emit"), &out, &err), 0);
	CHECK(cli_contains(out, "t0_third "));
	CHECK(!cli_contains(out, "posix_trace_start"));
	CHECK(cli_contains(out, "; 3 events;"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("top", "--all", "--", self, "emit"), &out, &err), 0);
	CHECK(cli_contains(out, "posix_trace_start"));
	CHECK(cli_contains(out, "; 4 events;"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("top", "--t0", "trace", "--", self, "emit"), NULL, &err), 2);
	free(err);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "emit"))
		return emit_main();
	T_BEGIN(120);
	cli_setup();
	REQUIRE(realpath(argv[0], self) != NULL);
	recorded();
	live();
	T_END();
}
