/*
 * shm.h -- the bottom layer: what lives in shared memory and the
 * primitives that work on it.  layout.h is the format (a stream's segment,
 * a process's control segment); clock.h turns its ticks into time; here:
 * a process's view of a segment (struct pt_view), sizing and checking a
 * segment (segment.c), the event-name tables (nametable.c) and futex waits
 * (futex.c).  Nothing here knows of trace ids, readers or logs.
 */
#ifndef POSIXTRACE_SHM_H
#define POSIXTRACE_SHM_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <trace.h>
#include "clock.h"
#include "layout.h"

#define PT_API __attribute__((visibility("default")))
#define PT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define PT_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define PT_ATTR_MAGIC 0x70744154u
#define PT_VERSION_STRING "posixtrace 0.1.0"

/* Initial-exec TLS: a fixed offset from the thread pointer, no
 * __tls_get_addr call, so it is safe in a signal handler. */
#define PT_TLS __attribute__((tls_model("initial-exec")))
/* chunks preallocated beyond sealed_max: a segment's first sealed_max +
 * PT_PREALLOC_SPARE chunks have their memory reserved when it is made
 * (segment.c), the rest is sparse */
#define PT_PREALLOC_SPARE 16u
/* the hot chunks: a segment's chunks 0..PT_HOT_CHUNKS - 1 are the ones
 * handed out while any is free; the others (a burst beyond them) give
 * their memory back when freed (ring/pool.c, pt_pool_give_back) */
#define PT_HOT_CHUNKS(sealed_max, nchunks) \
	((sealed_max) * 3u / 8u < 16u ? ((nchunks) < 16u ? (nchunks) : 16u) \
	 : (sealed_max) * 3u / 8u < (nchunks) ? (sealed_max) * 3u / 8u : (nchunks))

/* A view of a stream this process records into: pointers into its
 * mapping and copies of its geometry.  Views are never changed while a
 * thread may use them: attaching fills a free view and then publishes its
 * index in pt_proc.cur (see attach.c). */
/* A descriptor of the library's, known by its file: the program may have
 * closed it and given its number to a file of its own (fdown.c). */
struct pt_fdid { uint64_t dev, ino; };

struct pt_view {
	/* what the recording path reads on every event, on one cache line
	 * (with the filter word of the event's id) */
	alignas(64) struct pt_hdr *hdr;
	struct pt_chunk *chunks;
	char *data;
	uint32_t chunk_size, max_data;
	_Atomic uint32_t gen; /* a new value each time the view is filled */
	int test_hdr_filter;  /* the copy is all zero: test the stream's own filter */
	int policy;           /* stream-full policy */
	uint32_t nchunks, sealed_max, log_mask;
	_Atomic uint64_t *acq_log, *seal_log;
	struct pt_name *names;
	struct pt_obj *objs;  /* the map of loaded code: PT_OBJ_SLOTS entries */
	uint64_t budget;   /* stream-min-size: sealed bytes the stream holds */
	/* a copy of the stream's filter in process memory, tested before any
	 * stream is touched (all zero, "nothing filtered", where the copy
	 * cannot be kept current: then write_one's test decides) */
	_Atomic uint64_t filter[PT_NIDS / 64];
	int inherit;
	size_t map_size;
	/* where the segment lives, for the controller-liveness check */
	int home_fd;
	uint32_t lock_byte;
	uint64_t ticket;                /* the control slot's, when attached */
	uint64_t owner_every;           /* ticks between two checks */
	_Atomic uint64_t owner_checked; /* tick of the last check */
	_Atomic int dead;               /* found dead: detach at the next resync */
	/* no-loss mode: the bound on one wait for room (ms, clamped), 0: off;
	 * and whether a wait ran out since a writer last got a chunk, after
	 * which writers drop at once rather than each wait the bound out */
	uint32_t noloss_ms;
	_Atomic uint32_t noloss_gave_up;
	uint32_t room_wakes; /* the controller wakes waiters (pt_hdr.room_wakes) */
	/* this process's liveness lock in the segment's file (producer/alive.c):
	 * its key, stamped on every chunk taken (0: none), and the private
	 * open file that holds it (fd + 1; 0: none), with the lock that says
	 * the segment's region is mapped here */
	uint32_t alive_key;
	int alive_fd;
	struct pt_fdid alive_id; /* its file: the program may have closed the fd
	                          * and opened one of its own with its number */
	uint64_t region_off; /* where the segment starts in that file: its first
	                      * byte is read-locked while the view maps it */
	/* chunks this process (taken_pid: a forked child counts anew) took
	 * of the stream through this view: at PT_WARM_AFTER, pt_slot_warm */
	_Atomic uint32_t taken;
	_Atomic int32_t taken_pid;
};
_Static_assert(offsetof(struct pt_view, nchunks) <= 64, "the recording path's view fields span two lines");

/* Where chunk idx (< nchunks) starts in the data area. */
static inline char *pt_chunk_data(const struct pt_view *v, uint32_t idx)
{
	return v->data + (size_t)idx * v->chunk_size;
}

static inline uint32_t pt_slot_gen(const struct pt_view *sl)
{
	return atomic_load_explicit(&sl->gen, memory_order_relaxed);
}

static inline struct pt_name *pt_ctl_names(struct pt_ctl *c)
{
	return (struct pt_name *)((char *)c + PT_CTL_NAMES);
}


/* The stream's current filter, as a set. */
static inline void pt_filter_get(const struct pt_hdr *h, trace_event_set_t *set)
{
	for (unsigned i = 0; i < PT_NIDS / 64; i++)
		set->__bits[i] = atomic_load_explicit(&h->filter[i], memory_order_relaxed);
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
void pt_slot_fill(struct pt_view *sl, struct pt_hdr *h, size_t map_size);
void pt_slot_fill_trusted(struct pt_view *sl, struct pt_hdr *h, const struct pt_geom *g,
                          const struct pt_attr_img *a);
/* A process's share of a stream mapped in early, instead of page by page
 * as its writers first touch it: the base chunks (PT_HOT_CHUNKS, up to
 * PT_WARM_MAX bytes of them) and the map of loaded code.  The memory is
 * the stream's own, allocated when it was made (the map's on first use);
 * what changes is that the process's resident size is what it will be
 * from then on, not a figure that creeps up as bursts reach further into
 * the free stack and the map's ring goes round (issue 54).  Piece by
 * piece: piece k < the base chunks kept is chunk k, then the map
 * PT_WARM_PIECE bytes at a time; 0 if there is no piece k.  A process
 * maps piece k at its (PT_WARM_AFTER + k)-th chunk of a stream
 * (ring/pool.c: about what a chunk's first touch costs anyway, and a
 * helper that records a few events and ends never pays it); a controller
 * maps them all when it makes a stream for another process.
 * madvise(MADV_POPULATE_WRITE), Linux 5.14: elsewhere nothing happens.
 * Async-signal-safe; errno kept. */
#define PT_WARM_AFTER 8u
#define PT_WARM_MAX   (8u << 20)
#define PT_WARM_PIECE (256u << 10)
int pt_slot_warm(const struct pt_view *sl, uint32_t k);
int pt_geom_backable(const struct pt_geom *g);

/* the liveness lock of a stream's controller: 1 alive (or cannot tell) */
int pt_owner_alive(int fd, uint32_t byte);

/* ---------------------------------------------- file size (filesize.c) */
/* Growing a memfd under RLIMIT_FSIZE: EFBIG, never SIGXFSZ. */
struct pt_fsz { sigset_t old; int held, pending; };
void pt_fsz_hold(struct pt_fsz *g);     /* SIGXFSZ held in this thread */
void pt_fsz_release(struct pt_fsz *g);  /* a SIGXFSZ raised meanwhile dropped (errno kept) */
int pt_fsz_truncate(int fd, uint64_t size);           /* ftruncate, -1 and errno */
int pt_fsz_allocate(int fd, uint64_t off, uint64_t len); /* posix_fallocate, an errno */

/* ------------------------------------------------ own descriptors (fdown.c) */
/* (struct pt_fdid: above, with struct pt_view) */
void pt_fdid_of(int fd, struct pt_fdid *id);          /* zero if fd is not open */
int pt_fd_is(int fd, const struct pt_fdid *id);       /* fd is still that file */
void pt_close_own(int fd, const struct pt_fdid *id);  /* closed only if so */

/* ---------------------------------------------------------- futex (futex.c) */
int pt_futex_wait(_Atomic uint32_t *addr, uint32_t val, int rel_ms);
int pt_futex_wait_ns(_Atomic uint32_t *addr, uint32_t val, uint64_t rel_ns);
void pt_futex_wake(_Atomic uint32_t *addr);
void pt_wake_readers(struct pt_hdr *h);
void pt_wake_room(struct pt_hdr *h, int all); /* no-loss writers waiting for a chunk */

/* ----------------------------------------------------- event names (nametable.c) */
void pt_names_init(struct pt_name *names);
void pt_names_copy(struct pt_name *dst, const struct pt_name *src);
int pt_names_open(struct pt_name **tables, unsigned n, const char *name, trace_event_id_t *id);
int pt_name_check(const char *name); /* 0, EINVAL or ENAMETOOLONG */
const char *pt_sys_name(trace_event_id_t id);           /* NULL: not a system event */
int pt_sys_id(const char *name, trace_event_id_t *id); /* 0, or EINVAL */
int pt_name_get(const struct pt_name *names, trace_event_id_t id, char *out);


#endif
