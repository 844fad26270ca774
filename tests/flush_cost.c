/*
 * flush_cost.c -- the log writer's budget in instructions per event,
 * counted by valgrind (callgrind), which counts the same on every x86-64
 * CPU and whatever else the machine runs (issue 48: the log writer must
 * cost less per event than the recorder).
 *
 * This program runs once per case a traced child of its own, natively,
 * and a controller for it under callgrind (itself again), collecting only
 * inside the flusher's flush (flush_once in src/flush/flusher.c: reading
 * the stream, encoding the log blocks, their checksums, the summary's
 * counts, the write calls' user side).  The controller makes an
 * UNTIL_FULL stream with an APPEND log (in $TMPDIR) for the child and
 * starts it; the child records N events from one thread (told to by a
 * pipe, and saying when done); the controller stops the stream, flushes
 * it, waits for the flush and shuts it down.  Cases:
 *   words   32-byte payloads, one type (whole words: the burst copies the
 *           chunk a window at a time, src/flush/flushrun.c)
 *   bytes   20-byte payloads, one type (the burst, record by record)
 *   mixed   32-byte payloads, two types taking turns (the burst goes on
 *           across the types, the summary counts record by record)
 * and checks each case's instructions per event against the budget below
 * (PT_KEEP=1 keeps callgrind's files, /tmp/pt-fcost-*, for
 * callgrind_annotate).
 *
 * The budget is for the plain build with gcc -O2 (the Makefile's): other
 * compilers or flags lay the code out differently, and sanitizers add
 * their own work, so those builds skip.  When a change lowers the counts,
 * lower the budget with it.  Why the events are recorded natively: a
 * burst of the flusher's fast path ends at the end of a clock segment,
 * and the flusher adds a point to the clock's calibration every 40 ms of
 * wall time (src/shm/clock.c, KEEP_NS), so the count grows with the wall
 * time the events span.  Recorded under valgrind they spanned seconds,
 * more under load (the count moved by +-0.03 an event); recorded
 * natively they span a few milliseconds, one or two segments whatever
 * the load, and only the flush runs under valgrind, whose length does not
 * matter once the events are recorded.  The budget is what was measured
 * plus 1%.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "log_util.h"

#define N 200000u

struct budget {
	const char *name;
	uint32_t payload;
	int types;
	double ir;
};
static const struct budget budget[] = {
	/* 2026-11-29, log format 9: the stream's sealed chunks go into
	 * CHUNK blocks, written by the kernel from the stream's memory and
	 * walked once by the flusher (its checks and the summary's runs)
	 * and checksummed: 47.93-49.46 in 16 runs.  A chunk whose ticks
	 * cross a point of the clock's model goes the usual way, 1.4 more
	 * an event for each (2.2 for "bytes"): the last of each run always
	 * (it ends where the flush begins), and one more when the clock
	 * took a point while the events were recorded (every 40 ms of wall
	 * time: in some runs, not others; two on a machine so loaded that
	 * recording took over 40 ms); the budget has room for two.
	 * Before: 92.55-92.58 (under valgrind, before log format 8's
	 * checkpoints: 92.24-92.29; main before the burst: 207.75) */
	{ "words", 32, 1, 51.5 },
	{ "bytes", 20, 1, 50.5 }, /* 45.57-47.53 (before: 99.72-99.74; 211.03) */
	/* 207.57-208.28 with CHUNK blocks: a chunk of more than 32 runs of
	 * one type is counted from a converted copy, record by record (the
	 * summary's two runs in two slots), 30 more an event than the
	 * burst, on the flusher's own cache lines where the burst read the
	 * producer's (docs/performance.md, "The per-chunk writer") */
	{ "mixed", 32, 2, 210.4 }, /* before CHUNK blocks: 177.42-177.44, 2026-11-29, the
	                            * summary's short records with their run
	                            * slot in a register (179.38-179.39 with
	                            * the summary's two runs in two slots;
	                            * before: 250.31-250.34;
	                            * 245.02-245.04 before log format 8;
	                            * 316.67) */
};
#define NCASES (sizeof budget / sizeof budget[0])

static const struct budget *find(const char *mode)
{
	for (size_t i = 0; i < NCASES; i++)
		if (!strcmp(budget[i].name, mode))
			return &budget[i];
	return NULL;
}

/* The traced process (native): registers the two types, says so (one
 * byte on out), waits for the controller's go (one byte on in), records
 * N events from one thread, says so, and waits for the end of in (the
 * controller's shutdown done) before it exits. */
static int recorder(const char *mode, int in, int out)
{
	const struct budget *b = find(mode);
	trace_event_id_t ev[2];
	unsigned char buf[64] = { 0 };
	char c = 'r';

	alarm(300);
	if (!b || posix_trace_eventid_open("cost.a", &ev[0]) != 0 ||
	    posix_trace_eventid_open("cost.b", &ev[1]) != 0)
		return 3;
	t_write_full(out, &c, 1);
	if (t_read_full(in, &c, 1) != 0)
		return 4;
	for (uint32_t i = 0; i < N; i++) {
		buf[0] = (unsigned char)i;
		posix_trace_event(ev[i % (uint32_t)b->types], buf, b->payload);
	}
	t_write_full(out, &c, 1);
	while (read(in, &c, 1) > 0)
		;
	return 0;
}

/* The controller (under callgrind): an UNTIL_FULL stream with an APPEND
 * log for the recorder `pid`, started; the recorder's N events; stopped,
 * flushed, waited for, shut down.  The log must hold the N events. */
static int controller(const char *mode, pid_t pid, int out, int in)
{
	const struct budget *b = find(mode);
	trace_attr_t attr;
	trace_id_t trid;
	char path[256], c = 'g';

	alarm(300);
	if (!b || t_read_full(in, &c, 1) != 0)
		return 3;
	int fd = lu_tmpfile(path, sizeof path, "cost", O_RDWR);
	if (posix_trace_attr_init(&attr) != 0 ||
	    posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL) != 0 ||
	    posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND) != 0 ||
	    posix_trace_attr_setmaxdatasize(&attr, 64) != 0 ||
	    posix_trace_attr_setstreamsize(&attr, (size_t)N * 64 + (1u << 20)) != 0 ||
	    posix_trace_create_withlog(pid, &attr, fd, &trid) != 0 || posix_trace_start(trid) != 0) {
		lu_rmfile(path);
		return 4;
	}
	t_write_full(out, &c, 1);
	int rc = t_read_full(in, &c, 1) != 0 || posix_trace_stop(trid) != 0 ||
	         lu_flush_wait(trid, NULL) != 0 || posix_trace_shutdown(trid) != 0;
	close(fd);
	close(out); /* (the recorder may end) */
	long long size = lu_fsize(path);
	lu_rmfile(path);
	return rc ? 5 : size > (long long)N * (8 + b->payload) ? 0 : 6;
}

/* callgrind's instructions inside flush_once in one run of the
 * controller in `mode`, per event: 0, or -1 (why printed) */
static int count(const char *self, const char *mode, double *ir)
{
	char out[64];
	int go[2], ack[2]; /* controller -> recorder, recorder -> controller */
	snprintf(out, sizeof out, "/tmp/pt-fcost-%d-%s.out", (int)getpid(), mode);
	REQUIRE(pipe(go) == 0 && pipe(ack) == 0);
	fflush(NULL);
	pid_t r = fork();
	REQUIRE(r >= 0);
	if (r == 0) {
		close(go[1]);
		close(ack[0]);
		_exit(recorder(mode, go[0], ack[1]));
	}
	char rs[32], os[16], is[16];
	snprintf(rs, sizeof rs, "%d", (int)r);
	snprintf(os, sizeof os, "%d", go[1]);
	snprintf(is, sizeof is, "%d", ack[0]);
	/* the ends the recorder keeps are not the controller's */
	REQUIRE(fcntl(go[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(ack[1], F_SETFD, FD_CLOEXEC) == 0);
	const char *args[] = { "--toggle-collect=flush_once*", self, "controller", mode, rs, os, is,
		               NULL };
	pid_t p = t_callgrind_spawn(out, args);
	close(go[0]);
	close(go[1]);
	close(ack[0]);
	close(ack[1]);
	int st = t_wait_for(p, 200 * 1000);
	int rst = t_wait_for(r, 10 * 1000); /* (it ends once the controller has) */
	if (st != 0 || rst != 0) {
		fprintf(stderr, "%s: valgrind ended with %d, the recorder with %d\n", mode, st, rst);
		unlink(out);
		return -1;
	}
	static const char *const names[] = { "Ir" };
	double total;
	if (t_callgrind_totals(mode, out, 1, names, &total) != 0)
		return -1;
	*ir = total / N;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "controller"))
		return controller(argv[2], (pid_t)atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	T_BEGIN(600);
	char self[4096];
	t_cost_setup(self, sizeof self);

	printf("%-6s %8s %8s\n", "case", "Ir/ev", "budget");
	for (size_t i = 0; i < NCASES; i++) {
		double ir;
		REQUIRE(count(self, budget[i].name, &ir) == 0);
		printf("%-6s %8.2f %8.1f\n", budget[i].name, ir, budget[i].ir);
		CHECK(ir <= budget[i].ir);
		CHECK(ir > 1); /* counted at all */
	}
	T_END();
}
