/*
 * flush.c -- benchmark of a stream with a log (run by `make bench`).
 *
 * A stream made by posix_trace_create_withlog(0, ...) with the FLUSH
 * stream-full policy and an APPEND log in a file on tmpfs (/dev/shm, else
 * $TMPDIR; the file is removed afterwards), 16 MiB of stream.  One producer
 * thread records 32-byte events for about 2 s, either at full speed or
 * paced at 10 M and at 21 M events/s (21 M events of 48 bytes are 1 GB/s
 * of log) (busy-wait: each batch of 1000 events waits on
 * clock_gettime for its due time); the flusher thread drains the stream
 * into the log meanwhile.  Per run: events recorded, events found in the
 * log (posix_trace_open + getnext), lost = recorded - in log, whether the
 * count of lost events the log gives (src/ext.h) says exactly that, the stream's
 * overrun status (get_status before shutdown), MB/s written (log size /
 * wall time from the first event to the end of posix_trace_shutdown) and
 * ns per posix_trace_event() call in the producer, and where the flusher's
 * time went while the producer ran (its thread's user and kernel CPU time
 * from /proc: user ns per event, log bytes per kernel second).  Each figure
 * is the median of 3 runs.  Each row twice: as the machine is, and with warm
 * pages (4 GB written to a file in the same directory and removed right
 * before the run: on a VM that hands freed guest memory back to its host,
 * a log's fresh pages each cost a host fault; warm, the run reuses pages
 * the guest has just touched).  Prints a Markdown table, then the flusher
 * alone: 4 M events recorded first into an UNTIL_FULL stream, by one thread
 * and by 4 at once, then flushed by posix_trace_flush (the cost per event
 * of reading the stream, merging its writers and writing the log with
 * nothing else running).  Also the machine's own
 * rate of writing a new file there (plain write() of 64 KiB blocks,
 * twice, 2 GB; then, after the same warm-up, a file as large as the warm
 * full-speed log: what the flusher's write() could reach), and its rate
 * of writing what another CPU has just written (bench_write_behind_rate:
 * what a flusher with no work of its own would reach).  Last, a
 * consumer that keeps up: the producer at full speed with the log on
 * /dev/null, against the flight recorder, runs alternated (keep_up()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include "../src/ext.h"
#include "bench_util.h"

#define RUNS 3
#define SECONDS 2.0
#define PAYLOAD 32
#define PACED_RATE 10e6   /* events/s */
#define GB_RATE 21e6      /* events/s: about 1 GB/s of log */
#define BATCH 1000
#define STREAM_SIZE (16u << 20)
#define TMPFS_MAGIC_ 0x01021994

static trace_event_id_t id;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench/flush: %s: %s\n", what, strerror(rc));
	exit(1);
}

static double median(double *v)
{
	qsort(v, RUNS, sizeof *v, bench_cmp_double);
	return v[RUNS / 2];
}

/* ------------------------------------------------------------ producer */
struct prod {
	double rate;      /* events/s, 0: full speed */
	uint64_t recorded;
	double ns;        /* time spent recording */
};

static void *producer(void *arg)
{
	struct prod *p = arg;
	unsigned char buf[PAYLOAD] = { 0 };
	double t0 = now_ns(), end = t0 + SECONDS * 1e9, t = t0;
	uint64_t n = 0;

	while (t < end) {
		if (p->rate > 0) { /* the batch is due at t0 + n / rate */
			double due = t0 + (double)n * (1e9 / p->rate);
			while ((t = now_ns()) < due)
				;
		}
		for (int i = 0; i < BATCH; i++, n++) {
			buf[0] = (unsigned char)n;
			posix_trace_event(id, buf, PAYLOAD);
		}
		t = now_ns();
	}
	p->recorded = n;
	p->ns = t - t0;
	return NULL;
}

/* ---------------------------------------------- the flusher's own time */
/* The flusher is the thread the stream's creation added to this process:
 * the one task of /proc/self/task not in `before` (tids, n of them). */
#define MAX_TASKS 64
static int list_tasks(pid_t *t)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) && n < MAX_TASKS)
		if (e->d_name[0] != '.')
			t[n++] = (pid_t)atoi(e->d_name);
	if (d)
		closedir(d);
	return n;
}

static pid_t new_task(const pid_t *before, int n)
{
	pid_t now[MAX_TASKS], found = 0;
	int m = list_tasks(now);

	for (int i = 0; i < m; i++) {
		int old = 0;
		for (int j = 0; j < n; j++)
			old |= now[i] == before[j];
		if (!old) {
			if (found) /* more than one: cannot tell */
				return 0;
			found = now[i];
		}
	}
	return found;
}

/* What the flusher did while the producer ran: its CPU time in user and in
 * kernel mode and the log's size when the producer ended. */
struct flusher_cpu {
	pid_t tid;       /* 0: unknown (nothing measured) */
	int fd;          /* the log */
	int ok;
	double user, sys, bytes;
};

/* Run producer p on the started stream trid, then its status (into *si)
 * and its shutdown; fc (if not NULL): the flusher's time, read right after
 * the producer's end. */
static void produce_and_shut(trace_id_t trid, struct prod *p, struct posix_trace_status_info *si,
                             struct flusher_cpu *fc)
{
	pthread_t th;
	int rc;

	pthread_create(&th, NULL, producer, p);
	pthread_join(th, NULL);
	if (fc) {
		struct stat st;
		fc->ok = fc->tid && bench_task_cpu(getpid(), fc->tid, &fc->user, &fc->sys) &&
		         fstat(fc->fd, &st) == 0;
		fc->bytes = fc->ok ? (double)st.st_size : 0;
	}
	if ((rc = posix_trace_get_status(trid, si)) != 0)
		die("posix_trace_get_status", rc);
	if ((rc = posix_trace_shutdown(trid)) != 0)
		die("posix_trace_shutdown", rc);
}

/* A started stream of this process with an APPEND log in a new file in
 * dir (its name in path, its fd in *fd). */
static trace_id_t start_stream(const char *dir, char *path, size_t cap, int policy, size_t size,
                               int *fd)
{
	trace_attr_t attr;
	trace_id_t trid;
	int rc;

	snprintf(path, cap, "%s/posixtrace-bench-flush-XXXXXX", dir);
	if ((*fd = mkstemp(path)) < 0)
		die(path, errno);
	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamfullpolicy(&attr, policy);
	posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);
	posix_trace_attr_setstreamsize(&attr, size);
	if ((rc = posix_trace_create_withlog(0, &attr, *fd, &trid)) != 0)
		die("posix_trace_create_withlog", rc);
	posix_trace_attr_destroy(&attr);
	if ((rc = posix_trace_start(trid)) != 0)
		die("posix_trace_start", rc);
	return trid;
}

/* ------------------------------------------------------------- one run */
struct result {
	double recorded, in_log, lost, overrun, mbs, ns, size, exact;
	double fl_user_ns; /* the flusher's user time per event in the log, -1: not known */
	double fl_write;   /* log bytes / its kernel time, MB/s, -1: not known */
};

/* The producer's events in the log; *counted: the events the log says
 * were lost, less the controller's own (START, STOP, FLUSH_START,
 * FLUSH_STOP: each one missing was lost too). */
static uint64_t count_log(const char *path, uint64_t *counted)
{
	struct posix_trace_event_info ev;
	struct pt_ext_losses x;
	unsigned char data[64];
	size_t len;
	int un, rc, fd = open(path, O_RDONLY);
	trace_id_t log = 0;
	uint64_t n = 0, sys = 0;

	if (fd < 0 || (rc = posix_trace_open(fd, &log)) != 0)
		die("posix_trace_open", fd < 0 ? errno : rc);
	while ((rc = posix_trace_getnext_event(log, &ev, data, sizeof data, &len, &un)) == 0 && !un) {
		n += ev.posix_event_id == id;
		sys += ev.posix_event_id == POSIX_TRACE_START || ev.posix_event_id == POSIX_TRACE_STOP ||
		       ev.posix_event_id == POSIX_TRACE_FLUSH_START ||
		       ev.posix_event_id == POSIX_TRACE_FLUSH_STOP;
	}
	if (rc)
		die("posix_trace_getnext_event", rc);
	if ((rc = pt_ext_losses(log, &x)) != 0 || !x.total_ok)
		die("the log's count of lost events", rc ? rc : ENOENT);
	*counted = x.total - (4 - sys);
	posix_trace_close(log);
	close(fd);
	return n;
}

static double tmpfs_rate(const char *dir, uint64_t bytes, double *slowest);
#define WARM_BYTES 4000000000ull /* more than a full-speed run's log */

static struct result run(const char *dir, double rate, int warm)
{
	char path[512];
	struct posix_trace_status_info si;
	struct result r;
	struct prod p = { rate, 0, 0 };
	struct stat st;
	int fd;

	if (warm) /* pages the guest has just used and freed: the run reuses them */
		(void)tmpfs_rate(dir, WARM_BYTES, NULL);
	pid_t before[MAX_TASKS];
	int ntask = list_tasks(before);
	trace_id_t trid = start_stream(dir, path, sizeof path, POSIX_TRACE_FLUSH, STREAM_SIZE, &fd);
	struct flusher_cpu fc = { new_task(before, ntask), fd, 0, 0, 0, 0 };

	double t0 = now_ns();
	produce_and_shut(trid, &p, &si, &fc);
	double wall = now_ns() - t0;
	fstat(fd, &st);
	close(fd);

	uint64_t counted, in_log = count_log(path, &counted);
	unlink(path);
	r.recorded = (double)p.recorded;
	r.in_log = (double)in_log;
	r.lost = r.recorded - r.in_log;
	r.exact = counted == p.recorded - in_log;
	r.overrun = si.posix_stream_overrun_status == POSIX_TRACE_OVERRUN;
	r.size = (double)st.st_size;
	r.mbs = (double)st.st_size / 1e6 / (wall / 1e9);
	r.ns = p.ns / (double)p.recorded;
	/* the events in the log when the producer ended: in proportion to size */
	double ev_then = st.st_size ? r.in_log * fc.bytes / (double)st.st_size : 0;
	r.fl_user_ns = fc.ok && ev_then > 0 ? fc.user * 1e9 / ev_then : -1;
	r.fl_write = fc.ok && fc.sys > 0 ? fc.bytes / 1e6 / fc.sys : -1;
	return r;
}

/* The flusher alone: ALONE_EVENTS recorded first into an UNTIL_FULL stream
 * big enough to hold them, by nthr threads at once (released together, so
 * their events interleave finely and the flusher merges them), then
 * flushed into a log in dir by posix_trace_flush(), waited for with
 * get_status (every 50 us).  ns per event from the flush request to the
 * status saying it is done, the median of RUNS.  (Not the time of
 * posix_trace_shutdown(), which flushes too: that includes freeing the
 * 256 MB segment, about 10 ns per event here.) */
#define ALONE_EVENTS 4000000u
#define ALONE_THREADS_MAX 8
static pthread_barrier_t alone_bar;
static unsigned alone_per;

static void *alone_producer(void *arg)
{
	unsigned char buf[PAYLOAD] = { 0 };

	(void)arg;
	pthread_barrier_wait(&alone_bar);
	for (unsigned i = 0; i < alone_per; i++) {
		buf[0] = (unsigned char)i;
		posix_trace_event(id, buf, PAYLOAD);
	}
	return NULL;
}

static double flusher_alone(const char *dir, unsigned nthr, double *mbs)
{
	double ns[RUNS], rate[RUNS];
	pthread_t th[ALONE_THREADS_MAX];

	alone_per = ALONE_EVENTS / nthr;
	for (int r = 0; r < RUNS; r++) {
		char path[512];
		struct stat st;
		int fd, rc;
		trace_id_t trid = start_stream(dir, path, sizeof path, POSIX_TRACE_UNTIL_FULL,
		                               (size_t)ALONE_EVENTS * 64, &fd);
		pthread_barrier_init(&alone_bar, NULL, nthr);
		for (unsigned i = 0; i < nthr; i++)
			pthread_create(&th[i], NULL, alone_producer, NULL);
		for (unsigned i = 0; i < nthr; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&alone_bar);
		struct posix_trace_status_info si;
		struct timespec poll = { 0, 50000 };
		double t0 = now_ns();
		if ((rc = posix_trace_flush(trid)) != 0)
			die("posix_trace_flush", rc);
		do {
			nanosleep(&poll, NULL);
			if ((rc = posix_trace_get_status(trid, &si)) != 0)
				die("posix_trace_get_status", rc);
		} while (si.posix_stream_flush_status == POSIX_TRACE_FLUSHING);
		double dt = now_ns() - t0;
		fstat(fd, &st);
		if ((rc = posix_trace_shutdown(trid)) != 0)
			die("posix_trace_shutdown", rc);
		close(fd);
		unlink(path);
		ns[r] = dt / (alone_per * nthr);
		rate[r] = (double)st.st_size / 1e6 / (dt / 1e9);
	}
	*mbs = median(rate);
	return median(ns);
}

/* A consumer that keeps up: the same full-speed producer into a FLUSH
 * stream whose log is /dev/null (the flusher takes every event and the
 * write costs it nothing), and, alternated with it, into a LOOP stream
 * nobody reads (the flight recorder).  ns per event, min, median and max
 * of KEEPUP_RUNS each: a producer slowed by its consumer shows in the max
 * even when only some runs are hit. */
#define KEEPUP_RUNS 7
static void keep_up(double fr[3], double dn[3], double *lost)
{
	double v[2][KEEPUP_RUNS];

	*lost = 0;
	for (int r = 0; r < KEEPUP_RUNS; r++)
		for (int k = 0; k < 2; k++) {
			trace_attr_t attr;
			trace_id_t trid;
			struct posix_trace_status_info si;
			struct prod p = { 0, 0, 0 };
			int rc, fd = -1;
			posix_trace_attr_init(&attr);
			posix_trace_attr_setstreamsize(&attr, STREAM_SIZE);
			if (k) {
				if ((fd = open("/dev/null", O_WRONLY)) < 0)
					die("/dev/null", errno);
				posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH);
				posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);
				rc = posix_trace_create_withlog(0, &attr, fd, &trid);
			} else {
				posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_LOOP);
				rc = posix_trace_create(0, &attr, &trid);
			}
			if (rc != 0)
				die(k ? "posix_trace_create_withlog (/dev/null)" : "posix_trace_create", rc);
			posix_trace_attr_destroy(&attr);
			if ((rc = posix_trace_start(trid)) != 0)
				die("posix_trace_start", rc);
			produce_and_shut(trid, &p, &si, NULL);
			if (fd >= 0)
				close(fd);
			v[k][r] = p.ns / (double)p.recorded;
			if (k)
				*lost += si.posix_stream_overrun_status == POSIX_TRACE_OVERRUN;
		}
	for (int k = 0; k < 2; k++) {
		double *o = k ? dn : fr;
		qsort(v[k], KEEPUP_RUNS, sizeof(double), bench_cmp_double);
		o[0] = v[k][0], o[1] = v[k][KEEPUP_RUNS / 2], o[2] = v[k][KEEPUP_RUNS - 1];
	}
}

/* The machine's own rate (bench_util.h); a failure ends the benchmark. */
static double tmpfs_rate(const char *dir, uint64_t bytes, double *slowest)
{
	double r = bench_write_rate(dir, bytes, slowest);
	if (r < 0)
		die(dir, errno);
	return r;
}

static struct result median_of(const char *dir, double rate, int warm)
{
	double v[9][RUNS];
	struct result m;

	m.exact = 1;
	for (int i = 0; i < RUNS; i++) {
		struct result r = run(dir, rate, warm);
		m.exact = m.exact && r.exact;
		v[0][i] = r.recorded, v[1][i] = r.in_log, v[2][i] = r.lost, v[3][i] = r.overrun;
		v[4][i] = r.mbs, v[5][i] = r.ns, v[6][i] = r.size;
		v[7][i] = r.fl_user_ns, v[8][i] = r.fl_write;
	}
	m.recorded = median(v[0]), m.in_log = median(v[1]), m.lost = median(v[2]);
	m.overrun = median(v[3]), m.mbs = median(v[4]), m.ns = median(v[5]), m.size = median(v[6]);
	m.fl_user_ns = median(v[7]), m.fl_write = median(v[8]);
	return m;
}

static void row(const char *name, const struct result *r)
{
	char user[32] = "?", wr[32] = "?";

	if (r->fl_user_ns >= 0)
		snprintf(user, sizeof user, "%.1f", r->fl_user_ns);
	if (r->fl_write >= 0)
		snprintf(wr, sizeof wr, "%.0f", r->fl_write);
	printf("| %s | %.2f | %.1f | %.1f | %.0f (%.2f%%) | %s | %s | %.0f | %.1f | %s | %s |\n",
	       name, r->ns, r->recorded / 1e6, r->in_log / 1e6, r->lost,
	       r->recorded ? 100.0 * r->lost / r->recorded : 0.0, r->exact ? "exact" : "WRONG",
	       r->overrun ? "OVERRUN" : "no", r->size / 1e6, r->mbs, user, wr);
	bench_json("flush", name, "ns_per_event", r->ns, "recorded", r->recorded, "in_log",
	           r->in_log, "lost", r->lost, "exact", (double)r->exact, "overrun", r->overrun,
	           "log_mb", r->size / 1e6, "log_mb_s", r->mbs, "flusher_user_ns",
	           r->fl_user_ns >= 0 ? r->fl_user_ns : NAN, "flusher_write_mb_s",
	           r->fl_write >= 0 ? r->fl_write : NAN, NULL);
}

int main(void)
{
	struct statfs sf;
	const char *dir = "/dev/shm", *tmp = getenv("TMPDIR");
	int rc;

	if (statfs(dir, &sf) != 0 || sf.f_type != TMPFS_MAGIC_ || access(dir, W_OK) != 0) {
		dir = tmp && *tmp ? tmp : "/tmp";
		if (statfs(dir, &sf) != 0 || sf.f_type != TMPFS_MAGIC_)
			fprintf(stderr, "bench/flush: no tmpfs found; the log goes to %s\n", dir);
	}
	if ((rc = posix_trace_eventid_open("bench.flush", &id)) != 0)
		die("posix_trace_eventid_open", rc);

	double slow_first, slow_again;
	double dd_first = tmpfs_rate(dir, 2000000000ull, &slow_first);
	double dd_again = tmpfs_rate(dir, 2000000000ull, &slow_again);
	struct result res[2][3];
	for (int warm = 0; warm < 2; warm++) {
		res[warm][0] = median_of(dir, 0, warm);
		res[warm][1] = median_of(dir, PACED_RATE, warm);
		res[warm][2] = median_of(dir, GB_RATE, warm);
	}
	/* the machine, for a file as large as the warm full-speed log, warm too */
	(void)tmpfs_rate(dir, WARM_BYTES, NULL);
	double slow_same, dd_same = tmpfs_rate(dir, (uint64_t)res[1][0].size, &slow_same);
	/* the machine, writing what another CPU has just written: after 4 s
	 * idle (the pages of files just removed given back), and warm */
	sleep(BENCH_IDLE_S);
	double behind_cold = bench_write_behind_rate(dir, SECONDS);
	(void)tmpfs_rate(dir, WARM_BYTES, NULL);
	double behind_warm = bench_write_behind_rate(dir, SECONDS);
	if (behind_cold < 0 || behind_warm < 0)
		die(dir, errno);
	double alone_mbs, alone = flusher_alone(dir, 1, &alone_mbs);
	double alone4_mbs, alone4 = flusher_alone(dir, 4, &alone4_mbs);
	double fr[3], dn[3], dn_lost;
	keep_up(fr, dn, &dn_lost);

	printf("posixtrace log benchmark: %ld CPUs online, %d-byte payload, FLUSH stream of "
	       "%u MiB, APPEND log on %s, one producer thread for %.0f s, median of %d runs\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN), PAYLOAD, STREAM_SIZE >> 20, dir, SECONDS, RUNS);
	printf("| producer | ns/event | recorded (M) | in the log (M) | lost | log's count | "
	       "stream overrun | log MB | log MB/s | flusher user ns/event | flusher write() "
	       "MB/s |\n");
	printf("|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|\n");
	static const char *what[3] = { "full speed", "paced at 10 M events/s",
	                               "paced at 21 M events/s (~1 GB/s of log)" };
	static const char *how[2] = { "", ", warm pages" };
	for (int warm = 0; warm < 2; warm++)
		for (int i = 0; i < 3; i++) {
			char name[128];
			snprintf(name, sizeof name, "%s%s", what[i], how[warm]);
			row(name, &res[warm][i]);
		}
	printf("\n");
	printf("- ns/event: time in the producer's loop / events recorded (the paced loop "
	       "includes its pacing)\n");
	printf("- lost: recorded - events found in the log (dropped because the flusher was "
	       "behind; reported as OVERFLOW in the log)\n");
	printf("- log's count: the number of lost events the log gives equals that, in every "
	       "run (exact), or not (WRONG)\n");
	printf("- log MB/s: log file size / wall time from the first event to the end of "
	       "posix_trace_shutdown()\n");
	printf("- flusher user ns/event: the flusher thread's CPU time in user mode while the "
	       "producer ran (its /proc stat) / events in the log by then (reading the stream, "
	       "encoding, checksums); flusher write() MB/s: log bytes by then / its CPU time in "
	       "the kernel (almost all of it in write())\n");
	printf("- paced: %.1f and %.1f M events/s achieved (warm: %.1f and %.1f)\n",
	       res[0][1].recorded / SECONDS / 1e6, res[0][2].recorded / SECONDS / 1e6,
	       res[1][1].recorded / SECONDS / 1e6, res[1][2].recorded / SECONDS / 1e6);
	printf("- warm pages: before each run, %.0f GB written to a file on %s and removed, so "
	       "the log reuses pages the guest has just touched\n", WARM_BYTES / 1e9, dir);
	printf("- the machine: write() of 64 KiB blocks into a new 2 GB file on %s: %.0f MB/s "
	       "(slowest %.0f ms: %.0f MB/s), and %.0f MB/s right after (slowest: %.0f MB/s); a "
	       "VM whose host backs freed guest memory lazily pays a host fault per page the "
	       "first time.  A paced row loses events when the machine writes slower than its "
	       "rate for longer than the stream holds (%u MiB: about %.0f ms at 21 M events/s), "
	       "or when another task holds the flusher's CPU that long (the producer busy-waits "
	       "on the other one)\n",
	       dir, dd_first, BENCH_WINDOW_US / 1e3, slow_first, dd_again, slow_again,
	       STREAM_SIZE >> 20, STREAM_SIZE / (GB_RATE * (8 + PAYLOAD)) * 1e3);
	printf("- the machine, a file as large as the warm full-speed log (%.0f MB), right after "
	       "%.0f GB written and removed: %.0f MB/s (slowest %.0f ms: %.0f MB/s).  A flusher "
	       "whose write() keeps this rate is held back by its own work per event only\n",
	       res[1][0].size / 1e6, WARM_BYTES / 1e9, dd_same, BENCH_WINDOW_US / 1e3, slow_same);
	printf("- the machine, writing what another CPU has just written (a thread stores "
	       "into a %u MiB ring, this one write()s each 64 KiB of it as soon as it is "
	       "complete, %.0f s; no encoding, no checks): %.0f MB/s after %d s idle, %.0f MB/s "
	       "after %.0f GB written and removed.  What a flusher with no work of its own "
	       "would reach: the full-speed log rates above are %.0f%% and %.0f%% of these\n",
	       BENCH_BEHIND_RING >> 20, SECONDS, behind_cold, BENCH_IDLE_S, behind_warm, WARM_BYTES / 1e9,
	       100 * res[0][0].mbs / behind_cold, 100 * res[1][0].mbs / behind_warm);
	printf("\nflusher alone (%u M events recorded first, then posix_trace_flush into "
	       "the log, until get_status says it is done): %.1f ns/event, %.0f MB/s of log; "
	       "recorded by 4 threads at once (their events interleaved, merged by the "
	       "flusher): %.1f ns/event, %.0f MB/s\n",
	       ALONE_EVENTS / 1000000, alone, alone_mbs, alone4, alone4_mbs);
	printf("\na consumer that keeps up (%d runs each, alternated, %.0f s of full-speed "
	       "producer): with the log on /dev/null, %.2f / %.2f / %.2f ns/event (min / median "
	       "/ max; %.0f runs with a stream overrun); the flight recorder (LOOP, no reader), "
	       "%.2f / %.2f / %.2f; medians %.2fx, worst run %.2fx the flight recorder's median\n",
	       KEEPUP_RUNS, SECONDS, dn[0], dn[1], dn[2], dn_lost, fr[0], fr[1], fr[2],
	       dn[1] / fr[1], dn[2] / fr[1]);
	bench_json("flush", "machine write", "new_file_mb_s", dd_first, "again_mb_s", dd_again,
	           "log_sized_mb_s", dd_same, "behind_cold_mb_s", behind_cold, "behind_warm_mb_s",
	           behind_warm, NULL);
	bench_json("flush", "flusher alone", "ns_per_event", alone, "log_mb_s", alone_mbs,
	           "ns_per_event_4_writers", alone4, "log_mb_s_4_writers", alone4_mbs, NULL);
	bench_json("flush", "keep up", "devnull_median_ns", dn[1], "devnull_max_ns", dn[2],
	           "devnull_overrun_runs", dn_lost, "loop_median_ns", fr[1], NULL);
	return 0;
}
