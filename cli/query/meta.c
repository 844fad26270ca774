/*
 * meta.c -- the small tables, answered from what a log's totals hold
 * (loaded when the table was made; never the events): thread, process,
 * type and object.  Rows go log by log, in tlog.c's order (threads by
 * first event, processes by pid, types by id, the map of loaded code as
 * written); an equality on utid, upid, pid, tid, a type's id or name
 * goes straight to its rows.
 */
#include <string.h>
#include "query.h"

struct metas { size_t i; struct symz *z; long zlog; };

static size_t rows_of(const struct pq_cursor *c, size_t k)
{
	const struct tlog *l = &c->vt->logs.v[k].meta;
	switch (c->vt->kind) {
	case PQ_THREAD: return l->nth;
	case PQ_PROCESS: return l->npr;
	case PQ_TYPE: return PT_NIDS;
	case PQ_OBJECT: return l->nobjs;
	default: return 0;
	}
}

static int known_type(const struct tlog *l, unsigned id)
{
	return l->names[id] || l->count[id] || l->listed[id];
}

/* Whether row i of log k can match the bounds (SQLite checks again). */
static int row_ok(const struct pq_cursor *c, size_t k, size_t i)
{
	const struct pq_log *lg = &c->vt->logs.v[k];
	const struct tlog *l = &lg->meta;
	const struct pq_bounds *b = &c->b;
	char tmp[32];

	switch (c->vt->kind) {
	case PQ_THREAD:
		return (b->utid < 0 || (uint64_t)b->utid == lg->utid0 + i) &&
		       (b->upid < 0 || (uint64_t)b->upid == lg->upid0 + lg->upid_of[i]) &&
		       (b->pid == INT64_MIN || b->pid == l->th[i].pid) &&
		       (b->tid == INT64_MIN || b->tid == pq_tid(l, (uint32_t)i, 0));
	case PQ_PROCESS:
		return (b->upid < 0 || (uint64_t)b->upid == lg->upid0 + i) &&
		       (b->pid == INT64_MIN || b->pid == l->pr[i].pid);
	case PQ_TYPE:
		return known_type(l, (unsigned)i) && (b->type < 0 || (size_t)b->type == i) &&
		       (!b->name || !strcmp(b->name, tlog_name(l, (unsigned)i, tmp, sizeof tmp)));
	default:
		return 1;
	}
}

static int advance(struct pq_cursor *c, struct metas *s)
{
	for (; c->k < c->vt->logs.n; c->k++, s->i = 0) {
		if (c->b.log >= 0 && c->k != (size_t)c->b.log)
			continue;
		for (; s->i < rows_of(c, c->k); s->i++)
			if (row_ok(c, c->k, s->i))
				return 0;
	}
	c->eof = 1;
	return 0;
}

static int m_start(struct pq_cursor *c)
{
	struct metas *s = c->st;
	if (!s && !(s = c->st = calloc(1, sizeof *s)))
		return pq_fail(c, "out of memory");
	if (!s->z)
		s->zlog = -1;
	s->i = 0;
	c->k = 0;
	if (c->b.empty) {
		c->eof = 1;
		return 0;
	}
	return advance(c, s);
}

static int m_next(struct pq_cursor *c)
{
	struct metas *s = c->st;
	s->i++;
	return advance(c, s);
}

static void int_or_null(sqlite3_context *ctx, int ok, int64_t v)
{
	if (ok)
		sqlite3_result_int64(ctx, v);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int thread_col(struct pq_cursor *c, sqlite3_context *ctx, int col, size_t i)
{
	const struct pq_log *lg = &c->vt->logs.v[c->k];
	const struct tlog *l = &lg->meta;
	const struct tthread *t = &l->th[i];
	int64_t tid;

	switch (col) {
	case TH_UTID: sqlite3_result_int64(ctx, (sqlite3_int64)(lg->utid0 + i)); break;
	case TH_TID: tid = pq_tid(l, (uint32_t)i, 0); int_or_null(ctx, tid != 0, tid); break;
	case TH_PTHREAD: int_or_null(ctx, t->pid != 0, (int64_t)t->tid); break;
	case TH_NAME: pq_text(ctx, pq_thread_name(l, (uint32_t)i, 0)); break;
	case TH_UPID: sqlite3_result_int64(ctx, (sqlite3_int64)(lg->upid0 + lg->upid_of[i])); break;
	case TH_PID: sqlite3_result_int(ctx, t->pid); break;
	case TH_START: int_or_null(ctx, t->count != 0, (int64_t)t->first); break;
	case TH_END: int_or_null(ctx, t->count != 0, (int64_t)t->last); break;
	case TH_COUNT: sqlite3_result_int64(ctx, (sqlite3_int64)t->count); break;
	}
	return 0;
}

static int process_col(struct pq_cursor *c, struct metas *s, sqlite3_context *ctx, int col,
                       size_t i)
{
	const struct pq_log *lg = &c->vt->logs.v[c->k];
	const struct tlog *l = &lg->meta;
	const struct tproc *p = &l->pr[i];
	const struct pt_ext_proc *who = tlog_identity(l, p);

	switch (col) {
	case PR_UPID: sqlite3_result_int64(ctx, (sqlite3_int64)(lg->upid0 + i)); break;
	case PR_PID: sqlite3_result_int(ctx, p->pid); break;
	case PR_PPID: int_or_null(ctx, who != NULL, who ? who->ppid : 0); break;
	case PR_PARENT: { /* the process its parent's pid named then */
		const struct tproc *pp = who ? tlog_proc(l, who->ppid, who->ts) : NULL;
		if (pp && pp != p)
			sqlite3_result_int64(ctx, (sqlite3_int64)(lg->upid0 + (size_t)(pp - l->pr)));
		break;
	}
	case PR_NAME: case PR_EXE: {
		if (s->zlog != (long)c->k) {
			if (s->z)
				symz_close(s->z);
			s->z = symz_open(l, l->path, 0);
			s->zlog = (long)c->k;
		}
		const char *exe = p->pid && s->z ? symz_exe(s->z, p->pid, p->last) : NULL;
		if (exe && !exe[0])
			exe = NULL;
		pq_text(ctx, exe && col == PR_NAME ? base_name(exe) : exe);
		break;
	}
	case PR_CMDLINE: pq_text(ctx, who ? who->cmdline : NULL); break;
	case PR_START: int_or_null(ctx, p->count != 0, (int64_t)p->first); break;
	case PR_END: int_or_null(ctx, p->count != 0, (int64_t)p->last); break;
	case PR_THREADS: sqlite3_result_int(ctx, (int)p->nthreads); break;
	case PR_COUNT: sqlite3_result_int64(ctx, (sqlite3_int64)p->count); break;
	}
	return 0;
}

static int m_column(struct pq_cursor *c, sqlite3_context *ctx, int col)
{
	struct metas *s = c->st;
	const struct pq_log *lg = &c->vt->logs.v[c->k];
	const struct tlog *l = &lg->meta;
	size_t i = s->i;
	char tmp[2 * PT_EXT_OBJ_BID_MAX + 1];

	switch (c->vt->kind) {
	case PQ_THREAD:
		return thread_col(c, ctx, col, i);
	case PQ_PROCESS:
		return process_col(c, s, ctx, col, i);
	case PQ_TYPE:
		switch (col) {
		case TY_ID: sqlite3_result_int(ctx, (int)i); break;
		case TY_NAME: pq_text(ctx, tlog_name(l, (unsigned)i, tmp, sizeof tmp)); break;
		case TY_DESC: pq_text(ctx, typemap_desc(l->types, -1, (unsigned)i)); break;
		case TY_COUNT: sqlite3_result_int64(ctx, (sqlite3_int64)l->count[i]); break;
		case TY_START: int_or_null(ctx, l->count[i] != 0, (int64_t)l->tfirst[i]); break;
		case TY_END: int_or_null(ctx, l->count[i] != 0, (int64_t)l->tlast[i]); break;
		}
		return 0;
	case PQ_OBJECT: {
		static const char *const kinds[] = { "", "begin", "add", "del", "lost",
		                                     NULL, NULL, NULL, "fork" };
		const struct pt_ext_obj *o = &l->objs[i];
		int obj = o->kind == PT_EXT_OBJ_ADD || o->kind == PT_EXT_OBJ_DEL;
		switch (col) {
		case OB_TS: sqlite3_result_int64(ctx, (sqlite3_int64)o->ts); break;
		case OB_UPID: { /* the process its pid named then */
			const struct tproc *op = tlog_proc(l, o->pid, o->ts);
			if (op)
				sqlite3_result_int64(ctx, (sqlite3_int64)(lg->upid0 + (size_t)(op - l->pr)));
			break;
		}
		case OB_PID: sqlite3_result_int(ctx, o->pid); break;
		case OB_KIND: pq_text(ctx, o->kind <= PT_EXT_OBJ_FORK ? kinds[o->kind] : NULL); break;
		case OB_START: int_or_null(ctx, obj, (int64_t)o->lo); break;
		case OB_END: int_or_null(ctx, obj, (int64_t)o->hi); break;
		case OB_BIAS: int_or_null(ctx, obj, (int64_t)o->base); break;
		case OB_BUILD_ID:
			if (obj && o->bid_len && o->bid_len <= PT_EXT_OBJ_BID_MAX) {
				for (unsigned k = 0; k < o->bid_len; k++)
					snprintf(tmp + 2 * k, 3, "%02x", o->bid[k]);
				pq_text(ctx, tmp);
			}
			break;
		case OB_NAME: pq_text(ctx, obj && o->path[0] ? o->path : NULL); break;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static void m_close(struct pq_cursor *c)
{
	struct metas *s = c->st;
	if (s && s->z)
		symz_close(s->z);
	free(s);
	c->st = NULL;
}

const struct pq_ops pq_meta_ops = { m_start, m_next, m_column, m_close };
