/*
 * logpriv.h -- what the files of log/ share among themselves and no other
 * layer uses: the reader's internals (logread.c opening, logiter.c the
 * next event, logsum.c a summary, logcheck.c the bytes read and checked)
 * and the writer's (logsum.c counting for the summary and checkpoints,
 * logwio.c the file, for logwrite.c).  Tests that look inside a log
 * include it too.
 */
#ifndef POSIXTRACE_LOGPRIV_H
#define POSIXTRACE_LOGPRIV_H

#include <sys/uio.h>
#include "log.h"

/* ------------------------------------------------ the writer's internals */
/* Map entry i as kept (its length, native order, then its OBJ record's
 * payload), NULL if a checkpoint holds it instead (spilled, logsum.c). */
static inline unsigned char *pt_logw_objp(const struct pt_logw *w, uint32_t i)
{
	return i < w->objs_base || i >= w->nobjs ? NULL : w->objs[i - w->objs_base];
}

/* logsum.c, for logwrite.c: counting what a written events block holds
 * (its records and writer table), and the SUMMARY blocks' bodies: one
 * block's worth (at most cap bytes) from *cursor on, 0 when done. */
int pt_logw_sum_init(struct pt_logw *w);
void pt_logw_sum_block(struct pt_logw *w, const unsigned char *rec, uint32_t len, uint32_t nrec,
                       uint64_t base);
/* (v9) ... a CHUNK block written (blen bytes), from its runs of one type
 * (pt_log_chunk_scan), its one writer w->wt[0], and (v10) its waits */
void pt_logw_sum_runs(struct pt_logw *w, const struct pt_logw_pre *runs, uint32_t n,
                      uint32_t blen, const struct pt_log_waits *waits);
uint32_t pt_logw_sum_body(const struct pt_logw *w, unsigned char *out, uint32_t cap,
                          uint64_t *cursor, uint32_t *nrec, uint32_t parts);
/* (v8) A checkpoint's body into out (at most cap bytes): the counts, names
 * and writers changed since the last one, the index since it, the chain,
 * and as many of the new map entries as fit (*nobj).  0: it does not fit. */
uint32_t pt_logw_ckpt_body(struct pt_logw *w, unsigned char *out, uint32_t cap,
                           uint32_t *nrec, uint32_t *nobj);
/* (v8) The checkpoint of len bytes at off with sequence number seq, and
 * the first nobj of the new map entries, are written. */
void pt_logw_ckpt_done(struct pt_logw *w, uint32_t len, uint64_t off, uint64_t seq,
                       uint32_t nobj);
void pt_logw_sum_free(struct pt_logw *w);
/* (v8) After a checkpoint: the writers whose process is gone, with all
 * its events in the log (w->pid_final), are marked, to be retired at the
 * next checkpoint if nothing of them came meanwhile. */
void pt_logw_sum_mark_gone(struct pt_logw *w);
/* (v8) The log can be read back (w->fd readable, else through
 * /proc/self/fd): spilling allowed.  Called once fd is set. */
void pt_logw_spill_init(struct pt_logw *w);
struct pt_log_summary;
/* The counts of a summary read (a log's checkpoints) as w's, to count on
 * from (logread.c's census of a log being written): 0 or ENOMEM. */
int pt_logw_sum_load(struct pt_logw *w, const struct pt_log_summary *from);
/* After a write took k bytes of the n vectors at *v: *v and *n moved past
 * the vectors it took whole, and into the one it took part of
 * (logwio.c's writes, logwbg.c's thread). */
static inline void pt_iov_advance(struct iovec **v, int *n, size_t k)
{
	struct iovec *p = *v;
	while (k) {
		size_t take = k < p->iov_len ? k : p->iov_len;
		p->iov_base = (char *)p->iov_base + take;
		p->iov_len -= take;
		k -= take;
		if (!p->iov_len)
			p++, (*n)--;
	}
	*v = p;
}

/* logwio.c, for logwrite.c: writes a, b, c (one block) in one call at
 * w->pos, finishing short writes; returns 0 or an error number. */
int pt_logw_put(struct pt_logw *w, const void *a, uint32_t alen, const void *b,
                uint32_t blen, const void *c, uint32_t clen);
/* ... the same at off (a CHUNK block: its records, then its header) */
int pt_logw_put_at(struct pt_logw *w, uint64_t off, const void *a, uint32_t alen, const void *b,
                   uint32_t blen, const void *c, uint32_t clen);
/* logwbg.c, for logwio.c: the n pieces of v copied for w's thread to
 * write at off (w->bg set): 0, or the write error kept. */
struct iovec;
int pt_logw_bg_put(struct pt_logw *w, const struct iovec *v, int n, uint64_t off);

/* ------------------------------------------------ the reader's internals */
#ifdef PT_LOG_FUZZ_NOCRC /* fuzzing: reach the checks behind the checksums */
#define PT_LOG_CRC_OK(stored, computed) ((void)(stored), (void)(computed), 1)
#else
#define PT_LOG_CRC_OK(stored, computed) ((stored) == (computed))
#endif
struct pt_log_bhdr {
	unsigned type, nw;
	uint32_t len, nrec, bcrc;
	uint64_t seq, oldest, base;
	int crc_ok; /* (a CHUNK block made an events block) its CRC checked already */
	/* (the same) its records checked as they were made: what
	 * pt_logr_check() would find in them (pt_log_unchunk's *u) */
	int made;
	uint64_t made_first, made_last, made_min, made_max;
	int made_sorted;
};
/* (v9) What a CHUNK block says to convert its records (its header's
 * fields: docs/log-format.md, "CHUNK block"), decoded from block p. */
struct pt_log_chunk_conv { uint64_t btick, addr, seg, mult, base; int64_t nsoff; };
void pt_log_chunk_conv_get(const unsigned char *p, int swap, struct pt_log_chunk_conv *cv);
/* (v9) The CHUNK block at p (len bytes, nrec records), in place, made into
 * the events block it stands for (its header's bytes untouched; the
 * records from PT_LOG_C_AT on, *olen the block's length then).  0, or
 * EBADMSG: records that do not parse to len exactly, or that a CHUNK
 * block does not hold (a system event but a no-loss wait, an id or flag
 * the log has not, a tick before the clock segment, a time before the
 * base or 2^32 ns after it).  Readers, as they load it (logcheck.c);
 * *u (unless NULL) then says what pt_logr_check() would of the events
 * block made (its first and last time, least and most, whether time
 * never steps back), which only events, with one writer, parsed as they
 * were made. */
struct pt_log_unchunked { uint64_t first, last, min, max; int sorted; };
int pt_log_unchunk(unsigned char *p, uint32_t len, uint32_t nrec, int swap, uint32_t *olen,
                   struct pt_log_unchunked *u);
/* (v9) The records of a CHUNK block (len bytes at recs, nrec of them, in
 * this machine's order, converted by cv) walked as they are, with the same
 * checks: 0, EBADMSG as above, or ENOENT: a record's type has a bit in
 * neither named nor also (named NULL: no such check; end->tick: that
 * type).  Each run of records of one type (its count, times first, last,
 * least and most: a span's pre, its offsets 0) to run, if not NULL, for
 * as long as it returns non-zero (on failure, what it was told means
 * nothing); *end the last record's time, tick and caller.  The writer
 * (logwrite.c: may the log take it, and its runs for the summary). */
/* (hi: the most tick; waits: the no-loss waits among the records) */
struct pt_log_chunk_end { uint64_t ns, tick, addr, hi; struct pt_log_waits waits; };
int pt_log_chunk_scan(const unsigned char *recs, uint32_t len, uint32_t nrec,
                      const struct pt_log_chunk_conv *cv, const uint64_t *named,
                      const uint64_t *also, int (*run)(void *ctx, const struct pt_logw_pre *r),
                      void *ctx, struct pt_log_chunk_end *end);
/* (v9) A CHUNK block just read into p (its header decoded into *b, CRC
 * and all), as the events block it stands for: *b then says so (type,
 * len, crc_ok).  Any other block: nothing.  0 or EBADMSG (logcheck.c). */
int pt_logr_unchunk(const struct pt_logr *r, unsigned char *p, struct pt_log_bhdr *b);
/* the file header h into r: 0 or EINVAL */
int pt_logr_header(struct pt_logr *r, const unsigned char *h);
/* an END block's status into r */
void pt_logr_end_status(struct pt_logr *r, const unsigned char *p);
/* an OBJ record's payload in a log of that version: 0 and *o, or EBADMSG */
int pt_log_obj_decode(const unsigned char *p, uint32_t n, int swap, unsigned version,
                      struct pt_ext_obj *o);

/* pt_log_summary_read (log.h), keeping the block index (logread.c's open) */
int pt_log_summary_read_index(int fd, struct pt_log_summary *s);
/* (v8) The checkpoint block at off with sequence number seq, read,
 * checked and its entries added to s (as pt_log_sum_parse): 0, ENOENT
 * (not such a checkpoint) or ENOMEM. */
int pt_log_ckpt_read(struct pt_logr *r, uint64_t off, uint64_t seq, struct pt_log_summary *s);
/* Checks a SUMMARY block's entries (p: the block, len, nrec); fills s
 * (which may be NULL) with them.  0 or EBADMSG. */
int pt_log_sum_parse(const unsigned char *p, uint32_t len, uint32_t nrec, int swap,
                     unsigned version, struct pt_log_summary *s);

/* once the items are known: each one's later_min (logiter.c) */
void pt_logr_order(struct pt_logr *r);
/* frees the merge's buffers (logiter.c) */
void pt_logr_merge_free(struct pt_logr *r);
/* pread all n bytes at off: 0, EBADMSG (end of file first), or an error */
int pt_logr_rd(struct pt_logr *r, uint64_t off, void *dst, size_t n);
/* 1 if h is a block header of this log, decoded into *b */
int pt_logr_bhdr(const struct pt_logr *r, const unsigned char *h, struct pt_log_bhdr *b);
/* 0 if the whole block p is sound (else EBADMSG); names: record its names */
int pt_logr_check(struct pt_logr *r, const unsigned char *p, const struct pt_log_bhdr *b,
                  int names, uint64_t *first_ts, uint64_t *last_ts, uint32_t *nev);
/* type id's name (n bytes at s, from block seq; 0: the summary) into r,
 * unless a later block named it */
void pt_logr_set_name(struct pt_logr *r, unsigned id, const unsigned char *s, uint32_t n,
                      uint64_t seq);
/* an entry of the map of loaded code kept in r, once (h: a hash of it);
 * 0 (without memory, the map goes without it) */
int pt_logr_keep_obj(struct pt_logr *r, const struct pt_ext_obj *op, uint64_t h);

#endif
