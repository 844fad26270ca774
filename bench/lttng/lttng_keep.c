/*
 * lttng_keep.c -- LTTng-UST's side of bench/keep: producer threads at
 * full speed into a discard channel that lttng-consumerd writes to tmpfs,
 * and what the channel kept.
 *
 *   LTTNG_UST_ALLOW_BLOCKING=1 lttng_keep -d SCRATCH -s PREFIX -n EVENTS THREADS...
 *       (run through bench/lttng/run.sh, which gives it a session daemon,
 *       -d and -s).  For each THREADS: a session PREFIX-N with one
 *       channel (discard mode, 8 x 1 MiB sub-buffers per CPU, per-UID
 *       buffers: lttng's defaults but for the sizes, those of
 *       bench/lttng/lttng_cmp), ptbench:ev enabled, its trace in
 *       SCRATCH; THREADS threads released together each record
 *       EVENTS / THREADS ptbench:ev events (32-byte payload) at full
 *       speed; then `lttng stop` (it returns when the consumer has
 *       written everything) and the channel's discarded-events count
 *       (or, when lttng says a count no run can have, as it once said
 *       INT64_MAX, the events babeltrace2 finds in the trace, if it is
 *       there; else -1).  THREADS followed by "b" ("2b"): the same with a
 *       blocking channel (--blocking-timeout=inf: LTTng-UST's lossless
 *       mode, the producer waits for the consumer; the environment must
 *       allow it, LTTNG_UST_ALLOW_BLOCKING=1, read when lttng-ust starts).
 *
 * Output, one line per THREADS, for bench/keep to parse:
 *   K THREADS EMITTED DISCARDED WALL_S PRODUCER_CPU_S DAEMONS_CPU_S TRACE_BYTES
 * (B instead of K: a blocking channel)
 * WALL_S: from the threads' release to the last one's end; PRODUCER_CPU_S:
 * the threads' own CPU time (CLOCK_THREAD_CPUTIME_ID), summed;
 * DAEMONS_CPU_S: CPU time of every process named lttng-* (sessiond,
 * consumerd) from before the start to after the stop; TRACE_BYTES: the
 * trace directory's size.  A failure: "E REASON" and exit status 1.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ptbench_tp.h"

#define MAXT 64

static const char *dir, *prefix;
static long long per_thread;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("E ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	exit(1);
}

/* a shell command, its output thrown away; fails the run if it fails */
static void run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail("command failed: %s", cmd);
}

/* the number after "Discarded events:" in the channel's listing, -1 if none */
static long long discarded(const char *sess)
{
	char cmd[256], line[512];
	long long v = -1;
	snprintf(cmd, sizeof cmd, "lttng list %s -c ch", sess);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof line, p)) {
		char *s = strstr(line, "Discarded events:");
		if (s && v < 0)
			v = strtoll(s + strlen("Discarded events:"), NULL, 10);
	}
	pclose(p);
	return v;
}

/* Event messages in a trace, by babeltrace2's counter; -1 without it */
static long long bt2_events(const char *path)
{
	char cmd[1200], line[512];
	long long v = -1;
	snprintf(cmd, sizeof cmd, "babeltrace2 '%s' -c sink.utils.counter 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof line, p)) /* running totals, then the last */
		if (strstr(line, "Event messages"))
			v = strtoll(line, NULL, 10);
	if (pclose(p) != 0)
		v = -1;
	return v;
}

/* CPU seconds so far of every process whose name starts with "lttng-" */
static double daemons_s(void)
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
		unsigned long long ut, st;
		if (name && end && !strncmp(name + 1, "lttng-", 6) &&
		    sscanf(end + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		           &st) == 2)
			sum += ut + st;
	}
	closedir(p);
	return (double)sum / (double)sysconf(_SC_CLK_TCK);
}

/* bytes of the files under path */
static long long du(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return (long long)st.st_size;
	long long sum = 0;
	DIR *d = opendir(path);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		char sub[1024];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		sum += du(sub);
	}
	closedir(d);
	return sum;
}

static pthread_barrier_t go;
static double t_end[MAXT], cpu[MAXT];

static void *producer(void *arg)
{
	int k = (int)(intptr_t)arg;
	uint8_t buf[PTBENCH_PAYLOAD] = { 0 };
	struct timespec c;

	pthread_barrier_wait(&go);
	for (long long i = 0; i < per_thread; i++) {
		buf[0] = (uint8_t)i;
		lttng_ust_tracepoint(ptbench, ev, buf);
	}
	t_end[k] = now_s();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
	cpu[k] = (double)c.tv_sec + (double)c.tv_nsec / 1e9;
	return NULL;
}

static void one(int seq, int nt, long long events, int blocking)
{
	char sess[128], out[1024];
	pthread_t th[MAXT];

	snprintf(sess, sizeof sess, "%s-%d", prefix, seq);
	snprintf(out, sizeof out, "%s/keep-%d", dir, seq);
	per_thread = events / nt;
	run("lttng create %s --output='%s' >/dev/null", sess, out);
	run("lttng enable-channel -u -s %s --discard%s --subbuf-size=1M --num-subbuf=8 ch "
	    ">/dev/null", sess, blocking ? " --blocking-timeout=inf" : "");
	run("lttng enable-event -u -s %s -c ch ptbench:ev >/dev/null", sess);
	double d0 = daemons_s();
	run("lttng start %s >/dev/null", sess);
	for (int i = 0; i < 5000 && !lttng_ust_tracepoint_enabled(ptbench, ev); i++)
		usleep(1000);
	if (!lttng_ust_tracepoint_enabled(ptbench, ev))
		fail("ptbench:ev not enabled 5 s after lttng start");
	pthread_barrier_init(&go, NULL, (unsigned)nt + 1);
	for (int k = 0; k < nt; k++)
		if (pthread_create(&th[k], NULL, producer, (void *)(intptr_t)k) != 0)
			fail("pthread_create");
	pthread_barrier_wait(&go);
	double t0 = now_s(), last = t0, pcpu = 0;
	for (int k = 0; k < nt; k++) {
		pthread_join(th[k], NULL);
		if (t_end[k] > last)
			last = t_end[k];
		pcpu += cpu[k];
	}
	pthread_barrier_destroy(&go);
	run("lttng stop %s >/dev/null", sess);
	double d1 = daemons_s();
	long long disc = discarded(sess);
	run("lttng destroy %s >/dev/null", sess);
	long long bytes = du(out);
	if (disc < 0 || disc > per_thread * nt) { /* (seen once: INT64_MAX) */
		long long in = bt2_events(out);
		disc = in < 0 ? -1 : per_thread * nt - in;
	}
	run("rm -rf '%s'", out);
	printf("%c %d %lld %lld %.6f %.6f %.6f %lld\n", blocking ? 'B' : 'K', nt, per_thread * nt,
	       disc, last - t0, pcpu, d1 - d0, bytes);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	long long events = 20000000;
	int opt, seq = 0;

	while ((opt = getopt(argc, argv, "d:s:n:")) != -1) {
		if (opt == 'd')
			dir = optarg;
		else if (opt == 's')
			prefix = optarg;
		else if (opt == 'n')
			events = atoll(optarg);
		else
			fail("usage: lttng_keep -d SCRATCH -s PREFIX -n EVENTS THREADS...");
	}
	if (!dir || !prefix || events <= 0 || optind >= argc)
		fail("usage: lttng_keep -d SCRATCH -s PREFIX -n EVENTS THREADS...");
	for (int i = optind; i < argc; i++) {
		char *end;
		int nt = (int)strtol(argv[i], &end, 10), blocking = *end == 'b';
		if (nt < 1 || nt > MAXT || (*end && strcmp(end, "b")))
			fail("threads: 1 to %d, a b after the number for a blocking channel", MAXT);
		if (blocking && !getenv("LTTNG_UST_ALLOW_BLOCKING"))
			fail("a blocking channel needs LTTNG_UST_ALLOW_BLOCKING=1 in the environment");
		one(++seq, nt, events, blocking);
	}
	return 0;
}
