/*
 * control.h -- trace ids, the controller's side of a stream: the table of
 * this process's trace ids (table.c), creating a stream (newstream.c) in
 * a target process (slots.c), across the machine (sysmax.c) or a process
 * tree (tree.c), and a flight recorder's looks (snapshot.c).  A trace id
 * (struct pt_trid, below) holds a stream (reader/'s struct pt_stream).
 * Above flush/ (the log writer and the id's system events), reader/ (the
 * stream, and its lock, lock.h), producer/ (a controller records into
 * the streams it makes, and traces itself) and log/.
 */
#ifndef POSIXTRACE_CONTROL_H
#define POSIXTRACE_CONTROL_H

#include "../flush/flush.h"

/* ------------------------------------------------------- a trace id */
struct pt_logr;
struct posix_trace_status_info;
struct pt_trid;
/* posix_trace_get_status() of a trace id, under its lock: a stream's
 * (control/newstream.c) or a log's (api/logfile.c); 0 or an errno */
typedef int pt_trid_status_fn(struct pt_trid *t, struct posix_trace_status_info *si);

/* What a trace id_t names: a stream this process made or joined, or a
 * log opened for reading.  The stream itself (its mapping, its reader
 * and its writers, locked by s.lock) is reader/'s struct pt_stream; the
 * rest is the id's: its place in the table and in the traced process's
 * control segment, and what the layers above keep of it. */
struct pt_trid {
	struct pt_stream s;       /* s.lock: control calls and the reader */
	int in_use;
	_Atomic int dead;
	uint32_t gen;
	uint64_t fork_gen;
	int slot;                 /* slot in the traced process's control segment, or -1 */
	int sys_fd;               /* counts the stream system-wide (control/slots.c) */
	struct pt_fdid fd_id, sys_id; /* s.fd's and sys_fd's files: closed only if still open (fdown.c) */
	int tctl_own;             /* s.tctl is this process's own */
	uint64_t ticket;
	uint32_t noloss_ms;       /* no-loss bound it was created with, 0: off */
	uint32_t typelist_pos;
	struct pt_logr *lr;       /* a log opened for reading (api/logfile.c) */
	pt_trid_status_fn *status;
};

/* ------------------------------------------------- the table (table.c) */
extern pthread_mutex_t pt_trid_table_lock; /* trid table, slots, registry */
extern uint64_t pt_fork_gen;

/* Find and lock a live stream; 0 or EINVAL. */
int pt_trid_lock(trace_id_t trid, struct pt_trid **out);
/* The same, for a stream or a log opened for reading. */
int pt_trid_lock_any(trace_id_t trid, struct pt_trid **out);
void pt_trid_unlock(struct pt_trid *t);
struct pt_trid *pt_trid_new(int kind, trace_id_t *id); /* under pt_trid_table_lock; locked */
void pt_trid_free(struct pt_trid *t);                  /* locked; unlocks */
int pt_trid_room(void);                                /* under pt_trid_table_lock */
struct pt_trid *pt_trid_at(unsigned i);                /* 0 <= i < TRACE_SYS_MAX */
trace_id_t pt_trid_id(const struct pt_trid *t);
/* Fork handlers for the table, once, before the first stream (outside
 * every lock); drop: what a fork child does with a stream's trace id. */
void pt_trid_fork_handlers(void (*drop)(struct pt_trid *t));

/* --------------------------------------------- a new stream (newstream.c) */
int pt_stream_create(pid_t pid, const trace_attr_t *attr, int policy, uint32_t noloss, int logfd,
                     trace_id_t *trid, trace_id_t *undo);

/* ----------------------------------------- the target process (slots.c) */
struct pt_target {          /* where a new stream goes */
	pid_t pid;
	int fd;                 /* the target's control segment (opened here), or -1 */
	struct pt_ctl *ctl;     /* mapped, or NULL: not linked with the library */
	int own;                /* it is this process */
	int counted;            /* counted in ctl->creating (until a slot is claimed) */
};
void pt_target_uncount(struct pt_target *tg);
int pt_target_open(pid_t pid, struct pt_target *tg);
void pt_target_close(struct pt_target *tg);
int pt_region_alloc(struct pt_target *tg, unsigned slot, uint64_t size, uint64_t prealloc,
                    uint64_t *off);
int pt_slot_claim(struct pt_target *tg, int lock_fd, unsigned *slot);
uint64_t pt_slot_ticket(struct pt_ctl *c);
void pt_slot_publish(struct pt_target *tg, unsigned s, uint64_t off, uint64_t size, int fd,
                     uint64_t ino, uint32_t live_byte, uint64_t ticket);
void pt_slot_release(struct pt_ctl *c, unsigned s, uint64_t ticket);
void pt_slot_leave(struct pt_ctl *c, unsigned s, uint64_t ticket);
/* sysmax.c: a place among the TRACE_SYS_MAX streams of the machine (its
 * socket in *sys_fd), of which one user other than root may hold at most
 * PT_USER_SHARE; EAGAIN if none */
#define PT_USER_SHARE 64u
int pt_sysmax_take(int *sys_fd);

/* ------------------------------------------ a process tree (tree.c) */
/* Locked t: tell the traced process the stream traces a tree. 0, EINVAL. */
int pt_tree_mark(struct pt_trid *t);
/* Locked t (its memfd's inode ino): ask the running process pid to join
 * the stream.  0; EEXIST (it records into it already); ENOENT (it does
 * not use the library); EPERM, ESRCH (pt_target_open); EAGAIN (no free
 * slot); EINVAL (not a stream a process can join). */
int pt_tree_join(struct pt_trid *t, pid_t pid, uint64_t ino);

/* ------------------------------- a flight recorder's looks (snapshot.c) */
/* Both under t's lock; neither changes the stream (ext.h, pt_ext_follow_*,
 * pt_ext_snapshot). */
struct pt_snap_ev {
	uint64_t ns, thread;
	int32_t pid;
	uint32_t level, id, len;
	const unsigned char *data;
};
typedef int (*pt_snap_fn)(void *arg, const struct pt_snap_ev *e);
struct pt_snap_follow;
struct pt_snap_follow *pt_snap_follow_new(struct pt_trid *t, const uint64_t *want);
int pt_snap_follow_poll(struct pt_trid *t, struct pt_snap_follow *f, pt_snap_fn fn, void *arg);
uint64_t pt_snap_follow_missed(const struct pt_snap_follow *f);
void pt_snap_follow_free(struct pt_snap_follow *f);
struct pt_snap_stats {
	uint64_t events, chunks, dropped, dropped_events, gaps, first, last, bytes;
	uint64_t lapped;    /* writers whose chunks up to the window's end were overwritten
	                     * before the copy (all theirs left begin after it) */
	uint64_t trig_kept; /* 1: the trigger event was gone from the stream, written
	                     * from the caller's copy */
	uint64_t trig_alone; /* 1: it was there, but none of its writer's events
	                      * before it (overwritten) */
};
int pt_snap_write(struct pt_trid *t, int fd, uint64_t from, uint64_t to,
                  const struct pt_snap_ev *trig, struct pt_snap_stats *st);
/* The same in two steps: the copy (under the trace id's lock, fast: the
 * chunks of the window and what the log needs besides), then the log
 * written from it (no lock, any thread; once). */
struct pt_snap_copy;
int pt_snap_copy(struct pt_trid *t, uint64_t from, uint64_t to, const struct pt_snap_ev *trig,
                 struct pt_snap_copy **out);
int pt_snap_emit(struct pt_snap_copy *c, int fd, struct pt_snap_stats *st);
void pt_snap_copy_free(struct pt_snap_copy *c);
/* The memory a copy of up to cap bytes and its writing take, its first
 * warm bytes made ready, kept for the next snapshot (no lock needed): a
 * first snapshot of up to warm bytes of chunks then meets no fresh page
 * (a copy is packed from the buffer's start). */
void pt_snap_prepare(size_t cap, size_t warm);
unsigned pt_snap_use(const struct pt_trid *t);
/* Tests only: called with the arg after each chunk a snapshot copies
 * (declared so in ext.h too, for the tests) */
extern void (*pt_ext_snapshot_copy_hook)(void *);
extern void *pt_ext_snapshot_copy_arg;

#endif
