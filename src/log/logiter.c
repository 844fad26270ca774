/*
 * logiter.c -- trace log reader, reading: events in order, one block in
 * memory at a time (or the blocks that overlap in time, merged); each
 * block is read and checked again when reached, as the file may have
 * changed since it was opened (or, opened through the block index, was
 * never read before).
 */
#include <errno.h>
#include <stdlib.h>
#include "logpriv.h"

static void put_ts(struct timespec *t, uint64_t ns)
{
	t->tv_sec = (time_t)(ns / 1000000000u);
	t->tv_nsec = (long)(ns % 1000000000u);
}

/* Payload out, truncated to the caller's buffer as getnext_event says. */
static void put_data(struct pt_logr *r, struct posix_trace_event_info *ev, void *buf,
                     size_t cap, size_t *len, const void *data, size_t n, int recorded_trunc)
{
	size_t k = n < cap ? n : cap;

	if (k)
		memcpy(buf, data, k);
	*len = k;
	r->full_len = n;
	ev->posix_truncation_status = k < n ? POSIX_TRACE_TRUNCATED_READ
	                            : recorded_trunc ? POSIX_TRACE_TRUNCATED_RECORD
	                            : POSIX_TRACE_NOT_TRUNCATED;
}

static void put_error(struct pt_logr *r, struct posix_trace_event_info *ev, void *buf,
                      size_t cap, size_t *len, uint64_t ts, int code)
{
	memset(ev, 0, sizeof *ev);
	r->last_lost_ok = 0;
	r->last_id = 0;
	ev->posix_event_id = POSIX_TRACE_ERROR;
	if (ts < r->out_ts) /* (after a group merged: its latest event) */
		ts = r->out_ts;
	r->out_ts = ts;
	put_ts(&ev->posix_timestamp, ts);
	put_data(r, ev, buf, cap, len, &code, sizeof code, 0);
}

/* Reads and checks the block of item it into r->buf. */
static int load(struct pt_logr *r, const struct pt_logr_item *it)
{
	struct pt_log_bhdr b;
	uint64_t first, last;
	uint32_t nev;
	int rc;

	if (it->len > r->buf_cap || it->len < PT_LOG_BLK)
		return EBADMSG;
	if ((rc = pt_logr_rd(r, it->off, r->buf, it->len)))
		return rc;
	if (!pt_logr_bhdr(r, r->buf, &b) || b.seq != it->seq || b.len != it->len ||
	    pt_logr_unchunk(r, r->buf, &b) || b.type != PT_LOG_BT_EVENTS ||
	    pt_logr_check(r, r->buf, &b, 0, &first, &last, &nev))
		return EBADMSG;
	/* (opened through the index, or from checkpoints) the block is what
	 * its entry says */
	if ((r->indexed || r->census_ckpt) && ((nev != 0) != it->has_ev || it->has_lost != r->chk_lost ||
	                   (nev && (first != it->ts || last != it->last_ts ||
	                            r->chk_max_ts != it->max_ts || r->chk_min_ts != it->min_ts))))
		return EBADMSG;
	r->nw = b.nw;
	r->base_ts = b.base;
	r->rleft = b.nrec;
	r->roff = PT_LOG_BLK + b.nw * PT_LOG_WENT;
	r->where = 0;
	r->loaded = 1;
	r->fresh = 1;
	return 0;
}

/* ------------------------------------------------------------ merging
 * A late event (its thread was preempted between stamping and publishing
 * it) lies in a block after events stamped later: the blocks whose time
 * ranges overlap are read together, each split into runs in which time
 * does not step back, and the runs merged by a heap keyed by (timestamp,
 * run number), the runs numbered in file order (equal timestamps come in
 * the order of the file).  A sliding window: the next block of the file
 * is loaded only once the heap's earliest event comes after the smallest
 * timestamp of the blocks from that one on (later_min: it, or a block
 * after it, may hold an event before), and a block is let go (its slot
 * and buffer kept for the next) once its runs are read.  The merge ends
 * when every block loaded is read, and the blocks after it are read as
 * before.  Memory: the blocks that overlap the time being read (about one
 * per writer busy at once), not the whole chain of blocks that overlap
 * one another; at most PT_LOGR_MERGE_BYTES (a late event far back: the
 * merge ends before the block that would need more) and a run per step
 * back. */

void pt_logr_order(struct pt_logr *r)
{
	uint64_t lo = UINT64_MAX;

	for (size_t k = r->nitems; k-- > 0;) {
		struct pt_logr_item *it = &r->items[k];
		if (it->error)
			lo = UINT64_MAX;
		else if (it->has_ev && it->min_ts < lo)
			lo = it->min_ts;
		it->later_min = lo;
	}
}

static uint64_t merge_cap(const struct pt_logr *r)
{
	return r->merge_cap ? r->merge_cap : PT_LOGR_MERGE_BYTES;
}

/* The item after the group that starts at item i: the group ends before
 * the first block from which on no block (up to an error item) holds an
 * event stamped before the group's latest one; also at r->stop, at an
 * error item, or at PT_LOGR_MERGE_BYTES (wrap_ts: the blocks that may
 * hold the first event). */
static size_t group_end(const struct pt_logr *r, size_t i)
{
	size_t lim = r->stop < r->nitems ? r->stop : r->nitems, end = i + 1;
	uint64_t hi = r->items[i].has_ev ? r->items[i].max_ts : 0, bytes = r->items[i].len;
	uint64_t cap = merge_cap(r);

	for (; end < lim; end++) {
		const struct pt_logr_item *it = &r->items[end];
		if (it->error || it->later_min >= hi || (bytes += it->len) > cap)
			break;
		if (it->has_ev && it->max_ts > hi)
			hi = it->max_ts;
	}
	return end;
}

/* Some block after item i's (up to r->stop or an error item) holds an
 * event stamped before i's latest, and the two fit the bound: group_end
 * would not end the group at i + 1. */
static int overlaps_next(const struct pt_logr *r, size_t i)
{
	size_t lim = r->stop < r->nitems ? r->stop : r->nitems;

	if (i + 1 >= lim)
		return 0;
	const struct pt_logr_item *it = &r->items[i], *nx = it + 1;
	return !nx->error && nx->later_min < (it->has_ev ? it->max_ts : 0) &&
	       (uint64_t)it->len + nx->len <= merge_cap(r);
}

static inline int hent_less(const struct pt_logr_hent *x, const struct pt_logr_hent *y)
{
	return x->ts < y->ts || (x->ts == y->ts && x->run < y->run);
}

static void sift_down(struct pt_logr *r, size_t i)
{
	struct pt_logr_hent *h = r->m.heap, t;
	size_t n = r->m.nheap;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && hent_less(&h[c + 1], &h[c]))
			c++;
		if (!hent_less(&h[c], &h[i]))
			return;
		t = h[c], h[c] = h[i], h[i] = t;
		i = c;
	}
}

static void sift_up(struct pt_logr *r, size_t i)
{
	struct pt_logr_hent *h = r->m.heap, t;

	while (i > 0 && hent_less(&h[i], &h[(i - 1) / 2])) {
		t = h[i], h[i] = h[(i - 1) / 2], h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/* The run's next event record from u->off on (records of names and map
 * entries passed; they are never short): 1 and its timestamp in u->ts,
 * or 0 at the run's end. */
static int run_next(const struct pt_logr *r, const struct pt_logr_mblk *b, struct pt_logr_run *u)
{
	int sw = r->swap;

	while (u->off < u->end) {
		const unsigned char *p = b->buf + u->off;
		unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		if (!(info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ))) {
			u->ts = b->base + pt_log_get32(p + PT_LOG_R_DELTA, sw);
			return 1;
		}
		u->off += PT_LOG_REC + pt_log_get16(p + PT_LOG_R_LEN, sw);
	}
	return 0;
}

static int add_run(struct pt_logr_mblk *b, uint32_t off, uint32_t end, uint64_t where)
{
	if (b->nrun == b->run_cap) {
		uint32_t ncap = b->run_cap ? 2 * b->run_cap : 16;
		struct pt_logr_run *nr = realloc(b->run, ncap * sizeof *nr);
		if (!nr)
			return ENOMEM;
		b->run = nr, b->run_cap = ncap;
	}
	b->run[b->nrun++] = (struct pt_logr_run){ off, end, where, 0 };
	return 0;
}

static void swap_buf(struct pt_logr *r, struct pt_logr_mblk *b)
{
	unsigned char *t = b->buf;
	uint32_t tc = b->cap;

	b->buf = r->buf, r->buf = t;
	b->cap = r->buf_cap, r->buf_cap = tc;
}

/* A free slot for a block on top of m->bfree (taken by the caller): 0 or
 * ENOMEM. */
static int slot_free(struct pt_logr_merge *m)
{
	if (m->nbfree)
		return 0;
	if (m->nblk == m->blk_cap) {
		size_t ncap = m->blk_cap ? 2 * m->blk_cap : 8;
		struct pt_logr_mblk *nb = realloc(m->blk, ncap * sizeof *nb);
		if (!nb)
			return ENOMEM;
		memset(nb + m->blk_cap, 0, (ncap - m->blk_cap) * sizeof *nb);
		m->blk = nb;
		uint32_t *nf = realloc(m->bfree, ncap * sizeof *nf);
		if (!nf)
			return ENOMEM; /* (m->blk larger, its room unused) */
		m->bfree = nf, m->blk_cap = ncap;
	}
	m->bfree[m->nbfree++] = (uint32_t)m->nblk++;
	return 0;
}

/* Block slot's runs all read: the slot is free again. */
static void blk_release(struct pt_logr *r, uint32_t slot)
{
	struct pt_logr_merge *m = &r->m;

	m->nrun -= m->blk[slot].nrun;
	r->merge_bytes -= m->blk[slot].len;
	m->bfree[m->nbfree++] = slot;
}

/* The block of item it, loaded in r->buf, takes a free slot (its buffer
 * swapped with the slot's), is split into runs and they go in the heap. */
static int group_add(struct pt_logr *r, const struct pt_logr_item *it)
{
	struct pt_logr_merge *m = &r->m;
	struct pt_logr_mblk *b;
	uint32_t slot;
	int sw = r->swap, rc;

	if ((rc = slot_free(m)))
		return rc;
	slot = m->bfree[m->nbfree - 1];
	b = &m->blk[slot];
	if (b->cap < r->buf_cap) { /* (a spare buffer as large as r->buf) */
		unsigned char *nbuf = realloc(b->buf, r->buf_cap);
		if (!nbuf)
			return ENOMEM;
		b->buf = nbuf, b->cap = r->buf_cap;
	}
	swap_buf(r, b);
	b->nw = r->nw, b->base = r->base_ts, b->gen = 0, b->len = it->len, b->nrun = 0;

	uint32_t off = r->roff, start = off;
	uint64_t where = r->where, start_where = where, prev = 0;
	int have = 0;
	for (uint32_t i = 0; i < r->rleft; i++) {
		const unsigned char *p = b->buf + off;
		uint32_t n = pt_log_get16(p + PT_LOG_R_LEN, sw);
		unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		uint32_t hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
		if (!(info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ))) {
			uint64_t ts = b->base + pt_log_get32(p + PT_LOG_R_DELTA, sw);
			if (have && ts < prev) {
				if ((rc = add_run(b, start, off, start_where)))
					goto undo;
				start = off, start_where = where;
			}
			prev = ts, have = 1;
			if (hl == PT_LOG_REC)
				where = pt_log_get64(p + PT_LOG_R_WHERE, sw);
		}
		off += hl + n;
	}
	if ((rc = add_run(b, start, off, start_where)))
		goto undo;
	if (m->nheap + b->nrun > m->heap_cap) {
		size_t ncap = m->heap_cap ? 2 * m->heap_cap : 64;
		ncap = ncap < m->nheap + b->nrun ? m->nheap + b->nrun : ncap;
		struct pt_logr_hent *nh = realloc(m->heap, ncap * sizeof *nh);
		if (!nh) {
			rc = ENOMEM;
			goto undo;
		}
		m->heap = nh, m->heap_cap = ncap;
	}
	/* (nothing fails from here) */
	m->nbfree--;
	b->live = 0;
	for (uint32_t i = 0; i < b->nrun; i++)
		if (run_next(r, b, &b->run[i])) {
			m->heap[m->nheap] = (struct pt_logr_hent){ b->run[i].ts, m->seq + i, slot, i };
			sift_up(r, m->nheap++);
			b->live++;
		}
	m->seq += b->nrun;
	m->nrun += b->nrun;
	if (it->has_ev && it->max_ts > m->hi)
		m->hi = it->max_ts;
	r->loaded = 0;
	r->merge_bytes += b->len;
	if (r->merge_bytes > r->merge_peak)
		r->merge_peak = r->merge_bytes;
	if (!b->live) /* (names and map entries only) */
		blk_release(r, slot);
	return 0;
undo: /* (memory) the block back in r->buf, as loaded */
	b->nrun = 0;
	swap_buf(r, b);
	return rc;
}

/* No block held, none in the heap. */
static void merge_clear(struct pt_logr *r)
{
	struct pt_logr_merge *m = &r->m;

	m->nblk = m->nbfree = m->nheap = m->nrun = 0;
	r->merge_bytes = 0;
}

/* m->load_ts: the smallest timestamp from the next block not loaded on
 * (UINT64_MAX: no block is to be loaded any more). */
static void merge_load_ts(struct pt_logr *r)
{
	struct pt_logr_merge *m = &r->m;
	size_t lim = r->stop < r->nitems ? r->stop : r->nitems;

	m->load_ts = m->full || m->next >= lim || r->items[m->next].error
	           ? UINT64_MAX : r->items[m->next].later_min;
}

/* The run of heap entry e: its next record is a RESUME */
static int run_resume(const struct pt_logr *r, const struct pt_logr_hent *e)
{
	const struct pt_logr_mblk *b = &r->m.blk[e->blk];
	const unsigned char *p = b->buf + b->run[e->idx].off;

	return (pt_log_get16(p + PT_LOG_R_INFO, r->swap) & PT_LOG_ID_MASK) == POSIX_TRACE_RESUME;
}

/* After an OVERFLOW (m->ovf_run): the heap entry of the first run from
 * its on whose next record is a RESUME, SIZE_MAX if none. */
static size_t resume_at(const struct pt_logr *r)
{
	const struct pt_logr_merge *m = &r->m;
	size_t j = SIZE_MAX;

	for (size_t k = 0; k < m->nheap; k++) {
		uint64_t run = m->heap[k].run;
		if (run >= m->ovf_run && (j == SIZE_MAX || run < m->heap[j].run) &&
		    run_resume(r, &m->heap[k]))
			j = k;
	}
	return j;
}

/* The blocks the next event may be in, loaded: as long as the next one
 * not loaded, or one after it, may hold an event stamped before the
 * heap's earliest (equal: the earliest comes first, in the order of the
 * file); after an OVERFLOW whose RESUME is not in the heap, the blocks
 * that overlap those loaded too (the group group_end gives, where the
 * RESUME was looked for).  A block that does not fit the bounds, or does
 * not load, ends the merge before it (it is read, or told, after). */
static void merge_load(struct pt_logr *r)
{
	struct pt_logr_merge *m = &r->m;
	uint64_t cap = merge_cap(r);

	while (m->nheap && m->load_ts != UINT64_MAX) {
		const struct pt_logr_item *it = &r->items[m->next];
		if (m->heap[0].ts <= m->load_ts &&
		    (m->ovf_run == UINT64_MAX || m->load_ts >= m->hi || resume_at(r) != SIZE_MAX))
			break;
		if (r->merge_bytes + it->len > cap || load(r, it)) {
			m->full = 1;
		} else {
			r->fresh = 0;
			if (m->nrun + r->rleft > PT_LOGR_MERGE_RUNS || group_add(r, it)) {
				r->loaded = 0;
				m->full = 1;
			} else {
				m->next++;
			}
		}
		merge_load_ts(r);
	}
}

/* Before the next event of the merge is picked. */
static inline void merge_fill(struct pt_logr *r)
{
	const struct pt_logr_merge *m = &r->m;

	if (m->nheap && (m->heap[0].ts > m->load_ts ||
	                 (m->ovf_run != UINT64_MAX && m->load_ts != UINT64_MAX)))
		merge_load(r);
}

/* Item r->cur is loaded (and checked): when a later block overlaps it, or
 * its own times step back, the merge begins with it (r->m.on); out of
 * memory, the blocks are read in the order of the file. */
static void group_open(struct pt_logr *r)
{
	struct pt_logr_merge *m = &r->m;

	r->fresh = 0;
	if (r->file_order || (!overlaps_next(r, r->cur) && r->chk_sorted))
		return;
	merge_clear(r);
	m->hi = 0, m->seq = 0, m->full = 0;
	if (group_add(r, &r->items[r->cur]))
		return; /* (memory) the block as it is, still loaded */
	m->ovf_run = r->last_id == POSIX_TRACE_OVERFLOW ? 0 : UINT64_MAX; /* (its RESUME first, if in the merge) */
	m->ovf_ts = r->out_ts;
	m->on = 1;
	m->next = r->cur + 1;
	merge_load_ts(r);
}

static void group_done(struct pt_logr *r)
{
	r->m.on = 0;
	r->cur = r->m.next;
	r->loaded = 0;
}

/* Which heap entry's record comes next (m->nheap > 0, merge_fill done),
 * and *ts, the time it is told at: the earliest, except after an
 * OVERFLOW, whose RESUME comes next, as in the file (the first run from
 * the OVERFLOW's on whose next record is a RESUME), stamped as the event
 * after it or, when that is earlier (another thread's late event, stamped
 * inside the gap), as that event but not before the OVERFLOW: a pair is
 * never split and nothing steps back (docs/implementation-defined.md,
 * "Where losses are told", applied to the order read). */
static size_t merge_pick(const struct pt_logr *r, uint64_t *ts)
{
	const struct pt_logr_merge *m = &r->m;
	size_t j;

	*ts = m->heap[0].ts;
	if (m->ovf_run == UINT64_MAX)
		return 0;
	if ((j = resume_at(r)) == SIZE_MAX)
		return 0; /* (no RESUME left in the merge: the next event) */
	if (j) /* the earliest left is the top: the RESUME no later than it */
		*ts = m->heap[0].ts > m->ovf_ts ? m->heap[0].ts : m->ovf_ts;
	return j;
}

/* The record of heap entry j (merge_pick) taken: its block, header and
 * where; the run moved past it (its block let go when it was its last;
 * the block and its buffer stay as they are until the next merge_fill). */
static const unsigned char *merge_take(struct pt_logr *r, size_t j, uint64_t ts,
                                       const struct pt_logr_mblk **blk, uint32_t *hl,
                                       uint64_t *where)
{
	struct pt_logr_merge *m = &r->m;
	int sw = r->swap;
	uint64_t run = m->heap[j].run;
	uint32_t slot = m->heap[j].blk;
	struct pt_logr_mblk *b = &m->blk[slot];
	struct pt_logr_run *u = &b->run[m->heap[j].idx];
	const unsigned char *p = b->buf + u->off;
	unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);

	*hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
	if (*hl == PT_LOG_REC)
		u->where = pt_log_get64(p + PT_LOG_R_WHERE, sw);
	*where = u->where;
	*blk = b;
	if (ts > r->out_ts)
		r->out_ts = ts;
	r->told_early += ts < m->heap[j].ts; /* (merge_pick: a RESUME's) */
	m->ovf_run = (info & PT_LOG_ID_MASK) == POSIX_TRACE_OVERFLOW ? run : UINT64_MAX;
	m->ovf_ts = ts;
	u->off += *hl + pt_log_get16(p + PT_LOG_R_LEN, sw);
	if (run_next(r, b, u)) {
		m->heap[j].ts = u->ts; /* (later: down) */
		sift_down(r, j);
	} else {
		m->heap[j] = m->heap[--m->nheap];
		if (j < m->nheap) {
			sift_down(r, j);
			sift_up(r, j);
		}
		if (!--b->live)
			blk_release(r, slot);
	}
	return p;
}

void pt_logr_merge_free(struct pt_logr *r)
{
	struct pt_logr_merge *m = &r->m;

	for (size_t i = 0; i < m->blk_cap; i++) {
		free(m->blk[i].buf);
		free(m->blk[i].run);
	}
	free(m->blk);
	free(m->bfree);
	free(m->heap);
	memset(m, 0, sizeof *m);
}

static void merge_stop(struct pt_logr *r)
{
	r->fresh = 0;
	r->last_id = 0;
	r->m.on = 0;
	merge_clear(r);
	r->out_ts = 0;
}

/* A wrapped log's oldest record kept may be the RESUME of a gap whose
 * OVERFLOW was in the block before, overwritten: that gap is part of the
 * wrap's, whose RESUME takes its place and its count.  1 (the record
 * passed, its count in *lost) if so; else nothing moves but the records
 * of names and objects before it (pt_logr_next() passes them too), and a
 * block that does not load is left for pt_logr_next() to tell. */
static int orphan_resume(struct pt_logr *r, uint64_t *lost)
{
	int sw = r->swap;

	while (r->cur < r->nitems && r->cur < r->stop && !r->items[r->cur].error) {
		if (!r->loaded && load(r, &r->items[r->cur]))
			return 0;
		if (!r->rleft) {
			r->loaded = 0;
			r->cur++;
			continue;
		}
		const unsigned char *p = r->buf + r->roff;
		uint32_t n = pt_log_get16(p + PT_LOG_R_LEN, sw);
		unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		uint32_t hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
		int names = (info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ)) != 0;
		if (!names && ((info & PT_LOG_ID_MASK) != POSIX_TRACE_RESUME || !(info & PT_LOG_RF_LOST)))
			return 0;
		r->roff += hl + n;
		r->rleft--;
		if (names)
			continue;
		if (hl == PT_LOG_REC) /* (the writer a short record after it has) */
			r->where = pt_log_get64(p + PT_LOG_R_WHERE, sw);
		*lost = pt_log_get64(p + hl, sw); /* (checked: 8 bytes) */
		return 1;
	}
	return 0;
}

/* The oldest event kept: the smallest timestamp of the first group */
static uint64_t wrap_ts(const struct pt_logr *r)
{
	uint64_t ts = r->items[0].ts;

	if (r->items[0].error)
		return ts;
	for (size_t k = 0, end = group_end(r, 0); k < end; k++)
		if (r->items[k].has_ev && r->items[k].min_ts < ts)
			ts = r->items[k].min_ts;
	return ts;
}

/* A LOOP log that wrapped lost its oldest blocks: an OVERFLOW/RESUME pair
 * before the oldest event kept tells it, as a stream tells its losses.
 * The first lost event's time is not in the log any more: both take the
 * oldest kept event's, the latest bound that keeps the order.  The RESUME
 * carries the count overwritten (r->lost) when the END block says it; a
 * log never finished does not know it (r->last_lost_ok 0). */
static int put_wrap(struct pt_logr *r, struct posix_trace_event_info *ev, size_t *len)
{
	if (r->wrap_state >= 2)
		return 0;
	if (!r->nitems) { /* nothing kept: nothing to put it before */
		r->wrap_state = 2;
		return 0;
	}
	memset(ev, 0, sizeof *ev);
	ev->posix_event_id = r->wrap_state ? POSIX_TRACE_RESUME : POSIX_TRACE_OVERFLOW;
	r->last_id = 0;
	ev->posix_truncation_status = POSIX_TRACE_NOT_TRUNCATED;
	put_ts(&ev->posix_timestamp, wrap_ts(r));
	*len = 0;
	r->full_len = 0;
	r->last_lost_ok = 0;
	if (r->wrap_state++) {
		/* the stream's count before the oldest event kept is not in
		 * the log: 0, so the first gap kept counts the gaps
		 * overwritten too; or, when no gap is kept, all of them
		 * (they were all told before it); or the count of a RESUME
		 * kept whose OVERFLOW was not, which this one stands for */
		uint64_t lost;
		int orphan = orphan_resume(r, &lost);
		r->last_lost_ok = r->has_status || orphan;
		r->last_lost = orphan ? lost : r->lost_kept || !r->has_stream_lost ? 0 : r->stream_lost;
		r->wrap_told = r->has_status ? r->lost : 0;
	}
	return 1;
}

/* The block of the current item did not load (rc): one error event for
 * it (and, opened through the index, for the damaged stretch it starts,
 * as a scan at open has it: at the time of the last event before it, or
 * the first after it at the start of the log). */
static void damaged(struct pt_logr *r, int rc, struct posix_trace_event_info *ev, void *buf,
                    size_t cap, size_t *len)
{
	uint64_t ts = r->items[r->cur].ts;
	size_t first = r->cur++;

	if (r->indexed) {
		while (r->cur < r->nitems && r->cur < r->stop && load(r, &r->items[r->cur]))
			r->cur++;
		ts = first ? r->items[first - 1].last_ts
		   : r->cur < r->nitems ? r->items[r->cur].ts : 0;
	}
	put_error(r, ev, buf, cap, len, ts, rc);
}

/* An event record p (header hl bytes, payload length n, info, its where)
 * of the block blk out at time ts, as getnext returns it. */
static inline __attribute__((always_inline)) void
put_event(struct pt_logr *r, const unsigned char *blk, uint64_t ts, const unsigned char *p,
          uint32_t hl, uint32_t n, unsigned info, uint64_t where,
          struct posix_trace_event_info *ev, void *buf, size_t cap, size_t *len)
{
	int sw = r->swap;
	const unsigned char *w = blk + PT_LOG_BLK + (unsigned)(where >> PT_LOG_WHERE_WI) * PT_LOG_WENT;
	unsigned char v[4];

	ev->posix_event_id = r->last_id = info & PT_LOG_ID_MASK;
	ev->posix_pid = (pid_t)(int32_t)pt_log_get32(w + PT_LOG_W_PID, sw);
	ev->posix_thread_id = (pthread_t)pt_log_get64(w + PT_LOG_W_THREAD, sw);
	ev->posix_prog_address = (void *)(uintptr_t)(where & PT_MASK48);
	put_ts(&ev->posix_timestamp, ts);
	p += hl;
	r->last_lost_ok = (info & PT_LOG_RF_LOST) != 0;
	if (r->last_lost_ok) { /* n == 8, checked: the count, not data */
		r->last_lost = pt_log_get64(p, sw);
		n = 0;
	} else if ((info & PT_LOG_RF_INT) && sw) { /* n == 4, checked */
		v[0] = p[3], v[1] = p[2], v[2] = p[1], v[3] = p[0];
		p = v;
	}
	put_data(r, ev, buf, cap, len, p, n, (info & PT_LOG_RF_TRUNC) != 0);
}

int pt_logr_next(struct pt_logr *r, struct posix_trace_event_info *ev, void *buf,
                 size_t cap, size_t *len, int *unavailable)
{
	int sw = r->swap;

	if (!r->buf || !ev || !len || !unavailable || (cap && !buf))
		return EINVAL;
	if (put_wrap(r, ev, len)) {
		*unavailable = 0;
		return 0;
	}
	for (;;) {
		const unsigned char *p;
		unsigned info;
		uint32_t n, hl;
		uint64_t where;
		int rc;

		/* (most calls: the next record of the block being read) */
		if (!(r->loaded && !r->fresh && r->rleft && r->cur < r->stop)) {
			const struct pt_logr_item *it;
			if (r->m.on) { /* a group of blocks merged */
				const struct pt_logr_mblk *b;
				uint64_t ts;
				merge_fill(r);
				if (!r->m.nheap) {
					group_done(r);
					continue;
				}
				size_t j = merge_pick(r, &ts);
				p = merge_take(r, j, ts, &b, &hl, &where);
				*unavailable = 0;
				put_event(r, b->buf, ts, p, hl, pt_log_get16(p + PT_LOG_R_LEN, sw),
				          pt_log_get16(p + PT_LOG_R_INFO, sw), where, ev, buf, cap, len);
				return 0;
			}
			if (r->cur >= r->nitems || r->cur >= r->stop) {
				*unavailable = 1;
				*len = 0;
				return 0;
			}
			it = &r->items[r->cur];
			*unavailable = 0;
			if (it->error) {
				r->cur++;
				put_error(r, ev, buf, cap, len, it->ts, (int)it->error);
				return 0;
			}
			if (!r->loaded && (rc = load(r, it))) {
				damaged(r, rc, ev, buf, cap, len);
				return 0;
			}
			if (r->fresh) { /* (from where the reading is in it) */
				group_open(r);
				if (r->m.on)
					continue;
			}
			if (!r->rleft) { /* (its events came in order: the latest is its largest) */
				if (it->has_ev && it->max_ts > r->out_ts)
					r->out_ts = it->max_ts;
				r->loaded = 0;
				r->cur++;
				continue;
			}
		}
		/* a record of a checked block */
		*unavailable = 0;
		p = r->buf + r->roff;
		n = pt_log_get16(p + PT_LOG_R_LEN, sw);
		info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		/* (checked: a short record follows an event record) */
		hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
		r->roff += hl + n;
		r->rleft--;
		if (info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ))
			continue;
		where = hl == PT_LOG_REC ? pt_log_get64(p + PT_LOG_R_WHERE, sw) : r->where;
		r->where = where;
		put_event(r, r->buf, r->base_ts + pt_log_get32(p + PT_LOG_R_DELTA, sw), p, hl, n, info,
		          where, ev, buf, cap, len);
		return 0;
	}
}

/* The next events of the group being merged into b, as pt_logr_next()
 * takes them: writers added to b's table as met (a batch ends when it is
 * full), and after an event that carries a loss count. */
/* An 8-byte payload into a batch's event (src/ext.h: PT_EXT_BEV_QWORD). */
static void batch_qword(struct pt_ext_bevent *e, const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	e->flags = PT_EXT_BEV_QWORD;
	e->word = (int32_t)(uint32_t)v;
	e->hi = (uint32_t)(v >> 32);
}

static void merge_batch(struct pt_logr *r, struct pt_ext_batch *b)
{
	struct pt_logr_merge *m = &r->m;
	const int sw = r->swap;
	size_t n = 0;
	uint32_t gen = ++m->gen;

	if (!gen) { /* (wrapped: every map is stale again) */
		for (size_t i = 0; i < m->nblk; i++)
			m->blk[i].gen = 0;
		gen = m->gen = 1;
	}
	b->nw = 0;
	while (n < PT_EXT_BATCH) {
		uint64_t ts;
		merge_fill(r);
		if (!m->nheap)
			break;
		size_t j = merge_pick(r, &ts);
		struct pt_logr_mblk *k = &m->blk[m->heap[j].blk];
		struct pt_logr_run *u = &k->run[m->heap[j].idx];
		const unsigned char *p = k->buf + u->off;
		unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		uint64_t where = info & PT_LOG_RF_SHORT ? u->where : pt_log_get64(p + PT_LOG_R_WHERE, sw);
		unsigned wi = (unsigned)(where >> PT_LOG_WHERE_WI);
		if (k->gen != gen) {
			memset(k->map, 0xff, sizeof k->map);
			k->gen = gen;
		}
		if (k->map[wi] == 0xffff) {
			if (b->nw == PT_EXT_BATCH_W)
				break;
			const unsigned char *w = k->buf + PT_LOG_BLK + wi * PT_LOG_WENT;
			b->w[b->nw] = (struct pt_ext_bwriter){
				(int32_t)pt_log_get32(w + PT_LOG_W_PID, sw), 0,
				pt_log_get64(w + PT_LOG_W_THREAD, sw) };
			k->map[wi] = (uint16_t)b->nw++;
		}
		const struct pt_logr_mblk *kb;
		uint32_t hl, len = pt_log_get16(p + PT_LOG_R_LEN, sw);
		uint16_t bw = k->map[wi];
		(void)merge_take(r, j, ts, &kb, &hl, &where);
		struct pt_ext_bevent *e = &b->ev[n++];
		e->ts = ts;
		r->last_id = info & PT_LOG_ID_MASK;
		e->id = (uint16_t)(info & PT_LOG_ID_MASK);
		e->w = bw;
		e->flags = e->pad = 0;
		e->word = 0;
		e->hi = 0;
		r->last_lost_ok = (info & PT_LOG_RF_LOST) != 0;
		if (r->last_lost_ok) { /* (the count, not data) the batch ends here */
			r->last_lost = pt_log_get64(p + hl, sw);
			e->flags = PT_EXT_BEV_LOST;
			break;
		}
		if (len == 4) { /* as pt_logr_next() copies it: an INT in this host's order */
			uint32_t v = (info & PT_LOG_RF_INT) ? pt_log_get32(p + hl, sw)
			                                    : pt_log_get32(p + hl, 0);
			e->flags = PT_EXT_BEV_WORD;
			memcpy(&e->word, &v, 4);
		} else if (len == 8) { /* the bytes as they are (a wait's ns) */
			batch_qword(e, p + hl);
		}
	}
	if (!m->nheap)
		group_done(r);
	b->n = n;
	r->full_len = 0;
}

/* The records of the loaded block from r->roff on, as pt_logr_next()
 * takes them (the block was checked whole when loaded: lengths, writer
 * indexes and LOST payloads are sound), into b. */
static void batch_block(struct pt_logr *r, struct pt_ext_batch *b)
{
	const int sw = r->swap;
	const unsigned char *buf = r->buf;
	uint32_t roff = r->roff, rleft = r->rleft;
	uint64_t where = r->where, base = r->base_ts;
	size_t n = 0;

	b->nw = r->nw;
	for (uint32_t i = 0; i < r->nw; i++) {
		const unsigned char *w = buf + PT_LOG_BLK + i * PT_LOG_WENT;
		b->w[i].pid = (int32_t)pt_log_get32(w + PT_LOG_W_PID, sw);
		b->w[i].pad = 0;
		b->w[i].thread = pt_log_get64(w + PT_LOG_W_THREAD, sw);
	}
	while (rleft && n < PT_EXT_BATCH) {
		const unsigned char *p = buf + roff;
		uint32_t len = pt_log_get16(p + PT_LOG_R_LEN, sw);
		unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		uint32_t hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
		roff += hl + len;
		rleft--;
		if (info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ))
			continue;
		if (hl == PT_LOG_REC)
			where = pt_log_get64(p + PT_LOG_R_WHERE, sw);
		struct pt_ext_bevent *e = &b->ev[n++];
		e->ts = base + pt_log_get32(p + PT_LOG_R_DELTA, sw);
		e->id = (uint16_t)(info & PT_LOG_ID_MASK);
		e->w = (uint16_t)(where >> PT_LOG_WHERE_WI);
		e->flags = e->pad = 0;
		e->word = 0;
		e->hi = 0;
		r->last_lost_ok = (info & PT_LOG_RF_LOST) != 0;
		if (r->last_lost_ok) { /* (the count, not data) the batch ends here */
			r->last_lost = pt_log_get64(p + hl, sw);
			e->flags = PT_EXT_BEV_LOST;
			break;
		}
		if (len == 4) { /* as pt_logr_next() copies it: an INT in this host's order */
			uint32_t v = (info & PT_LOG_RF_INT) ? pt_log_get32(p + hl, sw)
			                                    : pt_log_get32(p + hl, 0);
			e->flags = PT_EXT_BEV_WORD;
			memcpy(&e->word, &v, 4);
		} else if (len == 8) { /* the bytes as they are (a wait's ns) */
			batch_qword(e, p + hl);
		}
	}
	b->n = n;
	r->last_id = n ? b->ev[n - 1].id : r->last_id;
	if (n && b->ev[n - 1].ts > r->out_ts) /* (a block whose times do not step back) */
		r->out_ts = b->ev[n - 1].ts;
	r->roff = roff;
	r->rleft = rleft;
	r->where = where;
	r->full_len = 0;
}

int pt_logr_next_batch(struct pt_logr *r, struct pt_ext_batch *b)
{
	struct posix_trace_event_info ev;
	unsigned char data[8];
	size_t len;
	int unavailable = 0, rc;

	if (!r->buf || !b)
		return EINVAL;
	b->n = b->nw = 0;
	while (r->wrap_state >= 2 && (r->m.on || (r->cur < r->nitems && r->cur < r->stop &&
	                                         !r->items[r->cur].error))) {
		if (r->m.on) {
			merge_batch(r, b);
			if (b->n)
				return 0;
			continue;
		}
		if (!r->loaded && (rc = load(r, &r->items[r->cur]))) {
			damaged(r, rc, &ev, data, sizeof data, &len);
			goto one;
		}
		if (r->fresh) {
			group_open(r);
			if (r->m.on)
				continue;
		}
		if (r->rleft) {
			batch_block(r, b);
			if (!r->rleft) { /* (the next call starts at the next block) */
				r->loaded = 0;
				r->cur++;
			}
			if (b->n)
				return 0;
			continue; /* a block of names or map entries only */
		}
		r->loaded = 0;
		r->cur++;
	}
	/* the end, or an event the reader makes: as pt_logr_next() */
	if ((rc = pt_logr_next(r, &ev, data, sizeof data, &len, &unavailable)) != 0 || unavailable)
		return rc;
one:
	b->nw = 1;
	b->w[0] = (struct pt_ext_bwriter){ (int32_t)ev.posix_pid, 0, (uint64_t)ev.posix_thread_id };
	struct pt_ext_bevent *e = &b->ev[0];
	memset(e, 0, sizeof *e);
	e->ts = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u + (uint64_t)ev.posix_timestamp.tv_nsec;
	e->id = (uint16_t)ev.posix_event_id;
	e->flags = r->last_lost_ok ? PT_EXT_BEV_LOST
	         : r->full_len == 4 ? PT_EXT_BEV_WORD : 0;
	if (e->flags == PT_EXT_BEV_WORD)
		memcpy(&e->word, data, 4);
	else if (!e->flags && r->full_len == 8 && len == 8)
		batch_qword(e, data);
	b->n = 1;
	return 0;
}

void pt_logr_rewind(struct pt_logr *r)
{
	merge_stop(r);
	r->told_early = 0;
	r->cur = 0;
	r->last_lost_ok = 0;
	r->loaded = 0;
	r->wrap_state = r->wrapped ? 0 : 2;
	r->wrap_told = 0;
}

/* The loss count of the last LOST record of the block of item it, if it
 * has one (*found). */
static int last_lost_in(struct pt_logr *r, const struct pt_logr_item *it, uint64_t *lost,
                        int *found)
{
	int rc, sw = r->swap;

	*found = 0;
	if ((rc = load(r, it)) != 0)
		return rc;
	for (; r->rleft; r->rleft--) {
		const unsigned char *p = r->buf + r->roff;
		uint32_t n = pt_log_get16(p + PT_LOG_R_LEN, sw);
		unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		uint32_t hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
		if (info & PT_LOG_RF_LOST) { /* (checked: 8 bytes) */
			*lost = pt_log_get64(p + hl, sw);
			*found = 1;
		}
		r->roff += hl + n;
	}
	r->loaded = 0;
	return 0;
}

int pt_logr_seek(struct pt_logr *r, uint64_t ts, uint64_t *lost_before)
{
	size_t i;
	int found = 0, rc = 0;

	*lost_before = 0;
	for (i = 0; i < r->nitems; i++) /* the first block that may hold ts or later */
		if ((r->items[i].error ? r->items[i].ts : r->items[i].max_ts) >= ts)
			break;
	for (size_t k = i; k-- > 0 && !found;) /* the count of the last gap before it */
		if (!r->items[k].error && r->items[k].has_lost &&
		    (rc = last_lost_in(r, &r->items[k], lost_before, &found)) != 0)
			break;
	merge_stop(r);
	r->cur = i;
	r->loaded = 0;
	r->last_lost_ok = 0;
	/* a wrapped log: the pair before its oldest event comes again from
	 * the start; from further on, it was passed (its count in the count
	 * before, as a reader from the start would have it) */
	r->wrap_state = r->wrapped && i == 0 ? 0 : 2;
	r->wrap_told = r->wrapped && i > 0 && r->has_status ? r->lost : 0;
	if (r->wrapped && i > 0 && !found)
		*lost_before = r->lost_kept || !r->has_stream_lost ? 0 : r->stream_lost;
	*lost_before += r->wrap_told;
	return rc;
}

void pt_logr_stop_after(struct pt_logr *r, uint64_t ts)
{
	size_t k = r->nitems;

	/* past the last item that may hold an event at or before ts: an
	 * error item (its time is a neighbour's) at or before it, or a block
	 * whose smallest timestamp is */
	for (; ts != UINT64_MAX && k > 0; k--) {
		const struct pt_logr_item *it = &r->items[k - 1];
		if (it->error ? it->ts <= ts : (it->has_ev || !r->indexed) && it->min_ts <= ts)
			break;
	}
	r->stop = k;
	if (r->m.on) /* (the blocks the merge may load) */
		merge_load_ts(r);
}

const struct pt_attr_img *pt_logr_attr(const struct pt_logr *r)
{
	return &r->attr;
}

int pt_logr_status(const struct pt_logr *r, struct posix_trace_status_info *st)
{
	if (!r->has_status)
		return ENOENT;
	*st = r->status;
	return 0;
}

const char *pt_logr_name(const struct pt_logr *r, unsigned id)
{
	if (!r->names || id >= PT_NIDS || !(r->known[id / 64] >> (id % 64) & 1))
		return NULL;
	return r->names[id];
}

int pt_logr_next_id(const struct pt_logr *r, unsigned from)
{
	for (unsigned id = from; r->names && id < PT_NIDS; id++)
		if (r->known[id / 64] >> (id % 64) & 1)
			return (int)id;
	return -1;
}
