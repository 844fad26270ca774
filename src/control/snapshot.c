/*
 * snapshot.c -- the flight recorder's two looks at a LOOP stream that
 * nobody consumes (`posixtrace record --flight`; docs/design.md, "Snapshots
 * of a flight recorder"):
 *
 *  - the follower (pt_snap_follow_*): the records written since its last
 *    look, each writer's in its order, for the recorder to test its
 *    triggers on.  It scans the chunk descriptors, keeps per chunk the
 *    life (sequence number) and offset it has read up to, and copies the
 *    new records of a chunk into memory of its own before looking at
 *    them; the chunk's life is checked after the copy, so a chunk a LOOP
 *    thief took meanwhile is dropped whole (counted), never read torn.
 *  - the snapshot (pt_snap_write): every record in the stream stamped in
 *    a window, copied the same way (each chunk's words, then its life
 *    checked again: a chunk overwritten mid-copy is dropped and counted),
 *    merged by time across writers and written through the log writer
 *    (log/) with the stream's event names, and the map of loaded code,
 *    thread and process identities and payload descriptions the reader
 *    has taken, so the log opens alone.  The program may have lapped
 *    the stream since the trigger (the snapshot comes a poll and more
 *    after it): a writer whose chunks left all begin after the window
 *    is counted (lapped), and the trigger event the follower saw, given
 *    by the caller, is written from that copy when the stream no longer
 *    holds it, after an OVERFLOW/RESUME pair.
 *
 * Neither takes anything away from the stream: no chunk changes state,
 * no reader progress (rd_pos) is published, nothing is freed.  So a
 * thief counts a chunk it steals exactly as it would with no follower,
 * and the program's recording path is untouched.  Both run in the
 * controller under the trace id's lock (its clock is converted there),
 * except a snapshot's second step: pt_snap_copy takes the window and all
 * the log needs (names, map, attributes, a clock of its own), and
 * pt_snap_emit writes the log from that copy with no lock, in any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include "control.h"

/* ------------------------------------------------------------ records */

/* One record of a chunk copy `c` (commit bytes) at *off: 1 and its
 * fields, 0 at the end, -1 if bad (the rest of the copy is not used). */
struct rec {
	uint64_t tick, addr;
	uint32_t id, len, trunc;
	const unsigned char *data;
};

static inline __attribute__((always_inline)) int
rec_next(const unsigned char *c, uint32_t commit, uint32_t *off, uint64_t base,
         uint32_t max_data, uint64_t *addr, struct rec *r)
{
	uint64_t w0, w1 = 0;

	if (*off + PT_REC_SHORT > commit)
		return 0;
	memcpy(&w0, c + *off, 8);
	uint32_t len = PT_REC_LEN(w0), id = PT_REC_ID(w0);
	int wide = PT_REC_WIDE(w0) != 0;
	uint32_t bytes = PT_REC_BYTES(len, wide);
	if (id >= PT_NIDS || len > max_data || bytes > commit - *off)
		return -1;
	if (wide)
		memcpy(&w1, c + *off + 8u * PT_REC_W1(len), 8);
	else if (*off == 0)
		return -1; /* a chunk starts with a wide record */
	if (wide)
		*addr = w1 & PT_MASK48;
	r->tick = pt_rec_tick(base, w0, w1);
	r->addr = *addr;
	r->id = id;
	r->len = len;
	r->trunc = (PT_REC_FLAGS(w0) & PT_RF_TRUNC) != 0;
	r->data = c + *off + 8;
	*off += bytes;
	return 1;
}

/* Copy words [from, to) of chunk idx into dst with the reader's loads. */
static void copy_words(const struct pt_view *v, uint32_t idx, uint32_t from, uint32_t to,
                       unsigned char *dst)
{
	const pt_word *src = (const pt_word *)(pt_chunk_data(v, idx) + from);
	pt_get_bytes(dst, src, to - from);
}

static int64_t tick_ns(struct pt_trid *t, uint64_t tick)
{
	int64_t ns;
	if (!pt_clock_ns_cached(&t->s.clk, tick, &ns))
		ns = pt_clock_ns(&t->s.clk, tick);
	return ns;
}

/* A chunk's descriptor read in one life: 0, or -1 (not OPEN or SEALED in
 * the current epoch). */
struct ckd {
	uint64_t seq, base, thread;
	int32_t pid;
	uint32_t level, serial, commit, nev, sealed;
};

static int ck_read(const struct pt_trid *t, uint32_t i, uint32_t epoch, struct ckd *d)
{
	const struct pt_chunk *ck = &t->s.view.chunks[i];
	uint64_t ss = atomic_load_explicit(&ck->ss, memory_order_acquire);
	unsigned st = PT_SS_STATE(ss);

	if (st != PT_CK_OPEN && st != PT_CK_SEALED)
		return -1;
	if (atomic_load_explicit(&ck->epoch, memory_order_relaxed) != epoch)
		return -1;
	d->seq = PT_SS_SEQ(ss);
	d->sealed = st == PT_CK_SEALED;
	d->base = atomic_load_explicit(&ck->base_ts, memory_order_relaxed);
	d->thread = atomic_load_explicit(&ck->thread, memory_order_relaxed);
	d->pid = atomic_load_explicit(&ck->pid, memory_order_relaxed);
	d->level = atomic_load_explicit(&ck->level, memory_order_relaxed);
	d->serial = atomic_load_explicit(&ck->serial, memory_order_relaxed);
	d->nev = atomic_load_explicit(&ck->nevents, memory_order_relaxed);
	uint32_t c = PT_COMMIT_POS(atomic_load_explicit(&ck->commit, memory_order_acquire));
	d->commit = c <= t->s.view.chunk_size ? c & ~7u : 0;
	return 0;
}

/* Is chunk i still in the life seq? (after an acquire fence: what was
 * read of it before is of that life) */
static int ck_alive(const struct pt_trid *t, uint32_t i, uint64_t seq)
{
	PT_SEQ_FENCE();
	uint64_t ss = atomic_load_explicit(&t->s.view.chunks[i].ss, memory_order_acquire);
	unsigned st = PT_SS_STATE(ss);
	return PT_SS_SEQ(ss) == seq && (st == PT_CK_OPEN || st == PT_CK_SEALED);
}

static uint32_t epoch_of(const struct pt_trid *t)
{
	return PT_ST_EPOCH(atomic_load_explicit(&t->s.hdr->state, memory_order_acquire));
}

/* ------------------------------------------------------------ the follower */

struct fck {              /* what the follower read of chunk i */
	uint64_t seq;         /* the life it read, +1 (0: none) */
	uint32_t off;         /* records read up to here */
	uint32_t done;        /* read to the end of a sealed chunk */
	uint64_t addr;        /* the last wide record's caller address */
};

struct pt_snap_follow {
	uint32_t n, chunk_size;
	struct fck *ck;
	struct { uint64_t seq; uint32_t i; } *todo;
	unsigned char *buf;
	uint64_t want[PT_NIDS / 64];
	uint64_t missed;      /* chunks overwritten before the follower read them to the end */
	uint64_t records;     /* records looked at */
	unsigned polls;
};

struct pt_snap_follow *pt_snap_follow_new(struct pt_trid *t, const uint64_t *want)
{
	struct pt_snap_follow *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->n = t->s.view.nchunks;
	f->chunk_size = t->s.view.chunk_size;
	f->ck = calloc(f->n, sizeof *f->ck);
	f->todo = malloc((size_t)f->n * sizeof *f->todo);
	f->buf = malloc(f->chunk_size);
	if (!f->ck || !f->todo || !f->buf) {
		pt_snap_follow_free(f);
		return NULL;
	}
	memcpy(f->want, want, sizeof f->want);
	/* what is in the stream already is not new: start at each chunk's
	 * commit (a trigger fires on what happens from now on) */
	uint32_t epoch = epoch_of(t);
	for (uint32_t i = 0; i < f->n; i++) {
		struct ckd d;
		if (ck_read(t, i, epoch, &d) == 0)
			f->ck[i] = (struct fck){ d.seq + 1, d.commit, d.sealed, 0 };
	}
	return f;
}

void pt_snap_follow_free(struct pt_snap_follow *f)
{
	if (!f)
		return;
	free(f->ck);
	free(f->todo);
	free(f->buf);
	free(f);
}

uint64_t pt_snap_follow_missed(const struct pt_snap_follow *f)
{
	return f->missed;
}

static int by_seq(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

int pt_snap_follow_poll(struct pt_trid *t, struct pt_snap_follow *f, pt_snap_fn fn, void *arg)
{
	const struct pt_view *v = &t->s.view;
	uint32_t epoch = epoch_of(t), ntodo = 0;
	int delivered = 0, stop = 0;

	if (v->nchunks != f->n || v->chunk_size != f->chunk_size)
		return -EINVAL;
	/* now and then, the map's area taken (a ring the traced processes
	 * fill), and the entries of processes gone that hold no chunk any
	 * more dropped: their events are overwritten, no snapshot needs them
	 * (issue 54: a forking program's, 1.5 KB a child, kept for ever) */
	if (++f->polls % 64 == 0) {
		pt_objs_collect(&t->s);
		pt_objs_retire_unheld(&t->s, 0);
	}
	/* the chunks with something new, oldest life first: a writer's
	 * chunks in the order it took them, so its records in its order */
	for (uint32_t i = 0; i < f->n; i++) {
		const struct pt_chunk *ck = &v->chunks[i];
		uint64_t ss = atomic_load_explicit(&ck->ss, memory_order_acquire);
		unsigned st = PT_SS_STATE(ss);
		if (st != PT_CK_OPEN && st != PT_CK_SEALED)
			continue;
		uint64_t seq = PT_SS_SEQ(ss);
		if (f->ck[i].seq == seq + 1 &&
		    PT_COMMIT_POS(atomic_load_explicit(&ck->commit, memory_order_relaxed)) <=
		            f->ck[i].off) {
			f->ck[i].done |= st == PT_CK_SEALED; /* (its commit is final) */
			continue;
		}
		f->todo[ntodo].seq = seq;
		f->todo[ntodo++].i = i;
	}
	qsort(f->todo, ntodo, sizeof *f->todo, by_seq);
	for (uint32_t k = 0; k < ntodo && !stop; k++) {
		uint32_t i = f->todo[k].i;
		struct fck *c = &f->ck[i];
		struct ckd d;
		if (ck_read(t, i, epoch, &d))
			continue;
		if (c->seq != d.seq + 1) { /* a new life: from its start */
			if (c->seq && !c->done)
				f->missed++; /* the old life's rest was overwritten unread */
			*c = (struct fck){ d.seq + 1, 0, 0, 0 };
		}
		if (d.commit <= c->off)
			continue;
		uint32_t from = c->off;
		copy_words(v, i, from, d.commit, f->buf + from);
		if (!ck_alive(t, i, d.seq)) { /* overwritten while copied: dropped */
			f->missed++;
			c->off = f->chunk_size;
			c->done = 1;
			continue;
		}
		uint32_t off = from;
		uint64_t addr = c->addr;
		int got = 0;
		/* the headers walked (a record of a type no trigger wants costs
		 * a few compares); a wanted one decoded whole */
		while (off + PT_REC_SHORT <= d.commit) {
			uint64_t w0, w1;
			memcpy(&w0, f->buf + off, 8);
			uint32_t len = PT_REC_LEN(w0), id = PT_REC_ID(w0);
			int wide = PT_REC_WIDE(w0) != 0;
			uint32_t bytes = PT_REC_BYTES(len, wide);
			if (id >= PT_NIDS || len > v->max_data || bytes > d.commit - off ||
			    (!wide && off == 0)) {
				got = -1; /* bad data: the rest is skipped */
				break;
			}
			f->records++;
			if (!(f->want[id / 64] >> (id % 64) & 1)) {
				if (wide) {
					memcpy(&w1, f->buf + off + 8u * PT_REC_W1(len), 8);
					addr = w1 & PT_MASK48;
				}
				off += bytes;
				continue;
			}
			struct rec r = { 0 };
			rec_next(f->buf, d.commit, &off, d.base, v->max_data, &addr, &r);
			struct pt_snap_ev e = { (uint64_t)tick_ns(t, r.tick), d.thread, d.pid, d.level,
			                        r.id, r.len, r.data };
			delivered++;
			if ((stop = fn(arg, &e)) != 0)
				break; /* (the next poll goes on after it) */
		}
		c->off = got < 0 ? f->chunk_size : off;
		c->done = got < 0 || (d.sealed && off >= d.commit);
		c->addr = addr;
	}
	return delivered;
}

/* ------------------------------------------------------------ the snapshot */

struct sck {              /* a chunk copied whole */
	int32_t pid;
	uint32_t level, serial, commit;
	uint64_t thread, seq, base;
	uint32_t idx;         /* its place in the stream */
	uint8_t open;         /* it was open when copied */
	uint8_t cut;          /* its records after commit are lost */
	uint32_t nev;         /* (sealed) its records */
	uint64_t base_ns;
	uint32_t slot;        /* its copy is at slot * chunk_size in the buffer */
};

static int by_life(const void *x, const void *y)
{
	uint64_t a = ((const struct sck *)x)->seq, b = ((const struct sck *)y)->seq;
	return a < b ? -1 : a > b;
}

static int by_writer(const void *x, const void *y)
{
	const struct sck *a = x, *b = y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int same_writer(const struct sck *a, const struct sck *b)
{
	return a->pid == b->pid && a->thread == b->thread && a->level == b->level;
}

struct sw {               /* a writer being merged */
	int32_t pid;
	uint64_t thread;
	int one;              /* the trigger event alone (its chunk gone) */
	uint32_t first, end;  /* its chunks in ck[] */
	uint32_t cur, off;
	uint64_t addr;
	struct rec r;         /* its next record */
	uint64_t ns;
	int gap;              /* a chunk of it is missing before r */
	uint32_t gen, wi;     /* its writer index in the block being built, if gen
	                       * is the emitter's (pt_snap_emit) */
};

/* w's next record, 1; 0 when it has no more.  (Inline: once an event of
 * every snapshot.) */
static inline __attribute__((always_inline)) int sw_next(struct pt_clock *clk, const struct sck *ck, const unsigned char *buf,
                   struct sw *w, uint32_t max_data, uint32_t chunk_size)
{
	if (w->one)
		return 0;
	while (w->cur < w->end) {
		const struct sck *c = &ck[w->cur];
		if (rec_next(buf + (size_t)c->slot * chunk_size, c->commit, &w->off, c->base, max_data, &w->addr, &w->r) > 0) {
			int64_t ns;
			if (!pt_clock_ns_cached(clk, w->r.tick, &ns))
				ns = pt_clock_ns(clk, w->r.tick);
			w->ns = (uint64_t)ns;
			return 1;
		}
		if (++w->cur < w->end) {
			uint32_t s = ck[w->cur].serial, p = ck[w->cur - 1].serial;
			if ((s != 1 && s != p + 1) || ck[w->cur - 1].cut)
				w->gap = 1; /* chunks of it were overwritten, or dropped */
		}
		w->off = 0;
		w->addr = 0;
	}
	return 0;
}

static void heap_down(struct sw **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && h[l]->ns < h[m]->ns)
			m = l;
		if (l + 1 < n && h[l + 1]->ns < h[m]->ns)
			m = l + 1;
		if (m == i)
			return;
		struct sw *x = h[i];
		h[i] = h[m], h[m] = x, i = m;
	}
}

/* The copy buffer of the last snapshot, kept for the next: a new one's
 * pages are each a fault (a third of a snapshot's time, measured).  Taken
 * and given back with an exchange, so snapshots of two streams in two
 * threads never share one.  The ring of the log's writing thread
 * (pt_logw_bg_start, SNAP_RING bytes) is kept the same way, in a pair of
 * its own; two snapshots written at once take two of each. */
struct snapbuf { size_t cap; unsigned char *p; };
typedef _Atomic(struct snapbuf *) snapkeep[2];
static snapkeep kept, rings;

/* One of k's buffers of cap bytes at least (one too small is freed), or
 * a new one; NULL without memory. */
static struct snapbuf *buf_take(snapkeep k, size_t cap)
{
	struct snapbuf *b = atomic_exchange(&k[0], NULL);
	if (!b)
		b = atomic_exchange(&k[1], NULL);
	if (b && b->cap >= cap)
		return b;
	if (b) {
		free(b->p);
		free(b);
	}
	if (!(b = malloc(sizeof *b)) || !(b->p = malloc(cap))) {
		free(b);
		return NULL;
	}
	b->cap = cap;
	return b;
}

/* b (may be NULL) kept in k; what k had beyond two is freed. */
static void buf_give(snapkeep k, struct snapbuf *b)
{
	if (b && (b = atomic_exchange(&k[0], b)) != NULL)
		b = atomic_exchange(&k[1], b);
	if (b) {
		free(b->p);
		free(b);
	}
}

/* (tests/snapshot_ring_lapped.c: called after each chunk's copy, to overwrite
 * chunks during a snapshot at a known point) */
void (*pt_ext_snapshot_copy_hook)(void *);
void *pt_ext_snapshot_copy_arg;

/* Does a chunk of trig's writer in ck[0..n) (by writer, in its order)
 * hold trig?  *alone: it does, as the first record of a chunk that was
 * not the writer's first, with none of the writer's before it: all its
 * earlier events were overwritten. */
static int trig_held(struct pt_trid *t, const struct sck *ck, uint32_t n, const unsigned char *buf,
                     const struct pt_snap_ev *trig, int *alone)
{
	const struct pt_view *v = &t->s.view;
	int before = 0;
	*alone = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct sck *c = &ck[i];
		if (c->pid != trig->pid || c->thread != trig->thread || c->level != trig->level ||
		    c->base_ns > trig->ns)
			continue;
		uint32_t off = 0;
		uint64_t addr = 0;
		struct rec r;
		while (rec_next(buf + (size_t)c->slot * v->chunk_size, c->commit, &off, c->base,
		                v->max_data, &addr, &r) > 0) {
			if (r.id == trig->id && r.len == trig->len &&
			    (uint64_t)tick_ns(t, r.tick) == trig->ns &&
			    (!r.len || !memcmp(r.data, trig->data, r.len))) {
				*alone = !before && c->serial != 1;
				return 1;
			}
			before = 1;
		}
	}
	return 0;
}

/* A window copied out of the stream (pt_snap_copy), with all the log
 * needs besides: the names, the map of loaded code, the attributes and a
 * clock of its own, so that pt_snap_emit writes it with no lock and in
 * any thread while the stream goes on. */
struct pt_snap_copy {
	struct snapbuf *sb;
	struct sck *ck;
	uint32_t n, chunk_size, max_data;
	uint64_t from, to;
	struct pt_clock clk;
	struct pt_attr_img attr;
	uint32_t nnames;
	uint32_t *name_id;
	char (*name)[PT_NAME_SZ];
	struct pt_ext_obj *objs;
	size_t nobjs;
	int keep;             /* the trigger event written from trig (the copy lacks it) */
	struct pt_snap_ev trig;
	unsigned char *trig_data;
	struct pt_snap_stats st;
};

void pt_snap_copy_free(struct pt_snap_copy *c)
{
	if (!c)
		return;
	buf_give(kept, c->sb);
	free(c->ck);
	pt_clock_free(&c->clk);
	free(c->name_id);
	free(c->name);
	free(c->objs);
	free(c->trig_data);
	free(c);
}

/* Events in flight at the window's end (docs/design.md, "In flight"): a
 * writer marks its chunk's commit word before it reads the clock, and a
 * chunk is taken marked, so an event already stamped whose record is not
 * committed yet shows as a mark.  The caller looks once the window's end
 * is past by the clock: an open chunk marked now is waited for until its
 * word changes (that event committed, or the chunk sealed or taken; any
 * later event is stamped after now), its writer is found gone (a mark
 * held 1 ms), or the live reader's bound passes (POSIXTRACE_LATE_WAIT_MS:
 * a stopped program's event comes late, and is not in the snapshot).
 * Where a fixed grace after the window's end waited 2 ms always, and
 * missed an event whose writer was preempted inside the call longer. */
#define SETTLE_NAP_NS   20000u
#define SETTLE_ALIVE_NS 1000000u
static void settle(struct pt_trid *t)
{
	const struct pt_view *v = &t->s.view;
	struct inflight { uint64_t ss; uint32_t i, word; } *w;
	uint32_t n = 0;
	uint64_t bound = pt_read_late_ns(&t->s), start = 0, alive_at = 0;

	if (!bound || !(w = malloc((size_t)v->nchunks * sizeof *w)))
		return;
	for (uint32_t i = 0; i < v->nchunks; i++) {
		const struct pt_chunk *ck = &v->chunks[i];
		uint64_t ss = atomic_load_explicit(&ck->ss, memory_order_acquire);
		uint32_t c = atomic_load_explicit(&ck->commit, memory_order_acquire);
		if (PT_SS_STATE(ss) == PT_CK_OPEN && (c & PT_COMMIT_BUSY))
			w[n++] = (struct inflight){ ss, i, c };
	}
	while (n) {
		uint64_t now = pt_mono_ns();
		if (!start)
			start = alive_at = now;
		int look_alive = now - alive_at >= SETTLE_ALIVE_NS;
		if (look_alive)
			alive_at = now;
		for (uint32_t k = 0; k < n;) {
			const struct pt_chunk *ck = &v->chunks[w[k].i];
			if (atomic_load_explicit(&ck->ss, memory_order_acquire) != w[k].ss ||
			    atomic_load_explicit(&ck->commit, memory_order_acquire) != w[k].word ||
			    (look_alive && !pt_read_writer_alive(&t->s, w[k].i)))
				w[k] = w[--n]; /* settled */
			else
				k++;
		}
		if (!n || now - start >= bound)
			break;
		struct timespec nap = { 0, SETTLE_NAP_NS };
		nanosleep(&nap, NULL);
	}
	free(w);
}

/* A copy's own memory: the chunks' list, and the copies, as much as the
 * chunks hold (touched only as used); NULL if there is none. */
static struct pt_snap_copy *copy_new(const struct pt_view *v, uint64_t from, uint64_t to)
{
	struct pt_snap_copy *cp = calloc(1, sizeof *cp);
	struct sck *ck = malloc((size_t)v->nchunks * sizeof *ck);
	struct snapbuf *sb = buf_take(kept, (size_t)v->nchunks * v->chunk_size);

	if (!cp || !ck || !sb || !sb->p) {
		free(cp);
		free(ck);
		buf_give(kept, sb);
		return NULL;
	}
	cp->sb = sb, cp->ck = ck, cp->from = from, cp->to = to;
	cp->chunk_size = v->chunk_size, cp->max_data = v->max_data;
	return cp;
}

/* 1. The chunks that may hold records of the window, into cp->ck by
 * writer: begun by its end, and not followed by a chunk of their writer
 * begun before its start; their number.  A writer all of whose chunks
 * left begin after the window's end, and not with its first, had its
 * chunks up to that end overwritten before this look (the program lapped
 * the stream since the trigger): counted, so that the snapshot says so. */
static uint32_t copy_pick(struct pt_trid *t, struct pt_snap_copy *cp, uint32_t epoch)
{
	const struct pt_view *v = &t->s.view;
	struct sck *ck = cp->ck;
	uint64_t from = cp->from, to = cp->to;
	uint32_t m = 0, n = 0;
	for (uint32_t i = 0; i < v->nchunks; i++) {
		struct ckd d;
		if (ck_read(t, i, epoch, &d) || !d.commit)
			continue;
		uint64_t bns = (uint64_t)tick_ns(t, d.base);
		ck[m++] = (struct sck){ d.pid, d.level, d.serial, d.commit, d.thread, d.seq, d.base,
		                        i, !d.sealed, 0, d.nev, bns, 0 };
	}
	qsort(ck, m, sizeof *ck, by_writer);
	for (uint32_t i = 0; i < m; i++) {
		if (i == 0 || !same_writer(&ck[i], &ck[i - 1]))
			cp->st.lapped += ck[i].base_ns > to && ck[i].serial != 1;
		if (ck[i].base_ns > to)
			continue; /* begun after the window */
		if (!(i + 1 < m && same_writer(&ck[i], &ck[i + 1]) && ck[i + 1].base_ns < from))
			ck[n++] = ck[i];
	}
	return n;
}

/* 2. The m chunks picked, copied oldest first (a thief takes the oldest
 * first), each chunk's words, then its life checked again: one
 * overwritten meanwhile is dropped, counted.  Those kept, their number. */
static uint32_t copy_chunks(struct pt_trid *t, struct pt_snap_copy *cp, uint32_t m)
{
	const struct pt_view *v = &t->s.view;
	struct sck *ck = cp->ck;
	unsigned char *buf = cp->sb->p;
	uint32_t n = 0;
	qsort(ck, m, sizeof *ck, by_life);
	for (uint32_t k = 0; k < m; k++) {
		struct sck *c = &ck[k];
		c->slot = k; /* (packed from the buffer's start: its pages stay warm
		              * from one snapshot to the next, where the chunks'
		              * own places move round the stream) */
		copy_words(v, c->idx, 0, c->commit, buf + (size_t)c->slot * v->chunk_size);
		if (pt_ext_snapshot_copy_hook)
			pt_ext_snapshot_copy_hook(pt_ext_snapshot_copy_arg);
		if (!ck_alive(t, c->idx, c->seq)) {
			cp->st.dropped++;
			cp->st.dropped_events += !c->open && c->nev ? c->nev : 1;
			continue;
		}
		ck[n++] = *c;
	}
	return n;
}

/* 3. The n chunks kept, each writer's in the order it took them.  A chunk
 * copied while open that has a later chunk of its writer was filled and
 * sealed after it was copied: its rest is copied now (else the writer's
 * events between the two copies would be missing with no gap told); if
 * it was overwritten meanwhile, its rest is a gap. */
static void copy_rests(struct pt_trid *t, struct pt_snap_copy *cp, uint32_t n, uint32_t epoch)
{
	const struct pt_view *v = &t->s.view;
	struct sck *ck = cp->ck;
	unsigned char *buf = cp->sb->p;
	qsort(ck, n, sizeof *ck, by_writer);
	for (uint32_t i = 0; i + 1 < n; i++) {
		struct sck *c = &ck[i];
		struct ckd d;
		if (!c->open || !same_writer(c, c + 1))
			continue;
		if (ck_read(t, c->idx, epoch, &d) || d.seq != c->seq) {
			c->cut = 1;
			continue;
		}
		if (d.commit > c->commit) {
			copy_words(v, c->idx, c->commit, d.commit,
			           buf + (size_t)c->slot * v->chunk_size + c->commit);
			if (!ck_alive(t, c->idx, d.seq)) { /* (what was copied before stands) */
				c->cut = 1;
				continue;
			}
			c->commit = d.commit;
		}
	}
}

/* Is the trigger event the caller saw to be written from trig?  It is
 * when it is in the window and the copy no longer holds it (overwritten
 * since): then a writer of its own, after a gap. */
static int trig_keep(struct pt_trid *t, struct pt_snap_copy *cp, const struct pt_snap_ev *trig)
{
	int alone = 0;
	int keep = trig && trig->ns >= cp->from && trig->ns <= cp->to && trig->id < PT_NIDS &&
	           trig->len <= cp->max_data &&
	           !trig_held(t, cp->ck, cp->n, cp->sb->p, trig, &alone);
	cp->st.trig_alone = alone && cp->from < trig->ns;
	return keep;
}

/* What the log needs of the stream besides its records, taken now: the
 * event names, the map of loaded code, a clock of its own, the
 * attributes.  0, or ENOMEM. */
static int copy_meta(struct pt_trid *t, struct pt_snap_copy *cp)
{
	char name[PT_NAME_SZ];
	if (t->s.tctl)
		pt_names_copy(t->s.view.names, pt_ctl_names(t->s.tctl));
	for (trace_event_id_t id = 0; id < PT_NIDS; id++)
		if (pt_name_get(t->s.view.names, id, name) == 0 && name[0])
			cp->nnames++;
	cp->name_id = malloc((cp->nnames ? cp->nnames : 1) * sizeof *cp->name_id);
	cp->name = malloc((cp->nnames ? cp->nnames : 1) * sizeof *cp->name);
	pt_objs_collect(&t->s);
	cp->objs = malloc((t->s.rd.nobjs ? t->s.rd.nobjs : 1) * sizeof *cp->objs);
	cp->clk = t->s.clk;
	cp->clk.pt = malloc((t->s.clk.cap ? t->s.clk.cap : 1) * sizeof *cp->clk.pt);
	if (!cp->name_id || !cp->name || !cp->objs || !cp->clk.pt) {
		if (!cp->clk.pt)
			memset(&cp->clk, 0, sizeof cp->clk);
		return ENOMEM;
	}
	memcpy(cp->clk.pt, t->s.clk.pt, t->s.clk.n * sizeof *cp->clk.pt);
	uint32_t k = 0;
	for (trace_event_id_t id = 0; id < PT_NIDS && k < cp->nnames; id++)
		if (pt_name_get(t->s.view.names, id, name) == 0 && name[0]) {
			cp->name_id[k] = id;
			memcpy(cp->name[k++], name, sizeof name);
		}
	cp->nnames = k;
	memcpy(cp->objs, t->s.rd.objs, t->s.rd.nobjs * sizeof *cp->objs);
	cp->nobjs = t->s.rd.nobjs;
	cp->attr = t->s.attr;
	return 0;
}

/* The trigger event kept in the copy, with its payload: 0, or ENOMEM. */
static int copy_trig(struct pt_snap_copy *cp, const struct pt_snap_ev *trig)
{
	if (!(cp->trig_data = malloc(trig->len ? trig->len : 1)))
		return ENOMEM;
	memcpy(cp->trig_data, trig->data, trig->len);
	cp->trig = *trig;
	cp->trig.data = cp->trig_data;
	cp->keep = 1;
	return 0;
}

int pt_snap_copy(struct pt_trid *t, uint64_t from, uint64_t to, const struct pt_snap_ev *trig,
                 struct pt_snap_copy **out)
{
	settle(t); /* (first: what is stamped by now is then in the chunks) */
	uint32_t epoch = epoch_of(t);
	struct pt_snap_copy *cp = copy_new(&t->s.view, from, to);

	*out = NULL;
	if (!cp)
		return ENOMEM;
	uint32_t n = copy_pick(t, cp, epoch);
	n = cp->st.chunks = copy_chunks(t, cp, n);
	copy_rests(t, cp, n, epoch);
	cp->n = n;
	int keep = trig_keep(t, cp, trig);
	int rc = copy_meta(t, cp);
	if (!rc && keep)
		rc = copy_trig(cp, trig);
	if (rc) {
		pt_snap_copy_free(cp);
		return rc;
	}
	*out = cp;
	return 0;
}

/* The writing of a copy (pt_snap_emit): the log writer, the span of the
 * block being built that the records go straight into (as the flusher
 * writes), and the run of short records of one type (so of one writer)
 * being written in it, counted here for the summary, which then need not
 * read them again (pt_logw_span_pre), when RUN_PRE long at least.  The
 * merge's steps below (EMIT_INLINE) are inlined into pt_snap_emit, so
 * that this state stays in registers as one function's locals would. */
#define RUN_PRE 8u
struct emit {
	struct pt_snap_copy *cp;
	const unsigned char *buf;
	struct pt_snap_stats *st;
	struct pt_logw *w;
	struct pt_logw_span *s;
	int fd;
	int sp;                  /* s is open */
	uint32_t used, sn, gen;  /* s's bytes and records; which span (sw.gen) */
	uint64_t sl;             /* s's last time */
	uint64_t lost;           /* the gaps told so far */
	uint64_t synced;         /* the file's write-back started up to here */
	uint32_t r_off, r_n, r_id, r_wi; /* the run: where, how many, type, writer */
	uint64_t r_first, r_last, r_min, r_max;
};

#define EMIT_INLINE static inline __attribute__((always_inline))

/* The run being counted ends: given to the span if long enough. */
EMIT_INLINE void run_end(struct emit *e)
{
	if (e->r_n >= RUN_PRE) {
		struct pt_logw_pre r = { e->r_off, e->used, e->r_wi, e->r_id, e->r_n,
		                         e->r_first, e->r_last, e->r_min, e->r_max };
		pt_logw_span_pre(e->s, &r);
	}
	e->r_n = 0;
}

/* A short record of type info at ns, written at e->used: the run goes on
 * or ends (and one begins if runs: the record is short, uncut). */
EMIT_INLINE void run_count(struct emit *e, unsigned info, uint64_t ns, int runs)
{
	if (runs && e->r_n && info == e->r_id && e->s->wi == e->r_wi) {
		e->r_n++;
		e->r_last = ns;
		e->r_min = ns < e->r_min ? ns : e->r_min;
		e->r_max = ns > e->r_max ? ns : e->r_max;
		return;
	}
	run_end(e);
	if (runs) {
		e->r_off = e->used, e->r_n = 1, e->r_id = info, e->r_wi = e->s->wi;
		e->r_first = e->r_last = e->r_min = e->r_max = ns;
	}
}

/* The span closed, if open (its run counted first); a new span is of a
 * new generation, so no writer's index of this one is used in it. */
EMIT_INLINE void span_close(struct emit *e)
{
	if (e->sp) {
		run_end(e);
		pt_logw_span_close(e->w, e->s, e->used, e->sn, e->sl);
	}
	e->sp = 0, e->gen++;
}

/* After a short record of x's just written into the span: the records
 * that follow it in x's chunk as a thread recording in a loop makes them
 * (short: the same caller; of the same type, with no flag; whole words of
 * payload; each at most lim, in the clock's segment, within the block's
 * reach; room for it) written the same way in a tight loop: an 8-byte
 * header and the payload's words each.  The first that is anything else
 * is left to the general path.  The counts of the run and of the
 * snapshot go on. */
static void burst(struct emit *e, struct sw *x, uint64_t lim)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	struct pt_snap_copy *cp = e->cp;
	const struct pt_logw_span *s = e->s;
	const struct sck *c = &cp->ck[x->cur];
	const unsigned char *cb = e->buf + (size_t)c->slot * cp->chunk_size;
	const struct pt_clock *clk = &cp->clk;
	if (clk->kind != PT_CLK_TSC || x->r.len & 7u)
		return;
	const uint32_t commit = c->commit, key = x->r.id, max_data = cp->max_data;
	const uint64_t base = c->base, lo = clk->seg_tick, hi = clk->seg_end, mult = clk->seg_mult;
	const int64_t nsoff = clk->seg_ns + clk->real_minus_mono;
	const uint64_t hdr = (uint64_t)(key | PT_LOG_RF_SHORT) << (8 * PT_LOG_R_INFO);
	uint32_t off = x->off, used = e->used, k = 0;
	uint64_t ns = x->ns, mn = e->r_min, mx = e->r_max, maxtick = 0;
	while (off + PT_REC_SHORT <= commit) {
		uint64_t w0;
		memcpy(&w0, cb + off, 8);
		uint32_t len = PT_REC_LEN(w0);
		if (((uint32_t)(w0 >> 32) & 0xffffu) != key || (len & 7u) || len > max_data ||
		    PT_REC_SHORT + len > commit - off || used + PT_LOG_REC_SHORT + len > s->room)
			break;
		uint64_t tick = pt_rec_tick_short(base, w0);
		if (tick < lo || tick >= hi)
			break;
		uint64_t t = (uint64_t)(nsoff + (int64_t)(uint64_t)(((unsigned __int128)(tick - lo) *
		                                                      mult) >> 32));
		if (t > lim || t < s->base || t - s->base > UINT32_MAX)
			break;
		uint64_t h = (t - s->base) | (uint64_t)len << (8 * PT_LOG_R_LEN) | hdr;
		unsigned char *p = s->p + used;
		memcpy(p, &h, 8);
		if (len == 16)
			memcpy(p + 8, cb + off + 8, 16);
		else
			memcpy(p + 8, cb + off + 8, len);
		used += PT_REC_SHORT + len;
		off += PT_REC_SHORT + len;
		ns = t;
		mn = t < mn ? t : mn;
		mx = t > mx ? t : mx;
		maxtick = tick > maxtick ? tick : maxtick;
		k++;
	}
	if (!k)
		return;
	if (clk->seg_tail && maxtick > clk->frontier) /* (as pt_clock_ns_cached moves it) */
		cp->clk.frontier = maxtick;
	e->used = used;
	e->sn += k;
	e->sl = ns;
	e->r_n += k;
	e->r_last = ns;
	e->r_min = mn, e->r_max = mx;
	e->st->events += k;
	e->st->last = ns;
	x->off = off;
	x->ns = ns; /* (x->r stands for its last record: the same type, length, caller) */
#else
	(void)e, (void)x, (void)lim;
#endif
}

/* The copy's writers: each a run of ck[] (by writer, in its order), in
 * ws[]; their number. */
static size_t emit_writers(const struct pt_snap_copy *cp, struct sw *ws)
{
	const struct sck *ck = cp->ck;
	size_t nw = 0;
	for (uint32_t i = 0; i < cp->n; i++) {
		if (i == 0 || !same_writer(&ck[i], &ck[i - 1]))
			ws[nw++] = (struct sw){ ck[i].pid, ck[i].thread, 0, i, i + 1, i, 0, 0, { 0 }, 0, 0, 0, 0 };
		else
			ws[nw - 1].end = i + 1;
	}
	return nw;
}

/* The log begun in w: its header (the stream's attributes, as a log of
 * its own), then its names and map, so that it opens alone. */
static int emit_head(const struct pt_snap_copy *cp, struct pt_logw *w, int fd, int *w_ok)
{
	struct pt_attr_img attr = cp->attr;
	attr.has_log = 1;
	attr.log_policy = POSIX_TRACE_APPEND;
	int rc = pt_logw_init(w, fd, &attr, POSIX_TRACE_APPEND, 0);
	if (rc)
		return rc;
	*w_ok = 1;
	for (uint32_t i = 0; i < cp->nnames && !rc; i++)
		rc = pt_logw_name(w, cp->name_id[i], cp->name[i]);
	for (size_t i = 0; i < cp->nobjs && !rc; i++)
		rc = pt_logw_obj(w, &cp->objs[i]);
	return rc;
}

/* The merge's heap: each writer at its first record of the window [from,
 * to] (one with none left out), and the trigger event kept as a writer of
 * its own after a gap; the heap's size. */
static size_t merge_begin(struct pt_snap_copy *cp, const unsigned char *buf, struct sw *ws,
                          size_t nw, struct sw **heap)
{
	const struct pt_snap_ev *trig = &cp->trig;
	size_t nh = 0;
	for (size_t i = 0; i < nw; i++) {
		struct sw *x = &ws[i];
		while (sw_next(&cp->clk, cp->ck, buf, x, cp->max_data, cp->chunk_size) && x->ns < cp->from)
			x->gap = 0; /* (before the window: a gap there is not the window's) */
		if (x->cur < x->end && x->ns <= cp->to)
			heap[nh++] = x;
	}
	if (cp->keep) {
		struct sw *x = &ws[nw];
		*x = (struct sw){ trig->pid, trig->thread, 1, 0, 0, 0, 0, 0,
		                  { 0, 0, trig->id, trig->len, 0, trig->data }, trig->ns, 1, 0, 0 };
		heap[nh++] = x;
		cp->st.trig_kept = 1;
	}
	for (size_t i = nh / 2; i-- > 0;)
		heap_down(heap, nh, i);
	return nh;
}

/* A gap before x's next record, told where it is as the reader tells a
 * loss: an OVERFLOW and a RESUME with the count so far. */
EMIT_INLINE int put_gap(struct emit *e, struct sw *x)
{
	span_close(e);
	e->lost++;
	int rc = pt_logw_event(e->w, x->ns, x->pid, x->thread, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0);
	if (!rc)
		rc = pt_logw_event_lost(e->w, x->ns, x->pid, x->thread, 0, POSIX_TRACE_RESUME, e->lost);
	x->gap = 0;
	e->st->gaps++;
	return rc;
}

/* The span made ready for x's record of len bytes: opened if none is,
 * else turned to x's writer (one it has already, or one it can take);
 * closed when it cannot take x's. */
EMIT_INLINE void span_for(struct emit *e, struct sw *x, uint32_t len)
{
	struct pt_logw_span *s = e->s;
	if (!e->sp && pt_logw_span_open(e->w, x->pid, x->thread, x->ns, s)) {
		e->sp = 1, e->used = e->sn = 0;
		x->gen = e->gen, x->wi = s->wi;
	} else if (e->sp && (s->who.pid != x->pid || s->who.thread != x->thread)) {
		if (x->gen == e->gen) { /* a writer the span has already */
			s->wi = x->wi;
			s->where = (uint64_t)x->wi << PT_LOG_WHERE_WI;
			s->who = (struct pt_logw_who){ x->pid, x->thread };
		} else if (pt_logw_span_who(e->w, s, x->pid, x->thread, e->used + PT_LOG_REC + len)) {
			x->gen = e->gen, x->wi = s->wi;
		} else {
			span_close(e);
		}
	}
}

/* x's record encoded into the open span, which has room and reach for
 * it; 1 if a burst may follow (a short record, uncut, unswapped, of a
 * writer with a chunk). */
EMIT_INLINE int span_put(struct emit *e, struct sw *x, uint32_t len)
{
	struct pt_logw_span *s = e->s;
	unsigned char *p = s->p + e->used;
	unsigned info = x->r.id | (x->r.trunc ? PT_LOG_RF_TRUNC : 0);
	uint32_t hl = pt_log_put_rec(p, (uint32_t)(x->ns - s->base), len, info,
	                             (x->r.addr & PT_MASK48) | s->where, s->swap, &s->prev);
	/* (a run: its type alone) */
	run_count(e, info, x->ns, hl == PT_LOG_REC_SHORT && !x->r.trunc);
	/* (a small payload's copy inline: most are) */
	if (len == 16)
		memcpy(p + hl, x->r.data, 16);
	else if (len == 8)
		memcpy(p + hl, x->r.data, 8);
	else
		memcpy(p + hl, x->r.data, len);
	e->used += hl + len;
	e->sn++;
	e->sl = x->ns;
	return hl == PT_LOG_REC_SHORT && !x->r.trunc && !s->swap && !x->one;
}

/* x's records written while they come before lim (the other writers'
 * next); *more: x has a record left.  An event the span cannot take (the
 * block full, a writer table full, a time out of the block's reach, a
 * payload to cut) goes through pt_logw_event(), which makes room. */
EMIT_INLINE int emit_run(struct emit *e, struct sw *x, uint64_t lim, int *more)
{
	struct pt_snap_copy *cp = e->cp;
	struct pt_snap_stats *st = e->st;
	int rc;
	do {
		if (x->gap && (rc = put_gap(e, x)) != 0)
			return rc;
		uint32_t len = x->r.len;
		int tryb = 0;
		span_for(e, x, len);
		struct pt_logw_span *s = e->s;
		if (e->sp && x->ns >= s->base && x->ns - s->base <= UINT32_MAX &&
		    len <= s->max_payload && e->used + PT_LOG_REC + len <= s->room) {
			tryb = span_put(e, x, len);
		} else {
			span_close(e);
			rc = pt_logw_event(e->w, x->ns, x->pid, x->thread, x->r.addr, x->r.id,
			                   (int)x->r.trunc, x->r.data, len);
			if (rc)
				return rc;
		}
		if (!st->events++)
			st->first = x->ns;
		st->last = x->ns;
		if (tryb)
			burst(e, x, lim);
		*more = sw_next(&cp->clk, cp->ck, e->buf, x, cp->max_data, cp->chunk_size);
	} while (*more && x->ns <= lim);
	return 0;
}

/* bytes of the log between two starts of its write-back */
#define SNAP_SYNC_STEP (1u << 20)

/* How much of the file to reserve before writing (pt_logw_bg_start): the
 * chunks' records, about the log's size (the log's records are as long
 * as the stream's, and the window is most of them).  On a disk's file
 * system this spares the writes and the write-back reserving and
 * allocating blocks a page at a time (ext4: a quarter of the kernel's
 * time); none in memory (tmpfs, ramfs), where reserving a page is making
 * it: the writes then do the same work twice. */
static uint64_t prealloc_of(const struct pt_snap_copy *cp, int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) || fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC)
		return 0;
	uint64_t n = 0;
	for (uint32_t i = 0; i < cp->n; i++)
		n += cp->ck[i].commit;
	return n;
}

#define SNAP_RING (2u << 20)

/* Is a second writing thread worth its CPU?  Only with 4 CPUs or more.
 * On 2 (bench/snapshot, a program of two threads recording 5 M events/s,
 * 100 ms windows), it took 2.5 ms off a snapshot (p50 7.8-9.9 ms against
 * 10.2-11.5) but both threads busy at once cost the program's own work:
 * its events per CPU microsecond during a snapshot 0.85-1.04 of without,
 * against 0.985-1.05 with one thread. */
static int bg_worth(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN) >= 4;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
/* The pages of [p, p + n) made present now (a kernel without
 * MADV_POPULATE_WRITE: a byte a page written). */
static void populate(unsigned char *p, size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + pg - 1) & ~(uintptr_t)(pg - 1);
	uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)(pg - 1);
	int saved = errno;
	if (b > a && madvise((void *)a, b - a, MADV_POPULATE_WRITE) == 0) {
		errno = saved;
		return;
	}
	errno = saved;
	for (size_t i = 0; i < n; i += pg)
		((volatile unsigned char *)p)[i] = 0;
}

void pt_snap_prepare(size_t cap, size_t warm)
{
	struct snapbuf *b = buf_take(kept, cap);
	if (b)
		populate(b->p, warm < cap ? warm : cap);
	buf_give(kept, b);
	struct snapbuf *r = bg_worth() ? buf_take(rings, SNAP_RING) : NULL;
	if (r)
		populate(r->p, SNAP_RING);
	buf_give(rings, r);
}

/* The records stamped in [from, to], merged by time: the earliest
 * writer's run taken while its events come before the other writers'
 * next ones (the heap's two children: its next is at the top). */
EMIT_INLINE int merge(struct emit *e, struct sw **heap, size_t nh)
{
	uint64_t to = e->cp->to;
	int rc = 0;
	while (nh && !rc) {
		struct sw *x = heap[0];
		uint64_t lim = to;
		/* the file's pages sent to the disk as they are written, so that
		 * the fsync at the end waits for the last ones only */
		if (!e->w->bg && e->w->pos - e->synced >= SNAP_SYNC_STEP) {
			(void)sync_file_range(e->fd, (off_t)e->synced, (off_t)(e->w->pos - e->synced),
			                      SYNC_FILE_RANGE_WRITE);
			e->synced = e->w->pos;
		}
		if (nh > 1 && heap[1]->ns < lim)
			lim = heap[1]->ns;
		if (nh > 2 && heap[2]->ns < lim)
			lim = heap[2]->ns;
		int more = 0;
		if ((rc = emit_run(e, x, lim, &more)) != 0)
			break;
		if (!more || x->ns > to)
			heap[0] = heap[--nh];
		heap_down(heap, nh, 0);
	}
	span_close(e);
	return rc;
}

/* The log finished (the last block, the summary, END: the stream's
 * status with its losses) and on disk. */
static int emit_end(struct pt_logw *w, int fd, uint64_t lost)
{
	struct posix_trace_status_info si = { 0 };
	si.posix_stream_status = POSIX_TRACE_RUNNING;
	si.posix_stream_overrun_status = lost ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
	w->stream_lost = lost;
	int rc = pt_logw_finish(w, &si);
	if (!rc && w->err)
		rc = w->err;
	if (!rc && fsync(fd) && errno != EINVAL && errno != EROFS)
		rc = errno;
	return rc;
}

int pt_snap_emit(struct pt_snap_copy *cp, int fd, struct pt_snap_stats *stout)
{
	struct pt_snap_stats *st = &cp->st;
	struct sw *ws = NULL, **heap = NULL;
	struct pt_logw w;
	struct pt_logw_span s;
	struct snapbuf *ring = NULL;
	int rc = 0, w_ok = 0;

	/* (a copy is written once: its stats are its own from here) */
	st->events = st->gaps = st->first = st->last = st->bytes = st->trig_kept = 0;
	ws = calloc(cp->n + 1, sizeof *ws);
	heap = calloc(cp->n + 1, sizeof *heap);
	if (!ws || !heap) {
		rc = ENOMEM;
		goto out;
	}
	size_t nw = emit_writers(cp, ws);
	/* 4. the log: its names and map first */
	rc = emit_head(cp, &w, fd, &w_ok);
	if (!w_ok)
		goto out;
	/* the blocks written by a second thread while this one encodes the
	 * next (log/logwbg.c: the kernel's work on the file is two thirds
	 * of the writing), on a machine with a CPU to spare for it; else, or
	 * where it cannot be, here */
	ring = bg_worth() ? buf_take(rings, SNAP_RING) : NULL;
	if (ring && pt_logw_bg_start(&w, ring->p, SNAP_RING, SNAP_SYNC_STEP, prealloc_of(cp, fd))) {
		buf_give(rings, ring);
		ring = NULL;
	}
	/* 5. the records, merged by time */
	struct emit e = { .cp = cp, .buf = cp->sb->p, .st = st, .w = &w, .s = &s, .fd = fd, .gen = 1 };
	size_t nh = merge_begin(cp, e.buf, ws, nw, heap);
	if (!rc)
		rc = merge(&e, heap, nh);
	/* 6. finished, on disk */
	if (!rc)
		rc = emit_end(&w, fd, e.lost);
	st->bytes = w.written;
out:
	if (w_ok)
		pt_logw_free(&w); /* (its thread stopped: the ring is free) */
	buf_give(rings, ring);
	free(heap);
	free(ws);
	*stout = *st;
	return rc;
}

int pt_snap_write(struct pt_trid *t, int fd, uint64_t from, uint64_t to,
                  const struct pt_snap_ev *trig, struct pt_snap_stats *st)
{
	struct pt_snap_copy *cp;
	int rc = pt_snap_copy(t, from, to, trig, &cp);
	memset(st, 0, sizeof *st);
	if (rc)
		return rc;
	rc = pt_snap_emit(cp, fd, st);
	pt_snap_copy_free(cp);
	return rc;
}

unsigned pt_snap_use(const struct pt_trid *t)
{
	uint64_t s = atomic_load_explicit(&t->s.hdr->sealed_bytes, memory_order_relaxed);
	uint64_t b = t->s.view.budget ? t->s.view.budget : 1;
	return s >= b ? 1000u : (unsigned)(s * 1000 / b);
}
