/*
 * quiesce.h -- knowing when no thread is inside posix_trace_event()
 * (quiesce.c): entering and leaving the recording path, and the waits of
 * a shutdown.
 */
#ifndef POSIXTRACE_TRACED_QUIESCE_H
#define POSIXTRACE_TRACED_QUIESCE_H

#include "state.h"

void pt_thread_register(void);
/* Mark this thread busy before it looks at any stream (see quiesce.c).
 * (event.c's record_event does the same inline for level 0; a thread
 * not registered yet has never armed it, and goes the general way, which
 * comes here.)  pt_leave (state.h) undoes it. */
static inline unsigned pt_enter(void)
{
	if (PT_UNLIKELY(atomic_load_explicit(&pt_thread_index, memory_order_relaxed) == 0))
		pt_thread_register();
	unsigned level = atomic_load_explicit(&pt_nest, memory_order_relaxed);
	atomic_store_explicit(&pt_nest, level + 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return level;
}

int pt_quiesce(void);    /* wait until no thread is inside posix_trace_event */
int pt_quiesce_try(void); /* the same without waiting: 0 if none is inside now */
void pt_quiesce_prepare(void); /* once, before the first stream exists */
void pt_quiesce_thread_exit(void); /* the exiting thread leaves the registry */
void pt_quiesce_atfork_child(void);

#endif
