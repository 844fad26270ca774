/*
 * traced.h -- the traced process's side: its control segment (ctlseg.c),
 * the views of the streams it records into and their upkeep (attach.c),
 * the recording path (record.c), quiescence (quiesce.c) and the map of
 * loaded code it writes into its streams (objmap.c).  Above ring/; it
 * never sees a trace id.
 */
#ifndef POSIXTRACE_TRACED_H
#define POSIXTRACE_TRACED_H

#include "../ring/ring.h"

#define PT_VIEWS 64u /* views, recycled after a grace period */

struct pt_proc {
	_Atomic uint32_t att;      /* bit s: slot s has an attached view */
	_Atomic uint32_t seen;     /* the control word the last resync acted on */
	_Atomic uint32_t cur[PT_SLOTS];  /* slot -> view index */
	struct pt_view *_Atomic curp[PT_SLOTS]; /* slot -> view, for the recording path */
	uint64_t ticket[PT_SLOTS]; /* the control-slot ticket last acted on */
	_Atomic int sync;          /* a resync is running */
	uint64_t retry_at;         /* a deferred attach is retried after this tick */
	/* The descriptor this process holds for slot s's stream when it is
	 * not in the control memfd (fd + 1; 0: none), which it made itself:
	 * a dup made at fork for an inherited stream (own_close bit s: closed
	 * when the stream ends here) or a memfd of its own.  The fd a slot of
	 * the shared control segment names is never used: anyone who may
	 * write the segment could name any descriptor there. */
	int own_fd[PT_SLOTS];
	struct pt_fdid own_id[PT_SLOTS]; /* their files (closed only if still so) */
	_Atomic uint32_t own_close;
	/* For an inherited stream: where its memfd is open in the process it
	 * was inherited from (pid, fd number, inode), which is where an
	 * exec'd image of this process opens it again (through /proc, under
	 * the ptrace rule): its own descriptor does not cross exec. */
	struct pt_own_src {
		int32_t pid, fd;
		uint64_t ino;
	} own_src[PT_SLOTS];
	uint64_t tree_ticket[PT_SLOTS]; /* the ticket whose PT_CS_TREE was acted on */
	struct pt_view view[PT_VIEWS];
};
/* (hidden, as pt_ctl: read by every event, with no GOT entry in between) */
extern struct pt_proc pt_proc __attribute__((visibility("hidden")));

/* The view of slot s, whose att bit is set (the recording path). */
static inline struct pt_view *pt_view_att(unsigned s)
{
	return atomic_load_explicit(&pt_proc.curp[s], memory_order_acquire);
}

static inline struct pt_view *pt_view(unsigned s)
{
	struct pt_view *v = atomic_load_explicit(&pt_proc.curp[s], memory_order_acquire);
	return v ? v : &pt_proc.view[0];
}

/* This process's control segment (never NULL: a process-local fallback
 * when no memfd could be made) and its fd (-1 without memfd). */
extern struct pt_ctl *pt_ctl __attribute__((visibility("hidden")));
extern int pt_ctl_fd;
extern struct pt_fdid pt_ctl_id; /* its file: the program may have closed pt_ctl_fd */
void pt_ctl_atfork_child(void);
struct pt_ctl *pt_ctl_map(int fd, pid_t pid);
void pt_ctl_bump(struct pt_ctl *c, uint32_t set, uint32_t clear);
void pt_ctl_want_refresh(struct pt_ctl *c);
void pt_ctl_slot_want(struct pt_ctl *c, unsigned s, const _Atomic uint64_t *filter);
/* attach.c: the traced side of the control segment */
void pt_resync(void);
void pt_resync_atfork_prepare(void);
void pt_resync_atfork_parent(void);
void pt_slot_mark_dead(unsigned s, struct pt_view *sl);
int pt_owner_alive(int fd, uint32_t byte);
void pt_owner_check(unsigned s, struct pt_view *sl, uint64_t ts);
void pt_detach_now(unsigned s, uint64_t ticket); /* after a quiesce: unmap too */
void pt_selfmap_add(unsigned s, uint64_t ticket, void *hdr, size_t size);
void pt_slot_own_fd(unsigned s, int fd, int close_it);
/* exec.c: the process's own exec keeps its control segment (and the fds
 * of inherited streams), which are otherwise close-on-exec */
void pt_exec_init(void);
/* set at load by the layer that owns trace ids (api/create.c): called
 * before this image's own exec, when the exec should succeed, to shut its
 * streams down as the standard says */
extern void (*pt_exec_shutdown)(void);
int pt_ctl_adopt(const char *env); /* after exec: 0 if the value named ours */
extern int pt_secure; /* AT_SECURE: set-user-ID, set-group-ID, capabilities */
int pt_reopen_at(int32_t pid, int32_t fd, uint64_t ino); /* /proc/PID/fd/FD if inode ino */
/* join.c: the stream `posixtrace record` names in the environment, joined
 * at load as if inherited (docs/design.md, "Tracing a process tree") */
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
void pt_map_release(void *hdr, size_t size);
/* alive.c: this process's liveness lock in each stream's file */
void pt_alive_take(struct pt_view *sl);
void pt_alive_drop(struct pt_view *sl);
void pt_alive_atfork_child(void);

#define PT_SYS      (-1) /* write_one()'s slot for a controller's system event */
#define PT_SYS_WAIT (-2) /* ... one that waits for room rather than be lost */
int pt_write_event(struct pt_view *sl, struct pt_tw *tw, unsigned level, trace_event_id_t id,
                   const void *data, size_t len, uintptr_t addr, int wait);
void pt_seal_thread(void); /* seal this thread's chunks (thread exit) */
void pt_record_atfork_child(void);

extern _Thread_local _Atomic unsigned pt_nest PT_TLS;
extern _Thread_local _Atomic int pt_thread_index PT_TLS; /* 0: not registered yet */
void pt_thread_register(void);
/* Mark this thread busy before it looks at any stream (see quiesce.c).
 * (record.c's record_event does the same inline for level 0; a thread
 * not registered yet has never armed it, and goes the general way, which
 * comes here.) */
static inline unsigned pt_enter(void)
{
	if (PT_UNLIKELY(atomic_load_explicit(&pt_thread_index, memory_order_relaxed) == 0))
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

/* ------------------------------------ thread identities (thrmap.c) */
/* A chunk of stream s is about to be taken by this thread: say who the
 * thread is (kernel TID, name) if the stream has not heard it, or the name
 * changed.  One prctl(PR_GET_NAME), no other system call. */
void pt_thrmap_chunk(unsigned s, struct pt_view *sl, uint64_t ts);

/* ------------------------------------ the process's identity (procid.c) */
/* Its parent's pid and command line into sl (a stream just reached it). */
void pt_procid_put(struct pt_view *sl);


/* ------------------------------- payload descriptions (typemap.c) */
/* desc (checked by the caller, < PT_TYPE_DESC bytes) describes id's
 * payload from now on: kept for streams that reach the process later and
 * written into every stream it records into.  0, or ENOMEM. */
int pt_typemap_set(unsigned id, const char *desc);
void pt_typemap_dump(struct pt_view *sl, int32_t pid); /* all, into sl */
/* The order between a new object in the table and a new view: each side
 * passes here between its store and its load (a read-modify-write of one
 * word, so each sees the other's store, or the other sees its own). */
extern _Atomic uint32_t pt_objmap_sync;
static inline void pt_objmap_order(void)
{
	atomic_fetch_add_explicit(&pt_objmap_sync, 1, memory_order_seq_cst);
}

#endif
