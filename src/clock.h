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

/* 1 when ticks come from an invariant TSC; set once when the library is
 * loaded (clock.c). */
extern int pt_clock_tsc;


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
	if (__builtin_expect(pt_clock_tsc, 1))
		return __rdtsc();
#endif
	return pt_mono_ns();
}

/* Process-local converter, built from a validated clock image. */
struct pt_clock {
	struct pt_clock_img img;
	uint32_t seg;        /* cached segment: points seg, seg+1 */
	uint64_t seg_tick;
	int64_t seg_ns;
	uint64_t seg_mult;   /* ns per tick, 32.32 fixed point */
};

void pt_clock_calibrate(struct pt_clock_img *img);
int pt_clock_refine(struct pt_clock *c, uint64_t frontier);
int pt_clock_load(struct pt_clock *c, const struct pt_clock_img *img);
int64_t pt_clock_ns(struct pt_clock *c, uint64_t tick); /* CLOCK_REALTIME ns */
void pt_clock_res(const struct pt_clock_img *img, struct timespec *res);

/* pt_clock_ns() for the common case, inline (the flusher's per-event
 * path): a TSC tick inside the cached segment, not so far past it that
 * the sum could overflow.  0: call pt_clock_ns(). */
static inline int pt_clock_ns_cached(const struct pt_clock *c, uint64_t tick, int64_t *ns)
{
	const struct pt_clock_img *g = &c->img;

	if (g->kind != PT_CLK_TSC || tick < c->seg_tick ||
	    (c->seg + 2 < g->npts && tick >= g->tick[c->seg + 1]))
		return 0;
	uint64_t d = (uint64_t)(((unsigned __int128)(tick - c->seg_tick) * c->seg_mult) >> 32);
	if (d >> 60 || c->seg_ns < 0 || c->seg_ns >= (int64_t)1 << 61 ||
	    g->real_minus_mono < 0 || g->real_minus_mono >= (int64_t)1 << 62)
		return 0; /* (2^60 + 2^61 + 2^62 < 2^63; 2^62 ns is past 2116) */
	*ns = c->seg_ns + (int64_t)d + g->real_minus_mono;
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
