/*
 * futex.c -- process-shared futex wait and wake: blocking readers, and
 * no-loss writers waiting for room (the words are in the stream's
 * segment, mapped by the traced process and its controller alike, so
 * never FUTEX_PRIVATE_FLAG).  Every function here is async-signal-safe.
 */
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shm.h"

/* Wait while *addr == val, at most rel_ms milliseconds.  0 when woken or
 * the value changed, ETIMEDOUT, or EINTR when a signal handler ran. */
int pt_futex_wait(_Atomic uint32_t *addr, uint32_t val, int rel_ms)
{
	struct timespec rel = { rel_ms / 1000, (long)(rel_ms % 1000) * 1000000 };

	if (syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, &rel, NULL, 0) == 0)
		return 0;
	if (errno == ETIMEDOUT || errno == EINTR)
		return errno;
	return 0; /* EAGAIN: the value had changed */
}

/* The same, at most rel_ns nanoseconds. */
int pt_futex_wait_ns(_Atomic uint32_t *addr, uint32_t val, uint64_t rel_ns)
{
	struct timespec rel = { (time_t)(rel_ns / 1000000000u), (long)(rel_ns % 1000000000u) };
	int saved = errno, rc = 0;

	if (syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, &rel, NULL, 0) != 0 &&
	    (errno == ETIMEDOUT || errno == EINTR))
		rc = errno;
	errno = saved; /* (a signal handler's event must not change it) */
	return rc;
}

void pt_futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Writers waiting for room (no-loss mode), if any: a chunk was freed
 * (all 0: wake one sleeper, the one the chunk is for; every other one
 * stays asleep, and the next chunk freed wakes the next) or the stream's
 * state changed (all 1: every sleeper must look).  room_waiters counts
 * the writers between their count and the end of their look after the
 * sleep (ring/pool.c, wait_room).  The caller made its change (the free
 * stack, the budget, the state) before: the fence orders it before the
 * load of room_waiters, as the waiter's fence orders its count before
 * its last look for room, so either the waiter sees the change or this
 * sees the waiter, and bumps room, which ends a sleep the waiter is about
 * to begin.  No waiter: a fence and a load, no system call. */
void pt_wake_room(struct pt_hdr *h, int all)
{
	PT_FULL_FENCE(&h->room_waiters);
	if (atomic_load_explicit(&h->room_waiters, memory_order_relaxed)) {
		atomic_fetch_add(&h->room, 1);
		int saved = errno;
		syscall(SYS_futex, (uint32_t *)&h->room, FUTEX_WAKE, all ? INT_MAX : 1, NULL, NULL, 0);
		errno = saved;
	}
}

/* Blocking readers, and writers waiting for room: called wherever the
 * stream's state changes (start, stop, clear, shutdown, a flush asked
 * for), so a waiting writer sees a stop at once. */
void pt_wake_readers(struct pt_hdr *h)
{
	atomic_fetch_add_explicit(&h->futex, 1, memory_order_release);
	pt_futex_wake(&h->futex);
	pt_wake_room(h, 1);
}
