/*
 * ring.h -- the chunk pool (pool.c): the protocol by which writers take,
 * fill and seal chunks and readers give them back; a stream's losses.
 * Lock-free and async-signal-safe.  Above shm/, below the recording
 * process (producer/) and the reader (reader/), which both use it.
 */
#ifndef POSIXTRACE_RING_H
#define POSIXTRACE_RING_H

#include "../shm/shm.h"

/* A writer's current chunk for one (slot, level): thread-local. */
struct pt_tw {
	uint32_t key;      /* slot gen << 16 | epoch; 0 = no chunk */
	uint32_t idx;      /* the chunk; with no chunk, the serial of the last
	                    * one (layout.h; pool.c keeps it) */
	uint32_t pos;
	uint32_t nev;      /* events in the chunk; with no chunk, losses in the run */
	uint64_t base_ts;
	uint64_t last_ts;  /* this writer's timestamps never go backwards */
	uint64_t seq;
	/* while the writer holds a chunk (key != 0), the caller address of its
	 * last record there; while it holds none, the run of losses it is in
	 * (pool.c resets it whenever key becomes 0) */
	union {
		uint64_t addr;         /* PT_NO_ADDR: no record yet */
		struct {
			uint32_t drop_key; /* key of the stream whose loss run is reported; 0: none */
			uint32_t drop_g;   /* low bits of that run's report; UINT32_MAX: none */
		};
	};
};                     /* (48 bytes: dlopen leaves little room for TLS) */
#define PT_NO_ADDR UINT64_MAX
#define PT_NO_REPORT UINT64_MAX

static inline uint32_t pt_tw_key(const struct pt_view *sl, uint32_t state)
{
	return (pt_slot_gen(sl) << 16) | (PT_ST_EPOCH(state) & 0xffffu);
}

/* this process's pid, as stamped on its chunks (pool.c; refreshed in a
 * forked child) */
extern int32_t pt_pid;

/* Non-zero on a thread that must never wait for room (no-loss mode): a
 * flusher thread, or one holding a trace id's lock, which a flusher may
 * need to make the room. */
extern _Thread_local unsigned pt_nowait PT_TLS;
/* After a pt_pool_acquire() that waited for room and got it (no-loss
 * mode): how long, in ns (at least 1); the caller records it and sets it
 * back to 0. */
extern _Thread_local uint64_t pt_waited_ns PT_TLS;

/* 0, or -1 when no chunk could be had: the event is lost (counted,
 * reported), or with PT_ACQ_QUIET just not written.  PT_ACQ_SYS: a
 * controller's system event, which never waits for room. */
#define PT_ACQ_QUIET 1
#define PT_ACQ_SYS   2
int pt_pool_acquire(struct pt_view *sl, struct pt_tw *tw, uint32_t state, uint64_t ts,
                    unsigned level, uint32_t rec, int how);
void pt_pool_seal(struct pt_view *sl, struct pt_tw *tw, uint32_t state);
/* The next event of a run of losses whose first pt_pool_acquire() reported
 * (FLUSH, not in no-loss mode), if the stream still has no room: 1, the
 * event counted lost exactly as acquire would count it; 0: take the
 * general way (there may be room). */
int pt_pool_drop_again(struct pt_view *sl, struct pt_tw *tw, uint32_t rec);
/* Whether a record of rec bytes would find a chunk now (take_free's answer
 * without taking one; a hint, since writers and the reader race with it) */
int pt_pool_has_room(const struct pt_view *sl, uint32_t rec);
int pt_pool_free(struct pt_view *sl, uint32_t idx, uint64_t seq, unsigned from_state);
/* The same, by a controller's reader, with the segment's file (fd, the
 * segment at seg_off in it): a chunk beyond the hot ones (0..hot-1) has its pages
 * taken out of every process (syscalls; never in a writer) */
int pt_pool_give_back(struct pt_view *sl, uint32_t idx, uint64_t seq, unsigned from_state,
                      int fd, uint64_t seg_off, uint32_t hot);
/* The hot chunks are now 0..hot-1: the free stack's others go cold (tmp:
 * room for nchunks indices) */
void pt_pool_trim(struct pt_view *sl, uint32_t hot, int fd, uint64_t seg_off, uint32_t *tmp);
int pt_pool_gone(int32_t pid);
uint64_t pt_pool_note_lost(struct pt_hdr *h, uint64_t n, uint64_t ts, int report,
                       uint64_t thread, int32_t pid, uint32_t level);
void pt_pool_reset(struct pt_view *sl);
uint64_t pt_pool_steal_mark(const struct pt_view *sl);
void pt_pool_drained(struct pt_view *sl, uint64_t mark);

#endif
