/*
 * logs.c -- the logs a table reads.  Each is loaded once when the table
 * is made (tlog_load: the totals from the log's summary, or the count
 * the library made when it opened it), which fixes its threads' and
 * processes' numbers; each cursor then opens a reading of its own, whose
 * numbers are the same (tlog.c numbers threads from the totals).
 *
 * Several logs make one set: event ids, utids and upids run on from one
 * log to the next (the first log's from 0), so that they name one row of
 * the whole set, as trace_processor's do in one trace.
 */
#include <string.h>
#include "query.h"

int pq_logs_open(struct pq_logs *ls, char *const *paths, size_t n, char *err, size_t cap)
{
	uint64_t id = 0, utid = 0, upid = 0;

	memset(ls, 0, sizeof *ls);
	if (!(ls->v = calloc(n ? n : 1, sizeof *ls->v))) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		struct pq_log *lg = &ls->v[k];
		if (!(lg->path = strdup(paths[k]))) {
			snprintf(err, cap, "out of memory");
			pq_logs_free(ls);
			return -1;
		}
		ls->n = k + 1;
		if (pq_reading_open(lg, &lg->meta, err, cap)) {
			pq_logs_free(ls);
			return -1;
		}
		struct tlog *l = &lg->meta;
		lg->id0 = id, lg->utid0 = utid, lg->upid0 = upid;
		id += l->nev, utid += l->nth, upid += l->npr;
		if (!(lg->upid_of = calloc(l->nth ? l->nth : 1, sizeof *lg->upid_of))) {
			snprintf(err, cap, "out of memory");
			pq_logs_free(ls);
			return -1;
		}
		for (size_t t = 0; t < l->nth; t++) /* (its process, tlog_finish) */
			lg->upid_of[t] = l->th[t].proc < l->npr ? l->th[t].proc : 0;
	}
	return 0;
}

void pq_logs_free(struct pq_logs *ls)
{
	for (size_t k = 0; k < ls->n; k++) {
		tlog_free(&ls->v[k].meta);
		free(ls->v[k].path);
		free(ls->v[k].upid_of);
	}
	free(ls->v);
	memset(ls, 0, sizeof *ls);
}

long pq_log_of_utid(const struct pq_logs *ls, int64_t utid, uint32_t *local)
{
	for (size_t k = 0; k < ls->n && utid >= 0; k++)
		if ((uint64_t)utid >= ls->v[k].utid0 && (uint64_t)utid - ls->v[k].utid0 < ls->v[k].meta.nth) {
			*local = (uint32_t)((uint64_t)utid - ls->v[k].utid0);
			return (long)k;
		}
	return -1;
}

long pq_log_of_upid(const struct pq_logs *ls, int64_t upid, uint32_t *local)
{
	for (size_t k = 0; k < ls->n && upid >= 0; k++)
		if ((uint64_t)upid >= ls->v[k].upid0 && (uint64_t)upid - ls->v[k].upid0 < ls->v[k].meta.npr) {
			*local = (uint32_t)((uint64_t)upid - ls->v[k].upid0);
			return (long)k;
		}
	return -1;
}

/* tlog.c says what failed (err_msg); a table says it in its error. */
int pq_reading_open(const struct pq_log *lg, struct tlog *l, char *err, size_t cap)
{
	char why[600];
	err_capture(why, sizeof why);
	int rc = tlog_load(l, lg->path);
	err_capture(NULL, 0);
	if (rc == 0)
		return 0;
	snprintf(err, cap, "%s", why[0] ? why : "cannot read the log");
	if (!strstr(err, lg->path))
		snprintf(err, cap, "%s: %s", lg->path, why[0] ? why : "cannot read the log");
	return -1;
}

int64_t pq_tid(const struct tlog *l, uint32_t th, uint64_t ts)
{
	if (th >= l->nth)
		return 0;
	const struct tthread *t = &l->th[th];
	const struct pt_ext_thread *w = thrmap_find(l->thrs, t->pid, t->tid, ts ? ts : t->first);
	return w && w->tid > 0 ? w->tid : 0;
}

const char *pq_thread_name(const struct tlog *l, uint32_t th, uint64_t ts)
{
	if (th >= l->nth)
		return NULL;
	const struct tthread *t = &l->th[th];
	const struct pt_ext_thread *w = thrmap_find(l->thrs, t->pid, t->tid, ts ? ts : t->first);
	w = ts ? w : thrmap_latest(l->thrs, w);
	return w && w->name[0] ? w->name : NULL;
}

int64_t pq_utid(const struct pq_log *lg, uint32_t th)
{
	return th < lg->meta.nth ? (int64_t)(lg->utid0 + th) : -1;
}

int64_t pq_upid(const struct pq_log *lg, uint32_t th)
{
	return th < lg->meta.nth ? (int64_t)(lg->upid0 + lg->upid_of[th]) : -1;
}

void pq_id_result(sqlite3_context *ctx, int64_t v)
{
	if (v >= 0)
		sqlite3_result_int64(ctx, v);
}

int pq_next_log(struct pq_cursor *c, int (*begin)(struct pq_cursor *, void *, size_t), void *st)
{
	for (;; c->k++) {
		if (c->k >= c->vt->logs.n || (c->b.log >= 0 && c->k != (size_t)c->b.log)) {
			c->eof = 1;
			return 0;
		}
		int r = begin(c, st, c->k);
		if (r != 0)
			return r;
	}
}
