/*
 * cli_stream.c -- every command that reads a log streams it: on logs of
 * 200 000 and 2 000 000 events (tests/biglog.h: 2 processes x 4 threads,
 * 9 types, a counted gap every 100 000 events) the peak RSS of `info`,
 * `stats`, `show`, `export ctf|chrome|perfetto` (getrusage of the child)
 * is the same within 10% at both sizes, `export html` runs, and every
 * count is exact against the generator's own (closed form or recomputed
 * event by event):
 * info's totals and per-type counts, stats --json per type, process and
 * thread, the lines of show and of its filters (--type, --thread (PID/N, a pthread_t),
 * --pid, --exclude, --from/--to relative and absolute, a late --from
 * found through the block index with its gaps' counts), the events of the
 * Chrome export and, read back by babeltrace2 (small size; skipped
 * without it), the CTF export's events, each event's call site and the
 * discarded events; a type recorded from more call sites than 16 bits
 * number gets 32-bit site numbers, each site listed once.  A log cut
 * short (no END block) is shown whole and said to be cut short, show and
 * stats give the same lines on it as on the finished log in one pass
 * (the bytes the kernel counts them reading), and info, with no summary
 * to read, counts it by reading it; damage in the
 * middle of a finished log (summary intact) is one error event, and
 * every command still works.
 */
#include <inttypes.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "biglog.h"

/* lines of a file (and of them, those containing what, if not NULL) */
static long long count_lines(const char *path, const char *what, long long *with)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	long long n = 0, w = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		n += strchr(line, '\n') != NULL;
		w += what && strstr(line, what);
	}
	fclose(f);
	if (with)
		*with = w;
	return n;
}

/* events of the biglog of n events whose timestamp is in [lo, hi] (ns
 * since the first user event) and that match: pid (0: any), thread index
 * (0: any), type (-1: any), excluded types mask (bits of ids 16..24) */
static long long expect(uint64_t n, uint64_t lo, uint64_t hi, int pid, unsigned idx, int type,
                        unsigned excl)
{
	long long c = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t = i * 200;
		if (i && i % BIGLOG_GAP == 0 && pid == 0 && idx == 0) { /* OVERFLOW, RESUME */
			c += t - 100 >= lo && t - 100 <= hi && (type < 0 || type == 4);
			c += t - 50 >= lo && t - 50 <= hi && (type < 0 || type == 5);
		}
		unsigned id = biglog_id(i);
		if (t < lo || t > hi || (pid && biglog_pid(i) != pid) ||
		    (idx && (unsigned)(i / 8 % 4) + 1 != idx) || (type >= 0 && (unsigned)type != id) ||
		    (excl >> (id - 16) & 1))
			continue;
		c++;
	}
	return c;
}

/* the number after key in s (JSON), -1 if none */
static long long json_num(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* babeltrace2's lines (path) whose call site is the event's: its label
 * "0xADDR" (biglog's addresses are in no mapping: no location) is
 * biglog_addr() of the event, whose payload is its number i; 0x0 for the
 * reader's gap events (no payload) */
static long long sites_right(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	long long ok = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		const char *p = strstr(line, "{ site = ( \"0x");
		unsigned long long addr = 0, want = 0;
		unsigned b[8];
		int used = 0, len = -1;
		if (!p || sscanf(p, "{ site = ( \"0x%llx\" : container = %*u ), payload_len = %d%n",
		                 &addr, &len, &used) != 2 || !used)
			continue;
		p += used;
		if (len == 8 && sscanf(p, ", payload = [ [0] = %u, [1] = %u, [2] = %u, [3] = %u, "
		                          "[4] = %u, [5] = %u, [6] = %u, [7] = %u ]", &b[0], &b[1], &b[2],
		                       &b[3], &b[4], &b[5], &b[6], &b[7]) == 8) {
			uint64_t i = 0;
			for (int k = 7; k >= 0; k--)
				i = i << 8 | (b[k] & 0xff);
			want = biglog_addr(i, 16);
		} else if (len != 0) {
			continue;
		}
		ok += addr == want;
	}
	fclose(f);
	return ok;
}

/* argv run with stdout to out and stderr to err: the bytes it read
 * (rchar of /proc/PID/io, the kernel's count, read before the child is
 * reaped); -1 if it failed */
static long long run_read(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	siginfo_t si;
	long long rchar = -1;
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0) {
		char path[64], line[128];
		snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
		FILE *f = fopen(path, "r");
		while (f && fgets(line, sizeof line, f))
			if (sscanf(line, "rchar: %lld", &rchar) == 1)
				break;
		if (f)
			fclose(f);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return rchar;
}

/* The files a and b the same, but for lines containing one of skip[]
 * (NULL-ended): 1 if so */
static int same_but(const char *a, const char *b, const char *const *skip)
{
	FILE *f = fopen(a, "r"), *g = fopen(b, "r");
	char x[8192], y[8192];
	int same = f && g, lines = 0;

	while (same) {
		char *p = fgets(x, sizeof x, f), *q = fgets(y, sizeof y, g);
		int k = 0;
		if (!p || !q) {
			same = !p && !q;
			break;
		}
		lines++;
		for (const char *const *w = skip; *w; w++)
			k |= strstr(x, *w) != NULL;
		if (!k && strcmp(x, y)) {
			fprintf(stderr, "%s and %s differ:\n%s%s", a, b, x, y);
			same = 0;
		}
	}
	if (f)
		fclose(f);
	if (g)
		fclose(g);
	return same && lines > 0;
}

struct size_run { long rss[6]; };
static const char *const cmd_names[6] = { "info", "stats", "show", "export ctf",
                                          "export chrome", "export perfetto" };

static void one_size(uint64_t n, struct size_run *r, const char *bt)
{
	char log[300], out[300], err[300], dir[300], arg[160], arg2[64];
	uint64_t total = n + 2 * biglog_gaps(n);
	long rss = 0;
	double secs = 0;
	char *s;

	snprintf(log, sizeof log, "%s/big-%" PRIu64 ".ptlog", cli_dir, n);
	snprintf(out, sizeof out, "%s/out.txt", cli_dir);
	snprintf(err, sizeof err, "%s/err.txt", cli_dir);
	snprintf(dir, sizeof dir, "%s/big.ctf", cli_dir);
	CHECK_RC(biglog_write(log, n, 1), 0);

	/* info: the totals and the per-type counts */
	CHECK_EQ(biglog_run(CLI("info", log), out, err, &r->rss[0], &secs), 0);
	s = cli_slurp(out);
	snprintf(arg, sizeof arg, "events        %" PRIu64 "\n", total);
	CHECK(cli_contains(s, arg));
	snprintf(arg, sizeof arg, "  %10" PRIu64 "    17  alpha\n", biglog_count(n, 17));
	CHECK(cli_contains(s, arg));
	snprintf(arg, sizeof arg, "  %10" PRIu64 "    16  posix_trace_unnamed_userevent\n",
	         biglog_count(n, POSIX_TRACE_UNNAMED_USEREVENT));
	CHECK(cli_contains(s, arg));
	snprintf(arg, sizeof arg, "%" PRIu64 " events lost in %" PRIu64 " gap%s",
	         BIGLOG_LOST * biglog_gaps(n), biglog_gaps(n), biglog_gaps(n) == 1 ? "" : "s");
	CHECK(cli_contains(s, arg));
	if (!cli_contains(s, arg))
		fprintf(stderr, "info:\n%s\n", s ? s : "");
	CHECK(cli_contains(s, "counted       from the summary the log carries\n"));
	free(s);

	/* stats --json: types, processes, threads */
	CHECK_EQ(biglog_run(CLI("stats", "--json", log), out, err, &r->rss[1], &secs), 0);
	s = cli_slurp(out);
	CHECK_EQ(json_num(s, "\"events\":"), (long long)total);
	for (unsigned id = 16; id <= 24; id++) {
		char key[80];
		const char *nm[] = { "posix_trace_unnamed_userevent", "alpha", "beta", "gamma", "delta",
		                     "epsilon", "zeta", "eta", "theta" };
		snprintf(key, sizeof key, "\"name\":\"%s\",\"count\":", nm[id - 16]);
		CHECK_EQ(json_num(s, key), (long long)biglog_count(n, id));
	}
	CHECK_EQ(json_num(s, "{\"pid\":4000,\"threads\":4,\"count\":"),
	         expect(n, 0, UINT64_MAX, 4000, 0, -1, 0));
	/* a thread the trace does not name: PID/N, no kernel TID, its pthread_t */
	snprintf(arg, sizeof arg, "{\"pid\":4001,\"thread\":\"4001/3\",\"tid\":null,\"name\":null,"
	         "\"pthread_t\":\"%#" PRIx64 "\",\"count\":", biglog_thread(16));
	CHECK(cli_contains(s, arg));
	CHECK_EQ(json_num(s, "\"gaps\":"), (long long)biglog_gaps(n));
	free(s);

	/* show: every event, and the filters */
	CHECK_EQ(biglog_run(CLI("show", log), out, err, &r->rss[2], &secs), 0);
	CHECK_EQ(count_lines(out, NULL, NULL), (long long)total);
	CHECK_EQ(biglog_run(CLI("show", log, "--type", "beta", "--thread", "4001/2"), out, err,
	                    &rss, &secs), 0);
	CHECK_EQ(count_lines(out, NULL, NULL), expect(n, 0, UINT64_MAX, 4001, 2, 18, 0));
	snprintf(arg, sizeof arg, "%#" PRIx64, biglog_thread(24));
	CHECK_EQ(biglog_run(CLI("show", log, "--thread", arg, "--pid", "4000"), out, err, &rss,
	                    &secs), 0);
	CHECK_EQ(count_lines(out, NULL, NULL), expect(n, 0, UINT64_MAX, 4000, 4, -1, 0));
	CHECK_EQ(biglog_run(CLI("show", log, "--exclude", "alpha,posix_trace_unnamed_userevent"),
	                    out, err, &rss, &secs), 0);
	CHECK_EQ(count_lines(out, NULL, NULL),
	         (long long)(total - biglog_count(n, 17) - biglog_count(n, 16)));
	/* a window: 30 ms from 10 ms on, relative; then the same absolute */
	CHECK_EQ(biglog_run(CLI("show", log, "--from", "10ms", "--to", "0.04"), out, err, &rss,
	                    &secs), 0);
	long long win = expect(n, 10000000, 40000000, 0, 0, -1, 0);
	CHECK_EQ(count_lines(out, NULL, NULL), win);
	snprintf(arg, sizeof arg, "@%llu.01", BIGLOG_T0 / 1000000000u);
	snprintf(arg2, sizeof arg2, "2025-11-27T15:00:00.04Z");
	CHECK_EQ(biglog_run(CLI("show", log, "--from", arg, "--to", arg2), out, err, &rss,
	                    &secs), 0);
	CHECK_EQ(count_lines(out, NULL, NULL), win);

	/* a window that starts late: found through the block index, and each
	 * gap after it still counts its own losses */
	if (n > BIGLOG_GAP * 3) {
		long long resumes = 0;
		CHECK_EQ(biglog_run(CLI("show", log, "--from", "0.03"), out, err, &rss, &secs), 0);
		CHECK_EQ(count_lines(out, NULL, NULL), expect(n, 30000000, UINT64_MAX, 0, 0, -1, 0));
		count_lines(out, "posix_trace_resume", &resumes);
		long long seven = 0;
		count_lines(out, "7 events lost in this gap", &seven);
		CHECK_EQ(resumes, expect(n, 30000000, UINT64_MAX, 0, 0, 5, 0));
		CHECK_EQ(seven, resumes);
	}

	/* exports */
	CHECK_EQ(biglog_run(CLI("export", "--format", "ctf", "--force", log, "-o", dir), out, err,
	                    &r->rss[3], &secs), 0);
	if (bt && n <= 200000) {
		char cmd[1400];
		long long with = 0;
		snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s", bt, dir, out, err);
		CHECK_EQ(system(cmd), 0);
		CHECK_EQ(count_lines(out, NULL, NULL), (long long)total);
		/* each event's call site: a number whose label is its address */
		CHECK_EQ(sites_right(out), (long long)total);
		/* "Tracer discarded 7 events between ..." once per gap */
		count_lines(err, "Tracer discarded 7 events", &with);
		CHECK_EQ(with, (long long)biglog_gaps(n));
	}
	{
		char cmd[400];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		CHECK_EQ(system(cmd), 0);
	}
	snprintf(dir, sizeof dir, "%s/big.json", cli_dir);
	CHECK_EQ(biglog_run(CLI("export", "--format", "chrome", "--force", log, "-o", dir), out, err,
	                    &r->rss[4], &secs), 0);
	long long inst = 0;
	count_lines(dir, "\"ph\":\"i\"", &inst);
	CHECK_EQ(inst, (long long)total);
	unlink(dir);
	snprintf(dir, sizeof dir, "%s/big.pftrace", cli_dir);
	CHECK_EQ(biglog_run(CLI("export", "--format", "perfetto", "--force", log, "-o", dir), out,
	                    err, &r->rss[5], &secs), 0);
	unlink(dir);
	snprintf(dir, sizeof dir, "%s/big.html", cli_dir);
	CHECK_EQ(biglog_run(CLI("export", "--format", "html", "--force", log, "-o", dir), out, err,
	                    &rss, &secs), 0);
	unlink(dir);
	unlink(log);
}

int main(void)
{
	struct size_run small, big;
	char log[300], out[300], err[300];

	T_BEGIN(600);
	cli_setup();
	const char *bt = cli_which("babeltrace2");
	if (!bt)
		printf("SKIP part: babeltrace2 is not installed (Debian: babeltrace2): the CTF export "
		       "is not read back\n");
	one_size(200000, &small, bt);
	one_size(2000000, &big, NULL);
	for (int k = 0; k < 6; k++) {
		printf("%-14s peak RSS %6ld KiB at 200 000 events, %6ld KiB at 2 000 000\n",
		       cmd_names[k], small.rss[k], big.rss[k]);
		CHECK(big.rss[k] * 10 <= small.rss[k] * 11);
	}

	/* more call sites to a type than 16 bits number (66 000 each): the
	 * export starts again with 32-bit numbers; each site's label once
	 * (babeltrace2 would take minutes over such metadata: not read) */
	{
		char dir[300], meta[400];
		snprintf(log, sizeof log, "%s/sites.ptlog", cli_dir);
		snprintf(dir, sizeof dir, "%s/sites.ctf", cli_dir);
		CHECK_RC(biglog_write_sites(log, 600000, 1, 9 * 66000), 0);
		CHECK_EQ(biglog_run(CLI("export", "-f", "ctf", log, "-o", dir), NULL, NULL, NULL, NULL),
		         0);
		snprintf(meta, sizeof meta, "%s/metadata", dir);
		char *s = cli_slurp(meta);
		long long labels = 0, wide = 0;
		for (const char *q = s; q && *q; q++) /* (one pass: no strstr on 30 MB) */
			labels += q[0] == '\n' && q[1] == '\t' && q[2] == '"' && q[3] == '0' &&
			          q[4] == 'x';
		for (const char *q = s; q && (q = strstr(q, "typealias enum : uint32_t {")) != NULL; q++)
			wide++;
		CHECK_EQ(labels, 9 * 66000 + 2); /* and the gaps' OVERFLOW, RESUME: 0x0 */
		CHECK_EQ(wide, 11);
		CHECK(s && !strstr(s, "enum : uint16_t"));
		free(s);
		char cmd[700];
		snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, log);
		CHECK_EQ(system(cmd), 0);
	}

	/* a log cut short: every event shown, and said */
	snprintf(log, sizeof log, "%s/cut.ptlog", cli_dir);
	snprintf(out, sizeof out, "%s/out.txt", cli_dir);
	snprintf(err, sizeof err, "%s/err.txt", cli_dir);
	CHECK_RC(biglog_write(log, 150000, 0), 0);
	CHECK_EQ(biglog_run(CLI("show", log), out, err, NULL, NULL), 0);
	CHECK_EQ(count_lines(out, NULL, NULL), 150000 + 2);
	char *s = cli_slurp(err);
	CHECK(cli_contains(s, "no final status"));
	free(s);
	/* show and stats on a log with no summary (the same events, cut
	 * short): the same lines as on the finished log, but for what the cut
	 * changes (the loss count is not final), in one pass over the events:
	 * the file read about twice (posix_trace_open's scan, then the
	 * events), where a first pass for the totals made it three times */
	{
		char fin[300], out2[300];
		snprintf(fin, sizeof fin, "%s/whole.ptlog", cli_dir);
		snprintf(out2, sizeof out2, "%s/out2.txt", cli_dir);
		CHECK_RC(biglog_write(fin, 150000, 1), 0);
		struct stat cut_sb;
		REQUIRE(stat(log, &cut_sb) == 0);
		static const char *const none[] = { NULL };
		static const char *const losses[] = { "\"lost\":", NULL };
		const char *const *skips[] = { none, none, losses };
		char *const *cmds[][2] = {
			{ CLI("show", log), CLI("show", fin) },
			{ CLI("stats", "--width", "100", log), CLI("stats", "--width", "100", fin) },
			{ CLI("stats", "--json", log), CLI("stats", "--json", fin) },
		};
		for (int k = 0; k < 3; k++) {
			long long rd = run_read(cmds[k][0], out, err);
			CHECK(rd > 0);
			/* (2.07 times; with a first pass for the totals 3.07) */
			CHECK(rd < 5 * (long long)cut_sb.st_size / 2);
			if (rd >= 5 * (long long)cut_sb.st_size / 2)
				fprintf(stderr, "read %lld bytes of a %lld-byte log\n", rd,
				        (long long)cut_sb.st_size);
			CHECK(run_read(cmds[k][1], out2, err) > 0);
			CHECK(same_but(out, out2, skips[k]));
		}
		/* (stats --json: the path is in the first line, with the losses) */
		unlink(fin);
	}
	/* info: no summary in it, so counted by reading it, and the same counts */
	CHECK_EQ(biglog_run(CLI("info", log), out, err, NULL, NULL), 0);
	s = cli_slurp(out);
	CHECK(cli_contains(s, "events        150002\n"));
	CHECK(cli_contains(s, "counted       by reading the log"));
	snprintf(log, sizeof log, "  %10llu    17  alpha\n", (unsigned long long)biglog_count(150000, 17));
	CHECK(cli_contains(s, log));
	free(s);

	/* damage in the middle of a finished log: its summary still answers
	 * (info), the reading commands meet one error event (a thread, pid 0,
	 * the summary did not know) and every export still works */
	snprintf(log, sizeof log, "%s/hurt.ptlog", cli_dir);
	CHECK_RC(biglog_write(log, 150000, 1), 0);
	{
		int fd = open(log, O_RDWR);
		unsigned char b;
		REQUIRE(fd >= 0);
		off_t at = lseek(fd, 0, SEEK_END) / 2;
		REQUIRE(pread(fd, &b, 1, at) == 1);
		b ^= 0x10;
		REQUIRE(pwrite(fd, &b, 1, at) == 1);
		close(fd);
	}
	long long errs = 0;
	CHECK_EQ(biglog_run(CLI("show", log), out, err, NULL, NULL), 0);
	count_lines(out, "posix_trace_error", &errs);
	CHECK_EQ(errs, 1);
	CHECK_EQ(biglog_run(CLI("show", log, "--pid", "4000"), out, err, NULL, NULL), 0);
	count_lines(out, "posix_trace_error", &errs);
	CHECK_EQ(errs, 0);
	CHECK_EQ(biglog_run(CLI("stats", log), out, err, NULL, NULL), 0);
	snprintf(out, sizeof out, "%s/hurt.ctf", cli_dir);
	CHECK_EQ(biglog_run(CLI("export", "-f", "ctf", log, "-o", out), NULL, err, NULL, NULL), 0);
	snprintf(out, sizeof out, "%s/hurt.html", cli_dir);
	CHECK_EQ(biglog_run(CLI("export", "-f", "html", log, "-o", out), NULL, err, NULL, NULL), 0);
	snprintf(out, sizeof out, "%s/hurt.json", cli_dir);
	CHECK_EQ(biglog_run(CLI("export", "-f", "chrome", log, "-o", out), NULL, err, NULL, NULL), 0);
	T_END();
}
