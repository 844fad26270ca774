/*
 * reader.c -- `make bench`'s reader section: the commands that read a log
 * (info, stats, show, export ctf/chrome/perfetto/html) on logs of 5 M and 50 M
 * events (tests/biglog.h: 2 processes x 4 threads, 9 types, 8-byte
 * payloads), each timed with its peak RSS (getrusage of the child), and
 * babeltrace2 on the CTF export of the same run when it is installed.
 *
 *   build/bench/reader [N1 N2 ...]   sizes in events (default 5000000
 *                                    50000000); READER_DIR: where the logs
 *                                    go (default /tmp); READER_BT=0: skip
 *                                    babeltrace2
 *
 * `show --from` shows the last 1% of the trace (its rate is of the events
 * shown, the rest being skipped through the block index).  A size's
 * files are removed after its rows; the largest, the Chrome export of
 * 50 M events, is about 5 GB.  The machine may be loaded
 * (a shared VM): the load average is printed with the table.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include "../tests/biglog.h"
#include "bench_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

/* the trace the rows are of: its events (gaps' OVERFLOW/RESUME included) */
static uint64_t trace_events;

/* a command's row: n events read or shown in secs, peak RSS; out_bytes,
 * the output's size where it is a file kept (-1 otherwise) */
static void row(const char *what, uint64_t n, int rc, double secs, long rss_kb, const char *note,
                long long out_bytes)
{
	bench_json("reader", what, "trace_events", (double)trace_events, "events", (double)n,
	           "s", rc ? NAN : secs, "events_per_s", rc || secs <= 0 ? NAN : (double)n / secs,
	           "rss_mb", (double)rss_kb / 1024.0, "bytes_per_event",
	           out_bytes < 0 ? NAN : (double)out_bytes / (double)trace_events, NULL);
	printf("  %-30s %11llu  %6.2f s  %9.2f M/s  %7.1f MB%s%s%s\n", what,
	       (unsigned long long)n, secs, secs > 0 ? (double)n / secs / 1e6 : 0.0,
	       (double)rss_kb / 1024.0, rc ? "  FAILED rc=" : "", rc ? (rc < 0 ? "?" : "") : "",
	       note ? note : "");
	if (rc > 0)
		printf("    (exit status %d)\n", rc);
	fflush(stdout);
}

static long long file_size(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

static long long dir_size(const char *dir)
{
	char p[600];
	long long t = 0, s;
	snprintf(p, sizeof p, "%s/metadata", dir);
	t += (s = file_size(p)) > 0 ? s : 0;
	for (int k = 0; k < 64; k++) {
		snprintf(p, sizeof p, "%s/stream_%d", dir, k);
		t += (s = file_size(p)) > 0 ? s : 0;
	}
	return t;
}

static void one_size(const char *dir, uint64_t n)
{
	char log[512], out[512], cmd[600];
	const char *cli = PT_BUILD_DIR "/posixtrace";
	uint64_t total = n + 2 * biglog_gaps(n);
	long rss = 0;
	double t0 = bench_now_us(), secs = 0;
	int rc;

	snprintf(log, sizeof log, "%s/posixtrace-bench-%llu.ptlog", dir, (unsigned long long)n);
	if ((rc = biglog_write(log, n, 1)) != 0) {
		printf("  cannot write %s: %s\n", log, strerror(rc));
		return;
	}
	long long lsz = file_size(log);
	trace_events = total;
	bench_json("reader", "log", "trace_events", (double)total, "bytes_per_event",
	           (double)lsz / (double)total, "write_s", (bench_now_us() - t0) / 1e6, NULL);
	printf("\n%llu events (%llu with the gaps' OVERFLOW/RESUME), log %.1f MB (%.1f B/event), "
	       "written in %.2f s\n", (unsigned long long)n, (unsigned long long)total,
	       (double)lsz / 1e6, (double)lsz / (double)total, (bench_now_us() - t0) / 1e6);
	printf("  %-30s %11s  %8s  %11s  %10s\n", "command", "events", "time", "rate", "peak RSS");
	rc = biglog_run((char *const[]){ (char *)cli, "info", log, NULL }, NULL, NULL, &rss, &secs);
	row("info", total, rc, secs, rss, NULL, -1);
	rc = biglog_run((char *const[]){ (char *)cli, "stats", log, NULL }, NULL, NULL, &rss, &secs);
	row("stats", total, rc, secs, rss, NULL, -1);
	snprintf(out, sizeof out, "%s/posixtrace-bench-%llu.txt", dir, (unsigned long long)n);
	rc = biglog_run((char *const[]){ (char *)cli, "show", log, NULL }, out, NULL, &rss, &secs);
	row("show > file", total, rc, secs, rss, NULL, file_size(out));
	unlink(out);
	/* the last 1% of the trace: found through the block index */
	char from[32];
	snprintf(from, sizeof from, "%.9f", (double)n * 200e-9 * 0.99);
	rc = biglog_run((char *const[]){ (char *)cli, "show", log, "--from", from, NULL }, out,
	                NULL, &rss, &secs);
	row("show --from (last 1%) > file", total / 100, rc, secs, rss, NULL, -1);
	unlink(out);
	snprintf(out, sizeof out, "%s/posixtrace-bench-%llu.ctf", dir, (unsigned long long)n);
	rc = biglog_run((char *const[]){ (char *)cli, "export", "--format", "ctf", "--force", log,
	                                 "-o", out, NULL }, NULL, NULL, &rss, &secs);
	char note[120];
	long long osz = dir_size(out);
	snprintf(note, sizeof note, "  %.1f B/event", (double)osz / (double)total);
	row("export ctf", total, rc, secs, rss, note, osz);
	const char *bt = getenv("READER_BT") && !strcmp(getenv("READER_BT"), "0") ? NULL
	                                                                            : bench_which("babeltrace2");
	if (bt && !rc) {
		char bto[600];
		snprintf(bto, sizeof bto, "%s.txt", out);
		rc = biglog_run((char *const[]){ (char *)bt, "-c", "sink.utils.counter", out, NULL },
		                bto, NULL, &rss, &secs);
		row("babeltrace2 counter (ctf)", total, rc, secs, rss, NULL, -1);
		rc = biglog_run((char *const[]){ (char *)bt, out, NULL }, NULL, NULL, &rss, &secs);
		row("babeltrace2 text > /dev/null", total, rc, secs, rss, NULL, -1);
		unlink(bto);
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
	if (system(cmd) != 0)
		printf("  (could not remove %s)\n", out);
	snprintf(out, sizeof out, "%s/posixtrace-bench-%llu.json", dir, (unsigned long long)n);
	rc = biglog_run((char *const[]){ (char *)cli, "export", "--format", "chrome", "--force", log,
	                                 "-o", out, NULL }, NULL, NULL, &rss, &secs);
	osz = file_size(out);
	snprintf(note, sizeof note, "  %.1f B/event", (double)osz / (double)total);
	row("export chrome", total, rc, secs, rss, note, osz);
	unlink(out);
	snprintf(out, sizeof out, "%s/posixtrace-bench-%llu.pftrace", dir, (unsigned long long)n);
	rc = biglog_run((char *const[]){ (char *)cli, "export", "--format", "perfetto", "--force",
	                                 log, "-o", out, NULL }, NULL, NULL, &rss, &secs);
	osz = file_size(out);
	snprintf(note, sizeof note, "  %.1f B/event", (double)osz / (double)total);
	row("export perfetto", total, rc, secs, rss, note, osz);
	unlink(out);
	snprintf(out, sizeof out, "%s/posixtrace-bench-%llu.html", dir, (unsigned long long)n);
	rc = biglog_run((char *const[]){ (char *)cli, "export", "--format", "html", "--force", log,
	                                 "-o", out, NULL }, NULL, NULL, &rss, &secs);
	row("export html", total, rc, secs, rss, NULL, file_size(out));
	unlink(out);
	unlink(log);
}

int main(int argc, char **argv)
{
	static const uint64_t sizes[] = { 5000000, 50000000, 0 };
	bench_sizes("reader: the commands that read a log, on logs of generated events", argc, argv,
	            getenv("READER_DIR") ? getenv("READER_DIR") : "/tmp", one_size, sizes);
	return 0;
}
