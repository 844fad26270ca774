/*
 * threads.c -- who wrote an event: the thread identities a trace carries
 * (src/ext.h pt_ext_threads(): kernel TID and name, said by each thread
 * when it took its first chunk of a stream and again after a rename),
 * looked up by (pid, pthread_t, time).  A pthread_t is reused once its
 * thread has ended, and a name changes, so the entry that names an event
 * is the latest of its (pid, pthread_t) stamped at or before it, else the
 * first one after (the event came before the entry of its chunk).
 *
 * For `show`, `info` and the exporters: a label "PID/TID NAME", and the
 * TID and name alone (CTF vtid and procname, Chrome and Perfetto thread
 * names).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "read.h"

struct thrmap {
	struct pt_ext_thread *e;  /* by pid, pthread_t, then time */
	size_t n;
};

static int cmp(const void *a, const void *b)
{
	const struct pt_ext_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return 0;
}

static int fetch_threads(trace_id_t trid, size_t from, void *out, size_t cap, size_t *n)
{
	return pt_ext_threads(trid, from, out, cap, n);
}

struct thrmap *thrmap_load(trace_id_t trid)
{
	size_t n;
	struct pt_ext_thread *e = ext_fetch_all(trid, sizeof *e, fetch_threads, &n);

	return thrmap_from(e, n);
}

struct thrmap *thrmap_from(struct pt_ext_thread *e, size_t n)
{
	struct thrmap *m = calloc(1, sizeof *m);

	if (!m) {
		free(e);
		return NULL;
	}
	m->e = e;
	m->n = n;
	if (m->n)
		qsort(m->e, m->n, sizeof *m->e, cmp);
	/* the same entry twice (a LOOP log writes them again after each wrap;
	 * a thread says who it is in each stream): once is enough */
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++)
		if (!k || m->e[k - 1].pid != m->e[i].pid || m->e[k - 1].thread != m->e[i].thread ||
		    m->e[k - 1].tid != m->e[i].tid || strcmp(m->e[k - 1].name, m->e[i].name))
			m->e[k++] = m->e[i];
	m->n = k;
	return m;
}

void thrmap_free(struct thrmap *m)
{
	if (!m)
		return;
	free(m->e);
	free(m);
}

size_t thrmap_count(const struct thrmap *m)
{
	return m ? m->n : 0;
}

const struct pt_ext_thread *thrmap_at(const struct thrmap *m, size_t i)
{
	return m && i < m->n ? &m->e[i] : NULL;
}

const struct pt_ext_thread *thrmap_find(const struct thrmap *m, int32_t pid, uint64_t thread,
                                        uint64_t ts)
{
	if (!m || !m->n)
		return NULL;
	/* the first entry of (pid, thread) after ts, then step back one */
	size_t lo = 0, hi = m->n;
	struct pt_ext_thread key = { .pid = pid, .thread = thread, .ts = ts };
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp(&m->e[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && m->e[lo - 1].pid == pid && m->e[lo - 1].thread == thread)
		return &m->e[lo - 1];
	if (lo < m->n && m->e[lo].pid == pid && m->e[lo].thread == thread)
		return &m->e[lo];
	return NULL;
}

const struct pt_ext_thread *thrmap_latest(const struct thrmap *m, const struct pt_ext_thread *t)
{
	if (!m || !t || t < m->e || t >= m->e + m->n)
		return t;
	while (t + 1 < m->e + m->n && t[1].pid == t->pid && t[1].thread == t->thread &&
	       t[1].tid == t->tid)
		t++;
	return t;
}

int64_t thrmap_tid(const struct thrmap *m, int32_t pid, uint64_t thread, uint64_t ts, unsigned idx)
{
	const struct pt_ext_thread *t = thrmap_find(m, pid, thread, ts);
	return t && t->tid > 0 ? t->tid : (int64_t)idx;
}

void thrmap_label(const struct thrmap *m, char *buf, size_t cap, int32_t pid, uint64_t thread,
                  uint64_t ts, unsigned idx)
{
	const struct pt_ext_thread *t = thrmap_find(m, pid, thread, ts);

	if (!t)
		snprintf(buf, cap, "%d/%u", (int)pid, idx);
	else if (t->name[0])
		snprintf(buf, cap, "%d/%d %s", (int)pid, (int)t->tid, t->name);
	else
		snprintf(buf, cap, "%d/%d", (int)pid, (int)t->tid);
}

size_t thrmap_ids(const struct thrmap *m, int32_t pid, uint64_t thread,
                  const struct pt_ext_thread **first)
{
	const struct pt_ext_thread *f = thrmap_find(m, pid, thread, 0);
	size_t n = 0;

	*first = f;
	while (f && f + n < m->e + m->n && f[n].pid == pid && f[n].thread == thread)
		n++;
	return n;
}

void tlog_thread_id(const struct tlog *l, uint32_t t, uint64_t ts, char *who, size_t who_cap,
                    char *name, size_t name_cap, int64_t *tid)
{
	const struct tthread *th = t < l->nth ? &l->th[t] : NULL;
	const struct pt_ext_thread *id =
		th && th->pid ? thrmap_find(l->thrs, th->pid, th->tid, ts) : NULL;

	if (who && th && id && id->tid > 0)
		snprintf(who, who_cap, "%d/%d", (int)th->pid, (int)id->tid);
	else if (who)
		snprintf(who, who_cap, "%d/%u", th ? (int)th->pid : 0, th ? th->idx : 0);
	if (name)
		snprintf(name, name_cap, "%s", id ? id->name : "");
	if (tid)
		*tid = id && id->tid > 0 ? id->tid : -1;
}

/* Every identity (pid, thread) had: "5678 worker-3", or with a rename or
 * a reused pthread_t "5678 main, worker-3; 5690 worker-4" (at most cap). */
void thrmap_all(const struct thrmap *m, char *buf, size_t cap, int32_t pid, uint64_t thread)
{
	size_t o = 0;
	int32_t last_tid = 0;

	if (cap)
		buf[0] = 0;
	if (!m)
		return;
	const struct pt_ext_thread *f = thrmap_find(m, pid, thread, 0);
	for (size_t i = f ? (size_t)(f - m->e) : m->n; i < m->n; i++) {
		const struct pt_ext_thread *t = &m->e[i];
		if (t->pid != pid || t->thread != thread)
			break;
		int k = t->tid != last_tid
		        ? snprintf(buf + o, cap - o, "%s%d%s%s", o ? "; " : "", (int)t->tid,
		                   t->name[0] ? " " : "", t->name)
		        : snprintf(buf + o, cap - o, ", %s", t->name);
		if (k < 0 || (size_t)k >= cap - o) {
			if (cap > 4)
				memcpy(buf + cap - 4, "...", 4);
			return;
		}
		o += (size_t)k;
		last_tid = t->tid;
	}
}
