/*
 * logiter.c -- trace log reader, reading: events in order, one block in
 * memory at a time; each block is read and checked again when reached,
 * as the file may have changed since it was opened (or, opened through
 * the block index, was never read before).
 */
#include <errno.h>
#include "logfmt.h"

static void put_ts(struct timespec *t, uint64_t ns)
{
	t->tv_sec = (time_t)(ns / 1000000000u);
	t->tv_nsec = (long)(ns % 1000000000u);
}

/* Payload out, truncated to the caller's buffer as getnext_event says. */
static void put_data(struct pt_logr *r, struct posix_trace_event_info *ev, void *buf,
                     size_t cap, size_t *len, const void *data, size_t n, int recorded_trunc)
{
	size_t k = n < cap ? n : cap;

	if (k)
		memcpy(buf, data, k);
	*len = k;
	r->full_len = n;
	ev->posix_truncation_status = k < n ? POSIX_TRACE_TRUNCATED_READ
	                            : recorded_trunc ? POSIX_TRACE_TRUNCATED_RECORD
	                            : POSIX_TRACE_NOT_TRUNCATED;
}

static void put_error(struct pt_logr *r, struct posix_trace_event_info *ev, void *buf,
                      size_t cap, size_t *len, uint64_t ts, int code)
{
	memset(ev, 0, sizeof *ev);
	r->last_lost_ok = 0;
	ev->posix_event_id = POSIX_TRACE_ERROR;
	put_ts(&ev->posix_timestamp, ts);
	put_data(r, ev, buf, cap, len, &code, sizeof code, 0);
}

/* Reads and checks the block of item it into r->buf. */
static int load(struct pt_logr *r, const struct pt_logr_item *it)
{
	struct pt_log_bhdr b;
	uint64_t first, last;
	uint32_t nev;
	int rc;

	if (it->len > r->buf_cap || it->len < PT_LOG_BLK)
		return EBADMSG;
	if ((rc = pt_logr_rd(r, it->off, r->buf, it->len)))
		return rc;
	if (!pt_logr_bhdr(r, r->buf, &b) || b.seq != it->seq || b.len != it->len ||
	    b.type != PT_LOG_BT_EVENTS || pt_logr_check(r, r->buf, &b, 0, &first, &last, &nev))
		return EBADMSG;
	/* (opened through the index) the block is what its entry says */
	if (r->indexed && ((nev != 0) != it->has_ev || it->has_lost != r->chk_lost ||
	                   (nev && (first != it->ts || last != it->last_ts ||
	                            r->chk_max_ts != it->max_ts || r->chk_min_ts != it->min_ts))))
		return EBADMSG;
	r->nw = b.nw;
	r->base_ts = b.base;
	r->rleft = b.nrec;
	r->roff = PT_LOG_BLK + b.nw * PT_LOG_WENT;
	r->where = 0;
	r->loaded = 1;
	return 0;
}

/* A wrapped log's oldest record kept may be the RESUME of a gap whose
 * OVERFLOW was in the block before, overwritten: that gap is part of the
 * wrap's, whose RESUME takes its place and its count.  1 (the record
 * passed, its count in *lost) if so; else nothing moves but the records
 * of names and objects before it (pt_logr_next() passes them too), and a
 * block that does not load is left for pt_logr_next() to tell. */
static int orphan_resume(struct pt_logr *r, uint64_t *lost)
{
	int sw = r->swap;

	while (r->cur < r->nitems && r->cur < r->stop && !r->items[r->cur].error) {
		if (!r->loaded && load(r, &r->items[r->cur]))
			return 0;
		if (!r->rleft) {
			r->loaded = 0;
			r->cur++;
			continue;
		}
		const unsigned char *p = r->buf + r->roff;
		uint32_t n = pt_log_get16(p + PT_LOG_R_LEN, sw);
		unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		uint32_t hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
		int names = (info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ)) != 0;
		if (!names && ((info & PT_LOG_ID_MASK) != POSIX_TRACE_RESUME || !(info & PT_LOG_RF_LOST)))
			return 0;
		r->roff += hl + n;
		r->rleft--;
		if (names)
			continue;
		if (hl == PT_LOG_REC) /* (the writer a short record after it has) */
			r->where = pt_log_get64(p + PT_LOG_R_WHERE, sw);
		*lost = pt_log_get64(p + hl, sw); /* (checked: 8 bytes) */
		return 1;
	}
	return 0;
}

/* A LOOP log that wrapped lost its oldest blocks: an OVERFLOW/RESUME pair
 * before the oldest event kept tells it, as a stream tells its losses.
 * The first lost event's time is not in the log any more: both take the
 * oldest kept event's, the latest bound that keeps the order.  The RESUME
 * carries the count overwritten (r->lost) when the END block says it; a
 * log never finished does not know it (r->last_lost_ok 0). */
static int put_wrap(struct pt_logr *r, struct posix_trace_event_info *ev, size_t *len)
{
	if (r->wrap_state >= 2)
		return 0;
	if (!r->nitems) { /* nothing kept: nothing to put it before */
		r->wrap_state = 2;
		return 0;
	}
	memset(ev, 0, sizeof *ev);
	ev->posix_event_id = r->wrap_state ? POSIX_TRACE_RESUME : POSIX_TRACE_OVERFLOW;
	ev->posix_truncation_status = POSIX_TRACE_NOT_TRUNCATED;
	put_ts(&ev->posix_timestamp, r->items[0].ts);
	*len = 0;
	r->full_len = 0;
	r->last_lost_ok = 0;
	if (r->wrap_state++) {
		/* the stream's count before the oldest event kept is not in
		 * the log: 0, so the first gap kept counts the gaps
		 * overwritten too; or, when no gap is kept, all of them
		 * (they were all told before it); or the count of a RESUME
		 * kept whose OVERFLOW was not, which this one stands for */
		uint64_t lost;
		int orphan = orphan_resume(r, &lost);
		r->last_lost_ok = r->has_status || orphan;
		r->last_lost = orphan ? lost : r->lost_kept || !r->has_stream_lost ? 0 : r->stream_lost;
		r->wrap_told = r->has_status ? r->lost : 0;
	}
	return 1;
}

/* The block of the current item did not load (rc): one error event for
 * it (and, opened through the index, for the damaged stretch it starts,
 * as a scan at open has it: at the time of the last event before it, or
 * the first after it at the start of the log). */
static void damaged(struct pt_logr *r, int rc, struct posix_trace_event_info *ev, void *buf,
                    size_t cap, size_t *len)
{
	uint64_t ts = r->items[r->cur].ts;
	size_t first = r->cur++;

	if (r->indexed) {
		while (r->cur < r->nitems && r->cur < r->stop && load(r, &r->items[r->cur]))
			r->cur++;
		ts = first ? r->items[first - 1].last_ts
		   : r->cur < r->nitems ? r->items[r->cur].ts : 0;
	}
	put_error(r, ev, buf, cap, len, ts, rc);
}

int pt_logr_next(struct pt_logr *r, struct posix_trace_event_info *ev, void *buf,
                 size_t cap, size_t *len, int *unavailable)
{
	int sw = r->swap;

	if (!r->buf || !ev || !len || !unavailable || (cap && !buf))
		return EINVAL;
	if (put_wrap(r, ev, len)) {
		*unavailable = 0;
		return 0;
	}
	for (;;) {
		const struct pt_logr_item *it;
		const unsigned char *p, *w;
		unsigned char v[4];
		unsigned info, wi;
		uint32_t n, hl;
		uint64_t where;
		int rc;

		if (r->cur >= r->nitems || r->cur >= r->stop) {
			*unavailable = 1;
			*len = 0;
			return 0;
		}
		it = &r->items[r->cur];
		*unavailable = 0;
		if (it->error) {
			r->cur++;
			put_error(r, ev, buf, cap, len, it->ts, (int)it->error);
			return 0;
		}
		if (!r->loaded && (rc = load(r, it))) {
			damaged(r, rc, ev, buf, cap, len);
			return 0;
		}
		if (!r->rleft) {
			r->loaded = 0;
			r->cur++;
			continue;
		}
		/* a record of a checked block */
		p = r->buf + r->roff;
		n = pt_log_get16(p + PT_LOG_R_LEN, sw);
		info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		/* (checked: a short record follows an event record) */
		hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
		r->roff += hl + n;
		r->rleft--;
		if (info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ))
			continue;
		where = hl == PT_LOG_REC ? pt_log_get64(p + PT_LOG_R_WHERE, sw) : r->where;
		r->where = where;
		wi = (unsigned)(where >> 48);
		w = r->buf + PT_LOG_BLK + wi * PT_LOG_WENT;
		ev->posix_event_id = info & PT_LOG_ID_MASK;
		ev->posix_pid = (pid_t)(int32_t)pt_log_get32(w, sw);
		ev->posix_thread_id = (pthread_t)pt_log_get64(w + 8, sw);
		ev->posix_prog_address = (void *)(uintptr_t)(where & PT_MASK48);
		put_ts(&ev->posix_timestamp, r->base_ts + pt_log_get32(p + PT_LOG_R_DELTA, sw));
		p += hl;
		r->last_lost_ok = (info & PT_LOG_RF_LOST) != 0;
		if (r->last_lost_ok) { /* n == 8, checked: the count, not data */
			r->last_lost = pt_log_get64(p, sw);
			n = 0;
		} else if ((info & PT_LOG_RF_INT) && sw) { /* n == 4, checked */
			v[0] = p[3], v[1] = p[2], v[2] = p[1], v[3] = p[0];
			p = v;
		}
		put_data(r, ev, buf, cap, len, p, n, (info & PT_LOG_RF_TRUNC) != 0);
		return 0;
	}
}

/* The records of the loaded block from r->roff on, as pt_logr_next()
 * takes them (the block was checked whole when loaded: lengths, writer
 * indexes and LOST payloads are sound), into b. */
static void batch_block(struct pt_logr *r, struct pt_ext_batch *b)
{
	const int sw = r->swap;
	const unsigned char *buf = r->buf;
	uint32_t roff = r->roff, rleft = r->rleft;
	uint64_t where = r->where, base = r->base_ts;
	size_t n = 0;

	b->nw = r->nw;
	for (uint32_t i = 0; i < r->nw; i++) {
		const unsigned char *w = buf + PT_LOG_BLK + i * PT_LOG_WENT;
		b->w[i].pid = (int32_t)pt_log_get32(w, sw);
		b->w[i].pad = 0;
		b->w[i].thread = pt_log_get64(w + 8, sw);
	}
	while (rleft && n < PT_EXT_BATCH) {
		const unsigned char *p = buf + roff;
		uint32_t len = pt_log_get16(p + PT_LOG_R_LEN, sw);
		unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		uint32_t hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
		roff += hl + len;
		rleft--;
		if (info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ))
			continue;
		if (hl == PT_LOG_REC)
			where = pt_log_get64(p + PT_LOG_R_WHERE, sw);
		struct pt_ext_bevent *e = &b->ev[n++];
		e->ts = base + pt_log_get32(p + PT_LOG_R_DELTA, sw);
		e->id = (uint16_t)(info & PT_LOG_ID_MASK);
		e->w = (uint16_t)(where >> 48);
		e->flags = e->pad = 0;
		e->word = 0;
		r->last_lost_ok = (info & PT_LOG_RF_LOST) != 0;
		if (r->last_lost_ok) { /* (the count, not data) the batch ends here */
			r->last_lost = pt_log_get64(p + hl, sw);
			e->flags = PT_EXT_BEV_LOST;
			break;
		}
		if (len == 4) { /* as pt_logr_next() copies it: an INT in this host's order */
			uint32_t v = (info & PT_LOG_RF_INT) ? pt_log_get32(p + hl, sw)
			                                    : pt_log_get32(p + hl, 0);
			e->flags = PT_EXT_BEV_WORD;
			memcpy(&e->word, &v, 4);
		}
	}
	b->n = n;
	r->roff = roff;
	r->rleft = rleft;
	r->where = where;
	r->full_len = 0;
}

int pt_logr_next_batch(struct pt_logr *r, struct pt_ext_batch *b)
{
	struct posix_trace_event_info ev;
	unsigned char data[4];
	size_t len;
	int unavailable = 0, rc;

	if (!r->buf || !b)
		return EINVAL;
	b->n = b->nw = 0;
	while (r->wrap_state >= 2 && r->cur < r->nitems && r->cur < r->stop &&
	       !r->items[r->cur].error) {
		if (!r->loaded && (rc = load(r, &r->items[r->cur]))) {
			damaged(r, rc, &ev, data, sizeof data, &len);
			goto one;
		}
		if (r->rleft) {
			batch_block(r, b);
			if (!r->rleft) { /* (the next call starts at the next block) */
				r->loaded = 0;
				r->cur++;
			}
			if (b->n)
				return 0;
			continue; /* a block of names or map entries only */
		}
		r->loaded = 0;
		r->cur++;
	}
	/* the end, or an event the reader makes: as pt_logr_next() */
	if ((rc = pt_logr_next(r, &ev, data, sizeof data, &len, &unavailable)) != 0 || unavailable)
		return rc;
one:
	b->nw = 1;
	b->w[0] = (struct pt_ext_bwriter){ (int32_t)ev.posix_pid, 0, (uint64_t)ev.posix_thread_id };
	struct pt_ext_bevent *e = &b->ev[0];
	memset(e, 0, sizeof *e);
	e->ts = (uint64_t)ev.posix_timestamp.tv_sec * 1000000000u + (uint64_t)ev.posix_timestamp.tv_nsec;
	e->id = (uint16_t)ev.posix_event_id;
	e->flags = r->last_lost_ok ? PT_EXT_BEV_LOST
	         : r->full_len == 4 ? PT_EXT_BEV_WORD : 0;
	if (e->flags == PT_EXT_BEV_WORD)
		memcpy(&e->word, data, 4);
	b->n = 1;
	return 0;
}

void pt_logr_rewind(struct pt_logr *r)
{
	r->cur = 0;
	r->last_lost_ok = 0;
	r->loaded = 0;
	r->wrap_state = r->wrapped ? 0 : 2;
	r->wrap_told = 0;
}

/* The loss count of the last LOST record of the block of item it, if it
 * has one (*found). */
static int last_lost_in(struct pt_logr *r, const struct pt_logr_item *it, uint64_t *lost,
                        int *found)
{
	int rc, sw = r->swap;

	*found = 0;
	if ((rc = load(r, it)) != 0)
		return rc;
	for (; r->rleft; r->rleft--) {
		const unsigned char *p = r->buf + r->roff;
		uint32_t n = pt_log_get16(p + PT_LOG_R_LEN, sw);
		unsigned info = pt_log_get16(p + PT_LOG_R_INFO, sw);
		uint32_t hl = info & PT_LOG_RF_SHORT ? PT_LOG_REC_SHORT : PT_LOG_REC;
		if (info & PT_LOG_RF_LOST) { /* (checked: 8 bytes) */
			*lost = pt_log_get64(p + hl, sw);
			*found = 1;
		}
		r->roff += hl + n;
	}
	r->loaded = 0;
	return 0;
}

int pt_logr_seek(struct pt_logr *r, uint64_t ts, uint64_t *lost_before)
{
	size_t i;
	int found = 0, rc = 0;

	*lost_before = 0;
	for (i = 0; i < r->nitems; i++) /* the first block that may hold ts or later */
		if ((r->items[i].error ? r->items[i].ts : r->items[i].max_ts) >= ts)
			break;
	for (size_t k = i; k-- > 0 && !found;) /* the count of the last gap before it */
		if (!r->items[k].error && r->items[k].has_lost &&
		    (rc = last_lost_in(r, &r->items[k], lost_before, &found)) != 0)
			break;
	r->cur = i;
	r->loaded = 0;
	r->last_lost_ok = 0;
	/* a wrapped log: the pair before its oldest event comes again from
	 * the start; from further on, it was passed (its count in the count
	 * before, as a reader from the start would have it) */
	r->wrap_state = r->wrapped && i == 0 ? 0 : 2;
	r->wrap_told = r->wrapped && i > 0 && r->has_status ? r->lost : 0;
	if (r->wrapped && i > 0 && !found)
		*lost_before = r->lost_kept || !r->has_stream_lost ? 0 : r->stream_lost;
	*lost_before += r->wrap_told;
	return rc;
}

void pt_logr_stop_after(struct pt_logr *r, uint64_t ts)
{
	size_t k = r->nitems;

	/* past the last item that may hold an event at or before ts: an
	 * error item (its time is a neighbour's) at or before it, or a block
	 * whose smallest timestamp is */
	for (; ts != UINT64_MAX && k > 0; k--) {
		const struct pt_logr_item *it = &r->items[k - 1];
		if (it->error ? it->ts <= ts : (it->has_ev || !r->indexed) && it->min_ts <= ts)
			break;
	}
	r->stop = k;
}

const struct pt_attr_img *pt_logr_attr(const struct pt_logr *r)
{
	return &r->attr;
}

int pt_logr_status(const struct pt_logr *r, struct posix_trace_status_info *st)
{
	if (!r->has_status)
		return ENOENT;
	*st = r->status;
	return 0;
}

const char *pt_logr_name(const struct pt_logr *r, unsigned id)
{
	if (!r->names || id >= PT_NIDS || !(r->known[id / 64] >> (id % 64) & 1))
		return NULL;
	return r->names[id];
}

int pt_logr_next_id(const struct pt_logr *r, unsigned from)
{
	for (unsigned id = from; r->names && id < PT_NIDS; id++)
		if (r->known[id / 64] >> (id % 64) & 1)
			return (int)id;
	return -1;
}
