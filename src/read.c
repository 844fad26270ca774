/*
 * read.c -- the analyzer side of an active stream.
 *
 * A writer (one thread of one process at one signal nesting level) fills
 * its chunks one after another, each in order; so the reader keeps, per
 * writer, a queue of that writer's chunks, found through the acquisition
 * log, and each time returns the record with the smallest timestamp among
 * the queue heads.  That is an exact merge by timestamp, and one thread's
 * events always come out in program order.  A chunk read to its end and
 * sealed is given back to the pool: this is what makes room in an
 * UNTIL_FULL stream.
 *
 * Every value read from the segment is checked: a record that does not
 * fit its chunk ends that chunk with a POSIX_TRACE_ERROR event; a chunk
 * overwritten while being read (LOOP) is detected by its sequence number
 * and reported as an overflow before any later event.
 */
#include <stdlib.h>
#include <string.h>
#include "lib.h"

#define WAIT_SLICE_MS 20 /* a missed wake-up costs at most this much latency */
/* A blocking reader that has just returned events and finds none polls
 * again after this long before it asks the writers to wake it: see
 * getnext(). */
#define POLL_MS 1
#define NONE (-1)
#define PT_MAX_WRITERS 65536 /* threads x levels a reader keeps apart */

enum { TAKE_OK, TAKE_GONE, TAKE_BAD };

void pt_reader_reset(struct pt_trid *t)
{
	struct pt_reader *rd = &t->rd;
	struct pt_hdr *h = t->hdr;

	rd->run_w = 0;
	for (uint32_t i = 0; i < rd->nw; i++)
		free(rd->w[i].lost.e);
	rd->nw = 0;
	rd->ck_free = NONE;
	for (uint32_t i = rd->ck_cap; i-- > 0;) {
		rd->ck[i].next = rd->ck_free;
		rd->ck_free = (int32_t)i;
	}
	rd->npend = 0;
	rd->next_aseq = atomic_load(&h->acq_seq) + 1;
	rd->loss_gen = atomic_load(&h->loss_gen);
	rd->loss.n = 0;
	rd->gap_lost = 0;
	rd->nloss_pend = 0;
	rd->need_resume = rd->start_pending = rd->stashed = 0;
	rd->epoch = PT_ST_EPOCH(atomic_load(&h->state));
}

void pt_reader_free(struct pt_reader *rd)
{
	for (uint32_t i = 0; i < rd->nw; i++)
		free(rd->w[i].lost.e);
	free(rd->ck);
	free(rd->w);
	free(rd->st_buf);
	free(rd->loss.e);
	free(rd->objs);
	memset(rd, 0, sizeof *rd);
}

/* 0 if the chunk is still in a's life, else 1. */
static int gone(const struct pt_trid *t, const struct pt_ractive *a)
{
	uint64_t ss = atomic_load_explicit(&t->view.chunks[a->idx].ss, memory_order_acquire);
	unsigned state = PT_SS_STATE(ss);
	return PT_SS_SEQ(ss) != a->seq || (state != PT_CK_OPEN && state != PT_CK_SEALED);
}

/* Look at the next record of a, if one is complete.  0 if the chunk has
 * been overwritten (then nothing read from it may be used). */
static int peek(const struct pt_trid *t, struct pt_ractive *a)
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
	PT_SEQ_FENCE();
	return !gone(t, a);
}

/* LOOP: take the next record of chunk a by moving the chunk's reader
 * progress on with a CAS.  A thief closes the progress with a CAS before
 * it reuses the chunk (pool.c), so each record is counted exactly once:
 * read here, or lost by the thief.  0: the thief came first.  (Only a
 * thief reads the progress, so other policies keep none.) */
static int claim(const struct pt_trid *t, struct pt_ractive *a, uint32_t off, uint32_t count)
{
	uint64_t want = PT_RD_POS(a->seq, off, count), exp = a->pub;

	if (!atomic_compare_exchange_strong_explicit(&t->view.chunks[a->idx].rd_pos, &exp, want,
	                                             memory_order_acq_rel, memory_order_relaxed))
		return 0;
	a->pub = want;
	return 1;
}

/* A sorted list of losses.  Two losses are never folded into one: events
 * between them would come out with no OVERFLOW before a gap. */
static void loss_add(struct pt_losses *l, uint64_t ts, uint64_t g)
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

/* Remove the losses at or before ts; 1 if there were any.  With h, add
 * up their counts in *sum. */
static int loss_upto(struct pt_losses *l, uint64_t ts, const struct pt_hdr *h, uint64_t *sum)
{
	uint32_t k = 0;

	for (; k < l->n && l->e[k].ts <= ts; k++)
		if (h)
			*sum += report_count(h, l->e[k].g);
	if (k == 0)
		return 0;
	memmove(l->e, l->e + k, (l->n - k) * sizeof l->e[0]);
	l->n -= k;
	return 1;
}

/* Events were lost from ts on (UINT64_MAX: when is unknown, report at
 * once, and mark every writer's next event); g: the report saying so. */
static void note_loss(struct pt_reader *rd, uint64_t ts, uint64_t g)
{
	if (ts == UINT64_MAX)
		rd->unknown++;
	loss_add(&rd->loss, ts, g);
}

static struct pt_rwriter *writer_of(struct pt_reader *rd, int32_t pid, uint64_t thread,
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
	return w;
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
		note_loss(rd, UINT64_MAX, PT_NO_REPORT); /* overwritten by a later loss */
		return 1;
	}
	note_loss(rd, ts, g);
	struct pt_rwriter *w = writer_of(rd, (int32_t)(who >> 32), thread, (uint32_t)who);
	if (w)
		loss_add(&w->lost, ts, g);
	else
		rd->unknown++; /* whose, we cannot tell: mark every writer */
	return 1;
}

/* Take the losses writers reported since last time, with their times and
 * writers.  A report still being written (its writer was preempted) does
 * not hold up the ones after it; until it is complete nobody knows whose
 * events it lost, so every writer is marked at once. */
static void collect_losses(struct pt_trid *t)
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
	if (end - rd->loss_gen > PT_LOSS_RING) { /* too many to tell apart */
		note_loss(rd, UINT64_MAX, PT_NO_REPORT);
		rd->loss_gen = end - PT_LOSS_RING;
	}
	for (; rd->loss_gen < end; rd->loss_gen++) {
		if (take_loss(rd, h, rd->loss_gen))
			continue;
		rd->unknown++;
		if (rd->nloss_pend < cap)
			rd->loss_pend[rd->nloss_pend++] = rd->loss_gen;
		else
			note_loss(rd, UINT64_MAX, PT_NO_REPORT);
	}
}

/* The reader gives up on a chunk it could not read to the end (it was
 * overwritten): note the loss from the earliest time it knows of the
 * unread part.  The thief reports it too, but maybe only a moment later. */
static void lost_rest(struct pt_reader *rd, struct pt_rwriter *w, const struct pt_ractive *a)
{
	uint64_t ts = a->has_next ? a->next_ts : a->count ? a->last_ts + 1 : a->base_ts;
	note_loss(rd, ts, PT_NO_REPORT);
	if (w)
		loss_add(&w->lost, ts, PT_NO_REPORT);
}


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

/* Append the chunk of acquisition-log entry seq to its writer's queue. */
static void add(struct pt_trid *t, uint32_t idx, uint64_t seq)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_slot *v = &t->view;

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
	int32_t i = ck_alloc(rd);
	struct pt_rwriter *w = writer_of(rd, pid, thread, level);
	if (i == NONE || !w) {
		if (i != NONE) {
			rd->ck[i].next = rd->ck_free;
			rd->ck_free = i;
		}
		note_loss(rd, base, PT_NO_REPORT);
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
	if (gone(t, a)) { /* overwritten meanwhile */
		lost_rest(rd, w, a);
		a->next = rd->ck_free;
		rd->ck_free = i;
		return;
	}
	if (w->tail == NONE)
		w->head = i;
	else
		rd->ck[w->tail].next = i;
	w->tail = i;
}

static void pop_head(struct pt_reader *rd, struct pt_rwriter *w)
{
	int32_t i = w->head;
	w->head = rd->ck[i].next;
	if (w->head == NONE)
		w->tail = NONE;
	rd->ck[i].next = rd->ck_free;
	rd->ck_free = i;
}

/* Make the head of w's queue a live chunk with a record to read, if there
 * is one: free finished chunks, drop overwritten ones.  A head's next
 * timestamp only ever comes from a peek that checked the chunk's life, so
 * it is never taken from a chunk that changed hands. */
static void service(struct pt_trid *t, struct pt_rwriter *w)
{
	struct pt_reader *rd = &t->rd;

	while (w->head != NONE) {
		struct pt_ractive *a = &rd->ck[w->head];
		if (a->has_next)
			return; /* from a peek that checked the chunk's life; take() rechecks */
		uint64_t ss = atomic_load_explicit(&t->view.chunks[a->idx].ss, memory_order_acquire);
		unsigned st = PT_SS_STATE(ss);
		if (PT_SS_SEQ(ss) == a->seq && (st == PT_CK_OPEN || st == PT_CK_SEALED)) {
			if (peek(t, a)) {
				if (a->has_next)
					return;
				if (st == PT_CK_OPEN)
					return; /* nothing new yet */
				/* sealed before we looked, and read to the end */
				pt_pool_free(&t->view, a->idx, a->seq, PT_CK_SEALED);
				pop_head(rd, w);
				continue;
			}
		}
		lost_rest(rd, w, a);
		pop_head(rd, w);
	}
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
static void catch_up(struct pt_trid *t, uint64_t from, uint64_t end)
{
	const struct pt_slot *v = &t->view;
	struct found *found = malloc((size_t)v->nchunks * sizeof *found);
	uint32_t n = 0;

	if (!found) {
		note_loss(&t->rd, UINT64_MAX, PT_NO_REPORT);
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
			struct pt_rwriter *w = writer_of(&t->rd,
				atomic_load_explicit(&ck->pid, memory_order_relaxed),
				atomic_load_explicit(&ck->thread, memory_order_relaxed),
				atomic_load_explicit(&ck->level, memory_order_relaxed));
			uint64_t base = atomic_load_explicit(&ck->base_ts, memory_order_relaxed);
			note_loss(&t->rd, base, PT_NO_REPORT);
			if (w)
				loss_add(&w->lost, base, PT_NO_REPORT);
			else
				t->rd.unknown++;
		}
	}
	qsort(found, n, sizeof *found, by_seq);
	for (uint32_t k = 0; k < n; k++)
		add(t, found[k].idx, found[k].seq);
	free(found);
}

static void discover(struct pt_trid *t)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_slot *v = &t->view;
	uint64_t end = atomic_load_explicit(&t->hdr->acq_seq, memory_order_acquire);
	uint64_t len = (uint64_t)v->log_mask + 1;

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
				break;
			}
			if (now - rd->stuck_since < 50000000u)
				break;
			rd->unknown++; /* its chunk may come late: mark every writer */
			if (rd->npend < sizeof rd->pend / sizeof rd->pend[0])
				rd->pend[rd->npend++] = q;
			else
				catch_up(t, q, q);
		}
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

static int take(struct pt_trid *t, struct pt_rwriter *w, struct posix_trace_event_info *ev,
                void *buf, size_t num, size_t *dlen)
{
	const struct pt_slot *v = &t->view;
	struct pt_ractive *a = &t->rd.ck[w->head];
	const pt_word *rec = (const pt_word *)(v->data + (size_t)a->idx * v->chunk_size + a->off);
	uint64_t w0 = atomic_load_explicit(&rec[0], PT_WORD_LOAD);
	uint64_t w1 = atomic_load_explicit(&rec[1], PT_WORD_LOAD);
	uint32_t id = (uint32_t)(w0 >> 48) & 0xfffu, n = (uint32_t)(w1 >> 48);
	uint32_t size = PT_REC_SIZE(n);

	uint32_t lim = id < PT_SYS_IDS ? 2 * sizeof(trace_event_set_t) : v->max_data;
	if (id >= PT_NIDS || n > lim || a->off + size > a->commit)
		return gone(t, a) ? TAKE_GONE : TAKE_BAD;
	size_t cp = n < num ? n : num;
	pt_get_bytes(buf, rec + 2, (uint32_t)cp);
	PT_SEQ_FENCE();
	if (gone(t, a))
		return TAKE_GONE;
	if (v->policy == POSIX_TRACE_LOOP && !claim(t, a, a->off + size, a->count + 1))
		return TAKE_GONE;

	ev->posix_event_id = id;
	ev->posix_pid = w->pid;
	ev->posix_thread_id = (pthread_t)w->thread;
	ev->posix_prog_address = (void *)(uintptr_t)(w1 & PT_MASK48);
	ev->posix_truncation_status = n > num ? POSIX_TRACE_TRUNCATED_READ
	                              : (w0 >> 60) & PT_RF_TRUNC ? POSIX_TRACE_TRUNCATED_RECORD
	                                                         : POSIX_TRACE_NOT_TRUNCATED;
	pt_ns_to_ts(pt_clock_ns(&t->clk, a->next_ts), &ev->posix_timestamp);
	*dlen = cp;
	a->last_ts = a->next_ts;
	a->off += size;
	a->count++;
	if (!peek(t, a))
		a->has_next = 0; /* service() drops it next time */
	return TAKE_OK;
}

/* Hand out the event kept behind a RESUME. */
static void unstash(struct pt_reader *rd, struct posix_trace_event_info *ev, void *buf,
                    size_t num, size_t *dlen)
{
	size_t n = rd->st_len < num ? rd->st_len : num;

	*ev = rd->st_ev;
	if (n < rd->st_len)
		ev->posix_truncation_status = POSIX_TRACE_TRUNCATED_READ;
	if (n)
		memcpy(buf, rd->st_buf, n);
	*dlen = n;
	rd->stashed = 0;
}

/* After an event of writer w was taken with nothing to put before it:
 * until when w's next events may follow with nothing else to do first
 * (read_again).  Not at all if another writer waits on its open chunk
 * (a new record there would have to be looked at); else before the next
 * record another writer has ready, a loss to report, or a loss of w's own
 * to mark.  All strict: a tie goes the general way. */
static void allow_run(struct pt_reader *rd, struct pt_rwriter *w)
{
	uint64_t lim = UINT64_MAX;

	rd->run_w = 0;
	for (uint32_t i = 0; i < rd->nw; i++) {
		if (&rd->w[i] == w || rd->w[i].head == NONE)
			continue;
		const struct pt_ractive *a = &rd->ck[rd->w[i].head];
		if (!a->has_next)
			return;
		lim = a->next_ts < lim ? a->next_ts : lim;
	}
	if (rd->loss.n) { /* (a loss of unknown time is reported at once) */
		uint64_t l = rd->loss.e[0].ts == UINT64_MAX ? 0 : rd->loss.e[0].ts;
		lim = l < lim ? l : lim;
	}
	if (w->lost.n && w->lost.e[0].ts < lim)
		lim = w->lost.e[0].ts;
	rd->run_w = (uint32_t)(w - rd->w) + 1;
	rd->run_limit = lim;
}

/* The next event, when it is simply the next record of the writer the
 * last one came from: what read_next() would do, without looking at every
 * writer again.  Only while nothing changed that read_next() would look at
 * (no new chunk, no new loss report);
 * 0: call read_next(). */
static struct pt_rwriter *run_writer(struct pt_trid *t)
{
	struct pt_reader *rd = &t->rd;
	struct pt_hdr *h = t->hdr;

	if (!rd->run_w || rd->npend || rd->nloss_pend)
		return NULL;
	struct pt_rwriter *w = &rd->w[rd->run_w - 1];
	if (w->head == NONE || !rd->ck[w->head].has_next ||
	    rd->ck[w->head].next_ts >= rd->run_limit ||
	    atomic_load_explicit(&h->acq_seq, memory_order_acquire) >= rd->next_aseq ||
	    atomic_load_explicit(&h->loss_gen, memory_order_acquire) != rd->loss_gen)
		return NULL;
	return w;
}

static int read_again(struct pt_trid *t, struct posix_trace_event_info *ev, void *buf,
                      size_t num, size_t *dlen)
{
	struct pt_reader *rd = &t->rd;
	struct pt_rwriter *w = run_writer(t);

	if (!w)
		return 0;
	if (take(t, w, ev, buf, num, dlen) != TAKE_OK)
		return 0; /* (take changed nothing): read_next() deals with it */
	w->pairs_at = rd->pairs;
	return 1;
}

/* The flusher's fast path (flushrun.c), under t's lock: the run
 * read_again() would go on with, if there is one.  The caller reads the
 * chunk's records from r->a->off up to r->a->commit, checks each as
 * take() does, stops before r->limit and after r->max records, and hands
 * back how far it got with pt_read_run_end(); nothing changes until then. */
int pt_read_run_begin(struct pt_trid *t, struct pt_read_run *r)
{
	struct pt_reader *rd = &t->rd;
	const struct pt_slot *v = &t->view;
	struct pt_rwriter *w = run_writer(t);

	if (!w)
		return 0;
	struct pt_ractive *a = &rd->ck[w->head];
	uint32_t c = atomic_load_explicit(&v->chunks[a->idx].commit, memory_order_acquire);
	if (c <= v->chunk_size && c >= a->commit)
		a->commit = c;
	r->w = w;
	r->a = a;
	r->chunk = (const pt_word *)(v->data + (size_t)a->idx * v->chunk_size);
	r->limit = rd->run_limit;
	r->max = 4096; /* the flusher holds t's lock for one run at a time */
	return 1;
}

/* 1 if pt_read_run_begin() would find a run now. */
int pt_read_run_ready(struct pt_trid *t)
{
	return run_writer(t) != NULL;
}

/* The records from r->a->off to off, n of them, the last at last_tick,
 * were read: 1 if they are the reader's (the chunk was not overwritten
 * meanwhile, and in a LOOP stream no thief took them), and the reader has
 * moved past them; 0 if they must not be used (take() then finds out why). */
int pt_read_run_end(struct pt_trid *t, struct pt_read_run *r, uint32_t off, uint32_t n,
                    uint64_t last_tick)
{
	struct pt_reader *rd = &t->rd;
	struct pt_ractive *a = r->a;

	PT_SEQ_FENCE();
	if (gone(t, a))
		return 0;
	if (t->view.policy == POSIX_TRACE_LOOP && !claim(t, a, off, a->count + n))
		return 0;
	a->off = off;
	a->count += n;
	a->last_ts = last_tick;
	r->w->pairs_at = rd->pairs;
	if (!peek(t, a))
		a->has_next = 0; /* service() drops it next time */
	return 1;
}

/* One event into ev (returns 1), or nothing available now (returns 0). */
static int read_next(struct pt_trid *t, struct posix_trace_event_info *ev, void *buf,
                     size_t num, size_t *dlen)
{
	struct pt_reader *rd = &t->rd;
	struct pt_hdr *h = t->hdr;

	rd->run_w = 0;
	if (rd->stashed) {
		unstash(rd, ev, buf, num, dlen);
		return 1;
	}
	uint64_t steal_mark = pt_pool_steal_mark(&t->view); /* before looking */
	for (;;) {
		discover(t);
		for (uint32_t i = 0; i < rd->nw;) {
			service(t, &rd->w[i]);
			if (rd->w[i].head == NONE && rd->w[i].lost.n == 0) {
				free(rd->w[i].lost.e); /* nothing to remember: forget it */
				rd->w[i] = rd->w[--rd->nw];
			}
			else
				i++;
		}
		collect_losses(t);
		struct pt_rwriter *best = NULL; /* rd->w does not change below */
		for (uint32_t i = 0; i < rd->nw; i++) {
			if (rd->w[i].head == NONE)
				continue;
			struct pt_ractive *a = &rd->ck[rd->w[i].head];
			if (a->has_next && (!best || a->next_ts < rd->ck[best->head].next_ts ||
			                    (a->next_ts == rd->ck[best->head].next_ts &&
			                     a->seq < rd->ck[best->head].seq)))
				best = &rd->w[i];
		}
		/* An OVERFLOW takes its place in time, before the first event
		 * after its first lost one; the RESUME that follows goes before
		 * the next event, and covers every loss up to that event. */
		uint64_t best_ts = best ? rd->ck[best->head].next_ts : UINT64_MAX;
		struct pt_losses *gl = &rd->loss;
		if (rd->need_resume) {
			loss_upto(gl, best_ts == UINT64_MAX ? 0 : best_ts - 1, h, &rd->gap_lost);
		} else if (gl->n && (!best || gl->e[0].ts == UINT64_MAX || best_ts >= gl->e[0].ts)) {
			uint64_t tick = gl->e[0].ts != UINT64_MAX ? gl->e[0].ts : best ? best_ts : pt_now();
			synth(t, ev, buf, num, dlen, POSIX_TRACE_OVERFLOW, tick, NULL, 0);
			loss_upto(gl, gl->e[0].ts == UINT64_MAX ? UINT64_MAX
			              : best_ts == UINT64_MAX ? UINT64_MAX - 1 : best_ts - 1,
			          h, &rd->gap_lost);
			rd->need_resume = 1;
			return 1;
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
			pt_pool_drained(&t->view, steal_mark); /* read to its end: not full */
			return 0;
		}
		if (rd->start_pending) {
			trace_event_set_t f;
			pt_filter_get(h, &f);
			synth(t, ev, buf, num, dlen, POSIX_TRACE_START, rd->start_ts, &f, sizeof f);
			rd->start_pending = 0;
			return 1;
		}
		/* A writer whose next event follows a loss of its own, with no
		 * OVERFLOW/RESUME since its previous event (it was preempted, its
		 * event arrived late): mark the loss right here. */
		uint64_t ts = rd->ck[best->head].next_ts;
		uint64_t from = best->lost.n ? best->lost.e[0].ts : ts;
		if (loss_upto(&best->lost, ts, NULL, NULL) | (best->unknown_seen != rd->unknown)) {
			best->unknown_seen = rd->unknown;
			if (!rd->need_resume && rd->pairs == best->pairs_at) {
				synth(t, ev, buf, num, dlen, POSIX_TRACE_OVERFLOW, from, NULL, 0);
				rd->need_resume = 1;
				return 1;
			}
		}
		int r;
		if (rd->need_resume) {
			/* take the event first, so RESUME carries exactly its time */
			size_t n;
			if (!rd->st_buf && !(rd->st_buf = malloc(TRACE_DATA_MAX + 1)))
				return 0;
			r = take(t, best, &rd->st_ev, rd->st_buf, TRACE_DATA_MAX + 1, &n);
			if (r == TAKE_OK) {
				rd->st_len = (uint32_t)n;
				rd->stashed = 1;
				rd->need_resume = 0;
				rd->pairs++;
				best->pairs_at = rd->pairs;
				/* the counts of the reports this gap took in */
				rd->lost_at_resume += rd->gap_lost;
				rd->gap_lost = 0;
				synth(t, ev, buf, num, dlen, POSIX_TRACE_RESUME, ts, NULL, 0);
				return 1;
			}
		} else {
			r = take(t, best, ev, buf, num, dlen);
			if (r == TAKE_OK) {
				best->pairs_at = rd->pairs;
				allow_run(rd, best);
				return 1;
			}
		}
		struct pt_ractive *a = &rd->ck[best->head];
		if (r == TAKE_GONE) { /* overwritten under us */
			lost_rest(rd, best, a);
			pop_head(rd, best);
			continue;
		}
		int err = EBADMSG; /* a record that does not fit: end this chunk */
		pt_pool_free(&t->view, a->idx, a->seq, PT_CK_SEALED);
		pop_head(rd, best);
		synth(t, ev, buf, num, dlen, POSIX_TRACE_ERROR, ts, &err, sizeof err);
		return 1;
	}
}

enum { MODE_BLOCK, MODE_TIMED, MODE_TRY };

/* For the flusher of a stream with a log (flush.c), under t's lock. */
int pt_read_next(struct pt_trid *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                 size_t *dlen)
{
	return read_again(t, ev, buf, num, dlen) || read_next(t, ev, buf, num, dlen);
}

static int getnext(trace_id_t trid, struct posix_trace_event_info *ev, void *data, size_t num,
                   size_t *dlen, int *unavail, int mode, const struct timespec *abs)
{
	struct pt_trid *t;
	int rc = pt_trid_lock_any(trid, &t);

	if (rc)
		return rc;
	if (!ev || !dlen || !unavail || (!data && num) ||
	    (t->kind == PT_KIND_LOG && mode != MODE_BLOCK) || t->fl) {
		/* a stream with a log is read by its flusher; a log only by getnext */
		pt_trid_unlock(t);
		return EINVAL;
	}
	if (t->kind == PT_KIND_LOG) {
		rc = pt_logopen_next(t, ev, data, num, dlen, unavail);
		pt_trid_unlock(t);
		return rc;
	}
	for (;;) {
		if (read_again(t, ev, data, num, dlen) || read_next(t, ev, data, num, dlen)) {
			*unavail = 0;
			t->rd.flowing = mode != MODE_TRY;
			break;
		}
		if (mode == MODE_TRY) {
			*unavail = 1;
			*dlen = 0;
			pt_clock_keep(&t->clk); /* (a reader polling: as one waiting) */
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
		if (t->rd.flowing) {
			/* Events were coming and we have read them all.  Asked to
			 * wake us, a writer would make a futex call at its next
			 * event, and again each time we caught up: a syscall every
			 * few events, in the traced program (its cost per event
			 * went from 30 to 300 ns with a paced writer).  So look
			 * again after POLL_MS first, without asking: a writer that
			 * records steadily is then never asked; only after a poll
			 * that found nothing does the reader ask (below). */
			t->rd.flowing = 0;
			pt_trid_unlock(t);
			int w = pt_futex_wait(&h->futex, val, ms < POLL_MS ? ms : POLL_MS);
			if (pt_trid_lock(trid, &t))
				return EINVAL; /* shut down while we waited */
			if (w == EINTR) {
				rc = EINTR;
				break;
			}
			continue;
		}
		atomic_fetch_add(&h->waiters, 1);
		/* waiting: a calibration point when the last is 40 ms old, so
		 * the events that come after a long wait are not converted
		 * across all of it (clock.c) */
		pt_clock_keep(&t->clk);
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
