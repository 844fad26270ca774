/*
 * lttng_cmp.c -- posixtrace and LTTng-UST measured in the same run, on the
 * same loop, with the same 32-byte payload (run by `make bench-lttng`,
 * through bench/lttng/run.sh, which provides a session daemon and a
 * private LTTNG_HOME).
 *
 * Cases, each measured as alternated repetitions (posixtrace, LTTng,
 * posixtrace, LTTng, ...; REPS of each) and reported as medians:
 *
 *   disabled     no stream / no LTTng session (tracepoint compiled in)
 *   excluded     a stream running with the event filtered out / a session
 *                running with only another event (ptbench:other) enabled
 *   flight       a 16 MiB LOOP stream / a snapshot session, overwrite
 *                channel, 8 x 1 MiB sub-buffers per CPU; 1 and 2 threads
 *   paced        the disk case with 2 threads each paced at 2.5 M events/s
 *                (asleep between batches of 1000): ns/event per thread
 *   disk         a 16 MiB FLUSH stream with an APPEND log on tmpfs / a
 *                normal session, discard channel, 8 x 1 MiB per CPU, the
 *                consumer daemon writing to the same tmpfs; 1 and 2
 *                threads; events lost counted for both
 *
 * The timed loop body is the tracing call plus a store of one byte of the
 * payload, exactly as in bench/bench.c.  Session set-up, start, stop,
 * destroy, posix_trace_create and shutdown are outside the timed region;
 * each repetition starts with an untimed warm-up of N/5 events.
 *
 * Session control goes through the lttng(1) command (sh -c, popen()), so
 * this needs a running lttng-sessiond; run.sh starts one if there is none.
 * Prints a Markdown report on stdout; progress on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include <lttng/ust-version.h>
#include "ptbench_tp.h"
#include "../bench_util.h" /* bench_json */

#define PAYLOAD PTBENCH_PAYLOAD
#define MAX_REPS 31
#define STREAM_SIZE (16u << 20)
#define LT_SUBBUF "1M"
#define LT_NSUBBUF 8
#define TMPFS_MAGIC_ 0x01021994

static uint64_t n_events = 10000000ull; /* per repetition and thread */
static int reps = 5;
static const char *dir;                 /* tmpfs scratch directory */
static int have_bt2;                    /* babeltrace2 can count events */
static const char *sess_prefix;         /* LTTng session names: PREFIX-N */

extern char **environ;

static trace_event_id_t id;
static const char ev_name[] = "ptbench.event";

/* ------------------------------------------------------------- helpers */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAX_REPS];
	memcpy(s, v, n * sizeof *v);
	qsort(s, n, sizeof *s, cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "lttng_cmp: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void progress(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* Run a shell command; die if it fails.  Not system(): that ignores
 * SIGINT in the caller, so Ctrl-C would not stop the benchmark. */
static void run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	char *argv[] = { "sh", "-c", cmd, NULL };
	pid_t pid;
	int st, rc = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
	if (rc != 0)
		die("posix_spawn /bin/sh: %s", strerror(rc));
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("command failed (%s %d): %s", WIFEXITED(st) ? "exit" : "signal",
		    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), cmd);
}

/* First line of a command's output that starts with prefix (after leading
 * blanks), the rest of the line copied to out; 0 if found. */
static int grab(const char *cmd, const char *prefix, char *out, size_t cap)
{
	char line[512];
	int found = -1;
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof line, p)) {
		char *s = line + strspn(line, " \t");
		if (found && strncmp(s, prefix, strlen(prefix)) == 0) {
			snprintf(out, cap, "%s", s + strlen(prefix));
			out[strcspn(out, "\n")] = 0;
			found = 0;
		}
	}
	pclose(p);
	return found;
}

/* --------------------------------------------------------- timed loops */

/* posix_trace_event, as in bench/bench.c */
__attribute__((noinline)) static double loop_pt(uint64_t n)
{
	unsigned char buf[PAYLOAD] = { 0 };
	double t0 = now_ns();

	for (uint64_t i = 0; i < n; i++) {
		buf[0] = (unsigned char)i;
		posix_trace_event(id, buf, PAYLOAD);
	}
	return (now_ns() - t0) / (double)n;
}

/* the LTTng-UST tracepoint, same loop */
__attribute__((noinline)) static double loop_lt(uint64_t n)
{
	uint8_t buf[PAYLOAD] = { 0 };
	double t0 = now_ns();

	for (uint64_t i = 0; i < n; i++) {
		buf[0] = (uint8_t)i;
		lttng_ust_tracepoint(ptbench, ev, buf);
	}
	return (now_ns() - t0) / (double)n;
}

/* the floor: the same loop calling an empty function */
__attribute__((noinline)) static void empty_call(trace_event_id_t e, const void *p, size_t n)
{
	__asm__ volatile("" : : "r"(e), "r"(p), "r"(n) : "memory");
}

__attribute__((noinline)) static double loop_empty(uint64_t n)
{
	unsigned char buf[PAYLOAD] = { 0 };
	double t0 = now_ns();

	for (uint64_t i = 0; i < n; i++) {
		buf[0] = (unsigned char)i;
		empty_call(id, buf, PAYLOAD);
	}
	return (now_ns() - t0) / (double)n;
}

/* The same loops paced: PACE_RATE events/s per thread, each batch of
 * PACE_BATCH events due at t0 + i / rate, the thread asleep until then
 * (a CPU stays free for the consumer).  ns per event of wall time: 1e9 /
 * PACE_RATE when the tracer does not slow the program. */
#define PACE_RATE 2.5e6
#define PACE_BATCH 1000
static void pace(double t0, uint64_t i)
{
	double due = t0 + (double)i * (1e9 / PACE_RATE);
	struct timespec d = { (time_t)(due / 1e9), (long)(due - (double)(time_t)(due / 1e9) * 1e9) };
	if (d.tv_nsec >= 1000000000L)
		d.tv_sec++, d.tv_nsec -= 1000000000L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) == EINTR)
		;
}

__attribute__((noinline)) static double loop_pt_paced(uint64_t n)
{
	unsigned char buf[PAYLOAD] = { 0 };
	double t0 = now_ns();

	for (uint64_t i = 0; i < n; i++) {
		if (i % PACE_BATCH == 0)
			pace(t0, i);
		buf[0] = (unsigned char)i;
		posix_trace_event(id, buf, PAYLOAD);
	}
	return (now_ns() - t0) / (double)n;
}

__attribute__((noinline)) static double loop_lt_paced(uint64_t n)
{
	uint8_t buf[PAYLOAD] = { 0 };
	double t0 = now_ns();

	for (uint64_t i = 0; i < n; i++) {
		if (i % PACE_BATCH == 0)
			pace(t0, i);
		buf[0] = (uint8_t)i;
		lttng_ust_tracepoint(ptbench, ev, buf);
	}
	return (now_ns() - t0) / (double)n;
}

typedef double (*loop_fn)(uint64_t);

/* Two threads released together; aggregate ns/event = wall / all events,
 * per-thread ns/event = mean of the two loops' own figures. */
struct two {
	loop_fn loop;
	pthread_barrier_t bar;
	double ns[2];
};
struct two_arg {
	struct two *t;
	int i;
};

static void *two_main(void *p)
{
	struct two_arg *a = p;
	pthread_barrier_wait(&a->t->bar);
	a->t->ns[a->i] = a->t->loop(n_events);
	return NULL;
}

static double run_two(loop_fn loop, double *per_thread)
{
	struct two t = { .loop = loop };
	struct two_arg a[2] = { { &t, 0 }, { &t, 1 } };
	pthread_t th[2];

	pthread_barrier_init(&t.bar, NULL, 3);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, two_main, &a[i]) != 0)
			die("pthread_create");
	pthread_barrier_wait(&t.bar);
	double t0 = now_ns();
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	double wall = now_ns() - t0;
	pthread_barrier_destroy(&t.bar);
	if (per_thread)
		*per_thread = (t.ns[0] + t.ns[1]) / 2;
	return wall / (2.0 * (double)n_events);
}

/* ------------------------------------------------------------ LTTng side */

static int lt_seq;
static char lt_sess[64];

/* Wait until the sessiond has (un)armed our tracepoints in this process:
 * `lttng start` / `destroy` update registered applications, but do not
 * promise the state change is visible here when they return. */
static void lt_wait(int ev_on, int other_on)
{
	for (int i = 0; i < 5000; i++) {
		int ev = !!lttng_ust_tracepoint_enabled(ptbench, ev);
		int other = !!lttng_ust_tracepoint_enabled(ptbench, other);
		if (ev == ev_on && other == other_on)
			return;
		usleep(1000);
	}
	die("LTTng tracepoints not in the expected state (ptbench:ev %s, ptbench:other %s) "
	    "after 5 s: is this process registered with lttng-sessiond?",
	    ev_on ? "enabled" : "disabled", other_on ? "enabled" : "disabled");
}

/* Create and start a session: snapshot (overwrite channel) or normal
 * (discard channel, consumer writing to outdir), with one event enabled. */
static void lt_session(int snapshot, const char *event, const char *outdir)
{
	if (sess_prefix)
		snprintf(lt_sess, sizeof lt_sess, "%s-%d", sess_prefix, ++lt_seq);
	else
		snprintf(lt_sess, sizeof lt_sess, "ptbench-%ld-%d", (long)getpid(), ++lt_seq);
	run("lttng create %s %s --output='%s' >/dev/null", lt_sess,
	    snapshot ? "--snapshot" : "", outdir);
	run("lttng enable-channel -u -s %s %s --subbuf-size=%s --num-subbuf=%d ch >/dev/null",
	    lt_sess, snapshot ? "--overwrite" : "--discard", LT_SUBBUF, LT_NSUBBUF);
	run("lttng enable-event -u -s %s -c ch %s >/dev/null", lt_sess, event);
	run("lttng start %s >/dev/null", lt_sess);
	lt_wait(strcmp(event, "ptbench:ev") == 0, strcmp(event, "ptbench:other") == 0);
}

/* Stop (waits until the consumer has the data), read the channel's
 * discarded-events statistic, destroy.  Returns the discarded count. */
static long long lt_end(void)
{
	char v[64];
	long long discarded = -1;

	run("lttng stop %s >/dev/null", lt_sess);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "lttng list %s -c ch", lt_sess);
	if (grab(cmd, "Discarded events:", v, sizeof v) == 0)
		discarded = strtoll(v, NULL, 10);
	run("lttng destroy %s >/dev/null", lt_sess);
	lt_wait(0, 0);
	return discarded;
}

/* Events in a CTF trace directory, counted by babeltrace2's counter sink;
 * -1 if babeltrace2 is not there or failed. */
static long long bt2_count(const char *path)
{
	char cmd[1024], v[64];
	if (!have_bt2)
		return -1;
	/* the counter prints running totals, then the final one: keep the last */
	snprintf(cmd, sizeof cmd,
	         "babeltrace2 '%s' -c sink.utils.counter 2>/dev/null | "
	         "awk '/Event messages/ { n = $1 } END { print \"events: \" n }'", path);
	if (grab(cmd, "events:", v, sizeof v) != 0 || !v[strspn(v, " ")])
		return -1;
	return strtoll(v, NULL, 10);
}

/* ------------------------------------------------------- posixtrace side */

static trace_id_t pt_stream(int policy, int fd)
{
	trace_attr_t attr;
	trace_id_t trid;
	int rc;

	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamfullpolicy(&attr, policy);
	posix_trace_attr_setstreamsize(&attr, STREAM_SIZE);
	if (fd >= 0) {
		posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);
		rc = posix_trace_create_withlog(0, &attr, fd, &trid);
	} else {
		rc = posix_trace_create(0, &attr, &trid);
	}
	if (rc != 0)
		die("posix_trace_create%s: %s", fd >= 0 ? "_withlog" : "", strerror(rc));
	posix_trace_attr_destroy(&attr);
	if ((rc = posix_trace_start(trid)) != 0)
		die("posix_trace_start: %s", strerror(rc));
	return trid;
}

static void pt_end(trace_id_t trid)
{
	int rc = posix_trace_shutdown(trid);
	if (rc != 0)
		die("posix_trace_shutdown: %s", strerror(rc));
}

/* Events named ev_name in a trace log. */
static long long pt_log_count(const char *path)
{
	struct posix_trace_event_info ev;
	unsigned char data[256];
	size_t len;
	int unavail, rc;
	trace_id_t trid;
	long long n = 0;
	signed char mine[4096]; /* per event id: -1 unknown, 0 no, 1 yes */

	memset(mine, -1, sizeof mine);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	if ((rc = posix_trace_open(fd, &trid)) != 0)
		die("posix_trace_open %s: %s", path, strerror(rc));
	while ((rc = posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &unavail)) ==
	               0 && !unavail) {
		trace_event_id_t e = ev.posix_event_id;
		if (e < POSIX_TRACE_UNNAMED_USEREVENT)
			continue;
		int yes = e < sizeof mine ? mine[e] : -1;
		if (yes < 0) {
			char name[TRACE_EVENT_NAME_MAX + 1];
			yes = posix_trace_eventid_get_name(trid, e, name) == 0 &&
			      strcmp(name, ev_name) == 0;
			if (e < sizeof mine)
				mine[e] = (signed char)yes;
		}
		n += yes;
	}
	if (rc != 0)
		die("posix_trace_getnext_event on %s: %s", path, strerror(rc));
	posix_trace_close(trid);
	close(fd);
	return n;
}

/* ---------------------------------------------------------------- cases */

struct result {
	double pt[MAX_REPS], lt[MAX_REPS];
	long long pt_emitted, lt_emitted;           /* per repetition */
	long long pt_lost[MAX_REPS], lt_lost[MAX_REPS];      /* emitted - in the trace */
	long long lt_discarded[MAX_REPS];           /* lttng's own statistic */
	int lost;                                   /* the lost columns are meaningful */
};

static struct result r_disabled, r_excluded, r_fr1, r_fr2, r_fr2_each, r_disk1, r_disk2;
static struct result r_paced2;
static double floor_v[MAX_REPS];

static void case_disabled(int r)
{
	loop_pt(n_events / 5);
	r_disabled.pt[r] = loop_pt(n_events);
	lt_wait(0, 0);
	loop_lt(n_events / 5);
	r_disabled.lt[r] = loop_lt(n_events);
	loop_empty(n_events / 5);
	floor_v[r] = loop_empty(n_events);
}

static void case_excluded(int r)
{
	trace_event_set_t set;
	trace_id_t trid = pt_stream(POSIX_TRACE_LOOP, -1);
	posix_trace_eventset_empty(&set);
	posix_trace_eventset_add(id, &set);
	posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET);
	loop_pt(n_events / 5);
	r_excluded.pt[r] = loop_pt(n_events);
	pt_end(trid);

	lt_session(1, "ptbench:other", dir);
	loop_lt(n_events / 5);
	r_excluded.lt[r] = loop_lt(n_events);
	lt_end();
}

static void case_flight(int r)
{
	double each;
	trace_id_t trid = pt_stream(POSIX_TRACE_LOOP, -1);
	loop_pt(n_events / 5);
	r_fr1.pt[r] = loop_pt(n_events);
	r_fr2.pt[r] = run_two(loop_pt, &each);
	r_fr2_each.pt[r] = each;
	pt_end(trid);

	lt_session(1, "ptbench:ev", dir);
	loop_lt(n_events / 5);
	r_fr1.lt[r] = loop_lt(n_events);
	r_fr2.lt[r] = run_two(loop_lt, &each);
	r_fr2_each.lt[r] = each;
	lt_end();
}

static void case_disk(int r, int threads, struct result *res)
{
	char path[512];
	long long emitted = (long long)(n_events / 5 + threads * n_events);

	res->lost = 1;
	res->pt_emitted = res->lt_emitted = emitted;

	snprintf(path, sizeof path, "%s/pt-%d.log", dir, threads);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	trace_id_t trid = pt_stream(POSIX_TRACE_FLUSH, fd);
	loop_pt(n_events / 5);
	res->pt[r] = threads == 1 ? loop_pt(n_events) : run_two(loop_pt, NULL);
	pt_end(trid); /* the last flush: everything recorded is in the log */
	close(fd);
	res->pt_lost[r] = emitted - pt_log_count(path);
	unlink(path);

	snprintf(path, sizeof path, "%s/lt-%d", dir, threads);
	lt_session(0, "ptbench:ev", path);
	loop_lt(n_events / 5);
	res->lt[r] = threads == 1 ? loop_lt(n_events) : run_two(loop_lt, NULL);
	res->lt_discarded[r] = lt_end();
	long long in_trace = bt2_count(path);
	res->lt_lost[r] = in_trace < 0 ? -1 : emitted - in_trace;
	run("rm -rf '%s'", path);
}

/* 2 threads paced at PACE_RATE each (warm-up paced too), to tmpfs:
 * ns/event is per thread, wall time / its events */
static void case_paced(int r, struct result *res)
{
	char path[512];
	long long emitted = (long long)(n_events / 5 + 2 * n_events);
	double each;

	res->lost = 1;
	res->pt_emitted = res->lt_emitted = emitted;

	snprintf(path, sizeof path, "%s/pt-paced.log", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	trace_id_t trid = pt_stream(POSIX_TRACE_FLUSH, fd);
	loop_pt_paced(n_events / 5);
	run_two(loop_pt_paced, &each);
	res->pt[r] = each;
	pt_end(trid);
	close(fd);
	res->pt_lost[r] = emitted - pt_log_count(path);
	unlink(path);

	snprintf(path, sizeof path, "%s/lt-paced", dir);
	lt_session(0, "ptbench:ev", path);
	loop_lt_paced(n_events / 5);
	run_two(loop_lt_paced, &each);
	res->lt[r] = each;
	res->lt_discarded[r] = lt_end();
	long long in_trace = bt2_count(path);
	res->lt_lost[r] = in_trace < 0 ? -1 : emitted - in_trace;
	run("rm -rf '%s'", path);
}

/* ------------------------------------------------------------- machine */

static void cpu_model(char *out, size_t cap)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	snprintf(out, cap, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "model name", 10) == 0) {
			char *s = strchr(line, ':');
			if (s) {
				snprintf(out, cap, "%s", s + 2);
				out[strcspn(out, "\n")] = 0;
			}
			break;
		}
	}
	fclose(f);
}

static void read_line(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	snprintf(out, cap, "?");
	if (!f)
		return;
	if (fgets(out, (int)cap, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

static double loadavg1(void)
{
	char s[128];
	read_line("/proc/loadavg", s, sizeof s);
	return strtod(s, NULL);
}

/* Busy CPU seconds of the whole machine so far (/proc/stat). */
static double machine_busy_s(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
	           &v[4], &v[5], &v[6], &v[7]) != 8)
		v[0] = v[1] = v[2] = v[5] = v[6] = v[7] = 0;
	fclose(f);
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds used so far by the LTTng daemons (lttng-sessiond,
 * lttng-consumerd: every process whose name starts with "lttng-"). */
static double lttng_daemons_s(void)
{
	unsigned long long sum = 0;
	struct dirent *d;
	DIR *p = opendir("/proc");
	if (!p)
		return 0;
	while ((d = readdir(p))) {
		char path[300], buf[1024];
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", d->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		char *name = strchr(buf, '('), *end = strrchr(buf, ')');
		if (!name || !end || strncmp(name + 1, "lttng-", 6) != 0)
			continue;
		/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt
		 * majflt cmajflt utime stime */
		unsigned long long ut, st;
		if (sscanf(end + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		           &st) == 2)
			sum += ut + st;
	}
	closedir(p);
	return (double)sum / (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds of this process and its waited-for children. */
static double self_cpu_s(void)
{
	struct rusage a, b;
	getrusage(RUSAGE_SELF, &a);
	getrusage(RUSAGE_CHILDREN, &b);
	return a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec +
	       (a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec + b.ru_stime.tv_usec) /
	               1e6;
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static double rdtsc_ns(uint64_t n)
{
	uint64_t x = 0;
	double t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		x += __rdtsc();
	__asm__ volatile("" : : "r"(x));
	return (now_ns() - t0) / (double)n;
}
#else
static double rdtsc_ns(uint64_t n)
{
	(void)n;
	return 0;
}
#endif

static double clock_ns(uint64_t n)
{
	struct timespec ts;
	uint64_t x = 0;
	double t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x += (uint64_t)ts.tv_nsec;
	}
	__asm__ volatile("" : : "r"(x));
	return (now_ns() - t0) / (double)n;
}

/* -------------------------------------------------------------- report */

static void range(const double *v, double *lo, double *hi)
{
	*lo = *hi = v[0];
	for (int i = 1; i < reps; i++) {
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

static void lost_cell(char *out, size_t cap, const long long *v, long long emitted)
{
	double d[MAX_REPS];
	int known = 1;
	for (int i = 0; i < reps; i++) {
		d[i] = (double)v[i];
		known &= v[i] >= 0;
	}
	if (!known) {
		snprintf(out, cap, "not counted");
		return;
	}
	double m = median(d, reps);
	snprintf(out, cap, "%.0f (%.2f%%)", m, 100.0 * m / (double)emitted);
}

/* the median of a count over the repetitions, NAN if one was not counted */
static double lost_median(const long long *v)
{
	double d[MAX_REPS];
	for (int i = 0; i < reps; i++) {
		if (v[i] < 0)
			return NAN;
		d[i] = (double)v[i];
	}
	return median(d, reps);
}

/* a row of the table; key names it in build/bench/results.json */
static void row(const char *key, const char *label, const struct result *res)
{
	double p = median(res->pt, reps), l = median(res->lt, reps);
	printf("| %s | %.2f | %.2f | %.3f |", label, p, l, p / l);
	if (res->lost)
		bench_json("lttng_cmp", key, "posixtrace_ns", p, "lttng_ns", l, "emitted",
		           (double)res->pt_emitted, "posixtrace_lost", lost_median(res->pt_lost),
		           "lttng_lost", lost_median(res->lt_lost), "lttng_discarded",
		           lost_median(res->lt_discarded), NULL);
	else
		bench_json("lttng_cmp", key, "posixtrace_ns", p, "lttng_ns", l, NULL);
	if (res->lost) {
		char a[64], b[64], c[64];
		lost_cell(a, sizeof a, res->pt_lost, res->pt_emitted);
		lost_cell(b, sizeof b, res->lt_lost, res->lt_emitted);
		lost_cell(c, sizeof c, res->lt_discarded, res->lt_emitted);
		printf(" %s | %s; lttng reports %s discarded |\n", a, b, c);
	} else {
		printf(" — | — |\n");
	}
}

static void raw(const char *label, const struct result *res)
{
	double lo, hi, lo2, hi2;
	range(res->pt, &lo, &hi);
	range(res->lt, &lo2, &hi2);
	printf("| %s | %.2f–%.2f |", label, lo, hi);
	for (int i = 0; i < reps; i++)
		printf(" %.2f", res->pt[i]);
	printf(" | %.2f–%.2f |", lo2, hi2);
	for (int i = 0; i < reps; i++)
		printf(" %.2f", res->lt[i]);
	printf(" |\n");
}

static void lost_runs(const char *label, const struct result *res)
{
	printf("- %s:", label);
	for (int i = 0; i < reps; i++)
		printf(" %lld", res->pt_lost[i]);
	printf(";");
	for (int i = 0; i < reps; i++)
		printf(" %lld", res->lt_lost[i]);
	printf(" (of %lld)\n", res->pt_emitted);
}

static const char *mark(int ok)
{
	return ok ? "met" : "NOT met";
}

int main(int argc, char **argv)
{
	int opt, rc;
	struct statfs sf;

	while ((opt = getopt(argc, argv, "n:r:d:s:")) != -1) {
		switch (opt) {
		case 'n': n_events = strtoull(optarg, NULL, 10); break;
		case 'r': reps = atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 's': sess_prefix = optarg; break;
		default:
			fprintf(stderr, "usage: %s -d TMPFS_DIR [-n events] [-r reps] [-s session-prefix]\n",
			        argv[0]);
			return 2;
		}
	}
	if (!dir || reps < 1 || reps > MAX_REPS || n_events < 1000)
		die("usage: %s -d TMPFS_DIR [-n events>=1000] [-r reps 1..%d]", argv[0], MAX_REPS);
	if (statfs(dir, &sf) != 0)
		die("%s: %s", dir, strerror(errno));
	have_bt2 = system("babeltrace2 --version >/dev/null 2>&1") == 0; /* before any signal */

	char cpu[256], kern[256], clocksrc[64], ltver[128] = "?", load0[128];
	struct utsname u;
	cpu_model(cpu, sizeof cpu);
	uname(&u);
	snprintf(kern, sizeof kern, "%s %s", u.release, u.machine);
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", clocksrc,
	          sizeof clocksrc);
	grab("lttng --version", "lttng (LTTng Trace Control) ", ltver, sizeof ltver);
	read_line("/proc/loadavg", load0, sizeof load0);
	double la0 = loadavg1();

	if ((rc = posix_trace_eventid_open(ev_name, &id)) != 0)
		die("posix_trace_eventid_open: %s", strerror(rc));
	/* no session yet: also proves this process reaches the session daemon */
	run("lttng list >/dev/null");

	double t_start = now_ns(), busy0 = machine_busy_s(), self0 = self_cpu_s();
	double daemons0 = lttng_daemons_s();
	for (int r = 0; r < reps; r++) {
		progress("lttng_cmp: repetition %d/%d: disabled", r + 1, reps);
		case_disabled(r);
		progress(", excluded");
		case_excluded(r);
		progress(", flight recorder");
		case_flight(r);
		progress(", to tmpfs 1 thread");
		case_disk(r, 1, &r_disk1);
		progress(", to tmpfs 2 threads");
		case_disk(r, 2, &r_disk2);
		progress(", to tmpfs 2 threads paced");
		case_paced(r, &r_paced2);
		progress("\n");
	}
	double secs = (now_ns() - t_start) / 1e9;
	double busy = machine_busy_s() - busy0, self = self_cpu_s() - self0;
	double daemons = lttng_daemons_s() - daemons0;
	double tsc = rdtsc_ns(n_events), clk = clock_ns(n_events);
	char load1[128];
	read_line("/proc/loadavg", load1, sizeof load1);

	/* ------------------------------------------------------ the report */
	printf("## posixtrace vs LTTng-UST, same run\n\n");
	printf("- Machine: %s, %ld CPUs online; kernel %s; clocksource %s\n", cpu,
	       sysconf(_SC_NPROCESSORS_ONLN), kern, clocksrc);
	printf("- Software: gcc %s; lttng-ust headers %d.%d.%d; lttng-tools %s\n", __VERSION__,
	       LTTNG_UST_MAJOR_VERSION, LTTNG_UST_MINOR_VERSION, LTTNG_UST_PATCHLEVEL_VERSION,
	       ltver);
	printf("- Load average (/proc/loadavg): before `%s`%s; after `%s` (this includes the "
	       "benchmark's own threads)\n", load0,
	       la0 > 0.5 ? " -- NOT idle (> 0.5): numbers are suspect" : "", load1);
	printf("- CPU time during the measurements (%.0f s of wall time, %ld CPUs): %.1f s busy "
	       "on the whole machine: this process and its children (lttng, babeltrace2) %.1f s, "
	       "the LTTng daemons %.1f s, anything else %.1f s\n",
	       secs, sysconf(_SC_NPROCESSORS_ONLN), busy, self, daemons,
	       busy - self - daemons);
	printf("- Scratch directory %s: %s\n", dir,
	       (unsigned long)sf.f_type == TMPFS_MAGIC_ ? "tmpfs" : "NOT tmpfs");
	printf("- Method: %d alternated repetitions (posixtrace, LTTng, posixtrace, ...) of "
	       "each case, medians; %llu events per repetition and thread, after an untimed "
	       "warm-up of %llu; %d-byte payload; %.0f s in all\n\n",
	       reps, (unsigned long long)n_events, (unsigned long long)(n_events / 5), PAYLOAD,
	       secs);
	printf("- posixtrace: a %u MiB stream, LOOP, or FLUSH with an APPEND log file on the "
	       "scratch tmpfs; the library linked statically\n", STREAM_SIZE >> 20);
	printf("- LTTng-UST: tracepoint ptbench:ev, one field lttng_ust_field_array(uint8_t, "
	       "payload, buf, %d), provider linked statically; per-user buffers, %d x %s "
	       "sub-buffers per CPU (%ld CPUs configured); flight recorder = `lttng create "
	       "--snapshot` + an `--overwrite` channel, to tmpfs = a normal session with "
	       "`--output` on the scratch tmpfs and a `--discard` channel\n\n",
	       PAYLOAD, LT_NSUBBUF, LT_SUBBUF, sysconf(_SC_NPROCESSORS_CONF));
	printf("| case | posixtrace ns/event | LTTng-UST ns/event | posixtrace / LTTng | "
	       "events lost, posixtrace | events lost, LTTng |\n");
	printf("|---|---:|---:|---:|---|---|\n");
	row("disabled", "disabled: no stream / no session", &r_disabled);
	row("excluded", "running, this event excluded: filtered out / not enabled", &r_excluded);
	row("flight 1 thread", "flight recorder, 1 thread: LOOP stream / snapshot session", &r_fr1);
	row("flight 2 threads aggregate", "flight recorder, 2 threads: aggregate (wall / all events)", &r_fr2);
	row("flight 2 threads each", "flight recorder, 2 threads: each thread", &r_fr2_each);
	row("tmpfs 1 thread", "to tmpfs, 1 thread: FLUSH stream + log / discard channel + consumerd", &r_disk1);
	row("tmpfs 2 threads aggregate", "to tmpfs, 2 threads: aggregate (wall / all events)", &r_disk2);
	{
		char label[160];
		snprintf(label, sizeof label, "to tmpfs, 2 threads each paced at %.1f M events/s "
		         "(%.0f ns/event when not slowed): each thread, wall / its events",
		         PACE_RATE / 1e6, 1e9 / PACE_RATE);
		row("tmpfs 2 threads paced each", label, &r_paced2);
	}
	printf("\nBaseline, the same loop calling an empty function: %.2f ns. "
	       "rdtsc alone: %.2f ns; clock_gettime(CLOCK_MONOTONIC): %.2f ns.\n",
	       median(floor_v, reps), tsc, clk);
	bench_json("lttng_cmp", "baseline", "empty_function_ns", median(floor_v, reps), "rdtsc_ns",
	           tsc, "clock_gettime_ns", clk, NULL);
	printf("Events lost: median over the repetitions of (events emitted - events of this type "
	       "found in the trace), of %lld emitted (1 thread) and %lld (2 threads) per "
	       "repetition; posixtrace counted with posix_trace_open + getnext_event, LTTng with "
	       "`babeltrace2 -c sink.utils.counter`%s.\n\n",
	       r_disk1.pt_emitted, r_disk2.pt_emitted, have_bt2 ? "" : " (babeltrace2 missing: not counted)");

	double one = median(r_fr1.pt, reps), two = median(r_fr2.pt, reps);
	double lone = median(r_fr1.lt, reps), ltwo = median(r_fr2.lt, reps);
	double none = median(r_disabled.pt, reps), filt = median(r_excluded.pt, reps);
	printf("Targets (issue), posixtrace:\n\n");
	printf("- 1 thread <= 15 ns/event: %.2f, %s\n", one, mark(one <= 15));
	printf("- 1 thread <= 0.12 x LTTng-UST in the same run: %.3f x, %s\n", one / lone,
	       mark(one / lone <= 0.12));
	printf("- 2 threads >= 1.8 x the 1-thread rate: %.2f x, %s (LTTng-UST: %.2f x)\n",
	       one / two, mark(one / two >= 1.8), lone / ltwo);
	printf("- no stream <= 1 ns: %.2f, %s (empty-call loop: %.2f)\n", none, mark(none <= 1),
	       median(floor_v, reps));
	printf("- filtered out <= 3 ns: %.2f, %s\n\n", filt, mark(filt <= 3));

	printf("Every repetition, ns/event (in run order):\n\n");
	printf("| case | posixtrace range | posixtrace runs | LTTng range | LTTng runs |\n");
	printf("|---|---|---|---|---|\n");
	raw("disabled", &r_disabled);
	raw("excluded", &r_excluded);
	raw("flight recorder, 1 thread", &r_fr1);
	raw("flight recorder, 2 threads aggregate", &r_fr2);
	raw("to tmpfs, 1 thread", &r_disk1);
	raw("to tmpfs, 2 threads aggregate", &r_disk2);
	raw("to tmpfs, 2 threads paced, each", &r_paced2);
	printf("\nEvents lost, every repetition (posixtrace; LTTng, counted in the trace):\n\n");
	lost_runs("to tmpfs, 1 thread", &r_disk1);
	lost_runs("to tmpfs, 2 threads", &r_disk2);
	lost_runs("to tmpfs, 2 threads paced", &r_paced2);
	return 0;
}
