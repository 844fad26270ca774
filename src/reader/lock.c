/*
 * lock.c -- a trace id's lock taken when another thread holds it: spin a
 * little, then yield (lock.h).
 */
#include <sched.h>
#include "lock.h"

void pt_lock_slow(pt_lock_t *l)
{
	for (unsigned spins = 0;; spins++) {
		if (!atomic_load_explicit(l, memory_order_relaxed) &&
		    !atomic_exchange_explicit(l, 1, memory_order_acquire))
			return;
		if (spins >= 64)
			sched_yield();
#if defined(__x86_64__) || defined(__i386__)
		else
			__builtin_ia32_pause();
#endif
	}
}
