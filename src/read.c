/*
 * read.c -- the analyzer side of an active stream.
 *
 * Each chunk holds one writer's records in order.  The reader finds chunks
 * through the acquisition log, keeps the ones it is reading in act[], and
 * each time returns the record with the smallest timestamp among them.
 * A chunk is added only once its first timestamp is not later than the
 * current minimum, so act[] stays about as small as the number of writers.
 * A chunk read to its end and sealed is given back to the pool: this is
 * what makes room in an UNTIL_FULL stream.
 *
 * Every value read from the segment is checked: a record that does not
 * fit its chunk ends that chunk with a POSIX_TRACE_ERROR event; a chunk
 * overwritten while being read (LOOP) is detected by its sequence number
 * and reported as an overflow.
 */
#include <stdlib.h>
#include <string.h>
#include "lib.h"

#define WAIT_SLICE_MS 20 /* a missed wake-up costs at most this much latency */

enum { TAKE_OK, TAKE_GONE, TAKE_BAD };

void pt_reader_reset(struct pt_trid *t)
{
	struct pt_reader *rd = &t->rd;
	struct pt_hdr *h = t->hdr;

	rd->nact = 0;
	rd->npend = 0;
	rd->next_aseq = atomic_load(&h->acq_seq) + 1;
	rd->loss_gen = atomic_load(&h->loss_gen);
	rd->ovf_pending = rd->need_resume = rd->start_pending = 0;
	rd->epoch = PT_ST_EPOCH(atomic_load(&h->state));
}

static int gone(const struct pt_trid *t, const struct pt_ractive *a)
{
	uint64_t ss = atomic_load_explicit(&t->view.chunks[a->idx].ss, memory_order_acquire);
	unsigned st = PT_SS_STATE(ss);
	return PT_SS_SEQ(ss) != a->seq || (st != PT_CK_OPEN && st != PT_CK_SEALED);
}

/* Look at the next record of a, if one is complete. */
static void peek(const struct pt_trid *t, struct pt_ractive *a)
{
	const struct pt_slot *v = &t->view;

	if (a->off + PT_REC_HDR > a->commit) {
		uint32_t c = atomic_load_explicit(&v->chunks[a->idx].commit, memory_order_acquire);
		if (c <= v->chunk_size && c >= a->commit)
			a->commit = c;
	}
	a->has_next = a->off + PT_REC_HDR <= a->commit;
	if (a->has_next) {
		const pt_word *rec = (const pt_word *)(v->data + (size_t)a->idx * v->chunk_size + a->off);
		uint64_t w0 = atomic_load_explicit(rec, PT_WORD_LOAD);
		a->next_ts = a->base_ts + (((w0 & PT_MASK48) - (a->base_ts & PT_MASK48)) & PT_MASK48);
	}
}

static void publish_progress(const struct pt_trid *t, const struct pt_ractive *a)
{
	struct pt_chunk *ck = &t->view.chunks[a->idx];
	atomic_store_explicit(&ck->rd_off, a->off, memory_order_relaxed);
	atomic_store_explicit(&ck->rd_count, a->count, memory_order_relaxed);
}

static void drop(struct pt_reader *rd, uint32_t i)
{
	rd->act[i] = rd->act[--rd->nact];
}

static struct pt_ractive *add(struct pt_trid *t, uint32_t idx, uint64_t seq)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_slot *v = &t->view;

	if (idx >= v->nchunks)
		return NULL;
	struct pt_chunk *ck = &v->chunks[idx];
	uint64_t ss = atomic_load_explicit(&ck->ss, memory_order_acquire);
	if (PT_SS_SEQ(ss) != seq || atomic_load_explicit(&ck->epoch, memory_order_relaxed) != rd->epoch)
		return NULL; /* recycled already, or from before a clear */
	if (rd->nact == rd->cap) {
		uint32_t cap = rd->cap ? rd->cap * 2 : 16;
		struct pt_ractive *n = realloc(rd->act, cap * sizeof *n);
		if (!n)
			return NULL;
		rd->act = n;
		rd->cap = cap;
	}
	struct pt_ractive *a = &rd->act[rd->nact];
	memset(a, 0, sizeof *a);
	a->idx = idx;
	a->seq = seq;
	a->base_ts = atomic_load_explicit(&ck->base_ts, memory_order_relaxed);
	a->pid = atomic_load_explicit(&ck->pid, memory_order_relaxed);
	a->thread = atomic_load_explicit(&ck->thread, memory_order_relaxed);
	if (gone(t, a))
		return NULL;
	rd->nact++;
	peek(t, a);
	return a;
}

/* Bring act[] up to date: new records in idle chunks, finished chunks
 * given back, and new chunks from the acquisition log. */
static void refresh(struct pt_trid *t)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_slot *v = &t->view;
	uint64_t min = UINT64_MAX;

	for (uint32_t i = 0; i < rd->nact;) {
		struct pt_ractive *a = &rd->act[i];
		if (!a->has_next) {
			uint64_t ss = atomic_load_explicit(&v->chunks[a->idx].ss, memory_order_acquire);
			peek(t, a);
			if (!a->has_next) {
				if (PT_SS_SEQ(ss) != a->seq || PT_SS_STATE(ss) == PT_CK_FREE ||
				    PT_SS_STATE(ss) == PT_CK_BUSY) {
					drop(rd, i); /* overwritten: loss_gen tells */
					continue;
				}
				if (PT_SS_STATE(ss) == PT_CK_SEALED) {
					publish_progress(t, a);
					pt_pool_free(&t->view, a->idx, a->seq, PT_CK_SEALED);
					drop(rd, i);
					continue;
				}
			}
		}
		if (a->has_next && a->next_ts < min)
			min = a->next_ts;
		i++;
	}

	uint64_t end = atomic_load_explicit(&t->hdr->acq_seq, memory_order_acquire);
	uint64_t len = (uint64_t)v->log_mask + 1;
	if (end >= rd->next_aseq + len)
		rd->next_aseq = end - len + 1; /* fell a whole log behind */
	for (unsigned p = 0; p < rd->npend;) { /* entries seen half-published */
		uint64_t q = rd->pend[p];
		uint64_t e = atomic_load_explicit(&v->acq_log[q & v->log_mask], memory_order_acquire);
		if (PT_LOG_SEQ(e) == PT_LOG_SEQ_OF(q) || end - q >= len) {
			if (PT_LOG_SEQ(e) == PT_LOG_SEQ_OF(q))
				add(t, PT_LOG_IDX(e), q);
			rd->pend[p] = rd->pend[--rd->npend];
		} else {
			p++;
		}
	}
	while (rd->next_aseq <= end) {
		uint64_t q = rd->next_aseq;
		uint64_t e = atomic_load_explicit(&v->acq_log[q & v->log_mask], memory_order_acquire);
		if (PT_LOG_SEQ(e) != PT_LOG_SEQ_OF(q)) {
			if (rd->npend < sizeof rd->pend / sizeof rd->pend[0])
				rd->pend[rd->npend++] = q;
			rd->next_aseq++;
			continue;
		}
		uint32_t idx = PT_LOG_IDX(e);
		if (min != UINT64_MAX && idx < v->nchunks &&
		    atomic_load_explicit(&v->chunks[idx].base_ts, memory_order_relaxed) > min)
			break; /* not needed yet: everything in it is later */
		struct pt_ractive *a = add(t, idx, q);
		if (a && a->has_next && a->next_ts < min)
			min = a->next_ts;
		rd->next_aseq++;
	}
}

static void synth(struct pt_trid *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                  size_t *dlen, trace_event_id_t id, uint64_t tick, const void *data, size_t len)
{
	size_t n = len < num ? len : num;

	memset(ev, 0, sizeof *ev);
	ev->posix_event_id = id;
	ev->posix_truncation_status = n < len ? POSIX_TRACE_TRUNCATED_READ : POSIX_TRACE_NOT_TRUNCATED;
	pt_ns_to_ts(pt_clock_ns(&t->clk, tick), &ev->posix_timestamp);
	if (n)
		memcpy(buf, data, n);
	*dlen = n;
}

static int take(struct pt_trid *t, struct pt_ractive *a, struct posix_trace_event_info *ev,
                void *buf, size_t num, size_t *dlen)
{
	const struct pt_slot *v = &t->view;
	const pt_word *rec = (const pt_word *)(v->data + (size_t)a->idx * v->chunk_size + a->off);
	uint64_t w0 = atomic_load_explicit(&rec[0], PT_WORD_LOAD);
	uint64_t w1 = atomic_load_explicit(&rec[1], PT_WORD_LOAD);
	uint32_t id = (uint32_t)(w0 >> 48) & 0xfffu, n = (uint32_t)(w1 >> 48);
	uint32_t size = PT_REC_SIZE(n);
	if (id >= PT_NIDS || a->off + size > a->commit)
		return gone(t, a) ? TAKE_GONE : TAKE_BAD;
	size_t cp = n < num ? n : num;
	pt_get_bytes(buf, rec + 2, (uint32_t)cp);
	PT_SEQ_FENCE();
	if (gone(t, a))
		return TAKE_GONE;

	ev->posix_event_id = id;
	ev->posix_pid = a->pid;
	ev->posix_thread_id = (pthread_t)a->thread;
	ev->posix_prog_address = (void *)(uintptr_t)(w1 & PT_MASK48);
	ev->posix_truncation_status = n > num ? POSIX_TRACE_TRUNCATED_READ
	                              : (w0 >> 60) & PT_RF_TRUNC ? POSIX_TRACE_TRUNCATED_RECORD
	                                                         : POSIX_TRACE_NOT_TRUNCATED;
	pt_ns_to_ts(pt_clock_ns(&t->clk, a->next_ts), &ev->posix_timestamp);
	*dlen = cp;
	a->off += size;
	a->count++;
	if ((a->count & 31) == 0)
		publish_progress(t, a);
	peek(t, a);
	return TAKE_OK;
}

/* One event into ev (returns 1), or nothing available now (returns 0). */
static int read_next(struct pt_trid *t, struct posix_trace_event_info *ev, void *buf,
                     size_t num, size_t *dlen)
{
	struct pt_reader *rd = &t->rd;
	struct pt_hdr *h = t->hdr;

	if (++rd->since_refine >= 4096) {
		rd->since_refine = 0;
		pt_clock_refine(&t->clk);
	}
	for (;;) {
		uint64_t lg = atomic_load_explicit(&h->loss_gen, memory_order_acquire);
		if (lg != rd->loss_gen) {
			uint64_t o = atomic_exchange(&h->ovf_ts, UINT64_MAX);
			rd->loss_gen = lg;
			if (!rd->ovf_pending || o < rd->ovf_ts)
				rd->ovf_ts = o;
			rd->ovf_pending = 1;
		}
		if (rd->ovf_pending) {
			uint64_t tick = rd->ovf_ts == UINT64_MAX ? pt_now() : rd->ovf_ts;
			synth(t, ev, buf, num, dlen, POSIX_TRACE_OVERFLOW, tick, NULL, 0);
			rd->ovf_pending = 0;
			rd->need_resume = 1;
			return 1;
		}
		refresh(t);
		struct pt_ractive *best = NULL;
		for (uint32_t i = 0; i < rd->nact; i++) {
			struct pt_ractive *a = &rd->act[i];
			if (a->has_next && (!best || a->next_ts < best->next_ts ||
			                    (a->next_ts == best->next_ts && a->seq < best->seq)))
				best = a;
		}
		if (!best) {
			uint32_t st = atomic_load(&h->state);
			if ((st & PT_ST_AUTOSTOP) && !(st & PT_ST_DEAD)) {
				/* drained: report the automatic stop, then run again */
				int one = 1;
				uint64_t tick = atomic_load(&h->stop_ts);
				synth(t, ev, buf, num, dlen, POSIX_TRACE_STOP, tick ? tick : pt_now(), &one,
				      sizeof one);
				uint32_t nw = (st & ~(PT_ST_AUTOSTOP | PT_ST_FULL)) | PT_ST_RUNNING;
				if (atomic_compare_exchange_strong(&h->state, &st, nw)) {
					rd->start_pending = 1;
					rd->start_ts = pt_now();
				}
				return 1;
			}
			return 0;
		}
		if (rd->start_pending) {
			trace_event_set_t f;
			for (unsigned i = 0; i < PT_NIDS / 64; i++)
				f.__bits[i] = atomic_load(&h->filter[i]);
			synth(t, ev, buf, num, dlen, POSIX_TRACE_START, rd->start_ts, &f, sizeof f);
			rd->start_pending = 0;
			return 1;
		}
		if (rd->need_resume) {
			synth(t, ev, buf, num, dlen, POSIX_TRACE_RESUME, best->next_ts, NULL, 0);
			rd->need_resume = 0;
			return 1;
		}
		switch (take(t, best, ev, buf, num, dlen)) {
		case TAKE_OK:
			return 1;
		case TAKE_GONE: /* overwritten under us; the stealer bumped loss_gen */
			drop(rd, (uint32_t)(best - rd->act));
			continue;
		default: {
			int err = EBADMSG;
			uint64_t tick = best->next_ts;
			pt_pool_free(&t->view, best->idx, best->seq, PT_CK_SEALED);
			drop(rd, (uint32_t)(best - rd->act));
			synth(t, ev, buf, num, dlen, POSIX_TRACE_ERROR, tick, &err, sizeof err);
			return 1;
		}
		}
	}
}

enum { MODE_BLOCK, MODE_TIMED, MODE_TRY };

static int getnext(trace_id_t trid, struct posix_trace_event_info *ev, void *data, size_t num,
                   size_t *dlen, int *unavail, int mode, const struct timespec *abs)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	if (!ev || !dlen || !unavail || (!data && num)) {
		pt_trid_unlock(t);
		return EINVAL;
	}
	for (;;) {
		if (read_next(t, ev, data, num, dlen)) {
			*unavail = 0;
			break;
		}
		if (mode == MODE_TRY) {
			*unavail = 1;
			*dlen = 0;
			break;
		}
		int ms = WAIT_SLICE_MS;
		if (mode == MODE_TIMED) {
			struct timespec now;
			if (!abs || abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000) {
				rc = EINVAL;
				break;
			}
			clock_gettime(CLOCK_REALTIME, &now);
			int64_t left = ((int64_t)abs->tv_sec - now.tv_sec) * 1000000000 +
			               (abs->tv_nsec - now.tv_nsec);
			if (left <= 0) {
				rc = ETIMEDOUT;
				break;
			}
			if (left < (int64_t)ms * 1000000)
				ms = (int)((left + 999999) / 1000000);
		}
		struct pt_hdr *h = t->hdr;
		uint32_t val = atomic_load(&h->futex);
		atomic_fetch_add(&h->waiters, 1);
		if (read_next(t, ev, data, num, dlen)) {
			*unavail = 0;
			break;
		}
		pt_trid_unlock(t);
		int w = pt_futex_wait(&h->futex, val, ms);
		if (pt_trid_lock(trid, &t))
			return EINVAL; /* shut down while we waited */
		if (w == EINTR) {
			rc = EINTR;
			break;
		}
	}
	pt_trid_unlock(t);
	return rc;
}

PT_API int posix_trace_getnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                                     void *restrict data, size_t num, size_t *restrict len,
                                     int *restrict unavailable)
{
	return getnext(trid, ev, data, num, len, unavailable, MODE_BLOCK, NULL);
}

PT_API int posix_trace_timedgetnext_event(trace_id_t trid,
                                          struct posix_trace_event_info *restrict ev,
                                          void *restrict data, size_t num,
                                          size_t *restrict len, int *restrict unavailable,
                                          const struct timespec *restrict abstime)
{
	return getnext(trid, ev, data, num, len, unavailable, MODE_TIMED, abstime);
}

PT_API int posix_trace_trygetnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                                        void *restrict data, size_t num, size_t *restrict len,
                                        int *restrict unavailable)
{
	return getnext(trid, ev, data, num, len, unavailable, MODE_TRY, NULL);
}
