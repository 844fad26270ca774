/*
 * cli_exits.c -- honest exits and notes, tried as a user would on a
 * recorded examples/app (the cases that need a full disk, a process
 * without the library or a file that is not executable are in
 * cli_diskfull, cli_live and cli_record):
 *  - show --from past the end of the trace (or --to before its start)
 *    says so and exits 1, naming when the trace runs;
 *  - info and the HTML page count the same processes and threads;
 *  - the top-level --help lists every export format (perfetto too), the
 *    thread naming and exit status 3;
 *  - stats prints span quantiles to the precision the histogram has (3
 *    significant digits: within 0.4%), the exact min/max/total as before,
 *    and names each thread of its per-thread table.
 */
#include <ctype.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

/* The significant digits of the number at the start of s ("2.07" 3). */
static int digits(const char *s)
{
	int n = 0, lead = 1;
	for (; isdigit((unsigned char)*s) || *s == '.'; s++) {
		if (*s == '.')
			continue;
		if (lead && *s == '0')
			continue;
		lead = 0;
		n++;
	}
	return n;
}

int main(void)
{
	char *out = NULL, *err = NULL, line[1024];

	T_BEGIN(120);
	cli_setup();
	const char *log = cli_path("app.ptlog");
	REQUIRE(cli_record_app(log, "0") == 0);

	/* a window outside the trace */
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--from", "10s"), &out, &err), 1);
	CHECK(out && !out[0]);
	CHECK(cli_contains(err, "no events from 10s: the trace runs from ") &&
	      cli_contains(err, "app.ptlog"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--to", "@1000"), &out, &err), 1);
	CHECK(cli_contains(err, "no events to @1000"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--from", "0.02", "--to", "0.01"), &out, &err), 1);
	CHECK(cli_contains(err, "--from is after --to"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--from", "0"), &out, NULL), 0);
	CHECK(cli_nlines(out) > 100);
	free(out);

	/* info and the HTML page agree on the processes and threads */
	unsigned procs = 0, threads = 0, hp = 0, ht = 0;
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	const char *p = strstr(out, "\nprocesses (");
	const char *t = strstr(out, "\nthreads (");
	CHECK(p && sscanf(p, "\nprocesses (%u)", &procs) == 1);
	CHECK(t && sscanf(t, "\nthreads (%u)", &threads) == 1);
	free(out);
	const char *html = cli_path("app.html");
	CHECK_EQ(cli_run(CLI("export", "-f", "html", (char *)log, "-o", (char *)html), NULL, NULL), 0);
	out = cli_slurp(html);
	p = out ? strstr(out, " processes, ") : NULL;
	while (p && p > out && isdigit((unsigned char)p[-1]))
		p--;
	CHECK(p && sscanf(p, "%u processes, %u threads", &hp, &ht) == 2);
	CHECK_EQ(procs, 2); /* examples/app and its forked child */
	CHECK_EQ(hp, procs);
	CHECK_EQ(ht, threads);
	free(out);

	/* the top-level help */
	CHECK_EQ(cli_run(CLI("--help"), &out, NULL), 0);
	CHECK(cli_contains(out, "chrome") && cli_contains(out, "html") && cli_contains(out, "ctf") &&
	      cli_contains(out, "perfetto"));
	CHECK(cli_contains(out, "PID/TID") && cli_contains(out, "--where"));
	CHECK(cli_contains(out, "or 3 if that is 0 but events were lost"));
	free(out);

	/* quantiles to the histogram's precision; max exact */
	CHECK_EQ(cli_run(CLI("stats", (char *)log, "--span", "request,reply"), &out, NULL), 0);
	int row = 0, named = 0;
	for (const char *s = out; s && cli_next_line(&s, line, sizeof line) == 0;) {
		char name[64], c[7][24], u[7][8];
		unsigned long long n, inc;
		if (sscanf(line, "%63s %llu %llu %23s %7s %23s %7s %23s %7s %23s %7s %23s %7s %23s %7s "
		                 "%23s %7s", name, &n, &inc, c[0], u[0], c[1], u[1], c[2], u[2], c[3], u[3],
		           c[4], u[4], c[5], u[5], c[6], u[6]) == 17 && !strcmp(name, "request..reply")) {
			row = 1;
			CHECK_EQ(n, 60);
			/* total, mean, max: 3 decimals of their unit; p50..p99.9: 3 digits */
			for (int k = 2; k < 6; k++) {
				CHECK(digits(c[k]) <= 3);
				if (digits(c[k]) > 3)
					fprintf(stderr, "quantile %s %s: more digits than it has\n", c[k], u[k]);
			}
			CHECK(strchr(c[6], '.') && strlen(strchr(c[6], '.')) == 4);
		}
		/* the per-thread table: PID/TID and name */
		int a, b;
		char tn[32];
		if (sscanf(line, "%d/%d %31s", &a, &b, tn) == 3 && !strncmp(tn, "worker-", 7))
			named++;
	}
	CHECK(row);
	CHECK_EQ(named, 3); /* the three workers in the threads table */
	free(out);
	T_END();
}
