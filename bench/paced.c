/*
 * paced.c -- `posixtrace record` of paced producers, against the rate the
 * target file system takes (run by `make bench`).
 *
 * First the machine's own rate: write() of 64 KiB blocks into a new file
 * on tmpfs (/dev/shm, else $TMPDIR) as large as the largest log a paced
 * row writes (MAX_RATE events/s for SECONDS), twice, in this run: after
 * a pause of BENCH_IDLE_S, then at once.  (A VM whose host backs freed guest
 * memory lazily gets the pages of a file just removed back within
 * seconds, and pays a host fault per page when one is written again: so
 * the first pass meets pages as a log does between runs, the second pages
 * still warm.)  Then, for 1, 2, 4 and 8 threads, this same program is
 * started as `posixtrace record --force -o LOG -- paced --produce ...`:
 * its threads record 32-byte events (48 bytes of stream, about 50 bytes
 * of log each) for SECONDS at a paced total rate, a quarter of the lower
 * of the two rates, MAX_RATE at most (each thread sleeps until each batch
 * of 1000 events is due: a CPU stays free for the flusher).  Earlier
 * versions paced from two 1 GB passes right after one another: on pages
 * earlier benchmarks had warmed they ran at 3.3-5.2 GB/s, where the log's
 * own pages, written after a pause, came at 444-984 MB/s
 * (docs/performance.md), so the pace was not below the rate the log met.
 * Per row: events recorded (known in advance), events in the log, lost,
 * whether the log's count of lost events says exactly that, the
 * producer's elapsed time against its paced time, and the flusher's CPU
 * per event (its thread's CPU time in /proc, sampled every 2 ms until it
 * ends).  Then the
 * same at full speed with 2 threads: the log rate next to the machine's.
 * Each row is the median of RUNS runs by events lost.  Prints Markdown.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "../tests/pace.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif
#define RUNS 3
#define SECONDS 2.0
#define PAYLOAD 32
#define BATCH 1000
#define LOG_BYTES_PER_EVENT 50.0 /* (about: a 32-byte payload's log record) */
#define MAX_RATE 20e6 /* events/s: the fastest pace */
#define TMPFS_MAGIC_ 0x01021994

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench/paced: %s: %s\n", what, strerror(rc));
	exit(1);
}

/* --------------------------------------------------- the traced program */
struct prod {
	trace_event_id_t id;
	double rate; /* events/s of this thread, 0: full speed */
	uint64_t n;  /* events to record */
};

static void *produce_main(void *arg)
{
	struct prod *p = arg;
	unsigned char buf[PAYLOAD] = { 0 };
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 0; i < p->n;) {
		if (p->rate > 0) /* batch i / BATCH is due at t0 + i / rate */
			pace_until(&t0, (double)i / p->rate);
		for (int k = 0; k < BATCH && i < p->n; k++, i++) {
			buf[0] = (unsigned char)i;
			posix_trace_event(p->id, buf, PAYLOAD);
		}
	}
	return NULL;
}

/* paced --produce THREADS TOTAL_RATE EVENTS_PER_THREAD OUT: writes
 * "elapsed_s cpu_s" into OUT */
static int produce(int argc, char **argv)
{
	if (argc != 6)
		return 2;
	int nt = atoi(argv[2]);
	double rate = atof(argv[3]);
	uint64_t n = strtoull(argv[4], NULL, 10);
	pthread_t th[64];
	struct prod p[64];
	trace_event_id_t id;
	struct rusage ru;

	if (nt < 1 || nt > 64 || posix_trace_eventid_open("bench.paced", &id) != 0)
		return 2;
	double t0 = bench_now_us();
	for (int i = 0; i < nt; i++) {
		p[i] = (struct prod){ id, rate / nt, n };
		pthread_create(&th[i], NULL, produce_main, &p[i]);
	}
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	double dt = (bench_now_us() - t0) / 1e6;
	getrusage(RUSAGE_SELF, &ru);
	FILE *f = fopen(argv[5], "w");
	if (!f)
		return 2;
	fprintf(f, "%.6f %.6f\n", dt,
	        ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	        (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	fclose(f);
	return 0;
}

/* ------------------------------------------------------------ the bench */
static const char *dir;
static char self[1024];

static double write_rate(uint64_t bytes, double *slowest)
{
	double r = bench_write_rate(dir, bytes, slowest);
	if (r < 0)
		die(dir, errno);
	return r;
}

struct result { double lost, in_log, elapsed, flusher_ns, mbs; int exact; };

/* The log's events of ours (ids from 16 up); *counted: the losses it
 * reports, all of them (a controller's system event lost would be
 * counted there too, and show as a mismatch). */
static uint64_t count_log(const char *path, uint64_t *counted)
{
	struct posix_trace_event_info ev;
	struct pt_ext_losses x;
	unsigned char data[64];
	size_t len;
	int un, rc, fd = open(path, O_RDONLY);
	trace_id_t log = 0;
	uint64_t n = 0;

	if (fd < 0 || (rc = posix_trace_open(fd, &log)) != 0)
		die("posix_trace_open", fd < 0 ? errno : rc);
	while ((rc = posix_trace_getnext_event(log, &ev, data, sizeof data, &len, &un)) == 0 && !un)
		n += ev.posix_event_id >= PT_SYS_IDS; /* (system events are below it) */
	if (rc)
		die("posix_trace_getnext_event", rc);
	if ((rc = pt_ext_losses(log, &x)) != 0 || !x.total_ok)
		die("the log's count of lost events", rc ? rc : ENOENT);
	*counted = x.total;
	posix_trace_close(log);
	close(fd);
	return n;
}

static double helper_cpu(pid_t pid);

static struct result run_one(int threads, double rate, uint64_t per_thread)
{
	char log[600], out[600], cli[1200], a_t[16], a_r[32], a_n[32];
	struct result r;
	struct rusage ru;
	int status;

	snprintf(log, sizeof log, "%s/posixtrace-bench-paced-%d.ptlog", dir, (int)getpid());
	snprintf(out, sizeof out, "%s/posixtrace-bench-paced-%d.out", dir, (int)getpid());
	bench_scratch(log);
	bench_scratch(out);
	snprintf(cli, sizeof cli, "%s/posixtrace", PT_BUILD_DIR);
	snprintf(a_t, sizeof a_t, "%d", threads);
	snprintf(a_r, sizeof a_r, "%.0f", rate);
	snprintf(a_n, sizeof a_n, "%llu", (unsigned long long)per_thread);
	double t0 = bench_now_us();
	pid_t pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execl(cli, "posixtrace", "record", "--force", "-o", log, "--", self, "--produce",
		      a_t, a_r, a_n, out, (char *)NULL);
		_exit(127);
	}
	/* the flusher's CPU time: its thread's, sampled until it ends */
	double flusher = 0, wall = 0;
	pid_t w;
	while ((w = wait4(pid, &status, WNOHANG, &ru)) == 0) {
		double c = helper_cpu(pid);
		if (c > flusher)
			flusher = c;
		if (c > 0 || flusher == 0)
			wall = (bench_now_us() - t0) / 1e6; /* until the flusher ends */
		usleep(2000);
	}
	/* (3: events were lost, as at full speed; the row counts them) */
	if (w != pid || !WIFEXITED(status) || (WEXITSTATUS(status) && WEXITSTATUS(status) != 3))
		die("posixtrace record", ECHILD);
	double elapsed = 0, cpu_prod = 0;
	FILE *f = fopen(out, "r");
	if (!f || fscanf(f, "%lf %lf", &elapsed, &cpu_prod) != 2)
		die("the producer's figures", EIO);
	fclose(f);
	unlink(out);
	struct stat st;
	stat(log, &st);
	uint64_t counted, in_log = count_log(log, &counted);
	unlink(log);
	uint64_t total = (uint64_t)threads * per_thread;
	r.in_log = (double)in_log;
	r.lost = (double)(total - in_log);
	r.exact = counted == total - in_log;
	r.elapsed = elapsed;
	r.flusher_ns = flusher * 1e9 / (double)(in_log ? in_log : 1);
	r.mbs = (double)st.st_size / wall / 1e6;
	return r;
}

/* CPU seconds of the threads of process pid other than its main thread
 * (the flusher), as /proc says now; 0 when it is gone. */
static double helper_cpu(pid_t pid)
{
	char path[64];
	double sum = 0;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		double ut, st;
		if (e->d_name[0] != '.' && atoi(e->d_name) != (int)pid &&
		    bench_task_cpu(pid, (pid_t)atoi(e->d_name), &ut, &st))
			sum += ut + st;
	}
	closedir(d);
	return sum;
}

static int by_lost(const void *a, const void *b)
{
	double x = ((const struct result *)a)->lost, y = ((const struct result *)b)->lost;
	return (x > y) - (x < y);
}

static struct result median_run(int threads, double rate, uint64_t per_thread)
{
	struct result v[RUNS];
	int exact = 1;

	for (int i = 0; i < RUNS; i++) {
		v[i] = run_one(threads, rate, per_thread);
		exact = exact && v[i].exact;
	}
	qsort(v, RUNS, sizeof v[0], by_lost);
	v[RUNS / 2].exact = exact;
	return v[RUNS / 2];
}

int main(int argc, char **argv)
{
	struct statfs sf;
	const char *tmp = getenv("TMPDIR");

	if (argc > 1 && !strcmp(argv[1], "--produce"))
		return produce(argc, argv);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		die("/proc/self/exe", errno);
	self[n] = 0;
	dir = "/dev/shm";
	if (statfs(dir, &sf) != 0 || sf.f_type != TMPFS_MAGIC_ || access(dir, W_OK) != 0) {
		dir = tmp && *tmp ? tmp : "/tmp";
		if (statfs(dir, &sf) != 0 || sf.f_type != TMPFS_MAGIC_)
			fprintf(stderr, "bench/paced: no tmpfs found; the log goes to %s\n", dir);
	}
	uint64_t dd_bytes = (uint64_t)(MAX_RATE * SECONDS * LOG_BYTES_PER_EVENT);
	double slow1, slow2;
	sleep(BENCH_IDLE_S);
	double dd1 = write_rate(dd_bytes, &slow1);
	double dd2 = write_rate(dd_bytes, &slow2);
	double machine = dd1 < dd2 ? dd1 : dd2;
	double paced = machine / 4 * 1e6 / LOG_BYTES_PER_EVENT; /* events/s */
	if (paced > MAX_RATE)
		paced = MAX_RATE;
	static const int threads[] = { 1, 2, 4, 8 };
	struct result res[5];
	uint64_t per[5];
	for (int i = 0; i < 4; i++) {
		per[i] = (uint64_t)(paced * SECONDS / threads[i]) / BATCH * BATCH;
		res[i] = median_run(threads[i], paced, per[i]);
	}
	per[4] = 20000000ull;
	res[4] = median_run(2, 0, per[4]);

	printf("posixtrace record of paced producers: %ld CPUs online, %d-byte payload, "
	       "the command's default stream (FLUSH, 16 MiB), APPEND log on %s, median of %d runs\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN), PAYLOAD, dir, RUNS);
	printf("the machine: write() of 64 KiB blocks into a new %.1f GB file on %s, after %d s "
	       "idle: %.0f MB/s (slowest %.0f ms: %.0f MB/s), then at once: %.0f MB/s (slowest: "
	       "%.0f MB/s); paced total below: a quarter of the lower, %.2f M events/s "
	       "(about %.0f MB/s of log)\n\n",
	       dd_bytes / 1e9, dir, BENCH_IDLE_S, dd1, BENCH_WINDOW_US / 1e3, slow1, dd2, slow2,
	       paced / 1e6, paced * LOG_BYTES_PER_EVENT / 1e6);
	printf("| producer | events (M) | lost | log's count | elapsed / paced time | "
	       "flusher CPU ns/event | log MB/s |\n");
	printf("|---|---:|---:|---|---:|---:|---:|\n");
	for (int i = 0; i < 5; i++) {
		char name[96];
		double total = (double)per[i] * (i < 4 ? threads[i] : 2);
		if (i < 4)
			snprintf(name, sizeof name, "%d thread%s, paced at %.2f M events/s in all",
			         threads[i], threads[i] > 1 ? "s" : "", paced / 1e6);
		else
			snprintf(name, sizeof name, "2 threads, full speed");
		char ratio[32];
		if (i < 4)
			snprintf(ratio, sizeof ratio, "%.2f", res[i].elapsed / SECONDS);
		else
			snprintf(ratio, sizeof ratio, "(%.2f s)", res[i].elapsed);
		printf("| %s | %.1f | %.0f (%.2f%%) | %s | %s | %.1f | %.0f |\n", name, total / 1e6,
		       res[i].lost, 100.0 * res[i].lost / total, res[i].exact ? "exact" : "WRONG",
		       ratio, res[i].flusher_ns, res[i].mbs);
		bench_json("paced", name, "threads", (double)(i < 4 ? threads[i] : 2), "events", total,
		           "lost", res[i].lost, "exact", (double)res[i].exact, "elapsed_s",
		           res[i].elapsed, "paced_s", i < 4 ? SECONDS : NAN, "flusher_ns",
		           res[i].flusher_ns, "log_mb_s", res[i].mbs, NULL);
	}
	bench_json("paced", "machine write", "new_file_mb_s", dd1, "again_mb_s", dd2,
	           "paced_events_per_s", paced, NULL);
	printf("\n- lost: events recorded - events of ours in the log; log's count: the log's "
	       "count of lost events equals that in every run (exact) or not (WRONG)\n");
	printf("- elapsed / paced time: the producer's wall time over the %.0f s it is paced "
	       "to take (1.00: not slowed)\n", SECONDS);
	printf("- flusher CPU: CPU time of the flusher thread of `posixtrace record` "
	       "(/proc/PID/task/TID/stat), per event in the log\n");
	printf("- log MB/s: log size / wall time from the start of `posixtrace record` "
	       "to the end of its flusher; full speed: against "
	       "the machine's %.0f-%.0f MB/s above\n", dd1, dd2);
	return 0;
}
