/*
 * clock_sim.h -- src/shm/clock.c compiled into a test with a simulated
 * clock: its rdtsc and clock_gettime are the test's sim_tsc() and
 * sim_gettime(), which the test defines (clock_model.c, clock_settle.c),
 * and sim_use_tsc(), ticks from it.  Included first, in place of the
 * clock's own header.
 */
#ifndef POSIXTRACE_TEST_CLOCK_SIM_H
#define POSIXTRACE_TEST_CLOCK_SIM_H

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <stdint.h>
#include <time.h>

static uint64_t sim_tsc(void);
static int sim_gettime(clockid_t id, struct timespec *ts);
#define __rdtsc sim_tsc
#define clock_gettime sim_gettime
#include "../src/shm/clock.c"
#undef __rdtsc
#undef clock_gettime

#include "t.h"

/* Ticks from the (simulated) TSC; the test skips where there is none
 * (ticks are CLOCK_MONOTONIC itself there). */
static void sim_use_tsc(void)
{
#if !PT_HAVE_TSC
	T_SKIP("no TSC on this architecture: ticks are CLOCK_MONOTONIC itself");
#endif
	pt_clock_tsc = 1;
}

#endif
