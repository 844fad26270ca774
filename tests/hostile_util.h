/*
 * hostile_util.h -- a stream attacked from inside, as a hostile traced
 * process would (hostile.c, snapshot_hostile.c, hostile_remote.c): threads
 * recording while another writes random words over the segment.
 *
 *   hu_rnd(&seed)       the next number of a xorshift64 sequence
 *   hu_stop             once set, hu_writer and hu_scribbler return
 *   hu_writer(w)        a thread recording events of random lengths (below)
 *   hu_scribbler(s)     a thread writing random words over a segment (below)
 *   hu_segment(trid)    the segment of a stream of this process, found as
 *                       its traced process finds its own mapping
 */
#ifndef POSIXTRACE_TEST_HOSTILE_UTIL_H
#define POSIXTRACE_TEST_HOSTILE_UTIL_H

#include <stdatomic.h>
#include <stdint.h>
#include <trace.h>
#include "t.h"
#include "../src/api/api.h"

static atomic_int hu_stop;

static inline uint64_t hu_rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

/* A writer: events of id, of 0 to max - 1 bytes (each byte its length),
 * the lengths drawn from the sequence that seed begins. */
#define HU_MAX 128
struct hu_writer { trace_event_id_t id; size_t max; uint64_t seed; };

static inline void *hu_writer(void *arg)
{
	const struct hu_writer *w = arg;
	unsigned char buf[HU_MAX];
	uint64_t seed = w->seed;

	REQUIRE(w->max > 0 && w->max <= HU_MAX);
	while (!atomic_load(&hu_stop)) {
		size_t n = hu_rnd(&seed) % w->max;
		memset(buf, (int)n, n);
		posix_trace_event(w->id, buf, n);
	}
	return NULL;
}

/* A scribbler: random 8-byte words over the segment h past its geometry
 * page, but its name table, as relaxed atomic stores (every access to
 * those words is atomic), a quarter of them small values (they pass more
 * checks) and a quarter all ones; one time in 64 a pool counter of the
 * header too (the loss ring's count among them if loss_gen is set). */
struct hu_scribble { struct pt_hdr *h; uint64_t seed; int loss_gen; };

static inline void *hu_scribbler(void *arg)
{
	const struct hu_scribble *sc = arg;
	struct pt_hdr *h = sc->h;
	uint64_t seed = sc->seed, lo = h->chunks_off, hi = h->seg_size;
	char *base = (char *)h;

	while (!atomic_load(&hu_stop)) {
		uint64_t off = (lo + hu_rnd(&seed) % (hi - lo)) & ~7ull;
		if (off >= h->names_off && off < h->acq_off)
			continue;
		uint64_t v = hu_rnd(&seed);
		if (v % 4 == 0)
			v %= 4096;
		else if (v % 4 == 1)
			v = ~0ull;
		atomic_store_explicit((_Atomic uint64_t *)(base + off), v, memory_order_relaxed);
		if (hu_rnd(&seed) % 64 == 0) {
			_Atomic uint64_t *with[] = { &h->acq_seq, &h->seal_seq, &h->reclaim, &h->loss_gen,
			                             &h->free_top, &h->sealed_bytes };
			_Atomic uint64_t *without[] = { &h->acq_seq, &h->seal_seq, &h->reclaim,
			                                &h->free_top, &h->sealed_bytes };
			_Atomic uint64_t *c = sc->loss_gen ? with[hu_rnd(&seed) % 6]
			                                   : without[hu_rnd(&seed) % 5];
			atomic_store_explicit(c, hu_rnd(&seed) % 100000, memory_order_relaxed);
		}
	}
	return NULL;
}

static inline struct pt_hdr *hu_segment(trace_id_t trid)
{
	struct pt_trid *t;
	REQUIRE(pt_trid_lock(trid, &t) == 0);
	struct pt_hdr *h = t->s.hdr;
	pt_trid_unlock(t);
	return h;
}

#endif
