/*
 * clock_sim.h -- src/shm/clock.c compiled into a test with a simulated
 * clock: its rdtsc and clock_gettime are the test's sim_tsc() and
 * sim_gettime(), which the test defines (clock_model.c, clock_settle.c).
 * Included first, in place of the clock's own header.
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

#endif
