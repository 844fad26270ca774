/*
 * proctree.c -- `attach --tree`: the descendants of a running process,
 * found in /proc, each asked to join the stream when it uses the library.
 *
 * A look reads every /proc/N/stat (its parent, its start time, its
 * command name): a process belongs to the tree if it is the root, or was
 * seen in it before (known by pid and start time: a reused pid is another
 * process), or its parent belongs to it.  So an orphan stays in the tree
 * once seen, but one that was orphaned between two looks (a double fork
 * quicker than the look) is not found: it joins only if it inherited the
 * stream or its environment names it (src/producer/join.c).  Each member
 * that uses the library is asked once (pt_ext_join_pid); one that does
 * not is looked at again for a few looks after it appeared or changed
 * its command name (an exec into a program that uses it).  Memory is
 * bounded by the live processes of the tree (at most TREE_MAX).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"

#define TREE_MAX 65536u
#define RELOOK   3 /* looks at a process without the library after it changed */

struct member {
	pid_t pid;
	unsigned long long start;
	char comm[17];
	enum { M_LOOK, M_IN, M_NOLIB, M_REFUSED, M_GONE } state;
	int looks; /* M_NOLIB: looks left */
};

struct ptree {
	pid_t root;
	struct member *m;
	size_t n, cap;
	unsigned joined, inherited, refused;
};

/* /proc/PID/stat: 0 if read (the command name is inside parentheses and
 * may hold anything, so the fields are counted from its last ')'). */
int read_stat(pid_t pid, struct pstat *ps)
{
	char path[48], buf[1024];
	int fd;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
	if (!lp || !rp || rp < lp)
		return -1;
	size_t cl = (size_t)(rp - lp - 1);
	if (cl > 16)
		cl = 16;
	memcpy(ps->comm, lp + 1, cl);
	ps->comm[cl] = 0;
	/* after ')': state ppid pgrp session tty_nr tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime */
	char *p = rp + 1;
	int ppid;
	char state;
	unsigned long long start = 0;
	if (sscanf(p, " %c %d", &state, &ppid) != 2)
		return -1;
	for (int f = 0; f < 19 && p; f++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start) != 1)
		return -1;
	ps->pid = pid;
	ps->state = state;
	ps->ppid = ppid;
	ps->start = start;
	return 0;
}

static struct member *find(struct ptree *t, pid_t pid, unsigned long long start)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].pid == pid && t->m[i].start == start)
			return &t->m[i];
	return NULL;
}

static struct member *add(struct ptree *t, const struct pstat *ps)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct member *m;
		if (cap > TREE_MAX || !(m = realloc(t->m, cap * sizeof *m)))
			return NULL;
		t->m = m;
		t->cap = cap;
	}
	struct member *m = &t->m[t->n++];
	memset(m, 0, sizeof *m);
	m->pid = ps->pid;
	m->start = ps->start;
	memcpy(m->comm, ps->comm, sizeof m->comm);
	m->state = M_LOOK;
	return m;
}

struct ptree *ptree_new(pid_t root)
{
	struct ptree *t = calloc(1, sizeof *t);
	struct pstat ps;

	if (!t)
		return NULL;
	t->root = root;
	if (read_stat(root, &ps) == 0 && add(t, &ps)) {
		t->m[0].state = M_IN; /* the stream was made for it */
		return t;
	}
	free(t);
	return NULL;
}

/* Is ps in the tree (a member already, or a member's child)? */
static struct member *member_of(struct ptree *t, const struct pstat *ps)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].pid == ps->ppid && t->m[i].start <= ps->start && t->m[i].state != M_GONE)
			return add(t, ps);
	return NULL;
}

static void ask(struct ptree *t, struct member *m, trace_id_t trid)
{
	int rc = pt_ext_join_pid(trid, m->pid);

	switch (rc) {
	case 0: m->state = M_IN; t->joined++; break;
	case EEXIST: m->state = M_IN; t->inherited++; break;
	case ENOENT:
		if (m->state != M_NOLIB)
			m->looks = RELOOK;
		m->state = M_NOLIB;
		m->looks--;
		break;
	case ESRCH: m->state = M_GONE; break;
	case EAGAIN: break; /* its slots are taken now: again next look */
	default: m->state = M_REFUSED; t->refused++; break;
	}
}

void ptree_poll(struct ptree *t, trace_id_t trid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	struct pstat *all = NULL;
	size_t n = 0, cap = 0;

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		if (n == cap) {
			struct pstat *a = realloc(all, (cap = cap ? cap * 2 : 256) * sizeof *a);
			if (!a)
				break;
			all = a;
		}
		if (read_stat((pid_t)pid, &all[n]) == 0)
			n++;
	}
	closedir(d);
	/* a parent is seen before its children after enough passes: each
	 * pass takes in the children of what the last one found */
	for (int grew = 1; grew;) {
		grew = 0;
		for (size_t i = 0; i < n; i++)
			if (!find(t, all[i].pid, all[i].start) && member_of(t, &all[i]))
				grew = 1;
	}
	for (size_t i = 0; i < n; i++) {
		struct member *m = find(t, all[i].pid, all[i].start);
		if (!m)
			continue;
		if (strcmp(m->comm, all[i].comm) != 0) { /* it exec'd */
			memcpy(m->comm, all[i].comm, sizeof m->comm);
			if (m->state == M_NOLIB)
				m->state = M_LOOK;
		}
		if (m->state == M_LOOK || (m->state == M_NOLIB && m->looks > 0))
			ask(t, m, trid);
	}
	/* a process not seen in this look is gone: its children, orphaned,
	 * belong to the tree if they were seen in it already */
	size_t keep = 0;
	for (size_t k = 0; k < t->n; k++) {
		size_t i = 0;
		while (i < n && !(all[i].pid == t->m[k].pid && all[i].start == t->m[k].start))
			i++;
		if (i < n && t->m[k].state != M_GONE)
			t->m[keep++] = t->m[k];
	}
	t->n = keep;
	free(all);
}

void ptree_free(struct ptree *t, unsigned *joined, unsigned *inherited, unsigned *refused)
{
	*joined = t ? t->joined : 0;
	*inherited = t ? t->inherited : 0;
	*refused = t ? t->refused : 0;
	if (t)
		free(t->m);
	free(t);
}
