/*
 * writers.c -- the writers a reader keeps apart (one thread of one process
 * at one nesting level each: pt_rwriter_of) and the losses it reports: a
 * loss is placed in its writer's sequence, so the OVERFLOW/RESUME pair
 * comes out where the gap is, never folded with another.  The losses come
 * from the segment's loss log (checked: the traced process can write
 * anything there) and from chunks overwritten while being read.
 */
#include <stdlib.h>
#include <string.h>
#include "reader.h"

/* A sorted list of losses.  Two losses are never folded into one: events
 * between them would come out with no OVERFLOW before a gap. */
void pt_loss_add(struct pt_losses *l, uint64_t ts, uint64_t g)
{
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;
		struct pt_loss *n = realloc(l->e, cap * sizeof *n);
		if (!n) { /* no memory: the best left is to report it at once */
			if (l->e) {
				l->e[0] = (struct pt_loss){ 0, PT_NO_REPORT };
				l->n = 1;
			}
			return;
		}
		l->e = n;
		l->cap = cap;
	}
	uint32_t i = l->n++;
	while (i > 0 && l->e[i - 1].ts > ts) {
		l->e[i] = l->e[i - 1];
		i--;
	}
	l->e[i] = (struct pt_loss){ ts, g };
}

/* The events report g counts now (0 if its slot was reused: then only the
 * stream's total has them). */
static uint64_t report_count(const struct pt_hdr *h, uint64_t g)
{
	if (g == PT_NO_REPORT)
		return 0; /* noticed by the reader: the thief's report counts them */
	uint64_t v = atomic_load_explicit(&h->loss_n[g % PT_LOSS_RING], memory_order_relaxed);
	return PT_LOSS_N_OK(v, g) ? PT_LOSS_N_COUNT(v) : 0;
}

/* Remove the losses at or before ts; 1 if there were any. */
int pt_loss_upto(struct pt_losses *l, uint64_t ts)
{
	uint32_t k = 0;

	while (k < l->n && l->e[k].ts <= ts)
		k++;
	if (k == 0)
		return 0;
	memmove(l->e, l->e + k, (l->n - k) * sizeof l->e[0]);
	l->n -= k;
	return 1;
}

/* The gap being told takes in the losses at or before ts: their reports'
 * counts now go into rd->gap_lost, and the reports are kept (rd->told), as
 * a run of drops may go on after it is told. */
void pt_loss_take(struct pt_reader *rd, const struct pt_hdr *h, uint64_t ts)
{
	struct pt_losses *l = &rd->loss;
	unsigned cap = sizeof rd->told / sizeof rd->told[0];

	for (uint32_t k = 0; k < l->n && l->e[k].ts <= ts; k++) {
		if (l->e[k].g == PT_NO_REPORT)
			continue;
		uint64_t c = report_count(h, l->e[k].g);
		rd->gap_lost += c;
		rd->told[rd->told_next % cap].g = l->e[k].g; /* (the oldest goes) */
		rd->told[rd->told_next % cap].n = c;
		rd->told_next++;
	}
	pt_loss_upto(l, ts);
}

/* What the reports already told counted since (a run of drops that went
 * on), now told too.  A report whose slot was reused is forgotten: the
 * rest of its run is in the stream's count alone. */
uint64_t pt_loss_growth(struct pt_reader *rd, const struct pt_hdr *h)
{
	unsigned cap = sizeof rd->told / sizeof rd->told[0];
	uint64_t n = 0;

	for (uint64_t i = rd->told_next > cap ? rd->told_next - cap : 0; i < rd->told_next; i++) {
		uint64_t *was = &rd->told[i % cap].n;
		uint64_t c = report_count(h, rd->told[i % cap].g);
		if (c > *was)
			n += c - *was;
		*was = c > *was ? c : *was;
	}
	return n;
}

/* The events the losses not reported yet count now: a later RESUME
 * counts them. */
uint64_t pt_losses_later(const struct pt_reader *rd, const struct pt_hdr *h)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < rd->loss.n; i++)
		n += report_count(h, rd->loss.e[i].g);
	return n;
}

/* Events were lost from ts on (UINT64_MAX: when is unknown, report at
 * once, and mark every writer's next event); g: the report saying so. */
void pt_loss_note(struct pt_reader *rd, uint64_t ts, uint64_t g)
{
	if (ts == UINT64_MAX)
		rd->unknown++;
	pt_loss_add(&rd->loss, ts, g);
}

struct pt_rwriter *pt_rwriter_of(struct pt_reader *rd, int32_t pid, uint64_t thread,
                                    uint32_t level)
{
	for (uint32_t i = 0; i < rd->nw; i++)
		if (rd->w[i].thread == thread && rd->w[i].pid == pid && rd->w[i].level == level)
			return &rd->w[i];
	if (level > PT_LEVELS || rd->nw >= PT_MAX_WRITERS) /* PT_LEVELS: a controller */
		return NULL; /* not a writer that can exist: the segment was scribbled on */
	if (rd->nw == rd->w_cap) {
		uint32_t cap = rd->w_cap ? rd->w_cap * 2 : 8;
		struct pt_rwriter *n = realloc(rd->w, cap * sizeof *n);
		if (!n)
			return NULL;
		rd->w = n;
		rd->w_cap = cap;
	}
	struct pt_rwriter *w = &rd->w[rd->nw++];
	w->thread = thread;
	w->pid = pid;
	w->level = level;
	w->head = w->tail = NONE;
	memset(&w->lost, 0, sizeof w->lost);
	w->pairs_at = rd->pairs;
	w->unknown_seen = 0; /* after an unknown loss its first event is marked */
	w->serial_ok = 0;
	w->fresh = 1;
	return w;
}

/* The writer table at its most (a burst of thousands of writers, a
 * reader held up) stays so, unless it shrinks again: when a quarter at
 * most is in use, half goes, from TRIM_BYTES on.  A smaller block is in
 * the heap, where giving it back frees no page, and growing it again
 * moves it: a recorder whose table came and went with each burst of
 * children grew its heap faster (tests/record_gone's flush case, 15 to 43
 * bytes a child without, 34 to 66 with, trimming from 16 entries).  The
 * writers are kept together (the gone ones forgotten by moving the last
 * into their place: read.c, look), so the first nw stay.  The chunk table
 * (rd->ck, chunks.c) needs none: an entry per chunk queued, its free
 * entries reused, so 96 bytes per chunk of the segment at most (49 KB for
 * the default 16 MiB stream's 321).  From look(), which holds no pointer
 * into the table. */
#define TRIM_BYTES (256u << 10)
void pt_rwriters_trim(struct pt_reader *rd)
{
	if ((size_t)rd->w_cap * sizeof *rd->w >= TRIM_BYTES && rd->nw <= rd->w_cap / 4) {
		struct pt_rwriter *n = realloc(rd->w, rd->w_cap / 2 * sizeof *n);
		if (n) {
			rd->w = n;
			rd->w_cap /= 2;
		}
	}
}

/* Take loss g from the ring: 1 if done with it, 0 if its writer has not
 * finished publishing it yet. */
static int take_loss(struct pt_reader *rd, struct pt_hdr *h, uint64_t g)
{
	uint64_t i = g % PT_LOSS_RING;
	uint64_t tag = atomic_load_explicit(&h->loss_tag[i], memory_order_acquire);
	uint64_t ts = atomic_load_explicit(&h->loss_ts[i], memory_order_relaxed);
	uint64_t thread = atomic_load_explicit(&h->loss_thread[i], memory_order_relaxed);
	uint64_t who = atomic_load_explicit(&h->loss_who[i], memory_order_relaxed);

	if (tag < g + 1)
		return 0;
	PT_SEQ_FENCE();
	if (tag != g + 1 || atomic_load_explicit(&h->loss_tag[i], memory_order_relaxed) != tag) {
		rd->reports_lost++; /* overwritten by a later loss */
		return 1;
	}
	pt_loss_note(rd, ts, g);
	struct pt_rwriter *w = pt_rwriter_of(rd, (int32_t)(who >> 32), thread, (uint32_t)who);
	if (w)
		pt_loss_add(&w->lost, ts, g);
	else
		rd->unknown++; /* whose, we cannot tell: mark every writer */
	return 1;
}

/* Take the losses writers reported since last time, with their times and
 * writers.  A report still being written (its writer was preempted) does
 * not hold up the ones after it; until it is complete nobody knows whose
 * events it lost, so every writer is marked at once.  Reports overwritten
 * before they were read (more than PT_LOSS_RING since the last look) are
 * not told at once: each was of chunks its writer lost, or a run it
 * dropped, which the writer's next chunk queued shows by its serial
 * (chunks.c) -- where they were lost in its sequence, so the gap goes
 * there; and a writer first seen after them has its first event marked
 * (fresh).  Their events are in the stream's count, which the next RESUME
 * takes in (read.c, resume_count). */
void pt_losses_collect(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	struct pt_hdr *h = t->hdr;
	uint64_t end = atomic_load_explicit(&h->loss_gen, memory_order_acquire);
	unsigned cap = sizeof rd->loss_pend / sizeof rd->loss_pend[0];

	for (unsigned k = 0; k < rd->nloss_pend;) {
		uint64_t g = rd->loss_pend[k];
		if (end - g > PT_LOSS_RING || take_loss(rd, h, g))
			rd->loss_pend[k] = rd->loss_pend[--rd->nloss_pend];
		else
			k++;
	}
	if (end - rd->loss_gen > PT_LOSS_RING) { /* overwritten before we got to them */
		rd->reports_lost++;
		rd->loss_gen = end - PT_LOSS_RING;
	}
	for (; rd->loss_gen < end; rd->loss_gen++) {
		if (take_loss(rd, h, rd->loss_gen))
			continue;
		rd->unknown++;
		if (rd->nloss_pend < cap)
			rd->loss_pend[rd->nloss_pend++] = rd->loss_gen;
		else
			pt_loss_note(rd, UINT64_MAX, PT_NO_REPORT);
	}
}

/* The reader gives up on a chunk it could not read to the end (it was
 * overwritten): note the loss from the earliest time it knows of the
 * unread part.  The thief reports it too, but maybe only a moment later. */
void pt_lost_rest(struct pt_stream *t, struct pt_rwriter *w, const struct pt_ractive *a)
{
	struct pt_reader *rd = &t->rd;
	uint64_t ts = a->has_next ? a->next_ts : a->count ? a->last_ts + 1 : a->base_ts;
	pt_loss_note(rd, ts, PT_NO_REPORT);
	/* its gap's RESUME waits for the thief's report, which counts them */
	unsigned cap = sizeof rd->steal_wait / sizeof rd->steal_wait[0];
	if (rd->nsteal_wait == cap)
		pt_thief_busy(t);     /* (drops the entries whose thief is done) */
	if (rd->nsteal_wait == cap) /* the oldest goes */
		memmove(rd->steal_wait, rd->steal_wait + 1, --rd->nsteal_wait * sizeof rd->steal_wait[0]);
	rd->steal_wait[rd->nsteal_wait].idx = a->idx;
	rd->steal_wait[rd->nsteal_wait].looks = 0;
	rd->steal_wait[rd->nsteal_wait].since = pt_mono_ns();
	rd->steal_wait[rd->nsteal_wait++].seq = a->seq;
	if (w)
		pt_loss_add(&w->lost, ts, PT_NO_REPORT);
}

/* 1 while the thief of a chunk the reader lost under it has not reported
 * it yet: it is between taking the chunk and handing it out again (its
 * report is published before that, ring/pool.c).  The RESUME waits, so
 * that it counts those events rather than a gap of their own later; for
 * PT_THIEF_WAIT_NS and PT_THIEF_LOOKS of these looks at least (a thief
 * killed with its process never hands the chunk out: then the count goes
 * to a later gap).  Both, so that a reader kept off its CPU for as long
 * as the bound (a loaded machine) does not give up at its first look
 * after: the thief may have been kept off its CPU just as long, and
 * needs a moment of it.  Entries whose thief is done are dropped. */
#define PT_THIEF_WAIT_NS 1000000000u
#define PT_THIEF_LOOKS   64u
int pt_thief_busy(struct pt_stream *t)
{
	struct pt_reader *rd = &t->rd;
	int busy = 0;

	for (unsigned i = 0; i < rd->nsteal_wait;) {
		uint64_t ss = atomic_load_explicit(&t->view.chunks[rd->steal_wait[i].idx].ss,
		                                   memory_order_acquire);
		if (PT_SS_SEQ(ss) == rd->steal_wait[i].seq && PT_SS_STATE(ss) == PT_CK_BUSY &&
		    (++rd->steal_wait[i].looks < PT_THIEF_LOOKS ||
		     pt_mono_ns() - rd->steal_wait[i].since < PT_THIEF_WAIT_NS)) {
			busy = 1;
			i++;
			continue;
		}
		memmove(&rd->steal_wait[i], &rd->steal_wait[i + 1], /* (oldest first) */
		        (--rd->nsteal_wait - i) * sizeof rd->steal_wait[0]);
	}
	return busy;
}
