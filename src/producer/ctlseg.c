/*
 * ctlseg.c -- this process's control segment.
 *
 * Made when the library is loaded (four syscalls, no thread), close-on-exec:
 * it reaches no other program (system(), posix_spawn(), a child's exec).
 * The process's own exec keeps it (exec.c) and names it in POSIXTRACE_CTL,
 * where the new image finds it again -- unless that image runs with
 * privileges (AT_SECURE), which then starts afresh.  Replaced by a fresh
 * one in the child after fork (the child keeps the slots of inherited
 * streams; inherit.c).  Controllers of other processes find it in
 * /proc/PID/fd; see control/slots.c.  Its variables are in state.c, and
 * lifecycle.c says when each function here runs at load and fork.  It also holds the process's event-name registry, so a
 * controller agrees with the traced process on ids.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "producer.h"

/* Everything but the magic number, which is written last (ctl_publish):
 * a controller that finds the segment early takes it for someone else's
 * and looks again. */
static void ctl_init_header(struct pt_ctl *c)
{
	c->version = PT_CTL_VERSION;
	c->size = PT_CTL_SIZE;
	atomic_store(&c->pid, pt_pid);
	atomic_store(&c->region_end, PT_CTL_SIZE);
	atomic_store(&c->next_ticket, 2);
	pt_names_init(pt_ctl_names(c));
}

/* Map fd if it is the control segment of pid; NULL otherwise.  Also used
 * by a controller on another process's (control/slots.c): nothing is trusted. */
struct pt_ctl *pt_ctl_map(int fd, pid_t pid)
{
	struct stat st;
	struct pt_ctl *c;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)PT_CTL_SIZE ||
	    !(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK))
		return NULL;
	c = mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return NULL;
	if (atomic_load_explicit(&c->magic, memory_order_acquire) != PT_CTL_MAGIC ||
	    c->version != PT_CTL_VERSION || atomic_load(&c->pid) != pid) {
		munmap(c, PT_CTL_SIZE);
		return NULL;
	}
	return c;
}

/* A new control segment, close-on-exec (exec.c keeps it across this
 * process's own exec).  Sealed against shrinking so that no mapping of it
 * can fault; it may grow. */
static struct pt_ctl *ctl_make(int *fdp)
{
	int fd = memfd_create("posixtrace-ctl", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	struct pt_ctl *c;

	if (fd < 0)
		return NULL;
	if (pt_fsz_truncate(fd, PT_CTL_SIZE) != 0 || /* (RLIMIT_FSIZE: no segment, no signal) */
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0 ||
	    (c = mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	ctl_init_header(c);
	*fdp = fd;
	return c;
}

static void ctl_publish(struct pt_ctl *c)
{
	atomic_store_explicit(&c->magic, PT_CTL_MAGIC, memory_order_release);
}

/* c, at fd (-1: none), is this process's control segment from now on. */
void pt_ctl_use(struct pt_ctl *c, int fd)
{
	pt_ctl = c;
	__posix_trace_gate = (const unsigned int *)&c->live;
	__posix_trace_want = (const unsigned long long *)c->want;
	pt_ctl_fd = fd;
	pt_fdid_of(fd, &pt_ctl_id);
}

/* An inherited stream's memfd, opened again after exec where the process
 * it came from holds it: /proc/PID/fd/FD, which the kernel opens only for
 * a process that may ptrace PID (a child that changed its user cannot),
 * and only if it is still the file it was (inode).  -1 if not.  Also how
 * a process joins the stream its environment names (join.c). */
int pt_reopen_at(int32_t pid, int32_t fd, uint64_t ino)
{
	char path[64], *p = path;
	struct stat st;
	int f;

	if (pid <= 0 || fd < 0)
		return -1;
	memcpy(p, "/proc/", 6); /* (no snprintf: a resync may run in a signal handler) */
	p = pt_put_u64(p + 6, (uint64_t)pid);
	memcpy(p, "/fd/", 4);
	*pt_put_u64(p + 4, (uint64_t)fd) = 0;
	if ((f = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return -1;
	if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_ino != ino ||
	    !(fcntl(f, F_GET_SEALS) & F_SEAL_SHRINK)) {
		close(f);
		return -1;
	}
	return f;
}

/* At load, when no segment was adopted (lifecycle.c): the fallback set up
 * (a process without memfd still traces itself), then a memfd of this
 * process's own.  0, or -1 if there is only the fallback. */
int pt_ctl_start(void)
{
	struct pt_ctl *c;
	int fd;

	ctl_init_header(&pt_ctl_fallback.c);
	ctl_publish(&pt_ctl_fallback.c);
	if ((c = ctl_make(&fd)) == NULL)
		return -1;
	ctl_publish(c);
	pt_ctl_use(c, fd);
	return 0;
}

/* POSIXTRACE_CTL names the segment's fd, for this process's own exec
 * (exec.c keeps the fd open across it; the new image adopts the segment:
 * inherit.c). */
void pt_ctl_env_set(void)
{
	char buf[16];

	snprintf(buf, sizeof buf, "%d", pt_ctl_fd);
	setenv(PT_CTL_ENV, buf, 1);
}

/* Slot s's share of the wanted bitmap: the user ids the filter f lets
 * through, or every user id (f NULL: a filter this segment does not hear
 * of).  Written before the pt_ctl_bump() that makes it count. */
void pt_ctl_slot_want(struct pt_ctl *c, unsigned s, const _Atomic uint64_t *f)
{
	for (unsigned i = 0; i < PT_NIDS / 64; i++) {
		uint64_t w = f ? ~atomic_load(&f[i]) : ~0ull;
		if (i == 0)
			w &= ~((1ull << PT_SYS_IDS) - 1); /* system ids: never user events */
		atomic_store(&c->slot_want[s][i], w);
	}
}

/* The wanted bitmap anew: the OR of slot_want over the running slots.
 * Every change (a slot's share, a live bit) is followed by a bump of the
 * live word and then this, so a pass that saw the live word unchanged
 * from before its loads to after its stores stored what was current; one
 * that did not goes again.  Of two concurrent passes, a stale one ends
 * with a pass of its own after the other's change (and a pass that ends
 * later stores later).  Async-signal-safe: atomics only. */
static void want_recompute(struct pt_ctl *c)
{
	uint32_t v = atomic_load(&c->live), v2;
	for (;;) {
		for (unsigned i = 0; i < PT_NIDS / 64; i++) {
			uint64_t w = 0;
			for (uint32_t m = v & PT_LIVE_MASK; m; m &= m - 1)
				w |= atomic_load(&c->slot_want[__builtin_ctz(m)][i]);
			atomic_store(&c->want[i], w);
		}
		if ((v2 = atomic_load(&c->live)) == v)
			return;
		v = v2;
	}
}

/* The wanted bitmap as the running slots say, after a controller set it
 * all to make this process look at its control segment (attach.c). */
void pt_ctl_want_refresh(struct pt_ctl *c)
{
	want_recompute(c);
}

/* Set and clear live bits and count the change, so that every recording
 * thread resyncs on its next event; then the wanted bitmap follows. */
void pt_ctl_bump(struct pt_ctl *c, uint32_t set, uint32_t clear)
{
	uint32_t o = atomic_load_explicit(&c->live, memory_order_relaxed), n;
	do {
		n = (((o & ~PT_LIVE_MASK) + PT_LIVE_BUMP) | ((o | set) & ~clear & PT_LIVE_MASK));
		if (!(n & ~PT_LIVE_MASK))
			n += PT_LIVE_BUMP;
	} while (!atomic_compare_exchange_weak_explicit(&c->live, &o, n, memory_order_seq_cst,
	                                                memory_order_relaxed));
	want_recompute(c);
}

/* In the child after fork (one thread, async-signal-safe calls only), the
 * first half of its control segment of its own (inherit.c fills its
 * slots): a new memfd with the name registry copied, or the fallback
 * with the registry and no slot.  *fdp: its fd, if a memfd. */
struct pt_ctl *pt_ctl_fork_new(int *fdp)
{
	struct pt_ctl *old = pt_ctl, *c = ctl_make(fdp);

	if (!c) {
		if (old != &pt_ctl_fallback.c)
			memcpy(pt_ctl_fallback.bytes + PT_CTL_NAMES, (char *)old + PT_CTL_NAMES,
			       PT_CTL_SIZE - PT_CTL_NAMES);
		ctl_init_header(&pt_ctl_fallback.c);
		c = &pt_ctl_fallback.c;
		memset(c->slot, 0, sizeof c->slot);
	} else {
		pt_names_copy(pt_ctl_names(c), pt_ctl_names(old));
	}
	return c;
}

/* ... and the second half: c, its slots filled, with the live bits of the
 * streams the child kept, published and used in place of the parent's,
 * at the same fd number if it can be, so POSIXTRACE_CTL stays right. */
void pt_ctl_fork_use(struct pt_ctl *c, int fd, uint32_t live)
{
	struct pt_ctl *old = pt_ctl;

	atomic_store(&c->live, live | PT_LIVE_BUMP);
	want_recompute(c);
	ctl_publish(c);
	if (c != &pt_ctl_fallback.c && pt_ctl_fd >= 0 && fd != pt_ctl_fd &&
	    pt_fd_is(pt_ctl_fd, &pt_ctl_id)) {
		/* (not over a file of the program's that took the number after
		 * it closed ours: then the new number is kept, and exec.c names
		 * it) */
		dup3(fd, pt_ctl_fd, O_CLOEXEC); /* the parent's control segment is not ours */
		close(fd);
		fd = pt_ctl_fd;
	}
	pt_ctl_use(c, c == &pt_ctl_fallback.c ? -1 : fd); /* before the old one goes */
	if (old != &pt_ctl_fallback.c)
		munmap(old, PT_CTL_SIZE);
}
