/*
 * lock.h -- a stream's lock (struct pt_stream's lock, reader.h's
 * pt_lock_t), held only for short, non-blocking sections (a read or a
 * control call), so a spin-then-yield lock is cheaper than a mutex on the
 * reader's per-event path.  A thread holding it must never wait for room
 * in a stream (no-loss mode: ring/'s pt_nowait), as a flusher may need
 * the lock to make the room.  The slow path, lock.c.
 */
#ifndef POSIXTRACE_READER_LOCK_H
#define POSIXTRACE_READER_LOCK_H

#include "reader.h"

void pt_lock_slow(pt_lock_t *l);
static inline void pt_lock(pt_lock_t *l)
{
	pt_nowait++; /* (before: a signal handler between the two is inside too) */
	atomic_signal_fence(memory_order_seq_cst);
	if (PT_UNLIKELY(atomic_exchange_explicit(l, 1, memory_order_acquire)))
		pt_lock_slow(l);
}
static inline void pt_unlock(pt_lock_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	pt_nowait--;
}

#endif
