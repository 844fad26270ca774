/*
 * chunks.c -- finding the chunks to read: each writer's chunks are queued
 * in the order it took them, found through the acquisition log
 * (pt_reader_discover; entries stepped over while half-published are
 * caught up later, in order).  A chunk's life is checked at every look
 * (pt_rchunk_gone, pt_rchunk_peek), and in LOOP a record is taken with a
 * CAS on the chunk's reader progress (pt_rchunk_claim).
 */
#include <stdlib.h>
#include <string.h>
#include "reader.h"

static int32_t ck_alloc(struct pt_reader *rd)
{
	if (rd->ck_free == NONE) {
		uint32_t cap = rd->ck_cap ? rd->ck_cap * 2 : 16;
		struct pt_ractive *n = realloc(rd->ck, cap * sizeof *n);
		if (!n)
			return NONE;
		rd->ck = n;
		for (uint32_t i = cap; i-- > rd->ck_cap;) {
			rd->ck[i].next = rd->ck_free;
			rd->ck_free = (int32_t)i;
		}
		rd->ck_cap = cap;
	}
	int32_t i = rd->ck_free;
	rd->ck_free = rd->ck[i].next;
	return i;
}

/* Chunk a, of serial s, is queued after w's last: are chunks of w missing
 * between (layout.h, pt_chunk.serial)?  Serials are the writer's word, so
 * anything goes: one that goes back (a chunk stepped over and queued late,
 * or a lie) marks nothing and moves nothing back; 1 is a writer's first
 * chunk (a new thread with an old one's id), with nothing before it. */
static void follows(struct pt_rwriter *w, struct pt_ractive *a, uint32_t s)
{
	uint32_t d = s - w->serial;

	if (!w->serial_ok) {
		w->serial_ok = 1;
		w->serial = s;
		if (s == 1)
			w->fresh = 0; /* its first chunk: nothing of it came before */
		return;
	}
	if (s == 1 || d == 0 || d > INT32_MAX) {
		if (s == 1)
			w->serial = s;
		return;
	}
	a->gap = d != 1;
	w->serial = s;
}

/* Append the chunk of acquisition-log entry seq to its writer's queue. */
static void add(struct pt_stream *t, uint32_t idx, uint64_t seq)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_view *v = &t->view;

	if (idx >= v->nchunks)
		return;
	struct pt_chunk *ck = &v->chunks[idx];
	uint64_t ss = atomic_load_explicit(&ck->ss, memory_order_acquire);
	if (PT_SS_SEQ(ss) != seq) /* overwritten before we got here; the new */
		return;               /* life is published after its thief's report */
	if (atomic_load_explicit(&ck->epoch, memory_order_relaxed) != rd->epoch)
		return; /* from before a clear */
	int32_t pid = atomic_load_explicit(&ck->pid, memory_order_relaxed);
	uint64_t thread = atomic_load_explicit(&ck->thread, memory_order_relaxed);
	uint32_t level = atomic_load_explicit(&ck->level, memory_order_relaxed);
	uint64_t base = atomic_load_explicit(&ck->base_ts, memory_order_relaxed);
	uint32_t serial = atomic_load_explicit(&ck->serial, memory_order_relaxed);
	int32_t i = ck_alloc(rd);
	struct pt_rwriter *w = pt_rwriter_of(rd, pid, thread, level);
	if (i == NONE || !w) {
		if (i != NONE) {
			rd->ck[i].next = rd->ck_free;
			rd->ck_free = i;
		}
		pt_loss_note(rd, base, PT_NO_REPORT);
		rd->unknown++;
		return;
	}
	struct pt_ractive *a = &rd->ck[i];
	memset(a, 0, sizeof *a);
	a->idx = idx;
	a->seq = seq;
	a->pub = PT_RD_POS(seq, 0, 0);
	a->base_ts = base;
	a->next = NONE;
	PT_SEQ_FENCE(); /* (what was read above is of seq's life, or it is gone) */
	if (pt_rchunk_gone(t, a)) { /* overwritten meanwhile */
		pt_lost_rest(t, w, a);
		a->next = rd->ck_free;
		rd->ck_free = i;
		return;
	}
	follows(w, a, serial);
	if (w->tail == NONE)
		w->head = i;
	else
		rd->ck[w->tail].next = i;
	w->tail = i;
}

void pt_rwriter_pop(struct pt_reader *rd, struct pt_rwriter *w)
{
	int32_t i = w->head;
	w->head = rd->ck[i].next;
	if (w->head == NONE)
		w->tail = NONE;
	rd->ck[i].next = rd->ck_free;
	rd->ck_free = i;
}

struct found {
	uint64_t seq;
	uint32_t idx;
};

static int by_seq(const void *x, const void *y)
{
	uint64_t a = ((const struct found *)x)->seq, b = ((const struct found *)y)->seq;
	return a < b ? -1 : a > b;
}

/* The reader fell so far behind that acquisition-log entries from `from`
 * on were overwritten.  Chunks of that range that were overwritten too
 * were reported by their thieves; the others (an idle writer's open
 * chunk, say) are still there: find them all, in order, with one scan. */
static void catch_up(struct pt_stream *t, uint64_t from, uint64_t end)
{
	const struct pt_view *v = &t->view;
	struct found *found = malloc((size_t)v->nchunks * sizeof *found);
	uint32_t n = 0;

	if (!found) {
		pt_loss_note(&t->rd, UINT64_MAX, PT_NO_REPORT);
		return;
	}
	for (uint32_t i = 0; i < v->nchunks; i++) {
		struct pt_chunk *ck = &v->chunks[i];
		uint64_t ss = atomic_load_explicit(&ck->ss, memory_order_acquire);
		uint64_t q = PT_SS_SEQ(ss);
		unsigned st = PT_SS_STATE(ss);
		if (q < from || q > end)
			continue;
		if (st == PT_CK_OPEN || st == PT_CK_SEALED) {
			found[n].seq = q;
			found[n++].idx = i;
		} else if (st == PT_CK_BUSY) {
			/* being overwritten: its thief may not have reported it yet,
			 * so note it for the writer it still names */
			struct pt_rwriter *w = pt_rwriter_of(&t->rd,
				atomic_load_explicit(&ck->pid, memory_order_relaxed),
				atomic_load_explicit(&ck->thread, memory_order_relaxed),
				atomic_load_explicit(&ck->level, memory_order_relaxed));
			uint64_t base = atomic_load_explicit(&ck->base_ts, memory_order_relaxed);
			pt_loss_note(&t->rd, base, PT_NO_REPORT);
			if (w)
				pt_loss_add(&w->lost, base, PT_NO_REPORT);
			else
				t->rd.unknown++;
		}
	}
	qsort(found, n, sizeof *found, by_seq);
	for (uint32_t k = 0; k < n; k++)
		add(t, found[k].idx, found[k].seq);
	free(found);
}

/* Discovery waits at entry q, half-published: the chunks of the entries
 * after it are not queued yet, though their writers may have committed
 * records.  None of those records may be passed over, so the reader holds
 * back whatever is stamped at or after the earliest of their chunks'
 * bases (read_next()'s horizon).  (Entries still unpublished hold records
 * committed after this look: they cannot precede anything it lets out.) */
static void hold_after(struct pt_stream *t, uint64_t q, uint64_t end)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_view *v = &t->view;
	uint64_t hold = UINT64_MAX;

	if (end - q > v->log_mask)
		end = q + v->log_mask;
	for (uint64_t k = q + 1; k <= end; k++) {
		uint64_t e = atomic_load_explicit(&v->acq_log[k & v->log_mask], memory_order_acquire);
		if (PT_LOG_SEQ(e) != PT_LOG_SEQ_OF(k) || PT_LOG_IDX(e) >= v->nchunks)
			continue;
		uint64_t b = atomic_load_explicit(&v->chunks[PT_LOG_IDX(e)].base_ts,
		                                  memory_order_relaxed);
		hold = b < hold ? b : hold;
	}
	rd->hold = hold;
}

void pt_reader_discover(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_view *v = &t->view;
	uint64_t end = atomic_load_explicit(&t->hdr->acq_seq, memory_order_acquire);
	uint64_t len = (uint64_t)v->log_mask + 1;

	rd->hold = UINT64_MAX;

	if (end == UINT64_MAX) /* forged: next_aseq must not wrap to 0 and rescan */
		end--;

	for (unsigned p = 0; p < rd->npend;) { /* entries stepped over, half-published */
		uint64_t q = rd->pend[p];
		uint64_t e = atomic_load_explicit(&v->acq_log[q & v->log_mask], memory_order_acquire);
		if (PT_LOG_SEQ(e) == PT_LOG_SEQ_OF(q)) {
			add(t, PT_LOG_IDX(e), q);
		} else if (PT_LOG_SEQ(e) > PT_LOG_SEQ_OF(q) || end - q >= len) {
			/* its slot was reused: if the chunk is alive, catch_up finds it */
			catch_up(t, q, q);
		} else {
			p++;
			continue;
		}
		rd->pend[p] = rd->pend[--rd->npend];
	}
	for (; rd->next_aseq <= end; rd->next_aseq++) {
		uint64_t q = rd->next_aseq;
		uint64_t e = atomic_load_explicit(&v->acq_log[q & v->log_mask], memory_order_acquire);
		if (PT_LOG_SEQ(e) == PT_LOG_SEQ_OF(q)) {
			add(t, PT_LOG_IDX(e), q);
		} else if (PT_LOG_SEQ(e) > PT_LOG_SEQ_OF(q)) {
			/* overwritten before we got to it: we are a whole log behind */
			catch_up(t, q, end);
			rd->next_aseq = end + 1;
			break;
		} else {
			/* The writer is between its two stores: wait for it, or its
			 * next chunk could be queued before this one.  Only a writer
			 * stuck there (killed, stopped) is stepped over, after 50 ms. */
			uint64_t now = pt_mono_ns();
			if (rd->stuck_q != q) {
				rd->stuck_q = q;
				rd->stuck_since = now;
			}
			if (now - rd->stuck_since < 50000000u) {
				hold_after(t, q, end);
				break;
			}
			rd->unknown++; /* its chunk may come late: mark every writer */
			if (rd->npend < sizeof rd->pend / sizeof rd->pend[0])
				rd->pend[rd->npend++] = q;
			else
				catch_up(t, q, q);
		}
	}
}
