/*
 * span_witness.h -- what the witness programs of the span tests share
 * (tests/cli_spans.c, tests/cli_spans_html.c): CLOCK_MONOTONIC, a sleep,
 * and an event timed as the midpoint of the clock reads around it.
 * Needs t.h and <trace.h>.
 */
#ifndef PT_SPAN_WITNESS_H
#define PT_SPAN_WITNESS_H
#include <stdint.h>
#include <time.h>

static uint64_t mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&t, &t) != 0)
		;
}

/* An event, and the midpoint of the clock reads around it. */
static uint64_t ev(trace_event_id_t id, const void *d, size_t n)
{
	uint64_t a = mono();
	posix_trace_event(id, d, n);
	return a + (mono() - a) / 2;
}

static trace_event_id_t tid_of(const char *name)
{
	trace_event_id_t id;
	REQUIRE(posix_trace_eventid_open(name, &id) == 0);
	return id;
}

#endif
