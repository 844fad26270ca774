/*
 * logcheck.c -- a log's bytes read and checked, at the bottom of the
 * reader: the file header, a block's header, a whole block (its CRCs and
 * every record: events, names, entries of the map of loaded code; a
 * SUMMARY or checkpoint block's entries, which also fill a summary; the
 * END block's status).  Opening a log (logread.c), reading its events
 * (logiter.c) and reading its summary (logsum.c) stand on these.  Format
 * and rules: docs/log-format.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "logpriv.h"

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
	a->create_nsec = (int64_t)pt_log_get64(at + PT_LOG_A_CREATE_NS, sw);
	a->res_sec = (int64_t)pt_log_get64(at + PT_LOG_A_RES, sw);
	a->res_nsec = (int64_t)pt_log_get64(at + PT_LOG_A_RES_NS, sw);
	a->stream_size = pt_log_get64(at + PT_LOG_A_STREAM_SIZE, sw);
	a->max_data = pt_log_get64(at + PT_LOG_A_MAX_DATA, sw);
	a->log_size = pt_log_get64(at + PT_LOG_A_LOG_SIZE, sw);
	a->stream_policy = (int32_t)pt_log_get32(at + PT_LOG_A_STREAM_POLICY, sw);
	a->log_policy = (int32_t)pt_log_get32(at + PT_LOG_A_LOG_POLICY, sw);
	a->inherit = (int32_t)pt_log_get32(at + PT_LOG_A_INHERIT, sw);
	a->has_log = (int32_t)pt_log_get32(at + PT_LOG_A_HAS_LOG, sw);
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
	b->crc_ok = b->made = 0;
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
	if (b->type == PT_LOG_BT_CHUNK) /* (v9) one writer, then the chunk's header */
		return r->version >= 9 && b->nw == 1 && room >= PT_LOG_CHUNK_HDR && b->nrec &&
		       b->nrec <= (room - PT_LOG_CHUNK_HDR) / PT_REC_SHORT;
	return b->type == PT_LOG_BT_END && !b->nw && !b->nrec &&
	       b->len == (r->version >= 2 ? PT_LOG_END_LEN : PT_LOG_END_LEN_V1);
}

void pt_logr_set_name(struct pt_logr *r, unsigned id, const unsigned char *s, uint32_t n,
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
	o->ts = pt_log_get64(p + PT_LOG_O_TS, sw);
	o->base = pt_log_get64(p + PT_LOG_O_BASE, sw);
	o->lo = pt_log_get64(p + PT_LOG_O_LO, sw);
	o->hi = pt_log_get64(p + PT_LOG_O_HI, sw);
	o->pid = (int32_t)pt_log_get32(p + PT_LOG_O_PID, sw);
	o->kind = pt_log_get16(p + PT_LOG_O_KIND, sw);
	o->bid_len = p[PT_LOG_O_BIDLEN];
	o->flags = p[PT_LOG_O_FLAGS];
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
	    (o->flags & ~(PT_EXT_OBJ_TRUNC | (o->kind == PT_EXT_OBJ_PROC && version >= 11
	                                      ? PT_EXT_OBJ_CONT : 0u))) ||
	    pl >= PT_EXT_OBJ_PATH ||
	    memchr(p + PT_LOG_O_BID + o->bid_len, 0, pl) ||
	    ((o->kind == PT_EXT_OBJ_ADD || o->kind == PT_EXT_OBJ_DEL) && o->lo >= o->hi) ||
	    (meta && (!pt_ext_meta_ok(o->kind, o->lo, o->hi, pl, o->bid_len) ||
	              (o->kind != PT_EXT_OBJ_PROC && o->flags))))
		return EBADMSG;
	memcpy(o->bid, p + PT_LOG_O_BID, o->bid_len);
	memcpy(o->path, p + PT_LOG_O_BID + o->bid_len, pl);
	return 0;
}

/* An OBJ record: checked; kept (once) when keep. */
static int get_obj(struct pt_logr *r, const unsigned char *p, uint32_t n, int keep)
{
	struct pt_ext_obj o;

	if (pt_log_obj_decode(p, n, r->swap, (unsigned)r->version, &o))
		return EBADMSG;
	return keep ? pt_logr_keep_obj(r, &o, pt_log_crc(0, p, n) | (uint64_t)n << 32) : 0;
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
int pt_logr_keep_obj(struct pt_logr *r, const struct pt_ext_obj *o, uint64_t h)
{
	size_t n = r->objs.n;

	if ((n + 1) * 2 > r->obj_tcap) {
		size_t ncap = r->obj_tcap ? 2 * r->obj_tcap : 1024;
		uint32_t *nt = calloc(ncap, sizeof *nt);
		if (!nt)
			return 0; /* (memory: the map goes without it) */
		for (size_t i = 0; i < n; i++) {
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
		if (r->obj_hash[i] == h && pt_objstore_same(&r->objs, i, o))
			return 0;
	}
	if (n >= PT_LOG_OBJS_MAX)
		return 0;
	if (n == r->obj_hcap) {
		size_t ncap = r->obj_hcap ? 2 * r->obj_hcap : 64;
		uint64_t *nh = realloc(r->obj_hash, ncap * sizeof *nh);
		if (!nh)
			return 0; /* (memory: the map goes without it) */
		r->obj_hash = nh, r->obj_hcap = ncap;
	}
	if (pt_objstore_add(&r->objs, o))
		return 0;
	r->obj_hash[n] = h;
	r->obj_tab[j] = (uint32_t)r->objs.n;
	return 0;
}

int pt_logr_unchunk(const struct pt_logr *r, unsigned char *p, struct pt_log_bhdr *b)
{
	struct pt_log_unchunked u;
	uint32_t len;

	if (b->type != PT_LOG_BT_CHUNK)
		return 0;
	if (!PT_LOG_CRC_OK(b->bcrc, pt_log_crc(0, p + PT_LOG_BLK, b->len - PT_LOG_BLK)) ||
	    pt_log_unchunk(p, b->len, b->nrec, r->swap, &len, &u))
		return EBADMSG;
	b->type = PT_LOG_BT_EVENTS, b->len = len, b->crc_ok = 1;
	b->made = 1;
	b->made_first = u.first, b->made_last = u.last;
	b->made_min = u.min, b->made_max = u.max, b->made_sorted = u.sorted;
	return 0;
}

/* An events block made of a CHUNK block: its records are events of its
 * one writer, made well-formed and in range by pt_log_unchunk(), which
 * said what the walk below would find; only the writer's entry, which it
 * left as it was, is checked.  (Fuzzing: the walk as well, which must
 * find the same.) */
static int check_made(struct pt_logr *r, const unsigned char *p, const struct pt_log_bhdr *b,
                      uint64_t *first_ts, uint64_t *last_ts, uint32_t *nev)
{
	if (b->nw != 1 || pt_log_get32(p + PT_LOG_BLK + PT_LOG_W_ZERO, r->swap))
		return EBADMSG;
	*nev = b->nrec;
	*first_ts = b->made_first, *last_ts = b->made_last;
	r->chk_min_ts = b->made_min, r->chk_max_ts = b->made_max;
	r->chk_sorted = b->made_sorted;
	r->chk_lost = r->chk_meta = 0;
	return 0;
}

int pt_logr_check(struct pt_logr *r, const unsigned char *p, const struct pt_log_bhdr *b,
                  int names, uint64_t *first_ts, uint64_t *last_ts, uint32_t *nev)
{
	uint32_t off = PT_LOG_BLK + b->nw * PT_LOG_WENT;
	int sw = r->swap;

	*nev = 0;
	if (b->type == PT_LOG_BT_CHUNK) /* (pt_logr_unchunk() first) */
		return EBADMSG;
	if (b->made) {
		int rc = check_made(r, p, b, first_ts, last_ts, nev);
#ifdef PT_LOG_CHECK_MADE /* (fuzzing: the walk must find the same) */
		struct pt_log_bhdr w = *b;
		uint64_t f, l, mn = r->chk_min_ts, mx = r->chk_max_ts;
		uint32_t n;
		int so = r->chk_sorted;
		w.made = 0;
		int rc2 = pt_logr_check(r, p, &w, names, &f, &l, &n);
		if (rc != rc2 || (!rc && (f != *first_ts || l != *last_ts || n != *nev ||
		                          mn != r->chk_min_ts || mx != r->chk_max_ts ||
		                          so != r->chk_sorted || r->chk_lost || r->chk_meta)))
			abort();
#endif
		return rc;
	}
	if (!b->crc_ok && !PT_LOG_CRC_OK(b->bcrc, pt_log_crc(0, p + PT_LOG_BLK, b->len - PT_LOG_BLK)))
		return EBADMSG;
	if (b->type == PT_LOG_BT_END)
		return pt_log_get32(p + PT_LOG_BLK + PT_LOG_E_ZERO, sw) ? EBADMSG : 0;
	if (b->type == PT_LOG_BT_SUMMARY || b->type == PT_LOG_BT_CKPT)
		return pt_log_sum_parse(p, b->len, b->nrec, sw, (unsigned)r->version, NULL) ? EBADMSG : 0;
	for (uint32_t i = 0; i < b->nw; i++)
		if (pt_log_get32(p + PT_LOG_BLK + i * PT_LOG_WENT + PT_LOG_W_ZERO, sw))
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
				pt_logr_set_name(r, info & PT_LOG_ID_MASK, p + off, n, b->seq);
		} else {
			prev.where = where, prev.ok = 1;
			if ((where >> PT_LOG_WHERE_WI) >= b->nw || ((info & PT_LOG_RF_INT) && n != 4) ||
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

void pt_logr_end_status(struct pt_logr *r, const unsigned char *p)
{
	struct posix_trace_status_info *s = &r->status;
	int sw = r->swap;

	p += PT_LOG_BLK;
	s->posix_stream_status = (int)pt_log_get32(p + PT_LOG_E_STREAM_STATUS, sw);
	s->posix_stream_full_status = (int)pt_log_get32(p + PT_LOG_E_STREAM_FULL, sw);
	s->posix_stream_overrun_status = (int)pt_log_get32(p + PT_LOG_E_STREAM_OVERRUN, sw);
	s->posix_stream_flush_status = (int)pt_log_get32(p + PT_LOG_E_FLUSH_STATUS, sw);
	s->posix_stream_flush_error = (int)pt_log_get32(p + PT_LOG_E_FLUSH_ERROR, sw);
	s->posix_log_overrun_status = (int)pt_log_get32(p + PT_LOG_E_LOG_OVERRUN, sw);
	s->posix_log_full_status = (int)pt_log_get32(p + PT_LOG_E_LOG_FULL, sw);
	r->lost = pt_log_get64(p + PT_LOG_E_LOST, sw);
	r->dropped = pt_log_get64(p + PT_LOG_E_DROPPED, sw);
	r->has_stream_lost = r->version >= 2;
	r->stream_lost = r->has_stream_lost ? pt_log_get64(p + PT_LOG_E_STREAM_LOST, sw) : 0;
}

/* The entries of a SUMMARY block, one kind each (docs/log-format.md,
 * "SUMMARY block"): e the entry's body, n its length; so the summary to
 * fill (NULL: checked only).  0, EBADMSG or ENOMEM. */

static int ent_totals(const unsigned char *e, uint32_t n, int sw, struct pt_log_summary *so)
{
	if (n != PT_LOG_TOT_LEN)
		return EBADMSG;
	if (so) {
		so->events = pt_log_get64(e + PT_LOG_TOT_EVENTS, sw);
		so->first = pt_log_get64(e + PT_LOG_TOT_FIRST, sw);
		so->last = pt_log_get64(e + PT_LOG_TOT_LAST, sw);
		so->gaps = pt_log_get64(e + PT_LOG_TOT_GAPS, sw);
		so->last_lost = pt_log_get64(e + PT_LOG_TOT_LAST_LOST, sw);
	}
	return 0;
}

static int ent_type(const unsigned char *e, uint32_t n, int sw, struct pt_log_summary *so)
{
	uint32_t id = pt_log_get32(e + PT_LOG_TYP_ID, sw);

	if (n != PT_LOG_TYP_LEN || id >= PT_NIDS || pt_log_get32(e + PT_LOG_TYP_ZERO, sw))
		return EBADMSG;
	if (so) {
		so->count[id] = pt_log_get64(e + PT_LOG_TYP_COUNT, sw);
		so->tfirst[id] = pt_log_get64(e + PT_LOG_TYP_FIRST, sw);
		so->tlast[id] = pt_log_get64(e + PT_LOG_TYP_LAST, sw);
	}
	return 0;
}

static int ent_name(const unsigned char *e, uint32_t n, int sw, struct pt_log_summary *so)
{
	uint32_t id = n >= PT_LOG_NAM_NAME ? pt_log_get32(e + PT_LOG_NAM_ID, sw) : PT_NIDS;

	if (n < PT_LOG_NAM_NAME + 1 || n > PT_LOG_NAM_NAME + PT_LOG_NAME_MAX || id >= PT_NIDS ||
	    memchr(e + PT_LOG_NAM_NAME, 0, n - PT_LOG_NAM_NAME))
		return EBADMSG;
	if (so && so->names) {
		memcpy(so->names[id], e + PT_LOG_NAM_NAME, n - PT_LOG_NAM_NAME);
		so->names[id][n - PT_LOG_NAM_NAME] = 0;
		so->known[id / 64] |= 1ull << (id % 64);
	}
	return 0;
}

/* WRITER: the next writer; (v8) WRITER_AT, in a checkpoint: at its place */
static int ent_writer(unsigned kind, const unsigned char *e, uint32_t n, int sw,
                      unsigned version, struct pt_log_summary *so)
{
	uint32_t at = so ? so->nwr : 0;

	if (kind == PT_LOG_S_WRITER_AT) {
		if (version < 8 || n != PT_LOG_WAT_LEN || pt_log_get32(e + PT_LOG_WAT_ZERO, sw))
			return EBADMSG;
		at = pt_log_get32(e + PT_LOG_WAT_AT, sw);
		e += PT_LOG_WAT_WRITER, n -= PT_LOG_WAT_WRITER;
		if (so && at > so->nwr)
			return EBADMSG;
	}
	if (n != PT_LOG_WRI_LEN || pt_log_get32(e + PT_LOG_WRI_ZERO, sw))
		return EBADMSG;
	if (!so)
		return 0;
	if (at == so->nwr && so->nwr == so->wr_cap) { /* (doubling: a copy per
	                                               * entry was quadratic in the writers) */
		uint32_t ncap = so->wr_cap ? 2 * so->wr_cap : 64;
		struct pt_logw_sumw *nw = ncap > so->wr_cap ?
			realloc(so->wr, (size_t)ncap * sizeof *nw) : NULL;
		if (!nw)
			return ENOMEM;
		so->wr = nw, so->wr_cap = ncap;
	}
	so->wr[at] = (struct pt_logw_sumw){
		(int32_t)pt_log_get32(e + PT_LOG_WRI_PID, sw),
		pt_log_get64(e + PT_LOG_WRI_THREAD, sw), pt_log_get64(e + PT_LOG_WRI_COUNT, sw),
		pt_log_get64(e + PT_LOG_WRI_FIRST, sw),
		pt_log_get64(e + PT_LOG_WRI_LAST, sw), 0, 0, 0, { 0, 0, 0 } };
	if (at == so->nwr)
		so->nwr++;
	return 0;
}

/* (v10) a writer's waits: of a WRITER entry given already, each writer
 * once and in their order, at least one wait, the longest within the
 * total (unless the total wrapped: payloads are the program's) */
static int ent_waits(const unsigned char *e, uint32_t n, int sw, unsigned version,
                     struct pt_log_summary *so)
{
	if (version < 10 || n != PT_LOG_WAI_LEN || pt_log_get32(e + PT_LOG_WAI_ZERO, sw))
		return EBADMSG;
	uint32_t at = pt_log_get32(e + PT_LOG_WAI_AT, sw);
	struct pt_log_waits wt = { pt_log_get64(e + PT_LOG_WAI_N, sw),
		                   pt_log_get64(e + PT_LOG_WAI_NS, sw),
		                   pt_log_get64(e + PT_LOG_WAI_MAX, sw) };
	if (!wt.n || (wt.n == 1 && wt.max != wt.ns))
		return EBADMSG;
	if (!so)
		return 0;
	if (at >= so->nwr || at < so->waits_next)
		return EBADMSG;
	so->wr[at].waits = wt;
	so->waits_next = at + 1;
	return 0;
}

/* (v8) the last checkpoint before; s: also when only the index is kept */
static int ent_chain(const unsigned char *e, uint32_t n, int sw, unsigned version,
                     struct pt_log_summary *s)
{
	uint64_t coff = n == PT_LOG_CHN_LEN ? pt_log_get64(e + PT_LOG_CHN_OFF, sw) : 0;
	uint64_t cseq = n == PT_LOG_CHN_LEN ? pt_log_get64(e + PT_LOG_CHN_SEQ, sw) : 0;

	if (version < 8 || n != PT_LOG_CHN_LEN || (!coff != !cseq) ||
	    (coff && (coff < PT_LOG_FIRST || coff % 8)))
		return EBADMSG;
	if (s) {
		s->chain_off = coff, s->chain_seq = cseq;
		s->has_chain = 1;
	}
	return 0;
}

static int ent_obj(const unsigned char *e, uint32_t n, int sw, unsigned version,
                   struct pt_log_summary *so)
{
	struct pt_ext_obj o;

	if (pt_log_obj_decode(e, n, sw, version, &o))
		return EBADMSG;
	if (so && so->objs.n < PT_LOG_OBJS_MAX)
		return pt_objstore_add(&so->objs, &o);
	return 0;
}

/* (v7) a run of the block index; s: also when only the index is kept */
static int ent_index(const unsigned char *e, uint32_t n, int sw, unsigned version,
                     struct pt_log_summary *s)
{
	uint32_t from = n >= PT_LOG_IDX_ENTS ? pt_log_get32(e + PT_LOG_IDX_FROM, sw) : 0;
	uint32_t k = n >= PT_LOG_IDX_ENTS ? pt_log_get32(e + PT_LOG_IDX_K, sw) : 0;

	if (version < 7 || n < PT_LOG_IDX_ENTS + PT_LOG_IDX_ENT ||
	    (n - PT_LOG_IDX_ENTS) % PT_LOG_IDX_ENT || k != (n - PT_LOG_IDX_ENTS) / PT_LOG_IDX_ENT)
		return EBADMSG;
	if (!s)
		return 0;
	/* the runs follow on; (v8) the first may begin after the entries of
	 * the checkpoints before */
	if (!s->idx_based && version >= 8)
		s->idx_base = from;
	if (from != s->idx_base + s->nidx)
		return EBADMSG;
	s->idx_based = 1;
	if (s->want_index) {
		if (s->nidx + k > s->idx_cap) {
			uint64_t ncap = s->idx_cap ? 2 * s->idx_cap : 256;
			while (ncap < s->nidx + k)
				ncap *= 2;
			struct pt_log_bidx *ni = realloc(s->idx, ncap * sizeof *ni);
			if (!ni)
				return ENOMEM;
			s->idx = ni, s->idx_cap = ncap;
		}
		for (uint32_t j = 0; j < k; j++) {
			const unsigned char *x = e + PT_LOG_IDX_ENTS + j * PT_LOG_IDX_ENT;
			s->idx[s->nidx + j] = (struct pt_log_bidx){
				pt_log_get32(x + PT_LOG_X_LEN, sw),
				pt_log_get32(x + PT_LOG_X_FLAGS, sw),
				pt_log_get64(x + PT_LOG_X_FIRST, sw),
				pt_log_get64(x + PT_LOG_X_MIN, sw),
				pt_log_get64(x + PT_LOG_X_MAX, sw),
				pt_log_get64(x + PT_LOG_X_LAST, sw) };
		}
	}
	s->nidx += k;
	return 0;
}

int pt_log_sum_parse(const unsigned char *p, uint32_t len, uint32_t nrec, int swap,
                     unsigned version, struct pt_log_summary *s)
{
	uint32_t off = PT_LOG_BLK;
	int sw = swap;
	/* (a chain of checkpoints followed for its index: the rest checked only) */
	struct pt_log_summary *so = s && !s->index_only ? s : NULL;

	for (uint32_t i = 0; i < nrec; i++) {
		if (len - off < PT_LOG_S_HDR)
			return EBADMSG;
		unsigned kind = pt_log_get16(p + off + PT_LOG_S_KIND, sw);
		uint32_t n = pt_log_get16(p + off + PT_LOG_S_LEN, sw);
		const unsigned char *e = p + off + PT_LOG_S_HDR;
		int rc;
		off += PT_LOG_S_HDR;
		if (len - off < n)
			return EBADMSG;
		off += n;
		switch (kind) {
		case PT_LOG_S_TOTALS:
			rc = ent_totals(e, n, sw, so);
			break;
		case PT_LOG_S_TYPE:
			rc = ent_type(e, n, sw, so);
			break;
		case PT_LOG_S_NAME:
			rc = ent_name(e, n, sw, so);
			break;
		case PT_LOG_S_WRITER:
		case PT_LOG_S_WRITER_AT:
			rc = ent_writer(kind, e, n, sw, version, so);
			break;
		case PT_LOG_S_WAITS:
			rc = ent_waits(e, n, sw, version, so);
			break;
		case PT_LOG_S_CHAIN:
			rc = ent_chain(e, n, sw, version, s);
			break;
		case PT_LOG_S_OBJ:
			rc = ent_obj(e, n, sw, version, so);
			break;
		case PT_LOG_S_INDEX:
			rc = ent_index(e, n, sw, version, s);
			break;
		default:
			rc = EBADMSG;
		}
		if (rc)
			return rc;
	}
	return off == len ? 0 : EBADMSG;
}
