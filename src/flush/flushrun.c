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
#include "flush.h"

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

/* The records that follow one just written, as the loop of take_part()
 * would write them, when they are what a thread recording in a loop
 * makes: each short (no address: the call site of the record before it),
 * of an event type the log has the name of, not truncated, its tick in
 * the clock segment last used, before the bound and not before the tick
 * of the record before it, its time within the block's reach of the
 * span's base, room for it.  The first record that is anything else is
 * left to that loop, which decides what it is (a limit, the end of the
 * room, a system event...).  Each record costs a few compares, one
 * multiply, an 8-byte header store and its payload's words (whole words:
 * a window of the chunk is copied as it is, see burst_window); the log is
 * the same as the loop's, byte for byte.  The clock's frontier moves as
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

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* A burst under way.  Its steps below are inlined into burst(), whose
 * loop keeps these in registers: pointers into the chunk and the span,
 * not offsets (the stores through op may alias anything to the
 * compiler, and the fewer values live the fewer spills). */
struct bstate {
	/* the clock segment: ticks lo .. lo + span (the bound at most) */
	uint64_t lo, span, mult, blo; /* blo: the part's base - lo */
	uint32_t b32;                 /* the part's base, low half */
	int64_t nsoff;                /* time - span base = nsoff + (tick - lo) * mult >> 32 */
	uint32_t lim;
	const struct burst *b; /* (its named and wi, read through it: fewer values live) */
	struct pt_logw_span *s;
	/* the type being taken: key (bits 32..47 of w0: the type, no flag),
	 * hdr its log header's type and flag */
	uint32_t key;
	uint64_t hdr;
	const char *rp, *rend;        /* the next record, the part's end */
	unsigned char *op;            /* where its log record goes */
	const unsigned char *oend;    /* the last place a log record fits */
	uint32_t left, left0;         /* records it may still take, at first */
	uint64_t dtl;                 /* the tick (- lo) of the last record taken */
	/* the stretch of one type being taken: where it begins (its first
	 * record's time is in the header written there), and its count */
	const unsigned char *sop;
	uint32_t sleft;
	/* the window: small at first, so that a burst that stops soon copies
	 * little more than it takes; twice as large after one used half */
	size_t win;
};
#define BURST_INLINE __attribute__((always_inline)) static inline

/* The time of tick lo + dt, in the span's terms (ns since its base) */
BURST_INLINE int64_t burst_dns(const struct bstate *z, uint64_t dt)
{
	return z->nsoff + (int64_t)(uint64_t)(((unsigned __int128)dt * z->mult) >> 32);
}

/* x: bits 32..63 of w0 xor the type, halves swapped: what is not the type
 * (or a flag) above, the length below; so one compare says "this type, no
 * flag, a length the log takes" */
BURST_INLINE uint32_t burst_x(const struct bstate *z, uint64_t w0)
{
	return (uint32_t)(w0 >> 32) ^ z->key;
}

BURST_INLINE int burst_fits(const struct bstate *z, uint32_t x)
{
	return (x << 16 | x >> 16) <= z->lim;
}

/* The stretch of one type ending here counted for the summary, if long
 * enough. */
BURST_INLINE void burst_stretch(struct bstate *z)
{
	struct pt_logw_span *s = z->s;

	if (z->sleft - z->left >= BURST_PRE) {
		uint32_t d0;
		__builtin_memcpy(&d0, z->sop, 4);
		uint64_t f = s->base + d0, l = s->base + (uint64_t)burst_dns(z, z->dtl);
		struct pt_logw_pre r = { (uint32_t)(z->sop - s->p), (uint32_t)(z->op - s->p), z->b->wi,
		                         z->key, z->sleft - z->left, f, l, f, l };
		pt_logw_span_pre(s, &r);
	}
}

/* Record w0 (x: as burst_x) is not of the type being taken: if it is of
 * another type the log knows, with no flag, its stretch begins (the one
 * before it counted) and 1 (it is taken again, as of its type); else 0. */
BURST_INLINE int burst_switch(struct bstate *z, uint64_t w0, uint32_t x)
{
	if (!((x & 0xffffu) && !PT_REC_FLAGS(w0) && PT_REC_ID(w0) >= PT_SYS_IDS &&
	      PT_REC_ID(w0) < PT_NIDS && (z->b->named[PT_REC_ID(w0) / 64] >> (PT_REC_ID(w0) % 64) & 1)))
		return 0;
	burst_stretch(z);
	z->key = PT_REC_ID(w0), z->hdr = (uint64_t)(z->key | PT_LOG_RF_SHORT) << (8 * PT_LOG_R_INFO);
	z->sop = z->op, z->sleft = z->left;
	return 1;
}

/* Records of whole words of payload: such a record takes as many bytes in
 * the log as in the chunk, so a window of the chunk is copied as it is,
 * then each of its records of whole words gets its log header over its
 * first word.  (The bytes copied past the last record taken are in the
 * span's room, and not part of the block.)  0 when the burst ends here
 * (a record beyond the segment or the bound, or that the block cannot
 * take; or none taken from the window); else 1, with the next window's
 * size. */
BURST_INLINE int burst_window(struct bstate *z)
{
	size_t cap = (size_t)(z->rend - z->rp);
	size_t free8 = (size_t)(z->oend + PT_LOG_REC - z->op) & ~(size_t)7;
	cap = (cap < free8 ? cap : free8) & ~(size_t)7;
	cap = cap < z->win ? cap : z->win;
	copy_run(z->op, (const pt_word *)z->rp, (uint32_t)(cap / 8u));
	const char *const wend = z->rp + cap;
	const uint32_t l1 = z->left;

	while (z->left && z->rp + PT_REC_SHORT <= wend) {
		uint64_t w0 = atomic_load_explicit((const pt_word *)z->rp, PT_WORD_LOAD);
		uint32_t x = burst_x(z, w0), n = PT_REC_LEN(w0);
		if (!burst_fits(z, x) || (n & 7u) || (size_t)(wend - z->rp) < PT_REC_SHORT + n) {
			if (burst_switch(z, w0, x))
				continue;
			break; /* (burst()'s loop decides) */
		}
		uint64_t dt = z->blo + (uint32_t)((uint32_t)w0 - z->b32);
		if (dt >= z->span || dt < z->dtl)
			return 0;
		int64_t d = burst_dns(z, dt);
		if ((uint64_t)d > UINT32_MAX || z->op + n > z->oend)
			return 0;
		uint64_t h = (uint64_t)(uint32_t)d | (uint64_t)n << (8 * PT_LOG_R_LEN) | z->hdr;
		__builtin_memcpy(z->op, &h, 8);
		z->op += PT_REC_SHORT + n;
		z->rp += PT_REC_SHORT + n;
		z->dtl = dt;
		z->left--;
	}
	if (z->left == l1)
		return 0;
	if ((size_t)(wend - z->rp) <= cap / 2 && z->win < BURST_WIN)
		z->win *= 2; /* (half of it used at least: a larger one next) */
	return 1;
}

/* One record (w0, n bytes of payload, not whole words) with its header and
 * its payload's words; 0 when the burst ends before it (beyond the segment
 * or the bound, a step back; a time or a size the block cannot take). */
BURST_INLINE int burst_one(struct bstate *z, uint64_t w0, uint32_t n)
{
	uint32_t words = (n + 7u) / 8u;
	uint64_t dt = z->blo + (uint32_t)((uint32_t)w0 - z->b32); /* its tick - lo */

	if (dt >= z->span || dt < z->dtl)
		return 0;
	int64_t d = burst_dns(z, dt);
	if ((uint64_t)d > UINT32_MAX || z->op + 8u * words > z->oend)
		return 0;
	uint64_t h = (uint64_t)(uint32_t)d | (uint64_t)n << (8 * PT_LOG_R_LEN) | z->hdr;
	__builtin_memcpy(z->op, &h, 8);
	copy_words(z->op + PT_LOG_REC_SHORT, (const pt_word *)z->rp + 1, n);
	z->op += PT_LOG_REC_SHORT + n;
	z->rp += PT_REC_SHORT + 8u * words;
	z->dtl = dt;
	z->left--;
	return 1;
}

/* The burst's start from b, for type id: 0 when it cannot run (a clock
 * other than the TSC, a segment ended, a byte-swapped or legacy log, no
 * record before it in the block, no room). */
BURST_INLINE int burst_start(struct bstate *z, const struct burst *b, const struct pt_clock *c,
                             struct pt_logw_span *s, uint32_t id, uint32_t lim, uint64_t base,
                             uint64_t bound)
{
	uint64_t lo = c->seg_tick, hi = c->seg_end < bound ? c->seg_end : bound;

	if (c->kind != PT_CLK_TSC || hi <= lo || s->swap || s->prev.legacy || !s->prev.ok ||
	    s->room < PT_LOG_REC)
		return 0;
	z->lo = lo, z->span = hi - lo, z->mult = c->seg_mult, z->blo = base - lo;
	z->b32 = (uint32_t)base;
	z->nsoff = c->seg_ns + c->real_minus_mono - (int64_t)s->base;
	z->lim = lim, z->b = b, z->s = s;
	z->key = id;
	z->hdr = (uint64_t)(id | PT_LOG_RF_SHORT) << (8 * PT_LOG_R_INFO);
	z->rp = b->chunk + b->off, z->rend = b->chunk + b->end;
	z->op = s->p + b->used;
	z->oend = s->p + s->room - PT_LOG_REC; /* (room >= PT_LOG_REC) */
	z->left = z->left0 = b->kmax - b->k;
	z->dtl = 0;
	z->sop = z->op, z->sleft = z->left;
	z->win = 256;
	return 1;
}

/* The burst's end: its last stretch counted, the clock's frontier moved,
 * b told where it stopped; 0 if it took nothing. */
BURST_INLINE int burst_end(struct bstate *z, struct burst *b, struct pt_clock *c)
{
	if (z->left == z->left0)
		return 0;
	burst_stretch(z);
	/* (ticks in order: the last is the largest; time grows with the tick
	 * in a segment) */
	if (c->seg_tail && z->lo + z->dtl > c->frontier)
		c->frontier = z->lo + z->dtl;
	b->ns = z->s->base + (uint64_t)burst_dns(z, z->dtl);
	b->tick = z->lo + z->dtl;
	b->off = (uint32_t)(z->rp - b->chunk);
	b->k += z->left0 - z->left;
	b->used = (uint32_t)(z->op - z->s->p);
	return 1;
}
#endif

/* (not inlined: alone, its loop keeps its values in registers) */
__attribute__((noinline)) static int burst(struct burst *b, struct pt_clock *c,
                                           struct pt_logw_span *s, uint32_t id,
                                           uint32_t lim, uint64_t base, uint64_t bound)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	struct bstate z;

	if (!burst_start(&z, b, c, s, id, lim, base, bound))
		return 0;
	while (z.left && z.rp + PT_REC_SHORT <= z.rend) {
		uint64_t w0 = atomic_load_explicit((const pt_word *)z.rp, PT_WORD_LOAD);
		uint32_t x = burst_x(&z, w0), n = PT_REC_LEN(w0);
		if (!burst_fits(&z, x) ||
		    (size_t)(z.rend - z.rp) < PT_REC_SHORT + 8u * ((n + 7u) / 8u)) {
			if (burst_switch(&z, w0, x))
				continue; /* (this record again, as of its type) */
			break; /* flags (wide, truncated), a bad length, a system event... */
		}
		if (!((n & 7u) ? burst_one(&z, w0, n) : burst_window(&z)))
			break;
	}
	return burst_end(&z, b, c);
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
	struct pt_stream *t;
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
	r->s.where = (uint64_t)q->wi << PT_LOG_WHERE_WI;
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
static unsigned run_close(struct run *r)
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

/* pt_logw_chunk()'s question: the chunk still in the life it had when
 * chosen (a clear frees chunks, and it is asked without t's lock) */
struct still { const struct pt_stream *t; const struct pt_ractive *a; };
static int still_ours(void *ctx)
{
	const struct still *s = ctx;
	return !pt_rchunk_gone(s->t, s->a);
}

/* (v9) The sealed chunks the merge reaches, each taken whole (what is
 * left of it) as a CHUNK block, written from the stream's memory without
 * reading it (pt_logw_chunk): a piece of at least PT_FLUSH_CHUNK_MIN
 * bytes of a chunk that its writer sealed (its count of records is then
 * final), in a FLUSH or UNTIL_FULL stream (in a LOOP stream a thief could
 * take the chunk while it is written), of a process's thread (a
 * controller's system events take the usual way), its ticks converted by
 * the clock segment its first one is in, which must reach now, and all of
 * them within 2^32 ns of the first, and before the next loss the reader
 * tells (it is marked the usual way, before what follows it); its first
 * the oldest of all writers' next records (others' may then fall in its
 * time: the blocks begin in time order), or, while a cut into a new part
 * waits (lw->chunk_apart, flush/rotate.c), all of it before every other
 * writer's next record; in a log cut by size (lw->chunk_until), with
 * room in the part for it and for the records older than its end, which
 * must go into the part before its cut (left_before).  The reader orders
 * the blocks by time (docs/log-format.md, "Reading in timestamp order").
 * Called, and returns, with t's lock held, which it lets go while it
 * writes.  How many records it took; 0: none (the merge goes on). */
#define PT_FLUSH_CHUNK_MIN 4096u

/* A type a CHUNK block holds but the log has no name of: its name from the
 * stream's table (the traced process's own if the table has none yet, as
 * the flusher's usual way does) into the log, or, without one, the type
 * allowed without a name (as the usual way writes its events).  1: try
 * again. */
static int name_it(struct pt_stream *t, struct pt_logw *lw, uint32_t id)
{
	char name[PT_NAME_SZ];

	if (pt_name_get(t->view.names, id, name) != 0 && t->tctl) {
		pt_names_copy(t->view.names, pt_ctl_names(t->tctl));
		if (pt_name_get(t->view.names, id, name) != 0)
			name[0] = 0;
	} else if (pt_name_get(t->view.names, id, name) != 0) {
		name[0] = 0;
	}
	if (name[0])
		return pt_logw_name(lw, id, name) == 0;
	lw->nameless[id / 64] |= 1ull << (id % 64);
	return 1;
}
/* At most how many bytes of records not written yet fall before tick hi,
 * besides the chunk a that writer w's next records are in: what a log cut
 * into parts by size must still take, in time order, before it can cut
 * after that chunk (the cut waits until nothing older than the part's
 * latest event is left to write: flush/rotate.c, pt_rotate_ready).  Each
 * writer's chunks the reader knows of that begin before then (w's after
 * a), whole: where their records lie in their time is not known (a
 * thread kept off the CPU for a while leaves a chunk that spans much of
 * the others' records).  Every writer, not only those of the merge: a
 * run of one writer's (pt_read_merge_begin) stops at the others' next
 * records, a chunk taken whole does not. */
static uint64_t left_before(const struct pt_stream *t, const struct pt_rwriter *w,
                            const struct pt_ractive *a, uint64_t hi)
{
	const struct pt_reader *rd = &t->rd;
	uint64_t sum = 0;

	for (uint32_t q = 0; q < rd->nw; q++) {
		if (rd->w[q].head < 0)
			continue;
		const struct pt_ractive *h = &rd->ck[rd->w[q].head];
		if (&rd->w[q] == w)
			h = a;
		else if (h->has_next && h->next_ts < hi)
			sum += h->commit - h->off;
		for (int32_t k = h->next; k >= 0 && rd->ck[k].base_ts < hi; k = rd->ck[k].next)
			sum += t->view.chunk_size;
	}
	return sum;
}

static unsigned take_chunks(struct pt_stream *t, struct pt_logw *lw, struct pt_read_merge *m)
{
	struct pt_clock *c = &t->clk;
	uint32_t max = pt_logw_chunk_max(lw);
	unsigned took = 0;

	if (!max || t->view.policy == POSIX_TRACE_LOOP || c->kind != PT_CLK_TSC)
		return 0;
	for (uint32_t i = 0; i < m->n; i++)
		m->p[i].n = 0;
	for (uint32_t i = 0; i < m->n && !took; i++) { /* (one: a cut may be due after it) */
		struct pt_read_part *p = &m->p[i];
		struct pt_ractive *a = p->a;
		uint32_t len = a->commit - a->off, nev;
		int64_t first, last;

		if (a->no_chunk || p->open || !a->has_next || p->w->level >= PT_LEVELS ||
		    len < PT_FLUSH_CHUNK_MIN || len > max || len % 8u)
			continue;
		nev = atomic_load_explicit(&t->view.chunks[a->idx].nevents, memory_order_relaxed);
		if (nev <= a->count || nev - a->count > len / PT_REC_SHORT)
			continue;
		/* a loss its reader tells first (its writer's next, the stream's
		 * next: the usual way marks it before what follows): all of it
		 * before that, or not at all (the walk makes sure) */
		const struct pt_reader *rd = &t->rd;
		uint64_t below = p->w->lost.n ? p->w->lost.e[0].ts : UINT64_MAX;
		if (rd->loss.n) {
			uint64_t at = rd->loss.e[0].ts == UINT64_MAX ? 0 : rd->loss.e[0].ts;
			below = at < below ? at : below; /* (of unknown time: told at once) */
		}
		if (a->next_ts >= below)
			continue;
		/* its ticks: from its next record's to its writer's next chunk's
		 * first (program order), or now, and before the loss; in one
		 * segment of the clock */
		uint64_t hi = a->next >= 0 ? rd->ck[a->next].base_ts : pt_now();
		/* while a cut waits, all of them before every other writer's
		 * next record: the CHUNK blocks of two threads busy at once
		 * overlap in time all along the log, and the cut waits until
		 * nothing older than the part's latest event is left to write
		 * (else consecutive parts would overlap: read as a group, with a
		 * note); the usual way merges those.  Else other writers'
		 * records may fall inside, but its first must be the oldest
		 * record of all writers (as the usual way begins with): blocks
		 * then begin in time order in the file, and the reader's merge (a
		 * sliding window, docs/log-format.md) holds those that span the
		 * time it reads, about one block a writer.  (Else a thread kept
		 * off the CPU with its chunk open, or a flusher behind, would
		 * leave records far back while the others' chunks went on: the
		 * reader would hold every block since, up to its bound.) */
		uint32_t j = 0;
		if (lw->chunk_apart)
			while (j < m->n && (j == i || m->p[j].a->next_ts > hi))
				j++;
		else
			while (j < m->n && (j == i || m->p[j].a->next_ts >= a->next_ts))
				j++;
		if (j < m->n)
			continue;
		hi = below <= hi ? below - 1 : hi;
		if (hi < a->next_ts)
			continue;
		/* a part by size: room for it and for every record before its
		 * end, or before the end of a block the part took before, which
		 * go in before the cut (else the usual way takes it, and the part
		 * ends near its size) */
		uint64_t upto = hi > lw->chunk_hi ? hi : lw->chunk_hi;
		if (lw->chunk_until && !lw->chunk_apart &&
		    lw->written + len + left_before(t, p->w, a, upto) > lw->chunk_until)
			continue;
		if (!pt_clock_ns_cached(c, a->next_ts, &first) || !pt_clock_ns_cached(c, hi, &last)) {
			(void)pt_clock_ns(c, hi);
			(void)pt_clock_ns(c, a->next_ts);
			if (!pt_clock_ns_cached(c, a->next_ts, &first) ||
			    !pt_clock_ns_cached(c, hi, &last))
				continue;
		}
		if (first < 0 || (uint64_t)(last - first) > UINT32_MAX)
			continue;
		struct pt_logw_chunk k = {
			.pid = p->w->pid, .thread = p->w->thread,
			.recs = (const char *)p->chunk + a->off, .len = len, .nev = nev - a->count,
			.btick = a->base_ts, .addr = a->off ? a->addr : 0,
			.seg = c->seg_tick, .mult = c->seg_mult, .nsoff = c->seg_ns + c->real_minus_mono,
			.base = (uint64_t)first, .below = below,
		};
		struct still st = { t, a };
		k.still = still_ours, k.still_ctx = &st;
		/* the file written without t's lock (a slow disk holds up no
		 * control call), as the usual way writes its blocks: the flusher
		 * is the stream's only reader, so what it read stays as it is */
		pt_unlock(&t->lock);
		int ok = pt_logw_chunk(lw, &k);
		pt_lock(&t->lock);
		if (!ok && k.unnamed < PT_NIDS && name_it(t, lw, k.unnamed)) { /* (once) */
			pt_unlock(&t->lock);
			ok = pt_logw_chunk(lw, &k);
			pt_lock(&t->lock);
		}
		if (!ok) {
			a->no_chunk = 1; /* (not again: the usual way takes it) */
			continue;
		}
		if (c->seg_tail && k.last_tick > c->frontier) /* (as pt_clock_ns_cached moves it) */
			c->frontier = k.last_tick;
		if (k.last_tick > lw->chunk_hi)
			lw->chunk_hi = k.last_tick;
		p->off = a->commit, p->n = k.nev, p->tick = k.last_tick ? k.last_tick : a->last_ts;
		p->addr = k.last_addr;
		took += k.nev;
	}
	if (took)
		(void)pt_read_merge_end(t, m);
	return took;
}

unsigned pt_flush_run(struct pt_stream *t, struct pt_logw *lw, const uint64_t *named, int *full,
                      int *caught)
{
	struct run r;
	uint32_t cur;
	uint64_t bound;

	*full = 0, *caught = 0;
	if (!pt_read_merge_begin(t, &r.m))
		return 0;
	unsigned took = take_chunks(t, lw, &r.m);
	if (took) {
		*full = 1; /* (the caller looks for a cut due before the next) */
		return took;
	}
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
	unsigned n = run_close(&r);
	*full = n ? r.full : 0;
	return n;
}
