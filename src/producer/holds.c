/*
 * holds.c -- what this process holds for the stream of each control slot,
 * beside its views (attach.c): the descriptor it made for the stream
 * itself (an inherited stream's dup, a memfd of its own), kept in
 * pt_proc.own_fd, and the one mapping of a stream it made, shared by the
 * trace id and the recording view.  Async-signal-safe: atomics, close and
 * munmap.
 */
#include <sys/mman.h>
#include "producer.h"

/* A stream this process made for itself is mapped once: the trace id and
 * the recording view share the mapping, which goes when both let go.
 * (One mapping is also what lets ThreadSanitizer see the two sides meet.) */
static struct {
	_Atomic uint64_t ticket;
	void *hdr;
	size_t size;
	_Atomic int refs;
} selfmap[PT_SLOTS];

/* Stream s (ticket), made by this process, is mapped at hdr: one reference. */
void pt_selfmap_add(unsigned s, uint64_t ticket, void *hdr, size_t size)
{
	selfmap[s].hdr = hdr;
	selfmap[s].size = size;
	atomic_store(&selfmap[s].refs, 1);
	atomic_store_explicit(&selfmap[s].ticket, ticket, memory_order_release);
}

/* The mapping of stream s if this process made it (ticket, size), with
 * one more reference; else NULL. */
void *pt_selfmap_get(unsigned s, uint64_t ticket, size_t size)
{
	if (atomic_load_explicit(&selfmap[s].ticket, memory_order_acquire) != ticket ||
	    selfmap[s].size != size)
		return NULL;
	int r = atomic_load(&selfmap[s].refs);
	while (r > 0 && !atomic_compare_exchange_weak(&selfmap[s].refs, &r, r + 1))
		;
	return r > 0 ? selfmap[s].hdr : NULL;
}

/* Let go of a mapping of a segment (async-signal-safe). */
void pt_map_release(void *hdr, size_t size)
{
	for (unsigned s = 0; s < PT_SLOTS; s++)
		if (selfmap[s].hdr == hdr && atomic_load(&selfmap[s].refs) > 0) {
			if (atomic_fetch_sub(&selfmap[s].refs, 1) == 1) {
				atomic_store(&selfmap[s].ticket, 0);
				munmap(hdr, size);
			}
			return;
		}
	munmap(hdr, size);
}

/* Slot s's stream is held by fd, which this process made (close_it: a
 * dup of its own, closed when the stream ends here). */
void pt_slot_own_fd(unsigned s, int fd, int close_it)
{
	pt_proc.own_fd[s] = fd + 1;
	pt_fdid_of(fd, &pt_proc.own_id[s]);
	if (close_it)
		atomic_fetch_or(&pt_proc.own_close, 1u << s);
	else
		atomic_fetch_and(&pt_proc.own_close, ~(1u << s));
}

/* This process no longer needs its own descriptor of slot s. */
void pt_slot_own_fd_drop(unsigned s)
{
	int fd = pt_proc.own_fd[s] - 1;

	pt_proc.own_fd[s] = 0;
	if (fd >= 0 && (atomic_fetch_and(&pt_proc.own_close, ~(1u << s)) >> s & 1))
		pt_close_own(fd, &pt_proc.own_id[s]); /* (the number may be the program's now) */
}
