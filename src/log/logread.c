/*
 * logread.c -- trace log reader, opening: the header is checked, then
 * either (format 7, a finished log with its summary) the reading order is
 * taken from the summary's block index without reading a block, or every
 * block is found and checked once (bounded memory: one block buffer and an
 * index of block offsets) and the reading order is worked out.
 * Reading the events: logiter.c.  Format and rules: docs/log-format.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "logfmt.h"

/* One block found in the file. */
struct ent {
	uint64_t off, seq, oldest, first_ts, last_ts, max_ts, min_ts;
	uint32_t len, nev;
	unsigned type, good;
	int has_lost;
};

int pt_logr_rd(struct pt_logr *r, uint64_t off, void *dst, size_t n)
{
	size_t got = 0;

	r->bytes_read += n;
	while (got < n) {
		ssize_t k = pread(r->fd, (char *)dst + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EBADF ? EBADF : errno == EIO ? EIO : EINVAL;
		if (k == 0)
			return EBADMSG; /* the file ends first */
		got += (size_t)k;
	}
	return 0;
}

int pt_logr_header(struct pt_logr *r, const unsigned char *h)
{
	const unsigned char *at = h + PT_LOG_H_ATTR;
	uint32_t bom = pt_log_get32(h + PT_LOG_H_BOM, 0);
	struct pt_attr_img *a = &r->attr;
	int sw;

	if (memcmp(h + PT_LOG_H_MAGIC, PT_LOG_MAGIC, 8))
		return EINVAL;
	if (bom != PT_LOG_BOM && bom != __builtin_bswap32(PT_LOG_BOM))
		return EINVAL;
	sw = r->swap = bom != PT_LOG_BOM;
	if (!PT_LOG_CRC_OK(pt_log_get32(h + PT_LOG_H_CRC, sw), pt_log_crc(0, h, PT_LOG_H_CRC)) ||
	    pt_log_get16(h + PT_LOG_H_VERSION, sw) < PT_LOG_VERSION_MIN ||
	    pt_log_get16(h + PT_LOG_H_VERSION, sw) > PT_LOG_VERSION ||
	    pt_log_get16(h + PT_LOG_H_HDRLEN, sw) != PT_LOG_HDR ||
	    pt_log_get64(h + PT_LOG_H_FIRST, sw) != PT_LOG_FIRST ||
	    pt_log_get32(h + PT_LOG_H_RESERVED, sw) != 0)
		return EINVAL;
	r->version = pt_log_get16(h + PT_LOG_H_VERSION, sw);
	r->max_block = pt_log_get32(h + PT_LOG_H_MAXBLK, sw);
	r->policy = (int)pt_log_get32(h + PT_LOG_H_POLICY, sw);
	r->log_max = pt_log_get64(h + PT_LOG_H_LOGMAX, sw);
	r->nonce = pt_log_get64(h + PT_LOG_H_NONCE, sw);
	if (r->max_block < PT_LOG_MIN_BLOCK || r->max_block > PT_LOG_BLOCK_LIMIT ||
	    (r->policy != POSIX_TRACE_LOOP && r->policy != POSIX_TRACE_UNTIL_FULL &&
	     r->policy != POSIX_TRACE_APPEND))
		return EINVAL;
	if (!memchr(at + PT_LOG_A_NAME, 0, TRACE_NAME_MAX) ||
	    !memchr(at + PT_LOG_A_VERSION, 0, TRACE_NAME_MAX))
		return EINVAL;
	memcpy(a->name, at + PT_LOG_A_NAME, TRACE_NAME_MAX);
	memcpy(a->version, at + PT_LOG_A_VERSION, TRACE_NAME_MAX);
	a->create_sec = (int64_t)pt_log_get64(at + PT_LOG_A_CREATE, sw);
	a->create_nsec = (int64_t)pt_log_get64(at + PT_LOG_A_CREATE + 8, sw);
	a->res_sec = (int64_t)pt_log_get64(at + PT_LOG_A_RES, sw);
	a->res_nsec = (int64_t)pt_log_get64(at + PT_LOG_A_RES + 8, sw);
	a->stream_size = pt_log_get64(at + PT_LOG_A_SIZES, sw);
	a->max_data = pt_log_get64(at + PT_LOG_A_SIZES + 8, sw);
	a->log_size = pt_log_get64(at + PT_LOG_A_SIZES + 16, sw);
	a->stream_policy = (int32_t)pt_log_get32(at + PT_LOG_A_POLICIES, sw);
	a->log_policy = (int32_t)pt_log_get32(at + PT_LOG_A_POLICIES + 4, sw);
	a->inherit = (int32_t)pt_log_get32(at + PT_LOG_A_POLICIES + 8, sw);
	a->has_log = (int32_t)pt_log_get32(at + PT_LOG_A_POLICIES + 12, sw);
	return 0;
}

int pt_logr_bhdr(const struct pt_logr *r, const unsigned char *h, struct pt_log_bhdr *b)
{
	int sw = r->swap;
	uint32_t room;

	if (memcmp(h + PT_LOG_B_MAGIC, PT_LOG_BLK_MAGIC, 4) ||
	    pt_log_get64(h + PT_LOG_B_NONCE, sw) != r->nonce ||
	    !PT_LOG_CRC_OK(pt_log_get32(h + PT_LOG_B_HCRC, sw), pt_log_crc(0, h, PT_LOG_B_HCRC)))
		return 0;
	b->type = pt_log_get16(h + PT_LOG_B_TYPE, sw);
	b->nw = pt_log_get16(h + PT_LOG_B_NW, sw);
	b->len = pt_log_get32(h + PT_LOG_B_LEN, sw);
	b->nrec = pt_log_get32(h + PT_LOG_B_NREC, sw);
	b->seq = pt_log_get64(h + PT_LOG_B_SEQ, sw);
	b->oldest = pt_log_get64(h + PT_LOG_B_OLDEST, sw);
	b->base = pt_log_get64(h + PT_LOG_B_BASE, sw);
	b->bcrc = pt_log_get32(h + PT_LOG_B_BCRC, sw);
	if (b->len > r->max_block || b->nw > PT_LOG_MAX_WRITERS ||
	    b->len < PT_LOG_BLK + b->nw * PT_LOG_WENT || !b->oldest || b->oldest > b->seq ||
	    b->seq == UINT64_MAX)
		return 0;
	room = b->len - PT_LOG_BLK - b->nw * PT_LOG_WENT;
	if (b->type == PT_LOG_BT_EVENTS)
		return b->nrec && b->nrec <= room / (r->version >= 4 ? PT_LOG_REC_SHORT : PT_LOG_REC);
	if (b->type == PT_LOG_BT_SUMMARY) /* (v5) */
		return r->version >= 5 && !b->nw && b->nrec && b->nrec <= room / PT_LOG_S_HDR;
	if (b->type == PT_LOG_BT_CKPT) /* (v8) */
		return r->version >= 8 && !b->nw && b->nrec && b->nrec <= room / PT_LOG_S_HDR;
	return b->type == PT_LOG_BT_END && !b->nw && !b->nrec &&
	       b->len == (r->version >= 2 ? PT_LOG_END_LEN : PT_LOG_END_LEN_V1);
}

static void set_name(struct pt_logr *r, unsigned id, const unsigned char *s, uint32_t n,
                     uint64_t seq)
{
	if ((r->known[id / 64] >> (id % 64) & 1) && r->name_seq[id] > seq)
		return; /* a later block named it */
	memcpy(r->names[id], s, n);
	r->names[id][n] = 0;
	r->name_seq[id] = seq;
	r->known[id / 64] |= 1ull << (id % 64);
}

int pt_log_obj_decode(const unsigned char *p, uint32_t n, int sw, unsigned version,
                      struct pt_ext_obj *o)
{
	if (n < PT_LOG_OBJ_FIXED || n > PT_LOG_OBJ_MAX)
		return EBADMSG;
	memset(o, 0, sizeof *o);
	o->ts = pt_log_get64(p, sw);
	o->base = pt_log_get64(p + 8, sw);
	o->lo = pt_log_get64(p + 16, sw);
	o->hi = pt_log_get64(p + 24, sw);
	o->pid = (int32_t)pt_log_get32(p + 32, sw);
	o->kind = pt_log_get16(p + 36, sw);
	o->bid_len = p[38];
	o->flags = p[39];
	uint32_t pl = n - PT_LOG_OBJ_FIXED - (n - PT_LOG_OBJ_FIXED < o->bid_len ? 0 : o->bid_len);
	/* (v6) thread identities and payload descriptions */
	int meta = o->kind == PT_EXT_OBJ_THREAD || o->kind == PT_EXT_OBJ_TYPE ||
	           o->kind == PT_EXT_OBJ_PROC;
	if (o->kind == PT_EXT_OBJ_FORK) /* (v8) the parent's pid, nothing else */
		return version < 8 || n != PT_LOG_OBJ_FIXED || o->pid <= 0 || !o->lo ||
		       o->lo > INT32_MAX || o->lo == (uint64_t)(uint32_t)o->pid || o->hi || o->base ||
		       o->bid_len || o->flags ? EBADMSG : 0;
	if (o->bid_len > PT_EXT_OBJ_BID_MAX || n - PT_LOG_OBJ_FIXED < o->bid_len ||
	    o->kind < PT_EXT_OBJ_BEGIN ||
	    o->kind > (version >= 6 ? PT_EXT_OBJ_PROC : PT_EXT_OBJ_LOST) ||
	    (o->flags & ~PT_EXT_OBJ_TRUNC) || pl >= PT_EXT_OBJ_PATH ||
	    memchr(p + PT_LOG_OBJ_FIXED + o->bid_len, 0, pl) ||
	    ((o->kind == PT_EXT_OBJ_ADD || o->kind == PT_EXT_OBJ_DEL) && o->lo >= o->hi) ||
	    (meta && (!pt_ext_meta_ok(o->kind, o->lo, o->hi, pl, o->bid_len) ||
	              (o->flags & ~(o->kind == PT_EXT_OBJ_PROC ? PT_EXT_OBJ_TRUNC : 0u)))))
		return EBADMSG;
	memcpy(o->bid, p + PT_LOG_OBJ_FIXED, o->bid_len);
	memcpy(o->path, p + PT_LOG_OBJ_FIXED + o->bid_len, pl);
	return 0;
}

static int keep_obj(struct pt_logr *r, const struct pt_ext_obj *op, uint64_t h);

/* An OBJ record: checked; kept (once) when keep. */
static int get_obj(struct pt_logr *r, const unsigned char *p, uint32_t n, int keep)
{
	struct pt_ext_obj o;

	if (pt_log_obj_decode(p, n, r->swap, (unsigned)r->version, &o))
		return EBADMSG;
	return keep ? keep_obj(r, &o, pt_log_crc(0, p, n) | (uint64_t)n << 32) : 0;
}

static size_t obj_slot(uint64_t h, size_t cap)
{
	h *= 0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* An entry of the map of loaded code, kept once (h: a hash of it).  The
 * entries already kept are found through a table by hash: a log of
 * thousands of processes has tens of thousands of entries, and looking
 * through all of them for each was most of reading it. */
static int keep_obj(struct pt_logr *r, const struct pt_ext_obj *op, uint64_t h)
{
	const struct pt_ext_obj o = *op;

	if ((r->nobjs + 1) * 2 > r->obj_tcap) {
		size_t ncap = r->obj_tcap ? 2 * r->obj_tcap : 1024;
		uint32_t *nt = calloc(ncap, sizeof *nt);
		if (!nt)
			return 0; /* (memory: the map goes without it) */
		for (size_t i = 0; i < r->nobjs; i++) {
			size_t j = obj_slot(r->obj_hash[i], ncap);
			while (nt[j])
				j = (j + 1) & (ncap - 1);
			nt[j] = (uint32_t)(i + 1);
		}
		free(r->obj_tab);
		r->obj_tab = nt, r->obj_tcap = ncap;
	}
	/* the same entry again (a copy after a LOOP wrap, or a stale block) */
	size_t j = obj_slot(h, r->obj_tcap);
	for (; r->obj_tab[j]; j = (j + 1) & (r->obj_tcap - 1)) {
		size_t i = r->obj_tab[j] - 1;
		if (r->obj_hash[i] == h && !memcmp(&r->objs[i], &o, sizeof o))
			return 0;
	}
	if (r->nobjs >= PT_LOG_OBJS_MAX)
		return 0;
	if (r->nobjs == r->objs_cap) {
		size_t ncap = r->objs_cap ? 2 * r->objs_cap : 64;
		struct pt_ext_obj *no = realloc(r->objs, ncap * sizeof *no);
		uint64_t *nh = no ? realloc(r->obj_hash, ncap * sizeof *nh) : NULL;
		if (no)
			r->objs = no;
		if (!nh)
			return 0; /* (memory: the map goes without it) */
		r->obj_hash = nh, r->objs_cap = ncap;
	}
	r->obj_hash[r->nobjs] = h;
	r->objs[r->nobjs++] = o;
	r->obj_tab[j] = (uint32_t)r->nobjs;
	return 0;
}

int pt_logr_check(struct pt_logr *r, const unsigned char *p, const struct pt_log_bhdr *b,
                  int names, uint64_t *first_ts, uint64_t *last_ts, uint32_t *nev)
{
	uint32_t off = PT_LOG_BLK + b->nw * PT_LOG_WENT;
	int sw = r->swap;

	*nev = 0;
	if (!PT_LOG_CRC_OK(b->bcrc, pt_log_crc(0, p + PT_LOG_BLK, b->len - PT_LOG_BLK)))
		return EBADMSG;
	if (b->type == PT_LOG_BT_END)
		return pt_log_get32(p + PT_LOG_BLK + 28, sw) ? EBADMSG : 0;
	if (b->type == PT_LOG_BT_SUMMARY || b->type == PT_LOG_BT_CKPT)
		return pt_log_sum_parse(p, b->len, b->nrec, sw, (unsigned)r->version, NULL) ? EBADMSG : 0;
	for (uint32_t i = 0; i < b->nw; i++)
		if (pt_log_get32(p + PT_LOG_BLK + i * PT_LOG_WENT + 4, sw))
			return EBADMSG;
	struct pt_log_prev prev = { 0, 0, 0 };
	r->chk_max_ts = r->chk_min_ts = 0;
	r->chk_lost = 0;
	r->chk_meta = 0;
	r->chk_sorted = 1;
	for (uint32_t i = 0; i < b->nrec; i++) {
		uint32_t delta, n;
		unsigned info;
		uint64_t where;

		if (b->len - off < PT_LOG_REC_SHORT)
			return EBADMSG;
		delta = pt_log_get32(p + off + PT_LOG_R_DELTA, sw);
		n = pt_log_get16(p + off + PT_LOG_R_LEN, sw);
		info = pt_log_get16(p + off + PT_LOG_R_INFO, sw);
		if (info & PT_LOG_RF_SHORT) {
			/* (v4) an event record after another event record */
			if (r->version < 4 || (info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ)) || !prev.ok)
				return EBADMSG;
			where = prev.where;
			off += PT_LOG_REC_SHORT;
		} else {
			if (b->len - off < PT_LOG_REC)
				return EBADMSG;
			where = pt_log_get64(p + off + PT_LOG_R_WHERE, sw);
			off += PT_LOG_REC;
		}
		if (b->len - off < n)
			return EBADMSG;
		r->chk_meta |= (info & (PT_LOG_RF_OBJ | PT_LOG_RF_NAME | PT_LOG_RF_LOST)) != 0;
		if (info & PT_LOG_RF_OBJ) {
			if ((info & ~PT_LOG_RF_OBJ) || where || delta || r->version < 3 ||
			    get_obj(r, p + off, n, names))
				return EBADMSG;
		} else if (info & PT_LOG_RF_NAME) {
			if ((info & (PT_LOG_RF_TRUNC | PT_LOG_RF_INT)) || where || delta || !n ||
			    n > PT_LOG_NAME_MAX || memchr(p + off, 0, n))
				return EBADMSG;
			if (names)
				set_name(r, info & PT_LOG_ID_MASK, p + off, n, b->seq);
		} else {
			prev.where = where, prev.ok = 1;
			if ((where >> 48) >= b->nw || ((info & PT_LOG_RF_INT) && n != 4) ||
			    ((info & PT_LOG_RF_LOST) &&
			     (n != 8 || r->version < 2 || (info & (PT_LOG_RF_INT | PT_LOG_RF_TRUNC)))) ||
			    b->base + delta < b->base)
				return EBADMSG;
			if ((info & PT_LOG_RF_LOST) && names && b->seq > r->lost_rec_seq)
				r->lost_rec_seq = b->seq;
			if (!(*nev)++)
				*first_ts = r->chk_max_ts = r->chk_min_ts = b->base + delta;
			else if (b->base + delta < *last_ts)
				r->chk_sorted = 0;
			*last_ts = b->base + delta;
			if (*last_ts > r->chk_max_ts)
				r->chk_max_ts = *last_ts;
			if (*last_ts < r->chk_min_ts)
				r->chk_min_ts = *last_ts;
			r->chk_lost |= (info & PT_LOG_RF_LOST) != 0;
		}
		off += n;
	}
	return off == b->len ? 0 : EBADMSG;
}

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

void pt_logr_end_status(struct pt_logr *r, const unsigned char *p)
{
	struct posix_trace_status_info *s = &r->status;
	int sw = r->swap;

	p += PT_LOG_BLK;
	s->posix_stream_status = (int)pt_log_get32(p + 0, sw);
	s->posix_stream_full_status = (int)pt_log_get32(p + 4, sw);
	s->posix_stream_overrun_status = (int)pt_log_get32(p + 8, sw);
	s->posix_stream_flush_status = (int)pt_log_get32(p + 12, sw);
	s->posix_stream_flush_error = (int)pt_log_get32(p + 16, sw);
	s->posix_log_overrun_status = (int)pt_log_get32(p + 20, sw);
	s->posix_log_full_status = (int)pt_log_get32(p + 24, sw);
	r->lost = pt_log_get64(p + 32, sw);
	r->dropped = pt_log_get64(p + 40, sw);
	r->has_stream_lost = r->version >= 2;
	r->stream_lost = r->has_stream_lost ? pt_log_get64(p + 48, sw) : 0;
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
			(int32_t)pt_log_get32(p + PT_LOG_BLK + i * PT_LOG_WENT, r->swap),
			pt_log_get64(p + PT_LOG_BLK + i * PT_LOG_WENT + 8, r->swap) };
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
			if (!pt_logr_check(r, r->buf, &b, 0, &x.first_ts, &x.last_ts, &x.nev)) {
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
			set_name(r, id, (const unsigned char *)s.names[id],
			         (uint32_t)strlen(s.names[id]), 0);
	for (size_t i = 0; i < s.nobjs; i++)
		(void)keep_obj(r, &s.objs[i], pt_log_crc(0, &s.objs[i], sizeof s.objs[i]));
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
			set_name(r, id, (const unsigned char *)s.names[id],
			         (uint32_t)strlen(s.names[id]), 0);
	for (size_t i = 0; i < s.nobjs; i++)
		(void)keep_obj(r, &s.objs[i], pt_log_crc(0, &s.objs[i], sizeof s.objs[i]));
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
	free(r->objs);
	free(r->obj_hash);
	free(r->obj_tab);
	r->objs = NULL;
	r->obj_hash = NULL;
	r->obj_tab = NULL;
	r->obj_tcap = 0;
	r->nobjs = r->objs_cap = 0;
	r->buf = NULL;
	r->names = NULL;
	r->name_seq = NULL;
	r->items = NULL;
	r->nitems = r->cur = 0;
	r->fd = -1;
}
