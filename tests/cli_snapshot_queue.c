/*
 * cli_snapshot_queue.c -- a storm of triggers while the recorder is behind
 * (`record --flight ... --every T --max N`, cli/cmd/flight.c): each
 * window the limits allow is taken, its copy queued while earlier ones
 * are written, none given up.
 *
 * The program is this test again ("app DIR"): two threads record "load"
 * events at 5 M events/s in all, each with its own sequence number (the
 * witness); the main thread raises posixtrace_trigger("storm") every
 * 100 us for 400 ms, then waits a little and ends.  The recorder takes a
 * 100 ms window (500 000 events, several ms to write) at most every 2 ms,
 * 8 at most: the windows come faster than they are written, so most wait
 * in the queue.  Then:
 *   - exactly 8 snapshots, none "not taken", none lacking its window;
 *   - the limits hold: each snapshot's trigger (its last trigger event:
 *     the window ends there) at least 2 ms after the one before;
 *   - each holds its whole window: per thread contiguous sequence
 *     numbers, no OVERFLOW, nothing stamped outside [T - 100 ms, T], and
 *     load events from its first half (its start was still in the
 *     stream when it was copied: a 64 MiB stream holds half a second of
 *     this load, and a copy waits for no other).
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"
#include "snap_util.h"

#define NSNAP 8
#define EVERY_NS 2000000ull
#define BEFORE_NS 100000000ull

static int app(void)
{
	pthread_t th[2];
	alarm(60);
	posix_trace_eventid_open("load", &snap_ev_load);
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, snap_load_worker, (void *)i);
	usleep(150000); /* a window's worth of load first */
	uint64_t t0 = snap_mono_ns();
	while (snap_mono_ns() - t0 < 400000000ull) {
		posixtrace_trigger("storm");
		usleep(100);
	}
	usleep(20000);
	atomic_store(&snap_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* The trigger's time: its last trigger event's. */
static void snap_event(void *ctx, const char *nm, uint64_t t, const unsigned char *buf,
                       size_t len)
{
	uint64_t *trig = ctx;

	(void)buf, (void)len;
	if (!strcmp(nm, "posixtrace_trigger"))
		*trig = t > *trig ? t : *trig;
}

/* Snapshot path checked; its trigger's time (its last trigger event). */
static uint64_t check_snapshot(const char *path)
{
	uint64_t trig = 0;
	struct snap_seen s;
	snap_read(path, snap_event, &trig, &s);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.gaps, 0);
	CHECK(s.loads > 0);
	CHECK(trig != 0);
	CHECK_EQ(s.tmax, trig); /* (the window ends at its trigger: --after 0) */
	CHECK(s.tmin >= trig - BEFORE_NS);
	CHECK(s.load_min <= trig - BEFORE_NS / 2);
	if (s.bad || s.gaps || !trig || s.load_min > trig - BEFORE_NS / 2)
		fprintf(stderr, "%s: %ld loads, %ld bad, %ld gaps, window %.3f ms of load\n", path,
		        s.loads, s.bad, s.gaps,
		        trig && s.load_min <= trig ? (double)(trig - s.load_min) / 1e6 : 0.0);
	return trig;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "app"))
		return app();
	T_BEGIN(120);
	cli_setup();
	const char *dir = cli_path("storm");
	char every[32], before[32], max[16];
	snprintf(every, sizeof every, "%llums", EVERY_NS / 1000000);
	snprintf(before, sizeof before, "%llums", BEFORE_NS / 1000000);
	snprintf(max, sizeof max, "%d", NSNAP);
	char *err = NULL;
	int rc = cli_run(CLI("record", "--flight", "64M", "--snapshot-on", "trigger:storm",
	                     "--before", before, "--every", every, "--max", max, "-o", (char *)dir,
	                     "--", argv[0], "app", (char *)dir), NULL, &err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(cli_count_logs(dir), NSNAP);
	CHECK(cli_contains(err, "8 snapshots written"));
	CHECK(!cli_contains(err, "not taken"));
	CHECK(!cli_contains(err, "lacks") && !cli_contains(err, "holds no event"));
	CHECK(cli_contains(err, "over --max or --every"));
	if (rc || !cli_contains(err, "8 snapshots written") || cli_contains(err, "not taken"))
		fprintf(stderr, "record said:\n%s\n", err ? err : "");
	free(err);

	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	uint64_t prev = 0;
	for (int k = 1; k <= NSNAP; k++) {
		char path[600];
		snprintf(path, sizeof path, "%s/%s-%d.ptlog", dir, base, k);
		if (access(path, R_OK) != 0) {
			CHECK(!"every snapshot is there");
			continue;
		}
		uint64_t t = check_snapshot(path);
		if (prev && t)
			CHECK(t >= prev + EVERY_NS); /* --every holds, and in trigger order */
		prev = t;
	}
	T_END();
}
