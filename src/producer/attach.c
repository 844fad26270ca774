/*
 * attach.c -- the traced side of the control segment.
 *
 * A controller changes a slot of pt_ctl and counts the change in the live
 * word; the first posix_trace_event() that sees a count it has not acted on
 * calls pt_resync(), which maps new streams, drops ended ones and refreshes
 * the filter copies.  Everything here is async-signal-safe: syscalls
 * (mmap, fstat, fcntl, fallocate) and atomics, no lock a signal handler
 * could wait on for ever, no allocation.
 *
 * Views (pt_proc.view) are filled while no thread uses them and published
 * by index; a view that was in use is recycled only after a grace period
 * in which every thread was seen outside posix_trace_event().
 */
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "producer.h"

static _Thread_local int in_sync PT_TLS;
static uint32_t view_used;     /* views ever used: 0..PT_VIEWS */
static uint64_t view_retired[PT_VIEWS]; /* bit 63: retired; low bits: order */
static uint64_t retire_count;
static uint16_t next_gen;

/* The descriptor to map slot s's stream from: the one this process holds
 * for it, if the slot says the stream is not in the control memfd (it
 * was inherited, or is in a memfd of this process's own); else the
 * control memfd.  -1 if this process holds none: whatever fd number the
 * slot names, it is never used. */
static int slot_home(unsigned s, const struct pt_ctl_slot *e)
{
	if ((atomic_load(&e->flags) & PT_CS_INHERITED) || atomic_load(&e->fd) >= 0)
		return pt_proc.own_fd[s] - 1;
	return pt_ctl_fd;
}

/* Is fd still the file whose inode is ino (fd numbers get reused)? */
static int same_file(int fd, uint64_t ino, uint64_t min_size)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_ino == ino &&
	       (uint64_t)st.st_size >= min_size;
}

static void reap(unsigned s, uint64_t ticket);

/* Slot s's stream traces a tree (its controller may say so after the
 * stream reached us: attach --tree): what this process starts from now
 * on joins it too.  Once per stream. */
static void tree_check(unsigned s, uint64_t ticket)
{
	const struct pt_ctl_slot *e = &pt_ctl->slot[s];

	if (pt_proc.tree_ticket[s] != ticket && (atomic_load(&e->flags) & PT_CS_TREE)) {
		pt_proc.tree_ticket[s] = ticket;
		pt_tree_env(e);
	}
}

/* The stream is over for this process: stop writing, detach at next resync. */
void pt_slot_mark_dead(unsigned s, struct pt_view *sl)
{
	if (atomic_exchange(&sl->dead, 1))
		return;
	pt_ctl_bump(pt_ctl, 0, 1u << s);
}

/* Called on a new chunk: every ~10 ms, is the controller still there? */
void pt_owner_check(unsigned s, struct pt_view *sl, uint64_t ts)
{
	uint64_t last = atomic_load_explicit(&sl->owner_checked, memory_order_relaxed);

	if (ts - last < sl->owner_every)
		return;
	atomic_store_explicit(&sl->owner_checked, ts, memory_order_relaxed);
	if (!pt_owner_alive(sl->home_fd, sl->lock_byte)) {
		uint32_t st = atomic_load(&sl->hdr->state);
		while (!(st & PT_ST_DEAD) &&
		       !atomic_compare_exchange_weak(&sl->hdr->state, &st,
		                                     (st & ~PT_ST_RUNNING) | PT_ST_DEAD))
			;
		pt_slot_mark_dead(s, sl);
		reap(s, sl->ticket); /* free its memory now: the live bit is gone, so
		                      * a resync may not come soon */
	}
}

/* Free a control slot whose controller is gone, and the memory of its
 * stream.  The region is only punched if fd is still the file it was in. */
static void reap(unsigned s, uint64_t ticket)
{
	struct pt_ctl_slot *e = &pt_ctl->slot[s];
	int hfd = slot_home(s, e);
	uint64_t off = atomic_load(&e->off), size = atomic_load(&e->size);

	if (!atomic_compare_exchange_strong(&e->ticket, &ticket, 0))
		return;
	pt_ctl_bump(pt_ctl, 0, 1u << s);
	/* only a stream region of a file of ours, never the control pages */
	if (hfd >= 0 && same_file(hfd, atomic_load(&e->ino), 0) && size && off % 4096 == 0 &&
	    off >= PT_CTL_SIZE && off <= PT_CTL_REGION_MAX && size <= 1ull << 42 &&
	    atomic_load(&e->lock_byte) != UINT32_MAX)
		fallocate(hfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)size);
	if (hfd >= 0 && hfd != pt_ctl_fd)
		pt_slot_own_fd_drop(s);
}

static uint64_t ticks_per_10ms(const struct pt_clock_img *c)
{
	if (c->kind == PT_CLK_TSC && c->npts >= 2 && c->ns[1] > c->ns[0] && c->tick[1] > c->tick[0]) {
		double r = (double)(c->tick[1] - c->tick[0]) / (double)(c->ns[1] - c->ns[0]);
		if (r > 0.01 && r < 100)
			return (uint64_t)(r * 1e7);
	}
	return 10000000u;
}

/* A view nobody can be using: a never-used one, or the longest-retired one
 * after a grace period.  -1 if none now. */
static int view_get(void)
{
	int best = -1;

	for (unsigned i = 0; i < view_used; i++)
		if ((view_retired[i] >> 63) && !pt_proc.view[i].hdr) { /* released already */
			view_retired[i] = 0;
			return (int)i;
		}
	if (view_used < PT_VIEWS)
		return (int)view_used++;
	for (unsigned i = 0; i < PT_VIEWS; i++)
		if ((view_retired[i] >> 63) &&
		    (best < 0 || view_retired[i] < view_retired[best]))
			best = (int)i;
	if (best < 0 || pt_quiesce_try() != 0)
		return -1;
	if (pt_proc.view[best].hdr)
		pt_map_release(pt_proc.view[best].hdr, pt_proc.view[best].map_size);
	pt_alive_drop(&pt_proc.view[best]);
	pt_proc.view[best].hdr = NULL;
	view_retired[best] = 0;
	return best;
}

static void view_retire(unsigned v)
{
	view_retired[v] = 1ull << 63 | ++retire_count;
}

/* Retired views are unmapped as soon as no thread can be using them (a
 * barrier on every thread found none inside posix_trace_event()), not
 * when a view is next needed: a controller that attached and left must
 * leave the process as it was (issue 54: each `live` or `top` left 18 MB
 * of address space mapped, up to 64 of them).  1 if some are left for
 * later (a thread was busy, or we run inside an event). */
static int release_retired(void)
{
	int any = 0;

	for (unsigned i = 0; i < view_used; i++)
		any |= (view_retired[i] >> 63) && pt_proc.view[i].hdr;
	if (!any)
		return 0;
	if (pt_quiesce_try() != 0)
		return 1;
	for (unsigned i = 0; i < view_used; i++)
		if ((view_retired[i] >> 63) && pt_proc.view[i].hdr) {
			pt_map_release(pt_proc.view[i].hdr, pt_proc.view[i].map_size);
			pt_alive_drop(&pt_proc.view[i]);
			pt_proc.view[i].hdr = NULL;
		}
	return 0;
}

static void detach(unsigned s)
{
	atomic_fetch_and(&pt_proc.att, ~(1u << s));
	view_retire(atomic_load(&pt_proc.cur[s]));
}

/* An inherited or joined slot this process will not attach (it records
 * into that stream through another slot, or cannot open it): free it,
 * leaving the stream alone (reap() would punch its memory out). */
static void unjoin(unsigned s, uint64_t ticket)
{
	struct pt_ctl_slot *e = &pt_ctl->slot[s];

	if (!atomic_compare_exchange_strong(&e->ticket, &ticket, 0))
		return;
	pt_ctl_bump(pt_ctl, 0, 1u << s);
	if (pt_proc.own_fd[s])
		pt_slot_own_fd_drop(s);
}

/* 0 attached, 1 cannot attach this ticket (never retried), -1 retry later. */
static int attach(unsigned s, uint64_t ticket)
{
	struct pt_ctl_slot *e = &pt_ctl->slot[s];
	uint64_t off = atomic_load(&e->off), size = atomic_load(&e->size);
	uint64_t ino = atomic_load(&e->ino);
	uint32_t byte = atomic_load(&e->lock_byte), flags = atomic_load(&e->flags);

	if (atomic_load_explicit(&e->ticket, memory_order_acquire) != ticket)
		return -1;
	/* a stream joined twice (the environment and a controller's request,
	 * or a request and fork) is recorded into once; a request is opened
	 * here, by this process, under the ptrace rule (join.c) */
	if ((flags & PT_CS_INHERITED) &&
	    (pt_join_already_in(ino, off, (int)s, 1) ||
	     ((flags & PT_CS_JOIN) && pt_join_slot(s, e) != 0))) {
		unjoin(s, ticket);
		return 1;
	}
	int hfd = slot_home(s, e), own = hfd >= 0 && hfd != pt_ctl_fd;
	if (!own && pt_proc.own_fd[s])
		pt_slot_own_fd_drop(s); /* an inherited stream's slot now names another one */
	if (hfd < 0 || off % 4096 || size < sizeof(struct pt_hdr) || size > 1ull << 42 ||
	    off > PT_CTL_REGION_MAX || (!own && off < PT_CTL_SIZE))
		return 1;
	if (!same_file(hfd, ino, off + size)) { /* its memfd is gone (exec) */
		reap(s, ticket);
		return 1;
	}
	if (!pt_owner_alive(hfd, byte)) {
		reap(s, ticket);
		return 1;
	}
	pt_quiesce_prepare();
	int v = view_get();
	if (v < 0)
		return -1;
	struct pt_hdr *h = !own ? pt_selfmap_get(s, ticket, size) : NULL;
	if (!h)
		h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, hfd, (off_t)off);
	struct pt_view *sl = &pt_proc.view[v];
	if (h == MAP_FAILED) {
		view_retire((unsigned)v);
		sl->hdr = NULL;
		return 1;
	}
	if (pt_segment_check(h, size) != 0 ||
	    h->clk.kind != (pt_clock_tsc ? PT_CLK_TSC : PT_CLK_MONO)) {
		pt_map_release(h, size);
		view_retire((unsigned)v);
		sl->hdr = NULL;
		return 1;
	}
	pt_slot_fill(sl, h, size);
	sl->test_hdr_filter = (flags & PT_CS_INHERITED) != 0;
	if (sl->test_hdr_filter) /* our control segment does not hear of filter changes */
		for (unsigned i = 0; i < PT_NIDS / 64; i++)
			atomic_store_explicit(&sl->filter[i], 0, memory_order_relaxed);
	if (!++next_gen)
		next_gen = 1;
	atomic_store_explicit(&sl->gen, next_gen, memory_order_relaxed);
	sl->home_fd = hfd;
	sl->lock_byte = byte;
	sl->region_off = off;
	pt_alive_take(sl); /* before the view is published: its first chunk */
	sl->ticket = ticket;
	sl->owner_every = ticks_per_10ms(&h->clk);
	atomic_store(&sl->owner_checked, pt_now());
	atomic_store(&sl->dead, 0);
	/* names this process registered before the stream reached it */
	pt_names_copy(sl->names, pt_ctl_names(pt_ctl));
	/* the map of this process's code (objmap.c), before its first event */
	uint32_t known = pt_objmap_dump(sl, pt_pid, 0);
	pt_procid_put(sl, 0); /* who this process is: its parent, its command line */
	atomic_store_explicit(&pt_proc.cur[s], (uint32_t)v, memory_order_release);
	atomic_store_explicit(&pt_proc.curp[s], sl, memory_order_release);
	atomic_fetch_or_explicit(&pt_proc.att, 1u << s, memory_order_release);
	/* objects found meanwhile by a thread that did not see this view yet */
	pt_objmap_order();
	pt_objmap_dump(sl, pt_pid, known ? known : 1);
	/* the payload descriptions, after the view is published: one given
	 * meanwhile is in the table now or was written into the view */
	pt_typemap_dump(sl, pt_pid);
	tree_check(s, ticket);
	return 0;
}

static void refresh_filter(struct pt_view *sl, unsigned s)
{
	if (atomic_load(&pt_ctl->slot[s].flags) & PT_CS_INHERITED)
		return;
	for (unsigned i = 0; i < PT_NIDS / 64; i++)
		atomic_store_explicit(&sl->filter[i],
		                      atomic_load_explicit(&sl->hdr->filter[i], memory_order_relaxed),
		                      memory_order_relaxed);
}

static void resync_locked(void);

void pt_resync(void)
{
	if (in_sync)
		return; /* a signal handler that interrupted our own resync */
	while (atomic_exchange_explicit(&pt_proc.sync, 1, memory_order_acquire)) {
		if (atomic_load(&pt_nest) != 0)
			return; /* we may have interrupted the holder: do not wait */
		sched_yield();
	}
	in_sync = 1;
	resync_locked();
	in_sync = 0;
	atomic_store_explicit(&pt_proc.sync, 0, memory_order_release);
}

/* fork(): the child must inherit every stream the parent is traced into,
 * mapped or not yet, and no resync may be half done. */
void pt_resync_atfork_prepare(void)
{
	while (atomic_exchange_explicit(&pt_proc.sync, 1, memory_order_acquire))
		sched_yield();
	in_sync = 1;
	resync_locked();
	in_sync = 0;
}

void pt_resync_atfork_parent(void)
{
	atomic_store_explicit(&pt_proc.sync, 0, memory_order_release);
}

/* ... and in the child, once its control segment is its own (inherit.c):
 * no resync runs, and the first event looks at the new segment. */
void pt_resync_atfork_child(void)
{
	atomic_store(&pt_proc.sync, 0);
	atomic_store(&pt_proc.seen, 0);
}

static void resync_locked(void)
{
	int busy = 0;

	if (pt_proc.retry_at && pt_now() < pt_proc.retry_at)
		return;
	pt_proc.retry_at = 0;
	uint32_t w = atomic_load_explicit(&pt_ctl->live, memory_order_acquire);
	for (unsigned s = 0; s < PT_SLOTS; s++) {
		uint64_t tk = atomic_load_explicit(&pt_ctl->slot[s].ticket, memory_order_acquire);
		int att = atomic_load(&pt_proc.att) >> s & 1;
		struct pt_view *sl = pt_view(s);

		if (att && (tk != pt_proc.ticket[s] || atomic_load(&sl->dead))) {
			if (tk == pt_proc.ticket[s] && atomic_load(&sl->dead))
				reap(s, tk);
			detach(s);
			att = 0;
		}
		if (!att && tk > PT_TICKET_BUSY && tk != pt_proc.ticket[s]) {
			int rc = attach(s, tk);
			if (rc < 0)
				busy = 1;
			else
				pt_proc.ticket[s] = tk;
			att = rc == 0;
		}
		if (att) {
			refresh_filter(pt_view(s), s);
			tree_check(s, tk);
		}
	}
	/* views to unmap, a thread inside an event: again in a millisecond,
	 * for a second or so at most (a thread stopped in a debugger must
	 * not send every event through here for ever; the next change of
	 * the control word tries again) */
	static unsigned release_tries;
	if (!release_retired())
		release_tries = 0;
	else if (++release_tries < 1000)
		busy = 1;
	if (busy) { /* try again in a millisecond or so (ticks are ns or faster) */
		pt_proc.retry_at = pt_now() + 1000000;
	} else {
		atomic_store_explicit(&pt_proc.seen, w, memory_order_relaxed);
		/* a controller that left set every wanted bit so that we would
		 * come here (control/slots.c, pt_slot_release): the bitmap as it
		 * should be again, now that its view is gone */
		pt_ctl_want_refresh(pt_ctl);
	}
}

/* A stream of this process was shut down here and every thread has been
 * seen outside posix_trace_event(): its view can go at once. */
void pt_detach_now(unsigned s, uint64_t ticket)
{
	while (atomic_exchange_explicit(&pt_proc.sync, 1, memory_order_acquire))
		sched_yield();
	unsigned v = atomic_load(&pt_proc.cur[s]);
	/* attached; or detached by a resync during the shutdown (a thread
	 * recorded after the slot was released), its view still mapping the
	 * segment: with no thread inside posix_trace_event, drop it now.  The
	 * view is known by its ticket: its mapping may be the trace id's or
	 * one of its own. */
	if (pt_proc.ticket[s] == ticket && pt_proc.view[v].ticket == ticket && pt_proc.view[v].hdr &&
	    ((atomic_load(&pt_proc.att) >> s & 1) || view_retired[v] >> 63)) {
		atomic_fetch_and(&pt_proc.att, ~(1u << s));
		pt_map_release(pt_proc.view[v].hdr, pt_proc.view[v].map_size);
		pt_alive_drop(&pt_proc.view[v]);
		pt_proc.view[v].hdr = NULL;
		view_retired[v] = 1ull << 63; /* oldest of all: reused first */
	}
	atomic_store_explicit(&pt_proc.sync, 0, memory_order_release);
}

/* At load (lifecycle.c), after the control segment was adopted or made
 * and the objects of the start were noted: a stream that waited for this
 * process across exec (`posixtrace record`, or a controller that made it
 * before the exec) is mapped now, while the process has one thread, so
 * its first event, whichever thread records it, finds the stream mapped
 * and the map of loaded code written.  A process nobody traces yet finds
 * no ticket and makes no system call here. */
void pt_attach_at_load(void)
{
	int any = 0;

	for (unsigned s = 0; s < PT_SLOTS; s++)
		any |= atomic_load_explicit(&pt_ctl->slot[s].ticket, memory_order_acquire) > PT_TICKET_BUSY;
	if (any)
		pt_resync();
}
