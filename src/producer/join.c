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
 * below `su`): its events are not the recorder's to see.  A process that
 * already records into the stream (it inherited it, or kept it across
 * exec) does not join it twice.
 *
 * A process already running joins the same way when a controller asks it
 * to (`attach --tree`): the controller fills a slot of its control
 * segment with PT_CS_JOIN and the same six numbers, and the process opens
 * the memfd itself, with the same checks (pt_join_slot).  And a stream
 * that traces a tree (PT_CS_TREE: record's, attach --tree's) puts the
 * variable into the environment of every process it reaches, if it is
 * not listed there already (pt_tree_env adds it to the list): what that process starts from then on,
 * with system(), posix_spawn() or fork and exec, through programs that
 * do not use the library, joins too.  The environment is replaced by a
 * copy (mapped, never freed: a thread may be reading the old one), as a
 * program may itself assign environ; setenv() later copies it again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "producer.h"

extern char **environ;

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
	return 0;
}

/* The six numbers are a stream one may join: its place is sane, and it is
 * held by another process of this process's own user. */
static int joinable(unsigned long long pid, unsigned long long fd, unsigned long long off,
                    unsigned long long size, unsigned long long byte)
{
	char path[32], *p = path;
	struct stat st;

	if (pt_secure || pid == 0 || pid >= 1u << 30 || fd >= 1u << 30 || off % 4096 ||
	    off > PT_CTL_REGION_MAX || size < sizeof(struct pt_hdr) || size > 1ull << 42 ||
	    byte > UINT32_MAX || (pid_t)pid == pt_pid)
		return 0;
	/* only a process of the recorder's own user: a process with more
	 * rights (root below su, a daemon's privileged child) could open the
	 * descriptor too, but its events are not the recorder's to see */
	memcpy(p, "/proc/", 6);
	*pt_put_u64(p + 6, pid) = 0;
	return stat(path, &st) == 0 && st.st_uid == geteuid() && getuid() == geteuid();
}

int pt_join_already_in(uint64_t ino, uint64_t off, int except, int attached_only)
{
	const struct pt_ctl *c = pt_ctl;

	for (unsigned s = 0; s < PT_SLOTS; s++)
		if ((int)s != except &&
		    (attached_only ? atomic_load(&pt_proc.att) >> s & 1
		                   : atomic_load(&c->slot[s].ticket) > PT_TICKET_BUSY) &&
		    atomic_load(&c->slot[s].ino) == ino && atomic_load(&c->slot[s].off) == off)
			return 1;
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

	if (!joinable(v[0], v[1], v[3], v[4], v[5]))
		return -1;
	if (pt_join_already_in(v[2], v[3], -1, 0)) /* inherited, or kept across exec */
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
	atomic_store(&e2->tree_pid, (int32_t)v[0]);
	atomic_store(&e2->tree_fd, (int32_t)v[1]);
	atomic_store(&e2->flags, PT_CS_INHERITED | PT_CS_TREE);
	pt_slot_own_fd(s, fd, 1);
	/* where an exec'd image of this process opens it again */
	pt_proc.own_src[s] = (struct pt_own_src){ (int32_t)v[0], (int32_t)v[1], v[2] };
	pt_ctl_slot_want(c, s, NULL); /* the stream's filter is read from its header */
	atomic_store_explicit(&e2->ticket, tk, memory_order_release);
	pt_ctl_bump(c, 1u << s, 0); /* running: the header's state says if not */
	return 0;
}

int pt_join_slot(unsigned s, const struct pt_ctl_slot *e)
{
	int32_t pid = atomic_load(&e->tree_pid), fd = atomic_load(&e->tree_fd);
	uint64_t ino = atomic_load(&e->ino), off = atomic_load(&e->off);
	struct pt_own_src *o = &pt_proc.own_src[s];

	if (!joinable((unsigned long long)(pid < 0 ? 0 : pid), (unsigned long long)(fd < 0 ? 0 : fd),
	              off, atomic_load(&e->size), atomic_load(&e->lock_byte)))
		return -1;
	if (pt_proc.own_fd[s] && o->pid == pid && o->fd == fd && o->ino == ino)
		return 0; /* opened already (kept across this process's exec) */
	int h = pt_reopen_at(pid, fd, ino);
	if (h < 0)
		return -1;
	if (pt_proc.own_fd[s] && (atomic_load(&pt_proc.own_close) >> s & 1))
		close(pt_proc.own_fd[s] - 1); /* a former stream's, not this one's */
	pt_slot_own_fd(s, h, 1);
	*o = (struct pt_own_src){ pid, fd, ino };
	return 0;
}

#define JOIN_VAR PT_JOIN_ENV "="

/* Whether the comma-separated list l names the stream e exactly, and how
 * many streams it names; -1 if it is not a well-formed list. */
static int listed(const char *l, const char *e, size_t elen, unsigned *count)
{
	unsigned long long v[6];
	int found = 0;

	*count = 0;
	while (*l) {
		const char *next;
		if (*count >= PT_SLOTS || parse(l, v, &next) != 0)
			return -1;
		size_t n = (size_t)(next - l) - (next[-1] == ',');
		if (n == elen && memcmp(l, e, elen) == 0)
			found = 1;
		++*count;
		l = next;
	}
	return found;
}

void pt_tree_env(const struct pt_ctl_slot *e)
{
	char val[6 * 21], *p;
	int32_t pid = atomic_load(&e->tree_pid), fd = atomic_load(&e->tree_fd);
	size_t n = 0, len, m = 0, keep = 0;
	const char *old = NULL;
	unsigned count = 0;

	if (pt_secure || pid <= 0 || fd < 0)
		return;
	p = pt_put_u64(val, (uint64_t)pid);
	*p++ = '.';
	p = pt_put_u64(p, (uint64_t)fd);
	*p++ = '.';
	p = pt_put_u64(p, atomic_load(&e->ino));
	*p++ = '.';
	p = pt_put_u64(p, atomic_load(&e->off));
	*p++ = '.';
	p = pt_put_u64(p, atomic_load(&e->size));
	*p++ = '.';
	p = pt_put_u64(p, atomic_load(&e->lock_byte));
	len = (size_t)(p - val);
	char **env = __atomic_load_n(&environ, __ATOMIC_ACQUIRE);
	for (; env && env[n]; n++)
		if (!old && strncmp(env[n], JOIN_VAR, sizeof JOIN_VAR - 1) == 0)
			old = env[n] + sizeof JOIN_VAR - 1;
	if (old) {
		int r = listed(old, val, len, &count);
		if (r == 1)
			return; /* listed already (record put it there, or a parent) */
		if (r == 0 && count < PT_SLOTS)
			keep = strlen(old); /* the other streams stay: a relay's beside a log's */
	}
	size_t bytes = (n + 2) * sizeof(char *) + sizeof JOIN_VAR + keep + 1 + len;
	char **nenv = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (nenv == MAP_FAILED)
		return;
	char *str = (char *)(nenv + n + 2), *q = str;
	memcpy(q, JOIN_VAR, sizeof JOIN_VAR - 1);
	q += sizeof JOIN_VAR - 1;
	if (keep) {
		memcpy(q, old, keep);
		q += keep;
		*q++ = ',';
	}
	memcpy(q, val, len);
	q[len] = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], JOIN_VAR, sizeof JOIN_VAR - 1) != 0)
			nenv[m++] = env[i];
	nenv[m++] = str;
	nenv[m] = NULL;
	__atomic_store_n(&environ, nenv, __ATOMIC_RELEASE);
}
