/*
 * span_witness.h -- what the witness programs of the span tests share
 * (tests/cli_spans.c, tests/cli_spans_html.c): CLOCK_MONOTONIC, a sleep,
 * and an event bracketed by the clock reads before and after it.
 *
 * The witness is recorded with POSIXTRACE_CLOCK=monotonic (span_clock(1) before `posixtrace record`),
 * so an event's timestamp is a CLOCK_MONOTONIC read taken inside its
 * bracket, plus the stream's constant offset to CLOCK_REALTIME: a span's
 * duration in the trace lies in [end.lo - begin.hi, end.hi - begin.lo],
 * exactly, however long a thread is kept off its CPU between a clock read
 * and the event (a midpoint is off by half of that).  Needs t.h and
 * <trace.h>.
 */
#ifndef PT_SPAN_WITNESS_H
#define PT_SPAN_WITNESS_H
#include <stdint.h>
#include <stdlib.h>
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

/* The clock reads just before and just after an event. */
struct br {
	uint64_t lo, hi;
};

static struct br ev(trace_event_id_t id, const void *d, size_t n)
{
	struct br b;
	b.lo = mono();
	posix_trace_event(id, d, n);
	b.hi = mono();
	return b;
}

/* The durations the trace can give a span from event a to event b. */
static void span_br(struct br a, struct br b, uint64_t *lo, uint64_t *hi)
{
	*lo = b.lo > a.hi ? b.lo - a.hi : 0;
	*hi = b.hi - a.lo;
}

/* What the recording needs for the brackets to hold exactly: timestamps
 * read from CLOCK_MONOTONIC (docs/implementation-defined.md, "The clock";
 * `posixtrace record` passes its environment on to the program). */
static void span_clock(int on)
{
	REQUIRE((on ? setenv("POSIXTRACE_CLOCK", "monotonic", 1)
	            : unsetenv("POSIXTRACE_CLOCK")) == 0);
}

static trace_event_id_t tid_of(const char *name)
{
	trace_event_id_t id;
	REQUIRE(posix_trace_eventid_open(name, &id) == 0);
	return id;
}

#endif
