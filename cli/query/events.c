/*
 * events.c -- the tables event and loss: a log read from its start, one
 * event at a time, never held (tlog.c).
 *
 * A statement that reads no payload, args, address or call site reads in
 * batches (tlog_next_batch: no payload copied); the others one event at
 * a time (tlog_next).  The constraints of the plan (vtab.c) narrow the
 * reading: a ts range seeks to its start through the log's block index
 * (tlog_seek) and ends where no block can hold an event before its end
 * (tlog_until), unless the statement reads or bounds event ids, which
 * count from the log's start; a type, name, pid, tid, utid or upid skips
 * the events of other types and threads before SQLite sees them, and
 * narrows the range to the first and last event of those types and
 * threads (their totals say when they were); an id range stops once past
 * its end; a log constraint reads that log alone.
 *
 * loss: the RESUME events that say how many events a gap lost (the
 * events' own lane: utid of the trace, pid 0), as stats counts them.
 */
#include <errno.h>
#include <string.h>
#include "query.h"

uint64_t pq_visited;

#define SITES 1024  /* call sites remembered (by symz's text id) */
struct site { uint64_t id; struct symz_site s; };

/* (the totals plan) a type of a log, and its count */
struct trow { size_t k; unsigned id; const char *name; uint64_t n; int owned; };

struct evs {
	struct tlog l;
	long open;                 /* the log l reads, or -1 */
	int batch;
	struct pt_ext_batch *bt;
	uint32_t thread_of[PT_EXT_BATCH_W];
	size_t bi;
	struct tev e;              /* (one at a time) the current event */
	uint64_t ts, place;        /* the current event; events read this pass */
	uint32_t th;
	uint16_t id;
	uint64_t lost;             /* (loss) the gap's count */
	unsigned char types[PT_NIDS];
	int any_type;
	unsigned char *threads;    /* per thread of the log: may match */
	size_t nthreads;           /* (threads a damaged log shows later: none match) */
	int any_thread;
	struct symz *z;
	struct site *sites;
	int loss;
	struct trow *tr;           /* the totals plan: the types in order */
	size_t ntr, ti;
	uint64_t left;             /* rows of tr[ti] still to give */
};

static const uint64_t FULL_COLS = 1u << EV_PAYLOAD | 1u << EV_ARGS | 1u << EV_ADDRESS |
                                  1u << EV_FUNCTION | 1u << EV_FILE | 1u << EV_LINE |
                                  1u << EV_OBJECT;

static struct evs *state(struct pq_cursor *c)
{
	if (!c->st) {
		struct evs *s = calloc(1, sizeof *s);
		if (!s)
			return NULL;
		s->open = -1;
		c->st = s;
	}
	return c->st;
}

static void drop_log(struct evs *s)
{
	if (s->open >= 0)
		tlog_free(&s->l);
	s->open = -1;
	if (s->z)
		symz_close(s->z);
	s->z = NULL;
	free(s->sites);
	s->sites = NULL;
	free(s->threads);
	s->threads = NULL;
}

/* Whether a thread of l was kernel thread tid at some time: its
 * identities, "5678 main, worker-3; 5690 w" (thrmap_all). */
static int had_tid(const struct tlog *l, uint32_t th, int64_t tid)
{
	char buf[4096];
	const char *p = buf;

	if (pq_tid(l, th, 0) == tid)
		return 1;
	thrmap_all(l->thrs, buf, sizeof buf, l->th[th].pid, l->th[th].tid);
	if (strlen(buf) + 4 >= sizeof buf) /* (cut: may be one of the rest) */
		return 1;
	while (*p) {
		char *end;
		long long v = strtoll(p, &end, 10);
		if (end != p && v == tid)
			return 1;
		const char *n = strstr(p, "; ");
		if (!n)
			break;
		p = n + 2;
	}
	return 0;
}

/* Which types and threads of log k can match; 0 if none can. */
static int masks(struct pq_cursor *c, struct evs *s, const struct pq_log *lg)
{
	const struct pq_bounds *b = &c->b;
	const struct tlog *l = &s->l;
	char tmp[32];

	s->any_type = b->type < 0 && !b->name && !s->loss;
	memset(s->types, 0, sizeof s->types);
	int nt = 0;
	for (unsigned id = 0; id < PT_NIDS; id++) {
		int ok = (b->type < 0 || (int64_t)id == b->type) &&
		         (!b->name || !strcmp(tlog_name(l, id, tmp, sizeof tmp), b->name)) &&
		         (!s->loss || id == POSIX_TRACE_RESUME);
		s->types[id] = (unsigned char)ok;
		nt += ok && l->count[id];
	}
	if (!nt)
		return 0;
	s->any_thread = b->utid < 0 && b->upid < 0 && b->pid == INT64_MIN && b->tid == INT64_MIN;
	free(s->threads);
	if (!(s->threads = calloc(l->nth + 1, 1)))
		return -1;
	s->nthreads = l->nth;
	int nth = 0;
	for (size_t t = 0; t < l->nth; t++) {
		int ok = (b->utid < 0 || b->utid == pq_utid(lg, (uint32_t)t)) &&
		         (b->upid < 0 || b->upid == pq_upid(lg, (uint32_t)t)) &&
		         (b->pid == INT64_MIN || b->pid == l->th[t].pid);
		if (ok && b->tid != INT64_MIN) /* any identity of the thread had that TID */
			ok = had_tid(l, (uint32_t)t, b->tid);
		s->threads[t] = (unsigned char)ok;
		nth += ok && l->th[t].count;
	}
	return nth ? 1 : 0;
}

/* Log k ready to read from where the bounds say: 1, 0 (nothing there can
 * match), -1 (failed). */
static int begin_log(struct pq_cursor *c, void *st, size_t k)
{
	struct evs *s = st;
	const struct pq_log *lg = &c->vt->logs.v[k];
	const struct pq_bounds *b = &c->b;
	char err[600];

	if (s->open != (long)k) {
		drop_log(s);
		if (pq_reading_open(lg, &s->l, err, sizeof err))
			return pq_fail(c, "%s", err);
		s->open = (long)k;
	}
	int m = masks(c, s, lg);
	if (m <= 0)
		return m < 0 ? pq_fail(c, "out of memory") : 0;
	if (b->id_lo != INT64_MIN && b->id_lo > 0 && (uint64_t)b->id_lo >= lg->id0 + s->l.nev)
		return 0;
	if (b->id_hi < 0 || (uint64_t)b->id_hi < lg->id0)
		return 0;
	/* when what can match happened: the ts bounds, the types' and threads' */
	uint64_t lo = b->ts_lo, hi = b->ts_hi, tlo = UINT64_MAX, thi = 0;
	const struct tlog *l = &s->l;
	if (!s->any_type) {
		for (unsigned id = 0; id < PT_NIDS; id++)
			if (s->types[id] && l->count[id]) {
				tlo = l->tfirst[id] < tlo ? l->tfirst[id] : tlo;
				thi = l->tlast[id] > thi ? l->tlast[id] : thi;
			}
		lo = tlo > lo ? tlo : lo;
		hi = thi < hi ? thi : hi;
	}
	if (!s->any_thread) {
		tlo = UINT64_MAX, thi = 0;
		for (size_t t = 0; t < l->nth; t++)
			if (s->threads[t] && l->th[t].count) {
				tlo = l->th[t].first < tlo ? l->th[t].first : tlo;
				thi = l->th[t].last > thi ? l->th[t].last : thi;
			}
		lo = tlo > lo ? tlo : lo;
		hi = thi < hi ? thi : hi;
	}
	if (lo > hi)
		return 0;
	int rc = b->seek && lo > 0 ? tlog_seek(&s->l, lo) : tlog_rewind(&s->l);
	if (!rc)
		rc = tlog_until(&s->l, hi);
	if (rc)
		return pq_fail(c, "%s: seeking in the log failed", lg->path);
	s->place = 0;
	s->bi = 0;
	s->batch = !s->loss && !(b->used & FULL_COLS);
	if (s->batch && !s->bt && !(s->bt = malloc(sizeof *s->bt)))
		return pq_fail(c, "out of memory");
	if (s->bt)
		s->bt->n = 0;
	return 1;
}

/* The next event of the log open: 1, 0 at its end, -1. */
static int read_one(struct pq_cursor *c, struct evs *s)
{
	if (s->batch) {
		while (s->bi >= s->bt->n) {
			int r = tlog_next_batch(&s->l, s->bt, s->thread_of);
			if (r <= 0)
				return r < 0 ? pq_fail(c, "%s: reading events failed",
				                      c->vt->logs.v[c->k].path) : 0;
			s->bi = 0;
		}
		const struct pt_ext_bevent *e = &s->bt->ev[s->bi++];
		s->ts = e->ts;
		s->id = e->id < PT_NIDS ? e->id : 0;
		s->th = s->thread_of[e->w];
		return 1;
	}
	int r = tlog_next(&s->l, &s->e);
	if (r <= 0)
		return r < 0 ? pq_fail(c, "%s: reading events failed", c->vt->logs.v[c->k].path) : 0;
	s->ts = s->e.ts;
	s->id = s->e.id;
	s->th = s->e.thread;
	s->lost = s->e.lost;
	return 1;
}

/* On to the next row that may match, from log c->k on. */
static int advance(struct pq_cursor *c, struct evs *s, int fresh)
{
	const struct pq_bounds *b = &c->b;

	for (;;) {
		if (fresh) {
			int r = pq_next_log(c, begin_log, s);
			if (r <= 0)
				return r;
			fresh = 0;
		}
		int r = read_one(c, s);
		if (r < 0)
			return -1;
		if (r == 0) {
			c->k++;
			fresh = 1;
			continue;
		}
		const struct pq_log *lg = &c->vt->logs.v[c->k];
		uint64_t id = lg->id0 + s->place++;
		pq_visited++;
		if (b->id_hi != INT64_MAX && id > (uint64_t)b->id_hi) { /* ids only grow */
			c->k++;
			fresh = 1;
			continue;
		}
		if (s->ts < b->ts_lo || s->ts > b->ts_hi || (b->id_lo > 0 && id < (uint64_t)b->id_lo))
			continue;
		if (!s->any_type && !s->types[s->id])
			continue;
		if (!s->any_thread && (s->th >= s->nthreads || !s->threads[s->th]))
			continue;
		if (s->loss && s->lost == UINT64_MAX)
			continue;
		return 0;
	}
}

static int by_name_cmp(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	int r = strcmp(x->name, y->name);
	return r ? r : x->id != y->id ? (x->id > y->id ? 1 : -1) : (x->k > y->k) - (x->k < y->k);
}

static int by_type_cmp(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	return x->id != y->id ? (x->id > y->id ? 1 : -1) : (x->k > y->k) - (x->k < y->k);
}

/* The totals plan (vtab.c, by_totals): the types of every log that can
 * match, in the order asked, each to be given count[id] times. */
static int totals_start(struct pq_cursor *c, struct evs *s)
{
	const struct pq_bounds *b = &c->b;
	char tmp[32];

	free(s->tr);
	s->tr = NULL;
	s->ntr = s->ti = 0;
	if (!(s->tr = calloc(c->vt->logs.n * PT_NIDS + 1, sizeof *s->tr)))
		return pq_fail(c, "out of memory");
	for (size_t k = 0; k < c->vt->logs.n && !b->empty; k++) {
		const struct tlog *l = &c->vt->logs.v[k].meta;
		if (b->log >= 0 && (size_t)b->log != k)
			continue;
		for (unsigned id = 0; id < PT_NIDS; id++) {
			const char *name = tlog_name(l, id, tmp, sizeof tmp);
			if (!l->count[id] || (b->type >= 0 && b->type != (int64_t)id) ||
			    (b->name && strcmp(b->name, name)))
				continue;
			/* (an unnamed type's name is made in tmp: kept by its row) */
			int owned = name == tmp;
			if (owned && !(name = sqlite3_mprintf("%s", tmp)))
				return pq_fail(c, "out of memory");
			s->tr[s->ntr++] = (struct trow){ k, id, name, l->count[id], owned };
		}
	}
	qsort(s->tr, s->ntr, sizeof *s->tr, b->by_name ? by_name_cmp : by_type_cmp);
	if (b->desc)
		for (size_t i = 0; i < s->ntr / 2; i++) {
			struct trow t = s->tr[i];
			s->tr[i] = s->tr[s->ntr - 1 - i];
			s->tr[s->ntr - 1 - i] = t;
		}
	s->ti = 0;
	s->left = s->ntr ? s->tr[0].n : 0;
	c->eof = !s->ntr;
	c->k = s->ntr ? s->tr[0].k : 0;
	return 0;
}

static void totals_free(struct evs *s)
{
	for (size_t i = 0; i < s->ntr; i++) /* (the names made for unnamed types) */
		if (s->tr[i].owned)
			sqlite3_free((void *)s->tr[i].name);
	free(s->tr);
	s->tr = NULL;
	s->ntr = 0;
}

static int ev_start(struct pq_cursor *c)
{
	struct evs *s = state(c);
	if (!s)
		return pq_fail(c, "out of memory");
	s->loss = c->vt->kind == PQ_LOSS;
	totals_free(s);
	if (c->b.totals)
		return totals_start(c, s);
	if (c->b.empty) {
		c->eof = 1;
		return 0;
	}
	c->k = c->b.log >= 0 ? (size_t)c->b.log : 0;
	return advance(c, s, 1);
}

static int ev_next(struct pq_cursor *c)
{
	struct evs *s = c->st;
	if (s->tr) {
		if (--s->left == 0) {
			if (++s->ti >= s->ntr) {
				c->eof = 1;
				return 0;
			}
			s->left = s->tr[s->ti].n;
			c->k = s->tr[s->ti].k;
		}
		return 0;
	}
	return advance(c, s, 0);
}

static const struct site *site_of(struct pq_cursor *c, struct evs *s)
{
	const struct tthread *t = &s->l.th[s->th];
	uint64_t id;

	if (!s->z && !(s->z = symz_open(&s->l, s->l.path, 0)))
		return NULL;
	if (!s->sites && !(s->sites = calloc(SITES, sizeof *s->sites)))
		return NULL;
	(void)symz_lookup_id(s->z, t->pid, s->ts, s->e.addr, &id);
	struct site *x = &s->sites[id % SITES];
	if (id && x->id == id)
		return x;
	x->id = 0;
	if (symz_site(s->z, t->pid, s->ts, s->e.addr, &x->s))
		return NULL;
	x->id = id;
	(void)c;
	return x;
}

static int ev_column(struct pq_cursor *c, sqlite3_context *ctx, int col)
{
	struct evs *s = c->st;
	const struct pq_log *lg = &c->vt->logs.v[c->k];
	const struct tlog *l = &s->l;
	char tmp[32];

	if (s->loss) {
		switch (col) {
		case LO_TS: sqlite3_result_int64(ctx, (sqlite3_int64)s->ts); break;
		case LO_UTID: pq_id_result(ctx, pq_utid(lg, s->th)); break;
		case LO_COUNT: sqlite3_result_int64(ctx, (sqlite3_int64)s->lost); break;
		}
		return 0;
	}
	if (s->tr) { /* the totals plan: type and name only */
		if (col == EV_TYPE)
			sqlite3_result_int(ctx, (int)s->tr[s->ti].id);
		else if (col == EV_NAME)
			pq_text(ctx, s->tr[s->ti].name);
		return 0;
	}
	int32_t pid = s->th < l->nth ? l->th[s->th].pid : 0;
	switch (col) {
	case EV_ID: sqlite3_result_int64(ctx, (sqlite3_int64)(lg->id0 + s->place - 1)); break;
	case EV_TS: sqlite3_result_int64(ctx, (sqlite3_int64)s->ts); break;
	case EV_TYPE: sqlite3_result_int(ctx, s->id); break;
	case EV_NAME: pq_text(ctx, tlog_name(l, s->id, tmp, sizeof tmp)); break;
	case EV_UTID: pq_id_result(ctx, pq_utid(lg, s->th)); break;
	case EV_UPID: pq_id_result(ctx, pq_upid(lg, s->th)); break;
	case EV_PID: sqlite3_result_int(ctx, pid); break;
	case EV_TID: {
		int64_t t = pq_tid(l, s->th, s->ts);
		if (t)
			sqlite3_result_int64(ctx, t);
		break;
	}
	case EV_THREAD: pq_text(ctx, pq_thread_name(l, s->th, s->ts)); break;
	case EV_PAYLOAD:
		sqlite3_result_blob(ctx, s->e.data, (int)s->e.len, SQLITE_TRANSIENT);
		break;
	case EV_ARGS: {
		const char *desc = typemap_desc(l->types, pid, s->id);
		if (!desc)
			break;
		char *buf = malloc(65536);
		if (!buf)
			return pq_fail(c, "out of memory");
		buf[0] = '{';
		if (typed_json_args(buf + 1, 65536 - 2, desc, s->e.data, s->e.len) == 0) {
			size_t n = strlen(buf);
			buf[n] = '}';
			sqlite3_result_text(ctx, buf, (int)n + 1, SQLITE_TRANSIENT);
		}
		free(buf);
		break;
	}
	case EV_ADDRESS:
		if (s->e.addr)
			sqlite3_result_int64(ctx, (sqlite3_int64)s->e.addr);
		break;
	case EV_FUNCTION: case EV_FILE: case EV_LINE: case EV_OBJECT: {
		const struct site *x = s->e.addr && s->th < l->nth ? site_of(c, s) : NULL;
		if (!x)
			break;
		if (col == EV_FUNCTION)
			pq_text(ctx, x->s.function[0] ? x->s.function : NULL);
		else if (col == EV_FILE)
			pq_text(ctx, x->s.file[0] ? x->s.file : NULL);
		else if (col == EV_LINE && x->s.line)
			sqlite3_result_int(ctx, x->s.line);
		else if (col == EV_OBJECT)
			pq_text(ctx, x->s.object[0] ? x->s.object : NULL);
		break;
	}
	}
	return 0;
}

static void ev_close(struct pq_cursor *c)
{
	struct evs *s = c->st;
	if (!s)
		return;
	drop_log(s);
	totals_free(s);
	free(s->bt);
	free(s);
	c->st = NULL;
}

const struct pq_ops pq_event_ops = { ev_start, ev_next, ev_column, ev_close };
const struct pq_ops pq_loss_ops = { ev_start, ev_next, ev_column, ev_close };
