/*
 * flushrun.c -- the flusher's fast path: the next records of the stream's
 * writers, merged by timestamp and copied from the stream straight into
 * the log block being built.
 *
 * Most of the time the flusher's next events are simply the next records
 * of the chunks its writers are in.  Taking them one at a time costs, per
 * event, the reader's general checks, a conversion to a struct timespec
 * and back, a copy into the flusher's staging area and the log writer's
 * checks.  Here they are read, checked and encoded in one loop: each
 * record is checked as the reader checks it (id, length, bounds of the
 * chunk), its tick converted to nanoseconds, and its log record
 * (docs/log-format.md) written where the log writer's next record goes.
 * The reader (read.c, pt_read_merge_begin) hands out one part per writer
 * with a record to read, each with the limit it may be read up to; the
 * loop takes the part whose next record comes first, for as long as it
 * stays first, then the next one, so threads whose events interleave
 * finely cost no more than a few compares per switch.  (In a LOOP stream,
 * and with more writers than PT_MERGE_MAX, the reader hands out a single
 * part: the run of the writer the last event came from.)  Then, once for
 * the whole merge, the reader makes sure no chunk was overwritten
 * meanwhile (and, in a LOOP stream, claims the records from a thief with
 * one CAS); if one was, the bytes written are simply not added to the
 * block and the general path takes over.
 *
 * Anything unusual ends the merge before that record: a system event, an
 * event type whose name is not in the log yet, a payload longer than the
 * log takes whole, a record that does not fit its chunk, a timestamp the
 * block cannot express, the end of the block's room, a part's limit, a
 * part read to the end of a sealed chunk (its writer's next chunk may
 * hold an earlier record).  The general path (flusher.c's drain) deals
 * with it, so the log is the same either way.
 */
#include "trid.h"

_Static_assert(PT_LOGW_SPAN_ADD >= PT_MERGE_MAX, "a merge's writers fit in one span");

/* Payload words of a record (relaxed loads: the memory may be written by
 * the traced process) into the log, whole words: the caller made room for
 * them. */
static inline void copy_words(unsigned char *dst, const pt_word *src, uint32_t n)
{
	uint32_t k = (n + 7u) / 8u, i = 0;

	for (; i + 4 <= k; i += 4) { /* (four words a turn: a third of the instructions) */
		uint64_t w0 = atomic_load_explicit(&src[i], PT_WORD_LOAD);
		uint64_t w1 = atomic_load_explicit(&src[i + 1], PT_WORD_LOAD);
		uint64_t w2 = atomic_load_explicit(&src[i + 2], PT_WORD_LOAD);
		uint64_t w3 = atomic_load_explicit(&src[i + 3], PT_WORD_LOAD);
		__builtin_memcpy(dst + 8 * i, &w0, 8);
		__builtin_memcpy(dst + 8 * i + 8, &w1, 8);
		__builtin_memcpy(dst + 8 * i + 16, &w2, 8);
		__builtin_memcpy(dst + 8 * i + 24, &w3, 8);
	}
	for (; i < k; i++) {
		uint64_t w = atomic_load_explicit(&src[i], PT_WORD_LOAD);
		__builtin_memcpy(dst + 8 * i, &w, 8);
	}
}

/* n words of a chunk (relaxed loads) to dst, eight a turn */
static inline void copy_run(unsigned char *dst, const pt_word *src, uint32_t n)
{
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w0 = atomic_load_explicit(&src[i], PT_WORD_LOAD);
		uint64_t w1 = atomic_load_explicit(&src[i + 1], PT_WORD_LOAD);
		uint64_t w2 = atomic_load_explicit(&src[i + 2], PT_WORD_LOAD);
		uint64_t w3 = atomic_load_explicit(&src[i + 3], PT_WORD_LOAD);
		uint64_t w4 = atomic_load_explicit(&src[i + 4], PT_WORD_LOAD);
		uint64_t w5 = atomic_load_explicit(&src[i + 5], PT_WORD_LOAD);
		uint64_t w6 = atomic_load_explicit(&src[i + 6], PT_WORD_LOAD);
		uint64_t w7 = atomic_load_explicit(&src[i + 7], PT_WORD_LOAD);
		unsigned char *d = dst + 8 * i;
		__builtin_memcpy(d, &w0, 8);
		__builtin_memcpy(d + 8, &w1, 8);
		__builtin_memcpy(d + 16, &w2, 8);
		__builtin_memcpy(d + 24, &w3, 8);
		__builtin_memcpy(d + 32, &w4, 8);
		__builtin_memcpy(d + 40, &w5, 8);
		__builtin_memcpy(d + 48, &w6, 8);
		__builtin_memcpy(d + 56, &w7, 8);
	}
	for (; i < n; i++) {
		uint64_t w = atomic_load_explicit(&src[i], PT_WORD_LOAD);
		__builtin_memcpy(dst + 8 * i, &w, 8);
	}
}
#define BURST_WIN 4096u /* bytes of a chunk copied at once at most (burst) */

/* A part's place while the merge reads it (kept apart from the reader's
 * state, which changes only if the whole merge is kept). */
struct cursor {
	uint32_t off, end, k, wi;
	uint64_t base, next, addr, tick, seq;
	int in_block; /* its writer is the span's already (wi) */
};

/* The records that follow one just written, as the loop below would
 * write them, when they are what a thread recording in a loop makes: each
 * short (no address: the call site of the record before it), of an event
 * type the log has the name of, not truncated, its tick in the clock
 * segment last used, before the bound and not before the tick of the
 * record before it, its time within the block's reach of the span's
 * base, room for it.  The first record that is anything else is left to
 * the loop, which decides what it is (a limit, the end of the room, a
 * system event...).  Each record costs a few compares, one multiply, an
 * 8-byte header store and its payload's words (whole words: a window of
 * the chunk is copied as it is, see below); the log is the same as the
 * loop's, byte for byte.  The clock's frontier moves as
 * pt_clock_ns_cached() moves it.  Each stretch of one type at least
 * BURST_PRE long is counted for the summary here (pt_logw_span_pre).  1
 * if it took any. */
struct burst {
	const char *chunk;
	const uint64_t *named;
	uint32_t off, end, k, kmax, used, wi;
	uint64_t tick, ns;
};
#define BURST_PRE 8u
/* (not inlined: alone, its loop keeps its values in registers) */
__attribute__((noinline)) static int burst(struct burst *b, struct pt_clock *c,
                                           struct pt_logw_span *s, uint32_t id,
                                           uint32_t lim, uint64_t base, uint64_t bound)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t lo = c->seg_tick, hi = c->seg_end < bound ? c->seg_end : bound;

	if (c->kind != PT_CLK_TSC || hi <= lo || s->swap || s->prev.legacy || !s->prev.ok ||
	    s->room < PT_LOG_REC)
		return 0;
	const uint64_t span = hi - lo, mult = c->seg_mult, blo = base - lo;
	const uint32_t b32 = (uint32_t)base;
	const int64_t nsoff = c->seg_ns + c->real_minus_mono - (int64_t)s->base;
	uint32_t key = id; /* (bits 32..47 of w0: the type, no flag) */
	uint64_t hdr = (uint64_t)(id | PT_LOG_RF_SHORT) << 48;
	/* (in locals, by pointers: the stores through op may alias anything
	 * to the compiler, and the fewer values live the fewer spills) */
	const char *rp = b->chunk + b->off, *const rend = b->chunk + b->end;
	unsigned char *op = s->p + b->used;
	const unsigned char *const oend = s->p + s->room - PT_LOG_REC; /* (room >= PT_LOG_REC) */
	uint32_t left = b->kmax - b->k;
	const uint32_t left0 = left;
	uint64_t dtl = 0; /* the tick (- lo) of the last record taken */
	/* the stretch of one type being taken: where it begins (its first
	 * record's time is in the header written there), and its count */
	const unsigned char *sop = op;
	uint32_t sleft = left;
	/* the window: small at first, so that a burst that stops soon copies
	 * little more than it takes; twice as large after one used half */
	size_t win = 256;
#define BURST_NS(dt) (s->base + (uint64_t)(nsoff + (int64_t)(uint64_t)( \
	((unsigned __int128)(dt) * mult) >> 32)))
/* another type the log knows (x: as below) */
#define BURST_OTHER(w0, x) \
	(((x) & 0xffffu) && !PT_REC_FLAGS(w0) && PT_REC_ID(w0) >= PT_SYS_IDS && \
	 PT_REC_ID(w0) < PT_NIDS && (b->named[PT_REC_ID(w0) / 64] >> (PT_REC_ID(w0) % 64) & 1))
/* ... whose stretch begins: the one before it counted */
#define BURST_SWITCH(w0) do { \
		BURST_STRETCH(); \
		key = PT_REC_ID(w0), hdr = (uint64_t)(key | PT_LOG_RF_SHORT) << 48; \
		sop = op, sleft = left; \
	} while (0)
#define BURST_STRETCH() do { \
		if (sleft - left >= BURST_PRE) { \
			uint32_t d0_; \
			__builtin_memcpy(&d0_, sop, 4); \
			uint64_t f_ = s->base + d0_, l_ = BURST_NS(dtl); \
			struct pt_logw_pre r_ = { (uint32_t)(sop - s->p), (uint32_t)(op - s->p), \
			                          b->wi, key, sleft - left, f_, l_, f_, l_ }; \
			pt_logw_span_pre(s, &r_); \
		} \
	} while (0)

	while (left && rp + PT_REC_SHORT <= rend) {
		uint64_t w0 = atomic_load_explicit((const pt_word *)rp, PT_WORD_LOAD);
		/* bits 32..63 of w0 xor the type, halves swapped: what is not the
		 * type (or a flag) above, the length below; so one compare says
		 * "this type, no flag, a length the log takes" */
		uint32_t x = (uint32_t)(w0 >> 32) ^ key, n = PT_REC_LEN(w0), words = (n + 7u) / 8u;
		if ((x << 16 | x >> 16) > lim || (size_t)(rend - rp) < PT_REC_SHORT + 8u * words) {
			if (BURST_OTHER(w0, x)) {
				BURST_SWITCH(w0);
				continue; /* (this record again, as of its type) */
			}
			break; /* flags (wide, truncated), a bad length, a system event... */
		}
		if (!(n & 7u)) {
			/* whole words of payload: such a record takes as many bytes
			 * in the log as in the chunk, so a window of the chunk is
			 * copied as it is, then each of its records of whole words
			 * gets its log header over its first word.  (The bytes
			 * copied past the last record taken are in the span's room,
			 * and not part of the block.) */
			size_t cap = (size_t)(rend - rp), free8 = (size_t)(oend + PT_LOG_REC - op) & ~(size_t)7;
			cap = (cap < free8 ? cap : free8) & ~(size_t)7;
			cap = cap < win ? cap : win;
			copy_run(op, (const pt_word *)rp, (uint32_t)(cap / 8u));
			const char *const wend = rp + cap;
			const uint32_t l1 = left;
			while (left && rp + PT_REC_SHORT <= wend) {
				w0 = atomic_load_explicit((const pt_word *)rp, PT_WORD_LOAD);
				x = (uint32_t)(w0 >> 32) ^ key, n = PT_REC_LEN(w0);
				if ((x << 16 | x >> 16) > lim || (n & 7u) ||
				    (size_t)(wend - rp) < PT_REC_SHORT + n) {
					if (BURST_OTHER(w0, x)) {
						BURST_SWITCH(w0);
						continue;
					}
					break; /* (the loop around decides) */
				}
				uint64_t dt = blo + (uint32_t)((uint32_t)w0 - b32);
				if (dt >= span || dt < dtl)
					goto done;
				int64_t d = nsoff +
				            (int64_t)(uint64_t)(((unsigned __int128)dt * mult) >> 32);
				if ((uint64_t)d > UINT32_MAX || op + n > oend)
					goto done;
				uint64_t h = (uint64_t)(uint32_t)d | (uint64_t)n << 32 | hdr;
				__builtin_memcpy(op, &h, 8);
				op += PT_REC_SHORT + n;
				rp += PT_REC_SHORT + n;
				dtl = dt;
				left--;
			}
			if (left == l1)
				break;
			if ((size_t)(wend - rp) <= cap / 2 && win < BURST_WIN)
				win *= 2; /* (half of it used at least: a larger one next) */
			continue;
		}
		uint64_t dt = blo + (uint32_t)((uint32_t)w0 - b32); /* its tick - lo */
		if (dt >= span || dt < dtl)
			break; /* beyond the segment or the bound; or a step back */
		int64_t d = nsoff + (int64_t)(uint64_t)(((unsigned __int128)dt * mult) >> 32);
		if ((uint64_t)d > UINT32_MAX || op + 8u * words > oend)
			break;
		uint64_t h = (uint64_t)(uint32_t)d | (uint64_t)n << 32 | hdr;
		__builtin_memcpy(op, &h, 8);
		const pt_word *src = (const pt_word *)rp + 1;
		unsigned char *dst = op + PT_LOG_REC_SHORT;
		uint32_t i = 0;
		for (; i + 4 <= words; i += 4) {
			uint64_t x0 = atomic_load_explicit(&src[i], PT_WORD_LOAD);
			uint64_t x1 = atomic_load_explicit(&src[i + 1], PT_WORD_LOAD);
			uint64_t x2 = atomic_load_explicit(&src[i + 2], PT_WORD_LOAD);
			uint64_t x3 = atomic_load_explicit(&src[i + 3], PT_WORD_LOAD);
			__builtin_memcpy(dst + 8 * i, &x0, 8);
			__builtin_memcpy(dst + 8 * i + 8, &x1, 8);
			__builtin_memcpy(dst + 8 * i + 16, &x2, 8);
			__builtin_memcpy(dst + 8 * i + 24, &x3, 8);
		}
		for (; i < words; i++) {
			uint64_t x0 = atomic_load_explicit(&src[i], PT_WORD_LOAD);
			__builtin_memcpy(dst + 8 * i, &x0, 8);
		}
		op += PT_LOG_REC_SHORT + n;
		rp += PT_REC_SHORT + 8u * words;
		dtl = dt;
		left--;
	}
done:
	if (left == left0)
		return 0;
	BURST_STRETCH();
	/* (ticks in order: the last is the largest; time grows with the tick
	 * in a segment) */
	if (c->seg_tail && lo + dtl > c->frontier)
		c->frontier = lo + dtl;
	b->ns = BURST_NS(dtl);
	b->tick = lo + dtl;
	b->off = (uint32_t)(rp - b->chunk);
	b->k += left0 - left;
	b->used = (uint32_t)(op - s->p);
	return 1;
#undef BURST_OTHER
#undef BURST_SWITCH
#undef BURST_STRETCH
#undef BURST_NS
#else
	(void)b, (void)c, (void)s, (void)id, (void)lim, (void)base, (void)bound;
	return 0;
#endif
}

/* x's next record comes before y's (read_next()'s order) */
static inline int before(const struct cursor *x, const struct cursor *y)
{
	return x->next < y->next || (x->next == y->next && x->seq < y->seq);
}

/* One merge of pt_flush_run(): the parts the reader handed out and the
 * span of the log block the records go into. */
struct run {
	struct pt_trid *t;
	struct pt_logw *lw;
	const uint64_t *named; /* the event types whose names the log has */
	uint32_t lim;          /* the longest payload the stream and the log take */
	struct pt_read_merge m;
	struct pt_logw_span s;
	struct cursor c[PT_MERGE_MAX]; /* each part's place (m.p[i]'s) */
	int opened;                    /* s opened (at the first record) */
	uint32_t used, total, lastp;   /* bytes in s, records taken, the last one's part */
	uint64_t ns;                   /* the last record's time */
	int full;                      /* stopped for want of room in the block */
};

/* The part whose next record comes first (the earliest; of equal
 * timestamps, the one in the older chunk, as read_next() orders them),
 * and until when it stays so (*bound): before the next record of any
 * other part (or at the same time, if its chunk is younger), and before
 * its own limit.  0 when the merge ends here: a part read to the end of a
 * sealed chunk (its writer's next chunk may come first), every part at
 * its commit (*caught: in a chunk still open), or the first part at its
 * limit (the general path goes on). */
static int pick(const struct run *r, uint32_t *cur, uint64_t *bound, int *caught)
{
	const struct pt_read_merge *m = &r->m;
	const struct cursor *c = r->c;
	uint32_t oth = PT_MERGE_MAX;
	int at_commit = 0;

	*cur = PT_MERGE_MAX;
	for (uint32_t i = 0; i < m->n; i++) {
		if (c[i].off + PT_REC_SHORT > c[i].end) {
			if (!m->p[i].open)
				return 0; /* its writer's next chunk may come first */
			at_commit = 1;
			continue;
		}
		if (*cur == PT_MERGE_MAX || before(&c[i], &c[*cur])) {
			oth = *cur;
			*cur = i;
		} else if (oth == PT_MERGE_MAX || before(&c[i], &c[oth])) {
			oth = i;
		}
	}
	if (*cur == PT_MERGE_MAX) {
		*caught = at_commit;
		return 0;
	}
	*bound = m->p[*cur].limit;
	if (oth != PT_MERGE_MAX && c[oth].next < UINT64_MAX) {
		uint64_t b = c[oth].next + (c[*cur].seq < c[oth].seq);
		*bound = b < *bound ? b : *bound;
	}
	return c[*cur].next < *bound;
}

/* The span's writer made part cur's (at its first record since the pick,
 * at time v, words of payload, used bytes in the span): the span opened
 * at the merge's first record, the writer added to the block's table at
 * its first.  0 when the block cannot take it. */
static int span_writer(struct run *r, uint32_t cur, uint64_t v, uint32_t words, uint32_t used)
{
	struct cursor *q = &r->c[cur];
	const struct pt_rwriter *w = r->m.p[cur].w;

	if (!r->opened) {
		if (!pt_logw_span_open(r->lw, w->pid, w->thread, v, &r->s))
			return 0;
		r->opened = 1;
		q->in_block = 1, q->wi = r->s.wi;
	} else if (!q->in_block) {
		if (!pt_logw_span_who(r->lw, &r->s, w->pid, w->thread, used + PT_LOG_REC + words))
			return 0;
		q->in_block = 1, q->wi = r->s.wi;
	}
	r->s.where = (uint64_t)q->wi << 48;
	return 1;
}

/* Part cur's records before bound into the span, the ordinary ones one by
 * one, a burst of the short ones that follow them; its cursor moved past
 * them.  1 if the merge goes on (the part was read to its commit, or
 * another part comes first); else something here is for the general
 * path, or the block is full (r->full). */
static int take_part(struct run *r, uint32_t cur, uint64_t bound)
{
	struct cursor *q = &r->c[cur];
	struct pt_logw_span *s = &r->s;
	const char *chunk = (const char *)r->m.p[cur].chunk;
	const uint64_t *named = r->named;
	const uint32_t lim = r->lim;
	uint32_t off = q->off, end = q->end, k = 0, kmax = r->m.max - r->total, used = r->used;
	uint64_t base = q->base, addr = q->addr, last = q->addr, tick = q->tick, ns = r->ns;
	int first = 1, go_on = 0;

	while (k < kmax) {
		if (off + PT_REC_SHORT > end) {
			go_on = 1; /* read to its end: the pick decides */
			break;
		}
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
		if (tk >= bound) {
			q->next = tk;
			go_on = tk < r->m.p[cur].limit; /* another part comes first */
			break;
		}
		int64_t v;
		if (!pt_clock_ns_cached(&r->t->clk, tk, &v))
			v = pt_clock_ns(&r->t->clk, tk);
		if (v < 0)
			break;
		if (__builtin_expect(first, 0)) { /* its first record since the pick */
			if (!span_writer(r, cur, (uint64_t)v, words, used))
				break;
			first = 0;
		}
		if ((uint64_t)v < s->base || (uint64_t)v - s->base > UINT32_MAX)
			break;
		if (used + PT_LOG_REC + words > s->room) {
			r->full = 1;
			break;
		}
		unsigned char *p = s->p + used;
		unsigned info = id | (PT_REC_FLAGS(w0) & PT_RF_TRUNC ? PT_LOG_RF_TRUNC : 0);
		uint32_t hl = pt_log_put_rec(p, (uint32_t)((uint64_t)v - s->base), n, info,
		                             addr | s->where, s->swap, &s->prev);
		copy_words(p + hl, rec + 1, n);
		used += hl + n;
		off += size;
		k++;
		tick = tk;
		ns = (uint64_t)v;
		last = addr;
		if (!PT_REC_FLAGS(w0) && k < kmax && off + PT_REC_SHORT <= end &&
		    !PT_REC_FLAGS(atomic_load_explicit((const pt_word *)(chunk + off),
		                                       PT_WORD_LOAD))) {
			/* its short followers, the quick way */
			struct burst b = { .chunk = chunk, .named = named, .off = off, .end = end,
			                   .k = k, .kmax = kmax, .used = used, .wi = q->wi };
			if (burst(&b, &r->t->clk, s, id, lim, base, bound))
				off = b.off, k = b.k, used = b.used, tick = b.tick, ns = b.ns;
		}
	}
	q->off = off, q->k += k, q->addr = last, q->tick = tick;
	r->used = used, r->ns = ns;
	r->total += k;
	if (k)
		r->lastp = cur;
	return go_on;
}

/* The merge ended: the reader told how far each part was read; if every
 * chunk was still the reader's, the span's records are the block's (its
 * writer: the last event's), and how many there are; else 0, and the
 * bytes written are not the block's. */
static unsigned run_end(struct run *r)
{
	for (uint32_t i = 0; i < r->m.n; i++) {
		struct pt_read_part *p = &r->m.p[i];
		p->off = r->c[i].off, p->n = r->c[i].k;
		p->tick = r->c[i].tick, p->addr = r->c[i].addr;
	}
	if (!r->total || !pt_read_merge_end(r->t, &r->m))
		return 0;
	r->s.wi = r->c[r->lastp].wi;
	r->s.who = (struct pt_logw_who){ r->m.p[r->lastp].w->pid, r->m.p[r->lastp].w->thread };
	pt_logw_span_close(r->lw, &r->s, r->used, r->total, r->ns);
	return r->total;
}

unsigned pt_flush_run(struct pt_trid *t, struct pt_logw *lw, const uint64_t *named, int *full,
                      int *caught)
{
	struct run r;
	uint32_t cur;
	uint64_t bound;

	*full = 0, *caught = 0;
	if (!pt_read_merge_begin(t, &r.m))
		return 0;
	r.t = t, r.lw = lw, r.named = named;
	r.lim = t->view.max_data < lw->max_payload ? t->view.max_data : lw->max_payload;
	r.opened = 0, r.used = 0, r.total = 0, r.lastp = 0, r.ns = 0, r.full = 0;
	for (uint32_t i = 0; i < r.m.n; i++) {
		const struct pt_ractive *a = r.m.p[i].a;
		r.c[i] = (struct cursor){ .off = a->off, .end = a->commit, .base = a->base_ts,
		                          .next = a->next_ts, .addr = a->addr, .tick = a->last_ts,
		                          .seq = a->seq };
	}
	while (pick(&r, &cur, &bound, caught) && take_part(&r, cur, bound))
		;
	unsigned n = run_end(&r);
	*full = n ? r.full : 0;
	return n;
}
