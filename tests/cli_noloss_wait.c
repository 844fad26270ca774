/*
 * cli_noloss_wait.c -- `record --no-loss`: the program's waits for room
 * are in the trace and told by record, show, info and stats.
 *
 * This test, run as the program (--program GO N), waits for the file GO,
 * then records N "tick" events from its main thread and N from a thread
 * named "second", timing each call to posix_trace_event() (the witness:
 * a thread cannot have been held longer than its calls took).  The test
 * records it with --no-loss and a 16 KiB stream, and stops the recorder
 * (SIGSTOP: its flusher makes no room) before it lets the program go,
 * for 200 ms: both threads must wait, well within the 1 s bound, so
 * nothing is lost.  Then:
 *  - record exits 0 and its summary says how many waits;
 *  - every tick is in the log; the posixtrace_noloss_wait events are there,
 *    one at least per thread, and their sum per thread (show, each line
 *    "waited N ns") is at most the time that thread spent in its calls;
 *  - info --rows 1 shows the thread held longest and a line for the other;
 *  - info's and stats' (text and JSON) per-thread counts and totals are
 *    exactly show's, and info's longest wait is show's longest (info
 *    takes them from the log's summary, stats adds them up as it reads).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

#define N 20000

static trace_event_id_t ev_tick;
static uint64_t in_calls[2];

static uint64_t mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void ticks(int me)
{
	for (uint64_t i = 0; i < N; i++) {
		uint64_t t = mono();
		posix_trace_event(ev_tick, &i, sizeof i);
		in_calls[me] += mono() - t;
	}
}

static void *second(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "second");
	ticks(1);
	return NULL;
}

static int program(const char *go)
{
	struct stat st;
	pthread_t t;
	posix_trace_eventid_open("tick", &ev_tick);
	for (int i = 0; i < 20000 && stat(go, &st) != 0; i++) /* 20 s at most */
		usleep(1000);
	pthread_create(&t, NULL, second, NULL);
	ticks(0);
	pthread_join(t, NULL);
	/* the witness: each thread's time inside its calls, on stdout */
	printf("calls main %llu second %llu\n", (unsigned long long)in_calls[0],
	       (unsigned long long)in_calls[1]);
	return 0;
}

/* The number after key in s (JSON), or -1. */
static long long after(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

int main(int argc, char **argv)
{
	char self[4096], line[1024], key[200];
	char *out = NULL, *err = NULL;

	if (argc == 3 && !strcmp(argv[1], "--program"))
		return program(argv[2]);
	T_BEGIN(120);
	cli_setup();
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	REQUIRE(sl > 0);
	self[sl] = 0;
	const char *log = cli_path("nl.ptlog"), *go = cli_path("go");
	const char *o_out = cli_path("rec.out"), *o_err = cli_path("rec.err");
	pid_t rec = cli_start(CLI("record", "--no-loss", "--size", "16K", "-o", (char *)log, "--",
	                          self, "--program", (char *)go), o_out, o_err);
	/* the recorder and its stream are up once the log exists; stop it,
	 * let the program go, hold the recorder 200 ms */
	struct stat st;
	for (int i = 0; i < 10000 && stat(log, &st) != 0; i++)
		usleep(1000);
	usleep(50000);
	REQUIRE(kill(rec, SIGSTOP) == 0);
	FILE *g = fopen(go, "w");
	REQUIRE(g && fclose(g) == 0);
	usleep(200000);
	REQUIRE(kill(rec, SIGCONT) == 0);
	int status;
	REQUIRE(waitpid(rec, &status, 0) == rec);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	err = cli_slurp(o_err);
	out = cli_slurp(o_out);
	REQUIRE(err && out);
	CHECK(cli_contains(err, "no events lost"));
	CHECK(cli_contains(err, "for room in the stream (--no-loss)"));
	unsigned long long calls[2] = { 0, 0 };
	CHECK(sscanf(out, "calls main %llu second %llu", &calls[0], &calls[1]) == 2);
	free(err);
	free(out);

	/* show: every tick, and the waits with their time */
	CHECK_EQ(cli_run(CLI("show", (char *)log, "-e", "tick"), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), 2 * N);
	free(out);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "-e", "posixtrace_noloss_wait"), &out, NULL), 0);
	char who[2][48] = { "", "" }, longest[2][48] = { "", "" };
	unsigned long long n[2] = { 0, 0 }, ns[2] = { 0, 0 }, max[2] = { 0, 0 };
	for (const char *s = out; s && cli_next_line(&s, line, sizeof line) == 0;) {
		char w[48], name[32], d[40];
		unsigned long long v;
		REQUIRE(sscanf(line, "%*s %*s %47s %31s posixtrace_noloss_wait waited %llu ns (%39[^)])",
		               w, name, &v, d) == 4);
		int k = !strcmp(name, "second");
		snprintf(who[k], sizeof who[k], "%s", w);
		n[k]++;
		ns[k] += v;
		if (v >= max[k]) /* (the longest, as show writes it) */
			max[k] = v, snprintf(longest[k], sizeof longest[k], "%s", d);
	}
	free(out);
	for (int k = 0; k < 2; k++) {
		CHECK(n[k] >= 1);
		CHECK(ns[k] > 0 && ns[k] <= calls[k]);
		if (ns[k] > calls[k])
			fprintf(stderr, "thread %d: waits of %llu ns in calls of %llu ns\n", k, ns[k],
			        calls[k]);
	}
	/* stats' text, which adds up the waits it reads: each thread's count
	 * and total wait as it writes them */
	char total[2][48] = { "", "" };
	CHECK_EQ(cli_run(CLI("stats", (char *)log), &out, NULL), 0);
	for (int k = 0; k < 2; k++) {
		snprintf(key, sizeof key, "\n%s ", who[k]);
		const char *p = out ? strstr(out, key) : NULL;
		unsigned long long cnt = 0, sw = 0;
		char num[24] = "", unit[16] = "";
		CHECK(p && sscanf(p + strlen(key), "%*s %llu %*s %llu %23s %15s", &cnt, &sw, num,
		                  unit) == 4);
		CHECK_EQ(cnt, N + n[k]);
		CHECK_EQ(sw, n[k]);
		snprintf(total[k], sizeof total[k], "%s %s", num, unit);
	}
	free(out);
	/* info (from the log's summary, format 10): per thread, the same
	 * count and total, and the longest wait show gave */
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	CHECK(cli_contains(out, "\nno-loss waits (threads held for room"));
	for (int k = 0; k < 2; k++) {
		const char *p = strstr(out, "\nno-loss waits");
		snprintf(key, sizeof key, "\n  %-14s  ", who[k]);
		p = p ? strstr(p, key) : NULL;
		unsigned long long cnt = 0;
		char a[24] = "", au[16] = "", b[24] = "", bu[16] = "", t[48], l[48];
		CHECK(p && sscanf(p + strlen(key), "%*s %llu %23s %15s %23s %15s", &cnt, a, au, b,
		                  bu) == 5);
		snprintf(t, sizeof t, "%s %s", a, au);
		snprintf(l, sizeof l, "%s %s", b, bu);
		CHECK_EQ(cnt, n[k]);
		CHECK(!strcmp(t, total[k]));
		CHECK(!strcmp(l, longest[k]));
		if (strcmp(t, total[k]) || strcmp(l, longest[k]))
			fprintf(stderr, "info: %s: total %s (stats: %s), longest %s (show: %s)\n", who[k],
			        t, total[k], l, longest[k]);
	}
	free(out);
	/* cut at --rows 1: the thread held longest, then a line for the other */
	CHECK_EQ(cli_run(CLI("info", "--rows", "1", (char *)log), &out, NULL), 0);
	{
		const char *p = out ? strstr(out, "\nno-loss waits") : NULL;
		const char *e = p ? strstr(p + 1, "\n\n") : NULL; /* (the table's end) */
		int shown[2];
		for (int k = 0; k < 2; k++) {
			snprintf(key, sizeof key, "\n  %-14s  ", who[k]);
			const char *r = p ? strstr(p, key) : NULL;
			shown[k] = r && (!e || r < e);
		}
		CHECK_EQ(shown[0] + shown[1], 1);
		if (shown[0] + shown[1] != 1)
			fprintf(stderr, "info --rows 1 (%s %s):\n%s\n", who[0], who[1], p ? p : "");
		if (ns[0] != ns[1]) /* (equal: the first in the table's order) */
			CHECK(shown[ns[1] > ns[0]]);
		int other = shown[0] ? 1 : 0;
		snprintf(key, sizeof key, "\n  (and 1 more thread, %llu waits in all: --rows 0 lists "
		         "every one)\n", n[other]);
		CHECK(p && strstr(p, key) != NULL);
		if (!p || !strstr(p, key))
			fprintf(stderr, "info --rows 1, not \"%s\":\n%s\n", key + 1, p ? p : "");
	}
	free(out);
	CHECK_EQ(cli_run(CLI("stats", (char *)log, "--json"), &out, NULL), 0);
	for (int k = 0; k < 2; k++) {
		snprintf(key, sizeof key, "\"thread\":\"%s\",", who[k]);
		const char *p = strstr(out, key);
		CHECK(p != NULL);
		CHECK_EQ(after(p, "\"noloss_waits\":"), (long long)n[k]);
		CHECK_EQ(after(p, "\"noloss_wait_ns\":"), (long long)ns[k]);
	}
	free(out);
	T_END();
}
