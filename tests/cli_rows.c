/*
 * cli_rows.c -- info's and stats' tables of processes and threads cut at
 * --rows (default 50): the rows with the most events, in the table's
 * order, ties to the first; then one line with how many more and their
 * events.  --rows 0 (and a count at least the table's) shows every one;
 * stats --json always does.
 *
 * The log is written here: 120 processes (pids 1000-1119, one thread
 * each, no process entries: roots, in pid order), process 1000+i with
 * 1 + i % 7 events but 1077 with 500.  The 50 busiest: 1077, the 17 of 7
 * events, the 17 of 6, and the first 15 of the 17 of 5 (1004 to 1102):
 * 1109 and 1116, of 5 too, are cut, as is every process of 4 or fewer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"
#include "../src/log/log.h"

#define NPROC 120
#define BUSY  77
#define T0    1700000000000000000ull

static unsigned events_of(int i)
{
	return i == BUSY ? 500u : 1u + (unsigned)(i % 7);
}

static void write_log(const char *path)
{
	struct pt_logw w;
	int fd = t_log_create(path, &w, 64);
	uint64_t ts = T0;
	CHECK_RC(pt_logw_name(&w, 20, "job"), 0);
	for (int i = 0; i < NPROC; i++)
		for (unsigned k = 0; k < events_of(i); k++)
			CHECK_RC(pt_logw_event(&w, ts++, 1000 + i, 0x7000 + (uint64_t)i, 0, 20, 0, NULL, 0),
			         0);
	CHECK_RC(t_log_close(&w, fd), 0);
}

/* Whether the busiest-50 rule keeps process 1000+i */
static int kept(int i)
{
	unsigned n = events_of(i);
	return n >= 6 || (n == 5 && i <= 102);
}

/* Row of pid (1000+i) in a table: the line starts with the pid, after
 * the table's indent (info: right-aligned in 10 columns; stats: left). */
static int has_row(const char *out, const char *fmt, int i)
{
	char row[64];
	snprintf(row, sizeof row, fmt, 1000 + i);
	return out && cli_contains(out, row);
}

static void check_cut(const char *out, const char *proc_fmt, const char *thr_fmt)
{
	uint64_t rest = 0;
	int shown = 0, wrong = 0;

	for (int i = 0; i < NPROC; i++) {
		int p = has_row(out, proc_fmt, i), t = has_row(out, thr_fmt, i);
		if (p != kept(i) || t != kept(i)) {
			fprintf(stderr, "process %d: row %d, thread row %d, kept %d\n", 1000 + i, p, t,
			        kept(i));
			wrong++;
		}
		shown += p;
		if (!kept(i))
			rest += events_of(i);
	}
	CHECK_EQ(wrong, 0);
	CHECK_EQ(shown, 50);
	char line[160];
	snprintf(line, sizeof line, "(and 70 more processes, %llu events in all: --rows 0 lists every one)",
	         (unsigned long long)rest);
	CHECK(out && cli_contains(out, line));
	snprintf(line, sizeof line, "(and 70 more threads, %llu events in all: --rows 0 lists every one)",
	         (unsigned long long)rest);
	CHECK(out && cli_contains(out, line));
}

static void check_all(const char *out, const char *proc_fmt, const char *thr_fmt)
{
	int shown = 0;
	for (int i = 0; i < NPROC; i++)
		shown += has_row(out, proc_fmt, i) && has_row(out, thr_fmt, i);
	CHECK_EQ(shown, NPROC);
	CHECK(out && !cli_contains(out, " more processes, ") && !cli_contains(out, " more threads, "));
}

int main(void)
{
	T_BEGIN(120);
	cli_setup();
	const char *log = cli_path("rows.ptlog");
	char *out = NULL, *err = NULL;
	/* (info: "  %8d  " a process, "  PID/TID  " a thread; stats: at the
	 * line's start) */
	const char *ip = "\n      %d  ", *it = "\n  %d/", *sp = "\n%d ", *st = "\n%d/";

	write_log(log);
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, &err), 0);
	CHECK(out && cli_contains(out, "processes (120)"));
	CHECK(out && cli_contains(out, "\n      1077         -        1         500  "));
	check_cut(out, ip, it);
	free(out), free(err);
	CHECK_EQ(cli_run(CLI("stats", "--ascii", (char *)log), &out, &err), 0);
	CHECK(out && cli_contains(out, "\n1077               1     500 "));
	check_cut(out, sp, st);
	free(out), free(err);

	/* every row: --rows 0, or as many as the table has */
	const char *all[] = { "0", "120", "100000000" };
	for (int k = 0; k < 3; k++) {
		CHECK_EQ(cli_run(CLI("info", "--rows", (char *)all[k], (char *)log), &out, &err), 0);
		check_all(out, ip, it);
		free(out), free(err);
		CHECK_EQ(cli_run(CLI("stats", "--ascii", "--rows", (char *)all[k], (char *)log), &out, &err),
		         0);
		check_all(out, sp, st);
		free(out), free(err);
	}
	/* --json: every one, whatever --rows says */
	CHECK_EQ(cli_run(CLI("stats", "--json", "--rows", "3", (char *)log), &out, &err), 0);
	CHECK_EQ(out ? cli_count_str(out, "{\"pid\":") : 0, 2 * NPROC); /* (processes, threads) */
	free(out), free(err);
	/* one row: the busiest */
	CHECK_EQ(cli_run(CLI("stats", "--ascii", "--rows", "1", (char *)log), &out, &err), 0);
	CHECK(out && cli_contains(out, "\n1077               1     500 "));
	CHECK(out && cli_contains(out, "(and 119 more processes, "));
	free(out), free(err);

	/* a count that is not one: a usage error naming it */
	const char *bad[] = { "-1", "x", "", "5x", "100000001", "+3" };
	for (int k = 0; k < 6; k++) {
		CHECK_EQ(cli_run(CLI("info", "--rows", (char *)bad[k], (char *)log), &out, &err), 2);
		char said[64];
		snprintf(said, sizeof said, "--rows: '%s'", bad[k]);
		CHECK(err && cli_contains(err, said));
		free(out), free(err);
		CHECK_EQ(cli_run(CLI("stats", "--rows", (char *)bad[k], (char *)log), &out, &err), 2);
		CHECK(err && cli_contains(err, said));
		free(out), free(err);
	}
	T_END();
}
