/*
 * lttng_fleet.c -- LTTng-UST's side of bench/fleet: the same fleet of
 * producers streaming through LTTng's own session and consumer daemons to
 * an lttng-relayd that bench/fleet started on loopback.
 *
 *   lttng_fleet produce N BURST
 *       one producer: N ptbench:ev tracepoints (32-byte payload), BURST at
 *       a time with 1 ms between bursts (bench/fleet's producers' pattern)
 *   lttng_fleet -d SCRATCH -s PREFIX -c CTRL -D DATA -p PRODUCERS -n N -b BURST
 *               [-S SUBBUF_SIZE -N NUM_SUBBUF] [-t TAG]
 *       the driver (run through bench/lttng/run.sh, which gives it a
 *       session daemon, -d and -s): creates session PREFIX-fleet streaming
 *       to net://127.0.0.1:CTRL:DATA (PREFIX-TAG-fleet with -t), one
 *       per-PID-buffer channel (default sizes, or -S/-N; discard mode)
 *       so that each producer's losses are its own,
 *       enables ptbench:ev, starts, runs PRODUCERS producers at once,
 *       stops (lttng waits until the relay has the data), destroys, then
 *       reads each producer's trace in the relay's output directory (-o
 *       RELAY_OUT, required) with babeltrace2: the events it holds and the
 *       events LTTng-UST discarded ("Tracer discarded N events" warnings,
 *       "1 event" in the singular), its standard error kept in SCRATCH.
 *
 * Output, one line each, for bench/fleet to parse:
 *   P INDEX PID DELIVERED DISCARDED     one line per producer
 *   T RUN_SECONDS STOP_SECONDS          first start to last end; stop+destroy
 *   E REASON                            failed (nothing else is trusted)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ptbench_tp.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int produce(long n, long burst)
{
	uint8_t buf[PTBENCH_PAYLOAD] = { 0 };

	/* lttng-ust's constructor waited for the session daemon (at most
	 * LTTNG_UST_REGISTER_TIMEOUT, 3 s): the session is started before
	 * any producer, so the tracepoint is enabled now or never */
	if (!lttng_ust_tracepoint_enabled(ptbench, ev))
		return 3;
	for (long i = 0; i < n; i++) {
		memcpy(buf, &i, sizeof i);
		lttng_ust_tracepoint(ptbench, ev, buf);
		if ((i + 1) % burst == 0)
			usleep(1000);
	}
	return 0;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int st = system(cmd);
	if (st != 0)
		printf("E command failed (status %d): %s\n", st, cmd);
	return st;
}

/* Events and discarded events in one trace directory, by babeltrace2: the
 * events from its standard output, the discarded-events warnings from its
 * standard error (kept apart: interleaved, a warning can land in the
 * middle of an event's line).  err: a scratch file. */
static int bt2_read(const char *dir, const char *err, long long *events, long long *discarded)
{
	char cmd[8192], line[1024];
	snprintf(cmd, sizeof cmd,
	         "n=$(babeltrace2 '%s' 2>'%s' | grep -c ' ptbench:ev: '); "
	         "d=$(awk '/discarded [0-9]+ events?( |$)/ { for (i = 1; i < NF; i++) "
	         "if ($i == \"discarded\") d += $(i + 1) } END { print d + 0 }' '%s'); "
	         "echo \"R $n $d\"", dir, err, err);
	FILE *p = popen(cmd, "r");
	int ok = 0;
	if (!p)
		return -1;
	while (fgets(line, sizeof line, p))
		if (sscanf(line, "R %lld %lld", events, discarded) == 2)
			ok = 1;
	return pclose(p) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "produce"))
		return produce(atol(argv[2]), atol(argv[3]) > 0 ? atol(argv[3]) : 1);
	const char *scratch = NULL, *prefix = "ptfleet", *relay_out = NULL, *subbuf = NULL,
	           *nsubbuf = NULL, *tag = NULL;
	unsigned ctrl = 0, data = 0;
	int np = 32, opt;
	long ne = 20000, burst = 100;
	while ((opt = getopt(argc, argv, "d:s:c:D:p:n:b:o:S:N:t:")) != -1) {
		switch (opt) {
		case 'd': scratch = optarg; break;
		case 's': prefix = optarg; break;
		case 'c': ctrl = (unsigned)atoi(optarg); break;
		case 'D': data = (unsigned)atoi(optarg); break;
		case 'p': np = atoi(optarg); break;
		case 'n': ne = atol(optarg); break;
		case 'b': burst = atol(optarg); break;
		case 'o': relay_out = optarg; break;
		case 'S': subbuf = optarg; break;
		case 'N': nsubbuf = optarg; break;
		case 't': tag = optarg; break;
		default: printf("E bad option\n"); return 2;
		}
	}
	if (!ctrl || !data || !relay_out || np < 1 || np > 4096 || ne < 1 || burst < 1) {
		printf("E usage: lttng_fleet -c CTRL -D DATA -o RELAY_OUT [-p N] [-n N] [-b N]\n");
		return 2;
	}
	char self[4096], sess[128], sizes[128] = "";
	if (subbuf && nsubbuf && strspn(subbuf, "0123456789kMG") == strlen(subbuf) &&
	    strspn(nsubbuf, "0123456789") == strlen(nsubbuf))
		snprintf(sizes, sizeof sizes, "--subbuf-size=%s --num-subbuf=%s", subbuf, nsubbuf);
	if (tag && strspn(tag, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(tag))
		tag = NULL;
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	if (k <= 0)
		return 1;
	self[k] = 0;
	snprintf(sess, sizeof sess, "%s-%s%sfleet", prefix, tag ? tag : "", tag ? "-" : "");
	if (sh("lttng create %s --set-url=net://127.0.0.1:%u:%u >/dev/null", sess, ctrl, data) ||
	    sh("lttng enable-channel -u -s %s --buffers-pid --discard %s ch >/dev/null", sess, sizes) ||
	    sh("lttng enable-event -u -s %s -c ch ptbench:ev >/dev/null", sess) ||
	    sh("lttng start %s >/dev/null", sess))
		return 1;
	pid_t *pids = calloc((size_t)np, sizeof *pids);
	char ns[32], bs[32];
	snprintf(ns, sizeof ns, "%ld", ne);
	snprintf(bs, sizeof bs, "%ld", burst);
	fflush(NULL);
	double t0 = now_s();
	for (int i = 0; i < np; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			/* wait for the session daemon however long a loaded
			 * machine makes it take (the default gives up after 3 s
			 * and the producer would record nothing) */
			setenv("LTTNG_UST_REGISTER_TIMEOUT", "-1", 1);
			execl(self, self, "produce", ns, bs, (char *)NULL);
			_exit(126);
		}
	}
	int failed = 0;
	for (int i = 0; i < np; i++) {
		int st;
		while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("E producer %d (pid %ld) ended with status %d%s\n", i, (long)pids[i], st,
			       WIFEXITED(st) && WEXITSTATUS(st) == 3 ? ": tracepoint not enabled" : "");
			failed++;
		}
	}
	double t1 = now_s();
	int bad = sh("lttng stop %s >/dev/null", sess) | sh("lttng destroy %s >/dev/null", sess);
	double t2 = now_s();
	if (failed || bad)
		return 1;
	/* each producer's trace: RELAY_OUT/HOST/SESS-DATE/ust/pid/NAME-PID-DATE */
	for (int i = 0; i < np; i++) {
		char cmd[2048], dir[2048] = "";
		snprintf(cmd, sizeof cmd, "find '%s' -mindepth 5 -maxdepth 5 -type d -path '*/%s-*/ust/pid/*-%ld-*'",
		         relay_out, sess, (long)pids[i]);
		FILE *p = popen(cmd, "r");
		if (!p || !fgets(dir, sizeof dir, p))
			dir[0] = 0;
		if (p)
			pclose(p);
		dir[strcspn(dir, "\n")] = 0;
		long long ev = 0, disc = 0;
		if (!dir[0]) {
			printf("E no trace of producer %d (pid %ld) under %s\n", i, (long)pids[i], relay_out);
			return 1;
		}
		char err[1024];
		snprintf(err, sizeof err, "%s/bt2.err", scratch ? scratch : "/tmp");
		if (bt2_read(dir, err, &ev, &disc)) {
			printf("E babeltrace2 could not read %s\n", dir);
			return 1;
		}
		printf("P %d %ld %lld %lld\n", i, (long)pids[i], ev, disc);
	}
	printf("T %.3f %.3f\n", t1 - t0, t2 - t1);
	return 0;
}
