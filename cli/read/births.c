/*
 * births.c -- which process a pid names at a given time.  The kernel gives
 * a gone process's pid to a new one (after pid_max forks, or at once when
 * asked through ns_last_pid), so a trace of a service that forks for days
 * holds processes that share a pid.  Each one began with an entry of the
 * map it wrote before any event: a FORK entry (a forked child), or a
 * PROC entry that does not go on from the one before it (a process that
 * joined or attached; format 11 tells them from the same process after
 * an exec, whose PROC entry says it goes on: PT_EXT_OBJ_CONT).  A pid's
 * process at time ts is the one of its latest such start at or before
 * ts -- but for its first start: events of the pid before it are of that
 * same process (a program that traces itself writes its stream's START,
 * as its controller, before it attaches as a traced process and says who
 * it is), so the first process of a pid is born 0, and each later start
 * begins another.
 *
 * The tables key a thread and a process by (pid, born), so two processes
 * given one pid are counted, numbered and shown apart.
 */
#include <stdlib.h>
#include "read.h"

struct tbirth { int32_t pid; uint32_t pad; uint64_t ts; };

static int cmp(const void *a, const void *b)
{
	const struct tbirth *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

int tlog_births(struct tlog *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nobjs; i++)
		n += l->objs[i].kind == PT_EXT_OBJ_FORK;
	for (size_t i = 0; i < l->nprocs; i++)
		n += !l->procs[i].cont;
	struct tbirth *b = n ? malloc(n * sizeof *b) : NULL;
	if (n && !b)
		return -1;
	n = 0;
	for (size_t i = 0; i < l->nobjs; i++)
		if (l->objs[i].kind == PT_EXT_OBJ_FORK && l->objs[i].pid > 0)
			b[n++] = (struct tbirth){ l->objs[i].pid, 0, l->objs[i].ts };
	for (size_t i = 0; i < l->nprocs; i++)
		if (!l->procs[i].cont && l->procs[i].pid > 0)
			b[n++] = (struct tbirth){ l->procs[i].pid, 0, l->procs[i].ts };
	if (n)
		qsort(b, n, sizeof *b, cmp);
	/* each pid's starts after its first (an entry written again, a LOOP
	 * lap's or a new part's, once) */
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (i > 0 && b[i - 1].pid == b[i].pid && b[i - 1].ts != b[i].ts &&
		    (!k || cmp(&b[k - 1], &b[i])))
			b[k++] = b[i];
	free(l->births_);
	l->births_ = b;
	l->nbirths_ = k;
	return 0;
}

/* The index of the first start of pid after ts. */
static size_t after(const struct tlog *l, int32_t pid, uint64_t ts)
{
	size_t lo = 0, hi = l->nbirths_;
	struct tbirth key = { pid, 0, ts };

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp(&l->births_[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t tlog_born(const struct tlog *l, int32_t pid, uint64_t ts)
{
	if (!l->nbirths_)
		return 0;
	size_t i = after(l, pid, ts);
	return i > 0 && l->births_[i - 1].pid == pid ? l->births_[i - 1].ts : 0;
}

uint64_t tlog_born_next(const struct tlog *l, int32_t pid, uint64_t born)
{
	if (!l->nbirths_)
		return UINT64_MAX;
	size_t i = after(l, pid, born);
	return i < l->nbirths_ && l->births_[i].pid == pid ? l->births_[i].ts : UINT64_MAX;
}

int tproc_cmp(const void *a, const void *b)
{
	const struct tproc *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->born > y->born) - (x->born < y->born);
}

const struct tproc *tlog_proc_born(const struct tlog *l, int32_t pid, uint64_t born)
{
	struct tproc key = { .pid = pid, .born = born };
	if (!l->npr) /* (no array: bsearch's base must not be null) */
		return NULL;
	return bsearch(&key, l->pr, l->npr, sizeof key, tproc_cmp);
}

const struct tproc *tlog_proc(const struct tlog *l, int32_t pid, uint64_t ts)
{
	return tlog_proc_born(l, pid, tlog_born(l, pid, ts));
}

/* Above any pid Linux gives (PID_MAX_LIMIT is 2^22); the last k whose
 * key stays below 2^31 (a viewer's pid is an int32). */
#define KEY_STEP (1 << 22)
#define KEY_LAST 511u

int32_t tlog_pid_key(const struct tlog *l, size_t p)
{
	if (p >= l->npr)
		return 0;
	uint32_t k = l->pr[p].rank < KEY_LAST ? l->pr[p].rank : KEY_LAST;
	return l->pr[p].pid <= 0 || k == 0 ? l->pr[p].pid : l->pr[p].pid + (int32_t)k * KEY_STEP;
}

void tlog_pid_key_note(const struct tlog *l, size_t p, char *buf, size_t cap)
{
	if (!cap)
		return;
	buf[0] = 0;
	if (p >= l->npr || l->pr[p].pid <= 0 || !l->pr[p].rank)
		return;
	if (l->pr[p].rank < KEY_LAST)
		snprintf(buf, cap, " (process %u of pid %d)", (unsigned)l->pr[p].rank + 1,
		         (int)l->pr[p].pid);
	else
		snprintf(buf, cap, " (process %u or later of pid %d)", KEY_LAST + 1, (int)l->pr[p].pid);
}

int32_t tlog_thread_pid_key(const struct tlog *l, const struct tthread *th)
{
	if (th->pid <= 0)
		return th->pid;
	size_t p = th->proc;
	if (p >= l->npr || l->pr[p].pid != th->pid || l->pr[p].born != th->born) {
		const struct tproc *q = tlog_proc(l, th->pid, th->born); /* (a thread new since) */
		if (!q)
			return th->pid;
		p = (size_t)(q - l->pr);
	}
	return tlog_pid_key(l, p);
}
