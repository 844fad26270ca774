/*
 * clock_settle -- a long recording's calibration points stay few where the
 * clock is straight, and converting with them gives what every point kept
 * gave (src/shm/clock.c, settle()).
 *
 * clock.c is compiled into this test with the TSC and clock_gettime()
 * replaced by a simulated machine (as tests/clock_model does): a TSC at
 * 2.1 GHz, CLOCK_MONOTONIC a straight line in it (10 ns every 21 ticks),
 * or in the second run one whose rate steps by up to 30 ppm every 5
 * minutes (NTP steering), a TSC read 20 to 39 ticks after what came
 * before it, the clock read 20 to 39 ticks after and 0 to 19 before what
 * follows (a sample's window, the narrowest of its tries, is 40 to 97
 * ticks: its tolerance 20 to 47 ns).  A stream's flusher
 * calls pt_clock_keep every 40 ms (a point each time, 90 000 an hour) and
 * converts the events recorded meanwhile.  Over 4 simulated hours:
 *  - the points stay bounded: those of the last 10 s (never more than
 *    250 + 64 + a few: one per 40 ms, and the batch settled at once)
 *    and, before them, no more than one per 4 s, one in 100 of
 *    those taken (3600 in 4 hours; about one per 6 s here, a segment
 *    ending where the samples' scatter leaves no line within all their
 *    tolerances), the bent clock as the straight one; what grows in the
 *    second two hours is the settled ones alone;
 *  - every tick converted is converted again at the end, when its points
 *    have settled: the same value or a later one, by no more than the
 *    tolerance of the samples (47 ns) and a nanosecond, never an earlier
 *    one (the unthinned table's conversion is the first: ticks of the
 *    last 10 s are converted with every point);
 *  - the ticks of the last 10 s give exactly what they gave;
 *  - each conversion lies within 71 ns of the true time on the straight
 *    clock (half the widest window, 23 ns, the tolerance and a
 *    nanosecond), within 1300 ns on the bent one (a 30 ppm step between
 *    two points 40 ms apart: 1200 ns, with every point kept too);
 *  - in order of their ticks, the values never go back, first
 *    conversions and second ones alike.
 */
#include "clock_sim.h"
#include <inttypes.h>
#include <stdio.h>
#include "t.h"

#define OFFSET_NS 1700000000000000000LL /* CLOCK_REALTIME - CLOCK_MONOTONIC */
#define HZ 2100000000ull
#define SIM_TOL_NS 47 /* (97 ticks at 10/21 ns, and 1) */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd_below(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? rng % n : 0;
}

/* CLOCK_MONOTONIC in ticks: straight, or bent every 5 minutes */
static uint64_t now_tick = 5000000000000ull, tick0;
static int bends;
static int64_t bend_ns[64];   /* the time at each bend */
static double bend_rate[64];  /* ns per tick after it */
#define BEND_TICKS (300 * HZ)

static int64_t truth(uint64_t tick)
{
	if (!bends)
		return 3600000000000LL + (int64_t)((tick - tick0) * 10 / 21);
	uint64_t k = (tick - tick0) / BEND_TICKS;
	REQUIRE(k < 64);
	return bend_ns[k] + (int64_t)(bend_rate[k] * (double)((tick - tick0) % BEND_TICKS));
}

static uint64_t sim_tsc(void)
{
	now_tick += 20 + rnd_below(20);
	return now_tick;
}

static int sim_gettime(clockid_t id, struct timespec *ts)
{
	now_tick += 20 + rnd_below(20);
	int64_t v = truth(now_tick) + (id == CLOCK_REALTIME ? OFFSET_NS : 0);
	now_tick += rnd_below(20);
	ts->tv_sec = (time_t)(v / 1000000000);
	ts->tv_nsec = (long)(v % 1000000000);
	return 0;
}

struct conv { uint64_t tick, when; int64_t ns; };
#define NCONV (1u << 18)
static struct conv *cv;
static unsigned ncv;

static int by_tick(const void *a, const void *b)
{
	uint64_t x = ((const struct conv *)a)->tick, y = ((const struct conv *)b)->tick;
	return x < y ? -1 : x > y;
}

static void run(int bent, double hours)
{
	struct pt_clock_img img;
	struct pt_clock c;
	long far = 0, back = 0, earlier = 0, later = 0, moved = 0, recent_moved = 0;
	int64_t worst_move = 0, worst_err = 0, last = INT64_MIN;

	tick0 = now_tick;
	bends = bent;
	if (bent) {
		double ppm = 0;
		for (int k = 0; k < 64; k++) {
			bend_rate[k] = (10.0 / 21.0) * (1.0 + ppm * 1e-6);
			bend_ns[k] = k ? bend_ns[k - 1] + (int64_t)(bend_rate[k - 1] * (double)BEND_TICKS)
			               : 3600000000000LL;
			ppm += (double)((int64_t)rnd_below(61) - 30);
		}
	}
	pt_clock_calibrate(&img);
	REQUIRE(img.kind == PT_CLK_TSC);
	pt_clock_restamp(&img);
	REQUIRE(pt_clock_load(&c, &img) == 0);
	ncv = 0;
	uint64_t end = now_tick + (uint64_t)(hours * 3600 * (double)HZ);
	uint32_t n_at_half = 0, s_at_half = 0;
	for (long step = 0; now_tick < end; step++) {
		/* 40 ms pass, events recorded over them, the flusher wakes */
		uint64_t from = now_tick;
		now_tick += HZ / 25;
		pt_clock_keep(&c);
		for (int k = 0; k < 8; k++) {
			uint64_t t = from + rnd_below(now_tick - from);
			int64_t v = pt_clock_ns(&c, t);
			int64_t e = v - OFFSET_NS - truth(t);
			e = e < 0 ? -e : e;
			worst_err = e > worst_err ? e : worst_err;
			far += e > (bent ? 1300 : 71);
			if (k == 0 && step % 2 == 0 && ncv < NCONV)
				cv[ncv++] = (struct conv){ t, now_tick, v };
		}
		if (!n_at_half && now_tick - tick0 >= (end - tick0) / 2) {
			n_at_half = c.n;
			s_at_half = c.s;
		}
	}
	/* every tick converted again, now that its points have settled */
	qsort(cv, ncv, sizeof *cv, by_tick);
	for (unsigned i = 0; i < ncv; i++) {
		int64_t v = pt_clock_ns(&c, cv[i].tick), d = v - cv[i].ns;
		earlier += d < 0;
		later += d > SIM_TOL_NS + 1;
		moved += d != 0;
		if (now_tick - cv[i].tick < 99 * HZ / 10)
			recent_moved += d != 0;
		worst_move = d > worst_move ? d : worst_move;
		back += v < last;
		last = v;
		int64_t e = v - OFFSET_NS - truth(cv[i].tick);
		e = e < 0 ? -e : e;
		worst_err = e > worst_err ? e : worst_err;
		far += e > (bent ? 1300 : 71);
	}
	/* the first conversions, in order of their ticks */
	last = INT64_MIN;
	for (unsigned i = 0; i < ncv; i++) {
		back += cv[i].ns < last;
		last = cv[i].ns;
	}
	uint32_t raw = c.n - c.s;
	printf("%s clock, %.0f h: %u points (%u settled, %u of the last 10 s; at %.0f h "
	       "%u, %u settled), %ld of %u conversions later once settled, by %" PRId64
	       " ns at most; %" PRId64 " ns from the truth at most\n", bent ? "bent" : "straight",
	       hours, c.n, c.s, raw, hours / 2, n_at_half, s_at_half, moved, ncv, worst_move,
	       worst_err);
	CHECK(ncv > 100000);
	CHECK(raw <= 250 + FOLD_BATCH + 8);
	CHECK(c.s <= (uint32_t)(hours * 900));
	CHECK(c.n - n_at_half <= c.s - s_at_half + FOLD_BATCH + 8); /* the settled ones grow */
	CHECK(c.cap <= 16384);
	CHECK(moved > 0); /* (they did settle) */
	CHECK_EQ(earlier, 0);
	CHECK_EQ(later, 0);
	CHECK_EQ(recent_moved, 0);
	CHECK_EQ(back, 0);
	CHECK_EQ(far, 0);
	pt_clock_free(&c);
}

int main(void)
{
	T_BEGIN(120);
	sim_use_tsc();
	REQUIRE((cv = malloc(NCONV * sizeof *cv)) != NULL);
	run(0, 4.0);
	run(1, 4.0);
	free(cv);
	T_END();
}
