/*
 * logwrite.c -- trace log writer: events are gathered into blocks in
 * memory and each block goes out with one write call.  Format and rules:
 * docs/log-format.md; system calls and setup: logwio.c.
 */
#include <errno.h>
#include <stdlib.h>
#include "logpriv.h"

static uint32_t blk_len(const struct pt_logw *w)
{
	return PT_LOG_BLK + w->nw * PT_LOG_WENT + w->rec_len;
}

static void blk_reset(struct pt_logw *w)
{
	w->rec_len = w->nrec = w->nev = w->nw = w->wlast = w->nsyn = w->npre = 0;
	w->prev.ok = 0;
}

/* LOOP: forget the oldest live block, counting its events as lost. */
static void live_pop(struct pt_logw *w)
{
	w->lost += w->live[w->live_head].nev;
	w->live_head = (w->live_head + 1) % w->live_cap;
	w->live_n--;
}

static const struct pt_logw_live *live_front(const struct pt_logw *w)
{
	return w->live_n ? &w->live[w->live_head] : NULL;
}

static int live_push(struct pt_logw *w, const struct pt_logw_live *b)
{
	if (w->live_n == w->live_cap) {
		size_t ncap = w->live_cap ? 2 * w->live_cap : 64;
		struct pt_logw_live *n = malloc(ncap * sizeof *n);

		if (!n)
			return ENOMEM;
		for (size_t i = 0; i < w->live_n; i++)
			n[i] = w->live[(w->live_head + i) % w->live_cap];
		free(w->live);
		w->live = n, w->live_cap = ncap, w->live_head = 0;
	}
	w->live[(w->live_head + w->live_n++) % w->live_cap] = *b;
	return 0;
}

/* A block's header at h but its CRCs: what every block of w says (magic,
 * nonce, its sequence number) and what this one does. */
static void blk_head(const struct pt_logw *w, unsigned char *h, unsigned type, uint32_t nw,
                     uint32_t len, uint32_t nrec, uint64_t oldest, uint64_t base)
{
	int sw = w->swap;

	memcpy(h + PT_LOG_B_MAGIC, PT_LOG_BLK_MAGIC, 4);
	pt_log_put16(h + PT_LOG_B_TYPE, (uint16_t)type, sw);
	pt_log_put16(h + PT_LOG_B_NW, (uint16_t)nw, sw);
	pt_log_put32(h + PT_LOG_B_LEN, len, sw);
	pt_log_put32(h + PT_LOG_B_NREC, nrec, sw);
	pt_log_put64(h + PT_LOG_B_NONCE, w->nonce, sw);
	pt_log_put64(h + PT_LOG_B_SEQ, w->seq, sw);
	pt_log_put64(h + PT_LOG_B_OLDEST, oldest, sw);
	pt_log_put64(h + PT_LOG_B_BASE, base, sw);
}

/* Writes one block: the header and writer table in w->hdr, then `body`
 * (the records, or the END body).  On failure the block is lost (its
 * events dropped) and the next block goes to the same place. */
static int put_block(struct pt_logw *w, unsigned type, const unsigned char *body,
                     uint32_t body_len, uint32_t nrec, uint32_t nev)
{
	static const unsigned char zero[8];
	unsigned char *h = w->hdr;
	uint32_t tab = w->nw * PT_LOG_WENT, len = PT_LOG_BLK + tab + body_len;
	uint64_t padded = PT_LOG_ALIGN8(len), oldest = 1;
	const struct pt_logw_live *f;
	int rc, sw = w->swap;

	if (w->policy == POSIX_TRACE_LOOP) {
		/* blocks of the previous lap that this one overwrites */
		while ((f = live_front(w)) && f->off >= w->pos && f->off < w->pos + padded)
			live_pop(w);
		oldest = (f = live_front(w)) ? f->seq : w->seq;
	}
	blk_head(w, h, type, w->nw, len, nrec, oldest, w->nev ? w->base_ts : 0);
	for (uint32_t i = 0; i < w->nw; i++) {
		unsigned char *e = h + PT_LOG_BLK + i * PT_LOG_WENT;
		pt_log_put32(e + PT_LOG_W_PID, (uint32_t)w->wt[i].pid, sw);
		pt_log_put32(e + PT_LOG_W_ZERO, 0, sw);
		pt_log_put64(e + PT_LOG_W_THREAD, w->wt[i].thread, sw);
	}
	if (!w->bg) { /* (else the writing thread makes them, logwbg.c) */
		pt_log_put32(h + PT_LOG_B_BCRC,
		             pt_log_crc(pt_log_crc(0, h + PT_LOG_BLK, tab), body, body_len), sw);
		pt_log_put32(h + PT_LOG_B_HCRC, pt_log_crc(0, h, PT_LOG_B_HCRC), sw);
	}

	rc = pt_logw_put(w, h, PT_LOG_BLK + tab, body, body_len, zero, (uint32_t)(padded - len));
	if (rc) {
		if (!w->err)
			w->err = rc;
		w->dropped += nev;
		return rc;
	}
	if (w->sum && type == PT_LOG_BT_EVENTS) /* what the log now holds */
		pt_logw_sum_block(w, body, body_len, nrec, w->nev ? w->base_ts : 0);
	if (w->policy == POSIX_TRACE_LOOP) {
		struct pt_logw_live b = { w->pos, w->seq, (uint32_t)padded, nev };
		if ((rc = live_push(w, &b))) /* cannot track it: count it lost now */
			w->lost += nev;
	}
	w->pos += padded;
	w->written += padded;
	w->seq++;
	return rc;
}

/* (v8) A checkpoint once its interval is over (logsum.c says what it
 * holds), in the block buffer, empty between blocks; as many as the new
 * map entries need.  One that cannot be written is not an error (no event
 * is lost): the next interval tries again. */
static void put_ckpt(struct pt_logw *w)
{
	struct pt_logw_sum *s = w->sum;

	if (!s || s->failed || (w->written - s->ckpt_at < w->ckpt_every && s->nidx < s->ckpt_n &&
	                        s->dirty < PT_LOG_CKPT_WRITERS &&
	                        (!s->spill || w->nobjs - s->obj_ckpt < PT_LOG_CKPT_OBJS)))
		return;
	for (int k = 0; k < 64; k++) {
		uint32_t nrec, nobj, n;
		uint64_t off = w->pos, seq = w->seq;
		int err = w->err;
		n = pt_logw_ckpt_body(w, w->rec, w->cap - PT_LOG_BLK, &nrec, &nobj);
		if (!n || put_block(w, PT_LOG_BT_CKPT, w->rec, n, nrec, 0)) {
			w->err = err;
			s->ckpt_at = w->written; /* (not at every block) */
			s->ckpt_n = s->nidx + PT_LOG_CKPT_BLOCKS;
			break;
		}
		pt_logw_ckpt_done(w, PT_LOG_BLK + n, off, seq, nobj);
		if (s->obj_ckpt >= w->nobjs || !nobj)
			break;
	}
	blk_reset(w);
	pt_logw_sum_mark_gone(w); /* (retired at the next one) */
}

/* Writes out the block being built, if it holds anything. */
static int flush(struct pt_logw *w)
{
	int rc = 0;

	if (w->nrec)
		rc = put_block(w, PT_LOG_BT_EVENTS, w->rec, w->rec_len, w->nrec, w->nev - w->nsyn);
	blk_reset(w);
	if (w->ckpt_every && !rc)
		put_ckpt(w);
	return rc;
}

static void keep_err(int *first, int rc)
{
	if (rc && !*first)
		*first = rc;
}

/* LOOP: the next block goes back to the start of the log.  The rest of
 * the previous lap, beyond where this one ended, is given up.  The names
 * are written again at the start of the new lap, unless the lap that
 * ends held nothing but such a copy of them (they do not fit in a lap:
 * writing them again would never end). */
static void wrap(struct pt_logw *w)
{
	const struct pt_logw_live *f;

	while ((f = live_front(w)) && f->off >= w->pos)
		live_pop(w);
	w->pos = PT_LOG_FIRST;
	w->names_due = w->lap_new != 0;
	w->lap_new = 0;
}

static int find_writer(const struct pt_logw *w, const struct pt_logw_who *who)
{
	if (w->nw && w->wt[w->wlast].pid == who->pid && w->wt[w->wlast].thread == who->thread)
		return (int)w->wlast;
	for (uint32_t i = 0; i < w->nw; i++)
		if (w->wt[i].pid == who->pid && w->wt[i].thread == who->thread)
			return (int)i;
	return -1;
}

static void put_rec(struct pt_logw *w, uint32_t delta, unsigned info, uint64_t where,
                    const void *data, uint32_t len)
{
	unsigned char *p = w->rec + w->rec_len;

	uint32_t hl = pt_log_put_rec(p, delta, len, info, where, w->swap, &w->prev);
	if (len)
		memcpy(p + hl, data, len);
	w->rec_len += hl + len;
	w->nrec++;
}

/* The last record written: its time and writer, and the latest time of
 * any (w->hi_ts: CHUNK blocks of threads busy at once overlap in time,
 * and an event read late comes after a later one) */
static inline void note_last(struct pt_logw *w, uint64_t ts, struct pt_logw_who who)
{
	w->last_ts = ts, w->last_who = who;
	w->hi_ts = ts > w->hi_ts ? ts : w->hi_ts;
}

/* Appends an event record (who != NULL) or a name record; the caller
 * made room. */
static void add_rec(struct pt_logw *w, const struct pt_logw_who *who, uint64_t ts,
                    uint64_t addr, unsigned info, const void *data, uint32_t len)
{
	int wi = 0;

	if (who) {
		if ((wi = find_writer(w, who)) < 0) {
			wi = (int)w->nw++;
			w->wt[wi] = *who;
		}
		w->wlast = (uint32_t)wi;
		if (!w->nev++)
			w->base_ts = ts;
		note_last(w, ts, *who);
	}
	if (!w->emitting)
		w->lap_new++;
	put_rec(w, who ? (uint32_t)(ts - w->base_ts) : 0, info,
	        (addr & PT_MASK48) | (uint64_t)wi << PT_LOG_WHERE_WI, data, len);
}

static void emit_names(struct pt_logw *w, int *werr);
static void go_full(struct pt_logw *w, int *werr);

/* Makes room in the block being built for a record of `len` payload
 * bytes (an event of `who` at `ts`, or a name when who is NULL): writes
 * the block out, wraps (LOOP) or closes the log (UNTIL_FULL) as needed.
 * Returns 0 when there is room, ENOSPC when the log is full; write errors
 * go to *werr. */
/* 1 if `need` more bytes fit in the block being built, and the block so
 * grown still fits in the log (UNTIL_FULL: with room for the STOP block
 * left, and for the RESUME of an OVERFLOW written: a log never ends with
 * a gap that it does not close). */
static int fits(const struct pt_logw *w, uint32_t need)
{
	uint64_t len = (uint64_t)blk_len(w) + need, end;

	if (len > w->cap)
		return 0;
	if (w->policy == POSIX_TRACE_APPEND)
		return 1;
	end = w->pos + PT_LOG_ALIGN8(len);
	return w->policy == POSIX_TRACE_LOOP
	               ? end <= w->limit
	               : end + PT_LOG_STOP_BLK + (w->resume_due ? PT_LOG_RESUME_BLK : 0) <= w->limit;
}

static int make_room(struct pt_logw *w, const struct pt_logw_who *who, uint64_t ts,
                     uint32_t len, int *werr)
{
	for (;;) {
		uint32_t need = PT_LOG_REC + len;
		int ok = 1;

		if (w->names_due && !w->emitting) {
			emit_names(w, werr);
			continue;
		}
		if (who && find_writer(w, who) < 0) {
			need += PT_LOG_WENT;
			ok = w->nw < PT_LOG_MAX_WRITERS;
		}
		if (who && w->nev && (ts < w->base_ts || ts - w->base_ts > UINT32_MAX))
			ok = 0;
		if (!ok || blk_len(w) + need > w->cap) {
			keep_err(werr, flush(w)); /* an empty block always has room */
			continue;
		}
		if (fits(w, need))
			return 0;
		if (!who && w->resume_due)
			return ENOSPC; /* a name or an object: left out, the RESUME's room kept */
		if (w->policy == POSIX_TRACE_LOOP) {
			if (w->nrec)
				keep_err(werr, flush(w));
			else if (w->pos == PT_LOG_FIRST)
				return ENOSPC; /* cannot happen: pt_logw_min_size() */
			else
				wrap(w);
			continue;
		}
		go_full(w, werr);
		return ENOSPC;
	}
}

/* LOOP, after a wrap: every name again, at the start of the lap.  (A
 * wrap in here leaves names_due clear: the lap holds nothing new yet.) */
static void emit_names(struct pt_logw *w, int *werr)
{
	w->names_due = 0;
	w->emitting = 1;
	for (unsigned id = 0; id < PT_NIDS; id++) {
		uint32_t n;

		if (!(w->known[id / 64] >> (id % 64) & 1))
			continue;
		n = (uint32_t)strlen(w->names[id]);
		if (make_room(w, NULL, 0, n, werr))
			break;
		add_rec(w, NULL, 0, 0, id | PT_LOG_RF_NAME, w->names[id], n);
	}
	for (uint32_t i = 0; i < w->nobjs; i++) {
		const unsigned char *o = pt_logw_objp(w, i);
		if (!o)
			continue; /* (spilled: an APPEND log's, which never wraps) */
		uint32_t n = pt_log_get32(o, 0);
		if (make_room(w, NULL, 0, n, werr))
			break;
		add_rec(w, NULL, 0, 0, PT_LOG_RF_OBJ, o + 4, n);
	}
	w->emitting = 0;
}

/* UNTIL_FULL: the log ends with a POSIX_TRACE_STOP event (data: int 1)
 * stamped with the refused event's time and writer, in the block being
 * built if it fits, else in a block of its own (room for it was kept). */
static void go_full(struct pt_logw *w, int *werr)
{
	unsigned char one[4];
	struct pt_logw_who who = w->last_who;
	uint64_t ts = w->last_ts;
	int wnew = find_writer(w, &who) < 0;
	uint32_t need = PT_LOG_REC + 4 + (wnew ? PT_LOG_WENT : 0), nev;

	if ((wnew && w->nw >= PT_LOG_MAX_WRITERS) || blk_len(w) + need > w->cap ||
	    (w->nev && (ts < w->base_ts || ts - w->base_ts > UINT32_MAX)) ||
	    w->pos + PT_LOG_ALIGN8(blk_len(w) + need) > w->limit)
		keep_err(werr, flush(w));
	nev = w->nev - w->nsyn; /* the STOP event is not one of the caller's */
	pt_log_put32(one, 1, w->swap);
	add_rec(w, &who, ts, 0, POSIX_TRACE_STOP | PT_LOG_RF_INT, one, 4);
	keep_err(werr, put_block(w, PT_LOG_BT_EVENTS, w->rec, w->rec_len, w->nrec, nev));
	blk_reset(w);
	w->full = 1;
}

int pt_logw_obj(struct pt_logw *w, const struct pt_ext_obj *o)
{
	int werr = 0;
	uint32_t bl = o->bid_len < PT_EXT_OBJ_BID_MAX ? o->bid_len : PT_EXT_OBJ_BID_MAX;
	uint32_t pl = (uint32_t)strnlen(o->path, PT_EXT_OBJ_PATH - 1);
	uint32_t n = PT_LOG_OBJ_FIXED + bl + pl;
	unsigned char *p = NULL, one[4 + PT_LOG_OBJ_MAX];

	if (!w->rec || w->finished)
		return EINVAL;
	if (w->version < 6 && (o->kind == PT_EXT_OBJ_THREAD || o->kind == PT_EXT_OBJ_TYPE ||
	                       o->kind == PT_EXT_OBJ_PROC))
		return 0; /* formats 3 and 5 have no such entries */
	if (w->version < 8 && o->kind == PT_EXT_OBJ_FORK)
		return 0; /* (nor has 7 this one) */
	if (PT_LOG_BLK + PT_LOG_REC + n > w->cap)
		return 0; /* a block this small cannot hold it: the log goes without */
	/* A copy is kept for the summary and the LOOP wraps, up to as many
	 * as a reader keeps (PT_LOG_OBJS_MAX: it keeps the first ones); the
	 * entries after those go into the log only, so that a recording of
	 * days does not grow by a copy of each entry of every process.  The
	 * record is written from the stack: the block it fills may bring a
	 * checkpoint that gives the kept copy and drops it (logsum.c). */
	unsigned char *keep = NULL;
	if (w->nobjs < PT_LOG_OBJS_MAX) {
		if (w->nobjs - w->objs_base == w->objs_cap) {
			uint32_t ncap = w->objs_cap ? 2 * w->objs_cap : 64;
			unsigned char **no = realloc(w->objs, ncap * sizeof *no);
			if (!no)
				return ENOMEM;
			w->objs = no, w->objs_cap = ncap;
		}
		if (!(keep = malloc(4 + n)))
			return ENOMEM;
	}
	p = one;
	pt_log_put32(p, n, 0); /* (kept in memory: native order) */
	p += 4;
	pt_log_put64(p + PT_LOG_O_TS, o->ts, w->swap);
	pt_log_put64(p + PT_LOG_O_BASE, o->base, w->swap);
	pt_log_put64(p + PT_LOG_O_LO, o->lo, w->swap);
	pt_log_put64(p + PT_LOG_O_HI, o->hi, w->swap);
	pt_log_put32(p + PT_LOG_O_PID, (uint32_t)o->pid, w->swap);
	pt_log_put16(p + PT_LOG_O_KIND, o->kind, w->swap);
	p[PT_LOG_O_BIDLEN] = (unsigned char)bl;
	p[PT_LOG_O_FLAGS] = (unsigned char)(o->flags & (w->version >= 11 ? 0xffu : ~PT_EXT_OBJ_CONT));
	memcpy(p + PT_LOG_O_BID, o->bid, bl);
	memcpy(p + PT_LOG_O_BID + bl, o->path, pl);
	if (keep) {
		memcpy(keep, one, 4 + n);
		w->objs[w->nobjs++ - w->objs_base] = keep;
	}
	if (w->full)
		return 0;
	if (make_room(w, NULL, 0, n, &werr) == 0)
		add_rec(w, NULL, 0, 0, PT_LOG_RF_OBJ, p, n);
	return werr;
}

int pt_logw_name(struct pt_logw *w, unsigned id, const char *name)
{
	int werr = 0;
	size_t n;

	if (!w->rec || w->finished || id >= PT_NIDS || !name)
		return EINVAL;
	n = strlen(name);
	if (n == 0 || n > PT_LOG_NAME_MAX || memchr(name, 0, n))
		return EINVAL;
	if ((w->known[id / 64] >> (id % 64) & 1) && !strcmp(w->names[id], name))
		return 0;
	memcpy(w->names[id], name, n + 1);
	w->known[id / 64] |= 1ull << (id % 64);
	if (w->full)
		return 0;
	if (make_room(w, NULL, 0, (uint32_t)n, &werr) == 0)
		add_rec(w, NULL, 0, 0, id | PT_LOG_RF_NAME, name, (uint32_t)n);
	return werr;
}

static int put_event(struct pt_logw *w, uint64_t ts_ns, int32_t pid, uint64_t thread,
                     uint64_t addr, unsigned info, const void *data, uint32_t len)
{
	struct pt_logw_who who = { pid, thread };
	unsigned id = info & PT_LOG_ID_MASK;
	int syn = id == POSIX_TRACE_OVERFLOW || id == POSIX_TRACE_RESUME, werr = 0;

	w->gap_open = syn;

	if (w->full) {
		w->dropped += !syn;
		return ENOSPC;
	}
	if (w->policy == POSIX_TRACE_UNTIL_FULL && syn) /* (an OVERFLOW: with its RESUME's */
		w->resume_due = id == POSIX_TRACE_OVERFLOW;  /* room; a RESUME: in that room) */
	if (len > w->max_payload)
		len = w->max_payload, info |= PT_LOG_RF_TRUNC;
	/* most events: the same writer as the last one, in the same block */
	if (w->nev && w->wt[w->wlast].pid == pid && w->wt[w->wlast].thread == thread &&
	    ts_ns >= w->base_ts && ts_ns - w->base_ts <= UINT32_MAX && !w->names_due &&
	    fits(w, PT_LOG_REC + len)) {
		w->nev++;
		w->nsyn += syn;
		note_last(w, ts_ns, who);
		w->lap_new++;
		put_rec(w, (uint32_t)(ts_ns - w->base_ts), info,
		        (addr & PT_MASK48) | (uint64_t)w->wlast << PT_LOG_WHERE_WI, data, len);
		return 0;
	}
	note_last(w, ts_ns, who);
	if (make_room(w, &who, ts_ns, len, &werr)) {
		w->dropped += !syn;
		return werr ? werr : ENOSPC;
	}
	add_rec(w, &who, ts_ns, addr, info, data, len);
	w->nsyn += syn;
	return werr;
}

int pt_logw_event(struct pt_logw *w, uint64_t ts_ns, int32_t pid, uint64_t thread,
                  uint64_t addr, unsigned id, int truncated, const void *data, uint32_t len)
{
	if (!w->rec || w->finished || id >= PT_NIDS || (len && !data))
		return EINVAL;
	return put_event(w, ts_ns, pid, thread, addr, id | (truncated ? PT_LOG_RF_TRUNC : 0),
	                 data, len);
}

int pt_logw_event_lost(struct pt_logw *w, uint64_t ts_ns, int32_t pid, uint64_t thread,
                       uint64_t addr, unsigned id, uint64_t lost)
{
	unsigned char b[8];

	if (!w->rec || w->finished || id >= PT_NIDS)
		return EINVAL;
	pt_log_put64(b, lost, w->swap);
	return put_event(w, ts_ns, pid, thread, addr, id | PT_LOG_RF_LOST, b, sizeof b);
}

int pt_logw_span_open(struct pt_logw *w, int32_t pid, uint64_t thread, uint64_t ts,
                      struct pt_logw_span *s)
{
	struct pt_logw_who who = { pid, thread };
	int wi = find_writer(w, &who);
	uint64_t len, end = w->cap;

	if (!w->rec || w->finished || w->full || w->names_due)
		return 0;
	if (wi < 0 && w->nw >= PT_LOG_MAX_WRITERS)
		return 0;
	if (w->nev && (ts < w->base_ts || ts - w->base_ts > UINT32_MAX))
		return 0;
	len = (uint64_t)blk_len(w) + (wi < 0 ? PT_LOG_WENT : 0);
	if (w->policy != POSIX_TRACE_APPEND) { /* what fits() allows: */
		uint64_t lim = w->limit - (w->policy == POSIX_TRACE_UNTIL_FULL ? PT_LOG_STOP_BLK : 0);
		if (w->limit < PT_LOG_STOP_BLK || lim < w->pos)
			return 0;
		if (((lim - w->pos) & ~7ull) < end) /* ALIGN8(len) <= lim - pos */
			end = (lim - w->pos) & ~7ull;
	}
	if (len + PT_LOG_REC > end)
		return 0;
	s->p = w->rec + w->rec_len;
	s->room = (uint32_t)(end - len);
	s->max_payload = w->max_payload;
	s->base = w->nev ? w->base_ts : ts;
	s->wi = wi < 0 ? w->nw : (uint32_t)wi;
	s->where = (uint64_t)s->wi << PT_LOG_WHERE_WI;
	s->prev = w->prev;
	s->swap = w->swap;
	s->who = who;
	s->nadd = 0;
	s->npre = 0;
	if (wi < 0)
		s->add[s->nadd++] = who;
	return 1;
}

int pt_logw_span_who(const struct pt_logw *w, struct pt_logw_span *s, int32_t pid,
                     uint64_t thread, uint32_t need)
{
	struct pt_logw_who who = { pid, thread };
	int wi = find_writer(w, &who);

	for (uint32_t j = 0; wi < 0 && j < s->nadd; j++)
		if (s->add[j].pid == pid && s->add[j].thread == thread)
			wi = (int)(w->nw + j);
	if (wi < 0) { /* one more entry in the block's writer table */
		if (s->nadd == PT_LOGW_SPAN_ADD || w->nw + s->nadd >= PT_LOG_MAX_WRITERS ||
		    s->room < PT_LOG_WENT || need > s->room - PT_LOG_WENT)
			return 0;
		s->room -= PT_LOG_WENT;
		wi = (int)(w->nw + s->nadd);
		s->add[s->nadd++] = who;
	}
	s->wi = (uint32_t)wi;
	s->where = (uint64_t)wi << PT_LOG_WHERE_WI;
	s->who = who;
	return 1;
}

void pt_logw_span_close(struct pt_logw *w, const struct pt_logw_span *s, uint32_t bytes,
                        uint32_t nev, uint64_t last_ts)
{
	if (!nev)
		return;
	for (uint32_t j = 0; j < s->nadd; j++)
		w->wt[w->nw++] = s->add[j];
	for (uint32_t j = 0; j < s->npre && w->npre < PT_LOGW_PRE_MAX; j++) {
		struct pt_logw_pre *r = &w->pre[w->npre++];
		*r = s->pre[j];
		r->off += w->rec_len, r->end += w->rec_len;
	}
	w->wlast = s->wi;
	w->prev = s->prev;
	if (!w->nev)
		w->base_ts = s->base;
	w->nev += nev;
	w->nrec += nev;
	w->rec_len += bytes;
	w->lap_new += nev;
	note_last(w, last_ts, s->who);
	w->gap_open = 0; /* (a span holds no OVERFLOW or RESUME) */
}

uint32_t pt_logw_chunk_max(const struct pt_logw *w)
{
	uint64_t room = w->chunk_cap;

	if (!w->chunk_cap || !w->rec || w->finished || w->err || w->full || w->bg)
		return 0;
	if (w->chunk_until) { /* (a cut is made at a block boundary: none crosses it) */
		uint64_t left = w->written < w->chunk_until ? w->chunk_until - w->written : 0;
		room = left < room ? left : room;
	}
	return room > PT_LOG_C_RECS ? (uint32_t)(room - PT_LOG_C_RECS) & ~7u : 0;
}

/* A CHUNK block's runs of one type, as its walk finds them: the summary
 * counts them once the block is written (more: the records walked again). */
#define CHUNK_RUNS 32
struct chunk_runs {
	uint32_t n;
	struct pt_logw_pre r[CHUNK_RUNS];
};
static int keep_run(void *ctx, const struct pt_logw_pre *r)
{
	struct chunk_runs *k = ctx;
	if (k->n == CHUNK_RUNS) {
		k->n++; /* (more: counted record by record) */
		return 0;
	}
	k->r[k->n++] = *r;
	return 1;
}

/* A CHUNK block of more runs than kept (types taking turns), counted as
 * the events block it stands for, made from a copy of it (h: its header),
 * record by record (pt_logw_sum_block, which counts two types taking
 * turns without a run each). */
static void sum_converted(struct pt_logw *w, const unsigned char *h, const void *recs,
                          uint32_t len, uint32_t nev, uint64_t base)
{
	uint32_t olen;

	if (!w->chunk_buf && !(w->chunk_buf = malloc(w->chunk_cap))) {
		w->sum->failed = 1;
		return;
	}
	memcpy(w->chunk_buf, h, PT_LOG_C_RECS);
	memcpy(w->chunk_buf + PT_LOG_C_RECS, recs, len - PT_LOG_C_RECS);
	if (pt_log_unchunk(w->chunk_buf, len, nev, 0, &olen, NULL)) { /* (changed since: its writer's) */
		w->sum->failed = 1;
		return;
	}
	uint64_t nidx = w->sum->nidx;
	pt_logw_sum_block(w, w->chunk_buf + PT_LOG_C_AT, olen - PT_LOG_C_AT, nev, base);
	if (w->sum->nidx > nidx) /* (its length in the file) */
		w->sum->idx[nidx].len = len;
}

#ifdef PT_TSAN
/* A chunk's records are read where they lie, in the stream's memory,
 * which a traced process may be writing meanwhile (a hostile one:
 * tests/hostile does it from a thread of its own): by the kernel's copy
 * into the log, the walk and the checksum.  Whatever it wrote is found
 * (the walk's checks; a checksum that does not match what the file got,
 * the log's reader).  ThreadSanitizer reports those plain reads as races
 * with such a thread: it is told to look away from them. */
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#define SHARED_READS_BEGIN() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define SHARED_READS_END() AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define SHARED_READS_BEGIN() ((void)0)
#define SHARED_READS_END() ((void)0)
#endif

int pt_logw_chunk(struct pt_logw *w, struct pt_logw_chunk *c)
{
	static const unsigned char zero[8];
	uint32_t len = PT_LOG_C_RECS + c->len;
	uint64_t padded = PT_LOG_ALIGN8(len), at;
	unsigned char h[PT_LOG_C_RECS];
	const unsigned char *recs = c->recs;
	struct pt_log_chunk_conv cv = { c->btick, c->addr, c->seg, c->mult, c->base, c->nsoff };
	struct pt_log_chunk_end end = { 0, 0, 0, 0, { 0, 0, 0 } };
	int rc;

	c->unnamed = PT_NIDS;
	if (!c->nev || !c->len || c->len % 8u || c->len > pt_logw_chunk_max(w) ||
	    c->nev > c->len / PT_REC_SHORT)
		return 0;
	if (flush(w) || w->err) /* (the block being built first: names in it too) */
		return 0;
	at = w->pos;
	/* the records, from where they lie, after their header's room: the
	 * kernel's copy is the first to read them (another CPU's lines) */
	SHARED_READS_BEGIN();
	rc = pt_logw_put_at(w, at + PT_LOG_C_RECS, recs, c->len, zero, (uint32_t)(padded - len),
	                    NULL, 0);
	SHARED_READS_END();
	if (rc) {
		w->err = rc;
		w->dropped += c->nev;
		return 1;
	}
	/* what a reader will make of them (now in this CPU's cache): a record
	 * it would not take, or a type not named in the log yet, and the
	 * header is not written: the block is not there (the next one goes
	 * to the same place) */
	struct chunk_runs runs = { 0, { { 0 } } };
	SHARED_READS_BEGIN();
	rc = pt_log_chunk_scan(recs, c->len, c->nev, &cv, w->known, w->nameless, keep_run, &runs,
	                       &end);
	SHARED_READS_END();
	if (rc || end.hi >= c->below) {
		if (rc == ENOENT)
			c->unnamed = (uint32_t)end.tick;
		return 0;
	}
	memset(h, 0, sizeof h);
	blk_head(w, h, PT_LOG_BT_CHUNK, 1, len, c->nev, 1, c->base); /* (w->swap is 0) */
	pt_log_put32(h + PT_LOG_BLK + PT_LOG_W_PID, (uint32_t)c->pid, 0);
	pt_log_put64(h + PT_LOG_BLK + PT_LOG_W_THREAD, c->thread, 0);
	pt_log_put64(h + PT_LOG_C_AT + PT_LOG_C_BTICK, c->btick, 0);
	pt_log_put64(h + PT_LOG_C_AT + PT_LOG_C_ADDR, c->addr, 0);
	pt_log_put64(h + PT_LOG_C_AT + PT_LOG_C_SEG, c->seg, 0);
	pt_log_put64(h + PT_LOG_C_AT + PT_LOG_C_MULT, c->mult, 0);
	pt_log_put64(h + PT_LOG_C_AT + PT_LOG_C_NSOFF, (uint64_t)c->nsoff, 0);
	SHARED_READS_BEGIN();
	uint32_t bcrc = pt_log_crc(pt_log_crc(0, h + PT_LOG_BLK, PT_LOG_C_RECS - PT_LOG_BLK), recs,
	                           c->len);
	SHARED_READS_END();
	pt_log_put32(h + PT_LOG_B_BCRC, bcrc, 0);
	pt_log_put32(h + PT_LOG_B_HCRC, pt_log_crc(0, h, PT_LOG_B_HCRC), 0);
	if (c->still && !c->still(c->still_ctx))
		return 0;
	if ((rc = pt_logw_put_at(w, at, h, PT_LOG_C_RECS, NULL, 0, NULL, 0))) {
		w->err = rc;
		w->dropped += c->nev;
		return 1;
	}
	if (w->sum) { /* counted as the events block it stands for */
		w->nw = 1;
		w->wt[0] = (struct pt_logw_who){ c->pid, c->thread };
		if (runs.n <= CHUNK_RUNS)
			pt_logw_sum_runs(w, runs.r, runs.n, len, &end.waits);
		else
			sum_converted(w, h, recs, len, c->nev, c->base);
		blk_reset(w);
	}
	w->pos += padded;
	w->written += padded;
	w->seq++;
	w->lap_new += c->nev;
	note_last(w, end.ns, (struct pt_logw_who){ c->pid, c->thread });
	w->gap_open = 0;
	c->last_ns = end.ns, c->last_tick = end.tick, c->last_addr = end.addr;
	if (w->ckpt_every)
		put_ckpt(w);
	return 1;
}

int pt_logw_sync(struct pt_logw *w)
{
	if (!w->rec || w->finished)
		return EINVAL;
	int rc = flush(w);
	int bg = pt_logw_bg_drain(w); /* (in the file when this returns) */
	return rc ? rc : bg;
}

/* (v5) The SUMMARY blocks, right before the END block: as many as the
 * entries need, each at most a block long; none if they do not all fit
 * (UNTIL_FULL: within the log's size, the END block's room kept). */
static void put_summary(struct pt_logw *w)
{
	uint32_t cap = w->cap - PT_LOG_BLK, nrec, n, parts;
	uint64_t cur, total;

	for (;;) {
		parts = 0, total = 0, cur = 0;
		do { /* how many parts, and their size */
			n = pt_logw_sum_body(w, NULL, cap, &cur, &nrec, 0);
			if (!nrec)
				return; /* an entry larger than a block: cannot happen (min block) */
			parts++;
			total += PT_LOG_ALIGN8(PT_LOG_BLK + n);
		} while (cur != UINT64_MAX);
		if (w->sum->failed)
			return; /* (a spilled entry could not be read back) */
		if (parts <= PT_LOG_S_PARTS_MAX &&
		    (w->policy != POSIX_TRACE_UNTIL_FULL || w->pos + total <= w->limit))
			break;
		if (w->version < 7 || w->sum->no_index)
			return;
		w->sum->no_index = 1; /* (v7) no room for the block index: without it */
	}
	cur = 0;
	do {
		n = pt_logw_sum_body(w, w->rec, cap, &cur, &nrec, parts);
		if (w->sum->failed || put_block(w, PT_LOG_BT_SUMMARY, w->rec, n, nrec, 0)) {
			/* (no event is lost, and the failed block is not in the
			 * log: it goes without a summary, which is not an error;
			 * parts already written are stale, the END block goes
			 * where this one failed) */
			w->err = 0;
			return;
		}
	} while (cur != UINT64_MAX);
}

int pt_logw_finish(struct pt_logw *w, const struct posix_trace_status_info *st)
{
	unsigned char b[PT_LOG_END_BODY] = { 0 };
	const struct posix_trace_status_info zst = { 0 };
	struct posix_trace_status_info fin;
	int werr = 0;

	if (!w->rec || w->finished)
		return EINVAL;
	fin = st ? *st : zst;
	st = &fin;
	keep_err(&werr, flush(w));
	if (w->policy == POSIX_TRACE_LOOP &&
	    w->pos + PT_LOG_ALIGN8(PT_LOG_END_LEN) > w->limit) {
		wrap(w);
		if (w->names_due) {
			emit_names(w, &werr);
			keep_err(&werr, flush(w));
		}
		if (w->pos + PT_LOG_ALIGN8(PT_LOG_END_LEN) > w->limit)
			wrap(w);
	}
	/* (a summary that reads spilled checkpoints back reads them written) */
	if (w->sum && w->sum->nsp)
		keep_err(&werr, pt_logw_bg_drain(w));
	if (w->sum && !w->sum->failed && !w->err && w->policy != POSIX_TRACE_LOOP)
		put_summary(w);
	if (w->policy == POSIX_TRACE_LOOP) {
		/* the blocks this END block overwrites count in the count it
		 * carries (put_block would drop them only after it is made) */
		const struct pt_logw_live *f;
		while ((f = live_front(w)) && f->off >= w->pos &&
		       f->off < w->pos + PT_LOG_ALIGN8(PT_LOG_END_LEN))
			live_pop(w);
	}
	if (w->lost) /* blocks overwritten, maybe by this very END block */
		fin.posix_log_overrun_status = POSIX_TRACE_OVERRUN;
	pt_log_put32(b + PT_LOG_E_STREAM_STATUS, (uint32_t)st->posix_stream_status, w->swap);
	pt_log_put32(b + PT_LOG_E_STREAM_FULL, (uint32_t)st->posix_stream_full_status, w->swap);
	pt_log_put32(b + PT_LOG_E_STREAM_OVERRUN, (uint32_t)st->posix_stream_overrun_status, w->swap);
	pt_log_put32(b + PT_LOG_E_FLUSH_STATUS, (uint32_t)st->posix_stream_flush_status, w->swap);
	pt_log_put32(b + PT_LOG_E_FLUSH_ERROR, (uint32_t)st->posix_stream_flush_error, w->swap);
	pt_log_put32(b + PT_LOG_E_LOG_OVERRUN, (uint32_t)st->posix_log_overrun_status, w->swap);
	pt_log_put32(b + PT_LOG_E_LOG_FULL, (uint32_t)st->posix_log_full_status, w->swap);
	pt_log_put64(b + PT_LOG_E_LOST, w->lost, w->swap);
	pt_log_put64(b + PT_LOG_E_DROPPED, w->dropped, w->swap);
	pt_log_put64(b + PT_LOG_E_STREAM_LOST, w->stream_lost, w->swap);
	keep_err(&werr, put_block(w, PT_LOG_BT_END, b, sizeof b, 0, 0));
	keep_err(&werr, pt_logw_bg_stop(w)); /* (all written now) */
	pt_logw_ahead_end(w);
	w->finished = 1;
	return werr;
}
