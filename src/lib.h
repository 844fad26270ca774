/*
 * lib.h -- process-local state of libposixtrace and the interfaces between
 * its files.  The shared-memory format is in layout.h; this header is what
 * one process keeps about the streams it records into and controls.
 */
#ifndef POSIXTRACE_LIB_H
#define POSIXTRACE_LIB_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <trace.h>
#include "clock.h"
#include "ext.h"
#include "layout.h"

#define PT_API __attribute__((visibility("default")))
#define PT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define PT_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define PT_ATTR_MAGIC 0x70744154u
#define PT_VERSION_STRING "posixtrace 0.1.0"

/* ------------------------------------------------ recording side (record.c) */

/* A view of a stream this process records into: pointers into its
 * mapping and copies of its geometry.  Views are never changed while a
 * thread may use them: attaching fills a free view and then publishes its
 * index in pt_proc.cur (see attach.c). */
struct pt_slot {
	struct pt_hdr *hdr;
	struct pt_chunk *chunks;
	char *data;
	_Atomic uint64_t *acq_log, *seal_log;
	struct pt_name *names;
	struct pt_obj *objs;  /* the map of loaded code: PT_OBJ_SLOTS entries */
	uint32_t chunk_size, nchunks, sealed_max, log_mask;
	uint32_t max_data;
	uint64_t budget;   /* stream-min-size: sealed bytes the stream holds */
	/* a copy of the stream's filter in process memory, tested before any
	 * stream is touched (all zero, "nothing filtered", where the copy
	 * cannot be kept current: then write_one's test decides) */
	_Atomic uint64_t filter[PT_NIDS / 64];
	_Atomic uint32_t gen; /* a new value each time the view is filled */
	int policy;     /* stream-full policy */
	int inherit;
	size_t map_size;
	/* where the segment lives, for the controller-liveness check */
	int home_fd;
	uint32_t lock_byte;
	uint64_t ticket;                /* the control slot's, when attached */
	uint64_t owner_every;           /* ticks between two checks */
	_Atomic uint64_t owner_checked; /* tick of the last check */
	_Atomic int dead;               /* found dead: detach at the next resync */
	int test_hdr_filter;            /* the copy is all zero: test the stream's own filter */
	/* no-loss mode: the bound on one wait for room (ms, clamped), 0: off;
	 * and whether a wait ran out since a writer last got a chunk, after
	 * which writers drop at once rather than each wait the bound out */
	uint32_t noloss_ms;
	_Atomic uint32_t noloss_gave_up;
};

#define PT_VIEWS 64u /* views, recycled after a grace period */

struct pt_proc {
	_Atomic uint32_t att;      /* bit s: slot s has an attached view */
	_Atomic uint32_t seen;     /* the control word the last resync acted on */
	_Atomic uint32_t cur[PT_SLOTS];  /* slot -> view index */
	struct pt_slot *_Atomic curp[PT_SLOTS]; /* slot -> view, for the recording path */
	uint64_t ticket[PT_SLOTS]; /* the control-slot ticket last acted on */
	_Atomic int sync;          /* a resync is running */
	uint64_t retry_at;         /* a deferred attach is retried after this tick */
	struct pt_slot view[PT_VIEWS];
};
extern struct pt_proc pt_proc;

/* The view of slot s, whose att bit is set (the recording path). */
static inline struct pt_slot *pt_view_att(unsigned s)
{
	return atomic_load_explicit(&pt_proc.curp[s], memory_order_acquire);
}

static inline struct pt_slot *pt_view(unsigned s)
{
	struct pt_slot *v = atomic_load_explicit(&pt_proc.curp[s], memory_order_acquire);
	return v ? v : &pt_proc.view[0];
}

/* This process's control segment (never NULL: a process-local fallback
 * when no memfd could be made) and its fd (-1 without memfd). */
extern struct pt_ctl *pt_ctl;
extern int pt_ctl_fd;
void pt_ctl_atfork_child(void);
struct pt_ctl *pt_ctl_map(int fd, pid_t pid);
void pt_ctl_bump(struct pt_ctl *c, uint32_t set, uint32_t clear);
static inline struct pt_name *pt_ctl_names(struct pt_ctl *c)
{
	return (struct pt_name *)((char *)c + PT_CTL_NAMES);
}

/* attach.c: the traced side of the control segment */
void pt_resync(void);
void pt_resync_atfork_prepare(void);
void pt_resync_atfork_parent(void);
void pt_slot_mark_dead(unsigned s, struct pt_slot *sl);
int pt_owner_alive(int fd, uint32_t byte);
void pt_owner_check(unsigned s, struct pt_slot *sl, uint64_t ts);
void pt_detach_now(unsigned s, uint64_t ticket, const void *hdr); /* after a quiesce: unmap too */
void pt_selfmap_add(unsigned s, uint64_t ticket, void *hdr, size_t size);
void pt_map_release(void *hdr, size_t size);

/* A writer's current chunk for one (slot, level): thread-local. */
struct pt_tw {
	uint32_t key;      /* slot gen << 16 | epoch; 0 = no chunk */
	uint32_t idx;
	uint32_t pos;
	uint32_t nev;
	uint64_t base_ts;
	uint64_t last_ts;  /* this writer's timestamps never go backwards */
	uint64_t seq;
	uint32_t drop_key; /* key of the stream whose loss run is reported */
	uint32_t drop_g;   /* low bits of that run's report; UINT32_MAX: none */
};                     /* (48 bytes: dlopen leaves little room for TLS) */
#define PT_NO_REPORT UINT64_MAX

static inline uint32_t pt_slot_gen(const struct pt_slot *sl)
{
	return atomic_load_explicit(&sl->gen, memory_order_relaxed);
}

static inline uint32_t pt_tw_key(const struct pt_slot *sl, uint32_t state)
{
	return (pt_slot_gen(sl) << 16) | (PT_ST_EPOCH(state) & 0xffffu);
}

/* Controller side: record a system event (START, STOP, FILTER) into a
 * stream through the trace id's own writer (see stream.c). */
struct pt_trid;
/* wait: if the stream has no room, record nothing and count nothing, and
 * return -1 (the flusher then makes room and tries again); else 0. */
int pt_record_system(struct pt_trid *t, trace_event_id_t id, const void *data, size_t len,
                     void *addr, int wait);
#define PT_SYS      (-1) /* write_one()'s slot for a controller's system event */
#define PT_SYS_WAIT (-2) /* ... one that waits for room rather than be lost */
int pt_write_event(struct pt_slot *sl, struct pt_tw *tw, unsigned level, trace_event_id_t id,
                   const void *data, size_t len, uintptr_t addr, int wait);
void pt_seal_thread(void); /* seal this thread's chunks (thread exit) */
void pt_record_atfork_child(void);
extern int32_t pt_pid;

/* ------------------------------------------------------ chunk pool (pool.c) */
/* 0, or -1 when no chunk could be had: the event is lost (counted,
 * reported), or with PT_ACQ_QUIET just not written.  PT_ACQ_SYS: a
 * controller's system event, which never waits for room. */
#define PT_ACQ_QUIET 1
#define PT_ACQ_SYS   2
int pt_pool_acquire(struct pt_slot *sl, struct pt_tw *tw, uint32_t state, uint64_t ts,
                    unsigned level, uint32_t rec, int how);
void pt_pool_seal(struct pt_slot *sl, struct pt_tw *tw, uint32_t state);
int pt_pool_free(struct pt_slot *sl, uint32_t idx, uint64_t seq, unsigned from_state);
uint64_t pt_pool_note_lost(struct pt_hdr *h, uint64_t n, uint64_t ts, int report,
                       uint64_t thread, int32_t pid, uint32_t level);
void pt_pool_reset(struct pt_slot *sl);
uint64_t pt_pool_steal_mark(const struct pt_slot *sl);
void pt_pool_drained(struct pt_slot *sl, uint64_t mark);

/* --------------------------------------------- quiescence (quiesce.c) */
/* Initial-exec TLS: a fixed offset from the thread pointer, no
 * __tls_get_addr call, so it is safe in a signal handler. */
#define PT_TLS __attribute__((tls_model("initial-exec")))
extern _Thread_local _Atomic unsigned pt_nest PT_TLS;
extern _Thread_local int pt_thread_index PT_TLS; /* 0: not registered yet */
void pt_thread_register(void);
/* Non-zero on a thread that must never wait for room (no-loss mode): a
 * flusher thread, or one holding a trace id's lock, which a flusher may
 * need to make the room. */
extern _Thread_local unsigned pt_nowait PT_TLS;

/* Mark this thread busy before it looks at any stream (see quiesce.c). */
static inline unsigned pt_enter(void)
{
	if (PT_UNLIKELY(pt_thread_index == 0))
		pt_thread_register();
	unsigned level = atomic_load_explicit(&pt_nest, memory_order_relaxed);
	atomic_store_explicit(&pt_nest, level + 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return level;
}

/* Release: a shutdown that sees pt_nest back at 0 also sees every access
 * made in between (a plain store on x86). */
static inline void pt_leave(unsigned level)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&pt_nest, level, memory_order_release);
}
int pt_quiesce(void);    /* wait until no thread is inside posix_trace_event */
int pt_quiesce_try(void); /* the same without waiting: 0 if none is inside now */
void pt_quiesce_prepare(void); /* once, before the first stream exists */
void pt_quiesce_atfork_child(void);

/* ------------------------------------- the map of loaded code (objmap.c) */
/* The range of the object this thread's last event came from: an event
 * from outside it calls pt_objmap_miss() (record.c). */
struct pt_objrange { uintptr_t lo, span; };
extern _Thread_local struct pt_objrange pt_obj PT_TLS;
void pt_objmap_miss(uintptr_t addr);
void pt_objmap_forget(void); /* a new chunk: look the next address up again */
/* This process's objects, table entries from `from` on, into a stream
 * (from 0: a BEGIN entry first).  Returns where the table ended. */
uint32_t pt_objmap_dump(struct pt_slot *sl, int32_t pid, uint32_t from);
void pt_objmap_atfork_child(void);
/* The order between a new object in the table and a new view: each side
 * passes here between its store and its load (a read-modify-write of one
 * word, so each sees the other's store, or the other sees its own). */
extern _Atomic uint32_t pt_objmap_sync;
static inline void pt_objmap_order(void)
{
	atomic_fetch_add_explicit(&pt_objmap_sync, 1, memory_order_seq_cst);
}

/* ------------------------------------------------------- segment (segment.c) */
struct pt_geom {
	uint32_t chunk_size, nchunks, sealed_max, log_len;
	uint64_t chunks_off, names_off, acq_off, seal_off, data_off, objs_off, seg_size, prealloc;
};
int pt_geom_compute(struct pt_geom *g, uint64_t stream_size, uint64_t max_data);
int pt_segment_create(const struct pt_geom *g, int *fd, struct pt_hdr **hdr);
void pt_segment_init(struct pt_hdr *h, const struct pt_geom *g,
                     const struct pt_attr_img *attr, const struct pt_clock_img *clk);
int pt_segment_check(const struct pt_hdr *h, size_t map_size);
void pt_slot_fill(struct pt_slot *sl, struct pt_hdr *h, size_t map_size);
void pt_slot_fill_trusted(struct pt_slot *sl, struct pt_hdr *h, const struct pt_geom *g,
                          const struct pt_attr_img *a);
int pt_geom_backable(const struct pt_geom *g);

/* ---------------------------------------------------------- futex (futex.c) */
int pt_futex_wait(_Atomic uint32_t *addr, uint32_t val, int rel_ms);
void pt_futex_wake(_Atomic uint32_t *addr);
void pt_wake_readers(struct pt_hdr *h);

/* -------------------------------------------------------- reader (read.c) */
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
	int has_next;
	int32_t next;       /* the same writer's next chunk, or -1 */
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
};

struct pt_reader {
	uint64_t next_aseq;          /* next acquisition-log entry to look at */
	uint64_t pend[16];           /* log entries stepped over, half-published */
	unsigned npend;
	uint64_t stuck_q, stuck_since; /* a half-published entry we wait for */
	struct pt_ractive *ck;       /* chunk pool, linked per writer */
	uint32_t ck_cap;
	int32_t ck_free;
	struct pt_rwriter *w;
	uint32_t nw, w_cap;
	uint64_t loss_gen;           /* losses taken from the segment so far */
	uint64_t loss_pend[64];      /* losses seen half-published */
	unsigned nloss_pend;
	struct pt_losses loss;       /* losses not reported yet */
	int need_resume, start_pending;
	int flowing;                 /* a blocking read returned an event last (read.c) */
	uint64_t pairs;              /* OVERFLOW/RESUME pairs returned so far */
	uint32_t run_w;              /* 1 + the writer read_again() may go on with, or 0 */
	uint64_t run_limit;          /* ... while its next record is earlier than this */
	uint64_t gap_lost;           /* events lost in the gap being reported */
	uint64_t lost_at_resume;     /* events lost in the gaps reported so far */
	uint64_t unknown;            /* losses whose writer is not known */
	uint64_t start_ts;
	uint32_t epoch;
	/* the map of loaded code taken from the segment (objread.c); kept
	 * across clear, as the segment keeps it */
	struct pt_ext_obj *objs;
	size_t nobjs, objs_cap;
	uint32_t obj_first;          /* entries below this one are all taken */
	uint64_t obj_taken[PT_OBJ_SLOTS / 64];
	uint64_t obj_lost;           /* the segment's count, as of the last LOST entry */
	unsigned obj_nlost;          /* LOST entries made */
	/* an event already taken, returned after the RESUME that precedes it */
	int stashed;
	struct posix_trace_event_info st_ev;
	unsigned char *st_buf;
	uint32_t st_len;
};

/* ------------------------------------------------ trace ids (stream.c) */

/* The lock of a trace id: held only for short, non-blocking sections
 * (a read or a control call), so a spin-then-yield lock is cheaper than a
 * mutex on the reader's per-event path. */
typedef _Atomic int pt_lock_t;
void pt_lock_slow(pt_lock_t *l);
static inline void pt_lock(pt_lock_t *l)
{
	pt_nowait++; /* (before: a signal handler between the two is inside too) */
	atomic_signal_fence(memory_order_seq_cst);
	if (PT_UNLIKELY(atomic_exchange_explicit(l, 1, memory_order_acquire)))
		pt_lock_slow(l);
}
static inline void pt_unlock(pt_lock_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	pt_nowait--;
}

struct pt_flusher;
struct pt_logr;

struct pt_trid {
	pt_lock_t lock;           /* control calls and the reader */
	int in_use;
	int kind;                 /* PT_KIND_STREAM or PT_KIND_LOG */
	_Atomic int dead;
	uint32_t gen;
	uint64_t fork_gen;
	int slot;                 /* slot in the traced process's control segment, or -1 */
	int fd;                   /* memfd holding the segment; its lock is the stream's life */
	int sys_fd;               /* counts the stream system-wide (remote.c) */
	pid_t pid;                /* the traced process */
	struct pt_ctl *tctl;      /* its control segment, mapped here, or NULL */
	int tctl_own;             /* tctl is this process's own */
	uint64_t ticket, region_off;
	struct pt_hdr *hdr;
	size_t map_size;
	struct pt_slot view;      /* pointers into the segment, for the reader */
	struct pt_tw sys_tw;      /* the id's own writer of system events */
	struct pt_attr_img attr;  /* trusted copy */
	uint32_t noloss_ms;       /* no-loss bound it was created with, 0: off */
	struct pt_clock clk;      /* trusted copy; points added as it is read */
	struct pt_reader rd;
	uint32_t typelist_pos;
	struct pt_flusher *fl;    /* a stream with a log: its writer (flush.c) */
	struct pt_logr *lr;       /* a log opened for reading (logopen.c) */
};

#define PT_KIND_STREAM 0
#define PT_KIND_LOG    1

extern pthread_mutex_t pt_ctl_lock; /* trid table, slots, registry */
extern uint64_t pt_fork_gen;

/* Find and lock a live stream; 0 or EINVAL. */
int pt_trid_lock(trace_id_t trid, struct pt_trid **out);
/* The same, for a stream or a log opened for reading. */
int pt_trid_lock_any(trace_id_t trid, struct pt_trid **out);
struct pt_trid *pt_trid_new(int kind, trace_id_t *id); /* under pt_ctl_lock; locked */
void pt_trid_free(struct pt_trid *t);                  /* locked; unlocks */
int pt_read_next(struct pt_trid *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                 size_t *dlen);
/* The flusher's fast path: a run of one writer's records, read in bulk
 * (read.c; used by flushrun.c) */
struct pt_read_run {
	struct pt_rwriter *w;
	struct pt_ractive *a;   /* its chunk: records from a->off to a->commit */
	const pt_word *chunk;   /* the chunk's first record */
	uint64_t limit;         /* records stamped at or after this go the general way */
	uint32_t max;           /* records it may take */
};
int pt_read_run_ready(struct pt_trid *t);
int pt_read_run_begin(struct pt_trid *t, struct pt_read_run *r);
int pt_read_run_end(struct pt_trid *t, struct pt_read_run *r, uint32_t off, uint32_t n,
                    uint64_t last_tick);
struct pt_logw;
/* flushrun.c: copy a run straight into the log's block; the events
 * copied (0: none, use pt_read_next).  *full: it stopped because the
 * block has no more room (write it out). */
unsigned pt_flush_run(struct pt_trid *t, struct pt_logw *w, const uint64_t *named, int *full);

/* objread.c: take what the traced processes added to the map of loaded
 * code (locked); the index of the first new entry in t->rd.objs */
size_t pt_objs_collect(struct pt_trid *t);
void pt_status_locked(struct pt_trid *t, struct posix_trace_status_info *si);
/* flush.c: a stream's log */
int pt_flusher_start(struct pt_trid *t, int fd);
/* final flush (with stop: a STOP event first, from addr), log finished;
 * the first error */
int pt_flusher_stop(struct pt_trid *t, int stop, void *addr);
int pt_flusher_claim(struct pt_trid *t); /* locked: 0 for the first shutdown, else EINVAL */
void pt_flusher_status(struct pt_trid *t, struct posix_trace_status_info *si);
void pt_flusher_forget(struct pt_trid *t); /* fork child: not ours */
/* logopen.c: a log opened for reading */
int pt_logopen_status(struct pt_trid *t, struct posix_trace_status_info *si);
int pt_logopen_name(struct pt_trid *t, trace_event_id_t id, char *name);
int pt_logopen_next_id(struct pt_trid *t, trace_event_id_t *id, int *unavailable);
int pt_logopen_next(struct pt_trid *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                    size_t *len, int *unavailable);
void pt_trid_unlock(struct pt_trid *t);
void pt_trid_attrs(const struct pt_trid *t, trace_attr_t *attr);
int pt_stream_create(pid_t pid, const trace_attr_t *attr, int logfd, trace_id_t *trid);

/* ------------------------------------------ the controller's side (remote.c) */
struct pt_target {          /* where a new stream goes */
	pid_t pid;
	int fd;                 /* the target's control segment (opened here), or -1 */
	struct pt_ctl *ctl;     /* mapped, or NULL: not linked with the library */
	int own;                /* it is this process */
};
int pt_target_open(pid_t pid, struct pt_target *tg);
void pt_target_close(struct pt_target *tg);
int pt_region_alloc(struct pt_target *tg, uint64_t size, uint64_t prealloc, uint64_t *off);
int pt_slot_claim(struct pt_target *tg, int lock_fd, unsigned *slot);
void pt_slot_publish(struct pt_target *tg, unsigned s, uint64_t off, uint64_t size, int fd,
                     uint64_t ino, uint64_t *ticket);
void pt_slot_release(struct pt_ctl *c, unsigned s, uint64_t ticket);
int pt_sysmax_take(int *sys_fd);
void pt_reader_reset(struct pt_trid *t);
void pt_reader_free(struct pt_reader *rd);

/* ------------------------------------------------- event names (eventid.c) */
void pt_names_init(struct pt_name *names);
void pt_names_copy(struct pt_name *dst, const struct pt_name *src);
int pt_names_open(struct pt_name **tables, unsigned n, const char *name, trace_event_id_t *id);
int pt_name_get(const struct pt_name *names, trace_event_id_t id, char *out);

/* ------------------------------------------------------ attrs (attr.c) */
int pt_attr_valid(const trace_attr_t *a);
void pt_attr_defaults(trace_attr_t *a);
uint32_t pt_attr_noloss(const trace_attr_t *a); /* UINT32_MAX: out of bounds */

/* The stream's current filter, as a set. */
static inline void pt_filter_get(const struct pt_hdr *h, trace_event_set_t *set)
{
	for (unsigned i = 0; i < PT_NIDS / 64; i++)
		set->__bits[i] = atomic_load_explicit(&h->filter[i], memory_order_relaxed);
}

/* ---------------------------------------------------- sets (eventset.c) */
static inline int pt_set_has(const trace_event_set_t *s, trace_event_id_t id)
{
	return id < PT_NIDS && (s->__bits[id / 64] >> (id % 64) & 1);
}

#endif
