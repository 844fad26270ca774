/*
 * rotate.c -- `posixtrace record --rotate` at 5 M events/s, against the
 * same recording without it (run by `make bench`).
 *
 * This program is started as `posixtrace record --no-loss [--rotate 100M]
 * -o OUT -- rotate --produce N RATE`: one thread records N events of 8
 * bytes (16 bytes of log each) at RATE events/s, paced in batches of 1000
 * (it sleeps until each batch is due, so a late batch is caught up at
 * once), and counts its events per 10 ms window, and the CPU time of its
 * thread per event.  Shown: its typical window (the median, the first and
 * the last left out) as a share of RATE, and with --rotate the worst of
 * the windows in which a cut ended (a finished part's modification time:
 * its END block), where a cut that held the program (a full stream makes
 * it wait, --no-loss) would show.  A window of a loaded machine's may be
 * low for the scheduler's sake alone: hence "held", which counts the
 * program's waits for room.  record's closing
 * summary gives how many times --no-loss held it, and with --rotate how
 * late the cuts were after their threshold and the longest cut's time
 * (wall, and the most CPU time the flusher spent on one).
 * RUNS runs of each, alternated; each figure is the median of its runs.
 * Prints Markdown; rows to BENCH_JSON.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include "bench_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif
#define RUNS 3
#define RATE 5e6
#define SECONDS 6.0
#define BATCH 1000
#define WINDOW_NS 10000000ull
#define MAX_WINDOWS 4096

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int produce(uint64_t n, double rate)
{
	static uint64_t win[MAX_WINDOWS];
	trace_event_id_t id;
	struct timespec c0, c1;
	uint64_t t0 = mono_ns(), v[1] = { 0 };
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt); /* (the parts' times are the file system's) */
	uint64_t rt0 = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec - (mono_ns() - t0);

	posix_trace_eventid_open("tick", &id);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	for (uint64_t i = 0; i < n;) {
		uint64_t due = t0 + (uint64_t)((double)i / rate * 1e9), now = mono_ns();
		if (now < due) {
			struct timespec ts = { (time_t)((due - now) / 1000000000u),
			                       (long)((due - now) % 1000000000u) };
			nanosleep(&ts, NULL);
		}
		for (int k = 0; k < BATCH && i < n; k++, i++) {
			v[0] = i;
			posix_trace_event(id, v, sizeof v);
		}
		uint64_t w = (mono_ns() - t0) / WINDOW_NS;
		if (w < MAX_WINDOWS)
			win[w] += BATCH;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	uint64_t last = (mono_ns() - t0) / WINDOW_NS;
	double cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
	printf("t0 %llu\ncpu_ns %.3f\n", (unsigned long long)rt0, cpu / (double)n);
	for (uint64_t w = 0; w <= last && w < MAX_WINDOWS; w++)
		printf("w %llu\n", (unsigned long long)win[w]);
	return 0;
}

static double after(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	return p ? strtod(p + strlen(key), NULL) : 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[1 << 17];
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	return buf;
}

struct run { double typical, at_cut, cpu_ns, waits, over_ms, cut_ms, cut_cpu_ms; };

static double med(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	return n ? v[n / 2] : NAN;
}

static int one(const char *self, const char *dir, int rotate, struct run *r)
{
	static double win[MAX_WINDOWS], sorted[MAX_WINDOWS];
	char out[4200], err[4200], cmd[16384];
	int nw = 0;

	snprintf(out, sizeof out, "%s/rotate-bench.out", dir);
	snprintf(err, sizeof err, "%s/rotate-bench.err", dir);
	snprintf(cmd, sizeof cmd,
	         "rm -rf '%s/rotate-bench.d' '%s/rotate-bench.ptlog'; '%s/posixtrace' record "
	         "--no-loss %s -o '%s/rotate-bench%s' -- '%s' --produce %.0f %.0f >'%s' 2>'%s'",
	         dir, dir, PT_BUILD_DIR, rotate ? "--rotate 100M" : "", dir,
	         rotate ? ".d" : ".ptlog", self, RATE * SECONDS, RATE, out, err);
	int st = system(cmd);
	char *o = slurp(out);
	uint64_t t0 = (uint64_t)after(o, "t0 ");
	r->cpu_ns = after(o, "cpu_ns ");
	for (const char *p = o; (p = strstr(p, "\nw ")) && nw < MAX_WINDOWS; p++)
		win[nw++] = strtod(p + 3, NULL) / (RATE * WINDOW_NS / 1e9);
	/* the program's typical 10 ms (the first and the last left out) */
	for (int i = 1; i + 1 < nw; i++)
		sorted[i - 1] = win[i];
	r->typical = med(sorted, nw > 2 ? nw - 2 : 0);
	/* and the 10 ms in which each cut ended: a finished part's last
	 * write, its END block, is its modification time */
	r->at_cut = NAN;
	for (unsigned k = 1; rotate && k < 1000; k++) {
		char p[4400], q[4400];
		struct stat a, b;
		snprintf(p, sizeof p, "%s/rotate-bench.d/rotate-%u.ptlog", dir, k);
		snprintf(q, sizeof q, "%s/rotate-bench.d/rotate-%u.ptlog", dir, k + 1);
		if (stat(p, &a) != 0 || stat(q, &b) != 0)
			break;
		uint64_t m = (uint64_t)a.st_mtim.tv_sec * 1000000000u + (uint64_t)a.st_mtim.tv_nsec;
		uint64_t w = m > t0 ? (m - t0) / WINDOW_NS : 0;
		if (w >= 1 && (int)w + 1 < nw && !(win[w] >= r->at_cut))
			r->at_cut = win[w];
	}
	char *e = slurp(err);
	r->waits = after(e, "was held ");
	r->over_ms = after(e, "made within ");
	r->cut_ms = after(e, "the longest took ");
	r->cut_cpu_ms = after(e, " ms (");
	snprintf(cmd, sizeof cmd, "rm -rf '%s/rotate-bench.d' '%s/rotate-bench.ptlog' '%s' '%s'",
	         dir, dir, out, err);
	if (system(cmd) != 0)
		fprintf(stderr, "bench/rotate: cannot clean %s\n", dir);
	return st == 0 && r->cpu_ns > 0 && nw > 2 ? 0 : -1;
}

int main(int argc, char **argv)
{
	char self[4096];
	struct run r[2][RUNS];

	if (argc == 4 && !strcmp(argv[1], "--produce"))
		return produce(strtoull(argv[2], NULL, 10), strtod(argv[3], NULL));
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl <= 0)
		return 1;
	self[sl] = 0;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	double load[3];
	if (getloadavg(load, 3) == 3)
		printf("(load average %.2f %.2f %.2f when it started)\n", load[0], load[1], load[2]);
	for (int i = 0; i < RUNS; i++)
		for (int m = 0; m < 2; m++)
			if (one(self, dir, m, &r[m][i]) != 0) {
				fprintf(stderr, "bench/rotate: a run failed\n");
				return 1;
			}
	printf("\n### record --rotate 100M at %.0f M events/s (8-byte events, --no-loss, %.0f s, "
	       "median of %d)\n\n", RATE / 1e6, SECONDS, RUNS);
	printf("| case | the program's typical 10 ms | its 10 ms of a cut (worst) | its CPU / event | "
	       "held (--no-loss) | cut after its threshold | longest cut | its CPU |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int m = 0; m < 2; m++) {
		double t[RUNS], a[RUNS], c[RUNS], w[RUNS], o[RUNS], k[RUNS], u[RUNS];
		for (int i = 0; i < RUNS; i++)
			t[i] = r[m][i].typical, a[i] = r[m][i].at_cut, c[i] = r[m][i].cpu_ns,
			w[i] = r[m][i].waits, o[i] = r[m][i].over_ms, k[i] = r[m][i].cut_ms,
			u[i] = r[m][i].cut_cpu_ms;
		double mt = med(t, RUNS), ma = m ? med(a, RUNS) : NAN, mc = med(c, RUNS),
		       mw = med(w, RUNS), mo = m ? med(o, RUNS) : NAN, mk = m ? med(k, RUNS) : NAN,
		       mu = m ? med(u, RUNS) : NAN;
		const char *name = m ? "--rotate 100M" : "one log";
		printf("| %s | %.1f%% of the pace | ", name, 100 * mt);
		if (m)
			printf("%.1f%% | ", 100 * ma);
		else
			printf("- | ");
		printf("%.1f ns | %.0f | ", mc, mw);
		if (m)
			printf("%.1f ms | %.1f ms | %.2f ms |\n", mo, mk, mu);
		else
			printf("- | - | - |\n");
		bench_json("rotate", name, "typical_share", mt, "cut_share", ma, "cpu_ns_event", mc,
		           "noloss_waits", mw, "cut_late_ms", mo, "cut_ms", mk, "cut_cpu_ms", mu, NULL);
	}
	if (getloadavg(load, 3) == 3)
		printf("(load average %.2f %.2f %.2f on %ld CPUs when it ended)\n", load[0], load[1],
		       load[2], sysconf(_SC_NPROCESSORS_ONLN));
	return 0;
}
