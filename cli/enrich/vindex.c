/*
 * vindex.c -- the index `posixtrace view` answers from: per thread lane,
 * event counts per time bucket per type slot, at levels of detail (level
 * 0 the finest, each next one half as many buckets), built in one
 * streaming pass over the log and cached (vcache.c: where, how named,
 * when removed), keyed by the log file's identity (device, inode, size,
 * modification time).  Also the places of the lost-event and
 * damage markers (OVERFLOW, RESUME, ERROR events) and of the no-loss
 * waits (posixtrace_noloss_wait: its thread, when the wait ended and how
 * long it was, which is its payload: the counting pass's batches carry
 * none, so each wait's is read after a seek to its time, or, past
 * VIX_SEEK_WAITS of them, in one more pass); at most VIX_MAX_MARKS in all.
 *
 * Memory is bounded by lanes, not events: level 0 holds at most
 * VIX_CELLS counters (the bucket count shrinks as lanes grow, down to
 * 64), and the levels above it as much again.  The events of a window
 * are not in the index: they are read from the log through its block
 * index (tlog_seek), so the index never grows with the events.
 *
 * With spans (view: the NAME/begin, NAME/end convention and its --span
 * options), a second pass pairs them (spans.c) and keeps the complete
 * spans at least long_ns long (at first a level-0 bucket; doubled while
 * more than VIX_MAX_LONG are kept, the shorter then dropped), and per
 * lane the deepest nesting.  A span shorter than that is found by
 * reading the log from long_ns before a window (vquery.c), so that every
 * span overlapping a window is drawn, however early it began.  At most
 * VIX_MAX_LONG per stretch of long_ns per lane and depth can be that
 * long, so the table is bounded by lanes, not events.
 *
 * The cache entry is read as untrusted input: every size is checked
 * against the file's length and every slot and lane number against its
 * range; a file that fails any check is rebuilt.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "enrich.h"

#define VIX_CELLS (4u << 20)  /* level-0 counters: 16 MiB */
#define VIX_MAX_NB 65536u
#define VIX_MIN_NB 64u
#define VIX_MAX_LANES (1u << 20)
static const char vix_magic[8] = "PTVIDX04";
#define VIX_MAX_SPANARGS 65536u
#define VIX_SEEK_WAITS 4096u  /* waits read a seek each; more: a pass */
#define VIX_PAST 4096u        /* events in a row past a time: it is not further on */
#define MARK_PENDING 1u       /* vmark.pad: a wait whose length is not read yet */

/* The index in a cache entry (vcache.c, after the log's identity). */
struct vix_head {
	char magic[8];
	uint64_t t0, t1, nev;
	uint32_t nlanes, nb, nslots, nmarks, marks_dropped, pad;
	uint16_t slot_of[PT_NIDS];
	/* spans: has_spans, then the --span options (each followed by a
	 * NUL: spanlen bytes), the depth of each lane, the nsp long spans */
	uint64_t long_ns;
	uint32_t has_spans, spanlen, nsp, pad2;
};

/* The --span options as the cache entry names them, into buf (cap bytes):
 * the length, or SIZE_MAX when they do not fit. */
static size_t span_text(const struct span_args *a, char *buf, size_t cap)
{
	size_t n = 0;
	for (int i = 0; a && i < a->n; i++) {
		size_t k = strlen(a->v[i]) + 1;
		if (k > cap - n)
			return SIZE_MAX;
		memcpy(buf + n, a->v[i], k);
		n += k;
	}
	return n;
}

uint64_t vindex_bucket_ns(const struct vindex *x, unsigned level)
{
	uint64_t span = x->t1 - x->t0 + 1;
	uint64_t w0 = (span + x->nb - 1) / x->nb;
	return w0 << (level < 63 ? level : 63);
}

static size_t level_cells(const struct vindex *x, unsigned k)
{
	return (size_t)x->nlanes * (x->nb >> k) * x->nslots;
}

/* Levels 1.. from level 0. */
static int build_levels(struct vindex *x)
{
	unsigned nl = 1;
	while ((x->nb >> nl) >= 1 && nl < 32)
		nl++;
	uint32_t **c = realloc(x->cnt, nl * sizeof *c);
	if (!c)
		return -1;
	x->cnt = c;
	for (unsigned k = 1; k < nl; k++)
		x->cnt[k] = NULL;
	x->nlevels = nl;
	for (unsigned k = 1; k < nl; k++) {
		uint32_t nbk = x->nb >> k, ns = x->nslots;
		uint32_t *dst = calloc(level_cells(x, k) ? level_cells(x, k) : 1, sizeof *dst);
		const uint32_t *src = x->cnt[k - 1];
		if (!dst)
			return -1;
		for (uint32_t ln = 0; ln < x->nlanes; ln++)
			for (uint32_t b = 0; b < nbk; b++)
				for (uint32_t s = 0; s < ns; s++) {
					const uint32_t *p = src + ((size_t)ln * (nbk * 2) + b * 2) * ns + s;
					uint64_t v = (uint64_t)p[0] + p[ns];
					dst[((size_t)ln * nbk + b) * ns + s] = v > UINT32_MAX ? UINT32_MAX
					                                                       : (uint32_t)v;
				}
		x->cnt[k] = dst;
	}
	return 0;
}

void vindex_free(struct vindex *x)
{
	for (unsigned k = 0; x->cnt && k < (x->nlevels ? x->nlevels : 1); k++)
		free(x->cnt[k]);
	free(x->cnt);
	free(x->lanes);
	free(x->marks);
	free(x->sp);
	free(x->depth);
	memset(x, 0, sizeof *x);
}

static uint64_t bucket_sum(const struct vindex *x, unsigned k, uint64_t b0, uint64_t b1)
{
	uint64_t n = 0, nbk = x->nb >> k;
	for (uint32_t ln = 0; ln < x->nlanes; ln++)
		for (uint64_t b = b0; b <= b1 && b < nbk; b++)
			for (uint32_t s = 0; s < x->nslots; s++)
				n += x->cnt[k][((size_t)ln * nbk + b) * x->nslots + s];
	return n;
}

uint64_t vindex_estimate(const struct vindex *x, uint64_t from, uint64_t to)
{
	if (to < x->t0 || from > x->t1 || !x->nlanes)
		return 0;
	from = from < x->t0 ? x->t0 : from;
	to = to > x->t1 ? x->t1 : to;
	unsigned k = 0;
	while (k + 1 < x->nlevels && (to - from) / vindex_bucket_ns(x, k) > 4096)
		k++;
	uint64_t w = vindex_bucket_ns(x, k);
	return bucket_sum(x, k, (from - x->t0) / w, (to - x->t0) / w);
}

/* ------------------------------------------------------------ the cache */

/* 0: x holds the cached index of the log with identity x->key; -1: none
 * usable (no entry, or one that does not check). */
static int cache_load(struct vindex *x, int dir, const struct span_args *a)
{
	struct vix_head h;
	uint64_t len;
	int fd = vcache_open(dir, &x->key, &len);
	static char want_args[VIX_MAX_SPANARGS], got_args[VIX_MAX_SPANARGS];
	size_t nargs = span_text(a, want_args, sizeof want_args);

	if (fd < 0)
		return -1;
	if (vcache_read(fd, &h, sizeof h) || memcmp(h.magic, vix_magic, 8) ||
	    h.nlanes > VIX_MAX_LANES || h.nb < 1 || h.nb > VIX_MAX_NB || (h.nb & (h.nb - 1)) ||
	    h.nslots < 1 || h.nslots > VIX_SLOTS || h.nmarks > VIX_MAX_MARKS || h.t1 < h.t0 ||
	    h.has_spans > 1 || h.spanlen > VIX_MAX_SPANARGS || h.nsp > VIX_MAX_LONG ||
	    (!h.has_spans && (h.spanlen || h.nsp)) || (a && !h.has_spans)) {
		close(fd);
		return -1;
	}
	size_t cells = (size_t)h.nlanes * h.nb * h.nslots;
	size_t want = sizeof h + h.nlanes * sizeof(struct vlane) + cells * 4 +
	              h.nmarks * sizeof(struct vmark) + h.spanlen +
	              (h.has_spans ? h.nlanes * sizeof(uint16_t) + h.nsp * sizeof(struct vspan) : 0);
	if (len != want || cells > 2 * (size_t)VIX_CELLS) {
		close(fd);
		return -1;
	}
	x->t0 = h.t0;
	x->t1 = h.t1;
	x->nev = h.nev;
	x->nlanes = h.nlanes;
	x->nb = h.nb;
	x->nslots = h.nslots;
	x->nmarks = x->marks_cap = h.nmarks;
	x->marks_dropped = h.marks_dropped;
	memcpy(x->slot_of, h.slot_of, sizeof x->slot_of);
	x->lanes = malloc((h.nlanes ? h.nlanes : 1) * sizeof *x->lanes);
	x->cnt = calloc(1, sizeof *x->cnt);
	x->marks = malloc((h.nmarks ? h.nmarks : 1) * sizeof *x->marks);
	if (x->cnt)
		x->cnt[0] = malloc((cells ? cells : 1) * 4);
	int bad = !x->lanes || !x->cnt || !x->cnt[0] || !x->marks ||
	          vcache_read(fd, x->lanes, h.nlanes * sizeof *x->lanes) ||
	          vcache_read(fd, x->cnt[0], cells * 4) ||
	          vcache_read(fd, x->marks, h.nmarks * sizeof *x->marks);
	if (!bad && a) { /* the spans, made with the same options */
		x->has_spans = 1;
		x->long_ns = h.long_ns;
		x->nsp = h.nsp;
		x->depth = malloc((h.nlanes ? h.nlanes : 1) * sizeof *x->depth);
		x->sp = malloc((h.nsp ? h.nsp : 1) * sizeof *x->sp);
		bad = !x->depth || !x->sp || h.spanlen != nargs ||
		      vcache_read(fd, got_args, h.spanlen) || memcmp(got_args, want_args, nargs) ||
		      vcache_read(fd, x->depth, h.nlanes * sizeof *x->depth) ||
		      vcache_read(fd, x->sp, h.nsp * sizeof *x->sp) || !h.long_ns;
	}
	close(fd);
	for (unsigned i = 0; !bad && i < PT_NIDS; i++)
		bad = x->slot_of[i] >= x->nslots;
	for (uint32_t i = 0; !bad && i < x->nmarks; i++) {
		const struct vmark *m = &x->marks[i];
		bad = m->lane >= x->nlanes || m->ts < x->t0 || m->ts > x->t1 || m->pad ||
		      (m->id != POSIX_TRACE_ERROR && m->id != POSIX_TRACE_OVERFLOW &&
		       m->id != POSIX_TRACE_RESUME && m->id != PT_EXT_NOLOSS_WAIT) ||
		      (m->id != PT_EXT_NOLOSS_WAIT && m->dur);
	}
	for (uint32_t i = 0; !bad && i < x->nsp; i++) {
		const struct vspan *v = &x->sp[i];
		bad = v->lane >= x->nlanes || v->elane >= x->nlanes || v->def >= SPAN_MAX ||
		      v->dur < x->long_ns || v->start < x->t0 || v->start > x->t1 ||
		      v->dur > x->t1 - v->start;
	}
	x->nlevels = 1;
	if (bad || build_levels(x)) {
		struct vkey k = x->key;
		vindex_free(x);
		x->key = k;
		return -1;
	}
	x->from_cache = 1;
	return 0;
}

static void cache_store(const struct vindex *x, int dir, const char *path,
                        const struct span_args *a)
{
	struct vix_head h;
	static char args[VIX_MAX_SPANARGS];
	size_t nargs = span_text(a, args, sizeof args);

	memset(&h, 0, sizeof h);
	memcpy(h.magic, vix_magic, 8);
	h.t0 = x->t0;
	h.t1 = x->t1;
	h.nev = x->nev;
	h.nlanes = x->nlanes;
	h.nb = x->nb;
	h.nslots = x->nslots;
	h.nmarks = x->nmarks;
	h.marks_dropped = x->marks_dropped;
	memcpy(h.slot_of, x->slot_of, sizeof h.slot_of);
	if (nargs == SIZE_MAX)
		return; /* (options too long to name: not kept) */
	h.has_spans = (uint32_t)x->has_spans;
	if (x->has_spans) {
		h.long_ns = x->long_ns;
		h.spanlen = (uint32_t)nargs;
		h.nsp = x->nsp;
	}
	struct iovec iov[] = {
		{ &h, sizeof h },
		{ x->lanes, x->nlanes * sizeof *x->lanes },
		{ x->cnt[0], level_cells(x, 0) * 4 },
		{ x->marks, x->nmarks * sizeof *x->marks },
		{ args, h.spanlen },
		{ x->depth, x->has_spans ? x->nlanes * sizeof *x->depth : 0 },
		{ x->sp, h.nsp * sizeof *x->sp },
	};
	vcache_store(dir, &x->key, path, iov, sizeof iov / sizeof iov[0]);
}

void vindex_sweep(const struct vindex *x)
{
	int dir = vcache_dir(0);

	if (dir >= 0) {
		vcache_sweep(dir, &x->key);
		close(dir);
	}
}

/* ------------------------------------------------------------ the pass */

static int by_count_desc(const void *a, const void *b, void *ctx)
{
	const uint64_t *c = ctx;
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (c[y] > c[x]) - (c[y] < c[x]);
}

static void choose_slots(struct vindex *x, const struct tlog *l)
{
	unsigned ids[PT_NIDS], n = 0;
	static const unsigned first[] = { POSIX_TRACE_ERROR, POSIX_TRACE_OVERFLOW,
	                                  POSIX_TRACE_RESUME };

	/* the markers of losses and damage first, then by count */
	for (unsigned i = 0; i < 3; i++)
		if (l->count[first[i]])
			ids[n++] = first[i];
	unsigned nfirst = n;
	for (unsigned i = 0; i < PT_NIDS; i++)
		if (l->count[i] && i != POSIX_TRACE_ERROR && i != POSIX_TRACE_OVERFLOW &&
		    i != POSIX_TRACE_RESUME)
			ids[n++] = i;
	qsort_r(ids + nfirst, n - nfirst, sizeof *ids, by_count_desc, (void *)l->count);
	unsigned own = n <= VIX_SLOTS ? n : VIX_SLOTS - 1;
	x->nslots = n <= VIX_SLOTS ? (n ? n : 1) : VIX_SLOTS;
	for (unsigned i = 0; i < PT_NIDS; i++)
		x->slot_of[i] = (uint16_t)(x->nslots - 1); /* the shared slot (or the only one) */
	for (unsigned i = 0; i < own; i++)
		x->slot_of[ids[i]] = (uint16_t)i;
}

static int add_lane(struct vindex *x, int32_t pid, uint64_t tid)
{
	size_t per = (size_t)x->nb * x->nslots;
	struct vlane *nl = realloc(x->lanes, (x->nlanes + 1) * sizeof *nl);
	if (!nl)
		return -1;
	x->lanes = nl;
	uint32_t *c = realloc(x->cnt[0], (x->nlanes + 1) * per * sizeof *c);
	if (!c)
		return -1;
	memset(c + x->nlanes * per, 0, per * sizeof *c);
	x->cnt[0] = c;
	x->lanes[x->nlanes++] = (struct vlane){ pid, tid };
	return 0;
}

/* A marker more (or, past VIX_MAX_MARKS, one more dropped): 0, or -1 out
 * of memory. */
static int add_mark(struct vindex *x, const struct vmark *m)
{
	if (x->nmarks == VIX_MAX_MARKS) {
		x->marks_dropped++;
		return 0;
	}
	if (x->nmarks == x->marks_cap) {
		uint32_t n = x->marks_cap ? 2 * x->marks_cap : 64;
		struct vmark *p = realloc(x->marks, n * sizeof *p);
		if (!p)
			return -1;
		x->marks = p;
		x->marks_cap = n;
	}
	x->marks[x->nmarks++] = *m;
	return 0;
}

/* e, if it is a no-loss wait of a known lane: a marker. */
static int note_wait(struct vindex *x, const struct tev *e)
{
	uint64_t ns;

	if (e->id != PT_EXT_NOLOSS_WAIT || e->thread >= x->nlanes || !tlog_wait_of(e, &ns) ||
	    e->ts < x->t0 || e->ts > x->t1)
		return 0;
	struct vmark m = { e->thread, PT_EXT_NOLOSS_WAIT, 0, e->ts, ns };
	return add_mark(x, &m);
}

/* Whether e (read with its payload) is the wait m marks: its lane and
 * time (the callers tell apart two of a lane at one time by order). */
static int same_wait(const struct vmark *m, const struct tev *e)
{
	return e->id == PT_EXT_NOLOSS_WAIT && e->thread == m->lane && e->ts == m->ts;
}

/* The lengths of the waits the counting pass marked (MARK_PENDING), from
 * their payloads: after a seek to each (few), else in one pass, matched
 * in the log's order.  A wait whose payload is not a length is dropped.
 * 0, or 1 after a message. */
static int fill_waits(struct vindex *x, struct tlog *l)
{
	struct tev e;
	uint64_t ns;
	uint32_t np = 0;
	int r = 0;

	for (uint32_t i = 0; i < x->nmarks; i++)
		np += x->marks[i].pad == MARK_PENDING;
	if (np && np <= VIX_SEEK_WAITS) {
		for (uint32_t i = 0; i < x->nmarks && r >= 0; i++) {
			struct vmark *m = &x->marks[i];
			if (m->pad != MARK_PENDING)
				continue;
			uint32_t k = 0, past = 0; /* (another wait of that lane then, before it) */
			for (uint32_t j = 0; j < i; j++)
				k += x->marks[j].id == PT_EXT_NOLOSS_WAIT && x->marks[j].lane == m->lane &&
				     x->marks[j].ts == m->ts;
			if (tlog_seek(l, m->ts))
				return 1;
			while (past < VIX_PAST && (r = tlog_next(l, &e)) > 0) {
				past = e.ts > m->ts ? past + 1 : 0;
				if (same_wait(m, &e) && k-- == 0) {
					if (tlog_wait_of(&e, &ns))
						m->dur = ns, m->pad = 0;
					break;
				}
			}
		}
	} else if (np) {
		uint32_t i = 0;
		if (tlog_rewind(l))
			return 1;
		while (i < x->nmarks && (r = tlog_next(l, &e)) > 0) {
			while (i < x->nmarks && x->marks[i].pad != MARK_PENDING)
				i++;
			if (i < x->nmarks && same_wait(&x->marks[i], &e)) {
				if (tlog_wait_of(&e, &ns))
					x->marks[i].dur = ns, x->marks[i].pad = 0;
				i++;
			}
		}
	}
	if (r < 0)
		return 1;
	uint32_t n = 0;
	for (uint32_t i = 0; i < x->nmarks; i++)
		if (x->marks[i].pad != MARK_PENDING)
			x->marks[n++] = x->marks[i];
	x->nmarks = n;
	return 0;
}

/* The events of one batch into level 0 and the markers. */
static int count_batch(struct vindex *x, const struct pt_ext_batch *b, const uint32_t *thread_of)
{
	size_t lane_at[PT_EXT_BATCH_W];
	const uint64_t w = vindex_bucket_ns(x, 0), t0 = x->t0, nb = x->nb, ns = x->nslots;
	/* markers: ERROR, OVERFLOW, RESUME (ids 0, 4, 5) */
	const unsigned marks = 1u << POSIX_TRACE_ERROR | 1u << POSIX_TRACE_OVERFLOW |
	                       1u << POSIX_TRACE_RESUME | (x->waits_due ? 1u << PT_EXT_NOLOSS_WAIT : 0);

	for (size_t i = 0; i < b->nw; i++) {
		/* a thread the totals did not know: a lane of its own (tlog
		 * numbers threads in order of first sight, as lanes are) */
		while (thread_of[i] >= x->nlanes)
			if (add_lane(x, x->l->th[x->nlanes].pid, x->l->th[x->nlanes].tid))
				return -1;
		lane_at[i] = (size_t)thread_of[i] * nb * ns;
	}
	uint32_t *cnt = x->cnt[0];
	uint64_t cur = 0, lo = 0; /* the bucket of the last event, its start - t0 */
	for (size_t i = 0; i < b->n; i++) {
		const struct pt_ext_bevent *e = &b->ev[i];
		uint64_t d = e->ts > t0 ? e->ts - t0 : 0;
		if (d - lo >= w) { /* (most events fall in the bucket of the one before) */
			cur = d / w;
			lo = cur * w;
		}
		uint32_t *c = &cnt[lane_at[e->w] + (cur < nb ? cur : nb - 1) * ns + x->slot_of[e->id]];
		*c += *c != UINT32_MAX;
		if (e->id < 32 && (marks >> e->id & 1)) {
			/* (a wait's length is its payload: read later, fill_waits) */
			struct vmark m = { thread_of[e->w], e->id,
			                   e->id == PT_EXT_NOLOSS_WAIT ? MARK_PENDING : 0, e->ts, 0 };
			if (add_mark(x, &m))
				return -1;
		}
	}
	x->nev += b->n;
	return 0;
}

static int build(struct vindex *x, struct tlog *l)
{
	struct progress p;
	char what[300];
	uint32_t thread_of[PT_EXT_BATCH_W];
	int r = 0;

	x->t0 = l->nev ? l->first : 0;
	x->t1 = l->nev && l->last > x->t0 ? l->last : x->t0;
	choose_slots(x, l);
	uint32_t lanes0 = l->nth ? (uint32_t)l->nth : 1;
	/* about 16 events a bucket on average, at most VIX_CELLS counters:
	 * a window of few buckets is read from the log itself (vquery.c) */
	x->nb = VIX_MAX_NB;
	while (x->nb > VIX_MIN_NB && ((size_t)lanes0 * x->nb * x->nslots > VIX_CELLS ||
	                              x->nb > l->nev / 16))
		x->nb >>= 1;
	if (!(x->cnt = calloc(1, sizeof *x->cnt)))
		return -1;
	x->nlevels = 1;
	x->l = l;
	for (size_t i = 0; i < l->nth; i++)
		if (add_lane(x, l->th[i].pid, l->th[i].tid))
			return -1;
	struct pt_ext_batch *b = malloc(sizeof *b);
	if (!b)
		return -1;
	uint64_t start = now_mono_ns(), shown = 0;
	snprintf(what, sizeof what, "indexing %s", l->path);
	progress_begin(&p, what, l->nev);
	/* (the filtered pass reads payloads: its waits are whole at once) */
	x->waits_due = !l->filter && l->count[PT_EXT_NOLOSS_WAIT] != 0;
	if (l->filter) { /* filtered (view's options): the events kept, one at a time */
		struct tev e;
		b->nw = b->n = 1;
		while ((r = tlog_next(l, &e)) > 0) {
			thread_of[0] = e.thread;
			b->ev[0] = (struct pt_ext_bevent){ .ts = e.ts, .id = e.id, .w = 0 };
			if (count_batch(x, b, thread_of) || note_wait(x, &e)) {
				r = -2;
				break;
			}
			if (x->nev - shown >= 65536)
				progress_update(&p, shown = x->nev);
		}
	} else {
		while ((r = tlog_next_batch(l, b, thread_of)) > 0) {
			if (count_batch(x, b, thread_of)) {
				r = -2;
				break;
			}
			if (x->nev - shown >= 65536)
				progress_update(&p, shown = x->nev);
		}
	}
	progress_end(&p);
	free(b);
	x->l = NULL;
	if (r == -2)
		return -1;
	if (r < 0)
		return 1;
	x->build_s = (double)(now_mono_ns() - start) / 1e9;
	return build_levels(x);
}

/* Keeps v among the long spans (doubling long_ns while they are too many). */
static int keep_long(struct vindex *x, const struct vspan *v, uint32_t *cap)
{
	while (x->nsp == VIX_MAX_LONG) {
		uint32_t k = 0;
		x->long_ns *= 2;
		for (uint32_t i = 0; i < x->nsp; i++)
			if (x->sp[i].dur >= x->long_ns)
				x->sp[k++] = x->sp[i];
		x->nsp = k;
		if (v->dur < x->long_ns)
			return 0;
	}
	if (x->nsp == *cap) {
		uint32_t n = *cap ? 2 * *cap : 1024;
		struct vspan *p = realloc(x->sp, n * sizeof *p);
		if (!p)
			return -1;
		x->sp = p;
		*cap = n;
	}
	x->sp[x->nsp++] = *v;
	return 0;
}

/* The second pass, for spans: 0, 1 after a message, -1 out of memory. */
static int build_spans(struct vindex *x, struct tlog *l, const struct span_args *a)
{
	struct spans *sp;
	struct progress p;
	struct span_mark m;
	struct tev e;
	char what[300];
	int r;
	uint32_t cap = 0;

	if (spans_make(a, &sp))
		return 1;
	x->has_spans = 1;
	x->long_ns = vindex_bucket_ns(x, 0);
	if (!(x->depth = calloc(x->nlanes ? x->nlanes : 1, sizeof *x->depth))) {
		spans_free(sp);
		return -1;
	}
	if (!spans_any(sp, l)) {
		spans_free(sp);
		return 0;
	}
	if (tlog_rewind(l)) {
		spans_free(sp);
		return 1;
	}
	snprintf(what, sizeof what, "pairing the spans of %s", l->path);
	progress_begin(&p, what, l->nev);
	uint64_t n = 0;
	while ((r = tlog_next(l, &e)) > 0) {
		if (++n % 65536 == 0)
			progress_update(&p, n);
		if (spans_event(sp, l, &e, &m) < 0) {
			r = -2;
			break;
		}
		if (m.kind != SPAN_END || m.thread >= x->nlanes || e.thread >= x->nlanes)
			continue;
		/* (lanes are tlog's threads, in the same order: add_lane).  A
		 * keyed span's depth is its end thread's (spans.c): its begin's
		 * lane gets a row at least (the page stacks them) */
		unsigned depth = spans_stat(sp, m.def)->keyed ? 0 : m.depth;
		uint16_t d = depth + 1 < UINT16_MAX ? (uint16_t)(depth + 1) : UINT16_MAX;
		if (x->depth[m.thread] < d)
			x->depth[m.thread] = d;
		struct vspan v = { m.start, m.dur, m.thread, e.thread, (uint16_t)m.def, (uint16_t)(d - 1), 0 };
		if (m.dur >= x->long_ns && m.start >= x->t0 && keep_long(x, &v, &cap)) {
			r = -2;
			break;
		}
	}
	progress_end(&p);
	spans_end(sp);
	spans_free(sp);
	return r == -2 ? -1 : r < 0 ? 1 : 0;
}

int vindex_cached(struct vindex *x, const char *path, const struct span_args *spans)
{
	struct stat sb;
	int dir;

	memset(x, 0, sizeof *x);
	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || (dir = vcache_dir(0)) < 0)
		return -1;
	vkey_of(&x->key, &sb);
	int rc = cache_load(x, dir, spans);
	close(dir);
	return rc;
}

int vindex_get(struct vindex *x, struct tlog *l, int cache, const struct span_args *spans)
{
	struct stat sb;
	int dir = -1;

	memset(x, 0, sizeof *x);
	if (tlog_nparts(l)) { /* a set of parts: no one file to key a cache entry by */
		cache = VIX_CACHE_NONE;
	} else if (fstat(l->fd_, &sb) != 0) {
		err_msg("%s: %s", l->path, strerror(errno));
		return 1;
	} else {
		vkey_of(&x->key, &sb);
	}
	if (cache != VIX_CACHE_NONE && (dir = vcache_dir(cache == VIX_CACHE_WRITE)) >= 0 &&
	    cache_load(x, dir, spans) == 0) {
		close(dir);
		return 0;
	}
	int rc = build(x, l);
	if (rc == 0 && spans)
		rc = build_spans(x, l, spans);
	if (rc == 0 && x->waits_due)
		rc = fill_waits(x, l);
	if (rc == 0 && tlog_seek(l, l->first))
		rc = 1;
	if (rc) {
		if (rc < 0)
			err_msg("%s: indexing: out of memory", l->path);
		vindex_free(x);
		if (dir >= 0)
			close(dir);
		return 1;
	}
	if (dir >= 0 && cache == VIX_CACHE_WRITE)
		cache_store(x, dir, l->path, spans);
	if (dir >= 0)
		close(dir);
	return 0;
}
