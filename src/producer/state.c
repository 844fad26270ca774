/*
 * state.c -- the traced process's state that more than one file of
 * producer/ uses, defined in one place (declared in state.h), each with who
 * writes it and when.  Nothing here runs: lifecycle.c sets it up at load
 * and fork, the parts named below keep it.
 *
 * State only one file uses stays in that file, static, beside the code
 * that keeps it: the thread registry (quiesce.c), the table of loaded
 * objects and each thread's last entries in it (objmap.c), the payload
 * descriptions (typemap.c), a thread's identity (thrmap.c), the command
 * line (procid.c), the views' ages, the shared mappings and the resync
 * guard (attach.c, holds.c), the C library's exec functions and the ids
 * at load (exec.c), each thread's chunks (event.c).
 */
#include "state.h"

/* The linker brings lifecycle.o (the constructor, the fork handlers, the
 * thread-exit hook: nothing calls them by name) into a program linked with
 * the static library through this reference: every part of producer/ uses
 * this file, and none of it works unless the lifecycle has run. */
extern const char pt_lifecycle_linked __attribute__((visibility("hidden")));
__attribute__((used)) static const char *const bring_lifecycle = &pt_lifecycle_linked;

/* The views of the streams this process records into, and which slot uses
 * which.  Written by a resync (attach.c, under pt_proc.sync), by the
 * descriptors' keeping (holds.c), at load by exec.c's adoption and
 * join.c, and in a forked child (forkchild.c, attach.c); the recording
 * path reads it. */
struct pt_proc pt_proc;

/* The control segment: pt_ctl_fallback until ctlseg.c makes a memfd or
 * exec.c adopts the previous image's at load, replaced in a forked child
 * (forkchild.c through ctlseg.c); read by everything else.  pt_ctl_fd and
 * pt_ctl_id change with it; pt_secure is set once at load (lifecycle.c). */
union pt_ctl_mem pt_ctl_fallback;
struct pt_ctl *pt_ctl = &pt_ctl_fallback.c;
/* <trace.h>'s inline test reads the live word through this */
_Static_assert(PT_LIVE_MASK == 0xffu, "<trace.h> tests the low 8 bits of the live word");
PT_API const unsigned int *__posix_trace_gate = (const unsigned int *)&pt_ctl_fallback.c.live;
/* ... and, since POSIXTRACE_0.2, the wanted bitmap through this */
_Static_assert(PT_NIDS == 1024 && PT_NIDS / 64 == 16, "<trace.h> indexes 16 words of wanted bits");
PT_API const unsigned long long *__posix_trace_want =
	(const unsigned long long *)pt_ctl_fallback.c.want;
int pt_ctl_fd = -1;
struct pt_fdid pt_ctl_id;
int pt_secure;

/* Set at load by api/create.c (the layer that owns trace ids), called by
 * exec.c before this image's own exec. */
void (*pt_exec_shutdown)(void);

/* The thread's recording state (state.h: its nesting level, its entry in
 * quiesce.c's registry, the fast path's state and its writers, event.c).
 * Initial-exec TLS in a library that may be dlopen()ed comes out of a
 * small reserve (tests/abi and tests/docs_agree do it; glibc 2.36 took
 * 1680 bytes in all, not 1688, in docs_agree): all zero at the start. */
_Thread_local struct pt_thr pt_rec PT_TLS;
_Static_assert(sizeof(struct pt_tw) == 48, "struct pt_tw grew: mind the static TLS reserve");
_Static_assert(sizeof pt_rec == 32 + 8 + 48 * PT_SLOTS * PT_LEVELS,
               "mind the static TLS reserve");
/* Made once at load by lifecycle.c (pt_thread_exit_keyed: it was, as a
 * program may have taken every key before a dlopen() of the library);
 * set per thread by quiesce.c when the thread registers, so that the
 * thread's exit runs the hook. */
pthread_key_t pt_thread_exit_key;
int pt_thread_exit_keyed;

/* The object this thread's last event came from (objmap.c, read by
 * event.c), and the order between new objects and new views (objmap.c
 * and attach.c). */
_Thread_local struct pt_objrange pt_obj PT_TLS;
_Atomic uint32_t pt_objmap_sync;
