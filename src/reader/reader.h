/*
 * reader.h -- the analyzer's side of a live stream: the merge of its
 * writers' chunks by timestamp, losses, validation of everything read
 * (read.c), and the map of loaded code taken from the segment
 * (objread.c).  Above ring/ (it gives chunks back to the pool).  The
 * reader works on a stream (struct pt_stream, below), which a trace id
 * holds (control/'s struct pt_trid, its table and its life).
 */
#ifndef POSIXTRACE_READER_H
#define POSIXTRACE_READER_H

#include "../shm/mapent.h"
#include "../ring/ring.h"

struct pt_ractive {          /* a chunk being read */
	uint32_t idx;
	uint32_t off;       /* next record */
	uint32_t count;     /* records taken */
	uint32_t commit;    /* last commit seen */
	uint64_t seq;
	uint64_t base_ts;
	uint64_t next_ts;   /* timestamp of the next record, if any */
	uint64_t last_ts;   /* timestamp of the last record taken */
	uint64_t pub;       /* LOOP: the progress it last published (claim) */
	uint64_t addr;      /* caller address of the last record taken (a short
	                     * record's own) */
	int has_next;
	uint32_t busy_word; /* its commit word when first seen marked in flight, */
	uint64_t busy_since; /* ... and when (mono ns; 0: not seen so) */
	uint64_t alive_at;  /* when its writer's process was last found alive */
	int32_t next;       /* the same writer's next chunk, or -1 */
	int gap;            /* chunks of its writer are missing before it (its
	                     * serial, layout.h): mark a loss before its first
	                     * record */
	int no_chunk;       /* (the flusher's, flushrun.c) its records cannot go
	                     * into a CHUNK block as they are: the usual way */
};

struct pt_loss { uint64_t ts, g; }; /* g: its report, or PT_NO_REPORT */
struct pt_losses {            /* losses, sorted by timestamp */
	struct pt_loss *e;
	uint32_t n, cap;
};

struct pt_rwriter {          /* one writer: (pid, thread, nesting level) */
	uint64_t thread;
	int32_t pid;
	uint32_t level;
	int32_t head, tail; /* its chunks, oldest first */
	struct pt_losses lost; /* losses in its sequence not yet marked */
	uint64_t pairs_at;  /* rd->pairs when its last event was returned */
	uint64_t unknown_seen; /* rd->unknown when it was last marked */
	uint32_t serial;    /* serial of the last chunk of it queued, */
	int serial_ok;      /* ... if one was */
	int fresh;          /* what came before its first chunk queued is not
	                     * known: its first event is marked if loss
	                     * reports were overwritten (rd->reports_lost) */
};

struct pt_reader {
	uint64_t next_aseq;          /* next acquisition-log entry to look at */
	uint64_t pend[16];           /* log entries stepped over, half-published */
	unsigned npend;
	uint64_t stuck_q, stuck_since; /* a half-published entry we wait for */
	uint64_t hold;               /* ... meanwhile, records stamped at or after
	                              * this wait (chunks.c) */
	struct pt_ractive *ck;       /* chunk pool, linked per writer */
	uint32_t ck_cap;
	int32_t ck_free;
	struct pt_rwriter *w;
	uint32_t nw, w_cap;
	/* the hot chunks (read.c, hot_now): how many, the most in use in
	 * this window and the last, when last looked, when the window began;
	 * room for a trim */
	uint32_t hot, hot_peak[2];
	uint64_t hot_look_ms, hot_win_ms;
	uint32_t *hot_tmp;
	uint64_t loss_gen;           /* losses taken from the segment so far */
	uint64_t loss_pend[64];      /* losses seen half-published */
	unsigned nloss_pend;
	struct pt_losses loss;       /* losses not reported yet */
	int need_resume, start_pending;
	int flowing;                 /* a blocking read returned an event last (api/getnext.c) */
	uint64_t pairs;              /* OVERFLOW/RESUME pairs returned so far */
	uint32_t run_w;              /* 1 + the writer read_again() may go on with, or 0 */
	uint64_t run_limit;          /* ... while its next record is earlier than this */
	uint64_t run_cap;            /* the time read when that run was allowed */
	uint64_t gap_lost;           /* the report counts of the gap being told */
	struct { uint64_t g, n; } told[64]; /* reports told lately, their counts then */
	uint64_t told_next;
	uint64_t lost_at_resume;     /* events lost in the gaps reported so far */
	struct { uint32_t idx, looks; uint64_t seq, since; } steal_wait[8]; /* chunks lost */
	unsigned nsteal_wait;        /* under the reader whose thief may not have
	                              * reported yet, and since when (mono ns) */
	uint64_t lost_forgot;        /* lost before a clear and never told: not in
	                              * any gap, nor in the total (pt_read_lost) */
	uint64_t last_out;           /* the latest tick of an event returned */
	uint64_t last_ev;            /* ... of a recorded event (not synthesized) */
	uint64_t late;               /* recorded events returned after a later one */
	/* events in flight (read.c, in_flight): how long a writer's mark is
	 * waited for (ns; 0: never, the flusher's), the clock's slack (ticks:
	 * records stamped this close to the look wait), set at the first read */
	uint64_t late_ns, slack;
	int late_set;
	int held;                    /* the last read found none because of a
	                              * writer in flight (api/getnext.c) */
	uint64_t open_lag;           /* (the flusher between flushes, its own to
	                              * set: flush/flusher.c) a record in a chunk
	                              * still open, stamped less than this many
	                              * ticks before the look, waits while no
	                              * writer has records in a sealed chunk (its
	                              * chunk is sealed soon and goes whole; a
	                              * sealed one is never held back); 0: none */
	uint64_t ovf_tick;           /* the tick of the OVERFLOW waiting for its RESUME */
	uint64_t unknown;            /* losses whose writer is not known */
	uint64_t reports_lost;       /* loss reports overwritten before they were
	                              * read: their writers' serials place them */
	uint64_t start_ts;
	uint64_t reap_aseq;          /* acq_seq when dead writers' chunks were last looked for */
	uint32_t epoch;
	/* the map of loaded code taken from the segment (objread.c); kept
	 * across clear, as the segment keeps it */
	struct pt_ext_obj *objs;
	size_t nobjs, objs_cap;
	uint32_t obj_first;          /* entries below this one are all taken */
	uint64_t obj_stuck, obj_stuck_since; /* 1 + obj_first while not complete, since (mono ns) */
	uint64_t obj_taken[PT_OBJ_SLOTS / 64];
	uint64_t obj_lost;           /* the segment's count, as of the last LOST entry */
	unsigned obj_nlost;          /* LOST entries made */
	size_t obj_retired[16];      /* entries of each kind retired (pt_objs_retire) */
	size_t obj_retire_at;        /* entries below which a retire pass is not worth it */
	/* where the last look for entries of each class (objects, threads,
	 * processes, types: api/ext.c) stopped: k of them before objs[i];
	 * a caller that reads on from there does not go through the
	 * entries before again (reset when entries are retired) */
	size_t obj_cur_i[4], obj_cur_k[4];
	/* an event already taken, returned after the RESUME that precedes it */
	int stashed;
	struct posix_trace_event_info st_ev;
	unsigned char *st_buf;
	uint32_t st_len;
};

/* a stream's lock (the functions are lock.h's) */
typedef _Atomic int pt_lock_t;

struct pt_flusher;

/* A stream as the controller that made it (or joined it) holds it: the
 * segment mapped here, the trusted copies of what it was made with, and
 * what this process keeps to read it (the reader's state) and to write
 * into it (the flusher and the writers of system events, flush/'s).  A
 * trace id (control/control.h's struct pt_trid) holds one; a log opened
 * for reading holds one too, with kind PT_KIND_LOG and nothing mapped.
 * reader/ and flush/ work on it (as t) and never see the trace id. */
struct pt_stream {
	pt_lock_t lock;           /* the trace id's: control calls and the reader */
	int kind;                 /* PT_KIND_STREAM or PT_KIND_LOG */
	pid_t pid;                /* the traced process */
	int fd;                   /* memfd holding the segment; its lock is the stream's life */
	uint64_t region_off;      /* where the stream's region begins in it */
	struct pt_ctl *tctl;      /* the traced process's control segment, mapped here, or NULL */
	struct pt_hdr *hdr;
	size_t map_size;
	struct pt_view view;      /* pointers into the segment, for the reader */
	struct pt_tw sys_tw[2];   /* the id's own writers of system events, */
	pthread_t sys_thr[2];     /* one per thread using it (flush/sysevent.c) */
	unsigned sys_last;        /* the one written last */
	struct pt_attr_img attr;  /* trusted copy */
	struct pt_clock clk;      /* trusted copy; points added as it is read */
	struct pt_reader rd;
	struct pt_flusher *fl;    /* a stream with a log: its writer (flush/flusher.c) */
};

#define PT_KIND_STREAM 0
#define PT_KIND_LOG    1

void pt_reader_reset(struct pt_stream *t);
/* the stream's count of lost events, as the reader's gaps add up to it */
uint64_t pt_read_lost(const struct pt_stream *t);
void pt_reader_free(struct pt_reader *rd);
/* the bound of a wait for an event in flight; may chunk idx's writer be alive */
uint64_t pt_read_late_ns(struct pt_stream *t);
int pt_read_writer_alive(struct pt_stream *t, uint32_t idx);
/* the next event of a live stream now: 1, or 0 if none (under t's lock) */
int pt_read_next(struct pt_stream *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                 size_t *dlen);
/* The flusher's fast path (read.c; used by flushrun.c): the next records
 * of every writer, read in bulk and merged by the caller.  Each part is
 * one writer's chunk: its records from a->off to a->commit, those stamped
 * before limit.  The caller takes them in timestamp order, the earliest
 * first, and stops at a tie, at max records, before a record at or after
 * its part's limit, and when a part with !open is read to its end (that
 * writer's next chunk may hold something earlier); a part with open set
 * simply has nothing more.  It then says how far it got in each part
 * (off, n, tick and addr of the last record taken) and calls
 * pt_read_merge_end(); nothing changes until then. */
#define PT_MERGE_MAX 64
struct pt_read_part {
	struct pt_rwriter *w;
	struct pt_ractive *a;
	const pt_word *chunk;   /* the chunk's first record */
	uint64_t limit;
	int open;
	uint32_t off, n;        /* set by the caller */
	uint64_t tick, addr;
};
struct pt_read_merge {
	uint32_t n, max;
	struct pt_read_part p[PT_MERGE_MAX];
};
int pt_read_run_ready(struct pt_stream *t);
/* Records in open chunks stamped less than ns before a look wait, from
 * now on (0: none wait; rd->open_lag); under t's lock. */
void pt_read_open_lag(struct pt_stream *t, uint64_t ns);
/* The earliest tick of a record not read yet (UINT64_MAX: none now);
 * under t's lock. */
uint64_t pt_read_earliest(struct pt_stream *t);
int pt_read_merge_begin(struct pt_stream *t, struct pt_read_merge *m);
int pt_read_merge_end(struct pt_stream *t, struct pt_read_merge *m);

/* objread.c: take what the traced processes added to the map of loaded
 * code (locked); the index of the first new entry in t->rd.objs */
size_t pt_objs_collect(struct pt_stream *t);
/* The entries below `upto` (already written to the log) of processes
 * that are gone and hold no chunk of the stream (their events all read),
 * and of threads gone likewise, dropped from t->rd.objs, the others
 * moved down in order (locked); how many were dropped below upto.  Only
 * a pass now and then does anything: when the entries have doubled since
 * the last; _now: a pass now (a log cut into a new part: what it
 * begins with). */
size_t pt_objs_retire(struct pt_stream *t, size_t upto);
size_t pt_objs_retire_now(struct pt_stream *t, size_t upto);
/* The same, and also those after upto of processes gone that hold no
 * chunk of the stream any more (all their events read or overwritten: a
 * LOOP stream, written or copied only at the end). */
size_t pt_objs_retire_unheld(struct pt_stream *t, size_t upto);
/* ------------------------------- between the reader's files (not above) */
#define NONE (-1)
#define PT_MAX_WRITERS 65536 /* threads x levels a reader keeps apart */
/* a record stamped after the reader's horizon waits for the next look,
 * unless it claims to be further ahead than this (ticks): then its stamp
 * is not waited for (a writer's clock that is wrong, or a lie) */
#define PT_HOLD_MAX (1ull << 32)
enum { TAKE_OK, TAKE_GONE, TAKE_BAD };
/* writers.c */
void pt_loss_add(struct pt_losses *l, uint64_t ts, uint64_t g);
int pt_loss_upto(struct pt_losses *l, uint64_t ts);
void pt_loss_take(struct pt_reader *rd, const struct pt_hdr *h, uint64_t ts);
uint64_t pt_loss_growth(struct pt_reader *rd, const struct pt_hdr *h);
void pt_loss_note(struct pt_reader *rd, uint64_t ts, uint64_t g);
void pt_losses_collect(struct pt_stream *t);
uint64_t pt_losses_later(const struct pt_reader *rd, const struct pt_hdr *h);
void pt_lost_rest(struct pt_stream *t, struct pt_rwriter *w, const struct pt_ractive *a);
int pt_thief_busy(struct pt_stream *t);
struct pt_rwriter *pt_rwriter_of(struct pt_reader *rd, int32_t pid, uint64_t thread,
                                 uint32_t level);
void pt_rwriters_trim(struct pt_reader *rd);
/* chunks.c */
void pt_rwriter_pop(struct pt_reader *rd, struct pt_rwriter *w);
void pt_reader_discover(struct pt_stream *t);

/* a chunk being read: is it still in its life, its next record, taking it
 * (LOOP) -- on the per-event path, so inline */
/* 0 if the chunk is still in a's life, else 1. */
static inline int pt_rchunk_gone(const struct pt_stream *t, const struct pt_ractive *a)
{
	uint64_t ss = atomic_load_explicit(&t->view.chunks[a->idx].ss, memory_order_acquire);
	unsigned state = PT_SS_STATE(ss);
	return PT_SS_SEQ(ss) != a->seq || (state != PT_CK_OPEN && state != PT_CK_SEALED);
}

/* Look at the next record of a, if one is complete.  0 if the chunk has
 * been overwritten: then nothing read from it may be used, and has_next
 * and next_ts stay what the last look that found it alive said (the time
 * of the first record the reader lost, pt_lost_rest). */
static inline int pt_rchunk_peek(const struct pt_stream *t, struct pt_ractive *a)
{
	const struct pt_view *v = &t->view;
	uint64_t next_ts = 0;

	if (a->off + PT_REC_HDR > a->commit) {
		uint32_t c = PT_COMMIT_POS(
			atomic_load_explicit(&v->chunks[a->idx].commit, memory_order_acquire));
		if (c <= v->chunk_size && c >= a->commit)
			a->commit = c;
	}
	int has_next = a->off + PT_REC_SHORT <= a->commit;
	if (has_next) {
		const pt_word *rec = (const pt_word *)(pt_chunk_data(v, a->idx) + a->off);
		next_ts = pt_rec_tick_at(rec, a->commit - a->off, a->base_ts);
	}
	PT_SEQ_FENCE();
	if (pt_rchunk_gone(t, a))
		return 0;
	a->has_next = has_next;
	if (has_next)
		a->next_ts = next_ts;
	return 1;
}

/* LOOP: take the next record of chunk a by moving the chunk's reader
 * progress on with a CAS.  A thief closes the progress with a CAS before
 * it reuses the chunk (ring/pool.c), so each record is counted exactly once:
 * read here, or lost by the thief.  0: the thief came first.  (Only a
 * thief reads the progress, so other policies keep none.) */
static inline int pt_rchunk_claim(const struct pt_stream *t, struct pt_ractive *a, uint32_t off,
                                  uint32_t count)
{
	uint64_t want = PT_RD_POS(a->seq, off, count), exp = a->pub;

	if (!atomic_compare_exchange_strong_explicit(&t->view.chunks[a->idx].rd_pos, &exp, want,
	                                             memory_order_acq_rel, memory_order_relaxed))
		return 0;
	a->pub = want;
	return 1;
}

#endif
