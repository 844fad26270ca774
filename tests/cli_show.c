/*
 * cli_show.c -- `posixtrace show`: a recorded examples/app log printed one
 * event per line, compared line by line with the same log read through
 * posix_trace_open(): event name, pid, thread (PID/TID, one per thread,
 * the main thread's TID its pid; the name each worker gave itself; the
 * recorder's threads, which the trace does not name, by their index),
 * relative time (from the program's first event: the recorder's START
 * before it) and delta (exact), the payload (text in quotes, the
 * described struct by field), and the address symbolized as function+off
 * (file:line) when the command has libdw.  Then the filters (--event,
 * --pid, --since/--until), --absolute, and the errors: a missing file and
 * a file that is not a log exit 1 naming the file; bad options exit 2.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static uint64_t ns(const struct posix_trace_event_info *i)
{
	return (uint64_t)i->posix_timestamp.tv_sec * 1000000000u + (uint64_t)i->posix_timestamp.tv_nsec;
}

static void rel(char *b, size_t cap, int64_t v, int sign)
{
	uint64_t a = v < 0 ? (uint64_t)-v : (uint64_t)v;
	snprintf(b, cap, "%s%llu.%09llu", v < 0 ? "-" : sign ? "+" : "",
	         (unsigned long long)(a / 1000000000u), (unsigned long long)(a % 1000000000u));
}

int main(void)
{
	char *out = NULL, *err = NULL, line[1024];
	struct cli_ev *ev;

	T_BEGIN(120);
	cli_setup();
	const char *log = cli_path("app.ptlog");
	REQUIRE(cli_record_app(log, "0") == 0);
	int n = cli_read_log(log, &ev);
	REQUIRE(n > 100);

	int dwarf = cli_has_libdw();

	/* every event, in the log's order */
	CHECK_EQ(cli_run(CLI("show", "--all", (char *)log), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), n);
	/* time 0: the program's first event, not the recorder's (the process
	 * that wrote the START) */
	pid_t recorder = 0;
	for (int i = 0; i < n && !recorder; i++)
		if (ev[i].info.posix_event_id == POSIX_TRACE_START)
			recorder = ev[i].info.posix_pid;
	uint64_t t0 = UINT64_MAX, prev;
	for (int i = 0; i < n; i++)
		if (ev[i].info.posix_pid != recorder && ev[i].info.posix_pid != 0)
			t0 = ns(&ev[i].info) < t0 ? ns(&ev[i].info) : t0;
	REQUIRE(recorder != 0 && t0 != UINT64_MAX);
	prev = t0;
	struct { pid_t pid; pthread_t th; char who[32]; } seen[64];
	int nseen = 0, bad = 0, syms = 0, lines = 0, named = 0;
	for (int i = 0; i < n && cli_line(out, i, line, sizeof line) == 0; i++) {
		char t[32], d[32], who[32], tname[32], name[80], want_t[32], want_d[32], want_who[32];
		const struct posix_trace_event_info *e = &ev[i].info;
		/* the trace says who its threads were: PID/TID and NAME columns */
		REQUIRE(sscanf(line, "%31s %31s %31s %31s %79s", t, d, who, tname, name) == 5);
		/* one PID/TID per thread, the same on each of its lines, not
		 * another thread's (the app's threads all live to the end); the
		 * recorder's threads, which the trace does not name, keep their
		 * number in the process */
		int idx = 0, pos = 0, k;
		for (k = 0; k < nseen; k++)
			if (seen[k].pid == e->posix_pid) {
				pos++;
				if (seen[k].th == e->posix_thread_id)
					break;
			}
		if (k == nseen && nseen < 64) {
			seen[nseen].pid = e->posix_pid;
			seen[nseen].th = e->posix_thread_id;
			snprintf(seen[nseen].who, sizeof seen[nseen].who, "%s", who);
			for (int j = 0; j < nseen; j++)
				CHECK(strcmp(seen[j].who, who) != 0);
			nseen++;
			idx = pos + 1;
		} else if (k < nseen) {
			idx = pos;
			CHECK(!strcmp(seen[k].who, who));
		}
		int is_rec = !strcmp(tname, "-");
		rel(want_t, sizeof want_t, (int64_t)(ns(e) - t0), 0);
		rel(want_d, sizeof want_d, (int64_t)(ns(e) - prev), 1);
		prev = ns(e);
		if (e->posix_pid == 0)
			snprintf(want_who, sizeof want_who, "-");
		else if (is_rec)
			snprintf(want_who, sizeof want_who, "%d/%d", (int)e->posix_pid, idx);
		else { /* PID/TID (which TID: checked below and by the uniqueness above) */
			int wp = 0, wt = 0;
			CHECK(sscanf(who, "%d/%d", &wp, &wt) == 2 && wt > 0);
			snprintf(want_who, sizeof want_who, "%d/%d", (int)e->posix_pid, wt);
		}
		if (strcmp(t, want_t) || strcmp(d, want_d) || strcmp(who, want_who) ||
		    strcmp(name, ev[i].name)) {
			if (bad++ < 5)
				fprintf(stderr, "line %d: %s\n  expected %s %s %s %s\n", i, line, want_t,
				        want_d, want_who, ev[i].name);
		}
		if (!strcmp(ev[i].name, "app_start") || !strcmp(ev[i].name, "tick")) {
			char w[32]; /* the main thread: its TID is the pid, its name the program's */
			snprintf(w, sizeof w, "%d/%d", (int)e->posix_pid, (int)e->posix_pid);
			CHECK(!strcmp(who, w) && !strcmp(tname, "app"));
		}
		if (!strcmp(ev[i].name, "request")) {
			char q[64], wname[32];
			int me = -1, r = -1;
			snprintf(q, sizeof q, "\"%.*s\"", (int)ev[i].len, (char *)ev[i].data);
			CHECK(strstr(line, q) != NULL);
			/* the worker named itself "worker-N"; N is in its URL */
			CHECK(sscanf((char *)ev[i].data, "GET /item/%d/%d", &me, &r) == 2);
			snprintf(wname, sizeof wname, "worker-%d", me);
			CHECK(!strcmp(tname, wname));
			named += !strcmp(tname, wname);
			syms += dwarf ? strstr(line, "@ worker+0x") && strstr(line, "(app.c:")
			              : strstr(line, "@ app+0x") != NULL;
			lines++;
		}
		if (!strcmp(ev[i].name, "reply")) { /* struct reply, described: by field */
			int v[4];
			char want[128];
			REQUIRE(ev[i].len == sizeof v);
			memcpy(v, ev[i].data, sizeof v);
			snprintf(want, sizeof want, "  worker=%d round=%d status=%d bytes=%u  ", v[0],
			         v[1], v[2], (unsigned)v[3]);
			CHECK(strstr(line, want) != NULL);
		}
		if (!strcmp(ev[i].name, "app_start"))
			CHECK(strstr(line, "\"constructor\"") != NULL);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(syms, lines);
	CHECK_EQ(named, lines);
	free(out);
	free(err);

	/* --event, --pid */
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--event", "request,tick"), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), cli_count(ev, n, "request") + cli_count(ev, n, "tick"));
	CHECK(!cli_contains(out, " reply "));
	free(out);
	pid_t child = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(ev[i].name, "child_step"))
			child = ev[i].info.posix_pid;
	char pidarg[16];
	snprintf(pidarg, sizeof pidarg, "%d", (int)child);
	CHECK_EQ(cli_run(CLI("show", "-p", pidarg, (char *)log), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), 5);
	for (int i = 0; i < 5 && cli_line(out, i, line, sizeof line) == 0; i++)
		CHECK(strstr(line, "child_step") && strstr(line, "\"child step "));
	free(out);

	/* --since / --until: the events in the window */
	uint64_t a = (ns(&ev[n - 1].info) - t0) / 3, b = 2 * a;
	char sa[32], sb[32];
	snprintf(sa, sizeof sa, "%.9f", (double)a / 1e9);
	snprintf(sb, sizeof sb, "%.9f", (double)b / 1e9);
	int want = 0;
	for (int i = 0; i < n; i++) {
		double r = (double)(int64_t)(ns(&ev[i].info) - t0) / 1e9;
		want += r >= atof(sa) && r <= atof(sb);
	}
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--since", sa, "--until", sb), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), want);
	free(out);

	/* --absolute: UTC, ISO 8601 */
	CHECK_EQ(cli_run(CLI("show", "--absolute", (char *)log), &out, NULL), 0);
	{
		char iso[40];
		time_t s = ev[0].info.posix_timestamp.tv_sec;
		struct tm tm;
		gmtime_r(&s, &tm);
		strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S.", &tm);
		CHECK(out && strncmp(out + strspn(out, " "), iso, strlen(iso)) == 0);
	}
	free(out);

	/* errors */
	CHECK_EQ(cli_run(CLI("show", "/nonexistent/x.ptlog"), NULL, &err), 1);
	CHECK(cli_contains(err, "/nonexistent/x.ptlog"));
	free(err);
	const char *txt = cli_path("notes.txt");
	FILE *tf = fopen(txt, "w");
	REQUIRE(tf != NULL);
	fputs("# not a log\n", tf);
	fclose(tf);
	CHECK_EQ(cli_run(CLI("show", (char *)txt), NULL, &err), 1);
	CHECK(cli_contains(err, txt) && cli_contains(err, "not a posixtrace log"));
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--event", "no_such_type"), NULL, &err), 1);
	CHECK(cli_contains(err, "no_such_type"));
	free(err);
	CHECK_EQ(cli_run(CLI("show"), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--since", "soon"), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--bogus"), NULL, NULL), 2);
	free(ev);
	T_END();
}
