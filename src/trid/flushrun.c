/*
 * flushrun.c -- the flusher's fast path: a run of one writer's records
 * copied from the stream straight into the log block being built.
 *
 * Most of the time the flusher's next events are simply the next records
 * of the chunk it is in (the reader's "run", read.c).  Taking them one at
 * a time costs, per event, the reader's general checks, a conversion to a
 * struct timespec and back, a copy into the flusher's staging area and the
 * log writer's checks.  Here a run is read, checked and encoded in one
 * loop: each record is checked as the reader checks it (id, length, bounds
 * of the chunk), its tick converted to nanoseconds, and its log record
 * (docs/log-format.md) written where the log writer's next record goes.
 * Then, once for the whole run, the reader makes sure the chunk was not
 * overwritten meanwhile (and, in a LOOP stream, claims the records from a
 * thief with one CAS); if it was, the bytes written are simply not added
 * to the block and the general path takes over.
 *
 * Anything unusual ends the run before that record: a system event, an
 * event type whose name is not in the log yet, a payload longer than the
 * log takes whole, a record that does not fit its chunk, a timestamp the
 * block cannot express, the end of the block's room.  The general path
 * (flusher.c's drain) deals with it, so the log is the same either way.
 */
#include "trid.h"

/* Payload words of a record (relaxed loads: the memory may be written by
 * the traced process) into the log, whole words: the caller made room for
 * them. */
static inline void copy_words(unsigned char *dst, const pt_word *src, uint32_t n)
{
	for (uint32_t i = 0; i < n; i += 8) {
		uint64_t w = atomic_load_explicit(&src[i / 8], PT_WORD_LOAD);
		__builtin_memcpy(dst + i, &w, 8);
	}
}

unsigned pt_flush_run(struct pt_trid *t, struct pt_logw *lw, const uint64_t *named, int *full)
{
	struct pt_read_run r;
	struct pt_logw_span s;

	*full = 0;
	if (!pt_read_run_begin(t, &r))
		return 0;
	const struct pt_ractive *a = r.a;
	int64_t first = pt_clock_ns(&t->clk, a->next_ts);
	if (first < 0 || !pt_logw_span_open(lw, r.w->pid, r.w->thread, (uint64_t)first, &s))
		return 0;

	uint32_t lim = t->view.max_data < s.max_payload ? t->view.max_data : s.max_payload;
	uint32_t off = a->off, end = a->commit, used = 0, k = 0;
	uint64_t base = a->base_ts, tick = 0, ns = 0, addr = a->addr, last = a->addr;
	const char *chunk = (const char *)r.chunk;

	while (k < r.max && off + PT_REC_SHORT <= end) {
		const pt_word *rec = (const pt_word *)(chunk + off);
		uint64_t w0 = atomic_load_explicit(&rec[0], PT_WORD_LOAD), w1 = 0;
		uint32_t id = PT_REC_ID(w0), n = PT_REC_LEN(w0), wide = PT_REC_WIDE(w0) ? 1 : 0;
		uint32_t words = (n + 7u) & ~7u, size = PT_REC_BYTES(n, wide);

		if (id < PT_SYS_IDS || id >= PT_NIDS || !(named[id / 64] >> (id % 64) & 1) ||
		    n > lim || off + size > end || (!wide && !off))
			break;
		if (wide) {
			w1 = atomic_load_explicit(&rec[PT_REC_W1(n)], PT_WORD_LOAD);
			addr = w1 & PT_MASK48;
		}
		uint64_t tk = pt_rec_tick(base, w0, w1);
		if (tk >= r.limit)
			break;
		int64_t v;
		if (!pt_clock_ns_cached(&t->clk, tk, &v))
			v = pt_clock_ns(&t->clk, tk);
		if (v < 0 || (uint64_t)v < s.base || (uint64_t)v - s.base > UINT32_MAX)
			break;
		if (used + PT_LOG_REC + words > s.room) {
			*full = 1;
			break;
		}
		unsigned char *p = s.p + used;
		unsigned info = id | (PT_REC_FLAGS(w0) & PT_RF_TRUNC ? PT_LOG_RF_TRUNC : 0);
		uint32_t hl = pt_log_put_rec(p, (uint32_t)((uint64_t)v - s.base), n, info,
		                             addr | s.where, s.swap, &s.prev);
		copy_words(p + hl, rec + 1, n);
		used += hl + n;
		off += size;
		k++;
		tick = tk;
		ns = (uint64_t)v;
		last = addr;
	}
	if (!k || !pt_read_run_end(t, &r, off, k, tick, last)) {
		*full = 0;
		return 0;
	}
	pt_logw_span_close(lw, &s, used, k, ns);
	return k;
}
