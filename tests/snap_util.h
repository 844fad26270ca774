/*
 * snap_util.h -- for the tests of `record --snapshot` (cli_snapshot.c,
 * cli_snapshot_queue.c): the load the traced program records, and a
 * snapshot's events read back against it.
 *
 * The load: snap_load_worker() threads (argument: the thread's number,
 * 0 or 1) record events "load" (snap_ev_load, opened by the caller) whose
 * payload is struct snap_load, the thread's number and its own sequence
 * number from 0, at most one every SNAP_RATE_NS (2.5 M events/s a thread,
 * 5 M/s in all, as in issue 52: a 64 MiB stream holds half a second),
 * until snap_stop; snap_n[th] counts each thread's thousands of events.
 *
 * snap_read(): the events of a snapshot, checked against the load: in
 * each thread, seq exactly one more than the one before in the snapshot
 * (a window cut from the stream: from whatever comes first), so nothing
 * inside the window is missing or repeated; a load event of another
 * length or thread is bad.  Gaps (OVERFLOW, RESUME) are counted apart;
 * every other event is handed to the caller's on_event (its type's name,
 * its time in ns, its payload) to look for the trigger.
 *
 * Include after <trace.h> and "t.h".
 */
#ifndef POSIXTRACE_SNAP_UTIL_H
#define POSIXTRACE_SNAP_UTIL_H

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SNAP_RATE_NS 400

struct snap_load { uint32_t th, pad; uint64_t seq; };

static atomic_int snap_stop;
static atomic_ulong snap_n[2];
static trace_event_id_t snap_ev_load;

static inline uint64_t snap_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void *snap_load_worker(void *arg)
{
	struct snap_load p = { (uint32_t)(uintptr_t)arg, 0, 0 };
	uint64_t t0 = snap_mono_ns();
	while (!atomic_load_explicit(&snap_stop, memory_order_relaxed)) {
		posix_trace_event(snap_ev_load, &p, sizeof p);
		if (++p.seq % 1024 == 0) {
			atomic_fetch_add(&snap_n[p.th & 1], 1);
			uint64_t due = t0 + p.seq * SNAP_RATE_NS, now = snap_mono_ns();
			if (due > now + 100000) {
				struct timespec d = { 0, (long)(due - now) };
				nanosleep(&d, NULL);
			}
		}
	}
	return NULL;
}

/* What snap_read() found: load events and the bad ones among them, gaps,
 * the time range of the events but gaps, the first load event's time. */
struct snap_seen {
	long loads, bad, gaps;
	uint64_t tmin, tmax, load_min;
};

static inline void snap_read(const char *path,
                             void (*on_event)(void *ctx, const char *name, uint64_t t,
                                              const unsigned char *buf, size_t len),
                             void *ctx, struct snap_seen *s)
{
	int fd = open(path, O_RDONLY);
	trace_id_t l;
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_open(fd, &l) == 0);
	struct posix_trace_event_info e;
	unsigned char buf[256];
	size_t len;
	int unav;
	uint64_t next[2] = { UINT64_MAX, UINT64_MAX };
	*s = (struct snap_seen){ 0, 0, 0, UINT64_MAX, 0, UINT64_MAX };
	while (posix_trace_getnext_event(l, &e, buf, sizeof buf, &len, &unav) == 0 && !unav) {
		char nm[TRACE_EVENT_NAME_MAX + 1] = "";
		posix_trace_eventid_get_name(l, e.posix_event_id, nm);
		uint64_t t = (uint64_t)e.posix_timestamp.tv_sec * 1000000000u +
		             (uint64_t)e.posix_timestamp.tv_nsec;
		if (e.posix_event_id == POSIX_TRACE_OVERFLOW || e.posix_event_id == POSIX_TRACE_RESUME) {
			s->gaps++;
			continue;
		}
		s->tmin = t < s->tmin ? t : s->tmin;
		s->tmax = t > s->tmax ? t : s->tmax;
		if (!strcmp(nm, "load")) {
			struct snap_load p;
			if (len != sizeof p) {
				s->bad++;
				continue;
			}
			memcpy(&p, buf, sizeof p);
			if (p.th > 1 || (next[p.th] != UINT64_MAX && p.seq != next[p.th]))
				s->bad++;
			next[p.th < 2 ? p.th : 0] = p.seq + 1;
			s->load_min = t < s->load_min ? t : s->load_min;
			s->loads++;
		}
		on_event(ctx, nm, t, buf, len);
	}
	posix_trace_close(l);
	close(fd);
}

#endif
