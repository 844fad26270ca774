/*
 * log.h -- the log layer's interface: writing a trace log (logwrite.c,
 * logwio.c, logsum.c: struct pt_logw) and reading one (logread.c,
 * logiter.c, logcheck.c: struct pt_logr), and a log's summary read alone
 * (logsum.c).  Internal to the library; the bytes are logformat.h's (see
 * docs/log-format.md for the layout and the rules); what the files of
 * log/ share among themselves only is logpriv.h's.  Only libc and shm/:
 * no other layer of the library.
 */
#ifndef POSIXTRACE_LOG_H
#define POSIXTRACE_LOG_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <trace.h>
#include "../shm/layout.h"
#include "../shm/mapent.h"
#include "batch.h"
#include "logformat.h"
#include "objstore.h"

_Static_assert(PT_LOG_MAX_WRITERS == PT_EXT_BATCH_W, "a batch holds a block's writer table");
/* (v7) a block entry of the index, decoded (logformat.h, PT_LOG_X_*) */
struct pt_log_bidx { uint32_t len, flags; uint64_t first, min, max, last; };

/* ------------------------------------------------------------- writer */

/* the where of the last event record of the block being built (v4) */
struct pt_log_prev {
	uint64_t where;
	int ok;     /* 0: none yet */
	int legacy; /* writing format 3 (tests): no short records */
};

/* One record's header (payload follows, unpadded): short (8 bytes) when
 * the event record before it in the block has the same where, as *prev
 * says, else 16 bytes.  Returns the header's length. */
static inline uint32_t pt_log_put_rec(unsigned char *p, uint32_t delta, uint32_t len,
                                      unsigned info, uint64_t where, int swap,
                                      struct pt_log_prev *prev)
{
	int event = !(info & (PT_LOG_RF_NAME | PT_LOG_RF_OBJ));
	int shrt = event && prev->ok && !prev->legacy && prev->where == where;

	pt_log_put32(p + PT_LOG_R_DELTA, delta, swap);
	pt_log_put16(p + PT_LOG_R_LEN, (uint16_t)len, swap);
	pt_log_put16(p + PT_LOG_R_INFO, (uint16_t)(info | (shrt ? PT_LOG_RF_SHORT : 0)), swap);
	if (event)
		prev->where = where, prev->ok = 1;
	if (shrt)
		return PT_LOG_REC_SHORT;
	pt_log_put64(p + PT_LOG_R_WHERE, where, swap);
	return PT_LOG_REC;
}

struct pt_logw_opt {
	uint32_t block_size; /* 0: PT_LOG_BLOCK_DEFAULT; raised to fit one record */
	int swap;            /* write the opposite byte order (tests) */
	uint64_t nonce;      /* 0: random */
	unsigned version;    /* 0: PT_LOG_VERSION; 3, 5, 6 or 7: that format, as older
	                      * writers wrote it (tests; 5: no thread identities or
	                      * descriptions; 6: no block index in the summary; 7: no
	                      * checkpoints) */
	uint64_t ckpt_bytes; /* (v8, APPEND) a checkpoint after this many bytes of blocks
	                      * at least; 0: PT_LOG_CKPT_BYTES (tests: smaller) */
	uint32_t chunk_size; /* (v9) the stream's chunk size: CHUNK blocks of up to as
	                      * many bytes of records, where the log takes them
	                      * (pt_logw_chunk); 0: none */
};

struct pt_logw_who {
	int32_t pid;
	uint64_t thread;
};

struct pt_logw_live {    /* LOOP: a block still in the file */
	uint64_t off, seq;
	uint32_t len, nev;
};

/* What the writer counts of the blocks it wrote, for the SUMMARY block
 * (logsum.c): APPEND and UNTIL_FULL logs only (a LOOP log keeps only its
 * last lap). */
/* (v10) A writer's waits for room in a no-loss stream (its
 * posixtrace_noloss_wait events): how many, their payloads (ns) added up,
 * the largest. */
struct pt_log_waits { uint64_t n, ns, max; };
/* n more waits of ns in all, the longest max, added to *w */
static inline void pt_log_waits_add(struct pt_log_waits *w, uint64_t n, uint64_t ns, uint64_t max)
{
	w->n += n;
	w->ns += ns;
	w->max = max > w->max ? max : w->max;
}
struct pt_logw_sumw {
	int32_t pid;
	uint64_t thread, count, first, last, ckpt;
	uint32_t gi;    /* (writer side) its place in the WRITER order */
	uint32_t flags; /* (writer side) PT_LOGW_W_* */
	struct pt_log_waits waits; /* (v10) the SUMMARY's WAITS entry */
};
/* (ckpt: the count the last checkpoint gave, writer side) */
#define PT_LOGW_W_DIRTY 1u /* new, or counted since the last checkpoint */
#define PT_LOGW_W_GONE  2u /* its process was gone, and every event of it in
                            * the log, at the checkpoint before (logsum.c) */
/* (v8) What a checkpoint holds that the writer no longer keeps: the final
 * WRITER_AT entries of writers it retired (ret), the OBJ entries it gave
 * (obj, the first of them number obj_first): offsets in the block. */
struct pt_logw_spill {
	uint64_t off, ret_first;   /* (ret_first: the number of its first retired writer) */
	uint32_t len, ret_at, nret, obj_at, nobj, obj_first;
};
struct pt_logw_sum {
	uint64_t events, first, last, gaps, last_lost;
	uint64_t count[PT_NIDS], tfirst[PT_NIDS], tlast[PT_NIDS];
	struct pt_logw_sumw *wr;   /* in order of first event */
	uint32_t nwr, wcap;
	uint32_t *hash, hcap;      /* writer (pid, thread) -> index + 1 in wr */
	struct pt_log_bidx *idx;   /* (v7) the block index: one entry per events block */
	uint64_t nidx, idx_cap;
	/* (v8) checkpoints: idx holds only the entries since the last one (the
	 * first is number idx_base); what it gave of the counts, names and map */
	uint64_t idx_base, ckpt_off, ckpt_seq, ckpt_at, tckpt[PT_NIDS];
	uint64_t named[PT_NIDS / 64];
	uint32_t obj_ckpt, ckpts, wr_given;
	uint64_t ckpt_n;           /* the next checkpoint when nidx reaches it (or the bytes) */
	int no_index;              /* the summary goes without the index (no room for it) */
	int failed;                /* out of memory once: no summary */
	/* (v8) writers gone, retired from wr once a checkpoint holds their
	 * final count; map entries dropped once a checkpoint holds them: read
	 * back from the checkpoints for the summary (logsum.c, "Spilling") */
	uint32_t nall;             /* writers in all: the WRITER order's length */
	uint32_t dirty;            /* writers PT_LOGW_W_DIRTY */
	uint32_t ret_n, ret_at;    /* the checkpoint being made: writers retired, where, */
	uint32_t obj_at;           /* ... and where its OBJ entries begin */
	uint64_t nret;             /* writers retired in all */
	int spill;                 /* 1: the log can be read back (spills allowed) */
	struct pt_logw_spill *sp;  /* the checkpoints that hold what was spilled */
	uint32_t nsp, sp_cap;
	unsigned char *sp_buf;     /* one of them, read back (summary) */
	uint32_t sp_k;             /* ... which (UINT32_MAX: none) */
	int sp_fd;                 /* the log, readable (-1: not open yet) */
	uint32_t sp_obj_i, sp_obj_off; /* the OBJ entry met last, and where */
};

/* A run of short event records of one type and one writer that the
 * caller of a span wrote (flushrun.c), counted as it wrote them: the
 * summary takes the run whole instead of reading its records again
 * (logsum.c).  off, end: its bytes in the block's records; first and
 * last: the timestamps of its first and last record, min and max the
 * smallest and largest. */
struct pt_logw_pre {
	uint32_t off, end, wi, id;
	uint64_t count, first, last, min, max;
};
#define PT_LOGW_PRE_MAX 32 /* runs a block keeps so (more are read again) */

struct pt_logw {
	/* results, for the caller to read */
	int err;             /* first write error, 0 if none */
	int full;            /* UNTIL_FULL: the STOP event is written, events refused */
	int resume_due;      /* UNTIL_FULL: an OVERFLOW is written, its RESUME not yet:
	                      * room for it is kept (PT_LOG_RESUME_BLK) */
	uint64_t lost;       /* LOOP: events in blocks overwritten */
	uint64_t dropped;    /* events discarded: log full, or their block failed to write */
	uint64_t written;    /* bytes written successfully (header included) */
	int gap_open;        /* an OVERFLOW or RESUME is the last event written: the
	                      * event after the loss is not in yet (rotation waits) */
	uint64_t hi_ts;      /* the latest time of an event written (ns; 0: none):
	                      * a rotation cuts once nothing older is left to write */
	/* set by the caller before pt_logw_finish(): events the stream lost */
	uint64_t stream_lost;

	/* private */
	int fd, policy, swap, finished;
	unsigned version;    /* written: 3, 5 or PT_LOG_VERSION */
	int seekable, o_append, is_fifo, is_sock;
	uint64_t ahead;      /* APPEND on a disk's file system: the file's blocks
	                      * reserved up to here (fallocate, size kept); 0:
	                      * none reserved, or not worth it (logwio.c) */
	int ahead_on;
	uint32_t cap;        /* largest block built in memory */
	uint32_t chunk_cap;  /* (v9) largest CHUNK block; 0: none (the header declares
	                      * the larger of the two) */
	unsigned char *chunk_buf; /* (v9) a CHUNK block converted, to count it (chunk_cap) */
	uint64_t nameless[PT_NIDS / 64]; /* (v9, set by the caller) types the stream has
	                      * no name for: a CHUNK block holds them without one */
	uint64_t chunk_until; /* (v9, set by the caller) no CHUNK block beyond this many
	                      * bytes written (a rotation's size); 0: no bound */
	int chunk_apart;     /* (v9, set by the caller) a CHUNK block only where no
	                      * other writer's next record falls in its time (a
	                      * cut into a new part waits: parts must not overlap) */
	uint64_t chunk_hi;   /* (v9, the caller's) the latest tick of a CHUNK block in
	                      * the log (a part) so far */
	uint32_t max_payload;
	uint64_t log_max, limit, pos, seq, nonce;
	uint64_t ckpt_every; /* (v8) bytes between checkpoints; 0: none */
	/* block being built */
	unsigned char *rec, *hdr;
	uint32_t rec_len, nrec, nev, nw, wlast;
	struct pt_log_prev prev;
	uint64_t base_ts, last_ts;
	struct pt_logw_who *wt, last_who;
	/* event names, re-emitted after each LOOP wrap */
	char (*names)[PT_LOG_NAME_MAX + 1];
	uint64_t known[PT_NIDS / 64];
	int names_due, emitting;
	uint64_t lap_new;    /* records in this lap that are not a copy of the names */
	uint32_t nsyn;       /* OVERFLOW and RESUME events in the block being built:
	                      * not counted as overwritten or dropped (the reader
	                      * tells the loss of recorded events) */
	/* the map of loaded code, re-emitted with the names: entries
	 * objs_base.. of nobjs (those before were spilled, logsum.c) */
	unsigned char **objs;
	uint32_t nobjs, objs_cap, objs_base;
	/* LOOP: blocks in the file, oldest first (a ring) */
	struct pt_logw_live *live;
	size_t live_head, live_n, live_cap;
	struct pt_logw_sum *sum;  /* NULL: no SUMMARY block (LOOP, format 3) */
	/* runs of the block being built already counted, in order */
	struct pt_logw_pre pre[PT_LOGW_PRE_MAX];
	uint32_t npre;
	/* (v8, set by the caller) is process pid gone, with every event of
	 * it given to the writer?  Its writers are then retired from the
	 * summary's memory at the next checkpoint (logsum.c); NULL: never */
	int (*pid_final)(void *ctx, int32_t pid);
	void *pid_final_ctx;
	/* writes handed to a second thread (logwbg.c); NULL: made here */
	struct pt_logw_bg *bg;
	/* (set by the caller) a thread that holds SIGXFSZ and SIGPIPE, every
	 * signal, all its life (the flusher): its writes skip the mask that
	 * every other thread's set around each write (pt_logw_put_at) */
	int quiet_set;
	pthread_t quiet;
};

/* (v9) A stream's records as its chunk holds them (docs/shm-format.md,
 * "Records"), written as one CHUNK block from where they lie: the kernel
 * copies them, nothing here reads them before; the writer then walks them
 * where they are (warm in this CPU's cache now) to make sure a reader
 * takes every record as it is, checksum them and count them for the
 * summary, and writes the block's header last.  The caller says what the
 * reader needs to convert
 * them: the chunk's base tick, the caller address of the record before
 * the first (0 at the chunk's start), the clock segment their ticks are
 * in (its first tick, multiplier and time: ns = nsoff + ((tick - seg) *
 * mult >> 32)) and the first record's time (base). */
struct pt_logw_chunk {
	int32_t pid;
	uint64_t thread;
	const void *recs;
	uint32_t len, nev;
	uint64_t btick, addr, seg, mult, base;
	int64_t nsoff;
	uint64_t below;      /* every tick is below it, else not taken (UINT64_MAX: any) */
	/* asked once the records are in the file and checked, before the
	 * header makes them the log's: still the records meant?  (0: the
	 * block is left out, as when not taken; NULL: never asked) */
	int (*still)(void *ctx);
	void *still_ctx;
	/* out: the last record's time, tick and caller address; when not
	 * taken for want of a name (a type neither named in the log nor in
	 * w->nameless), that type, else PT_NIDS */
	uint64_t last_ns, last_tick, last_addr;
	uint32_t unnamed;
};
/* The longest records pt_logw_chunk() takes now (0: it takes none: a log
 * of another kind, or a failed one). */
uint32_t pt_logw_chunk_max(const struct pt_logw *w);
/* 1: the events are the log's (or, if the write failed, dropped and
 * counted so, w->err set, as a block's); 0: not taken, nothing changed in
 * what the log holds (a record it cannot hold as it is, a type not named
 * in it yet, a tick at or past c->below, c->still said no): the caller
 * takes them its usual way. */
int pt_logw_chunk(struct pt_logw *w, struct pt_logw_chunk *c);

/* fd: open for writing (else EBADF); LOOP and UNTIL_FULL need a regular
 * file without O_APPEND and log_max >= pt_logw_min_size() (else EINVAL);
 * APPEND takes any writable fd and ignores log_max.  A regular file is
 * truncated and the header written at offset 0 (errors: ENOSPC, EFBIG...). */
int pt_logw_init(struct pt_logw *w, int fd, const struct pt_attr_img *attr, int log_policy,
                 uint64_t log_max);
int pt_logw_init_opt(struct pt_logw *w, int fd, const struct pt_attr_img *attr,
                     int log_policy, uint64_t log_max, const struct pt_logw_opt *opt);
/* (logwbg.c) From now on, w's blocks are copied into ring (size bytes,
 * the caller's, untouched after the stop; at least two of the largest
 * blocks) and written to the file by a thread of w's own, which makes
 * each block's CRCs and starts the file's write-back every sync_step
 * bytes (0: never), while the caller goes on.  prealloc: the bytes the
 * log is expected to take from here, reserved in the file first
 * (fallocate, its size kept), what it did not take freed at the stop
 * (0: none).  An APPEND log on a regular file without O_APPEND only
 * (else EINVAL; or the error of making the thread): the caller then
 * writes as before.  A write error is kept and returned by every later
 * write, the drain and the stop.  pt_logw_finish and pt_logw_free stop
 * the thread (the finished log is then all written, not yet synced). */
int pt_logw_bg_start(struct pt_logw *w, void *ring, size_t size, uint64_t sync_step,
                     uint64_t prealloc);
/* Waits until all put so far is written: 0 or the write error. */
int pt_logw_bg_drain(struct pt_logw *w);
/* Drains, then ends the thread: 0 or the write error. */
int pt_logw_bg_stop(struct pt_logw *w);
/* The blocks an APPEND log's writer reserved past its end (logwio.c)
 * given back, if the file system will: at the end of the log
 * (pt_logw_finish; pt_logw_free is memory only). */
void pt_logw_ahead_end(struct pt_logw *w);
uint64_t pt_logw_min_size(const struct pt_attr_img *attr);
/* One entry of the map of loaded code (kept, and written again after
 * each LOOP wrap like the names).  0, ENOMEM, or a write error. */
int pt_logw_obj(struct pt_logw *w, const struct pt_ext_obj *o);
/* Binds id (< PT_NIDS) to name (1..63 characters; EINVAL otherwise). */
int pt_logw_name(struct pt_logw *w, unsigned id, const char *name);
/* Buffers one event; writes a block when one is full.  Returns 0, ENOSPC
 * when UNTIL_FULL refused it (w->full), or the error of a write it did. */
int pt_logw_event(struct pt_logw *w, uint64_t ts_ns, int32_t pid, uint64_t thread,
                  uint64_t addr, unsigned id, int truncated, const void *data, uint32_t len);
/* The same for a RESUME (or any event with no data) that carries the
 * stream's loss count, lost, when it was reported. */
int pt_logw_event_lost(struct pt_logw *w, uint64_t ts_ns, int32_t pid, uint64_t thread,
                       uint64_t addr, unsigned id, uint64_t lost);
/* Runs of events encoded by the caller straight into the block being
 * built (the flusher's fast path, flushrun.c).  Open: 1 and *s filled if
 * the block can take events of (pid, thread) from ts on without being
 * written out first; 0: use pt_logw_event(), which makes room.  The
 * caller writes records at s->p (at most s->room bytes, whole 8-byte
 * words may be stored up to that bound), in time order, each timestamp in
 * [s->base, s->base + UINT32_MAX], writer index in s->where, each header
 * through pt_log_put_rec() with &s->prev, and closes with what it wrote
 * (nev 0: nothing).  Events of another writer: pt_logw_span_who() first,
 * which makes it the span's writer (s->where, s->wi, s->who); the writer
 * of the span's last event must be the span's writer when it is closed. */
#define PT_LOGW_SPAN_ADD 64 /* writers a span may add to the block */
struct pt_logw_span {
	unsigned char *p;
	uint32_t room, max_payload;
	uint64_t base, where;
	struct pt_log_prev prev;
	int swap;
	uint32_t wi;
	struct pt_logw_who who;
	uint32_t nadd;      /* writers new to the block, indexes w->nw, w->nw + 1... */
	struct pt_logw_who add[PT_LOGW_SPAN_ADD];
	uint32_t npre;      /* runs counted by the caller (off, end from s->p) */
	struct pt_logw_pre pre[PT_LOGW_PRE_MAX];
};
int pt_logw_span_open(struct pt_logw *w, int32_t pid, uint64_t thread, uint64_t ts,
                      struct pt_logw_span *s);
/* 1 if the block takes events of (pid, thread) too, with need bytes of
 * records in all (those written so far and the next one); else 0 and
 * nothing changed. */
int pt_logw_span_who(const struct pt_logw *w, struct pt_logw_span *s, int32_t pid,
                     uint64_t thread, uint32_t need);
void pt_logw_span_close(struct pt_logw *w, const struct pt_logw_span *s, uint32_t bytes,
                        uint32_t nev, uint64_t last_ts);
/* A run of short event records of type id by the span's writer, already
 * written at s->p + off .. s->p + end, with count records, counted by the
 * caller (struct pt_logw_pre): the summary need not read them again.
 * Ignored when the span keeps as many already. */
static inline void pt_logw_span_pre(struct pt_logw_span *s, const struct pt_logw_pre *r)
{
	if (s->npre < PT_LOGW_PRE_MAX)
		s->pre[s->npre++] = *r;
}
int pt_logw_sync(struct pt_logw *w);
int pt_logw_finish(struct pt_logw *w, const struct posix_trace_status_info *st);
void pt_logw_free(struct pt_logw *w);

/* ------------------------------------------------------------- reader */

struct pt_logr_item {    /* one step of the reading order */
	uint64_t off, seq;
	uint64_t ts;         /* error items: the timestamp to report */
	uint64_t max_ts;     /* the block's largest timestamp (pt_logr_seek) */
	uint64_t min_ts;     /* its smallest (pt_logr_stop_after) */
	uint64_t last_ts;    /* (indexed) its last timestamp, as the index says */
	uint32_t len;
	uint32_t error;      /* 0: a block of events; else an error number */
	int has_lost;        /* the block has a record flagged LOST */
	int has_ev;          /* it has event records (as the index or the scan says) */
	uint64_t later_min;  /* the smallest min_ts of this block and those after it up
	                      * to an error item (UINT64_MAX: none): pt_logr_order() */
};

/* Blocks whose time ranges overlap (a late event: stamped before events
 * of other threads written before it) are read together and their events
 * returned in timestamp order (logiter.c): each block split into runs in
 * which timestamps do not step back, merged by a heap.  A block is loaded
 * only once it may hold the next event (a sliding window: the blocks that
 * overlap the time being read), and let go once its runs are read.  At
 * most PT_LOGR_MERGE_BYTES of blocks at once (when more would be needed,
 * a late event far back, the rest is read from the next block on, as a
 * new merge) and PT_LOGR_MERGE_RUNS runs (beyond that, one block's at
 * least). */
#define PT_LOGR_MERGE_BYTES (64u << 20)
#define PT_LOGR_MERGE_RUNS  (1u << 16)
struct pt_logr_run {     /* records [off, end) of a block, in time order */
	uint32_t off, end;
	uint64_t where, ts;  /* where of the event before off; ts: off's */
};
struct pt_logr_mblk {    /* a block being merged (a slot: its buffer kept) */
	unsigned char *buf;
	uint32_t cap, nw, gen;
	uint32_t len;        /* its length in the file (merge_bytes) */
	uint64_t base;
	struct pt_logr_run *run; /* its runs */
	uint32_t nrun, run_cap;
	uint32_t live;       /* its runs with an event left (0: the slot is free) */
	uint16_t map[PT_LOG_MAX_WRITERS]; /* writer index -> batch's (gen) */
};
struct pt_logr_merge {
	int on;              /* merging: from item cur on, up to next (not loaded) */
	int full;            /* no further block is loaded (a bound met, or one
	                      * that did not load): the merge ends before next */
	size_t next;
	uint64_t hi;         /* the largest timestamp of the blocks it loaded */
	uint64_t load_ts;    /* next's later_min (UINT64_MAX: none to load) */
	uint64_t seq;        /* the next run's number (file order) */
	struct pt_logr_mblk *blk;
	size_t nblk, blk_cap; /* slots made, and room */
	uint32_t *bfree;     /* the free slots (blk_cap of room) */
	size_t nbfree;
	struct pt_logr_hent { uint64_t ts, run; uint32_t blk, idx; } *heap; /* runs
	                      * with an event left, their next timestamp and number:
	                      * smallest (ts, run) first; their block and index in it */
	size_t nrun, nheap, heap_cap; /* nrun: the runs of the blocks held */
	uint32_t gen;        /* batch number (writer maps) */
	uint64_t ovf_run;    /* the last event taken was an OVERFLOW, of this run
	                      * (UINT64_MAX: not): its RESUME comes next */
	uint64_t ovf_ts;
};

struct pt_logr {
	/* from the log */
	struct pt_attr_img attr;
	int policy, swap, has_status, version;
	struct posix_trace_status_info status;
	uint64_t lost, dropped, log_max, nonce, size;
	uint64_t stream_lost;  /* from a v2 END block; has_stream_lost says so */
	int has_stream_lost;
	int last_lost_ok;      /* the last event returned carried a loss count: */
	uint64_t last_lost;    /* this one */
	int wrapped;           /* LOOP: blocks were overwritten (the oldest kept is not 1) */
	int wrap_state;        /* 0: its OVERFLOW is due, 1: its RESUME, 2: told (or none) */
	uint64_t wrap_told;    /* the count the wrap's RESUME carried, once returned */
	uint64_t lost_rec_seq; /* the newest good block with a RESUME's count */
	int lost_kept;         /* ... is one the log keeps */
	uint32_t max_block;

	/* private */
	int fd;
	char (*names)[PT_LOG_NAME_MAX + 1];
	uint64_t *name_seq;
	uint64_t known[PT_NIDS / 64];
	struct pt_objstore objs; /* the map of loaded code (v3), duplicates left out */
	uint64_t *obj_hash;      /* each one's hash (pt_logr_keep_obj) */
	size_t obj_hcap;
	uint32_t *obj_tab;       /* index + 1 of objs by obj_hash (open addressing) */
	size_t obj_tcap;
	struct pt_logr_item *items;
	size_t nitems, cur;
	unsigned char *buf;  /* one block; grown to the largest one in the log */
	uint32_t buf_cap;
	int loaded;
	int fresh;           /* the block loaded is not yet looked at for merging */
	uint32_t roff, rleft, nw;
	uint64_t where; /* the where of the block's last event record (v4 short records) */
	uint64_t base_ts;
	size_t full_len;     /* payload length of the last event returned */
	/* what the last pt_logr_check() of an events block saw besides */
	uint64_t chk_max_ts, chk_min_ts;
	int chk_lost;
	int chk_sorted;      /* its event timestamps never step back */
	int chk_meta;        /* it has a name, an OBJ record or a LOST count: what a
	                      * check with names keeps (else one check is enough) */
	int file_order;      /* PT_LOGR_FILE_ORDER */
	struct pt_logr_merge m;
	uint64_t merge_cap;  /* (tests) the merge's bound in bytes (0: PT_LOGR_MERGE_BYTES) */
	uint64_t merge_bytes, merge_peak; /* the bytes of the blocks the merge holds
	                      * (their lengths in the file), and the most since open */
	uint64_t told_early; /* RESUMEs told before the time recorded (a late event in
	                      * their gap, merged): since open or rewind */
	unsigned last_id;    /* the id of the last event returned (an OVERFLOW: a group
	                      * merged after it starts with its RESUME); 0 after an
	                      * event the reader makes */
	uint64_t out_ts;     /* the latest timestamp returned (error events and a
	                      * wrap's pair are stamped no earlier) */
	size_t stop;         /* items from this one on are not read (pt_logr_stop_after) */
	/* (v7) opened through the summary's block index: no block was read at
	 * open; each is checked when read, against its index entry too */
	int indexed;
	uint64_t bytes_read; /* bytes read from the file so far (tests) */
	/* (scanned at open) the events of the blocks that will be read,
	 * counted as the writer counts its summary (logsum.c), in the order
	 * of the file; census_ok once order() found that order is the
	 * reading order and every block counted is read (no wrap, no stale
	 * block), with the reader's error events added */
	struct pt_logw *census;
	int census_ok;
	int census_ckpt;     /* (v8) opened from checkpoints: the blocks before the last
	                      * one are counted as the writer counted them (as a
	                      * summary is), checked only when read */
	uint64_t census_seq, census_blocks, census_errors;
};

/* fd: a regular file open for reading (EBADF if not readable); anything
 * that is not a valid log: EINVAL.  The fd stays the caller's. */
int pt_logr_open(struct pt_logr *r, int fd);
/* The same; flags PT_LOGR_SCAN: scan every block even if the log has a
 * block index (tests, fuzzing: the two ways agree). */
#define PT_LOGR_SCAN 1
/* PT_LOGR_FILE_ORDER: blocks whose times overlap are not merged: each
 * block's events in the order of the file (tests: the order written) */
#define PT_LOGR_FILE_ORDER 2
int pt_logr_open_opt(struct pt_logr *r, int fd, int flags);
/* The next event in order; *unavailable = 1 at the end.  A corrupt stretch
 * of the log reads as one POSIX_TRACE_ERROR event whose data is an int. */
int pt_logr_next(struct pt_logr *r, struct posix_trace_event_info *ev, void *buf,
                 size_t cap, size_t *len, int *unavailable);
void pt_logr_rewind(struct pt_logr *r);
/* The next events as pt_logr_next() returns them, without payloads, in
 * a batch (pt_ext_next_batch() in src/ext.h); b->n == 0 at the end. */
int pt_logr_next_batch(struct pt_logr *r, struct pt_ext_batch *b);
/* The next event read is the first of the first block that may hold an
 * event stamped at or after ts: every event before it is stamped before
 * ts.  *lost_before: the loss count of the last LOST record before that
 * point (0 if none), plus, past the start of a wrapped log, what its wrap's
 * RESUME counted (as a reader from the start would have it: the count of
 * at_resume + wrap_at_resume, src/ext.h).  0, or an error reading the
 * blocks before it. */
int pt_logr_seek(struct pt_logr *r, uint64_t ts, uint64_t *lost_before);
/* Reading ends (the end of the log, as if) once no block left holds an
 * event stamped at or before ts, nor damage met before it (a late event
 * in a later block is still read: each block's smallest timestamp is
 * known at open).  UINT64_MAX: to the end again.  Kept by rewind and
 * seek. */
void pt_logr_stop_after(struct pt_logr *r, uint64_t ts);
void pt_logr_close(struct pt_logr *r);
const struct pt_attr_img *pt_logr_attr(const struct pt_logr *r);
int pt_logr_status(const struct pt_logr *r, struct posix_trace_status_info *st);
const char *pt_logr_name(const struct pt_logr *r, unsigned id);
/* The smallest named id >= from, or -1. */
int pt_logr_next_id(const struct pt_logr *r, unsigned from);


/* The summary of a log (v5) read without its events (logsum.c): the
 * header, the END block at the end of the file and the SUMMARY blocks
 * just before it.  0; ENOENT: the log has none (older format, LOOP,
 * cut short, or a summary that does not check); EINVAL: not a log. */
struct pt_log_summary {
	struct pt_attr_img attr;
	struct posix_trace_status_info status;
	uint64_t lost, dropped, stream_lost;   /* from the END block */
	uint64_t events, first, last, gaps, last_lost;
	uint64_t count[PT_NIDS], tfirst[PT_NIDS], tlast[PT_NIDS];
	char (*names)[PT_LOG_NAME_MAX + 1];
	uint64_t known[PT_NIDS / 64];
	struct pt_logw_sumw *wr;
	uint32_t nwr, wr_cap;   /* (capacities: grown by doubling) */
	struct pt_objstore objs; /* the map's entries */
	/* (v7) the block index: its entries counted (nidx), kept only when
	 * want_index; where the first SUMMARY block is and its sequence number */
	int want_index;
	struct pt_log_bidx *idx;
	uint64_t nidx, idx_cap, sum_off, sum_seq;
	/* (v8) the first index entry's number (its INDEX entries may begin
	 * after the checkpoints'), and the last checkpoint before (CHAIN) */
	uint64_t idx_base, chain_off, chain_seq;
	int idx_based, has_chain;
	int index_only; /* (set by the caller) only the INDEX and CHAIN entries kept */
	uint32_t waits_next; /* (v10) the least WRITER place the next WAITS entry may name */
	uint64_t bytes_read; /* from the file (tests) */
};
int pt_log_summary_read(int fd, struct pt_log_summary *s);
void pt_log_summary_free(struct pt_log_summary *s);

/* (a log read by a scan at open) What its events are, counted as its
 * writer counts the SUMMARY (the same code), plus the reader's error
 * events, and the error events (damaged stretches): 0; ENOENT when the
 * log was opened through its block index, or the count is not exact (a
 * wrapped LOOP log, blocks out of order). */
int pt_logr_census(const struct pt_logr *r, const struct pt_logw_sum **sum,
                   uint64_t *damaged);

#endif
