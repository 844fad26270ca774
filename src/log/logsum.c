/*
 * logsum.c -- the log's summary (format 5 and later): what an APPEND or
 * UNTIL_FULL log holds, counted by the writer as it writes its blocks and
 * written in SUMMARY blocks just before the END block, so that a reader
 * learns the counts per event type and per writer, the time range, the
 * losses, the names and the map of loaded code (format 6: with the thread
 * identities and payload descriptions) from the end of the file without
 * reading the events.  Layout: docs/log-format.md, "SUMMARY block".
 *
 * Writer: pt_logw_sum_block() walks each events block once it is written
 * (its records were checked by whoever encoded them; this only counts);
 * pt_logw_sum_body() gives the SUMMARY blocks' bodies at finish.
 * Reader: pt_log_summary_read() reads the header, the END block at the
 * end of the file and the SUMMARY blocks before it, checking each as the
 * full reader does, with logcheck.c's checks (whose pt_log_sum_parse
 * reads the SUMMARY blocks' entries).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "logpriv.h"

/* ------------------------------------------------------------- writer */

int pt_logw_sum_init(struct pt_logw *w)
{
	struct pt_logw_sum *s = calloc(1, sizeof *s);

	if (!s)
		return ENOMEM;
	s->first = UINT64_MAX;
	for (unsigned i = 0; i < PT_NIDS; i++)
		s->tfirst[i] = UINT64_MAX;
	s->ckpt_n = PT_LOG_CKPT_BLOCKS;
	s->sp_k = UINT32_MAX;
	s->sp_fd = -1;
	w->sum = s;
	return 0;
}

void pt_logw_sum_free(struct pt_logw *w)
{
	if (!w->sum)
		return;
	free(w->sum->wr);
	free(w->sum->hash);
	free(w->sum->idx);
	free(w->sum->sp);
	free(w->sum->sp_buf);
	if (w->sum->sp_fd >= 0 && w->sum->sp_fd != w->fd)
		close(w->sum->sp_fd);
	free(w->sum);
	w->sum = NULL;
}

static uint32_t hash_who(int32_t pid, uint64_t thread)
{
	uint64_t h = thread * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)pid * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(h ^ h >> 32);
}

/* The hash of s->wr at ncap slots (a power of two, > 2 * nwr): 0, or
 * -1 when memory runs out. */
static int rehash(struct pt_logw_sum *s, uint32_t ncap)
{
	uint32_t *nh = calloc(ncap, sizeof *nh);
	if (!nh)
		return -1;
	for (uint32_t i = 0; i < s->nwr; i++) {
		uint32_t j = hash_who(s->wr[i].pid, s->wr[i].thread) & (ncap - 1);
		while (nh[j])
			j = (j + 1) & (ncap - 1);
		nh[j] = i + 1;
	}
	free(s->hash);
	s->hash = nh, s->hcap = ncap;
	return 0;
}

/* The index of writer (pid, thread) in s->wr, added on first sight (the
 * next place in the WRITER order); -1 when memory runs out. */
static long sum_writer(struct pt_logw_sum *s, int32_t pid, uint64_t thread)
{
	if ((s->nwr + 1) * 2 > s->hcap && rehash(s, s->hcap ? 2 * s->hcap : 64))
		return -1;
	uint32_t j = hash_who(pid, thread) & (s->hcap - 1);
	for (; s->hash[j]; j = (j + 1) & (s->hcap - 1)) {
		const struct pt_logw_sumw *e = &s->wr[s->hash[j] - 1];
		if (e->pid == pid && e->thread == thread)
			return (long)s->hash[j] - 1;
	}
	if (s->nwr == s->wcap) {
		uint32_t ncap = s->wcap ? 2 * s->wcap : 16;
		struct pt_logw_sumw *n = realloc(s->wr, ncap * sizeof *n);
		if (!n)
			return -1;
		s->wr = n, s->wcap = ncap;
	}
	s->wr[s->nwr] = (struct pt_logw_sumw){ pid, thread, 0, UINT64_MAX, 0, 0, s->nall++,
	                                       PT_LOGW_W_DIRTY, { 0, 0, 0 } };
	s->dirty++;
	s->hash[j] = ++s->nwr;
	return (long)s->nwr - 1;
}

/* A run of events of one type and one writer, counted at once */
struct sum_run {
	unsigned id;
	uint32_t wi;
	uint64_t count, min, max;
};

static void sum_run_add(struct pt_logw_sum *s, const long *map, const struct sum_run *r)
{
	struct pt_logw_sumw *e = &s->wr[map[r->wi]];

	if (!r->count)
		return;
	s->events += r->count;
	s->count[r->id] += r->count;
	if (r->min < s->first)
		s->first = r->min;
	if (r->max > s->last)
		s->last = r->max;
	if (r->min < s->tfirst[r->id])
		s->tfirst[r->id] = r->min;
	if (r->max > s->tlast[r->id])
		s->tlast[r->id] = r->max;
	e->count += r->count;
	if (!(e->flags & PT_LOGW_W_DIRTY)) {
		e->flags |= PT_LOGW_W_DIRTY;
		s->dirty++;
	}
	if (r->min < e->first)
		e->first = r->min;
	if (r->max > e->last)
		e->last = r->max;
}

/* The walk of one events block by pt_logw_sum_block(): the two open runs
 * (consecutive events of one type and writer, a thread recording in a
 * loop, are counted as one run: a few instructions an event; and the run
 * before the current one is kept open, so that two types taking turns
 * make two runs, not one per event.  The two runs are two slots, the
 * current one rr[c]: a turn flips c, nothing is copied; the turns are the
 * mixed case of tests/flush_cost), and the block's entry in the index. */
struct sum_walk {
	struct pt_logw_sum *s;
	const long *map; /* the block's writers: their index in s->wr */
	struct sum_run rr[2];
	unsigned c;
	uint64_t min, max, first, last; /* the block's times (index entry) */
	unsigned flags;                 /* PT_LOG_IDX_* */
};

/* Room for the block's index entry, and its writer table in s->wr
 * (map[i]: the writer table's i-th); -1 when memory runs out. */
static int sum_prepare(struct pt_logw *w, struct pt_logw_sum *s, long *map)
{
	if (w->version >= 7 && s->nidx == s->idx_cap) {
		uint64_t ncap = s->idx_cap ? 2 * s->idx_cap : 256;
		struct pt_log_bidx *n = realloc(s->idx, ncap * sizeof *n);
		if (!n)
			return -1;
		s->idx = n, s->idx_cap = ncap;
	}
	for (uint32_t i = 0; i < w->nw; i++) /* the block's writer table, as written */
		if ((map[i] = sum_writer(s, w->wt[i].pid, w->wt[i].thread)) < 0)
			return -1;
	return 0;
}

/* Run r counted into the summary and the block's times; its slot free. */
static void sum_close(struct sum_walk *k, struct sum_run *r)
{
	if (!r->count)
		return;
	sum_run_add(k->s, k->map, r);
	if (r->min < k->min)
		k->min = r->min;
	if (r->max > k->max)
		k->max = r->max;
	r->count = 0;
}

/* An event at ts in the block's times. */
static void sum_seen(struct sum_walk *k, uint64_t ts)
{
	if (!k->flags)
		k->first = ts;
	k->flags |= PT_LOG_IDX_EVENTS;
	k->last = ts;
}

/* A run the span counted already (pt_logw_span_pre): the open runs are
 * counted first (their order does not matter), then it. */
static void sum_pre(struct sum_walk *k, const struct pt_logw_pre *q)
{
	struct sum_run pr = { q->id, q->wi, q->count, q->min, q->max };

	for (unsigned j = 0; j < 2; j++)
		sum_close(k, &k->rr[k->c ^ 1 ^ j]);
	sum_run_add(k->s, k->map, &pr);
	k->min = pr.min < k->min ? pr.min : k->min;
	k->max = pr.max > k->max ? pr.max : k->max;
	if (!k->flags)
		k->first = q->first;
	k->flags |= PT_LOG_IDX_EVENTS;
	k->last = q->last;
}

/* The current run for an event of type id by writer wi: the current one
 * if of that type and writer; else the run before it, if of this type and
 * writer, goes on (two types taking turns) and becomes the current one;
 * else that one is counted and its slot starts this run. */
static struct sum_run *sum_run_for(struct sum_walk *k, unsigned id, uint32_t wi, uint64_t ts)
{
	struct sum_run *r = &k->rr[k->c];

	if (r->count && id == r->id && wi == r->wi)
		return r;
	k->c ^= 1;
	r = &k->rr[k->c];
	if (r->count && (id != r->id || wi != r->wi))
		sum_close(k, r);
	if (!r->count)
		*r = (struct sum_run){ id, wi, 0, ts, ts };
	return r;
}

static void sum_count(struct sum_run *r, uint64_t ts)
{
	r->count++;
	if (ts < r->min)
		r->min = ts;
	if (ts > r->max)
		r->max = ts;
}

/* The short records from rec + *off on (the same writer wi, then) of the
 * current run's type, or of the run before's if that is this writer's
 * too, as a thread in a loop writes them: only the timestamp is read (a
 * log in the machine's byte order).  Stops before stop, at record nrec,
 * or at any other record; returns the index of the last record counted
 * (i: none), *off past it. */
static uint32_t sum_shorts(struct sum_walk *k, const unsigned char *rec, uint64_t base,
                           uint32_t wi, uint32_t i, uint32_t nrec, uint32_t *off, uint32_t stop)
{
	const unsigned mask = PT_LOG_RF_SHORT | PT_LOG_RF_LOST | PT_LOG_RF_NAME | PT_LOG_RF_OBJ;
	struct sum_run *rr = k->rr;
	unsigned c = k->c; /* (in registers for the loop, as is last) */
	uint64_t last = k->last;
	uint32_t o = *off;

	while (i + 1 < nrec && o + PT_LOG_REC_SHORT <= stop) {
		uint16_t n2, info2;
		uint32_t d2;
		__builtin_memcpy(&info2, rec + o + PT_LOG_R_INFO, 2);
		if ((info2 & mask) != PT_LOG_RF_SHORT)
			break;
		if ((info2 & PT_LOG_ID_MASK) != rr[c].id) {
			const struct sum_run *p = &rr[c ^ 1];
			/* (a wait's payload is read: never here; no open run is
			 * of waits, see pt_logw_sum_block) */
			if (!p->count || (info2 & PT_LOG_ID_MASK) != p->id || p->wi != wi)
				break;
			c ^= 1;
		}
		__builtin_memcpy(&n2, rec + o + PT_LOG_R_LEN, 2);
		__builtin_memcpy(&d2, rec + o + PT_LOG_R_DELTA, 4);
		last = base + d2;
		sum_count(&rr[c], last);
		o += PT_LOG_REC_SHORT + n2;
		i++;
	}
	k->c = c;
	k->last = last;
	*off = o;
	return i;
}

/* A block's walk ends: its runs closed, its entry (blen bytes) in the index */
static void sum_end(struct pt_logw *w, struct sum_walk *k, uint32_t blen)
{
	struct pt_logw_sum *s = k->s;

	for (unsigned j = 0; j < 2; j++)
		sum_close(k, &k->rr[j]);
	if (w->version >= 7)
		s->idx[s->nidx++] = (struct pt_log_bidx){ blen, k->flags, k->first,
		                                          k->flags ? k->min : 0, k->max, k->last };
}

/* (v10) A wait's record just counted in the current run (its payload, n
 * bytes at p) added up for its writer e, as a reader's pass adds it up
 * (8 bytes, in this machine's order); its run closed, so that no open run
 * is of waits (sum_shorts, which reads no payload, goes on open runs).
 * (Out of the walk's loop: waits are rare, the loop's registers are not.) */
static __attribute__((noinline, cold)) void sum_wait_rec(struct sum_walk *k,
                                                        struct pt_logw_sumw *e,
                                                        const unsigned char *p, uint32_t n)
{
	if (n == 8) {
		uint64_t v = pt_log_get64(p, 0);
		pt_log_waits_add(&e->waits, 1, v, v);
	}
	sum_close(k, &k->rr[k->c]);
}

/* Counts one events block (nrec records, len bytes at rec, times from
 * base) once it is written, and adds its entry to the index (format 7):
 * the runs the span counted (w->pre) are taken whole, the other records
 * one by one, the short records after an event in a loop. */
void pt_logw_sum_block(struct pt_logw *w, const unsigned char *rec, uint32_t len, uint32_t nrec,
                       uint64_t base)
{
	struct pt_logw_sum *s = w->sum;
	long map[PT_LOG_MAX_WRITERS];
	struct sum_walk k = { s, map, { { 0, 0, 0, 0, 0 }, { 0, 0, 0, 0, 0 } }, 0, UINT64_MAX, 0, 0,
	                      0, 0 };
	uint32_t off = 0, wi = 0;
	int sw = w->swap;

	if (!s || s->failed)
		return;
	if (sum_prepare(w, s, map)) {
		s->failed = 1;
		return;
	}
	uint32_t np = 0, stop = w->npre ? w->pre[0].off : len; /* the next run counted already */
	for (uint32_t i = 0; i < nrec && off + PT_LOG_REC_SHORT <= len; i++) {
		if (off == stop && np < w->npre) {
			const struct pt_logw_pre *q = &w->pre[np++];
			stop = np < w->npre ? w->pre[np].off : len;
			if (q->end <= off || q->end > len || q->count > nrec - i || q->wi >= w->nw ||
			    q->id >= PT_NIDS) { /* (never: the writer's own) */
				s->failed = 1;
				return;
			}
			sum_pre(&k, q);
			wi = q->wi;
			off = q->end;
			i += (uint32_t)q->count - 1;
			continue;
		}
		uint32_t delta = pt_log_get32(rec + off + PT_LOG_R_DELTA, sw);
		uint32_t n = pt_log_get16(rec + off + PT_LOG_R_LEN, sw);
		unsigned info = pt_log_get16(rec + off + PT_LOG_R_INFO, sw);
		int event = !(info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ));
		if (info & PT_LOG_RF_SHORT) {
			off += PT_LOG_REC_SHORT;
		} else {
			/* a short record is the writer of the event record before it:
			 * a name or map record between them (writer 0) does not count */
			if (event)
				wi = (uint32_t)(pt_log_get64(rec + off + PT_LOG_R_WHERE, sw) >> PT_LOG_WHERE_WI);
			off += PT_LOG_REC;
		}
		if (event && wi < w->nw) {
			uint64_t ts = base + delta;
			unsigned id = info & PT_LOG_ID_MASK;
			sum_seen(&k, ts);
			sum_count(sum_run_for(&k, id, wi, ts), ts);
			if (info & PT_LOG_RF_LOST) {
				k.flags |= PT_LOG_IDX_LOST;
				if (n == 8) {
					s->gaps++;
					s->last_lost = pt_log_get64(rec + off, sw);
				}
			} else if (id == PT_SYS_NOLOSS_WAIT) {
				sum_wait_rec(&k, &s->wr[map[wi]], rec + off, n);
			} else if (!sw) {
				off += n;
				i = sum_shorts(&k, rec, base, wi, i, nrec, &off, stop);
				continue;
			}
		}
		off += n;
	}
	sum_end(w, &k, PT_LOG_BLK + w->nw * PT_LOG_WENT + len);
}

void pt_logw_sum_runs(struct pt_logw *w, const struct pt_logw_pre *runs, uint32_t n,
                      uint32_t blen, const struct pt_log_waits *waits)
{
	struct pt_logw_sum *s = w->sum;
	long map[PT_LOG_MAX_WRITERS];
	struct sum_walk k = { s, map, { { 0, 0, 0, 0, 0 }, { 0, 0, 0, 0, 0 } }, 0, UINT64_MAX, 0, 0,
	                      0, 0 };

	if (!s || s->failed)
		return;
	if (sum_prepare(w, s, map)) {
		s->failed = 1;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		sum_pre(&k, &runs[i]);
	if (waits && waits->n && w->nw == 1)
		pt_log_waits_add(&s->wr[map[0]].waits, waits->n, waits->ns, waits->max);
	sum_end(w, &k, blen);
}

/* (v7) Block entries in one INDEX entry: as many as a SUMMARY block takes. */
static uint32_t idx_run(const struct pt_logw *w)
{
	uint32_t k = (w->cap - PT_LOG_BLK - PT_LOG_S_HDR - 8) / PT_LOG_IDX_ENT;

	return k < PT_LOG_IDX_RUN_MAX ? k : PT_LOG_IDX_RUN_MAX;
}

/* INDEX entry i (its block entries i * idx_run() on) into out, if not
 * NULL; its length without the entry header. */
static uint32_t idx_entry(const struct pt_logw *w, uint32_t i, unsigned char *out)
{
	const struct pt_logw_sum *s = w->sum;
	uint64_t from = (uint64_t)i * idx_run(w);
	uint32_t k = s->nidx - from < idx_run(w) ? (uint32_t)(s->nidx - from) : idx_run(w);
	int sw = w->swap;

	if (out) {
		/* (v8) numbered from the first entry since the last checkpoint */
		pt_log_put32(out + PT_LOG_IDX_FROM, (uint32_t)(s->idx_base + from), sw);
		pt_log_put32(out + PT_LOG_IDX_K, k, sw);
		for (uint32_t j = 0; j < k; j++) {
			const struct pt_log_bidx *x = &s->idx[from + j];
			unsigned char *e = out + PT_LOG_IDX_ENTS + j * PT_LOG_IDX_ENT;
			pt_log_put32(e + PT_LOG_X_LEN, x->len, sw);
			pt_log_put32(e + PT_LOG_X_FLAGS, x->flags, sw);
			pt_log_put64(e + PT_LOG_X_FIRST, x->first, sw);
			pt_log_put64(e + PT_LOG_X_MIN, x->min, sw);
			pt_log_put64(e + PT_LOG_X_MAX, x->max, sw);
			pt_log_put64(e + PT_LOG_X_LAST, x->last, sw);
		}
	}
	return PT_LOG_IDX_ENTS + k * PT_LOG_IDX_ENT;
}

/* ------------------------------------------------------------ spilling
 *
 * (v8) A forking service makes a writer per child: kept until the end for
 * the summary, the writer's memory grew by each one (about 170 bytes a
 * child, issue 54), and so did its copy of each map entry.  Instead, a
 * checkpoint's entries stay in the log: the writers whose process is gone
 * (w->pid_final: gone, and every event of it given to the writer), marked
 * at one checkpoint and not counted since, are retired at the next: it
 * holds their final WRITER_AT entries (after its INDEX entries), and
 * they leave s->wr; and the map entries a checkpoint gave leave w->objs.
 * The summary at the end reads them back from those checkpoints (s->sp:
 * where each one is and where its retired writers and map entries are, 28
 * bytes a checkpoint), the retired writers first, so the summary is the
 * same as if nothing had been spilled (but for the order of its WRITER
 * entries).  Only in a log that can be read back (pt_logw_spill_init). */

/* The log open for reading: w->fd, else a descriptor of the same file
 * opened through /proc/self/fd (the caller's may be write-only). */
static int reopen(const struct pt_logw *w)
{
	char p[64];
	struct stat a, b;

	snprintf(p, sizeof p, "/proc/self/fd/%d", w->fd);
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, &a) || fstat(w->fd, &b) || a.st_dev != b.st_dev ||
	                a.st_ino != b.st_ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void pt_logw_spill_init(struct pt_logw *w)
{
	struct pt_logw_sum *s = w->sum;
	int fl = w->fd >= 0 ? fcntl(w->fd, F_GETFL) : -1;

	if (!s || !w->ckpt_every || !w->seekable || fl < 0)
		return;
	if ((fl & O_ACCMODE) != O_WRONLY) {
		s->spill = 1;
	} else {
		int fd = reopen(w);
		if (fd >= 0) {
			close(fd);
			s->spill = 1;
		}
	}
}

/* Checkpoint k read back into s->sp_buf (checked as written: its header
 * and body CRC); NULL (the summary is given up) if it cannot be. */
static const unsigned char *spill_load(const struct pt_logw *w, uint32_t k)
{
	struct pt_logw_sum *s = w->sum;
	const struct pt_logw_spill *x = &s->sp[k];
	int sw = w->swap;

	if (s->sp_k == k)
		return s->sp_buf;
	s->sp_k = UINT32_MAX;
	if (!s->sp_buf && !(s->sp_buf = malloc(w->cap)))
		goto fail;
	if (s->sp_fd < 0) {
		int fl = fcntl(w->fd, F_GETFL);
		s->sp_fd = fl >= 0 && (fl & O_ACCMODE) != O_WRONLY ? w->fd : reopen(w);
		if (s->sp_fd < 0)
			goto fail;
	}
	unsigned char *b = s->sp_buf;
	if (x->len < PT_LOG_BLK || x->len > w->cap ||
	    pread(s->sp_fd, b, x->len, (off_t)x->off) != (ssize_t)x->len ||
	    memcmp(b + PT_LOG_B_MAGIC, PT_LOG_BLK_MAGIC, 4) ||
	    pt_log_get16(b + PT_LOG_B_TYPE, sw) != PT_LOG_BT_CKPT ||
	    pt_log_get32(b + PT_LOG_B_LEN, sw) != x->len ||
	    pt_log_get32(b + PT_LOG_B_BCRC, sw) != pt_log_crc(0, b + PT_LOG_BLK, x->len - PT_LOG_BLK))
		goto fail;
	s->sp_k = k;
	s->sp_obj_i = UINT32_MAX;
	return b;
fail:
	s->failed = 1;
	return NULL;
}

/* Retired writer r's WRITER entry body (40 bytes) into out: 0, or -1. */
static int spill_writer(const struct pt_logw *w, uint64_t r, unsigned char *out)
{
	struct pt_logw_sum *s = w->sum;
	/* (from the one read back last: the summary asks in order) */
	uint32_t k = s->sp_k < s->nsp && r >= s->sp[s->sp_k].ret_first ? s->sp_k : 0;
	int sw = w->swap;

	while (k < s->nsp && r >= s->sp[k].ret_first + s->sp[k].nret)
		k++;
	uint64_t base = k < s->nsp ? s->sp[k].ret_first : 0;
	const unsigned char *b = k < s->nsp ? spill_load(w, k) : NULL;
	if (!b)
		return -1;
	uint32_t at = s->sp[k].ret_at + (uint32_t)(r - base) * (PT_LOG_S_HDR + PT_LOG_WAT_LEN);
	if (at + PT_LOG_S_HDR + PT_LOG_WAT_LEN > s->sp[k].len ||
	    pt_log_get16(b + at + PT_LOG_S_KIND, sw) != PT_LOG_S_WRITER_AT ||
	    pt_log_get16(b + at + PT_LOG_S_LEN, sw) != PT_LOG_WAT_LEN) {
		s->failed = 1;
		return -1;
	}
	memcpy(out, b + at + PT_LOG_S_HDR + PT_LOG_WAT_WRITER, PT_LOG_WRI_LEN);
	return 0;
}

/* Map entry i, given by a checkpoint: its OBJ entry's body and length;
 * NULL if it cannot be read back. */
static const unsigned char *spill_obj(const struct pt_logw *w, uint32_t i, uint32_t *n)
{
	struct pt_logw_sum *s = w->sum;
	uint32_t k = s->sp_k < s->nsp && i >= s->sp[s->sp_k].obj_first ? s->sp_k : 0;
	int sw = w->swap;

	while (k < s->nsp && (s->sp[k].nobj == 0 || i >= s->sp[k].obj_first + s->sp[k].nobj))
		k++;
	const unsigned char *b = k < s->nsp && i >= s->sp[k].obj_first ? spill_load(w, k) : NULL;
	if (!b) {
		s->failed = 1;
		return NULL;
	}
	uint32_t j = s->sp[k].obj_first, at = s->sp[k].obj_at;
	if (s->sp_obj_i != UINT32_MAX && s->sp_obj_i <= i)
		j = s->sp_obj_i, at = s->sp_obj_off;
	for (;;) {
		if (at + PT_LOG_S_HDR > s->sp[k].len ||
		    pt_log_get16(b + at + PT_LOG_S_KIND, sw) != PT_LOG_S_OBJ)
			break;
		uint32_t len = pt_log_get16(b + at + PT_LOG_S_LEN, sw);
		if (at + PT_LOG_S_HDR + len > s->sp[k].len || len > PT_LOG_OBJ_MAX)
			break;
		if (j == i) {
			s->sp_obj_i = j, s->sp_obj_off = at;
			*n = len;
			return b + at + PT_LOG_S_HDR;
		}
		at += PT_LOG_S_HDR + len;
		j++;
	}
	s->failed = 1;
	return NULL;
}

/* Entries in order: TOTALS, TYPE per type seen, NAME per name, WRITER per
 * writer (those retired first), (v10) WAITS per writer not retired that
 * waited, OBJ per entry of the map, (v7) INDEX entries.  The cursor:
 * kind << 32 | index. */
static uint32_t entry(const struct pt_logw *w, uint64_t cur, unsigned char *out, uint32_t parts,
                      int *skip)
{
	const struct pt_logw_sum *s = w->sum;
	unsigned kind = (unsigned)(cur >> 32);
	uint32_t i = (uint32_t)cur, n;
	unsigned char b[8 + PT_LOG_OBJ_MAX];
	int sw = w->swap;

	*skip = 0;
	if (kind == PT_LOG_S_INDEX) { /* too long for b: straight into out */
		n = idx_entry(w, i, out ? out + PT_LOG_S_HDR : NULL);
		if (out) {
			pt_log_put16(out + PT_LOG_S_KIND, (uint16_t)kind, sw);
			pt_log_put16(out + PT_LOG_S_LEN, (uint16_t)n, sw);
		}
		return PT_LOG_S_HDR + n;
	}
	memset(b, 0, 8 + PT_LOG_WAT_LEN); /* (the longest entry of fixed length, and more) */
	switch (kind) {
	case PT_LOG_S_TOTALS:
		n = PT_LOG_TOT_LEN;
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_TOT_EVENTS, s->events, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_TOT_FIRST, s->events ? s->first : 0, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_TOT_LAST, s->last, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_TOT_GAPS, s->gaps, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_TOT_LAST_LOST, s->last_lost, sw);
		pt_log_put32(b + PT_LOG_S_HDR + PT_LOG_TOT_PARTS, parts, sw);
		pt_log_put32(b + PT_LOG_S_HDR + PT_LOG_TOT_WRITERS, s->nall, sw);
		break;
	case PT_LOG_S_TYPE:
		if (!s->count[i]) {
			*skip = 1;
			return 0;
		}
		n = PT_LOG_TYP_LEN;
		pt_log_put32(b + PT_LOG_S_HDR + PT_LOG_TYP_ID, i, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_TYP_COUNT, s->count[i], sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_TYP_FIRST, s->tfirst[i], sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_TYP_LAST, s->tlast[i], sw);
		break;
	case PT_LOG_S_NAME:
		if (!(w->known[i / 64] >> (i % 64) & 1)) {
			*skip = 1;
			return 0;
		}
		n = PT_LOG_NAM_NAME + (uint32_t)strlen(w->names[i]);
		pt_log_put32(b + PT_LOG_S_HDR + PT_LOG_NAM_ID, i, sw);
		memcpy(b + PT_LOG_S_HDR + PT_LOG_NAM_NAME, w->names[i], n - PT_LOG_NAM_NAME);
		break;
	case PT_LOG_S_WRITER:
		n = PT_LOG_WRI_LEN;
		if (i < s->nret) { /* (retired: from its checkpoint) */
			if (spill_writer(w, i, b + PT_LOG_S_HDR))
				memset(b + PT_LOG_S_HDR, 0, PT_LOG_WRI_LEN); /* (failed: no summary) */
			break;
		}
		i -= (uint32_t)s->nret;
		pt_log_put32(b + PT_LOG_S_HDR + PT_LOG_WRI_PID, (uint32_t)s->wr[i].pid, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_WRI_THREAD, s->wr[i].thread, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_WRI_COUNT, s->wr[i].count, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_WRI_FIRST, s->wr[i].first, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_WRI_LAST, s->wr[i].last, sw);
		break;
	case PT_LOG_S_WAITS: /* (v10) a writer's waits (a retired one's are not
	                      * kept: then the WAITS entries do not add up to the
	                      * waits counted, and a reader reads the events) */
		if (i < s->nret || !s->wr[i - s->nret].waits.n) {
			*skip = 1;
			return 0;
		}
		n = PT_LOG_WAI_LEN;
		pt_log_put32(b + PT_LOG_S_HDR + PT_LOG_WAI_AT, i, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_WAI_N, s->wr[i - s->nret].waits.n, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_WAI_NS, s->wr[i - s->nret].waits.ns, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_WAI_MAX, s->wr[i - s->nret].waits.max, sw);
		break;
	case PT_LOG_S_WRITER_AT: /* (v8, checkpoints) the writer and its place */
		n = PT_LOG_WAT_LEN;
		pt_log_put32(b + PT_LOG_S_HDR + PT_LOG_WAT_AT, s->wr[i].gi, sw);
		unsigned char *wa = b + PT_LOG_S_HDR + PT_LOG_WAT_WRITER;
		pt_log_put32(wa + PT_LOG_WRI_PID, (uint32_t)s->wr[i].pid, sw);
		pt_log_put64(wa + PT_LOG_WRI_THREAD, s->wr[i].thread, sw);
		pt_log_put64(wa + PT_LOG_WRI_COUNT, s->wr[i].count, sw);
		pt_log_put64(wa + PT_LOG_WRI_FIRST, s->wr[i].first, sw);
		pt_log_put64(wa + PT_LOG_WRI_LAST, s->wr[i].last, sw);
		break;
	case PT_LOG_S_CHAIN: /* (v8) the last checkpoint written */
		n = PT_LOG_CHN_LEN;
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_CHN_OFF, s->ckpt_off, sw);
		pt_log_put64(b + PT_LOG_S_HDR + PT_LOG_CHN_SEQ, s->ckpt_seq, sw);
		break;
	default: /* PT_LOG_S_OBJ: the entry as kept for the OBJ records */
		if (!pt_logw_objp(w, i)) { /* (given by a checkpoint: from there) */
			const unsigned char *o = spill_obj(w, i, &n);
			if (!o) {
				n = PT_LOG_OBJ_FIXED; /* (failed: no summary) */
				memset(b + PT_LOG_S_HDR, 0, n);
			} else {
				memcpy(b + PT_LOG_S_HDR, o, n);
			}
			break;
		}
		n = pt_log_get32(pt_logw_objp(w, i), 0);
		memcpy(b + PT_LOG_S_HDR, pt_logw_objp(w, i) + 4, n);
		break;
	}
	pt_log_put16(b + PT_LOG_S_KIND, (uint16_t)kind, sw);
	pt_log_put16(b + PT_LOG_S_LEN, (uint16_t)n, sw);
	if (out)
		memcpy(out, b, PT_LOG_S_HDR + n);
	return PT_LOG_S_HDR + n;
}

/* The next cursor after cur, or 0 at the end. */
static uint64_t next_cursor(const struct pt_logw *w, uint64_t cur)
{
	unsigned kind = (unsigned)(cur >> 32);
	uint32_t i = (uint32_t)cur + 1;
	uint32_t run = idx_run(w);
	uint64_t nrun = w->version < 7 || w->sum->no_index ? 0 : (w->sum->nidx + run - 1) / run;
	uint64_t nwr = w->sum->nret + w->sum->nwr;
	uint32_t nw32 = nwr > UINT32_MAX ? UINT32_MAX : (uint32_t)nwr;
	uint32_t lim[10] = { 0, 1, PT_NIDS, nw32, PT_NIDS, w->nobjs,
		             nrun > UINT32_MAX ? UINT32_MAX : (uint32_t)nrun, w->sum->ckpts ? 1 : 0,
		             0, w->version >= 10 ? nw32 : 0 };

	/* kinds in the order written: 1, 2, 4, 3, (v10) 9, 5, 6, (v8) 7 */
	static const unsigned after[10] = { 0, 2, 4, 9, 3, 6, 7, 0, 0, 5 };
	while (kind && i >= lim[kind]) {
		kind = after[kind];
		i = 0;
	}
	return kind ? (uint64_t)kind << 32 | i : 0;
}

uint32_t pt_logw_sum_body(const struct pt_logw *w, unsigned char *out, uint32_t cap,
                          uint64_t *cursor, uint32_t *nrec, uint32_t parts)
{
	uint32_t len = 0;
	int skip;

	*nrec = 0;
	if (!*cursor)
		*cursor = (uint64_t)PT_LOG_S_TOTALS << 32;
	while (*cursor != UINT64_MAX) {
		uint32_t n = entry(w, *cursor, NULL, parts, &skip);
		if (!skip && len + n > cap)
			break;
		if (!skip) {
			if (out)
				entry(w, *cursor, out + len, parts, &skip);
			len += n;
			(*nrec)++;
		}
		uint64_t nx = next_cursor(w, *cursor);
		*cursor = nx ? nx : UINT64_MAX;
	}
	return len;
}

/* (v8) A checkpoint: what a reader of the log as it is so far needs
 * without reading the blocks before it (logread.c: a log being written),
 * and no more than changed since the last one, so that it stays small:
 * TOTALS; TYPE of each id whose count changed; NAME of each name not given
 * yet; WRITER_AT of each writer new or whose count changed; CHAIN, the
 * checkpoint before; INDEX, the block entries since it (that one's
 * included), all of them or no checkpoint; then as many OBJ of the map
 * entries not given yet as fit (the rest: in the next checkpoint, which
 * the writer writes at once). */
uint32_t pt_logw_ckpt_body(struct pt_logw *w, unsigned char *out, uint32_t cap,
                           uint32_t *nrec, uint32_t *nobj)
{
	struct pt_logw_sum *s = w->sum;
	uint32_t len = 0, n, run = idx_run(w);
	uint64_t nrun = (s->nidx + run - 1) / run;
	int skip;

	*nrec = *nobj = 0;
#define CKPT_PUT(cur) do { \
		n = entry(w, (cur), NULL, 1, &skip); \
		if (!skip) { \
			if (len + n > cap) \
				return 0; \
			entry(w, (cur), out + len, 1, &skip); \
			len += n; \
			(*nrec)++; \
		} \
	} while (0)
	CKPT_PUT((uint64_t)PT_LOG_S_TOTALS << 32);
	for (uint32_t i = 0; i < PT_NIDS; i++)
		if (s->count[i] != s->tckpt[i])
			CKPT_PUT((uint64_t)PT_LOG_S_TYPE << 32 | i);
	for (uint32_t i = 0; i < PT_NIDS; i++)
		if ((w->known[i / 64] & ~s->named[i / 64]) >> (i % 64) & 1)
			CKPT_PUT((uint64_t)PT_LOG_S_NAME << 32 | i);
	for (uint32_t i = 0; i < s->nwr; i++)
		if (s->wr[i].gi >= s->wr_given || s->wr[i].count != s->wr[i].ckpt)
			CKPT_PUT((uint64_t)PT_LOG_S_WRITER_AT << 32 | i);
	CKPT_PUT((uint64_t)PT_LOG_S_CHAIN << 32);
	for (uint64_t i = 0; i < nrun; i++)
		CKPT_PUT((uint64_t)PT_LOG_S_INDEX << 32 | i);
#undef CKPT_PUT
	/* the writers retired (spilling, above): their final counts again,
	 * as many as fit (the others at the next checkpoint) */
	s->ret_at = PT_LOG_BLK + len, s->ret_n = 0;
	for (uint32_t i = 0; s->spill && i < s->nwr; i++) {
		if ((s->wr[i].flags & (PT_LOGW_W_GONE | PT_LOGW_W_DIRTY)) != PT_LOGW_W_GONE ||
		    s->wr[i].gi >= s->wr_given)
			continue;
		n = entry(w, (uint64_t)PT_LOG_S_WRITER_AT << 32 | i, NULL, 1, &skip);
		if (len + n > cap)
			break;
		entry(w, (uint64_t)PT_LOG_S_WRITER_AT << 32 | i, out + len, 1, &skip);
		len += n;
		(*nrec)++;
		s->ret_n++;
	}
	s->obj_at = PT_LOG_BLK + len;
	for (uint32_t i = s->obj_ckpt; i < w->nobjs; i++) {
		n = entry(w, (uint64_t)PT_LOG_S_OBJ << 32 | i, NULL, 1, &skip);
		if (len + n > cap)
			break;
		entry(w, (uint64_t)PT_LOG_S_OBJ << 32 | i, out + len, 1, &skip);
		len += n;
		(*nrec)++;
		(*nobj)++;
	}
	return len;
}

/* (spilling) The checkpoint just written holds the final entries of
 * s->ret_n writers and nobj map entries: where, noted; the writers leave
 * s->wr, the entries w->objs.  0, or -1 (out of memory: nothing spilled,
 * and no spilling from now on). */
static int spill_done(struct pt_logw *w, uint32_t len, uint64_t off, uint32_t nobj)
{
	struct pt_logw_sum *s = w->sum;

	if (!s->spill || (!s->ret_n && !nobj))
		return 0;
	if (s->nsp == s->sp_cap) {
		uint32_t ncap = s->sp_cap ? 2 * s->sp_cap : 64;
		struct pt_logw_spill *n = realloc(s->sp, ncap * sizeof *n);
		if (!n) {
			s->spill = 0;
			return -1;
		}
		s->sp = n, s->sp_cap = ncap;
	}
	s->sp[s->nsp++] = (struct pt_logw_spill){ off, s->nret, len, s->ret_at, s->ret_n, s->obj_at,
	                                          nobj, s->obj_ckpt };
	/* (the entries are given in order: those before are gone already) */
	uint32_t upto = s->obj_ckpt + nobj < w->nobjs ? s->obj_ckpt + nobj : w->nobjs;
	if (upto > w->objs_base) {
		uint32_t drop = upto - w->objs_base, keep = w->nobjs - upto;
		for (uint32_t i = 0; i < drop; i++)
			free(w->objs[i]);
		memmove(w->objs, w->objs + drop, keep * sizeof *w->objs);
		w->objs_base = upto;
		if (w->objs_cap > 64 && keep < w->objs_cap / 4) {
			unsigned char **no = realloc(w->objs, (w->objs_cap / 2) * sizeof *no);
			if (no)
				w->objs = no, w->objs_cap /= 2;
		}
	}
	if (!s->ret_n)
		return 0;
	/* the same writers as the body took: the first ret_n of them */
	uint32_t n = 0, left = s->ret_n;
	for (uint32_t i = 0; i < s->nwr; i++) {
		const struct pt_logw_sumw *e = &s->wr[i];
		if (left && (e->flags & (PT_LOGW_W_GONE | PT_LOGW_W_DIRTY)) == PT_LOGW_W_GONE &&
		    e->gi < s->wr_given) {
			left--;
			continue;
		}
		s->wr[n++] = *e;
	}
	s->nwr = n;
	s->nret += s->ret_n;
	s->ret_n = 0;
	/* the memory back once the table is much smaller */
	if (s->wcap > 64 && s->nwr < s->wcap / 4) {
		struct pt_logw_sumw *nw = realloc(s->wr, (s->wcap / 2) * sizeof *nw);
		if (nw)
			s->wr = nw, s->wcap /= 2;
	}
	uint32_t hc = 64;
	while (hc < 4 * (s->nwr + 1))
		hc *= 2;
	if (rehash(s, hc < s->hcap ? hc : s->hcap)) {
		s->failed = 1; /* (the table would not find them: no summary) */
		return -1;
	}
	return 0;
}

void pt_logw_ckpt_done(struct pt_logw *w, uint32_t len, uint64_t off, uint64_t seq,
                       uint32_t nobj)
{
	struct pt_logw_sum *s = w->sum;

	spill_done(w, len, off, nobj);
	memcpy(s->tckpt, s->count, sizeof s->tckpt);
	memcpy(s->named, w->known, sizeof s->named);
	for (uint32_t i = 0; i < s->nwr; i++) {
		s->wr[i].ckpt = s->wr[i].count;
		s->wr[i].flags &= ~PT_LOGW_W_DIRTY;
	}
	s->dirty = 0;
	s->wr_given = s->nall;
	s->obj_ckpt += nobj;
	s->ckpt_off = off, s->ckpt_seq = seq;
	s->ckpts++;
	/* the index it holds leaves the writer's memory: the next entries
	 * (its own first) are numbered on */
	s->idx_base += s->nidx;
	s->nidx = 0;
	s->ckpt_at = w->written;
	s->ckpt_n = PT_LOG_CKPT_BLOCKS;
	if (!s->idx_cap) {
		if (!(s->idx = malloc(256 * sizeof *s->idx))) {
			s->failed = 1;
			return;
		}
		s->idx_cap = 256;
	}
	s->idx[s->nidx++] = (struct pt_log_bidx){ len, PT_LOG_IDX_CKPT, 0, 0, 0, 0 };
}

void pt_logw_sum_mark_gone(struct pt_logw *w)
{
	struct pt_logw_sum *s = w->sum;
	int32_t pid = 0;
	int fin = 0;

	if (!s || !s->spill || s->failed || !w->pid_final)
		return;
	for (uint32_t i = 0; i < s->nwr; i++) {
		struct pt_logw_sumw *e = &s->wr[i];
		if ((e->flags & PT_LOGW_W_GONE) || e->pid <= 0)
			continue;
		if (e->pid != pid)
			pid = e->pid, fin = w->pid_final(w->pid_final_ctx, pid);
		if (fin)
			e->flags |= PT_LOGW_W_GONE;
	}
}

int pt_logw_sum_load(struct pt_logw *w, const struct pt_log_summary *from)
{
	struct pt_logw_sum *s = w->sum;

	s->events = from->events;
	s->first = from->events ? from->first : UINT64_MAX;
	s->last = from->last;
	s->gaps = from->gaps;
	s->last_lost = from->last_lost;
	for (unsigned i = 0; i < PT_NIDS; i++) {
		s->count[i] = from->count[i];
		s->tfirst[i] = from->count[i] ? from->tfirst[i] : UINT64_MAX;
		s->tlast[i] = from->count[i] ? from->tlast[i] : 0;
	}
	for (uint32_t i = 0; i < from->nwr; i++) {
		long k = sum_writer(s, from->wr[i].pid, from->wr[i].thread);
		if (k < 0) {
			s->failed = 1;
			return ENOMEM;
		}
		s->wr[k].count = from->wr[i].count;
		s->wr[k].first = from->wr[i].first;
		s->wr[k].last = from->wr[i].last;
		s->wr[k].waits = from->wr[i].waits;
	}
	return 0;
}

/* ------------------------------------------------------------- reader */

void pt_log_summary_free(struct pt_log_summary *s)
{
	free(s->names);
	free(s->wr);
	pt_objstore_free(&s->objs);
	free(s->idx);
	s->idx = NULL;
	s->nidx = s->idx_cap = 0;
	s->names = NULL;
	s->wr = NULL;
	s->nwr = s->wr_cap = 0;
}

/* The SUMMARY block that ends at `end` with sequence number seq: read
 * into r->buf and checked; its header in *b.  0, or ENOENT. */
static int find_part(struct pt_logr *r, unsigned char *win, uint64_t end, uint64_t seq,
                     struct pt_log_bhdr *b)
{
	uint64_t span = end - PT_LOG_FIRST < r->max_block + 8u ? end - PT_LOG_FIRST
	                                                          : r->max_block + 8u;
	uint64_t from = (end - span) & ~7ull;

	if (from < PT_LOG_FIRST)
		from = PT_LOG_FIRST;
	if (end < from + PT_LOG_BLK || pt_logr_rd(r, from, win, (size_t)(end - from)))
		return ENOENT;
	for (uint64_t at = (end - PT_LOG_BLK) & ~7ull;; at -= 8) {
		const unsigned char *h = win + (at - from);
		if (memcmp(h, PT_LOG_BLK_MAGIC, 4) || !pt_logr_bhdr(r, h, b) ||
		    b->type != PT_LOG_BT_SUMMARY || b->seq != seq || at + PT_LOG_ALIGN8(b->len) != end) {
			if (at == from)
				break;
			continue;
		}
		if (pt_logr_check(r, h, b, 0, &(uint64_t){ 0 }, &(uint64_t){ 0 }, &(uint32_t){ 0 }))
			return ENOENT;
		memcpy(r->buf, h, b->len);
		return 0;
	}
	return ENOENT;
}

int pt_log_ckpt_read(struct pt_logr *r, uint64_t off, uint64_t seq, struct pt_log_summary *s)
{
	unsigned char h[PT_LOG_BLK], *p;
	struct pt_log_bhdr b;
	int rc;

	if (r->version < 8 || off < PT_LOG_FIRST || off % 8 || off + PT_LOG_BLK > r->size ||
	    pt_logr_rd(r, off, h, sizeof h) || !pt_logr_bhdr(r, h, &b) ||
	    b.type != PT_LOG_BT_CKPT || b.seq != seq || r->size - off < b.len)
		return ENOENT;
	if (!(p = malloc(b.len)))
		return ENOMEM;
	rc = pt_logr_rd(r, off, p, b.len) ||
	     pt_logr_check(r, p, &b, 0, &(uint64_t){ 0 }, &(uint64_t){ 0 }, &(uint32_t){ 0 })
	     ? ENOENT : pt_log_sum_parse(p, b.len, b.nrec, r->swap, (unsigned)r->version, s);
	free(p);
	return rc == ENOMEM ? ENOMEM : rc ? ENOENT : 0;
}

static int summary_read(int fd, struct pt_log_summary *s, int want_index);

int pt_log_summary_read(int fd, struct pt_log_summary *s)
{
	return summary_read(fd, s, 0);
}

int pt_log_summary_read_index(int fd, struct pt_log_summary *s)
{
	return summary_read(fd, s, 1);
}

static int summary_read(int fd, struct pt_log_summary *s, int want_index)
{
	struct pt_logr r;
	struct stat st;
	unsigned char h[PT_LOG_HDR], *win = NULL;
	struct pt_log_bhdr b;
	uint64_t *offs = NULL;
	int rc;

	memset(s, 0, sizeof *s);
	memset(&r, 0, sizeof r);
	s->want_index = want_index;
	if (fd < 0 || fstat(fd, &st))
		return EBADF;
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)PT_LOG_HDR)
		return EINVAL;
	r.fd = fd;
	r.size = (uint64_t)st.st_size;
	if ((rc = pt_logr_rd(&r, 0, h, sizeof h)) != 0 || (rc = pt_logr_header(&r, h)) != 0)
		return rc == EBADMSG ? EINVAL : rc;
	if (r.version < 5 || r.policy == POSIX_TRACE_LOOP || r.size < PT_LOG_FIRST + PT_LOG_END_LEN)
		return ENOENT;
	/* the END block, last in the file */
	uint64_t end = r.size - PT_LOG_END_LEN;
	unsigned char eb[PT_LOG_END_LEN];
	if (end % 8 || pt_logr_rd(&r, end, eb, sizeof eb) || !pt_logr_bhdr(&r, eb, &b) ||
	    b.type != PT_LOG_BT_END ||
	    pt_logr_check(&r, eb, &b, 0, &(uint64_t){ 0 }, &(uint64_t){ 0 }, &(uint32_t){ 0 }))
		return ENOENT;
	pt_logr_end_status(&r, eb);
	s->attr = r.attr;
	s->status = r.status;
	s->lost = r.lost;
	s->dropped = r.dropped;
	s->stream_lost = r.stream_lost;
	/* the SUMMARY blocks before it, last part first */
	rc = ENOMEM;
	win = malloc((size_t)r.max_block + 16);
	r.buf = malloc((size_t)r.max_block + 16);
	offs = malloc(PT_LOG_S_PARTS_MAX * sizeof *offs);
	s->names = calloc(PT_NIDS, sizeof *s->names);
	if (!win || !r.buf || !offs || !s->names)
		goto out;
	uint32_t nparts = 0, want = 0;
	uint64_t seq = b.seq;
	for (;;) {
		if (nparts == PT_LOG_S_PARTS_MAX || seq < 2 ||
		    (rc = find_part(&r, win, end, --seq, &b)) != 0) {
			rc = ENOENT;
			goto out;
		}
		end -= PT_LOG_ALIGN8(b.len);
		offs[nparts++] = end;
		/* the first part holds the totals: an entry of kind 1 first */
		if (b.nrec && pt_log_get16(r.buf + PT_LOG_BLK + PT_LOG_S_KIND, r.swap) == PT_LOG_S_TOTALS &&
		    pt_log_get16(r.buf + PT_LOG_BLK + PT_LOG_S_LEN, r.swap) == PT_LOG_TOT_LEN) {
			want = pt_log_get32(r.buf + PT_LOG_BLK + PT_LOG_S_HDR + PT_LOG_TOT_PARTS, r.swap);
			break;
		}
	}
	if (want != nparts) {
		rc = ENOENT;
		goto out;
	}
	/* the parts in writing order */
	for (uint32_t k = nparts; k-- > 0;) {
		if (pt_logr_rd(&r, offs[k], win, PT_LOG_BLK) || !pt_logr_bhdr(&r, win, &b) ||
		    b.type != PT_LOG_BT_SUMMARY || pt_logr_rd(&r, offs[k], win, b.len) ||
		    pt_logr_check(&r, win, &b, 0, &(uint64_t){ 0 }, &(uint64_t){ 0 }, &(uint32_t){ 0 }) ||
		    (rc = pt_log_sum_parse(win, b.len, b.nrec, r.swap, (unsigned)r.version, s)) != 0) {
			rc = rc == ENOMEM ? ENOMEM : ENOENT;
			goto out;
		}
	}
	s->sum_off = offs[nparts - 1];
	s->sum_seq = seq;
	rc = 0;
out:
	s->bytes_read = r.bytes_read;
	free(win);
	free(r.buf);
	free(offs);
	if (rc)
		pt_log_summary_free(s);
	return rc;
}
