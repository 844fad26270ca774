/*
 * layout.h -- the shared-memory format of a trace stream segment.
 *
 * A stream is one memfd segment mapped by every process that records into
 * it or reads it.  It holds offsets only, never pointers.  Readers treat all
 * of it as untrusted: every offset, length and id read from here is
 * checked before use.  See docs/design.md for the algorithms.
 *
 *   +-----------------+ 0
 *   | struct pt_hdr   |  geometry, attributes, clock, state, filter, pool
 *   +-----------------+ chunks_off
 *   | pt_chunk[n]     |  one 128-byte descriptor per chunk
 *   +-----------------+ names_off
 *   | pt_name[1024]   |  event-type name table
 *   +-----------------+ acq_off
 *   | u64[log_len]    |  acquisition log: chunks in the order taken
 *   +-----------------+ seal_off
 *   | u64[log_len]    |  seal log: chunks in the order filled
 *   +-----------------+ data_off
 *   | chunk data      |  n * chunk_size bytes of event records
 *   +-----------------+ objs_off
 *   | pt_obj[nobjs]   |  loaded objects of the traced processes (sparse)
 *   +-----------------+ seg_size
 */
#ifndef POSIXTRACE_LAYOUT_H
#define POSIXTRACE_LAYOUT_H

#include <stdalign.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <trace.h>

#define PT_MAGIC          0x4d52545358495350ull /* "PSIXSTRM" */
#define PT_LAYOUT_VERSION 7u
#define PT_NIDS           __TRACE_EVENT_ID_LIMIT /* event id space */
#define PT_SYS_IDS        16u                    /* ids below are system events */
/* an extension system event: a thread of a no-loss stream waited for room
 * (producer/event.c); its payload is the wait in ns (u64) */
#define PT_SYS_NOLOSS_WAIT 8u
/* an extension system event: the program raised a named trigger
 * (posixtrace_trigger(3), producer/event.c); its payload is the name */
#define PT_SYS_TRIGGER 9u
#define PT_TRIGGER_NAME_MAX 63u
#define PT_NAME_SZ        (TRACE_EVENT_NAME_MAX + 1) /* a name and its NUL */
/* the name slot is part of the segment layout, which a controller and a
 * traced process built from different versions share */
_Static_assert(PT_NAME_SZ == 64, "event name slot changed: bump PT_LAYOUT_VERSION");
#define PT_CLOCK_PTS      64u
#define PT_LOSS_RING      1024u
#define PT_NIL            0xffffffu              /* "no chunk" in 24-bit index fields */
#define PT_SLOTS          8u   /* streams one process can be traced into at once */
#define PT_LEVELS         4u   /* signal-handler nesting levels with their own chunks */
#define PT_MAX_CHUNKS     PT_NIL

/* ---- event record: an 8-byte header w0, the payload padded to 8 bytes,
 * and, in a "wide" record only, one more word w1 after the payload.
 * w0 = timestamp (low 32 bits) | id << 32 (12 bits) | flags << 44 (4 bits)
 *      | payload length << 48
 * w1 = caller address (low 48 bits) | timestamp bits 32..47 << 48
 * (w1 goes last so that where the payload goes never waits on whether the
 * record is wide: the writer stores it while the TSC is being read)
 * A record without the wide flag has its writer's previous record's caller
 * address (the record before it in the same chunk) and a timestamp less
 * than 2^32 ticks after its chunk's base; so a chunk's first record is
 * always wide, and so is one whose caller changed or whose chunk began
 * more than 2^32 ticks before it.  PT_REC_SIZE is the most a record takes. */
#define PT_REC_HDR     16u           /* the most besides the payload: a wide record's */
#define PT_REC_SHORT   8u            /* the least: w0 */
#define PT_REC_W1(n)   (1u + ((uint32_t)(n) + 7u) / 8u) /* w1's word in a wide record */
#define PT_MASK48      0xffffffffffffull
#define PT_RF_TRUNC    1u            /* payload cut at record time */
#define PT_RF_WIDE     2u            /* w1 follows: address and high timestamp bits */
#define PT_REC_SIZE(n) (PT_REC_HDR + (((uint32_t)(n) + 7u) & ~7u))
/* the bytes a record of n payload bytes takes, wide or short */
#define PT_REC_BYTES(n, wide) ((((uint32_t)(n) + 7u) & ~7u) + ((wide) ? PT_REC_HDR : PT_REC_SHORT))
#define PT_REC_ID(w0)    ((uint32_t)((w0) >> 32) & 0xfffu)
#define PT_REC_FLAGS(w0) ((unsigned)((w0) >> 44) & 0xfu)
#define PT_REC_LEN(w0)   ((uint32_t)((w0) >> 48))
#define PT_REC_WIDE(w0)  (PT_REC_FLAGS(w0) & PT_RF_WIDE)

static inline uint64_t pt_rec_w0(uint64_t ts, uint32_t id, unsigned flags, uint32_t n)
{
	return (ts & 0xffffffffull) | (uint64_t)id << 32 | (uint64_t)flags << 44 | (uint64_t)n << 48;
}

static inline uint64_t pt_rec_w1(uint64_t ts, uintptr_t addr)
{
	return ((uint64_t)addr & PT_MASK48) | (ts >> 32 & 0xffffu) << 48;
}

/* A short record's full tick from its chunk's base tick and its w0 */
static inline uint64_t pt_rec_tick_short(uint64_t base, uint64_t w0)
{
	return base + (uint32_t)((uint32_t)w0 - (uint32_t)base);
}

/* A record's full tick from its chunk's base tick and its words (w1 is
 * looked at only for a wide record). */
static inline uint64_t pt_rec_tick(uint64_t base, uint64_t w0, uint64_t w1)
{
	if (PT_REC_WIDE(w0)) {
		uint64_t t48 = (w0 & 0xffffffffull) | (w1 >> 48) << 32;
		return base + ((t48 - base) & PT_MASK48);
	}
	return pt_rec_tick_short(base, w0);
}

/* Records are read while a LOOP writer may be overwriting them (the reader
 * then detects it and drops what it read), so every access to record
 * memory is a relaxed atomic on an aligned 8-byte word. */
typedef _Atomic uint64_t pt_word;

/* Reader side of that check: record words are read, then the chunk's
 * sequence number is read again.  Relaxed loads plus an acquire fence;
 * ThreadSanitizer does not model fences, so there the loads are acquire. */
#if defined(__SANITIZE_THREAD__)
#define PT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PT_TSAN 1
#endif
#endif
#ifdef PT_TSAN
#define PT_WORD_LOAD memory_order_acquire
#define PT_SEQ_FENCE() ((void)0)
#else
#define PT_WORD_LOAD memory_order_relaxed
#define PT_SEQ_FENCE() atomic_thread_fence(memory_order_acquire)
#endif
/* A full fence between a store and a load (the no-loss wait's count and
 * look, the waker's free and look at the count: futex.c).  Under
 * ThreadSanitizer, which has no fences (gcc refuses them), a seq_cst
 * read-modify-write of the word both sides then read, *w, which orders
 * them too. */
#ifdef PT_TSAN
#define PT_FULL_FENCE(w) ((void)atomic_fetch_add_explicit((w), 0, memory_order_seq_cst))
#else
#define PT_FULL_FENCE(w) atomic_thread_fence(memory_order_seq_cst)
#endif

/* The tick of the record at rec, `room` bytes of its chunk being committed
 * from rec on; a wide record cut short by the commit is dated from w0
 * alone (whoever takes it finds it bad). */
static inline uint64_t pt_rec_tick_at(const pt_word *rec, uint32_t room, uint64_t base)
{
	uint64_t w0 = atomic_load_explicit(&rec[0], PT_WORD_LOAD), w1 = 0;
	uint32_t at = PT_REC_W1(PT_REC_LEN(w0));

	if (PT_REC_WIDE(w0) && 8u * at + 8u <= room)
		w1 = atomic_load_explicit(&rec[at], PT_WORD_LOAD);
	return pt_rec_tick(base, w0, w1);
}

static inline void pt_put_bytes(pt_word *dst, const unsigned char *src, uint32_t n)
{
	const unsigned char *end = src + (n & ~7u);
	uint64_t w;

	/* (by pointers: the recording path's copy, with no index to scale) */
	for (; src != end; src += 8, dst++) {
		__builtin_memcpy(&w, src, 8);
		atomic_store_explicit(dst, w, memory_order_relaxed);
	}
	if (__builtin_expect(n & 7, 0)) {
		w = 0;
		for (uint32_t k = 0; k < (n & 7); k++)
			w |= (uint64_t)src[k] << (8 * k);
		atomic_store_explicit(dst, w, memory_order_relaxed);
	}
}

static inline void pt_get_bytes(unsigned char *dst, const pt_word *src, uint32_t n)
{
	uint32_t i = 0;
	uint64_t w;

	for (; i + 8 <= n; i += 8) {
		w = atomic_load_explicit(&src[i / 8], PT_WORD_LOAD);
		__builtin_memcpy(dst + i, &w, 8);
	}
	if (i < n) {
		w = atomic_load_explicit(&src[i / 8], PT_WORD_LOAD);
		for (uint32_t k = 0; i + k < n; k++)
			dst[i + k] = (unsigned char)(w >> (8 * k));
	}
}

/* ---- stream state word: flags in the low byte, clear-epoch above. */
#define PT_ST_RUNNING     0x01u
#define PT_ST_FULL        0x02u
#define PT_ST_AUTOSTOP    0x04u /* stopped itself (UNTIL_FULL); reader restarts it */
#define PT_ST_DEAD        0x08u /* shut down */
#define PT_ST_EPOCH_SHIFT 8
#define PT_ST_EPOCH(s)    ((s) >> PT_ST_EPOCH_SHIFT)

/* ---- chunk states, in the low 2 bits of pt_chunk.ss (seq in the rest). */
#define PT_CK_FREE   0u
#define PT_CK_OPEN   1u
#define PT_CK_SEALED 2u
#define PT_CK_BUSY   3u /* being freed or stolen */
#define PT_SS(seq, st)  (((uint64_t)(seq) << 2) | (st))
#define PT_SS_SEQ(ss)   ((ss) >> 2)
#define PT_SS_STATE(ss) ((unsigned)((ss) & 3u))

/* ---- reader progress, tagged with the chunk's life so that a stale
 * update can never be mistaken for progress in a later life. */
#define PT_RD_POS(seq, off, n) ((((uint64_t)(seq) & 0xffffffu) << 40) | \
                                ((uint64_t)(off) & 0xfffffu) << 20 | ((n) & 0xfffffu))
#define PT_RD_SEQ_OK(p, seq)   (((p) >> 40) == ((uint64_t)(seq) & 0xffffffu))
#define PT_RD_OFF(p)           ((uint32_t)((p) >> 20) & 0xfffffu)
#define PT_RD_COUNT(p)         ((uint32_t)(p) & 0xfffffu)
#define PT_RD_CLOSED(seq)      PT_RD_POS(seq, 0xfffffu, 0xfffffu) /* set by a thief */

/* ---- the count of loss report g: its low 24 bits << 40 | events (40 bits). */
#define PT_LOSS_NMAX       ((1ull << 40) - 1)
#define PT_LOSS_N(g, n)    ((((uint64_t)(g) & 0xffffffu) << 40) | ((uint64_t)(n) & PT_LOSS_NMAX))
#define PT_LOSS_N_OK(v, g) (((v) >> 40) == ((uint64_t)(g) & 0xffffffu))
#define PT_LOSS_N_COUNT(v) ((v) & PT_LOSS_NMAX)

/* ---- log entries: seq (40 bits) << 24 | chunk index (24 bits). */
#define PT_LOG_ENTRY(seq, idx) ((((uint64_t)(seq) & 0xffffffffffull) << 24) | (idx))
#define PT_LOG_SEQ(e)          ((e) >> 24)
#define PT_LOG_IDX(e)          ((uint32_t)((e) & PT_NIL))
#define PT_LOG_SEQ_OF(seq)     ((uint64_t)(seq) & 0xffffffffffull)

struct pt_attr_img {
	char name[TRACE_NAME_MAX];
	char version[TRACE_NAME_MAX];
	int64_t create_sec, create_nsec;
	int64_t res_sec, res_nsec;
	uint64_t stream_size, max_data, log_size;
	int32_t stream_policy, log_policy, inherit, has_log;
};

/* Timestamp clock: raw ticks (TSC) or CLOCK_MONOTONIC ns, with calibration
 * points (tick, monotonic ns) to convert ticks to time. */
#define PT_CLK_MONO 1u
#define PT_CLK_TSC  2u
struct pt_clock_img {
	uint32_t kind;
	uint32_t npts;
	int64_t real_minus_mono; /* CLOCK_REALTIME - CLOCK_MONOTONIC at create */
	uint64_t tick[PT_CLOCK_PTS];
	int64_t ns[PT_CLOCK_PTS];
};

/* Two cache lines: the descriptor, which changes only when the chunk
 * changes hands (and the reader's progress), and the commit offset, which
 * its writer stores at every event.  Kept apart, a reader checking the
 * chunk's life after each record reads a line no writer is storing to.
 * serial: each writer (thread, pid, level) numbers the chunks it takes
 * 1, 2, ... and counts one more for each reported run of events it
 * dropped with no chunk (ring/pool.c); so a reader that finds a writer's
 * chunk numbered other than one more than the last it saw of that
 * writer knows events of that writer were lost between the two
 * (reader/chunks.c).  Untrusted, like all of it: a wrong serial can only
 * add a gap to that writer's events.
 * alive: the process that took the chunk holds an OFD write lock on byte
 * PT_ALIVE_BYTE(alive) of the file the segment lives in, from before it
 * takes any chunk until it exits or execs (producer/alive.c).  A reader
 * that finds that byte unlocked knows the chunk's writer is gone, so an
 * open chunk of it read to its commit can be given back (reader/read.c,
 * reap_dead).  A writer that could take no lock writes 0: its open chunks
 * are never given back.  Untrusted: a wrong key can only make the reader
 * give back an open chunk of a live writer of the same segment, which is
 * what any process that can write the segment can do anyway. */
#define PT_ALIVE_BYTE(k) ((1ull << 48) + (uint64_t)(k))
/* The commit word: the bytes of complete records, and PT_COMMIT_BUSY
 * while its writer is inside an event (docs/design.md, "In flight"): the
 * writer stores pos | BUSY before it reads the clock, and the commit
 * (pos, no BUSY) clears it; a chunk is taken with it set, since its first
 * event is on its way.  Whoever reads the word masks it (PT_COMMIT_POS);
 * only a reader of an OPEN chunk looks at the bit, and only for a bounded
 * time (a hostile or killed writer may leave it set). */
#define PT_COMMIT_BUSY   0x80000000u
#define PT_COMMIT_POS(c) ((uint32_t)(c) & ~PT_COMMIT_BUSY)
struct pt_chunk {
	_Atomic uint64_t ss;       /* seq << 2 | state */
	_Atomic uint32_t next;     /* free-stack link */
	_Atomic uint32_t serial;   /* its writer's chunk serial (see above) */
	_Atomic uint64_t base_ts;  /* timestamp of the first record */
	_Atomic uint64_t thread;   /* pthread_t of the writer */
	_Atomic int32_t pid;       /* process of the writer */
	_Atomic uint32_t epoch;    /* stream epoch when taken (see clear) */
	_Atomic uint32_t nevents;  /* records in the chunk, set when sealed */
	_Atomic uint32_t alive;    /* its process's liveness lock (PT_ALIVE_BYTE), 0: none */
	_Atomic uint64_t rd_pos;   /* reader's progress, PT_RD_POS(seq, off, count) */
	_Atomic uint32_t level;    /* signal nesting level of the writer */
	_Atomic uint32_t sealno;   /* seal number of its last seal (low 32 bits) */
	alignas(64) _Atomic uint32_t commit; /* bytes of complete records (release store),
	                                      * | PT_COMMIT_BUSY while an event is in flight */
};
_Static_assert(sizeof(struct pt_chunk) == 128 && offsetof(struct pt_chunk, commit) == 64,
               "pt_chunk is two cache lines, commit alone on the second");

struct pt_name {
	_Atomic uint32_t valid;
	char name[PT_NAME_SZ];
};

/* ---- the map of loaded code (docs/design.md, "The map of loaded code").
 * Each traced process appends one entry per loaded object when a stream
 * reaches it (a BEGIN entry first: what follows is its whole map), and
 * one when it finds an object loaded or gone since.  An entry is claimed
 * with a fetch-add on pt_hdr.obj_next, filled, then published by a
 * release store of `ready` (PT_OBJ_TAG of its number).  The area is a ring:
 * entry i goes into slot i % PT_OBJ_SLOTS, once the reader has taken the
 * entry that slot held (it moves pt_hdr.obj_done past the entries it has
 * taken, in order, and keeps them: the map outlives LOOP and clear).
 * Entries that find the ring full (a reader that far behind) are
 * counted in pt_hdr.obj_lost instead. */
#define PT_OBJ_SLOTS    2048u
#define PT_OBJ_SZ       512u
#define PT_OBJ_BID_MAX  32u   /* bytes of GNU build-id kept */
#define PT_OBJ_READY    0x4a424f5450ull /* "PTOBJ" */
/* the `ready` of entry i: PT_OBJ_READY in the ring's first lap */
#define PT_OBJ_TAG(i)   (PT_OBJ_READY ^ ((uint64_t)((uint32_t)(i) / PT_OBJ_SLOTS) << 40))
#define PT_OBJ_BEGIN    1u    /* a full map of pid follows (attach, fork, exec) */
#define PT_OBJ_ADD      2u    /* an object is loaded */
#define PT_OBJ_DEL      3u    /* an object is gone */
/* Entries that are not objects, in the same area (a reader of an older
 * version skips them as unsound): */
#define PT_OBJ_THREAD   5u    /* a thread's identity: base = its pthread_t,
                               * lo = its kernel TID, path = its name */
#define PT_OBJ_TYPE     6u    /* an event type's payload description:
                               * lo = the event id, path = the description */
#define PT_OBJ_PROC     7u    /* a process's identity: lo = its parent's pid,
                               * path = its command line (flags: cut) */
#define PT_OBJ_FORK     8u    /* (after fork) pid's map is its parent's, lo =
                               * its pid, as it was at tick; its own ADD and
                               * DEL follow (issue 54: not the whole map again) */
#define PT_OBJ_F_TRUNC  1u    /* path cut to fit */
#define PT_OBJ_F_CONT   2u    /* (PROC) the same process as the stream's entry of
                               * pid before it (its FORK, its previous image) */
#define PT_THREAD_NAME  16u   /* a thread's name and its NUL (the kernel's comm) */
#define PT_TYPE_DESC    256u  /* a payload description and its NUL, at most */
#define PT_OBJ_PATH     (PT_OBJ_SZ - 80u)
struct pt_obj {
	_Atomic uint64_t ready;   /* PT_OBJ_TAG(its number) once complete */
	uint64_t tick;            /* when it was written (the stream's clock) */
	uint64_t base;            /* load bias: run-time address - file address */
	uint64_t lo, hi;          /* the object's mapped range [lo, hi) */
	int32_t pid;
	uint16_t kind;
	uint8_t bid_len;          /* 0: no build-id */
	uint8_t flags;
	unsigned char bid[PT_OBJ_BID_MAX];
	char path[PT_OBJ_PATH];   /* NUL-terminated; "" when not known */
};
_Static_assert(sizeof(struct pt_obj) == PT_OBJ_SZ, "struct pt_obj");

struct pt_hdr {
	/* written once by the creator */
	uint64_t magic;
	uint32_t version, hdr_size;
	uint64_t seg_size;
	uint32_t chunk_size, nchunks;
	uint32_t sealed_max;  /* chunks preallocated for sealed data */
	uint32_t log_len;     /* entries in each log, a power of two */
	uint64_t chunks_off, names_off, acq_off, seal_off, data_off;
	uint64_t objs_off;    /* PT_OBJ_SLOTS entries of struct pt_obj */
	int32_t creator_pid, traced_pid;
	struct pt_attr_img attr;
	struct pt_clock_img clk;
	/* no-loss mode (posixtrace_attr_setnoloss): a writer that finds the
	 * stream full waits this long at most for the flusher, 0: never.  In
	 * what was padding before the next line, so no offset moved and an
	 * older controller's segment reads 0 (fresh memfd pages are zero). */
	uint32_t noloss_ms;

	/* stream state: read by every writer on every event */
	alignas(64) _Atomic uint32_t state;
	_Atomic uint32_t overrun;   /* sticky, cleared by get_status */
	_Atomic uint64_t stop_ts;   /* when UNTIL_FULL stopped the stream */
	alignas(64) _Atomic uint64_t filter[PT_NIDS / 64];

	/* events lost, all causes, each counted when lost; alone on its line,
	 * which writers store to while they drop events */
	alignas(64) _Atomic uint64_t lost;

	/* loss reports: each reported loss g (0, 1, ...) puts the timestamp
	 * of its first lost event, its writer and its count in slot
	 * g % PT_LOSS_RING of the arrays below, then tags the slot g + 1.  The
	 * writer of a run of drops adds to its report's count as the run goes
	 * on; the count names its report, so it never adds to a later one. */
	alignas(64) _Atomic uint64_t loss_gen;  /* losses reported so far */
	_Atomic uint64_t loss_tag[PT_LOSS_RING];
	_Atomic uint64_t loss_ts[PT_LOSS_RING];
	_Atomic uint64_t loss_thread[PT_LOSS_RING]; /* whose events: thread, */
	_Atomic uint64_t loss_who[PT_LOSS_RING];    /* pid << 32 | level */
	_Atomic uint64_t loss_n[PT_LOSS_RING];      /* PT_LOSS_N(g, events lost) */

	/* chunk pool */
	alignas(64) _Atomic uint64_t free_top; /* tag << 32 | index */
	_Atomic uint64_t acq_seq;
	_Atomic uint64_t sealed_bytes; /* bytes in sealed chunks: full at stream size */
	/* free chunks whose memory the controller gave back to the system
	 * (ring/pool.c, give_back): a second stack, taken from only when
	 * free_top is empty; tag << 32 | (index + 1), 0: empty.  In this
	 * line's padding: no offset moved, and an older controller's
	 * segment reads 0 (empty) here. */
	_Atomic uint64_t cold_top;
	/* free chunks beyond the base (PT_HOT_CHUNKS) whose pages are still
	 * resident: a third stack, taken from when free_top is empty, before
	 * cold_top; same encoding as cold_top, in the same line's padding */
	_Atomic uint64_t spare_top;
	alignas(64) _Atomic uint64_t seal_seq;
	_Atomic uint64_t reclaim;   /* oldest seal-log entry that may be stolen */

	/* blocking readers */
	alignas(64) _Atomic uint32_t futex;
	_Atomic uint32_t waiters;
	/* no-loss mode: writers waiting for a free chunk sleep on room
	 * (a process-shared futex) after counting themselves in
	 * room_waiters; whoever frees a chunk or changes the stream's state
	 * bumps room and wakes them, only if room_waiters says someone
	 * waits (ring/pool.c, wait_room).  In this line's padding: no
	 * offset moved, and an older controller's segment reads 0 here. */
	_Atomic uint32_t room;
	_Atomic uint32_t room_waiters;
	uint32_t room_wakes; /* 1: this segment's controller wakes room */

	/* the map of loaded code: entries claimed, entries the reader has
	 * taken (their slots may be used again), entries that found no room */
	alignas(64) _Atomic uint32_t obj_next;
	_Atomic uint32_t obj_done;
	_Atomic uint64_t obj_lost;
};
/* noloss_ms went into padding: the line of the stream state did not move */
_Static_assert(offsetof(struct pt_hdr, noloss_ms) + sizeof(uint32_t) <=
               offsetof(struct pt_hdr, state) &&
               offsetof(struct pt_hdr, state) == 1344, "pt_hdr offsets moved: bump PT_LAYOUT_VERSION");
#define PT_NOLOSS_MAX_MS 60000u /* the longest bound on one wait */

/* ---- the control segment of a process (see docs/design.md, "Tracing
 * another process").  Every process that loads the library has one: a
 * memfd named "posixtrace-ctl" that it maps, close-on-exec except across
 * its own exec (producer/exec.c), and finds again after exec through the
 * environment variable POSIXTRACE_CTL.
 * A controller opens it through /proc/PID/fd (the ptrace access rule),
 * claims a slot, and puts the new stream's segment in the same memfd, past
 * the control pages, so the traced process maps it from its own fd.
 *
 *   +-------------------+ 0
 *   | struct pt_ctl     |  owner pid, live mask, slots
 *   +-------------------+ PT_CTL_NAMES
 *   | pt_name[1024]     |  the process's event-name registry
 *   +-------------------+ PT_CTL_SIZE
 *   | stream regions    |  one per stream a controller created, page aligned
 *   +-------------------+
 */
#define PT_CTL_MAGIC      0x4c54435854534f50ull /* "POSTXCTL" */
#define PT_CTL_VERSION    2u /* 2: the wanted bitmap */
#define PT_CTL_NAMES      4096u
#define PT_CTL_SIZE       (PT_CTL_NAMES + ((PT_NIDS * sizeof(struct pt_name) + 4095u) & ~4095u))
#define PT_CTL_REGION_MAX (1ull << 46)      /* largest region offset accepted */
#define PT_LIVE_MASK      0xffu             /* low bits of pt_ctl.live: running slots */
#define PT_LIVE_BUMP      0x100u            /* the bits above count changes */
#define PT_TICKET_BUSY    1ull              /* a slot being filled in */
#define PT_CS_INHERITED   1u                /* slot copied from a parent at fork */
#define PT_EXEC_DECIDING  1u                /* pt_ctl.exec */
#define PT_EXEC_KEPT      2u
#define PT_EXEC_DROPPED   3u
/* The stream traces a process tree: the process puts POSIXTRACE_JOIN,
 * naming it where tree_pid holds it open (tree_fd), into its environment,
 * so what it starts joins it (producer/join.c). */
#define PT_CS_TREE        2u
/* (with PT_CS_INHERITED) a controller asks the running process to join
 * the stream: it opens /proc/tree_pid/fd/tree_fd itself, under the
 * ptrace rule, and takes it only if its inode is ino (producer/join.c) */
#define PT_CS_JOIN        4u

struct pt_ctl_slot {
	_Atomic uint64_t ticket;    /* 0: free; BUSY; else names the stream */
	_Atomic uint64_t off, size; /* the stream's segment in the memfd named by fd */
	_Atomic int32_t fd;         /* >= 0: not in this segment (for information:
	                             * the owner uses only fds it holds itself) */
	_Atomic int32_t ctl_pid;    /* the controller, for information */
	_Atomic uint32_t lock_byte; /* its controller holds an OFD lock on this byte */
	_Atomic uint32_t flags;
	_Atomic uint64_t ino;       /* inode of that memfd: fd numbers get reused */
	_Atomic int32_t tree_pid, tree_fd; /* PT_CS_TREE, PT_CS_JOIN: where it is open */
	uint64_t pad;
};

struct pt_ctl {
	_Atomic uint64_t magic;     /* written last, with release */
	uint32_t version, size;
	_Atomic int32_t pid;        /* the process this segment controls */
	/* The owner's own exec (producer/exec.c): PT_EXEC_DECIDING while it
	 * decides whether the exec keeps this segment, then KEPT or DROPPED
	 * (the exec closes it); back to 0 if the exec failed, or once the new
	 * image adopted it.  A controller counts itself in creating from
	 * before it claims a slot until it has one; an exec that sees it
	 * keeps the segment (docs/design.md, "Create while the target execs"). */
	_Atomic uint32_t exec;
	_Atomic uint32_t creating;
	/* read by every posix_trace_event(): the running slots (low 8 bits)
	 * and a count of changes (start, stop, filter, shutdown) above them */
	alignas(64) _Atomic uint32_t live;
	alignas(64) _Atomic uint64_t region_end; /* next free offset for a region */
	_Atomic uint64_t next_ticket;
	alignas(64) struct pt_ctl_slot slot[PT_SLOTS];
	/* The wanted bitmap, read by <trace.h>'s inline test through
	 * __posix_trace_want: bit id is set if a running slot's stream may
	 * record id (see docs/design.md, "The wanted bitmap").  It is the OR,
	 * over the running slots (the low bits of live), of slot_want[s],
	 * which the controller of slot s writes (the ids its filter lets
	 * through; all user ids where the filter cannot be followed), and is
	 * recomputed after every change of live (pt_ctl_bump).  A superset
	 * while a change is under way, never a subset once it returned. */
	alignas(64) _Atomic uint64_t want[PT_NIDS / 64];
	alignas(64) _Atomic uint64_t slot_want[PT_SLOTS][PT_NIDS / 64];
};
_Static_assert(sizeof(struct pt_ctl) <= PT_CTL_NAMES, "struct pt_ctl overlaps the name registry");
/* exec and creating took the place of padding: an older segment has 0s there */
_Static_assert(offsetof(struct pt_ctl, creating) + 4 <= offsetof(struct pt_ctl, live) &&
               offsetof(struct pt_ctl, live) == 64, "pt_ctl's header moved");


#endif
