/*
 * tree.c -- a stream that traces a process tree (`record`, `attach
 * --tree`): the controller's side.  The traced process is told, in its
 * slot, that the stream traces a tree and where this process holds the
 * stream's memfd (PT_CS_TREE, tree_pid, tree_fd): it then passes
 * POSIXTRACE_JOIN to what it starts (producer/join.c).  And a process
 * already running is asked to join: a free slot of its control segment
 * is filled with PT_CS_JOIN and the stream's place; the process opens the
 * memfd itself, through /proc under the ptrace rule, and records into the
 * stream as if it had inherited it at fork (nobody holds its slot: the
 * process frees it when the stream ends, as an inherited one).
 */
#include <errno.h>
#include <unistd.h>
#include "control.h"

/* Locked t: the stream's memfd is held here (t->s.fd) and lives in the
 * traced process's control memfd (a region); else EINVAL. */
static int tree_place(const struct pt_trid *t)
{
	return t->s.fd >= 0 && t->s.attr.inherit == POSIX_TRACE_INHERITED ? 0 : EINVAL;
}

int pt_tree_mark(struct pt_trid *t)
{
	int rc = tree_place(t);

	if (rc || !t->s.tctl || t->tctl_own || t->slot < 0)
		return rc;
	struct pt_ctl_slot *e = &t->s.tctl->slot[t->slot];
	if (atomic_load(&e->ticket) != t->ticket)
		return 0; /* (the traced process ended it) */
	atomic_store(&e->tree_pid, (int32_t)getpid());
	atomic_store(&e->tree_fd, (int32_t)t->s.fd);
	atomic_fetch_or(&e->flags, PT_CS_TREE);
	pt_ctl_bump(t->s.tctl, 0, 0); /* its next event looks */
	return 0;
}

int pt_tree_join(struct pt_trid *t, pid_t pid, uint64_t ino)
{
	struct pt_target tg;
	unsigned s;
	int rc;

	if ((rc = tree_place(t)) != 0)
		return rc;
	if (pid <= 0 || pid == getpid())
		return EINVAL;
	if ((rc = pt_target_open(pid, &tg)) != 0)
		return rc;
	if (!tg.ctl || tg.fd < 0) {
		pt_target_close(&tg);
		return ENOENT; /* it does not use the library */
	}
	/* nothing to do if the stream is named there already (inherited,
	 * joined through the environment, or asked before) */
	for (s = 0; s < PT_SLOTS; s++) {
		const struct pt_ctl_slot *e = &tg.ctl->slot[s];
		if (atomic_load(&e->ticket) > PT_TICKET_BUSY && atomic_load(&e->ino) == ino &&
		    atomic_load(&e->off) == t->s.region_off) {
			pt_target_close(&tg);
			return EEXIST;
		}
	}
	if ((rc = pt_slot_claim(&tg, tg.fd, &s)) != 0) {
		pt_target_close(&tg);
		return rc;
	}
	struct pt_ctl_slot *e = &tg.ctl->slot[s];
	uint64_t tk = pt_slot_ticket(tg.ctl);
	atomic_store(&e->off, t->s.region_off);
	atomic_store(&e->size, (uint64_t)t->s.map_size);
	atomic_store(&e->fd, -1);
	atomic_store(&e->ino, ino);
	atomic_store(&e->ctl_pid, (int32_t)getpid());
	/* the liveness lock: this process's on the slot's byte of the region
	 * file; a memfd of its own has none (newstream.c) */
	atomic_store(&e->lock_byte, t->s.region_off && t->slot >= 0 ? (uint32_t)t->slot : UINT32_MAX);
	atomic_store(&e->tree_pid, (int32_t)getpid());
	atomic_store(&e->tree_fd, (int32_t)t->s.fd);
	atomic_store(&e->flags, PT_CS_INHERITED | PT_CS_JOIN | PT_CS_TREE);
	pt_ctl_slot_want(tg.ctl, s, NULL); /* it reads the filter from the header */
	atomic_store_explicit(&e->ticket, tk, memory_order_release);
	pt_ctl_bump(tg.ctl, 1u << s, 0); /* running: the header's state says if not */
	pt_target_close(&tg); /* (the slot's lock goes: an inherited slot is nobody's) */
	return 0;
}
