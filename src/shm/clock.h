/*
 * clock.h -- event timestamps: a cheap tick source on the recording path,
 * converted to CLOCK_REALTIME only when events are read.
 */
#ifndef POSIXTRACE_CLOCK_H
#define POSIXTRACE_CLOCK_H

#include <stdint.h>
#include <time.h>
#include "layout.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PT_HAVE_TSC 1
#else
#define PT_HAVE_TSC 0
#endif

/* Non-zero when ticks come from an invariant TSC; set once when the
 * library is loaded (clock.c).  PT_TSC_ORDERED: read with rdtscp, which
 * waits for the instructions before it (POSIXTRACE_CLOCK=ordered). */
enum { PT_TSC_FAST = 1, PT_TSC_ORDERED = 2 };
/* (hidden: read by every event, with no GOT entry in between) */
extern int pt_clock_tsc __attribute__((visibility("hidden")));
void pt_clock_init(void); /* at load (producer/lifecycle.c and this file's constructor) */


static inline uint64_t pt_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The recording clock: no syscall, async-signal-safe. */
static inline uint64_t pt_now(void)
{
#if PT_HAVE_TSC
	if (__builtin_expect(pt_clock_tsc == PT_TSC_FAST, 1))
		return __rdtsc();
	if (pt_clock_tsc == PT_TSC_ORDERED) {
		unsigned aux;
		return __rdtscp(&aux);
	}
#endif
	return pt_mono_ns();
}

/* A reader's converter from ticks to CLOCK_REALTIME (process-local, never
 * in shared memory).  Calibration points (tick, CLOCK_MONOTONIC ns) are
 * true samples, strictly increasing in both; a tick between two points is
 * interpolated, and a tick past the last point is converted only within
 * `gap` of it (with the rate measured over a long baseline): further than
 * that, the converter first takes a new sample, which is later than the
 * tick since the tick was recorded before it was read.  See clock.c. */
struct pt_clock {
	uint32_t kind;           /* PT_CLK_TSC or PT_CLK_MONO */
	int64_t real_minus_mono; /* CLOCK_REALTIME - CLOCK_MONOTONIC at create */
	struct pt_clock_pt {
		uint64_t tick;
		int64_t ns;
		uint64_t mult;   /* ns per tick, 32.32, to the next point */
		int32_t lo, hi;  /* a line standing for it converts its tick
		                  * within [ns + lo, ns + hi] */
	} *pt;                   /* the points, n of them (cap allocated) */
	uint32_t n, cap;
	uint32_t base;           /* the rate is measured from point base */
	uint64_t rate;           /* ns per tick, 32.32, over [base, n-1] */
	uint64_t gap;            /* ticks past the last point converted by extrapolation */
	uint64_t keep;           /* pt_clock_keep's period, in ticks */
	uint64_t frontier;       /* largest tick so converted since the last point */
	uint64_t seen;           /* the latest tick any sample read */
	/* settling (clock.c, settle): points older than `settle` ticks
	 * behind the last are merged where the clock is straight; pt[0..s)
	 * are settled, and [m_lo, m_hi] are the slopes from pt[s-2] that keep
	 * every point dropped since it within its tolerance */
	uint32_t s;
	uint64_t m_lo, m_hi;
	uint64_t settle;
	/* the segment last used: ticks in [seg_tick, seg_end) are
	 * seg_ns + (tick - seg_tick) * seg_mult; seg_tail: past the last point */
	uint64_t seg_tick, seg_end;
	int64_t seg_ns;
	uint64_t seg_mult;
	int seg_tail;
};

void pt_clock_calibrate(struct pt_clock_img *img);
void pt_clock_restamp(struct pt_clock_img *img);
int pt_clock_load(struct pt_clock *c, const struct pt_clock_img *img);
void pt_clock_free(struct pt_clock *c);
void pt_clock_keep(struct pt_clock *c);
int64_t pt_clock_ns(struct pt_clock *c, uint64_t tick); /* CLOCK_REALTIME ns */
void pt_clock_res(const struct pt_clock_img *img, struct timespec *res);

/* pt_clock_ns() for the common case, inline (the reader's and the
 * flusher's per-event path): a TSC tick in the segment last used.
 * 0: call pt_clock_ns(). */
static inline int pt_clock_ns_cached(struct pt_clock *c, uint64_t tick, int64_t *ns)
{
	if (c->kind != PT_CLK_TSC || tick < c->seg_tick || tick >= c->seg_end)
		return 0;
	/* use_segment() keeps (seg_end - seg_tick) * seg_mult, seg_ns and
	 * real_minus_mono small enough for this sum not to overflow */
	uint64_t d = (uint64_t)(((unsigned __int128)(tick - c->seg_tick) * c->seg_mult) >> 32);
	if (c->seg_tail && tick > c->frontier)
		c->frontier = tick;
	*ns = c->seg_ns + (int64_t)d + c->real_minus_mono;
	return 1;
}

static inline void pt_ns_to_ts(int64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000);
	ts->tv_nsec = (long)(ns % 1000000000);
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000;
		ts->tv_sec--;
	}
}

#endif
