/*
 * clock.c -- tick source selection, calibration and conversion.
 *
 * Ticks are the invariant TSC when the CPU has one, else CLOCK_MONOTONIC
 * nanoseconds.  A stream stores calibration points (tick, monotonic ns):
 * two taken at creation, more added by the controller at doubling
 * intervals, so the rate estimate keeps improving over long traces while
 * conversion stays piecewise linear and monotonic.
 */
#include <stdlib.h>
#include <string.h>
#include "clock.h"

#if PT_HAVE_TSC
#include <cpuid.h>
#endif

int pt_clock_tsc;

/* Once, when the library is loaded, before the program's own constructors
 * (which may record): from then on pt_clock_tsc is only read. */
__attribute__((constructor(101))) static void pt_clock_init(void)
{
#if PT_HAVE_TSC
	unsigned a, b, c, d;
	const char *env = getenv("POSIXTRACE_CLOCK");

	if (env && strcmp(env, "monotonic") == 0)
		return;
	if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u &&
	    __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8)))
		pt_clock_tsc = 1;
#endif
}

#if PT_HAVE_TSC
/* One (tick, ns) pair, taken where the two reads are closest together. */
static void sample(uint64_t *tick, int64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 7; i++) {
		uint64_t t0 = __rdtsc();
		uint64_t n = pt_mono_ns();
		uint64_t t1 = __rdtsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tick = t0 + (t1 - t0) / 2;
			*ns = (int64_t)n;
		}
	}
}
#endif

static void use_segment(struct pt_clock *c, uint32_t i);

void pt_clock_calibrate(struct pt_clock_img *img)
{
	struct timespec r, m;

	memset(img, 0, sizeof *img);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	img->real_minus_mono = ((int64_t)r.tv_sec - m.tv_sec) * 1000000000 +
	                       (r.tv_nsec - m.tv_nsec);
	img->kind = PT_CLK_MONO;
#if PT_HAVE_TSC
	if (pt_clock_tsc) {
		img->kind = PT_CLK_TSC;
		sample(&img->tick[0], &img->ns[0]);
		/* a 2 ms baseline gives the first rate estimate */
		while ((int64_t)pt_mono_ns() - img->ns[0] < 2000000)
			;
		sample(&img->tick[1], &img->ns[1]);
		img->npts = 2;
	}
#endif
}

/* Add a calibration point when the time since the last one is at least
 * twice the previous interval.  frontier is the largest tick already
 * converted for a reader: a point pinned there first keeps conversion
 * continuous, so times already handed out never jump.  1 if refined. */
int pt_clock_refine(struct pt_clock *c, uint64_t frontier)
{
#if PT_HAVE_TSC
	struct pt_clock_img *img = &c->img;
	uint32_t n = img->npts;
	int64_t now = (int64_t)pt_mono_ns();
	uint64_t tick;
	int64_t ns;

	if (img->kind != PT_CLK_TSC || n < 2 || n + 2 > PT_CLOCK_PTS)
		return 0;
	if (now - img->ns[n - 1] < 2 * (img->ns[n - 1] - img->ns[n - 2]))
		return 0;
	sample(&tick, &ns);
	if (frontier > img->tick[n - 1] && frontier < tick) {
		int64_t at = pt_clock_ns(c, frontier) - img->real_minus_mono;
		if (at <= img->ns[n - 1] || at >= ns)
			return 0;
		img->tick[n] = frontier;
		img->ns[n] = at;
		n++;
	}
	if (tick <= img->tick[n - 1] || ns <= img->ns[n - 1])
		return 0;
	img->tick[n] = tick;
	img->ns[n] = ns;
	img->npts = n + 1;
	use_segment(c, n - 1);
	return 1;
#else
	(void)c, (void)frontier;
	return 0;
#endif
}

static void use_segment(struct pt_clock *c, uint32_t i)
{
	const struct pt_clock_img *g = &c->img;
	uint64_t dt = g->tick[i + 1] - g->tick[i];
	uint64_t dn = (uint64_t)(g->ns[i + 1] - g->ns[i]);

	c->seg = i;
	c->seg_tick = g->tick[i];
	c->seg_ns = g->ns[i];
	c->seg_mult = (uint64_t)(((unsigned __int128)dn << 32) / dt);
}

/* Copy and validate a clock image (it may come from shared memory). */
int pt_clock_load(struct pt_clock *c, const struct pt_clock_img *img)
{
	memset(c, 0, sizeof *c);
	memcpy(&c->img, img, sizeof *img);
	if (c->img.kind == PT_CLK_MONO)
		return 0;
	if (c->img.kind != PT_CLK_TSC || c->img.npts < 2 || c->img.npts > PT_CLOCK_PTS)
		goto bad;
	for (uint32_t i = 1; i < c->img.npts; i++)
		if (c->img.tick[i] <= c->img.tick[i - 1] || c->img.ns[i] <= c->img.ns[i - 1])
			goto bad;
	use_segment(c, c->img.npts - 2);
	return 0;
bad:
	c->img.kind = PT_CLK_MONO; /* treat ticks as nanoseconds */
	return -1;
}

/* Ticks come from the segment, which the traced process can write: any
 * tick converts without overflow (times out of range saturate). */
static int64_t clamp_ns(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

int64_t pt_clock_ns(struct pt_clock *c, uint64_t tick)
{
	const struct pt_clock_img *g = &c->img;

	if (g->kind != PT_CLK_TSC)
		return clamp_ns((__int128)tick + g->real_minus_mono);
	uint32_t n = g->npts, i = c->seg;
	/* find the segment [i, i+1] holding tick; the first and last extend */
	if (tick < c->seg_tick || (i + 2 < n && tick >= g->tick[i + 1])) {
		i = 0;
		while (i + 2 < n && tick >= g->tick[i + 1])
			i++;
		use_segment(c, i);
	}
	__int128 d;
	if (tick >= c->seg_tick)
		d = (__int128)(((unsigned __int128)(tick - c->seg_tick) * c->seg_mult) >> 32);
	else
		d = -(__int128)(((unsigned __int128)(c->seg_tick - tick) * c->seg_mult) >> 32);
	return clamp_ns(c->seg_ns + d + g->real_minus_mono);
}

void pt_clock_res(const struct pt_clock_img *img, struct timespec *res)
{
	res->tv_sec = 0;
	res->tv_nsec = 1;
	if (img->kind == PT_CLK_TSC && img->npts >= 2) {
		uint64_t dt = img->tick[1] - img->tick[0];
		uint64_t dn = (uint64_t)(img->ns[1] - img->ns[0]);
		if (dt && dn > dt) /* slower than 1 GHz: one tick is over 1 ns */
			res->tv_nsec = (long)((dn + dt - 1) / dt);
	} else {
		clock_getres(CLOCK_MONOTONIC, res);
	}
}
