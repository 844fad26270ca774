/*
 * producer.h -- the traced process's side: its state (state.h), quiescence
 * (quiesce.h), its control segment (ctlseg.c), the views of the streams it
 * records into and their upkeep (attach.c), the recording path
 * (event.c), the map of loaded code it writes into its streams
 * (objmap.c), and its start, fork and thread exit (lifecycle.c).  Above
 * ring/; it never sees a trace id.
 */
#ifndef POSIXTRACE_PRODUCER_H
#define POSIXTRACE_PRODUCER_H

#include "state.h"
#include "quiesce.h"

/* The parts below, bottom up: a file calls only state.h, quiesce.h and
 * the parts listed before its own.  The recording path (event.c) reaches
 * the control side only through attach.c: pt_resync when the live word
 * changed, and the owner checks of a stream.  lifecycle.c, above them
 * all, calls each part's load and fork functions in its written order
 * (docs/design.md, "The lifecycle of the traced side"). */

/* Decimal digits of v at p (async-signal-safe); returns the end. */
static inline char *pt_put_u64(char *p, uint64_t v)
{
	char d[24];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = d[--n];
	return p;
}

/* ---------------------------- this process's control segment (ctlseg.c) */
/* (its variables: state.h) */
struct pt_ctl *pt_ctl_map(int fd, pid_t pid);
void pt_ctl_use(struct pt_ctl *c, int fd);
int pt_ctl_start(void);    /* at load, if none was adopted: 0, or -1 (only the fallback) */
void pt_ctl_env_set(void); /* POSIXTRACE_CTL names it */
struct pt_ctl *pt_ctl_fork_new(int *fdp); /* the forked child's, before its slots ... */
void pt_ctl_fork_use(struct pt_ctl *c, int fd, uint32_t live); /* ... and after */
void pt_ctl_bump(struct pt_ctl *c, uint32_t set, uint32_t clear);
void pt_ctl_want_refresh(struct pt_ctl *c);
void pt_ctl_slot_want(struct pt_ctl *c, unsigned s, const _Atomic uint64_t *filter);
int pt_reopen_at(int32_t pid, int32_t fd, uint64_t ino); /* /proc/PID/fd/FD if inode ino */

/* ----------------- what this process holds for each slot's stream (holds.c) */
void pt_selfmap_add(unsigned s, uint64_t ticket, void *hdr, size_t size);
void *pt_selfmap_get(unsigned s, uint64_t ticket, size_t size);
void pt_map_release(void *hdr, size_t size);
void pt_slot_own_fd(unsigned s, int fd, int close_it);
void pt_slot_own_fd_drop(unsigned s);

/* --------------- this process's liveness lock in each stream (alive.c) */
void pt_alive_take(struct pt_view *sl);
void pt_alive_drop(struct pt_view *sl);
void pt_alive_atfork_child(void);

/* ------------------------------------- the map of loaded code (objmap.c) */
/* (pt_obj, the range of this thread's last object: state.h) */
void pt_objmap_init(void); /* at load: the objects loaded so far */
void pt_objmap_miss(uintptr_t addr);
void pt_objmap_forget(void); /* a new chunk: look the next address up again */
/* This process's objects, table entries from `from` on, into a stream
 * (from 0: a BEGIN entry first).  Returns where the table ended. */
uint32_t pt_objmap_dump(struct pt_view *sl, int32_t pid, uint32_t from);
/* In a forked child, for a stream it inherited (its parent recorded its
 * map there): one FORK entry, "the map of ppid as it was now", instead of
 * the whole map again (issue 54). */
void pt_objmap_fork(struct pt_view *sl, int32_t pid, int32_t ppid);
void pt_objmap_atfork_child(void);
/* One entry into sl's area, or into every attached stream's. */
void pt_objmap_put(struct pt_view *sl, const struct pt_obj *src, int32_t pid, unsigned kind,
                   uint64_t tick);
void pt_objmap_put_all(const struct pt_obj *o, unsigned kind);

/* ------------------------------------ the process's identity (procid.c) */
void pt_procid_init(int argc, char **argv); /* at load: the command line */
/* Its parent's pid and command line into sl (a stream just reached it);
 * cont: the process's FORK entry is just before it.  The entry says it
 * goes on from the one before it (PT_OBJ_F_CONT) then, and in an image
 * that kept its previous image's streams across exec. */
void pt_procid_put(struct pt_view *sl, int cont);
/* The image adopted its previous image's control segment (1: an exec of
 * a process the streams knew), or is a new process (0, after fork). */
void pt_procid_adopted(int yes);

/* ------------------------------------ thread identities (thrmap.c) */
void pt_thrmap_init(void);
void pt_thrmap_atfork_child(void);
/* A chunk of stream s is about to be taken by this thread: say who the
 * thread is (kernel TID, name) if the stream has not heard it, or the name
 * changed.  One prctl(PR_GET_NAME), no other system call. */
void pt_thrmap_chunk(unsigned s, struct pt_view *sl, uint64_t ts);

/* ------------------------------- payload descriptions (typemap.c) */
/* desc (checked by the caller, < PT_TYPE_DESC bytes) describes id's
 * payload from now on: kept for streams that reach the process later and
 * written into every stream it records into.  0, or ENOMEM. */
int pt_typemap_set(unsigned id, const char *desc);
void pt_typemap_dump(struct pt_view *sl, int32_t pid); /* all, into sl */

/* ------------------- joining a stream named in the environment (join.c) */
/* the stream `posixtrace record` names in the environment, joined at load
 * as if inherited (docs/design.md, "Tracing a process tree") */
#define PT_JOIN_ENV "POSIXTRACE_JOIN"
int pt_join(const char *value);
/* A slot a controller filled with PT_CS_JOIN (attach --tree): open the
 * stream's memfd as pt_join() does and hold it for slot s.  0, or -1
 * (not ours to open, gone, or already recorded into here). */
int pt_join_slot(unsigned s, const struct pt_ctl_slot *e);
/* Slot s's stream traces a tree (PT_CS_TREE): POSIXTRACE_JOIN naming it
 * into this process's environment, for whatever it starts from now on. */
void pt_tree_env(const struct pt_ctl_slot *e);
/* Does a slot other than `except` hold the stream (ino, off): one
 * attached here (attached_only), or any named? */
int pt_join_already_in(uint64_t ino, uint64_t off, int except, int attached_only);

/* ------------ the streams' views: mapping, dropping, resync (attach.c) */
void pt_resync(void);
void pt_resync_atfork_prepare(void);
void pt_resync_atfork_parent(void);
void pt_resync_atfork_child(void);
void pt_attach_at_load(void); /* a stream that waited across exec, mapped */
void pt_slot_mark_dead(unsigned s, struct pt_view *sl);
int pt_owner_alive(int fd, uint32_t byte);
void pt_owner_check(unsigned s, struct pt_view *sl, uint64_t ts);
void pt_detach_now(unsigned s, uint64_t ticket); /* after a quiesce: unmap too */

/* ------------------- streams kept across fork and exec (inherit.c) */
void pt_inherit_atfork_child(void);
int pt_inherit_adopt(const char *env); /* after exec: 0 if the value named ours */

/* --------------------------------------- the exec functions (exec.c) */
/* the process's own exec keeps its control segment (and the fds of
 * inherited streams), which are otherwise close-on-exec */
void pt_exec_init(void);

/* ------------------------------------------ the recording path (event.c) */
#define PT_SYS      (-1) /* write_one()'s slot for a controller's system event */
#define PT_SYS_WAIT (-2) /* ... one that waits for room rather than be lost */
int pt_write_event(struct pt_view *sl, struct pt_tw *tw, unsigned level, trace_event_id_t id,
                   const void *data, size_t len, uintptr_t addr, int wait);
void pt_seal_thread(void); /* seal this thread's chunks (thread exit) */
void pt_record_atfork_child(void);

#endif
