/*
 * lifecycle.c -- the traced side's start, fork and thread exit, in one
 * place: the library's constructor, its one pthread_atfork()
 * registration and the thread-exit hook, each calling the parts of
 * producer/ in the order written here.  No other file of producer/ has a
 * constructor, a fork handler or a key destructor; each part has plain
 * functions (pt_*_init, pt_*_atfork_*) for this file to call.
 *
 * Beside it, below and above (docs/design.md, "The lifecycle of the
 * traced side"): the clock's constructor (shm/clock.c; called here first
 * as well, so the order does not hang on the link), which the reader-only
 * archive keeps without any of producer/; the trace-id table's fork
 * handlers (control/table.c), registered at a process's first stream, so
 * after these; api/create.c's exit destructor and the hook it sets for
 * exec (pt_exec_shutdown).  Nothing here calls up a layer.
 */
#include <linux/auxvec.h> /* AT_SECURE (<sys/auxv.h> brings <elf.h>, whose PT_TLS clashes) */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include "producer.h"

extern unsigned long getauxval(unsigned long type); /* <sys/auxv.h> */

/* what state.c names so that a static link brings this file along */
const char pt_lifecycle_linked __attribute__((visibility("hidden")));

/* ------------------------------------------------------------ fork */
/* The parent, before the fork: no resync half done, and every stream the
 * process is traced into mapped, so the child inherits them all.  (The
 * trace-id table's prepare handler, registered later, runs before this
 * one: pt_trid_table_lock is taken before the resync lock.) */
static void atfork_prepare(void)
{
	pt_resync_atfork_prepare();
}

static void atfork_parent(void)
{
	pt_resync_atfork_parent();
}

/* The child: one thread, async-signal-safe calls only; before the
 * trace-id table's child handler, so the trace ids it drops find the
 * traced side already the child's. */
static void atfork_child(void)
{
	pt_pid = getpid();            /* first: everything below writes it */
	pt_objmap_atfork_child();     /* the table's lock: the next step writes FORK entries */
	pt_inherit_atfork_child();    /* a control segment of its own; inherited streams kept */
	pt_alive_atfork_child();      /* liveness locks of its own, for the streams kept */
	pt_record_atfork_child();     /* none of the parent's chunks; nesting 0 */
	pt_quiesce_atfork_child();    /* one thread: the registry anew */
	pt_resync_atfork_child();     /* the first event looks at the new segment */
	pt_thrmap_atfork_child();     /* another kernel thread: its TID and name asked again */
}

/* ----------------------------------------------------- thread exit */
/* The thread is exiting.  From here on no signal handler may run in it:
 * one that recorded an event would register the thread again after this
 * destructor, and the registry would keep a pointer into thread-local
 * storage that is freed with the thread (a later shutdown read it and
 * crashed).  Signals sent to this thread are discarded when it is gone;
 * process-wide ones go to another thread.  (A key destructor of another
 * library that records registers it again and so re-arms this one.) */
static void thread_exit(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pt_seal_thread();             /* its chunks readable to their end ... */
	pt_quiesce_thread_exit();     /* ... then out of the registry */
}

/* ------------------------------------------------------------ load */
/* Priority 101: before the program's own constructors (in a program
 * linked with the static library), so a program's constructor can record
 * its first event into a stream that waited for it across exec; and
 * while the process has one thread (but for a dlopen()). */
__attribute__((constructor(101))) static void traced_load(int argc, char **argv, char **envp)
{
	(void)envp;
	pt_clock_init();              /* ticks: before anything is written */
	pt_pid = getpid();            /* the only getpid() at load */
	/* A program that runs with privileges its caller does not have
	 * (set-user-ID, set-group-ID, file capabilities) adopts nothing its
	 * environment names: its control segment is a new one, which only a
	 * controller allowed to ptrace it can reach. */
	pt_secure = getauxval(AT_SECURE) != 0;
	pt_exec_init();               /* the C library's exec functions, before any exec */
	const char *e = pt_secure ? NULL : secure_getenv(PT_CTL_ENV);
	/* the previous image's segment and streams after an exec, else a new
	 * segment (without a memfd, only the fallback: nothing to name or join) */
	if ((e && pt_inherit_adopt(e) == 0) || pt_ctl_start() == 0) {
		pt_ctl_env_set();
		pt_join(pt_secure ? NULL : secure_getenv(PT_JOIN_ENV)); /* before the attach below */
	}
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child); /* before any stream */
	pt_objmap_init();             /* the objects loaded so far */
	pt_procid_init(argc, argv);   /* the command line */
	pt_thread_exit_keyed = pthread_key_create(&pt_thread_exit_key, thread_exit) == 0;
	pt_quiesce_prepare();         /* membarrier, while the process has one thread */
	pt_thrmap_init();
	pt_attach_at_load();          /* last: maps a waiting stream, writing the map, */
	                              /* the process and its types into it */
}
