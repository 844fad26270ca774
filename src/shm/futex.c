/*
 * futex.c -- process-shared futex wait and wake for blocking readers.
 */
#include <limits.h>
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

void pt_futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void pt_wake_readers(struct pt_hdr *h)
{
	atomic_fetch_add_explicit(&h->futex, 1, memory_order_release);
	pt_futex_wake(&h->futex);
}
