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
 * Then the same commands on a log of as many events that `posixtrace
 * record --no-loss` made of one thread of bench/keep at full speed: the
 * log format 9 that a busy thread makes (its chunks as CHUNK blocks), its
 * rows named "recorded: ...".
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
	printf("  %-40s %11llu  %6.2f s  %9.2f M/s  %7.1f MB%s%s%s\n", what,
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

/* The commands' rows on log (total events in it), each row's name after
 * tag; from: the --from time of the last 1% of its events; outputs in dir,
 * named after n. */
static void read_rows(const char *dir, const char *log, uint64_t n, uint64_t total,
                      const char *tag, const char *from)
{
	char out[512], cmd[600], what[96];
	const char *cli = PT_BUILD_DIR "/posixtrace";
	long rss = 0;
	double secs = 0;
	int rc;

#define WHAT(s) (snprintf(what, sizeof what, "%s%s", tag, (s)), what)
	printf("  %-40s %11s  %8s  %11s  %10s\n", "command", "events", "time", "rate", "peak RSS");
	rc = biglog_run((char *const[]){ (char *)cli, "info", (char *)log, NULL }, NULL, NULL, &rss,
	                &secs);
	row(WHAT("info"), total, rc, secs, rss, NULL, -1);
	rc = biglog_run((char *const[]){ (char *)cli, "stats", (char *)log, NULL }, NULL, NULL, &rss,
	                &secs);
	row(WHAT("stats"), total, rc, secs, rss, NULL, -1);
	snprintf(out, sizeof out, "%s/posixtrace-bench-%llu.txt", dir, (unsigned long long)n);
	rc = biglog_run((char *const[]){ (char *)cli, "show", (char *)log, NULL }, out, NULL, &rss,
	                &secs);
	row(WHAT("show > file"), total, rc, secs, rss, NULL, file_size(out));
	unlink(out);
	/* the last 1% of the trace: found through the block index */
	rc = biglog_run((char *const[]){ (char *)cli, "show", (char *)log, "--from", (char *)from,
	                                 NULL }, out, NULL, &rss, &secs);
	row(WHAT("show --from (last 1%) > file"), total / 100, rc, secs, rss, NULL, -1);
	unlink(out);
	snprintf(out, sizeof out, "%s/posixtrace-bench-%llu.ctf", dir, (unsigned long long)n);
	rc = biglog_run((char *const[]){ (char *)cli, "export", "--format", "ctf", "--force",
	                                 (char *)log, "-o", out, NULL }, NULL, NULL, &rss, &secs);
	char note[120];
	long long osz = dir_size(out);
	snprintf(note, sizeof note, "  %.1f B/event", (double)osz / (double)total);
	row(WHAT("export ctf"), total, rc, secs, rss, note, osz);
	const char *bt = getenv("READER_BT") && !strcmp(getenv("READER_BT"), "0") ? NULL
	                                                                            : bench_which("babeltrace2");
	if (bt && !rc && !*tag) {
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
	static const char *const fmts[][2] = { { "chrome", "json" }, { "perfetto", "pftrace" },
		                               { "html", "html" } };
	for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
		char name[40];
		snprintf(out, sizeof out, "%s/posixtrace-bench-%llu.%s", dir, (unsigned long long)n,
		         fmts[k][1]);
		rc = biglog_run((char *const[]){ (char *)cli, "export", "--format", (char *)fmts[k][0],
		                                 "--force", (char *)log, "-o", out, NULL },
		                NULL, NULL, &rss, &secs);
		osz = file_size(out);
		snprintf(note, sizeof note, "  %.1f B/event", (double)osz / (double)total);
		snprintf(name, sizeof name, "export %s", fmts[k][0]);
		row(WHAT(name), total, rc, secs, rss, k < 2 ? note : NULL, osz);
		unlink(out);
	}
#undef WHAT
}

/* A log the command recorded: `posixtrace record --no-loss` of one thread
 * of bench/keep at full speed (32-byte payloads), the log format 9 that a
 * busy thread makes (its chunks as CHUNK blocks), into log: its events
 * (0: failed, after a line saying why), first and last timestamps. */
static uint64_t record_log(const char *dir, const char *log, uint64_t n, uint64_t *first,
                           uint64_t *last)
{
	char out[512], each[32];
	struct pt_log_summary s;

	snprintf(out, sizeof out, "%s/posixtrace-bench-%llu.keep", dir, (unsigned long long)n);
	snprintf(each, sizeof each, "%llu", (unsigned long long)n);
	int rc = biglog_run((char *const[]){ PT_BUILD_DIR "/posixtrace", "record", "--no-loss",
	                                     "--force", "-o", (char *)log, "--",
	                                     PT_BUILD_DIR "/bench/keep", "--produce", "record", "1",
	                                     each, out, NULL }, NULL, NULL, NULL, NULL);
	unlink(out);
	int fd = rc ? -1 : open(log, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (rc = pt_log_summary_read(fd, &s)) != 0) {
		printf("  cannot record %s (posixtrace record: exit status %d)\n", log, rc);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);
	uint64_t events = s.events;
	*first = s.first, *last = s.last;
	pt_log_summary_free(&s);
	return events;
}

static void one_size(const char *dir, uint64_t n)
{
	char log[512], from[48];
	uint64_t total = n + 2 * biglog_gaps(n), first, last;
	double t0 = bench_now_us();
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
	snprintf(from, sizeof from, "%.9f", (double)n * 200e-9 * 0.99);
	read_rows(dir, log, n, total, "", from);
	unlink(log);

	/* the same commands on a log `record` made (format 9's CHUNK blocks) */
	t0 = bench_now_us();
	if (!(total = record_log(dir, log, n, &first, &last)))
		return;
	lsz = file_size(log);
	trace_events = total;
	bench_json("reader", "recorded: log", "trace_events", (double)total, "bytes_per_event",
	           (double)lsz / (double)total, "write_s", (bench_now_us() - t0) / 1e6, NULL);
	printf("\n%llu events recorded by `posixtrace record --no-loss` of one thread at full "
	       "speed (32-byte payloads), log %.1f MB (%.1f B/event), in %.2f s\n",
	       (unsigned long long)total, (double)lsz / 1e6, (double)lsz / (double)total,
	       (bench_now_us() - t0) / 1e6);
	uint64_t at = first + (uint64_t)((double)(last - first) * 0.99);
	snprintf(from, sizeof from, "@%llu.%09llu", (unsigned long long)(at / 1000000000u),
	         (unsigned long long)(at % 1000000000u));
	read_rows(dir, log, n, total, "recorded: ", from);
	unlink(log);
}

int main(int argc, char **argv)
{
	static const uint64_t sizes[] = { 5000000, 50000000, 0 };
	bench_sizes("reader: the commands that read a log, on logs of generated events", argc, argv,
	            getenv("READER_DIR") ? getenv("READER_DIR") : "/tmp", one_size, sizes);
	return 0;
}
