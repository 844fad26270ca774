/*
 * join.c -- a stream named in the environment, joined at load.
 *
 * `posixtrace record` traces the whole tree below the program it starts,
 * whatever lies in between (a shell, make, env, a double fork): it puts
 * POSIXTRACE_JOIN in the program's environment, "P.F.I.O.S.B" per stream
 * (comma-separated: the local log's and the relay's, PT_SLOTS at most): the
 * recorder's pid P, the descriptor F it holds on the memfd the stream
 * lives in, that memfd's inode I, the stream's offset O and size S in it,
 * and the byte B its controller holds locked while the stream exists
 * (4294967295: none).  Every process that loads the library with that
 * variable joins the stream as if it had inherited it at fork: its
 * children inherit it as usual, its own exec keeps it.
 *
 * The memfd is opened at /proc/P/fd/F, which the kernel allows only to a
 * process that may ptrace P (same user, not a set-user-ID program, or
 * root), and taken only if its inode is I: a variable forged to name
 * another user's recorder opens nothing, and one naming a file that is not
 * the stream fails the checks attach.c makes before mapping (the segment's
 * own header).  A process started with privileges (AT_SECURE) joins
 * nothing; one whose environment was scrubbed (env -i, sudo) never hears
 * of the stream.  Nor does a process of another user than the recorder's
 * (the owner of /proc/P), even one that could open the descriptor (root
 * below `su`): its events are not the recorder's to see.  A process that already records into the stream (it
 * inherited it, or kept it across exec) does not join it twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "traced.h"

/* Parse "P.F.I.O.S.B" (ended by ',' or the string's end) into v, *next
 * after it; 0 if well formed. */
static int parse(const char *e, unsigned long long v[6], const char **next)
{
	const char *p = e;

	for (unsigned n = 0; n < 6; n++) {
		char *end;
		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		v[n] = strtoull(p, &end, 10);
		if (errno || end - p > 20)
			return -1;
		p = end;
		if (n == 5 ? *p && *p != ',' : *p != '.')
			return -1;
		if (*p)
			p++;
	}
	*next = p;
	if (v[0] == 0 || v[0] >= 1u << 30 || v[1] >= 1u << 30 || v[3] % 4096 ||
	    v[3] > PT_CTL_REGION_MAX || v[4] < sizeof(struct pt_hdr) || v[4] > 1ull << 42 ||
	    v[5] > UINT32_MAX)
		return -1;
	return 0;
}

static int join_one(const unsigned long long v[6]);

int pt_join(const char *e)
{
	unsigned long long v[6];
	int rc = 0;

	if (!e || pt_secure)
		return -1;
	for (unsigned k = 0; *e && k < PT_SLOTS; k++) {
		if (parse(e, v, &e) != 0)
			return -1; /* the rest is not ours to guess at */
		rc |= join_one(v);
	}
	return rc;
}

static int join_one(const unsigned long long v[6])
{
	struct pt_ctl *c = pt_ctl;
	unsigned s;

	if ((pid_t)v[0] == pt_pid)
		return -1;
	/* only a process of the recorder's own user: a process with more
	 * rights (root below su, a daemon's privileged child) could open the
	 * descriptor too, but its events are not the recorder's to see */
	char path[32];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d", (int)v[0]);
	if (stat(path, &st) != 0 || st.st_uid != geteuid() || getuid() != geteuid())
		return -1;
	for (s = 0; s < PT_SLOTS; s++) /* already here (inherited, or kept across exec) */
		if (atomic_load(&c->slot[s].ticket) > PT_TICKET_BUSY &&
		    atomic_load(&c->slot[s].ino) == v[2] && atomic_load(&c->slot[s].off) == v[3])
			return 0;
	int fd = pt_reopen_at((int32_t)v[0], (int32_t)v[1], v[2]);
	if (fd < 0)
		return -1; /* gone, or not ours to open */
	for (s = 0; s < PT_SLOTS; s++) {
		uint64_t free_tk = 0;
		if (atomic_compare_exchange_strong(&c->slot[s].ticket, &free_tk, PT_TICKET_BUSY))
			break;
	}
	if (s == PT_SLOTS) {
		close(fd);
		return -1;
	}
	struct pt_ctl_slot *e2 = &c->slot[s];
	uint64_t tk = atomic_fetch_add(&c->next_ticket, 2);
	if (tk <= PT_TICKET_BUSY)
		tk = PT_TICKET_BUSY + 1;
	atomic_store(&e2->off, v[3]);
	atomic_store(&e2->size, v[4]);
	atomic_store(&e2->fd, fd);
	atomic_store(&e2->ino, v[2]);
	atomic_store(&e2->ctl_pid, (int32_t)v[0]);
	atomic_store(&e2->lock_byte, (uint32_t)v[5]);
	atomic_store(&e2->flags, PT_CS_INHERITED);
	pt_slot_own_fd(s, fd, 1);
	/* where an exec'd image of this process opens it again */
	pt_proc.own_src[s] = (struct pt_own_src){ (int32_t)v[0], (int32_t)v[1], v[2] };
	pt_ctl_slot_want(c, s, NULL); /* the stream's filter is read from its header */
	atomic_store_explicit(&e2->ticket, tk, memory_order_release);
	pt_ctl_bump(c, 1u << s, 0); /* running: the header's state says if not */
	return 0;
}
