/*
 * logchunk.c -- a CHUNK block (format 9): a stream's chunk as the stream
 * held it (docs/log-format.md, "CHUNK block").  Readers make of it, where
 * it lies, the events block it stands for when they load it, so that
 * everything above reads one kind of block; the writer, which never
 * rewrites the records, walks them as they are, to check that a reader
 * will take them and to count them for the summary.  Both go through the
 * same decoding of a record, so what the writer counted is what readers
 * read.
 *
 * In place: a chunk's record never takes less room than the log's (its
 * payload is padded to 8 bytes, its header 8 or 16 bytes), and the
 * records begin PT_LOG_CHUNK_HDR bytes later than an events block's: the
 * log records are written over the chunk's, always behind the next one to
 * read (at least 32 bytes: the first record may need a long header where
 * the chunk had a short one).
 */
#include <errno.h>
#include "logpriv.h"

void pt_log_chunk_conv_get(const unsigned char *p, int sw, struct pt_log_chunk_conv *cv)
{
	const unsigned char *h = p + PT_LOG_C_AT;

	cv->btick = pt_log_get64(h + PT_LOG_C_BTICK, sw);
	cv->addr = pt_log_get64(h + PT_LOG_C_ADDR, sw);
	cv->seg = pt_log_get64(h + PT_LOG_C_SEG, sw);
	cv->mult = pt_log_get64(h + PT_LOG_C_MULT, sw);
	cv->nsoff = (int64_t)pt_log_get64(h + PT_LOG_C_NSOFF, sw);
	cv->base = pt_log_get64(p + PT_LOG_B_BASE, sw);
}

/* a type CHUNK blocks hold: an application's, or the wait a no-loss
 * stream's writer records itself (a controller's system events, and the
 * losses a reader tells, go into events blocks) */
static int chunk_type(uint32_t id)
{
	return (id >= PT_SYS_IDS || id == PT_SYS_NOLOSS_WAIT) && id < PT_NIDS && id <= PT_LOG_ID_MASK;
}

/* The time of tick, as the block says, if a log record can hold it: 0
 * (*ns) or EBADMSG (before the segment, an overflow, before the base or
 * 2^32 ns after it).  Ticks to times never step back, so the first and
 * the last of a run stand for all of it. */
static int chunk_ns(const struct pt_log_chunk_conv *cv, uint64_t tick, uint64_t *ns)
{
	int64_t v;

	if (tick < cv->seg)
		return EBADMSG;
	unsigned __int128 d = (unsigned __int128)(tick - cv->seg) * cv->mult >> 32;
	if (d > (unsigned __int128)INT64_MAX || __builtin_add_overflow(cv->nsoff, (int64_t)d, &v) ||
	    v < 0 || (uint64_t)v < cv->base || (uint64_t)v - cv->base > UINT32_MAX)
		return EBADMSG;
	*ns = (uint64_t)v;
	return 0;
}

/* One record at p (left bytes to the end of the records): its w0, size,
 * tick, and caller (*addr: the one before it, then its own).  0 or
 * EBADMSG. */
static inline int chunk_rec(const unsigned char *p, uint32_t left, int sw, uint64_t btick,
                            uint64_t *w0, uint32_t *size, uint64_t *tick, uint64_t *addr)
{
	uint64_t w1 = 0;

	if (left < PT_REC_SHORT)
		return EBADMSG;
	*w0 = pt_log_get64(p, sw);
	uint32_t fl = PT_REC_FLAGS(*w0), n = PT_REC_LEN(*w0);
	*size = PT_REC_BYTES(n, fl & PT_RF_WIDE);
	if (!chunk_type(PT_REC_ID(*w0)) || (fl & ~(PT_RF_TRUNC | PT_RF_WIDE)) || *size > left)
		return EBADMSG;
	if (fl & PT_RF_WIDE) {
		w1 = pt_log_get64(p + 8u * PT_REC_W1(n), sw);
		*addr = w1 & PT_MASK48;
	}
	*tick = pt_rec_tick(btick, *w0, w1);
	return 0;
}

/* n bytes of payload from src back to dst, in words: dst is at least 16
 * bytes before src (the lead, less a long header), so each word written
 * lands on bytes read already, and the words read stay in the record
 * (padded to 8) */
static inline void copy_back(unsigned char *dst, const unsigned char *src, uint32_t n)
{
	for (uint32_t k = 0; k < n; k += 8) {
		uint64_t v;
		memcpy(&v, src + k, 8);
		memcpy(dst + k, &v, 8);
	}
}

static int named_ok(const uint64_t *named, const uint64_t *also, uint32_t id)
{
	return !named || ((named[id / 64] | also[id / 64]) >> (id % 64) & 1);
}

/* the time of a tick checked already (the least and most of the block:
 * times never step back) */
static uint64_t chunk_ns_ok(const struct pt_log_chunk_conv *cv, uint64_t tick)
{
	return (uint64_t)cv->nsoff +
	       (uint64_t)((unsigned __int128)(tick - cv->seg) * cv->mult >> 32);
}

/* (want: *u is filled; a constant, so that the writer's copy, which needs
 * no *u, does no more than before) */
static inline __attribute__((always_inline)) int
unchunk(unsigned char *p, uint32_t len, uint32_t nrec, int sw, uint32_t *olen,
        struct pt_log_unchunked *u, const int want)
{
	struct pt_log_chunk_conv cv;
	uint32_t in = PT_LOG_C_RECS, out = PT_LOG_C_AT;
	struct pt_log_prev prev = { 0, 0, 0 };
	uint64_t glo = UINT64_MAX, ghi = 0, ns, first = 0, last = 0;
	int back = 0; /* a time before the one before it */
	/* two shapes of short record seen last (w0 >> 32, checked: types taking
	 * turns), their size and their log header's info */
	uint32_t hk[2] = { 0, 0 }, hsize[2] = { 0, 0 };
	uint64_t hinfo[2] = { 0, 0 };
	int hok[2] = { 0, 0 };

	if (len < PT_LOG_C_RECS || (len - PT_LOG_C_RECS) % 8u || !nrec)
		return EBADMSG;
	pt_log_chunk_conv_get(p, sw, &cv);
	uint64_t addr = cv.addr;
	if (addr > PT_MASK48)
		return EBADMSG;
	/* (each time is checked once the least and most tick are known: an
	 * unchecked one only makes bytes that are then thrown away) */
	for (uint32_t i = 0; i < nrec; i++) {
		uint64_t w0, tick;
		uint32_t size;
		if (hok[0] && len - in >= PT_REC_SHORT) { /* a shape seen: short, the quick way */
			memcpy(&w0, p + in, 8);
			uint32_t k = (uint32_t)(w0 >> 32);
			int j = k == hk[0] ? 0 : hok[1] && k == hk[1] ? 1 : -1;
			if (j >= 0 && hsize[j] <= len - in) {
				tick = pt_rec_tick_short(cv.btick, w0);
				glo = tick < glo ? tick : glo, ghi = tick > ghi ? tick : ghi;
				uint32_t n = PT_REC_LEN(w0);
				ns = chunk_ns_ok(&cv, tick);
				if (want) {
					back |= ns < last;
					last = ns;
				}
				uint64_t h = (uint64_t)(uint32_t)(ns - cv.base) |
				             (uint64_t)n << (8 * PT_LOG_R_LEN) | hinfo[j];
				memcpy(p + out, &h, 8);
				copy_back(p + out + PT_LOG_REC_SHORT, p + in + PT_REC_SHORT, n);
				out += PT_LOG_REC_SHORT + n;
				in += hsize[j];
				continue;
			}
		}
		if (chunk_rec(p + in, len - in, sw, cv.btick, &w0, &size, &tick, &addr))
			return EBADMSG;
		glo = tick < glo ? tick : glo, ghi = tick > ghi ? tick : ghi;
		uint32_t n = PT_REC_LEN(w0);
		unsigned info = PT_REC_ID(w0) | (PT_REC_FLAGS(w0) & PT_RF_TRUNC ? PT_LOG_RF_TRUNC : 0);
		ns = chunk_ns_ok(&cv, tick);
		if (want) {
			if (!i) /* (the first always comes this way: no shape seen yet) */
				first = last = ns;
			back |= ns < last;
			last = ns;
		}
		uint32_t hl = pt_log_put_rec(p + out, (uint32_t)(ns - cv.base), n, info, addr, sw,
		                             &prev);
		copy_back(p + out + hl, p + in + PT_REC_SHORT, n);
		out += hl + n;
		in += size;
		/* the next, if the same shape (short): an 8-byte header of this
		 * info, the quick way (this machine's order only) */
		if (!sw && !PT_REC_WIDE(w0) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
			hk[1] = hk[0], hsize[1] = hsize[0], hinfo[1] = hinfo[0], hok[1] = hok[0];
			hk[0] = (uint32_t)(w0 >> 32), hsize[0] = size, hok[0] = 1;
			hinfo[0] = (uint64_t)(info | PT_LOG_RF_SHORT) << (8 * PT_LOG_R_INFO);
		}
	}
	uint64_t lo, hi;
	if (in != len || chunk_ns(&cv, glo, &lo) || chunk_ns(&cv, ghi, &hi))
		return EBADMSG;
	if (want) { /* (ticks to times never step back: the least and most
	             * tick's times are the least and most time) */
		u->min = lo, u->max = hi;
		u->first = first, u->last = last, u->sorted = !back;
	}
	*olen = out;
	return 0;
}

int pt_log_unchunk(unsigned char *p, uint32_t len, uint32_t nrec, int sw, uint32_t *olen,
                   struct pt_log_unchunked *u)
{
	return u ? unchunk(p, len, nrec, sw, olen, u, 1) : unchunk(p, len, nrec, sw, olen, NULL, 0);
}

/* (v10) A no-loss wait at rec (w0 its first word, checked) added to *wt,
 * as a reader's pass adds it up: its payload, if 8 bytes.  Such a record
 * never goes the quick way, which reads no payload. */
static inline void scan_wait(const unsigned char *rec, uint64_t w0, struct pt_log_waits *wt)
{
	uint64_t v;

	if (PT_REC_ID(w0) != PT_SYS_NOLOSS_WAIT || PT_REC_LEN(w0) != 8)
		return;
	memcpy(&v, rec + PT_REC_SHORT, 8);
	pt_log_waits_add(wt, 1, v, v);
}

/* What pt_log_chunk_scan() knows at a record: where it is, the caller
 * before it, the least and most tick so far, the last one; the waits. */
struct scan_at { uint32_t i, in; uint64_t addr, glo, ghi, last; struct pt_log_waits waits; };

/* The records from x on, checked only, once no run is wanted: two shapes
 * of short record (w0's upper half, checked once: types taking turns) go
 * the quick way.  0, EBADMSG or ENOENT (*unnamed). */
static int scan_rest(const unsigned char *recs, uint32_t len, uint32_t nrec,
                     const struct pt_log_chunk_conv *cv, const uint64_t *named,
                     const uint64_t *also, struct scan_at *x, uint64_t *unnamed)
{
	/* (no shape seen yet: one no checked record has, all flags set, and a
	 * size no record fits in) */
	uint32_t k[2] = { UINT32_MAX, UINT32_MAX }, sz[2] = { UINT32_MAX, UINT32_MAX }, in = x->in;
	uint64_t glo = x->glo, ghi = x->ghi, tick = x->last, addr = x->addr;

	for (uint32_t i = x->i; i < nrec; i++) {
		uint64_t w0;
		uint32_t size;
		if (len - in >= PT_REC_SHORT) {
			memcpy(&w0, recs + in, 8);
			uint32_t hk = (uint32_t)(w0 >> 32);
			int j = hk == k[0] ? 0 : hk == k[1] ? 1 : -1;
			if (j >= 0 && sz[j] <= len - in) {
				tick = pt_rec_tick_short(cv->btick, w0);
				glo = tick < glo ? tick : glo, ghi = tick > ghi ? tick : ghi;
				in += sz[j];
				continue;
			}
		}
		if (chunk_rec(recs + in, len - in, 0, cv->btick, &w0, &size, &tick, &addr))
			return EBADMSG;
		if (!named_ok(named, also, PT_REC_ID(w0))) {
			*unnamed = PT_REC_ID(w0);
			return ENOENT;
		}
		scan_wait(recs + in, w0, &x->waits);
		in += size;
		glo = tick < glo ? tick : glo, ghi = tick > ghi ? tick : ghi;
		/* (the newest shape replaces the older; a wait's never: its
		 * payload is read) */
		if (!PT_REC_WIDE(w0) && PT_REC_ID(w0) != PT_SYS_NOLOSS_WAIT) {
			k[1] = k[0], sz[1] = sz[0];
			k[0] = (uint32_t)(w0 >> 32), sz[0] = size;
		}
	}
	x->in = in, x->addr = addr, x->glo = glo, x->ghi = ghi, x->last = tick;
	return 0;
}

int pt_log_chunk_scan(const unsigned char *recs, uint32_t len, uint32_t nrec,
                      const struct pt_log_chunk_conv *cv, const uint64_t *named,
                      const uint64_t *also, int (*run)(void *ctx, const struct pt_logw_pre *r),
                      void *ctx, struct pt_log_chunk_end *end)
{
	/* the run being walked: its type, count, first, last, least and most
	 * tick; the runs before it, told when they end (while run wants them) */
	uint64_t addr = cv->addr, key = 0, count = 0, t0 = 0, t1 = 0, lo = 0, hi = 0;
	uint64_t glo = UINT64_MAX, ghi = 0; /* every record's least and most tick */
	uint32_t in = 0, hk = 0, hsize = 0; /* a short record's w0 >> 32 in the run, its size */
	int hok = 0;                        /* (hk is such a record's, checked) */
	uint64_t ns;
	/* (the waits in memory, not registers: the quick way's loop keeps its
	 * own there) */
	struct pt_log_waits *wt = &end->waits;

	*wt = (struct pt_log_waits){ 0, 0, 0 };
	if (len % 8u || !nrec || addr > PT_MASK48)
		return EBADMSG;
	for (uint32_t i = 0; i < nrec; i++) {
		uint64_t w0, tick;
		uint32_t size;
		if (hok) { /* the run's short records, the quick way: a loop of its
			    * own, whose few values stay in registers (hsize >= 8) */
			uint64_t b = cv->btick, l = lo, h = hi, last = t1;
			uint32_t at = in, k = i, fit = (len - in) / hsize; /* (records of hsize left) */
			uint32_t kend = nrec - i < fit ? nrec : i + fit;
			while (k < kend) {
				memcpy(&w0, recs + at, 8);
				if ((uint32_t)(w0 >> 32) != hk)
					break;
				last = pt_rec_tick_short(b, w0);
				l = last < l ? last : l, h = last > h ? last : h;
				at += hsize, k++;
			}
			count += k - i, lo = l, hi = h, t1 = last, in = at, i = k;
			if (i == nrec)
				break;
		}
		if (chunk_rec(recs + in, len - in, 0, cv->btick, &w0, &size, &tick, &addr))
			return EBADMSG;
		scan_wait(recs + in, w0, wt);
		in += size;
		uint32_t id = PT_REC_ID(w0);
		hk = (uint32_t)(w0 >> 32), hsize = size;
		hok = !PT_REC_WIDE(w0) && id != PT_SYS_NOLOSS_WAIT;
		if (count && id == (uint32_t)key) { /* (the run goes on) */
			lo = tick < lo ? tick : lo, hi = tick > hi ? tick : hi, t1 = tick;
			count++;
			continue;
		}
		if (!named_ok(named, also, id)) {
			end->tick = id;
			return ENOENT; /* (the writer: its name is not in the log yet) */
		}
		if (count) { /* the run before it ends */
			glo = lo < glo ? lo : glo, ghi = hi > ghi ? hi : ghi;
			struct pt_logw_pre r = { 0, 0, 0, (uint32_t)key, count, chunk_ns_ok(cv, t0),
			                         chunk_ns_ok(cv, t1), chunk_ns_ok(cv, lo),
			                         chunk_ns_ok(cv, hi) };
			if (!run || !run(ctx, &r)) { /* no more runs wanted: checked only */
				struct scan_at x = { i + 1, in, addr, tick < glo ? tick : glo,
				                     tick > ghi ? tick : ghi, tick, *wt };
				int rc = scan_rest(recs, len, nrec, cv, named, also, &x, &end->tick);
				if (rc || x.in != len || chunk_ns(cv, x.glo, &ns) || chunk_ns(cv, x.ghi, &ns))
					return rc ? rc : EBADMSG;
				*end = (struct pt_log_chunk_end){ chunk_ns_ok(cv, x.last), x.last, x.addr,
				                                  x.ghi, x.waits };
				return 0;
			}
		}
		key = id, lo = hi = t0 = t1 = tick, count = 1;
	}
	glo = lo < glo ? lo : glo, ghi = hi > ghi ? hi : ghi;
	if (in != len || chunk_ns(cv, glo, &ns) || chunk_ns(cv, ghi, &ns))
		return EBADMSG;
	struct pt_logw_pre r = { 0, 0, 0, (uint32_t)key, count, chunk_ns_ok(cv, t0),
	                         chunk_ns_ok(cv, t1), chunk_ns_ok(cv, lo), chunk_ns_ok(cv, hi) };
	if (run)
		(void)run(ctx, &r);
	*end = (struct pt_log_chunk_end){ r.last, t1, addr, ghi, *wt };
	return 0;
}
