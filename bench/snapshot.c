/*
 * snapshot.c -- the flight recorder's snapshots under load (run by `make
 * bench`): `posixtrace record --flight 64M --snapshot-on trigger:bench
 * --before W -o DIR -- (this program as the app)`, for W = 10 ms and
 * 100 ms (`snapshot 100ms`: that window only).
 *
 * The app: two threads record 16-byte events paced at 2.5 M events/s
 * each (5 M/s in all: issue 52's load); after 300 ms the main thread
 * raises TRIGGERS named triggers (posixtrace_trigger("bench")), one every
 * 150 ms, and after each waits for the snapshot to appear in DIR (the
 * recorder renames it into place once written and fsync'ed: durable).
 *   - trigger to durable: CLOCK_MONOTONIC from just before the call to
 *     the stat() that finds the file (looked for every 100 us) and an
 *     fsync() of its directory (the name durable too): p50, p99,
 *     max over the triggers;
 *   - the program's rate by CPU time: each thread counts its events and
 *     its own CPU time (CLOCK_THREAD_CPUTIME_ID) per batch of 1024 events,
 *     into "during a snapshot" (a trigger raised, its file not there yet)
 *     or "without"; events per CPU second of each, and their ratio (the
 *     goal: at least 0.95).  Time a thread spends waiting for a CPU is not
 *     counted, so this is what the copy costs the program's own work
 *     (caches, memory bandwidth), not the CPU the recorder takes from a
 *     machine with too few of them.  The main thread looks for a file
 *     every 100 us between triggers too, as it does while it waits for
 *     one: its wakeups keep a CPU out of idle, and a program thread that
 *     wakes on a CPU kept so runs faster (by 2-4% here, which, only in
 *     the class "during", made snapshots look free);
 *   - the follower's cost: the recorder's own CPU time over a second
 *     without triggers, per event recorded (it looks at every chunk).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include "bench_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif
#define TRIGGERS 50
#define SPACING_MS 150
#define RATE_NS 400 /* per thread: 2.5 M events/s */

static atomic_int stop, in_snap;
static trace_event_id_t ev;
struct acc { double ev[2], cpu_us[2]; };
static struct acc accs[2];

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *worker(void *arg)
{
	struct acc *a = &accs[(uintptr_t)arg];
	uint64_t p[2] = { (uintptr_t)arg, 0 }, t0 = mono_ns();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int cls = atomic_load_explicit(&in_snap, memory_order_relaxed);
		double c0 = bench_cpu_us();
		for (int i = 0; i < 1024; i++, p[1]++)
			posix_trace_event(ev, p, sizeof p);
		a->ev[cls] += 1024;
		a->cpu_us[cls] += bench_cpu_us() - c0;
		uint64_t due = t0 + p[1] * RATE_NS, now = mono_ns();
		if (due > now + 50000) {
			struct timespec d = { 0, (long)(due - now) };
			nanosleep(&d, NULL);
		}
	}
	return NULL;
}

/* The recorder's CPU time (user + system) in ns: it is this program's parent. */
static double recorder_cpu_ns(void)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)getppid());
	FILE *f = fopen(path, "r");
	if (!f)
		return NAN;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return NAN;
	return (double)(ut + st) * 1e9 / (double)sysconf(_SC_CLK_TCK);
}

static double events_now(void)
{
	double e = 0;
	for (int i = 0; i < 2; i++)
		e += accs[i].ev[0] + accs[i].ev[1];
	return e;
}

static int by_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static int app(const char *dir, const char *window)
{
	pthread_t th[2];
	double lat[TRIGGERS];
	int n = 0, missing = 0;
	char base[64];

	alarm(120);
	posix_trace_eventid_open("bench_load", &ev);
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	usleep(100000);
	/* the follower alone: the recorder's CPU per event recorded, no trigger */
	double c0 = recorder_cpu_ns(), e0 = events_now();
	usleep(1000000);
	double follow_ns = (recorder_cpu_ns() - c0) / (events_now() - e0);
	snprintf(base, sizeof base, "%s", "snapshot");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char dir_none[4096];
	snprintf(dir_none, sizeof dir_none, "%s/none", dir);
	for (int k = 1; k <= TRIGGERS; k++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s-%d.ptlog", dir, base, k);
		atomic_store(&in_snap, 1);
		uint64_t t0 = mono_ns();
		posixtrace_trigger("bench");
		while (stat(path, &st) != 0 && mono_ns() - t0 < 5000000000ull)
			usleep(100);
		/* durable: the name too (the recorder syncs the directory after
		 * the link; a sync here returns once that is done) */
		if (dfd >= 0)
			fsync(dfd);
		uint64_t t1 = mono_ns();
		atomic_store(&in_snap, 0);
		if (stat(path, &st) == 0)
			lat[n++] = (double)(t1 - t0) / 1e6;
		else
			missing++;
		/* the gap polled as the wait was (a stat() every 100 us of a
		 * name not there), so that this thread's wakeups, which keep
		 * its CPU out of idle, are the same in both classes */
		for (uint64_t g0 = mono_ns(); mono_ns() - g0 < SPACING_MS * 1000000ull;) {
			(void)stat(dir_none, &st);
			usleep(100);
		}
	}
	if (dfd >= 0)
		close(dfd);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	qsort(lat, (size_t)n, sizeof *lat, by_double);
	double p50 = n ? lat[n / 2] : NAN, p99 = n ? lat[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] : NAN;
	double mx = n ? lat[n - 1] : NAN;
	double e[2] = { 0, 0 }, c[2] = { 0, 0 };
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++)
			e[k] += accs[i].ev[k], c[k] += accs[i].cpu_us[k];
	double r_without = c[0] > 0 ? e[0] / c[0] : NAN, r_during = c[1] > 0 ? e[1] / c[1] : NAN;
	printf("| --before %s | %d | %.2f | %.2f | %.2f | %.1f | %.1f | %.3f | %.2f |%s\n", window, n,
	       p50, p99, mx, r_without, r_during, r_during / r_without, follow_ns,
	       missing ? " (some snapshots never came)" : "");
	bench_json("snapshot", window, "triggers", (double)n, "p50_ms", p50, "p99_ms", p99,
	           "max_ms", mx, "events_per_cpu_us_without", r_without,
	           "events_per_cpu_us_during", r_during, "ratio", r_during / r_without,
	           "follower_cpu_ns_per_event", follow_ns, NULL);
	return missing ? 1 : 0;
}

/* ns per call (by this thread's CPU time) of posixtrace_trigger() and of
 * posix_trace_event() with a 16-byte payload, into a LOOP stream of this
 * process: what raising a trigger costs the program, against an event. */
static void call_costs(double *trig_ns, double *ev_ns)
{
	trace_attr_t a;
	trace_id_t trid;
	trace_event_id_t id;
	const int n = 2000000;
	uint64_t p[2] = { 0, 0 };

	*trig_ns = *ev_ns = NAN;
	posix_trace_attr_init(&a);
	posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP);
	posix_trace_attr_setstreamsize(&a, 16u << 20);
	if (posix_trace_create(0, &a, &trid) || posix_trace_eventid_open("bench_cost", &id) ||
	    posix_trace_start(trid))
		return;
	posix_trace_attr_destroy(&a);
	for (int r = 0; r < 2; r++) { /* (the first round warms the stream) */
		double c0 = bench_cpu_us();
		for (int i = 0; i < n; i++)
			posixtrace_trigger("bench");
		double c1 = bench_cpu_us();
		for (int i = 0; i < n; i++, p[1]++)
			posix_trace_event(id, p, sizeof p);
		double c2 = bench_cpu_us();
		*trig_ns = (c1 - c0) * 1e3 / n;
		*ev_ns = (c2 - c1) * 1e3 / n;
	}
	posix_trace_shutdown(trid);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "app"))
		return app(argv[2], argv[3]);
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "10ms") && strcmp(argv[1], "100ms"))) {
		fprintf(stderr, "usage: snapshot [10ms|100ms] (one window; both by default)\n");
		return 2;
	}
	const char *cli = PT_BUILD_DIR "/posixtrace";
	if (access(cli, X_OK) != 0) {
		printf("bench/snapshot: %s is not built: skipped\n", cli);
		return 0;
	}
	/* the program must be named "snapshot": the recorder names the logs after it */
	const char *self = argv[0];
	const char *slash = strrchr(self, '/');
	if (strcmp(slash ? slash + 1 : self, "snapshot")) {
		fprintf(stderr, "bench/snapshot: run it as .../snapshot\n");
		return 1;
	}
	double load[1] = { -1 };
	getloadavg(load, 1);
	printf("flight recorder snapshots: a 64 MiB loop stream, 2 threads recording 16-byte "
	       "events at 5 M events/s in all, %d named triggers 150 ms apart (load average "
	       "%.2f)\n\n", TRIGGERS, load[0]);
	printf("| window | snapshots | p50 ms | p99 ms | max ms | events/CPU-us without | "
	       "during | ratio | follower ns/event |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	fflush(stdout);
	int st = 0;
	const char *windows[] = { "10ms", "100ms" };
	for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
		if (argc == 2 && strcmp(argv[1], windows[w]))
			continue; /* (one window asked for) */
		char dir[] = "/tmp/pt-bench-snapshot-XXXXXX";
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 1;
		}
		pid_t pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);
			dup2(null, 2); /* (the recorder's line per snapshot) */
			execl(cli, cli, "record", "--flight", "64M", "--snapshot-on", "trigger:bench",
			      "--before", windows[w], "-o", dir, "--", self, "app", dir, windows[w],
			      (char *)NULL);
			_exit(127);
		}
		int ws;
		waitpid(pid, &ws, 0);
		if (!WIFEXITED(ws) || WEXITSTATUS(ws))
			st = 1;
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench/snapshot: could not remove %s\n", dir);
	}
	double trig_ns, ev_ns;
	call_costs(&trig_ns, &ev_ns);
	printf("\nposixtrace_trigger() costs the program %.1f ns a call, posix_trace_event() "
	       "of 16 bytes %.1f ns (this thread's CPU time, 2 M calls each into a loop stream); "
	       "an event that is not a trigger costs what it costs with no recorder\n", trig_ns,
	       ev_ns);
	bench_json("snapshot", "trigger call", "trigger_ns", trig_ns, "event_ns", ev_ns, NULL);
	printf("\n- trigger to durable: from just before posixtrace_trigger() to the snapshot's "
	       "file found in DIR (written, fsync'ed, renamed), looked for every 100 us\n"
	       "- events/CPU-us: the recording threads' events per microsecond of their own CPU "
	       "time, while no snapshot is under way and while one is\n"
	       "- follower ns/event: the recorder's CPU time (user + system, from /proc) over 1 s "
	       "with no trigger, per event the program recorded: the cost of looking at every "
	       "event for triggers\n");
	return st;
}
