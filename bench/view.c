/*
 * view.c -- `make bench`'s view section: `posixtrace view` on logs of
 * generated events (tests/biglog.h: 2 processes x 4 threads, 9 types),
 * default 5 M and 50 M events:
 *   - index build: the server started with no cached index, from exec to
 *     its URL (one pass over the log), and its rate in events/s; also per
 *     second of the CPU time it used (user + sys: the machine may be
 *     shared);
 *   - first paint: started again (the index from the cache), from exec to
 *     the answers of the page's first two requests (/meta, then /query of
 *     the whole trace, 1600 columns);
 *   - first zoom: at once a window of 100 events in the middle, which
 *     waits for the log to be open (in the background);
 *   - zoom and pan: 40 /query requests of windows from the whole trace
 *     down to 2 us (the smallest give the events themselves), each from
 *     a different place: median and worst latency, and the first that
 *     gives events;
 *   - the server's peak RSS (VmHWM) after all of them;
 *   - then the largest log's page in headless chromium, driven by
 *     tests/cli_view_cdp (the whole trace's count, a known event's
 *     details), when chromium is installed.
 *   build/bench/view [N1 N2 ...]   VIEW_DIR: where the logs go (/tmp)
 * The machine may be loaded (a shared VM): the load average is printed.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tests/biglog.h"
#include "../tests/view_http.h"
#include "bench_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

static long long file_size_of(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* The CPU time (user + system) process pid has used so far, in seconds
 * (-1 if unknown): the machine may be shared, its wall time not its own. */
static double cpu_s(pid_t pid)
{
	char p[64], buf[1024];
	unsigned long long ut = 0, st = 0;

	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	const char *c = strrchr(buf, ')'); /* (the command may hold spaces) */
	if (!c || sscanf(c + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double query(const struct view_srv *s, const char *path, int *st, size_t *bytes)
{
	char *body = NULL;
	double t = bench_now_us();
	*st = view_get(s, path, NULL, 0, &body);
	t = bench_now_us() - t;
	*bytes = body ? strlen(body) : 0;
	free(body);
	return t / 1e3;
}

static void one_size(const char *dir, uint64_t n)
{
	char log[512], out[600], err[600], cache[600], cmd[700], path[256];
	char *argv[] = { (char *)PT_BUILD_DIR "/posixtrace", (char *)"view", log, NULL };
	struct view_srv s;
	int st;
	size_t bytes;

	snprintf(log, sizeof log, "%s/pt-bench-view-%llu.ptlog", dir, (unsigned long long)n);
	snprintf(out, sizeof out, "%s.out", log);
	snprintf(err, sizeof err, "%s.err", log);
	snprintf(cache, sizeof cache, "%s.cache", log);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
	if (system(cmd) != 0 || biglog_write(log, n, 1) != 0) {
		printf("  %llu events: cannot write the log\n", (unsigned long long)n);
		return;
	}
	setenv("XDG_CACHE_HOME", cache, 1);
	uint64_t total = n + 2 * biglog_gaps(n);
	printf("%llu events (%.0f MB log):\n", (unsigned long long)total,
	       (double)file_size_of(log) / 1e6);

	double t = bench_now_us();
	if (view_start(&s, argv, out, err, 600) != 0) {
		printf("  the server did not start (see %s)\n", err);
		view_stop(&s);
		return;
	}
	double build = (bench_now_us() - t) / 1e6, cpu = cpu_s(s.pid);
	printf("  index build (exec to URL)    %7.2f s   %6.1f M events/s   RSS %6.1f MB\n", build,
	       (double)total / build / 1e6, (double)view_hwm_kb(s.pid) / 1024);
	printf("    its CPU time (user+sys)    %7.2f s   %6.1f M events per CPU-second\n", cpu,
	       cpu > 0 ? (double)total / cpu / 1e6 : 0);
	bench_json("view", "index build", "trace_events", (double)total, "s", build, "cpu_s", cpu,
	           "rss_mb", (double)view_hwm_kb(s.pid) / 1024, NULL);
	view_stop(&s);

	t = bench_now_us();
	if (view_start(&s, argv, out, err, 600) != 0) {
		printf("  the server did not start again\n");
		view_stop(&s);
		return;
	}
	double m = query(&s, "/meta", &st, &bytes);
	int st2;
	uint64_t span = (n - 1) * 200;
	snprintf(path, sizeof path, "/query?from=0&to=%llu&cols=1600", (unsigned long long)span);
	double q = query(&s, path, &st2, &bytes);
	double paint = (bench_now_us() - t) / 1e3;
	printf("  first paint (cached index)   %7.1f ms  (/meta %.1f ms, /query %.1f ms, %zu bytes)%s\n",
	       paint, m, q, bytes, st != 200 || st2 != 200 ? "  FAILED" : "");

	/* at once a zoom to a few events in the middle: it waits for the log,
	 * opened in the background (through its block index) */
	snprintf(path, sizeof path, "/query?from=%llu&to=%llu&cols=1600",
	         (unsigned long long)(span / 2), (unsigned long long)(span / 2 + 20000));
	size_t zb;
	int zst;
	double z = query(&s, path, &zst, &zb);
	printf("  first zoom to events         %7.1f ms  (just after the first paint, %zu bytes)%s\n",
	       z, zb, zst != 200 ? "  FAILED" : "");
	bench_json("view", "first zoom", "trace_events", (double)total, "ms", z, "failed",
	           (double)(zst != 200), NULL);

	double lat[40], first_ev = -1;
	int bad = 0, nev = 0;
	uint64_t seed = 12345;
	for (int i = 0; i < 40; i++) {
		uint64_t w = span >> (i % 24); /* whole trace down to ~2 us */
		w = w < 2000 ? 2000 : w;
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t from = span > w ? (seed >> 11) % (span - w) : 0;
		snprintf(path, sizeof path, "/query?from=%llu&to=%llu&cols=1600",
		         (unsigned long long)from, (unsigned long long)(from + w));
		char *body = NULL;
		double a = bench_now_us();
		bad += view_get(&s, path, NULL, 0, &body) != 200;
		lat[i] = (bench_now_us() - a) / 1e3;
		if (body && strstr(body, "\"mode\":\"events\"")) {
			if (!nev++) /* the first that reads the log (opened in the background) */
				first_ev = lat[i];
		}
		free(body);
	}
	qsort(lat, 40, sizeof lat[0], bench_cmp_double);
	printf("  zoom/pan /query, 40 windows  median %6.1f ms, worst %6.1f ms (%d gave events)%s\n",
	       lat[20], lat[39], nev, bad ? "  FAILED" : "");
	printf("  first of them to give events %7.1f ms\n", first_ev);
	printf("  server peak RSS              %7.1f MB\n", (double)view_hwm_kb(s.pid) / 1024);
	bench_json("view", "first paint", "trace_events", (double)total, "ms", paint, "failed",
	           (double)(st != 200 || st2 != 200), NULL);
	bench_json("view", "zoom/pan", "trace_events", (double)total, "median_ms", lat[20],
	           "worst_ms", lat[39], "failed", (double)bad, "rss_mb",
	           (double)view_hwm_kb(s.pid) / 1024, NULL);
	view_stop(&s);
	unlink(log);
	unlink(out);
	unlink(err);
	if (system(cmd) != 0)
		printf("  (could not remove %s)\n", cache);
}

/* The page in headless chromium on a log of n events (tests/cli_view_cdp
 * with PT_VIEW_CDP_EVENTS: the overview's count against info's, a jump
 * to a known event and its details), when chromium and the test are there. */
static void in_browser(uint64_t n)
{
	char cmd[600];
	const char *test = PT_BUILD_DIR "/tests/cli_view_cdp";

	if (access(test, X_OK) != 0) {
		printf("in chromium: %s is not built (make %s)\n", test, test);
		return;
	}
	snprintf(cmd, sizeof cmd, "PT_VIEW_CDP_EVENTS=%llu %s >%s.out 2>&1",
	         (unsigned long long)n, test, test);
	double t = bench_now_us();
	int rc = system(cmd);
	t = (bench_now_us() - t) / 1e6;
	int st = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
	printf("in chromium, %llu events: %s in %.1f s (tests/cli_view_cdp; its output: %s.out)\n",
	       (unsigned long long)n, st == 0 ? "passed" : st == 77 ? "skipped" : "FAILED", t, test);
	bench_json("view", "in chromium", "trace_events", (double)n, "s", t, "failed",
	           (double)(st != 0 && st != 77), NULL);
}

int main(int argc, char **argv)
{
	static const uint64_t sizes[] = { 5000000, 50000000, 0 };
	bench_sizes("view: posixtrace view on logs of generated events", argc, argv,
	            getenv("VIEW_DIR") ? getenv("VIEW_DIR") : "/tmp", one_size, sizes);
	uint64_t most = 0;
	for (int i = 1; i < argc; i++)
		most = strtoull(argv[i], NULL, 10) > most ? strtoull(argv[i], NULL, 10) : most;
	in_browser(argc > 1 ? most : sizes[1]);
	return 0;
}
