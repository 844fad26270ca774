/*
 * logread.c -- trace log reader, opening: the header is checked, then
 * either (format 7, a finished log with its summary) the reading order is
 * taken from the summary's block index without reading a block, or every
 * block is found and checked once (bounded memory: one block buffer and an
 * index of block offsets) and the reading order is worked out.
 * Reading the events: logiter.c; the bytes read and checked: logcheck.c.
 * Format and rules: docs/log-format.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "logpriv.h"

/* One block found in the file. */
struct ent {
	uint64_t off, seq, oldest, first_ts, last_ts, max_ts, min_ts;
	uint32_t len, nev;
	unsigned type, good;
	int has_lost;
};

/* The scan reads the file through a small window: damaged stretches are
 * searched 8 bytes at a time, and small blocks come several per read. */
#define SCAN_WIN 4096
struct win {
	unsigned char b[SCAN_WIN];
	uint64_t off;
	size_t len;
};

/* n (<= SCAN_WIN) bytes at pos, or NULL: the file ends first, or *rc */
static const unsigned char *win_get(struct pt_logr *r, struct win *w, uint64_t pos,
                                    size_t n, int *rc)
{
	if (pos < w->off || pos + n > w->off + w->len) {
		size_t k = r->size - pos < SCAN_WIN ? (size_t)(r->size - pos) : SCAN_WIN;
		if (k < n || (*rc = pt_logr_rd(r, pos, w->b, k)))
			return NULL;
		w->off = pos, w->len = k;
	}
	return w->b + (pos - w->off);
}

/* r->buf grows to the largest block met, at most max_block bytes. */
static int grow(struct pt_logr *r, uint32_t len)
{
	unsigned char *nb;
	uint32_t cap = r->buf_cap;

	if (len <= cap)
		return 0;
	while (cap < len)
		cap = cap < r->max_block / 2 ? 2 * cap : r->max_block;
	if (!(nb = realloc(r->buf, cap)))
		return ENOMEM;
	r->buf = nb, r->buf_cap = cap;
	return 0;
}

/* A good events block (p, b) met by the scan, counted into the census
 * as the writer counted it (pt_logw_sum_block over its writer table and
 * records); out of the file's order: no census. */
static void census_block(struct pt_logr *r, const unsigned char *p, const struct pt_log_bhdr *b)
{
	struct pt_logw *w = r->census;
	uint32_t at = PT_LOG_BLK + b->nw * PT_LOG_WENT;

	if (!r->census_ok || !w)
		return;
	if (b->seq <= r->census_seq) {
		r->census_ok = 0;
		return;
	}
	r->census_seq = b->seq;
	r->census_blocks++;
	w->nw = b->nw;
	for (uint32_t i = 0; i < b->nw; i++)
		w->wt[i] = (struct pt_logw_who){
			(int32_t)pt_log_get32(p + PT_LOG_BLK + i * PT_LOG_WENT + PT_LOG_W_PID, r->swap),
			pt_log_get64(p + PT_LOG_BLK + i * PT_LOG_WENT + PT_LOG_W_THREAD, r->swap) };
	pt_logw_sum_block(w, p + at, b->len - at, b->nrec, b->base);
	r->census_ok = !w->sum->failed;
}

/* The census's writer: a summary, a writer table, nothing else. */
static struct pt_logw *census_new(int swap)
{
	struct pt_logw *w = calloc(1, sizeof *w);

	if (!w)
		return NULL;
	w->swap = swap;
	w->version = 0; /* (no block index) */
	if (!(w->wt = calloc(PT_LOG_MAX_WRITERS, sizeof *w->wt)) || pt_logw_sum_init(w)) {
		free(w->wt);
		free(w);
		return NULL;
	}
	return w;
}

static void census_free(struct pt_logr *r)
{
	if (!r->census)
		return;
	pt_logw_sum_free(r->census);
	free(r->census->wt);
	free(r->census);
	r->census = NULL;
	r->census_ok = 0;
}

/* An error event of the reader at ts, counted as an event of the writer
 * (pid 0, thread 0) that the reader's events have. */
static void census_error(struct pt_logr *r, uint64_t ts)
{
	struct pt_logw *w = r->census;
	unsigned char rec[PT_LOG_REC + 4];

	/* one record: delta 0, 4 bytes of payload, POSIX_TRACE_ERROR, writer 0 */
	memset(rec, 0, sizeof rec);
	pt_log_put16(rec + PT_LOG_R_LEN, 4, r->swap);
	pt_log_put16(rec + PT_LOG_R_INFO, POSIX_TRACE_ERROR, r->swap);
	w->nw = 1;
	w->wt[0] = (struct pt_logw_who){ 0, 0 };
	pt_logw_sum_block(w, rec, sizeof rec, 1, ts);
	r->census_errors++;
}

int pt_logr_census(const struct pt_logr *r, const struct pt_logw_sum **sum, uint64_t *damaged)
{
	if (!r->census || !r->census_ok || r->census->sum->failed)
		return ENOENT;
	*sum = r->census->sum;
	*damaged = r->census_errors;
	return 0;
}

/* Finds and checks every block from pos on; *pe: malloc'd array of *pn
 * entries, after the *pn already there (cap: its room).  Each byte is read
 * about once: a block whose header is sound is skipped whole even if its
 * body is not (a torn or damaged block). */
static int scan(struct pt_logr *r, struct ent **pe, size_t *pn, size_t cap, uint64_t pos,
                uint64_t *end_seq)
{
	struct win *win = malloc(sizeof *win);
	struct ent *e = *pe;
	size_t n = *pn;
	int rc = win ? 0 : ENOMEM;

	if (win)
		win->off = win->len = 0;
	while (!rc && pos + PT_LOG_BLK <= r->size) {
		const unsigned char *h = win_get(r, win, pos, PT_LOG_BLK, &rc), *p;
		struct pt_log_bhdr b;
		struct ent x = { 0 };

		if (!h)
			break;
		if (!pt_logr_bhdr(r, h, &b)) {
			pos += 8;
			continue;
		}
		x.off = pos, x.seq = b.seq, x.oldest = b.oldest, x.len = b.len, x.type = b.type;
		if (r->size - pos >= b.len && !(rc = grow(r, b.len))) {
			if (b.len <= SCAN_WIN && (p = win_get(r, win, pos, b.len, &rc)))
				memcpy(r->buf, p, b.len);
			else if (!rc)
				rc = pt_logr_rd(r, pos, r->buf, b.len);
			if (rc)
				break;
			int bad = pt_logr_unchunk(r, r->buf, &b); /* (v9) */
			x.type = b.type == PT_LOG_BT_CHUNK ? PT_LOG_BT_EVENTS : b.type;
			if (!bad && !pt_logr_check(r, r->buf, &b, 0, &x.first_ts, &x.last_ts, &x.nev)) {
				x.good = 1;
				x.max_ts = r->chk_max_ts;
				x.min_ts = r->chk_min_ts;
				x.has_lost = r->chk_lost;
				/* again to keep its names, map entries and loss count,
				 * now that it is known sound: only a block that has
				 * some (checking was half of reading a log at open) */
				if (r->chk_meta)
					(void)pt_logr_check(r, r->buf, &b, 1, &x.first_ts, &x.last_ts,
					                    &x.nev);
				if (b.type == PT_LOG_BT_EVENTS && x.nev)
					census_block(r, r->buf, &b);
				if (b.type == PT_LOG_BT_END && b.seq >= *end_seq) {
					pt_logr_end_status(r, r->buf);
					*end_seq = b.seq;
				}
			}
		}
		if (n == cap) {
			struct ent *ne = realloc(e, (cap = cap ? 2 * cap : 64) * sizeof *e);
			if (!ne) {
				rc = ENOMEM;
				break;
			}
			e = ne;
		}
		e[n++] = x;
		pos += PT_LOG_ALIGN8(b.len);
	}
	free(win);
	if (rc == EBADMSG) /* the file shrank while we read it */
		rc = 0;
	*pe = e, *pn = n;
	return rc;
}

static int cmp_ent(const void *pa, const void *pb)
{
	const struct ent *a = pa, *b = pb;

	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->good != b->good)
		return a->good ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

static void add_error(struct pt_logr *r)
{
	if (r->nitems && r->items[r->nitems - 1].error)
		return; /* one error item for a whole damaged stretch */
	r->items[r->nitems++] = (struct pt_logr_item){ .error = EBADMSG };
}

/* The reading order: blocks lo..hi of the newest block's view, by
 * sequence number, damaged or missing stretches as error items. */
static int order(struct pt_logr *r, struct ent *e, size_t n, uint64_t end_seq)
{
	uint64_t lo, hi, expect, prev_ts = 0;
	size_t k;
	int have_ts = 0;

	if (!n)
		return 0;
	qsort(e, n, sizeof *e, cmp_ent);
	for (k = n - 1; k > 0 && e[k - 1].seq == e[k].seq; k--)
		;
	lo = e[k].oldest, hi = e[k].seq;
	r->wrapped = lo > 1;
	r->wrap_state = r->wrapped ? 0 : 2;
	r->lost_kept = r->lost_rec_seq >= lo;
	if (!e[k].good)
		hi--; /* a torn last block: the end of the log, not an error */
	r->has_status = e[k].good && e[k].type == PT_LOG_BT_END && e[k].seq == end_seq;
	if (!r->has_status) {
		memset(&r->status, 0, sizeof r->status);
		r->lost = r->dropped = r->stream_lost = 0;
		r->has_stream_lost = 0;
	}
	if (!(r->items = calloc(2 * n + 1, sizeof *r->items)))
		return ENOMEM;
	expect = lo;
	for (size_t i = 0; i < n; i++) {
		struct pt_logr_item *it;

		if (e[i].seq < lo || e[i].seq > hi || (i && e[i].seq == e[i - 1].seq))
			continue;
		if (e[i].seq > expect || !e[i].good)
			add_error(r);
		expect = e[i].seq + 1;
		if (!e[i].good || e[i].type != PT_LOG_BT_EVENTS || !e[i].nev)
			continue;
		if (r->nitems && r->items[r->nitems - 1].error)
			r->items[r->nitems - 1].ts = have_ts ? prev_ts : e[i].first_ts;
		it = &r->items[r->nitems++];
		it->off = e[i].off, it->seq = e[i].seq, it->len = e[i].len, it->ts = e[i].first_ts;
		it->max_ts = e[i].max_ts, it->min_ts = e[i].min_ts, it->has_lost = e[i].has_lost;
		it->last_ts = e[i].last_ts;
		it->has_ev = 1;
		prev_ts = e[i].last_ts, have_ts = 1;
	}
	if (expect <= hi)
		add_error(r);
	if (r->nitems && r->items[r->nitems - 1].error)
		r->items[r->nitems - 1].ts = prev_ts;
	/* the census counted exactly the blocks read, in their order: add
	 * the error events */
	uint64_t blocks = 0;
	for (size_t i = 0; i < r->nitems; i++)
		blocks += !r->items[i].error;
	if (r->wrapped || blocks != r->census_blocks)
		r->census_ok = 0;
	for (size_t i = 0; r->census_ok && i < r->nitems; i++)
		if (r->items[i].error)
			census_error(r, r->items[i].ts);
	return 0;
}

/* (v8) The block entries of the checkpoints the chain of s leads back to
 * put before s's own (which begin with the last checkpoint's entry), so
 * that s->idx describes every block from the first: 0, ENOENT (a chain
 * that does not hold) or ENOMEM.  The runs are gathered first and put
 * together once (a log of days has thousands of checkpoints). */
static int chain_index(struct pt_logr *r, struct pt_log_summary *s)
{
	struct run { struct pt_log_bidx *idx; uint64_t n; } *runs = NULL;
	size_t nruns = 0, cap = 0;
	uint64_t off = s->chain_off, seq = s->chain_seq, base = s->idx_base, total = s->nidx;
	int rc = 0;

	if (!s->has_chain || !seq)
		return base ? ENOENT : 0;
	while (seq) {
		struct pt_log_summary c;
		memset(&c, 0, sizeof c);
		c.want_index = 1;
		c.index_only = 1;
		/* the checkpoint is the block before the run after it; its
		 * own run ends right before it */
		if (seq - 1 != base || (rc = pt_log_ckpt_read(r, off, seq, &c)) != 0 ||
		    !c.has_chain || c.idx_base + c.nidx != base || (c.chain_seq && c.chain_seq >= seq)) {
			rc = rc == ENOMEM ? ENOMEM : ENOENT;
			pt_log_summary_free(&c);
			break;
		}
		if (nruns == cap) {
			struct run *nr = realloc(runs, (cap = cap ? 2 * cap : 16) * sizeof *nr);
			if (!nr) {
				rc = ENOMEM;
				pt_log_summary_free(&c);
				break;
			}
			runs = nr;
		}
		runs[nruns++] = (struct run){ c.idx, c.nidx };
		base = c.idx_base, total += c.nidx;
		off = c.chain_off, seq = c.chain_seq;
		c.idx = NULL; /* (kept in runs) */
		pt_log_summary_free(&c);
	}
	if (!rc && base)
		rc = ENOENT;
	struct pt_log_bidx *all = rc ? NULL : malloc((total ? total : 1) * sizeof *all);
	if (!rc && !all)
		rc = ENOMEM;
	if (!rc) {
		uint64_t at = 0;
		for (size_t k = nruns; k-- > 0; at += runs[k].n)
			memcpy(all + at, runs[k].idx, runs[k].n * sizeof *all);
		memcpy(all + at, s->idx, s->nidx * sizeof *all);
		free(s->idx);
		s->idx = all;
		s->nidx = s->idx_cap = total;
		s->idx_base = 0;
	}
	for (size_t k = 0; k < nruns; k++)
		free(runs[k].idx);
	free(runs);
	return rc;
}

/* (v7) The reading order from the block index of the log's summary,
 * without reading a block: 0; ENOENT: no index, or one that does not
 * agree with the summary's place in the file (then the log is scanned);
 * ENOMEM.  Each block is read and checked when reached (logiter.c), and
 * against its entry: a block that disagrees is damage. */
static int from_index(struct pt_logr *r)
{
	struct pt_log_summary s;
	uint64_t off = PT_LOG_FIRST, prev_last = 0;
	uint32_t maxlen = 0;
	int rc;

	if (r->version < 7 || r->policy == POSIX_TRACE_LOOP)
		return ENOENT;
	rc = pt_log_summary_read_index(r->fd, &s);
	r->bytes_read += s.bytes_read;
	if (rc)
		return rc == ENOMEM ? ENOMEM : ENOENT;
	rc = ENOENT;
	if (r->version >= 8 && (rc = chain_index(r, &s)) != 0) {
		rc = rc == ENOMEM ? ENOMEM : ENOENT;
		goto out;
	}
	rc = ENOENT;
	if (s.idx_base || s.nidx != s.sum_seq - 1 || s.nidx > (r->size - PT_LOG_FIRST) / PT_LOG_BLK)
		goto out;
	for (uint64_t i = 0; i < s.nidx; i++) {
		const struct pt_log_bidx *x = &s.idx[i];
		int ev = (x->flags & PT_LOG_IDX_EVENTS) != 0;
		/* (v8) a checkpoint: no event, no time */
		int ck = r->version >= 8 && x->flags == PT_LOG_IDX_CKPT;
		if (ck && !x->first && !x->min && !x->max && !x->last && x->len >= PT_LOG_BLK &&
		    x->len <= r->max_block) {
			off += PT_LOG_ALIGN8(x->len);
			continue;
		}
		if (x->len < PT_LOG_BLK || x->len > r->max_block ||
		    (x->flags & ~(PT_LOG_IDX_LOST | PT_LOG_IDX_EVENTS)) ||
		    (ev ? x->min > x->first || x->min > x->last || x->first > x->max ||
		          x->last > x->max
		        : x->first || x->min || x->max || x->last) ||
		    ((x->flags & PT_LOG_IDX_LOST) && !ev))
			goto out;
		off += PT_LOG_ALIGN8(x->len);
		if (x->len > maxlen)
			maxlen = x->len;
	}
	if (off != s.sum_off)
		goto out;
	rc = ENOMEM;
	if ((maxlen && grow(r, maxlen)) || !(r->items = calloc(s.nidx + 1, sizeof *r->items)))
		goto out;
	off = PT_LOG_FIRST;
	for (uint64_t i = 0; i < s.nidx; i++) {
		const struct pt_log_bidx *x = &s.idx[i];
		int ev = (x->flags & PT_LOG_IDX_EVENTS) != 0;
		if (x->flags == PT_LOG_IDX_CKPT) { /* (v8: not read) */
			off += PT_LOG_ALIGN8(x->len);
			continue;
		}
		/* a block without events: its time is the one before it (an
		 * error item's time, logiter.c) */
		r->items[r->nitems++] = (struct pt_logr_item){
			.off = off, .seq = i + 1, .len = x->len, .ts = ev ? x->first : prev_last,
			.max_ts = x->max, .min_ts = x->min, .last_ts = ev ? x->last : prev_last,
			.has_lost = (x->flags & PT_LOG_IDX_LOST) != 0, .has_ev = ev };
		if (ev)
			prev_last = x->last;
		off += PT_LOG_ALIGN8(x->len);
	}
	for (unsigned id = 0; id < PT_NIDS; id++)
		if (s.known[id / 64] >> (id % 64) & 1)
			pt_logr_set_name(r, id, (const unsigned char *)s.names[id],
			                 (uint32_t)strlen(s.names[id]), 0);
	for (size_t i = 0; i < s.objs.n; i++) {
		struct pt_ext_obj o;
		pt_objstore_get(&s.objs, i, &o);
		(void)pt_logr_keep_obj(r, &o, pt_log_crc(0, &o, sizeof o));
	}
	r->status = s.status;
	r->lost = s.lost, r->dropped = s.dropped, r->stream_lost = s.stream_lost;
	r->has_stream_lost = r->has_status = 1;
	r->wrapped = 0;
	r->wrap_state = 2;
	r->indexed = 1;
	rc = 0;
out:
	if (rc) {
		free(r->items);
		r->items = NULL;
		r->nitems = 0;
	}
	pt_log_summary_free(&s);
	return rc;
}

/* The last checkpoint of the blocks that follow on from the first (each
 * header read and checked, in sequence, none overwritten): its sequence
 * number, offset and length; 0: none. */
static uint64_t last_ckpt(struct pt_logr *r, uint64_t *c_off, uint32_t *c_len)
{
	unsigned char h[PT_LOG_BLK];
	struct pt_log_bhdr b;
	uint64_t pos = PT_LOG_FIRST, seq = 1, c_seq = 0;

	*c_off = 0, *c_len = 0;
	while (pos + PT_LOG_BLK <= r->size && !pt_logr_rd(r, pos, h, sizeof h) &&
	       pt_logr_bhdr(r, h, &b) && b.seq == seq && b.oldest == 1 &&
	       r->size - pos >= b.len && b.type != PT_LOG_BT_END) {
		if (b.type == PT_LOG_BT_CKPT)
			*c_off = pos, c_seq = seq, *c_len = b.len;
		pos += PT_LOG_ALIGN8(b.len);
		seq++;
	}
	return c_seq;
}

/* The chain of checkpoints from the one at c_off (sequence number c_seq)
 * back to the first, each naming an earlier one: (offset, sequence
 * number) pairs into *chain (malloc'd, the caller frees it, also on an
 * error), *nchain of them, the last checkpoint first.  0; ENOENT: a
 * checkpoint that does not hold; ENOMEM. */
static int ckpt_chain(struct pt_logr *r, uint64_t c_off, uint64_t c_seq, uint64_t **chain,
                      size_t *nchain)
{
	size_t chain_cap = 0;

	for (uint64_t o = c_off, q = c_seq; q;) {
		struct pt_log_summary c;
		memset(&c, 0, sizeof c);
		c.index_only = 1;
		if (*nchain + 2 > chain_cap) {
			uint64_t *nc = realloc(*chain, (chain_cap = chain_cap ? 2 * chain_cap : 32) *
			                                2 * sizeof *nc);
			if (!nc)
				return ENOMEM;
			*chain = nc;
		}
		(*chain)[2 * *nchain] = o, (*chain)[2 * *nchain + 1] = q;
		(*nchain)++;
		int k = pt_log_ckpt_read(r, o, q, &c);
		uint64_t no = c.chain_off, nq = c.chain_seq;
		int ok = !k && c.has_chain && (!nq || nq < q);
		pt_log_summary_free(&c);
		if (!ok)
			return k == ENOMEM ? ENOMEM : ENOENT;
		o = no, q = nq;
	}
	return 0;
}

/* The block index the checkpoints gave (s), every block before the last
 * checkpoint (at c_off, sequence number c_seq) back to back, as a scan
 * would have found them: *pe (malloc'd, room for *room, one left for the
 * checkpoint), *pn entries, the event blocks among them in *blocks, the
 * last with a LOST record in *lost_seq (0: none); r->buf grown to the
 * largest.  0; ENOENT: an index that does not hold; ENOMEM. */
static int ckpt_index(struct pt_logr *r, const struct pt_log_summary *s, uint64_t c_off,
                      uint64_t c_seq, struct ent **pe, size_t *pn, size_t *room,
                      uint64_t *blocks, uint64_t *lost_seq)
{
	if (s->idx_base || s->nidx != c_seq - 1)
		return ENOENT;
	size_t n = 0;
	struct ent *e = malloc((*room = (size_t)s->nidx + 1 + 64) * sizeof *e);
	if (!e)
		return ENOMEM;
	uint64_t off = PT_LOG_FIRST;
	*blocks = 0, *lost_seq = 0;
	for (uint64_t i = 0; i < s->nidx; i++) {
		const struct pt_log_bidx *x = &s->idx[i];
		int ev = (x->flags & PT_LOG_IDX_EVENTS) != 0, ck = x->flags == PT_LOG_IDX_CKPT;
		if (x->len < PT_LOG_BLK || x->len > r->max_block ||
		    (!ck && (x->flags & ~(PT_LOG_IDX_LOST | PT_LOG_IDX_EVENTS))) ||
		    (ev ? x->min > x->first || x->min > x->last || x->first > x->max ||
		          x->last > x->max
		        : x->first || x->min || x->max || x->last) ||
		    ((x->flags & PT_LOG_IDX_LOST) && !ev)) {
			free(e);
			return ENOENT;
		}
		e[n++] = (struct ent){ .off = off, .seq = i + 1, .oldest = 1, .first_ts = x->first,
		                       .last_ts = x->last, .max_ts = x->max, .min_ts = x->min,
		                       .len = x->len, .nev = ev, .good = 1,
		                       .type = ck ? PT_LOG_BT_CKPT : PT_LOG_BT_EVENTS,
		                       .has_lost = (x->flags & PT_LOG_IDX_LOST) != 0 };
		*blocks += ev;
		if (x->flags & PT_LOG_IDX_LOST)
			*lost_seq = i + 1;
		off += PT_LOG_ALIGN8(x->len);
	}
	if (off != c_off) {
		free(e);
		return ENOENT;
	}
	/* (a block is read into r->buf when reached: room for the largest) */
	uint32_t maxlen = 0;
	for (size_t i = 0; i < n; i++)
		maxlen = e[i].len > maxlen ? e[i].len : maxlen;
	if (grow(r, maxlen)) {
		free(e);
		return ENOMEM;
	}
	*pe = e, *pn = n;
	return 0;
}

/* (v8) A log that has no summary to open by (being written, or cut
 * short), if it has checkpoints: its blocks up to the last checkpoint
 * known from them without reading them (the blocks' headers, read one by
 * one, find it), as a scan would have found them (*pe, *pn entries, room
 * for *cap), the census counted on from the checkpoints' counts, the
 * names and map of loaded code theirs; *from: where the scan goes on.
 * 0; ENOENT: none to use (no checkpoint, or one that does not hold: the
 * scan starts at the first block, as before); ENOMEM. */
static int ckpt_prefix(struct pt_logr *r, struct ent **pe, size_t *pn, size_t *cap,
                       uint64_t *from)
{
	struct pt_log_summary s;
	uint64_t c_off, c_seq, *chain = NULL, blocks, lost_seq;
	uint32_t c_len;
	size_t nchain = 0, n, room;
	struct ent *e = NULL;
	int rc;

	if (r->version < 8 || r->policy != POSIX_TRACE_APPEND || !r->census)
		return ENOENT;
	if (!(c_seq = last_ckpt(r, &c_off, &c_len)))
		return ENOENT;
	/* its chain back to the first, then each read in writing order */
	memset(&s, 0, sizeof s);
	if ((rc = ckpt_chain(r, c_off, c_seq, &chain, &nchain)) != 0)
		goto out;
	s.want_index = 1;
	if (!(s.names = calloc(PT_NIDS, sizeof *s.names))) {
		rc = ENOMEM;
		goto out;
	}
	for (size_t k = nchain; k-- > 0;)
		if ((rc = pt_log_ckpt_read(r, chain[2 * k], chain[2 * k + 1], &s)) != 0)
			goto out;
	if ((rc = ckpt_index(r, &s, c_off, c_seq, &e, &n, &room, &blocks, &lost_seq)) != 0)
		goto out;
	e[n++] = (struct ent){ .off = c_off, .seq = c_seq, .oldest = 1, .len = c_len, .good = 1,
	                       .type = PT_LOG_BT_CKPT };
	/* the census from the counts they give; their names and map */
	if ((rc = pt_logw_sum_load(r->census, &s)) != 0) {
		free(e);
		goto out;
	}
	r->census_seq = c_seq;
	r->census_blocks = blocks;
	r->census_ckpt = 1;
	r->lost_rec_seq = lost_seq;
	for (unsigned id = 0; id < PT_NIDS; id++)
		if (s.known[id / 64] >> (id % 64) & 1)
			pt_logr_set_name(r, id, (const unsigned char *)s.names[id],
			                 (uint32_t)strlen(s.names[id]), 0);
	for (size_t i = 0; i < s.objs.n; i++) {
		struct pt_ext_obj o;
		pt_objstore_get(&s.objs, i, &o);
		(void)pt_logr_keep_obj(r, &o, pt_log_crc(0, &o, sizeof o));
	}
	*pe = e, *pn = n, *cap = room;
	*from = c_off + PT_LOG_ALIGN8(c_len);
	rc = 0;
out:
	free(chain);
	pt_log_summary_free(&s);
	return rc;
}

int pt_logr_open(struct pt_logr *r, int fd)
{
	return pt_logr_open_opt(r, fd, 0);
}

int pt_logr_open_opt(struct pt_logr *r, int fd, int flags)
{
	unsigned char h[PT_LOG_HDR];
	struct stat st;
	struct ent *e = NULL;
	size_t n = 0;
	uint64_t end_seq = 0;
	int rc;

	memset(r, 0, sizeof *r);
	r->fd = -1;
	if (fd < 0 || fstat(fd, &st))
		return EBADF;
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)PT_LOG_HDR)
		return EINVAL;
	r->fd = fd;
	r->size = (uint64_t)st.st_size;
	r->file_order = (flags & PT_LOGR_FILE_ORDER) != 0;
	if ((rc = pt_logr_rd(r, 0, h, sizeof h)) || (rc = pt_logr_header(r, h)))
		goto fail;
	r->buf_cap = PT_LOG_MIN_BLOCK;
	r->buf = malloc(r->buf_cap);
	r->names = calloc(PT_NIDS, sizeof *r->names);
	r->name_seq = calloc(PT_NIDS, sizeof *r->name_seq);
	rc = ENOMEM;
	if (!r->buf || !r->names || !r->name_seq)
		goto fail;
	if (!(flags & PT_LOGR_SCAN) && (rc = from_index(r)) != ENOENT) {
		if (rc)
			goto fail;
		r->stop = r->nitems;
		pt_logr_order(r);
		return 0;
	}
	r->census = census_new(r->swap); /* (none: no census, the log still reads) */
	r->census_ok = r->census != NULL;
	/* (v8) a log without its summary (being written, or cut short): what
	 * its checkpoints say, and the blocks after the last one */
	uint64_t from = PT_LOG_FIRST;
	size_t cap = 0;
	if (!(flags & PT_LOGR_SCAN) && (rc = ckpt_prefix(r, &e, &n, &cap, &from)) == ENOMEM)
		goto fail;
	if ((rc = scan(r, &e, &n, cap, from, &end_seq)) || (rc = order(r, e, n, end_seq)))
		goto fail;
	free(e);
	r->stop = r->nitems;
	pt_logr_order(r);
	return 0;
fail:
	free(e);
	pt_logr_close(r);
	return rc == EBADMSG ? EINVAL : rc;
}

void pt_logr_close(struct pt_logr *r)
{
	census_free(r);
	pt_logr_merge_free(r);
	free(r->buf);
	free(r->names);
	free(r->name_seq);
	free(r->items);
	pt_objstore_free(&r->objs);
	free(r->obj_hash);
	free(r->obj_tab);
	r->obj_hash = NULL;
	r->obj_tab = NULL;
	r->obj_tcap = r->obj_hcap = 0;
	r->buf = NULL;
	r->names = NULL;
	r->name_seq = NULL;
	r->items = NULL;
	r->nitems = r->cur = 0;
	r->fd = -1;
}
