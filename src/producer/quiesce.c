/*
 * quiesce.c -- knowing when no thread is inside posix_trace_event().
 *
 * A recording thread marks itself busy (pt_nest > 0) and then re-reads the
 * live mask.  posix_trace_shutdown() clears the stream's bit, forces a
 * memory barrier on every thread of the process (membarrier), then waits
 * until each registered thread has been seen outside posix_trace_event.
 * After that nobody can touch the stream's mapping and it is unmapped.
 * The recording path itself never fences or locks.
 */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "quiesce.h"

#define MAX_THREADS 4096

static _Atomic(_Atomic unsigned *) threads[MAX_THREADS];
static _Atomic unsigned high;          /* entries in use are below this */
static _Atomic int untracked;          /* a thread could not be registered */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int membarrier_ok;

/* The thread is exiting (lifecycle.c's thread-exit hook, with every
 * signal blocked, after its chunks were sealed): its entry goes, so no
 * shutdown reads thread-local storage that is freed with the thread. */
void pt_quiesce_thread_exit(void)
{
	pthread_mutex_lock(&reg_lock);
	if (pt_thread_index > 0)
		atomic_store(&threads[pt_thread_index - 1], NULL);
	pt_thread_index = 0;
	pthread_mutex_unlock(&reg_lock);
}

/* At load (lifecycle.c), while the process has one thread: the kernel
 * registers a process for expedited membarrier at once when it has a
 * single thread, but waits for an RCU grace period (milliseconds) when it
 * has several.  Done then, a thread's first event never meets that wait
 * (issue 39: a first event took 9-16 ms in a process that had started its
 * threads).  A library dlopen()ed by a threaded process pays it in
 * dlopen(), still off the event path.
 *
 * Once per process image (the registration is kept across fork and
 * dropped at exec, when the constructor runs again); also called where a
 * stream is made or mapped, in case the constructor's call failed or did
 * not run.  Async-signal-safe. */
void pt_quiesce_prepare(void)
{
	static _Atomic int state; /* 0 not yet, 1 being done, 2 done */
	int exp = 0;

	if (atomic_load(&state) == 2 || !atomic_compare_exchange_strong(&state, &exp, 1))
		return;
	membarrier_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	atomic_store(&state, 2);
}

/* First time this thread enters the recording path: make it visible to
 * pt_quiesce().  Lock-free and without a system call, so it may run in a
 * signal handler and costs a thread's first event no more than a new
 * chunk does.  A handler that records while the code it interrupted is
 * registering the same thread (the same &pt_nest) may claim a second
 * entry: whichever of the two sets pt_thread_index first keeps its
 * entry, the other frees its own, so no entry outlives the thread (a
 * shutdown once read one after the thread exited).  Two entries for one
 * thread meanwhile are harmless: both point to the same counter. */
void pt_thread_register(void)
{
	if (PT_LIKELY(pt_thread_index != 0))
		return;
	/* without the exit hook (no key: the program had taken them all) an
	 * entry would outlive its thread: the thread is left untracked, so
	 * a shutdown leaves the stream's memory mapped rather than wait */
	for (unsigned i = 0; pt_thread_exit_keyed && i < MAX_THREADS; i++) {
		_Atomic unsigned *exp = NULL;
		if (!atomic_compare_exchange_strong(&threads[i], &exp, &pt_nest))
			continue;
		unsigned h = atomic_load(&high);
		while (h < i + 1 && !atomic_compare_exchange_weak(&high, &h, i + 1))
			;
		int zero = 0;
		if (!atomic_compare_exchange_strong(&pt_thread_index, &zero, (int)i + 1)) {
			atomic_store(&threads[i], NULL); /* a handler registered us first */
			return;
		}
		pthread_setspecific(pt_thread_exit_key, (void *)1); /* lifecycle.c's hook at exit */
		return;
	}
	int zero = 0;
	if (atomic_compare_exchange_strong(&pt_thread_index, &zero, -1))
		atomic_store(&untracked, 1);
}

/* Returns 0 once every thread has been seen outside posix_trace_event,
 * -1 if that could not be established (then the caller must not unmap). */
int pt_quiesce(void)
{
	int rc = 0;

	if (atomic_load(&untracked) || atomic_load(&pt_nest) != 0)
		return -1;
	if (membarrier_ok)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	else {
		struct timespec ms = { 0, 10 * 1000000 };
		atomic_thread_fence(memory_order_seq_cst);
		nanosleep(&ms, NULL); /* store buffers drain long before this */
	}
	pthread_mutex_lock(&reg_lock);
	unsigned n = atomic_load(&high);
	for (unsigned i = 0; i < n && rc == 0; i++) {
		_Atomic unsigned *p = atomic_load(&threads[i]);
		if (!p || p == &pt_nest)
			continue;
		for (long spins = 0; atomic_load_explicit(p, memory_order_acquire) != 0; spins++) {
			if (spins > 200000) { /* a thread stopped mid-event (debugger, long handler) */
				rc = -1;
				break;
			}
			sched_yield();
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

/* Without waiting (for a resync, which may run in a signal handler): 0 if,
 * after a barrier on every thread, none was inside posix_trace_event(). */
int pt_quiesce_try(void)
{
	if (!membarrier_ok || atomic_load(&untracked) || atomic_load(&pt_nest) != 0)
		return -1;
	syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	unsigned n = atomic_load(&high);
	for (unsigned i = 0; i < n; i++) {
		_Atomic unsigned *p = atomic_load(&threads[i]);
		if (p && p != &pt_nest && atomic_load_explicit(p, memory_order_acquire) != 0)
			return -1;
	}
	return 0;
}

void pt_quiesce_atfork_child(void)
{
	pthread_mutex_init(&reg_lock, NULL);
	for (unsigned i = 0; i < MAX_THREADS; i++)
		atomic_store(&threads[i], NULL);
	atomic_store(&high, 0);
	pt_thread_index = 0;
}
