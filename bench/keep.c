/*
 * keep.c -- what `posixtrace record` keeps of producers at full speed,
 * beside LTTng-UST's discard channel and its consumer, in the same run
 * (run by `make bench`; issue 48).
 *
 * First the machine's own rates on tmpfs (/dev/shm, else $TMPDIR; or in
 * $KEEP_DIR, any file system, where LTTng's trace goes too), as
 * bench/flush measures them: write() of 64 KiB blocks into a new 1 GB
 * file after BENCH_IDLE_S of idle, and the rate of writing what another
 * CPU has just written (bench_write_behind_rate: a writer with no work of
 * its own).  Then, RUNS repetitions, each of, for 1, 2 and 4 threads
 * (KEEP_EVENTS events in all, 20 M by default, split evenly; 32-byte
 * payloads; the threads released together and timed from there to the
 * last one's end, wall and each thread's own CPU time):
 *   flight   this program with a 16 MiB LOOP stream of its own, no log:
 *            the producers' own speed, the reference
 *   record   `posixtrace record --force -o LOG -- keep --produce ...`
 *            (the command's defaults: FLUSH, 16 MiB, log on tmpfs): events
 *            kept (in the log), lost, the writer's CPU per event kept (the
 *            CPU time of the recorder's threads other than its main one,
 *            sampled every 2 ms from /proc, as bench/paced does), the log's
 *            MB/s (its size over the time from the start of the command to
 *            the end of its writer)
 *   noloss   the same with `record --no-loss`: nothing lost, the
 *            producers' events/s against the flight recorder's (wall and
 *            CPU time: a producer that waits for room spends wall time,
 *            not CPU)
 *   lttng    bench/lttng/lttng_keep through bench/lttng/run.sh (built by
 *            `make bench-lttng` when lttng-tools and liblttng-ust-dev are
 *            there): a discard channel of 8 x 1 MiB per CPU that
 *            lttng-consumerd writes to tmpfs; events kept (emitted -
 *            discarded), the daemons' CPU per event kept.  Without it: a
 *            SKIP line saying why, and the posixtrace rows alone.
 *   lttngb   the same with a blocking channel (--blocking-timeout=inf):
 *            LTTng-UST's lossless mode, beside --no-loss
 * Each figure is the median of the repetitions.  "kept per s" is the
 * events kept over the producers' wall time (both writers drain what
 * their buffers hold after it).  Prints Markdown, and rows "keep" into
 * BENCH_JSON (bench/plots.sh draws keep.svg from them).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include "../src/ext.h"
#include "bench_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif
#ifndef PT_SRC_DIR
#define PT_SRC_DIR "."
#endif
#define MAX_RUNS 9
#define PAYLOAD 32
#define STREAM_SIZE (16u << 20)
#define NT 3
#define TMPFS_MAGIC_ 0x01021994

static const int threads[NT] = { 1, 2, 4 };

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench/keep: %s: %s\n", what, strerror(rc));
	exit(1);
}

/* --------------------------------------------------- the traced program */
static pthread_barrier_t go;
static trace_event_id_t id;
static uint64_t per;
static double t_end[64], t_cpu[64];

static void *produce_main(void *arg)
{
	int k = (int)(intptr_t)arg;
	unsigned char buf[PAYLOAD] = { 0 };

	pthread_barrier_wait(&go);
	for (uint64_t i = 0; i < per; i++) {
		buf[0] = (unsigned char)i;
		posix_trace_event(id, buf, PAYLOAD);
	}
	t_end[k] = bench_now_us();
	t_cpu[k] = bench_cpu_us();
	return NULL;
}

/* keep --produce flight|record THREADS EVENTS_PER_THREAD OUT: writes
 * "wall_s threads_cpu_s process_cpu_s voluntary_switches" into OUT (the
 * last: how often the process slept, as when it waited for room) */
static int produce(int argc, char **argv)
{
	if (argc != 6)
		return 2;
	int flight = !strcmp(argv[2], "flight"), nt = atoi(argv[3]);
	pthread_t th[64];
	trace_id_t trid = 0;
	struct rusage ru;

	per = strtoull(argv[4], NULL, 10);
	if (nt < 1 || nt > 64 || posix_trace_eventid_open("bench.keep", &id) != 0)
		return 2;
	if (flight) {
		trace_attr_t a;
		posix_trace_attr_init(&a);
		posix_trace_attr_setstreamsize(&a, STREAM_SIZE);
		posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP);
		if (posix_trace_create(0, &a, &trid) != 0 || posix_trace_start(trid) != 0)
			return 2;
		posix_trace_attr_destroy(&a);
	}
	pthread_barrier_init(&go, NULL, (unsigned)nt + 1);
	for (int i = 0; i < nt; i++)
		if (pthread_create(&th[i], NULL, produce_main, (void *)(intptr_t)i) != 0)
			return 2;
	pthread_barrier_wait(&go);
	double t0 = bench_now_us(), last = t0, cpu = 0;
	for (int i = 0; i < nt; i++) {
		pthread_join(th[i], NULL);
		if (t_end[i] > last)
			last = t_end[i];
		cpu += t_cpu[i];
	}
	if (flight)
		posix_trace_shutdown(trid);
	getrusage(RUSAGE_SELF, &ru);
	FILE *f = fopen(argv[5], "w");
	if (!f)
		return 2;
	fprintf(f, "%.6f %.6f %.6f %ld\n", (last - t0) / 1e6, cpu / 1e6,
	        ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	        (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6, ru.ru_nvcsw);
	fclose(f);
	return 0;
}

/* ------------------------------------------------------------ the bench */
static const char *dir;
static char self[1024];

/* one run of one case */
struct run {
	double made, kept, wall, cpu; /* producers: events, events kept, s, CPU s */
	double writer_cpu;            /* the writer's CPU s: flusher / LTTng daemons */
	double writer_user;           /* the part in user mode (posixtrace; NAN for LTTng) */
	double log_bytes;             /* the log's size (posixtrace), bytes */
	double log_mb_s;              /* NAN: not measured */
	double sleeps;                /* the producer process's voluntary switches */
};

/* The log's events of ours (ids from 16 up). */
static uint64_t count_log(const char *path)
{
	struct posix_trace_event_info ev;
	unsigned char data[64];
	size_t len;
	int un, rc, fd = open(path, O_RDONLY);
	trace_id_t log = 0;
	uint64_t n = 0;

	if (fd < 0 || (rc = posix_trace_open(fd, &log)) != 0)
		die("posix_trace_open", fd < 0 ? errno : rc);
	while ((rc = posix_trace_getnext_event(log, &ev, data, sizeof data, &len, &un)) == 0 && !un)
		n += ev.posix_event_id >= PT_SYS_IDS;
	if (rc)
		die("posix_trace_getnext_event", rc);
	posix_trace_close(log);
	close(fd);
	return n;
}

/* CPU seconds of the threads of process pid other than its main thread
 * (the flusher), as /proc says now (*user: the part in user mode); 0 when
 * it is gone. */
static double helper_cpu(pid_t pid, double *user)
{
	char path[64];
	double sum = 0;

	*user = 0;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		double ut, st;
		if (e->d_name[0] != '.' && atoi(e->d_name) != (int)pid &&
		    bench_task_cpu(pid, (pid_t)atoi(e->d_name), &ut, &st)) {
			sum += ut + st;
			*user += ut;
		}
	}
	closedir(d);
	return sum;
}

/* mode: "flight" (this program alone), "record", "noloss" */
static struct run run_pt(const char *mode, int nt, uint64_t events)
{
	char log[600], out[600], cli[1200], a_t[16], a_n[32];
	struct run r = { .log_mb_s = NAN, .writer_user = NAN, .log_bytes = NAN };
	struct rusage ru;
	int status, flight = !strcmp(mode, "flight");
	uint64_t each = events / (uint64_t)nt;

	snprintf(log, sizeof log, "%s/posixtrace-bench-keep-%d.ptlog", dir, (int)getpid());
	snprintf(out, sizeof out, "%s/posixtrace-bench-keep-%d.out", dir, (int)getpid());
	bench_scratch(log);
	bench_scratch(out);
	snprintf(cli, sizeof cli, "%s/posixtrace", PT_BUILD_DIR);
	snprintf(a_t, sizeof a_t, "%d", nt);
	snprintf(a_n, sizeof a_n, "%llu", (unsigned long long)each);
	double t0 = bench_now_us();
	pid_t pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		if (flight)
			execl(self, self, "--produce", "flight", a_t, a_n, out, (char *)NULL);
		else if (!strcmp(mode, "noloss"))
			execl(cli, "posixtrace", "record", "--force", "--no-loss", "-o", log, "--", self,
			      "--produce", "record", a_t, a_n, out, (char *)NULL);
		else
			execl(cli, "posixtrace", "record", "--force", "-o", log, "--", self, "--produce",
			      "record", a_t, a_n, out, (char *)NULL);
		_exit(127);
	}
	double flusher = 0, fl_user = 0, wall = 0;
	pid_t w;
	while ((w = wait4(pid, &status, WNOHANG, &ru)) == 0) {
		if (!flight) {
			double u, c = helper_cpu(pid, &u);
			if (c > flusher)
				flusher = c, fl_user = u;
			if (c > 0 || flusher == 0)
				wall = (bench_now_us() - t0) / 1e6; /* until the flusher ends */
		}
		usleep(2000);
	}
	/* (record's status 3: events were lost, what this measures) */
	if (w != pid || !WIFEXITED(status) ||
	    (WEXITSTATUS(status) && (flight || WEXITSTATUS(status) != 3)))
		die(flight ? "keep --produce flight" : "posixtrace record", ECHILD);
	double pself = 0;
	FILE *f = fopen(out, "r");
	if (!f || fscanf(f, "%lf %lf %lf %lf", &r.wall, &r.cpu, &pself, &r.sleeps) != 4)
		die("the producer's figures", EIO);
	fclose(f);
	unlink(out);
	r.made = (double)(each * (uint64_t)nt);
	if (flight) {
		r.kept = r.made; /* (in a LOOP stream: the reference rate) */
		return r;
	}
	struct stat st;
	if (stat(log, &st) != 0)
		die(log, errno);
	r.kept = (double)count_log(log);
	unlink(log);
	r.writer_cpu = flusher;
	r.writer_user = fl_user;
	r.log_bytes = (double)st.st_size;
	r.log_mb_s = (double)st.st_size / wall / 1e6;
	return r;
}

/* Why LTTng's side cannot run (empty if it can). */
static void lttng_reason(char *why, size_t cap, const char *drv)
{
	FILE *p = popen("sh '" PT_SRC_DIR "/bench/lttng/run.sh' --check cc 2>&1", "r");
	why[0] = 0;
	if (p) {
		if (!fgets(why, (int)cap, p))
			why[0] = 0;
		pclose(p);
	}
	why[strcspn(why, "\n")] = 0;
	if (!why[0] && getenv("KEEP_LTTNG") && !strcmp(getenv("KEEP_LTTNG"), "0"))
		snprintf(why, cap, "KEEP_LTTNG=0");
	if (!why[0] && access(drv, X_OK) != 0)
		snprintf(why, cap, "%s not built (make bench-lttng builds it)", drv);
}

/* One repetition of LTTng's side, every thread count, a discard channel
 * (r) and a blocking one (rb): 0, or -1 (why says) */
static int run_lttng(struct run *r, struct run *rb, uint64_t events, char *why, size_t cap)
{
	const char *drv = PT_BUILD_DIR "/bench-lttng/lttng_keep";
	char cmd[2048], line[512];
	int got = 0;

	snprintf(cmd, sizeof cmd,
	         "LTTNG_UST_ALLOW_BLOCKING=1 sh '" PT_SRC_DIR "/bench/lttng/run.sh' '%s' -n %llu "
	         "1 2 4 1b 2b 4b 2>&1", drv, (unsigned long long)events);
	FILE *p = popen(cmd, "r");
	if (!p) {
		snprintf(why, cap, "popen: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, p)) {
		int nt;
		char kind;
		long long emitted, disc, bytes;
		double wall, pcpu, dcpu;
		if (sscanf(line, "%c %d %lld %lld %lf %lf %lf %lld", &kind, &nt, &emitted, &disc, &wall,
		           &pcpu, &dcpu, &bytes) == 8 && (kind == 'K' || kind == 'B')) {
			for (int i = 0; i < NT; i++)
				if (threads[i] == nt) {
					(kind == 'K' ? r : rb)[i] = (struct run){ .made = (double)emitted,
					                     .kept = disc < 0 ? NAN : (double)(emitted - disc),
					                     .wall = wall, .cpu = pcpu, .writer_cpu = dcpu,
					                     .writer_user = NAN, .log_bytes = (double)bytes,
					                     .log_mb_s = NAN };
					got++;
				}
		} else if (line[0] == 'E') {
			line[strcspn(line, "\n")] = 0;
			snprintf(why, cap, "lttng_keep: %.200s", line + 2);
		}
	}
	int st = pclose(p);
	if (got != 2 * NT || st != 0) {
		if (!why[0])
			snprintf(why, cap, "lttng_keep gave %d of %d rows (status %d)", got, 2 * NT, st);
		return -1;
	}
	return 0;
}

static double med(double *v, int n)
{
	double s[MAX_RUNS];
	int k = 0;
	for (int i = 0; i < n; i++)
		if (isfinite(v[i]))
			s[k++] = v[i];
	if (!k)
		return NAN;
	qsort(s, (size_t)k, sizeof *s, bench_cmp_double);
	return k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
}

/* the medians of a case's runs */
struct fig {
	double made, kept, lost_pct, kept_per_s, made_per_s, cpu_ns, writer_ns, log_mb_s;
	double made_per_cpu_s, sleeps, writer_user_ns, log_b_ev;
};

static struct fig figures(const struct run *v, int n)
{
	double a[12][MAX_RUNS];
	struct fig f;
	for (int i = 0; i < n; i++) {
		a[0][i] = v[i].made;
		a[1][i] = v[i].kept;
		a[2][i] = 100.0 * (v[i].made - v[i].kept) / v[i].made;
		a[3][i] = v[i].kept / v[i].wall;
		a[4][i] = v[i].made / v[i].wall;
		a[5][i] = v[i].cpu * 1e9 / v[i].made;
		a[6][i] = v[i].writer_cpu * 1e9 / v[i].kept;
		a[7][i] = v[i].log_mb_s;
		a[8][i] = v[i].made / v[i].cpu;
		a[9][i] = v[i].sleeps;
		a[10][i] = v[i].writer_user * 1e9 / v[i].kept;
		a[11][i] = v[i].log_bytes / v[i].kept;
	}
	f.made = med(a[0], n), f.kept = med(a[1], n), f.lost_pct = med(a[2], n);
	f.kept_per_s = med(a[3], n), f.made_per_s = med(a[4], n), f.cpu_ns = med(a[5], n);
	f.writer_ns = med(a[6], n), f.log_mb_s = med(a[7], n), f.made_per_cpu_s = med(a[8], n);
	f.sleeps = med(a[9], n), f.writer_user_ns = med(a[10], n), f.log_b_ev = med(a[11], n);
	return f;
}

int main(int argc, char **argv)
{
	struct statfs sf;
	const char *tmp = getenv("TMPDIR");
	char why[512] = "";

	if (argc > 1 && !strcmp(argv[1], "--produce"))
		return produce(argc, argv);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		die("/proc/self/exe", errno);
	self[n] = 0;
	dir = "/dev/shm";
	if (getenv("KEEP_DIR") && *getenv("KEEP_DIR")) {
		dir = getenv("KEEP_DIR");
		if (access(dir, W_OK) != 0)
			die(dir, errno);
	} else if (statfs(dir, &sf) != 0 || sf.f_type != TMPFS_MAGIC_ || access(dir, W_OK) != 0) {
		dir = tmp && *tmp ? tmp : "/tmp";
		if (statfs(dir, &sf) != 0 || sf.f_type != TMPFS_MAGIC_)
			fprintf(stderr, "bench/keep: no tmpfs found; the logs go to %s\n", dir);
	}
	uint64_t events = getenv("KEEP_EVENTS") ? strtoull(getenv("KEEP_EVENTS"), NULL, 10)
	                                        : 20000000ull;
	int runs = getenv("KEEP_RUNS") ? atoi(getenv("KEEP_RUNS")) : 3;
	if (runs < 1 || runs > MAX_RUNS || events < 4000)
		die("KEEP_RUNS (1-9) or KEEP_EVENTS (4000 or more)", EINVAL);
	double load0[3] = { 0 }, load1[3] = { 0 };
	getloadavg(load0, 3);

	double slow = -1;
	sleep(BENCH_IDLE_S);
	double dd = bench_write_rate(dir, 1ull << 30, &slow);
	double behind = bench_write_behind_rate(dir, 1.0);
	double rewrite = bench_rewrite_rate(dir, 1ull << 30);
	if (dd < 0 || behind < 0 || rewrite < 0)
		die(dir, errno);

	lttng_reason(why, sizeof why, PT_BUILD_DIR "/bench-lttng/lttng_keep");
	int lt = !why[0];
	static struct run fl[NT][MAX_RUNS], rec[NT][MAX_RUNS], nl[NT][MAX_RUNS], lr[MAX_RUNS][NT];
	static struct run lb[MAX_RUNS][NT];
	for (int r = 0; r < runs; r++) {
		for (int i = 0; i < NT; i++) {
			fprintf(stderr, "bench/keep: run %d, %d thread(s)\n", r + 1, threads[i]);
			fl[i][r] = run_pt("flight", threads[i], events);
			rec[i][r] = run_pt("record", threads[i], events);
			nl[i][r] = run_pt("noloss", threads[i], events);
		}
		if (lt && run_lttng(lr[r], lb[r], events, why, sizeof why) != 0)
			lt = 0;
	}
	getloadavg(load1, 3);

	printf("Events kept at full speed (issue 48): %ld CPUs online, %d-byte payload, "
	       "%.0f M events in all per run split over the threads, median of %d runs; "
	       "load average %.2f before, %.2f after\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN), PAYLOAD, events / 1e6, runs, load0[0], load1[0]);
	printf("the machine on %s: write() of 64 KiB blocks into a new 1 GB file after %d s idle: "
	       "%.0f MB/s (slowest %.0f ms: %.0f MB/s); writing what another CPU has just "
	       "written: %.0f MB/s; the same blocks over pages the file has (the copy alone): "
	       "%.0f MB/s, so a new file's pages cost the kernel %.2f ns a byte beyond the copy\n\n",
	       dir, BENCH_IDLE_S, dd, BENCH_WINDOW_US / 1e3, slow, behind, rewrite,
	       1e3 / dd - 1e3 / rewrite);
	bench_json("keep", "machine write", "new_file_mb_s", dd, "behind_mb_s", behind,
	           "rewrite_mb_s", rewrite, NULL);
	printf("| case | threads | kept M/s | lost | producers M/s (wall) | producer CPU ns/event | "
	       "writer CPU ns/event kept | of it in user mode | log MB/s |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	struct fig ffl[NT], fnl[NT], flb[NT], flt[NT];
	for (int i = 0; i < NT; i++) {
		struct fig f[5];
		const char *label[5] = { "flight recorder (LOOP, no log)", "posixtrace record",
		                         "posixtrace record --no-loss",
		                         "LTTng-UST discard channel + consumerd",
		                         "LTTng-UST blocking channel (lossless) + consumerd" };
		const char *key[5] = { "flight", "record", "noloss", "lttng", "lttngb" };
		struct run lv[MAX_RUNS], bv[MAX_RUNS];
		for (int r = 0; r < runs; r++)
			lv[r] = lr[r][i], bv[r] = lb[r][i];
		f[0] = figures(fl[i], runs);
		f[1] = figures(rec[i], runs);
		f[2] = figures(nl[i], runs);
		if (lt) {
			f[3] = figures(lv, runs);
			f[4] = figures(bv, runs);
			flb[i] = f[4];
		}
		ffl[i] = f[0], fnl[i] = f[2];
		if (lt)
			flt[i] = f[3];
		for (int c = 0; c < (lt ? 5 : 3); c++) {
			char name[32], wr[32] = "-", mb[32] = "-", lost[32] = "-", kept[32] = "-";
			char us[32] = "-";
			if (c) {
				snprintf(wr, sizeof wr, "%.1f", f[c].writer_ns);
				snprintf(lost, sizeof lost, "%.2f%%", f[c].lost_pct);
				snprintf(kept, sizeof kept, "%.2f", f[c].kept_per_s / 1e6);
			}
			if (c == 1 || c == 2) {
				snprintf(mb, sizeof mb, "%.0f", f[c].log_mb_s);
				snprintf(us, sizeof us, "%.1f", f[c].writer_user_ns);
			}
			printf("| %s | %d | %s | %s | %.2f | %.1f | %s | %s | %s |\n", label[c], threads[i],
			       kept, lost, f[c].made_per_s / 1e6, f[c].cpu_ns, wr, us, mb);
			snprintf(name, sizeof name, "%s/%d", key[c], threads[i]);
			bench_json("keep", name, "threads", (double)threads[i], "made", f[c].made,
			           "kept", f[c].kept, "lost_pct", c ? f[c].lost_pct : NAN,
			           "kept_per_s", f[c].kept_per_s, "made_per_s", f[c].made_per_s,
			           "producer_cpu_ns", f[c].cpu_ns, "writer_cpu_ns",
			           c ? f[c].writer_ns : NAN, "writer_user_ns",
			           c == 1 || c == 2 ? f[c].writer_user_ns : NAN, "log_mb_s", f[c].log_mb_s, NULL);
		}
	}
	/* what the machine itself could take at the log's bytes per event:
	 * the ceiling of any writer that writes each event's bytes once */
	struct fig frec[NT];
	for (int i = 0; i < NT; i++) {
		struct run rv[MAX_RUNS];
		for (int r = 0; r < runs; r++)
			rv[r] = rec[i][r];
		frec[i] = figures(rv, runs);
	}
	double bpe = fnl[0].log_b_ev;
	if (lt) /* (the bytes each writer had to write an event) */
		printf("\nLTTng-UST's trace (discard channel): %.1f bytes an event kept with 1 thread, "
		       "%.1f with 4; the log: %.1f\n", flt[0].log_b_ev, flt[NT - 1].log_b_ev, bpe);
	printf("\nThe machine's ceiling at the log's %.1f bytes per event: %.1f M events/s "
	       "writing behind another CPU, %.1f M events/s into a new file (the kernel's own "
	       "%.1f ns an event, whatever the writer does); `record` kept ",
	       bpe, behind / bpe, dd / bpe, 1e3 * bpe / dd);
	for (int i = 0; i < NT; i++)
		printf("%s%.1f M/s (%.0f%% of the first) with %d thread%s", i ? ", " : "",
		       frec[i].kept_per_s / 1e6, 100.0 * frec[i].kept_per_s / 1e6 / (behind / bpe),
		       threads[i], threads[i] > 1 ? "s" : "");
	printf("\n");
	bench_json("keep", "machine ceiling", "bytes_per_event", bpe, "behind_mev_s", behind / bpe,
	           "new_file_mev_s", dd / bpe, NULL);
	printf("\n--no-loss against the flight recorder, same run: ");
	for (int i = 0; i < NT; i++)
		printf("%s%d thread%s %.2fx by wall, %.2fx by CPU time (the program slept %.0f times)",
		       i ? "; " : "", threads[i], threads[i] > 1 ? "s" : "",
		       fnl[i].made_per_s / ffl[i].made_per_s,
		       fnl[i].made_per_cpu_s / ffl[i].made_per_cpu_s, fnl[i].sleeps);
	printf("\n");
	if (lt) {
		printf("\n--no-loss against LTTng-UST's blocking channel, same run (events/s, both "
		       "lossless): ");
		for (int i = 0; i < NT; i++)
			printf("%s%d thread%s %.2fx", i ? "; " : "", threads[i], threads[i] > 1 ? "s" : "",
			       fnl[i].kept_per_s / flb[i].kept_per_s);
		printf("\n");
	}
	bench_json("keep", "noloss vs flight", "wall_1", fnl[0].made_per_s / ffl[0].made_per_s,
	           "cpu_1", fnl[0].made_per_cpu_s / ffl[0].made_per_cpu_s, "sleeps_1", fnl[0].sleeps,
	           NULL);
	if (!lt)
		printf("\nSKIP: LTTng-UST's side: %s\n", why);
	printf("\n- kept M/s: events kept (in the log; LTTng: emitted - the channel's discarded "
	       "count) over the producers' wall time; lost: of the events made\n");
	printf("- producer CPU: the producer threads' own CPU time per event made "
	       "(CLOCK_THREAD_CPUTIME_ID)\n");
	printf("- writer CPU: posixtrace: the recorder's threads but its main one (the flusher), "
	       "from /proc every 2 ms; LTTng: every lttng-* process (sessiond, consumerd), from "
	       "before start to after stop; of it in user mode: the flusher's own work (merge, "
	       "encode, checksum), the rest is the kernel's (write() copying into the file, "
	       "its pages, waking)\n");
	printf("- log MB/s: the log's size over the time from the start of `posixtrace record` to "
	       "the end of its flusher, against the machine's %.0f MB/s (new file) and %.0f MB/s "
	       "(behind another CPU) above\n", dd, behind);
	return 0;
}
