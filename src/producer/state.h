/*
 * state.h -- the traced process's state that more than one file of
 * producer/ uses: every such global and thread-local variable, declared
 * here and defined in state.c, where each says who writes it and when.
 * The inline functions here read that state and call nothing.
 */
#ifndef POSIXTRACE_TRACED_STATE_H
#define POSIXTRACE_TRACED_STATE_H

#include <pthread.h>
#include "../ring/ring.h"

/* ---------------------------------------- the views of streams (pt_proc) */
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

/* ------------------------------------------- the control segment */
/* This process's control segment (never NULL: pt_ctl_fallback, process
 * memory, when no memfd could be made) and its fd (-1 without memfd). */
union pt_ctl_mem {
	struct pt_ctl c;
	char bytes[PT_CTL_SIZE];
};
extern union pt_ctl_mem pt_ctl_fallback __attribute__((visibility("hidden")));
extern struct pt_ctl *pt_ctl __attribute__((visibility("hidden")));
extern int pt_ctl_fd;
extern struct pt_fdid pt_ctl_id; /* its file: the program may have closed pt_ctl_fd */
extern int pt_secure; /* AT_SECURE: set-user-ID, set-group-ID, capabilities */
/* (and <trace.h>'s __posix_trace_gate and __posix_trace_want, which point
 * into the segment: its inline test reads them) */
#define PT_CTL_ENV "POSIXTRACE_CTL" /* names the segment across this process's exec */

/* ------------------------------------------------------- exec */
/* set by the layer that owns trace ids (api/create.c): called before this
 * image's own exec, when the exec should succeed, to shut its streams down
 * as the standard says */
extern void (*pt_exec_shutdown)(void);

/* ---------------------------------------------- the recording threads */
/* The fast path's own state while armed (event.c says what each field
 * is, and when it is armed). */
struct pt_fast {
	char *data;
	struct pt_hdr *hdr;
	uint32_t cw, st, w, lim;
};
/* One thread-local object for all the recording path touches at level 0,
 * so that one TLS base serves it all (a register or an immediate in a
 * program, one GOT entry in the shared library): the fast path's state,
 * the thread's nesting level inside posix_trace_event() (pt_nest:
 * pt_enter and pt_leave, in that thread only; read by quiesce.c's
 * waits), its entry in quiesce.c's registry (pt_thread_index, 0: not
 * registered yet; that thread, or the exit hook) and its writers, one per
 * slot and nesting level (event.c). */
struct pt_thr {
	struct pt_fast fast;
	_Atomic unsigned nest;
	_Atomic int thread_index;
	struct pt_tw tw[PT_SLOTS][PT_LEVELS];
};
extern _Thread_local struct pt_thr pt_rec PT_TLS;
#define pt_nest         (pt_rec.nest)
#define pt_thread_index (pt_rec.thread_index)
/* the key whose destructor is the thread-exit hook (lifecycle.c) */
extern pthread_key_t pt_thread_exit_key;
extern int pt_thread_exit_keyed; /* 0: no key (never set one: it would be the program's) */

/* Release: a shutdown that sees pt_nest back at 0 also sees every access
 * made in between (a plain store on x86). */
static inline void pt_leave(unsigned level)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&pt_nest, level, memory_order_release);
}

/* ------------------------------------------- the map of loaded code */
/* The range of the object this thread's last event came from: an event
 * from outside it calls pt_objmap_miss() (event.c). */
struct pt_objrange { uintptr_t lo, span; };
extern _Thread_local struct pt_objrange pt_obj PT_TLS;
/* The order between a new object in the table and a new view: each side
 * passes here between its store and its load (a read-modify-write of one
 * word, so each sees the other's store, or the other sees its own). */
extern _Atomic uint32_t pt_objmap_sync;
static inline void pt_objmap_order(void)
{
	atomic_fetch_add_explicit(&pt_objmap_sync, 1, memory_order_seq_cst);
}

#endif
