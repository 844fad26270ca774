/*
 * sources_util.h -- events recorded by several sources of one program
 * (its main loop, its signal handlers), each payload checking itself, and
 * read back source by source (signals.c, fault_signals.c).
 *
 *   struct src_payload    a source's event: its source, its sequence in
 *                         it, noise made of both, and a check of the three
 *   src_payload(src, seq, noise)  one, its check filled in (async-signal-safe)
 *   SRC_NOISE(seq, src)   the noise of an ordinary event
 *   src_next(...)         the next event of the stream, sorted: a source's,
 *                         START, STOP, another, or a payload that does not
 *                         check (CHECKs once, at the end of the stream)
 */
#ifndef POSIXTRACE_TEST_SOURCES_UTIL_H
#define POSIXTRACE_TEST_SOURCES_UTIL_H

#include <pthread.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

struct src_payload { uint32_t src, check; uint64_t seq, noise; };

#define SRC_NOISE(seq, src) ((uint64_t)(seq) * 0x2545f4914f6cdd1dull + (src))

static inline struct src_payload src_payload(uint32_t src, uint64_t seq, uint64_t noise)
{
	struct src_payload p = { src, 0, seq, noise };
	p.check = t_check32(p.src, p.seq, p.noise);
	return p;
}

/* What src_next() counted of the events that are no source's. */
struct src_tally { uint64_t starts, stops, others, bad; };

/* The next event of trid (posix_trace_getnext_event(), blocking) that
 * comes from one of the n sources (ev[s] the id of source s): s, its
 * payload in *p and its thread in *thr.  START and STOP are counted in t
 * and stepped over, but a STOP ends the read when stop_ends is set; an
 * event of another id (OVERFLOW, ERROR, ...) is counted in t->others, a
 * source's event whose payload does not check in t->bad (its length, its
 * source, its check, and its noise unless it is the source noise_free's).
 * -1 at the end: that STOP, or no event left (then CHECKs that the call
 * worked and that the end was not "no event", as a stream stopped and
 * read to its end never says). */
static inline int src_next(trace_id_t trid, const trace_event_id_t *ev, unsigned n,
                           unsigned noise_free, int stop_ends, struct src_tally *t,
                           struct src_payload *p, pthread_t *thr)
{
	struct posix_trace_event_info info;
	unsigned char data[64];
	size_t len;
	int un = -1;

	for (;;) {
		int rc = posix_trace_getnext_event(trid, &info, data, sizeof data, &len, &un);
		if (rc || un) {
			CHECK_RC(rc, 0);
			CHECK_EQ(un, 0);
			return -1;
		}
		if (info.posix_event_id == POSIX_TRACE_START) {
			t->starts++;
			continue;
		}
		if (info.posix_event_id == POSIX_TRACE_STOP) {
			t->stops++;
			if (stop_ends)
				return -1;
			continue;
		}
		unsigned s = 0;
		while (s < n && ev[s] != info.posix_event_id)
			s++;
		if (s == n) {
			t->others++; /* OVERFLOW, ERROR, anything else */
			continue;
		}
		memcpy(p, data, len < sizeof *p ? len : sizeof *p);
		if (len != sizeof *p || p->src != s || p->check != t_check32(p->src, p->seq, p->noise) ||
		    (s != noise_free && p->noise != SRC_NOISE(p->seq, s))) {
			t->bad++;
			continue;
		}
		*thr = info.posix_thread_id;
		return (int)s;
	}
}

#endif
