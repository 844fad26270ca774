/*
 * clock.c -- tick source selection, calibration and conversion.
 *
 * Ticks are the invariant TSC when the CPU has one, else CLOCK_MONOTONIC
 * nanoseconds.  Recording only reads the TSC; a reader turns ticks into
 * CLOCK_REALTIME with calibration points, each a true sample (a TSC read
 * and a CLOCK_MONOTONIC read taken together, the closest of several):
 *
 *  - A tick between two points is interpolated between them.  Between two
 *    true samples the error is at most theirs (well under a microsecond),
 *    however short or long the segment: interpolation never magnifies an
 *    error, where extrapolating with a slope measured over a short
 *    stretch does (what the earlier design did, and why its timestamps
 *    could be off by seconds under load).
 *  - A tick past the last point is converted on the "tail": from the last
 *    point at the rate measured over the last 100 ms or more (at least the
 *    2 ms of the first calibration), but only within `gap` of it (an
 *    eighth of that baseline, 100 us to 10 ms), where the rate's error
 *    cannot add up to more than a few tens of nanoseconds (or, while NTP
 *    changes the clock's rate, that change times 10 ms).  Further out,
 *    the reader first takes a new sample: the event was recorded before it
 *    is read, so its tick lies before the new point and is interpolated.
 *  - Conversions handed out never change and stay monotonic: the ticks
 *    already converted on the tail are kept by a point placed on the tail
 *    line at the largest of them (the frontier) before the new sample is
 *    added, and the segment up to it keeps the tail's rate exactly, so
 *    every value already given stays as it was.
 *
 * So a reader, however late, converts with points taken around the
 * events it reads; a reader that keeps up samples at most once per gap.
 * Between points taken that way, the threads that wait on a stream anyway
 * add one every KEEP_NS (40 ms, pt_clock_keep): a stream's flusher, a
 * reader blocked in getnext, a trygetnext that finds nothing.  Between two points the error is how far
 * CLOCK_MONOTONIC strays from a straight line in TSC ticks, which is
 * nothing unless the kernel changes its rate (NTP slewing), and then that
 * change times the segment's length: a stream nobody waits on and that is
 * read only long after (a flight recorder read at the end) is converted
 * across the time it was not read.  (A thread of the library's own taking
 * points would make every controller multi-threaded, and its fork()ed
 * children restricted to async-signal-safe calls.)  Points are kept, so
 * late events of a thread preempted for long are converted with the
 * points around them; but past 10 s behind the last point only where the
 * clock bends ("settled", settle()).  A busy flusher takes a point every
 * 10 ms or so (each time it converts past the tail): 32 bytes each, 1 MB
 * every 5 minutes if all stayed (issue 54: the recorder's RSS grew so).
 *  - A point takes the place of the last settled one when a single line
 *    from the settled point before converts every point it then stands
 *    for within that point's tolerance: no earlier than the point, and
 *    later by at most the window its sample was read in (the clock was
 *    read somewhere in it: about 20 ns on a 2.6 GHz EPYC guest, the
 *    samples' own scatter), TOL_MAX_NS at most; a pin (below) from a
 *    nanosecond after it.  So a settled conversion differs from the one
 *    with every point kept by no more than TOL_MAX_NS and a nanosecond,
 *    and is never earlier.  A steady clock keeps about a point per 2 to 6 s
 *    (a segment ends where the samples' scatter leaves no line within all
 *    their tolerances, or the 32.32 slope's rounding outgrows them), NTP
 *    slewing more where the rate changes.
 *  - The line chosen is the lowest that fits, and the constraints only
 *    add up, so a segment's slope only grows: a tick converted again
 *    after its points settled gives the same value or a later one, never
 *    an earlier, and a thread's times stay nondecreasing.  (The tail's
 *    values before a pin fall short of pin + 1, hence its tolerance.)
 *  - Ticks of the last 10 s (between points not settled yet) convert as
 *    they did when first converted; past 65536 points (a clock NTP keeps
 *    bending for days), every other point of the older half goes.
 */
#include <stdlib.h>
#include <string.h>
#include "clock.h"

#if PT_HAVE_TSC
#include <cpuid.h>
#endif

int pt_clock_tsc;

enum {
	SAMPLE_TRIES = 7,
	SAMPLE_MAX_TICKS = 4000,     /* a wider TSC/clock_gettime window is refused */
	OFFSET_MAX_NS = 2000,        /* the same for CLOCK_REALTIME - CLOCK_MONOTONIC */
	CAL_BASE_NS = 2000000,       /* the first rate estimate: 2 ms */
	PTS_MAX = 65536,             /* then the older half is thinned */
};
#define RATE_SPAN_NS 100000000   /* the rate is measured over 100 ms or more */
#define GAP_MIN_NS   100000      /* the tail: 100 us */
#define GAP_MAX_NS   10000000    /* to 10 ms */
#define KEEP_NS      40000000    /* pt_clock_keep's period */
#define SETTLE_NS    10000000000 /* points are merged 10 s behind the last */
#define FOLD_BATCH   64u         /* ... 64 or more at a time */
#define TOL_MAX_NS   64          /* a settled conversion is this much later at most */

/* Once, when the library is loaded, before the program's own constructors
 * (which may record): from then on pt_clock_tsc is only read.  Called
 * first by the traced side's constructor (producer/lifecycle.c), and by this
 * file's own, which is the only one a reader-only link has; the second
 * call does nothing. */
void pt_clock_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
#if PT_HAVE_TSC
	unsigned a, b, c, d;
	const char *env = secure_getenv("POSIXTRACE_CLOCK"); /* none in a set-user-ID program */

	if (env && strcmp(env, "monotonic") == 0)
		return;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return;
	int ordered = env && strcmp(env, "ordered") == 0;
	if (ordered) { /* rdtscp, else the vDSO's clock (whose TSC read is ordered) */
		if (!__get_cpuid(0x80000001u, &a, &b, &c, &d) || !(d & (1u << 27)))
			return;
	}
	if (__get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8)))
		pt_clock_tsc = ordered ? PT_TSC_ORDERED : PT_TSC_FAST;
#endif
}

__attribute__((constructor(101))) static void clock_at_load(void)
{
	pt_clock_init();
}

#if PT_HAVE_TSC
/* One (tick, monotonic ns) pair: the TSC read on both sides of the clock
 * read, the narrowest of a few tries.  0 if every try was interrupted
 * (preempted between the reads): the pair would be too loose to use. */
static int sample(uint64_t *tick, int64_t *ns, uint64_t *win)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t t0 = __rdtsc();
		uint64_t n = pt_mono_ns();
		uint64_t t1 = __rdtsc();
		if (t1 > t0 && t1 - t0 < best) {
			best = t1 - t0;
			*tick = t0 + (t1 - t0) / 2;
			*ns = (int64_t)n;
		}
	}
	if (win)
		*win = best;
	return best <= SAMPLE_MAX_TICKS;
}
#endif

/* CLOCK_REALTIME - CLOCK_MONOTONIC, read between two monotonic reads (the
 * narrowest of a few tries): a preemption between two plain reads would
 * shift every timestamp of the stream by its length. */
static int64_t real_offset(void)
{
	int64_t off = 0, best = INT64_MAX;

	for (int i = 0; i < 64 && (i < SAMPLE_TRIES || best > OFFSET_MAX_NS); i++) {
		struct timespec r;
		int64_t m0 = (int64_t)pt_mono_ns();
		clock_gettime(CLOCK_REALTIME, &r);
		int64_t m1 = (int64_t)pt_mono_ns();
		if (m1 - m0 < best) {
			best = m1 - m0;
			off = (int64_t)r.tv_sec * 1000000000 + r.tv_nsec - (m0 + (m1 - m0) / 2);
		}
	}
	return off;
}

/* The process's first calibration: two points CAL_BASE_NS apart. */
void pt_clock_calibrate(struct pt_clock_img *img)
{
	memset(img, 0, sizeof *img);
	img->real_minus_mono = real_offset();
	img->kind = PT_CLK_MONO;
#if PT_HAVE_TSC
	if (pt_clock_tsc) {
		img->kind = PT_CLK_TSC;
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < 1000 && !sample(&img->tick[k], &img->ns[k], NULL); i++)
				;
			while (k == 0 && (int64_t)pt_mono_ns() - img->ns[0] < CAL_BASE_NS)
				;
		}
		img->npts = 2;
		if (img->tick[1] <= img->tick[0] || img->ns[1] <= img->ns[0])
			img->kind = PT_CLK_MONO; /* a TSC that does not advance */
	}
#endif
}

/* For a new stream: the offset to CLOCK_REALTIME as it is now, and a
 * point taken now (the process's calibration may be hours old). */
void pt_clock_restamp(struct pt_clock_img *img)
{
	img->real_minus_mono = real_offset();
#if PT_HAVE_TSC
	uint64_t t;
	int64_t n;
	uint32_t k = img->npts;
	if (img->kind == PT_CLK_TSC && k >= 1 && k < PT_CLOCK_PTS && sample(&t, &n, NULL) &&
	    t > img->tick[k - 1] && n > img->ns[k - 1]) {
		img->tick[k] = t;
		img->ns[k] = n;
		img->npts = k + 1;
	}
#endif
}

static uint64_t mul32(uint64_t ticks, uint64_t mult)
{
	unsigned __int128 v = ((unsigned __int128)ticks * mult) >> 32;
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* Ticks out of every segment can come from the segment, which the traced
 * process can write: they convert without overflow (saturating). */
static int64_t clamp_ns(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* After a point was added: the rate over the last 100 ms or more, and
 * the tail's length. */
static void update_rate(struct pt_clock *c)
{
	const struct pt_clock_pt *p = c->pt;
	uint32_t last = c->n - 1;

	while (c->base + 1 < last && p[last].ns - p[c->base + 1].ns >= RATE_SPAN_NS)
		c->base++;
	uint64_t dn = (uint64_t)(p[last].ns - p[c->base].ns);
	uint64_t dt = p[last].tick - p[c->base].tick;
	unsigned __int128 r = ((unsigned __int128)dn << 32) / dt;
	c->rate = r == 0 ? 1 : r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
	uint64_t g = dn / 8;
	g = g < GAP_MIN_NS ? GAP_MIN_NS : g > GAP_MAX_NS ? GAP_MAX_NS : g;
	unsigned __int128 gt = ((unsigned __int128)g << 32) / c->rate;
	c->gap = gt == 0 ? 1 : gt > UINT64_MAX ? UINT64_MAX : (uint64_t)gt;
	unsigned __int128 kt = ((unsigned __int128)KEEP_NS << 32) / c->rate;
	c->keep = kt > UINT64_MAX ? UINT64_MAX : (uint64_t)kt;
	kt = ((unsigned __int128)SETTLE_NS << 32) / c->rate;
	c->settle = kt > UINT64_MAX ? UINT64_MAX : (uint64_t)kt;
	c->seg_tick = c->seg_end = 0; /* no cached segment */
}

static uint64_t slope(const struct pt_clock_pt *a, uint64_t tick, int64_t ns)
{
	unsigned __int128 m = ((unsigned __int128)(uint64_t)(ns - a->ns) << 32) / (tick - a->tick);
	return m > UINT64_MAX ? UINT64_MAX : (uint64_t)m;
}

/* Every other point of the older half goes (the first stays). */
static void thin(struct pt_clock *c)
{
	uint32_t half = c->n / 2 < c->base ? c->n / 2 : c->base, k = 1, s = c->s ? 1 : 0;

	for (uint32_t i = 1; i < c->n; i++)
		if (i >= half || i % 2 == 0) {
			if (i - 1 < half && (i - 1) % 2) /* the point before it went */
				c->pt[k - 1].mult = slope(&c->pt[k - 1], c->pt[i].tick, c->pt[i].ns);
			c->pt[k++] = c->pt[i];
			s += i < c->s;
		}
	c->base -= c->n - k;
	c->n = k;
	c->s = s;
	c->m_lo = 1; /* (the settled ones' last two may have gone: none is merged into them) */
	c->m_hi = 0;
}

/* The slopes from point a (32.32 ns per tick, as a segment converts)
 * that convert tick to within [ns + lo, ns + hi]: [*mlo, *mhi], empty if
 * *mlo > *mhi.  (ns + lo - a->ns >= 0: the points increase.) */
static void bounds(const struct pt_clock_pt *a, uint64_t tick, int64_t ns, int64_t lo,
                   int64_t hi, uint64_t *mlo, uint64_t *mhi)
{
	uint64_t dt = tick - a->tick;
	__int128 dlo = (__int128)ns + lo - a->ns, dhi = (__int128)ns + hi - a->ns;

	if (dlo < 0)
		dlo = 0;
	/* floor(dt * m / 2^32) >= dlo, and <= dhi */
	unsigned __int128 l = (((unsigned __int128)dlo << 32) + dt - 1) / dt;
	unsigned __int128 h = (((unsigned __int128)(dhi + 1) << 32) - 1) / dt;
	if (l > UINT64_MAX) {
		*mlo = UINT64_MAX;
		*mhi = 0;
		return;
	}
	*mlo = (uint64_t)l;
	*mhi = h > UINT64_MAX ? UINT64_MAX : (uint64_t)h;
}

/* Add a point after the last; mult: the slope of the segment up to it (0:
 * from the two points); [ns + lo, ns + hi]: where a line that stands for
 * it may pass, once it is settled. */
static int push(struct pt_clock *c, uint64_t tick, int64_t ns, uint64_t mult, int32_t lo,
                int32_t hi)
{
	if (tick <= c->pt[c->n - 1].tick || ns <= c->pt[c->n - 1].ns)
		return 0;
	if (c->n == c->cap) {
		struct pt_clock_pt *p = NULL;
		if (c->cap < PTS_MAX)
			p = realloc(c->pt, 2 * (size_t)c->cap * sizeof *p);
		if (p) {
			c->pt = p;
			c->cap *= 2;
		} else {
			thin(c);
		}
		if (c->n == c->cap)
			return 0;
	}
	struct pt_clock_pt *last = &c->pt[c->n - 1];
	last->mult = mult ? mult : slope(last, tick, ns);
	c->pt[c->n++] = (struct pt_clock_pt){ tick, ns, 0, lo, hi };
	return 1;
}

/* The points older than c->settle behind the last (and before the rate's
 * base), FOLD_BATCH at least at a time, go into the settled ones: each
 * takes the place of the last settled one when one line from the one
 * before converts both, and every point that one already stood for,
 * within their tolerances; else it is kept.  See the top of this file. */
static void settle(struct pt_clock *c)
{
	uint32_t k = c->s, i = c->s, last = c->n - 1;

	if (c->s + FOLD_BATCH >= c->base ||
	    c->pt[last].tick - c->pt[c->s + FOLD_BATCH].tick < c->settle)
		return;
	for (; i < c->base && c->pt[last].tick - c->pt[i].tick >= c->settle; i++) {
		struct pt_clock_pt x = c->pt[i];
		if (k >= 2 && c->m_lo <= c->m_hi) {
			struct pt_clock_pt *a = &c->pt[k - 2], *b = &c->pt[k - 1];
			uint64_t bl, bh, xl, xh;
			bounds(a, b->tick, b->ns, b->lo, b->hi, &bl, &bh);
			bounds(a, x.tick, x.ns, x.lo, x.hi, &xl, &xh);
			uint64_t l = bl > c->m_lo ? bl : c->m_lo, h = bh < c->m_hi ? bh : c->m_hi;
			uint64_t m = xl > l ? xl : l; /* the lowest: never earlier than a point */
			if (m <= h && m <= xh) {
				c->m_lo = l;
				c->m_hi = h;
				a->mult = m;
				*b = x; /* (its slope, to pt[i + 1], stays right) */
				continue;
			}
		}
		c->pt[k++] = x;
		c->m_lo = 0; /* no point dropped since the one before */
		c->m_hi = UINT64_MAX;
	}
	if (k < i) {
		memmove(&c->pt[k], &c->pt[i], (c->n - i) * sizeof *c->pt);
		c->base -= i - k;
		c->n -= i - k;
	}
	c->s = k;
}

/* A new sample, for a tick further than the tail reaches.  Before it goes
 * in, a point on the tail line at the frontier keeps what was already
 * converted there. */
static void advance(struct pt_clock *c)
{
#if PT_HAVE_TSC
	const struct pt_clock_pt *last = &c->pt[c->n - 1];
	uint64_t q, win;
	int64_t qn;

	if (!sample(&q, &qn, &win))
		return; /* interrupted: the tail goes on, the next read samples */
	if (q > c->seen)
		c->seen = q;
	if (q <= last->tick || qn <= last->ns)
		return;
	/* how far a line may pass above a point: the sample's own window (the
	 * clock was read somewhere in it), at least a nanosecond */
	uint64_t w = mul32(win, c->rate) + 1;
	int32_t tol = w > TOL_MAX_NS ? TOL_MAX_NS : (int32_t)w;
	if (c->frontier > last->tick && c->frontier < q) {
		int64_t pn = last->ns + (int64_t)mul32(c->frontier - last->tick, c->rate);
		/* (a line standing for the pin passes above it: the tail's values
		 * handed out below it, which fall short of pn + 1, stay below) */
		if (pn > last->ns && !push(c, c->frontier, pn, c->rate, 1, tol))
			return;
		/* the tail ran ahead of the clock (by at most its own error, the
		 * rate's error over the gap): the new point just after the pin,
		 * so that what was handed out stays and the error stops there
		 * rather than grow with every later tick */
		if (qn <= pn)
			qn = pn + 1;
	}
	/* (a frontier past q came from a tick from the future, written by a
	 * writer or read on a CPU whose TSC is ahead: it is not kept) */
	push(c, q, qn, 0, 0, tol);
	c->frontier = 0;
	update_rate(c);
	settle(c);
	c->seg_tick = c->seg_end = 0; /* (the points moved) */
#else
	(void)c;
#endif
}

/* From a thread that waits on the stream (its flusher, a blocked
 * reader), each time it wakes: a point when the last is KEEP_NS old, so
 * that the events it converts after a long wait are not converted across
 * all of it. */
void pt_clock_keep(struct pt_clock *c)
{
	if (c->kind == PT_CLK_TSC && c->n && pt_now() - c->pt[c->n - 1].tick >= c->keep)
		advance(c);
}

static void use_segment(struct pt_clock *c, uint32_t i)
{
	const struct pt_clock_pt *a = &c->pt[i], *b = &c->pt[i + 1];

	c->seg_tick = a->tick;
	c->seg_end = b->tick;
	c->seg_ns = a->ns;
	c->seg_mult = a->mult;
	c->seg_tail = 0;
}

static void use_tail(struct pt_clock *c)
{
	const struct pt_clock_pt *a = &c->pt[c->n - 1];

	c->seg_tick = a->tick;
	c->seg_end = a->tick + c->gap < a->tick ? UINT64_MAX : a->tick + c->gap;
	c->seg_ns = a->ns;
	c->seg_mult = c->rate;
	c->seg_tail = 1;
}

/* Load a clock image (from this process's own copy, but checked as if it
 * came from anywhere: the points must increase, and their values be small
 * enough for pt_clock_ns_cached()'s sums). */
int pt_clock_load(struct pt_clock *c, const struct pt_clock_img *img)
{
	uint32_t n = img->npts;

	memset(c, 0, sizeof *c);
	c->kind = PT_CLK_MONO;
	c->real_minus_mono = img->real_minus_mono;
	if (img->kind == PT_CLK_MONO)
		return 0;
	if (img->kind != PT_CLK_TSC || n < 2 || n > PT_CLOCK_PTS ||
	    img->real_minus_mono >= (int64_t)1 << 61 || img->real_minus_mono <= -((int64_t)1 << 61))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (img->ns[i] < 0 || img->ns[i] >= (int64_t)1 << 61 ||
		    (i && (img->tick[i] <= img->tick[i - 1] || img->ns[i] <= img->ns[i - 1])))
			return -1;
	c->cap = 64;
	c->pt = malloc(c->cap * sizeof *c->pt);
	if (!c->pt)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		c->pt[i] = (struct pt_clock_pt){ img->tick[i], img->ns[i], 0, 0, 0 };
		if (i)
			c->pt[i - 1].mult = slope(&c->pt[i - 1], img->tick[i], img->ns[i]);
	}
	c->n = n;
	c->m_hi = UINT64_MAX;
	c->seen = img->tick[n - 1];
	c->kind = PT_CLK_TSC;
	update_rate(c);
	return 0;
}

void pt_clock_free(struct pt_clock *c)
{
	free(c->pt);
	memset(c, 0, sizeof *c);
}

int64_t pt_clock_ns(struct pt_clock *c, uint64_t tick)
{
	int64_t v = 0;

	if (c->kind != PT_CLK_TSC)
		return clamp_ns((__int128)tick + c->real_minus_mono);
	if (pt_clock_ns_cached(c, tick, &v))
		return v;
	const struct pt_clock_pt *p = c->pt;
	uint32_t last = c->n - 1;
	if (tick >= p[last].tick) {
		if (tick - p[last].tick >= c->gap) {
			advance(c);
			p = c->pt;
			last = c->n - 1;
		}
		if (tick >= p[last].tick) {
			use_tail(c);
			if (pt_clock_ns_cached(c, tick, &v))
				return v;
			/* past the tail: the sample was interrupted, or the tick is
			 * from the future; only a tick before a sample is kept */
			if (tick <= c->seen && tick > c->frontier)
				c->frontier = tick;
			return clamp_ns((__int128)p[last].ns + mul32(tick - p[last].tick, c->rate) +
			                c->real_minus_mono);
		}
	}
	if (tick < p[0].tick) /* before the stream was made: not from this stream */
		return clamp_ns((__int128)p[0].ns - mul32(p[0].tick - tick, c->rate) +
		                c->real_minus_mono);
	uint32_t lo = 0, hi = last; /* p[lo].tick <= tick < p[hi].tick */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p[mid].tick <= tick)
			lo = mid;
		else
			hi = mid;
	}
	use_segment(c, lo);
	pt_clock_ns_cached(c, tick, &v);
	return v;
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
