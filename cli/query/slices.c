/*
 * slices.c -- the tables slice and flow: a log's spans, paired by
 * spans.c as stats pairs them (the NAME/begin, NAME/end and
 * NAME/async-begin, NAME/async-end conventions), one row per complete
 * span, when it ends.
 *
 * A slice's id is its begin event's id (so args rows of arg_set_id = id
 * are its begin's fields, of end_id its end's); parent_id is the id of
 * the same-thread span open around it.  spans.c keeps the open spans;
 * this file keeps, beside each, the begin's id (and its payload, when the
 * statement reads args): a stack per thread kept in step with spans.c's
 * (spans_open), and a table by key for the keyed spans.  Memory: the
 * open spans, never the events.  A span spans.c counts incomplete (no
 * partner for sure, a gap between begin and end, still open at the end)
 * has no row, as it has no duration in stats.
 *
 * flow: the keyed spans that ended on another thread than they began on,
 * one row each (slice_out its slice, slice_in its end event).
 *
 * When no type of the log is a keyed span's and args are not read, the
 * log is read in batches (no payloads): same-thread pairing needs none.
 *
 * A ts range [lo, hi] (slices that begin in it) seeks when the statement
 * reads no id, depth or parent (vtab.c: ids count from the log's start,
 * depth and parent need what was open before): the reading starts at the
 * first block that may hold an event at lo (tlog_seek) and stops, as
 * event's does, once no block left may hold one at or before hi
 * (tlog_until); if spans begun in the range are still open then, it goes
 * on (tlog_until again, to the end) until the last of them has ended, or
 * to the log's end when one never does.  What begins in the range pairs
 * as in a reading from the start: a thread's events skipped are the first
 * of its own, and an end takes the innermost open span of its definition,
 * so a span begun before lo never takes one that ends a span begun after
 * it.
 *
 * A name (name = 'req'), in a statement that reads no depth or parent:
 * the begins and ends of other spans are passed over (skip[]), as they
 * cannot change how that name's pair (an end takes the innermost open
 * span of its own definition); when that name's spans are not keyed, the
 * log is then read in batches even if other spans are.
 */
#include <string.h>
#include "query.h"

struct sopen { uint64_t id; int64_t key; unsigned char *pl; uint32_t plen, def; int32_t pid;
               uint16_t type; uint8_t used, win; };
struct stack { struct sopen *o; uint32_t n, cap; };

struct slices {
	struct tlog l;
	long open;
	struct spans *sp;
	int batch, keep_payload, flow;
	struct pt_ext_batch *bt;
	uint32_t thread_of[PT_EXT_BATCH_W];
	size_t bi;
	uint64_t place;
	/* a ts range: 0 none; 1 reading to the range's end (tlog_until); 2
	 * past it, until the spans begun in it (pending of them open) end;
	 * 3 they have: this log is done */
	int phase;
	uint64_t pending;
	int only;                  /* skip[] in use: one definition's events paired */
	unsigned char skip[PT_NIDS];
	struct stack *stk;
	size_t nstk;
	struct sopen *k;           /* keyed spans open, by (def, key) */
	size_t kcap, kn;
	unsigned char names_ok[SPAN_MAX];
	/* the current row */
	struct sopen b;            /* its begin (b.pl owned) */
	uint64_t ts, dur, end_id;
	uint32_t th, end_th, depth;
	int keyed, has_parent;
	uint64_t parent;
	unsigned char *epl;
	uint32_t eplen;
	int32_t epid;
	uint16_t etype;
};

static uint64_t kmix(uint32_t def, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull ^ def * 0xc2b2ae3d27d4eb4full;
	return h ^ h >> 31;
}

static struct sopen *kfind(struct slices *s, uint32_t def, int64_t key)
{
	if (!s->kcap)
		return NULL;
	for (size_t j = kmix(def, (uint64_t)key) & (s->kcap - 1); s->k[j].used;
	     j = (j + 1) & (s->kcap - 1))
		if (s->k[j].def == def && s->k[j].key == key)
			return &s->k[j];
	return NULL;
}

static int kput(struct slices *s, const struct sopen *v)
{
	if ((s->kn + 1) * 2 > s->kcap) {
		size_t ncap = s->kcap ? 2 * s->kcap : 64;
		struct sopen *n = calloc(ncap, sizeof *n);
		if (!n)
			return -1;
		for (size_t i = 0; i < s->kcap; i++)
			if (s->k[i].used) {
				size_t j = kmix(s->k[i].def, (uint64_t)s->k[i].key) & (ncap - 1);
				while (n[j].used)
					j = (j + 1) & (ncap - 1);
				n[j] = s->k[i];
			}
		free(s->k);
		s->k = n;
		s->kcap = ncap;
	}
	size_t j = kmix(v->def, (uint64_t)v->key) & (s->kcap - 1);
	while (s->k[j].used)
		j = (j + 1) & (s->kcap - 1);
	s->k[j] = *v;
	s->k[j].used = 1;
	s->kn++;
	return 0;
}

/* removes x (its payload is the caller's), shifting back its cluster */
static void kdel(struct slices *s, struct sopen *x)
{
	size_t i = (size_t)(x - s->k), m = s->kcap - 1;
	s->k[i].used = 0;
	s->kn--;
	for (size_t j = (i + 1) & m; s->k[j].used; j = (j + 1) & m) {
		size_t h = kmix(s->k[j].def, (uint64_t)s->k[j].key) & m;
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			s->k[i] = s->k[j];
			s->k[j].used = 0;
			i = j;
		}
	}
}

static void reset(struct slices *s)
{
	for (size_t t = 0; t < s->nstk; t++) {
		for (uint32_t i = 0; i < s->stk[t].n; i++)
			free(s->stk[t].o[i].pl);
		free(s->stk[t].o);
	}
	free(s->stk);
	s->stk = NULL;
	s->nstk = 0;
	for (size_t j = 0; j < s->kcap; j++)
		if (s->k[j].used)
			free(s->k[j].pl);
	free(s->k);
	s->k = NULL;
	s->kcap = s->kn = 0;
	free(s->b.pl);
	s->b.pl = NULL;
	free(s->epl);
	s->epl = NULL;
	spans_free(s->sp);
	s->sp = NULL;
	s->pending = 0;
	s->phase = 0;
}

static void drop_log(struct slices *s)
{
	reset(s);
	if (s->open >= 0)
		tlog_free(&s->l);
	s->open = -1;
}

static int has_suffix(const char *n, const char *suf)
{
	size_t a = strlen(n), b = strlen(suf);
	return a >= b && !strcmp(n + a - b, suf);
}

static int begin_log(struct pq_cursor *c, void *st, size_t k)
{
	struct slices *s = st;
	char err[600];

	reset(s);
	if (s->open != (long)k) {
		drop_log(s);
		if (pq_reading_open(&c->vt->logs.v[k], &s->l, err, sizeof err))
			return pq_fail(c, "%s", err);
		s->open = (long)k;
	}
	err_capture(err, sizeof err);
	int bad = spans_make(&c->vt->spans, &s->sp) || spans_check(s->sp, &s->l);
	err_capture(NULL, 0);
	if (bad)
		return pq_fail(c, "%s: %s", s->l.path, err);
	const struct pq_bounds *b = &c->b;
	int ranged = b->seek && (b->ts_lo > 0 || b->ts_hi != UINT64_MAX);
	if (ranged && (b->ts_lo > s->l.last || (s->l.nev && b->ts_hi < s->l.first)))
		return 0; /* (no span begins there) */
	int rc = ranged && b->ts_lo > 0 ? tlog_seek(&s->l, b->ts_lo) : tlog_rewind(&s->l);
	if (!rc)
		rc = tlog_until(&s->l, ranged ? b->ts_hi : UINT64_MAX);
	if (rc)
		return pq_fail(c, "%s: %s", s->l.path, "seeking in the log failed");
	s->phase = ranged && b->ts_hi != UINT64_MAX;
	int keyed = 0;
	s->only = !s->flow && b->name &&
	          !(b->used & ((uint64_t)1 << SL_DEPTH | (uint64_t)1 << SL_PARENT));
	if (s->only) { /* that name's begins and ends only */
		int any = 0;
		spans_any(s->sp, &s->l); /* (every type's role known) */
		for (unsigned id = 0; id < PT_NIDS; id++) {
			long d = s->l.count[id] ? spans_def_of(s->sp, &s->l, id) : -1;
			int mine = d >= 0 && !strcmp(spans_stat(s->sp, (size_t)d)->name, b->name);
			s->skip[id] = d >= 0 && !mine;
			any |= mine;
			keyed |= mine && spans_stat(s->sp, (size_t)d)->keyed; /* (any of that name) */
		}
		if (!any)
			return 0; /* (no span of that name here) */
	} else {
		for (size_t i = 0; i < spans_count(s->sp); i++)
			keyed |= spans_stat(s->sp, i)->keyed;
		for (unsigned id = 0; id < PT_NIDS; id++)
			if (s->l.names[id] && s->l.count[id] &&
			    (has_suffix(s->l.names[id], "/async-begin") ||
			     has_suffix(s->l.names[id], "/async-end")))
				keyed = 1;
	}
	s->keep_payload = (c->b.used & ((uint64_t)1 << SL_ARGS)) && !s->flow;
	int end_payload = (c->b.used & ((uint64_t)1 << SL_END_ARGS)) && !s->flow;
	s->batch = !keyed && !s->keep_payload && !end_payload;
	if (s->flow && !keyed)
		return 0; /* no keyed spans: no flow */
	if (s->batch && !s->bt && !(s->bt = malloc(sizeof *s->bt)))
		return pq_fail(c, "out of memory");
	s->bi = 0;
	if (s->bt)
		s->bt->n = 0;
	s->place = 0;
	return 1;
}

static int read_one(struct pq_cursor *c, struct slices *s, struct tev *e)
{
	if (s->batch) {
		while (s->bi >= s->bt->n) {
			int r = tlog_next_batch(&s->l, s->bt, s->thread_of);
			if (r <= 0)
				return r < 0 ? pq_fail(c, "%s: reading events failed", s->l.path) : 0;
			s->bi = 0;
		}
		const struct pt_ext_bevent *b = &s->bt->ev[s->bi++];
		memset(e, 0, sizeof *e);
		e->ts = b->ts;
		e->id = b->id < PT_NIDS ? b->id : 0;
		e->thread = s->thread_of[b->w];
		e->lost = UINT64_MAX;
		return 1;
	}
	int r = tlog_next(&s->l, e);
	return r < 0 ? pq_fail(c, "%s: reading events failed", s->l.path) : r;
}

/* whether a span begun at ts is one of the range's (phase 1 or 2) */
static uint8_t in_range(const struct pq_cursor *c, const struct slices *s, uint64_t ts)
{
	return s->phase && ts >= c->b.ts_lo && ts <= c->b.ts_hi;
}

/* an open span leaves (ended, cut or dropped) */
static void gone(struct slices *s, const struct sopen *o)
{
	s->pending -= o->win && s->pending;
}

static struct stack *stack_of(struct slices *s, uint32_t th)
{
	if (th >= s->nstk) {
		size_t n = th + 64;
		struct stack *v = realloc(s->stk, n * sizeof *v);
		if (!v)
			return NULL;
		memset(v + s->nstk, 0, (n - s->nstk) * sizeof *v);
		s->stk = v;
		s->nstk = n;
	}
	return &s->stk[th];
}

/* keeps the top k of st (spans.c dropped the others: a reused pthread_t) */
static void sync_stack(struct slices *s, struct stack *st, unsigned k)
{
	if (st->n <= k)
		return;
	uint32_t drop = st->n - k;
	for (uint32_t i = 0; i < drop; i++) {
		gone(s, &st->o[i]);
		free(st->o[i].pl);
	}
	memmove(st->o, st->o + drop, k * sizeof *st->o);
	st->n = k;
}

static int64_t key_of(const struct tev *e)
{
	unsigned char kb[8] = { 0 };
	int64_t key;
	if (e->len && e->data)
		memcpy(kb, e->data, e->len < 8 ? e->len : 8);
	memcpy(&key, kb, 8);
	return key;
}

static unsigned char *copy_payload(const struct tev *e)
{
	unsigned char *p = malloc(e->len ? e->len : 1);
	if (p && e->len)
		memcpy(p, e->data, e->len);
	return p;
}

/* One event through the pairing: 1 when it ended a span that makes a row
 * (s->b and the row's fields set), 0, or -1. */
static int pair(struct pq_cursor *c, struct slices *s, const struct tev *e, uint64_t id)
{
	struct span_mark m;
	struct stack *st = stack_of(s, e->thread);

	if (!st || spans_event(s->sp, &s->l, e, &m) < 0)
		return pq_fail(c, "out of memory");
	if (m.kind == SPAN_NONE)
		return 0;
	const struct span_stat *d = spans_stat(s->sp, m.def);
	int32_t pid = e->thread < s->l.nth ? s->l.th[e->thread].pid : 0;
	int ret = 0;
	if (d->keyed) {
		int64_t key = key_of(e);
		struct sopen *x = kfind(s, m.def, key);
		if (m.kind == SPAN_BEGIN) {
			struct sopen v = { id, key, NULL, e->len, m.def, pid, e->id, 1,
			                   in_range(c, s, e->ts) };
			if (s->keep_payload && !(v.pl = copy_payload(e)))
				return pq_fail(c, "out of memory");
			if (x) {
				gone(s, x);
				free(x->pl);
				kdel(s, x);
			}
			if (kput(s, &v)) {
				free(v.pl);
				return pq_fail(c, "out of memory");
			}
			s->pending += v.win;
			return 0;
		}
		if (!x)
			return 0;
		struct sopen b = *x;
		gone(s, x);
		kdel(s, x);
		if (m.kind == SPAN_END && (!s->flow || e->thread != m.thread)) {
			free(s->b.pl);
			s->b = b;
			s->depth = m.lane;
			s->has_parent = 0;
			s->keyed = 1;
			ret = 1;
		} else {
			free(b.pl);
		}
	} else {
		if (m.kind == SPAN_BEGIN) {
			if (st->n == st->cap) {
				uint32_t ncap = st->cap ? 2 * st->cap : 8;
				struct sopen *o = realloc(st->o, ncap * sizeof *o);
				if (!o)
					return pq_fail(c, "out of memory");
				st->o = o;
				st->cap = ncap;
			}
			struct sopen v = { id, 0, NULL, e->len, m.def, pid, e->id, 1,
			                   in_range(c, s, e->ts) };
			if (s->keep_payload && !(v.pl = copy_payload(e)))
				return pq_fail(c, "out of memory");
			st->o[st->n++] = v;
			s->pending += v.win;
		} else if (m.paired && m.depth < st->n) {
			struct sopen b = st->o[m.depth];
			gone(s, &b);
			memmove(st->o + m.depth, st->o + m.depth + 1,
			        (st->n - m.depth - 1) * sizeof *st->o);
			st->n--;
			if (m.kind == SPAN_END && !s->flow) {
				free(s->b.pl);
				s->b = b;
				s->depth = m.depth;
				s->has_parent = m.depth > 0;
				s->parent = m.depth > 0 ? st->o[m.depth - 1].id : 0;
				s->keyed = 0;
				ret = 1;
			} else {
				free(b.pl);
			}
		}
	}
	sync_stack(s, st, spans_open(s->sp, e->thread));
	if (ret) {
		s->ts = m.start;
		s->dur = m.dur;
		s->th = m.thread;
		s->end_th = e->thread;
		s->end_id = id;
		free(s->epl);
		s->epl = NULL;
		s->eplen = e->len;
		s->epid = pid;
		s->etype = e->id;
		if ((c->b.used & ((uint64_t)1 << SL_END_ARGS)) && !s->flow && !(s->epl = copy_payload(e)))
			return pq_fail(c, "out of memory");
	}
	return ret;
}

static int row_ok(struct pq_cursor *c, struct slices *s)
{
	const struct pq_bounds *b = &c->b;
	const struct pq_log *lg = &c->vt->logs.v[c->k];
	const struct span_stat *d = spans_stat(s->sp, s->b.def);

	if (b->name && strcmp(b->name, d->name))
		return 0;
	if (s->ts < b->ts_lo || s->ts > b->ts_hi)
		return 0;
	if (b->utid >= 0 && b->utid != pq_utid(lg, s->th))
		return 0;
	if ((b->id_lo != INT64_MIN && (int64_t)s->b.id < b->id_lo) ||
	    (b->id_hi != INT64_MAX && (int64_t)s->b.id > b->id_hi))
		return 0;
	return 1;
}

static int advance(struct pq_cursor *c, struct slices *s, int fresh)
{
	struct tev e;

	for (;;) {
		if (fresh) {
			int r = pq_next_log(c, begin_log, s);
			if (r <= 0)
				return r;
			fresh = 0;
		}
		int r = s->phase == 3 ? 0 : read_one(c, s, &e);
		if (r < 0)
			return -1;
		if (r == 0 && s->phase == 1 && s->pending) {
			/* past the range, spans begun in it still open: on to their ends */
			if (tlog_until(&s->l, UINT64_MAX))
				return pq_fail(c, "%s: seeking in the log failed", s->l.path);
			s->phase = 2;
			continue;
		}
		if (r == 0) {
			spans_end(s->sp);
			c->k++;
			fresh = 1;
			continue;
		}
		uint64_t id = c->vt->logs.v[c->k].id0 + s->place++;
		pq_visited++;
		if (s->only && s->skip[e.id])
			continue;
		if ((r = pair(c, s, &e, id)) < 0)
			return -1;
		int ok = r && row_ok(c, s);
		if (s->phase == 2 && !s->pending) /* the range's last span ended */
			s->phase = 3;
		if (ok)
			return 0;
	}
}

static int sl_start(struct pq_cursor *c)
{
	struct slices *s = c->st;
	if (!s) {
		if (!(s = c->st = calloc(1, sizeof *s)))
			return pq_fail(c, "out of memory");
		s->open = -1;
	}
	s->flow = c->vt->kind == PQ_FLOW;
	if (c->b.empty) {
		c->eof = 1;
		return 0;
	}
	c->k = c->b.log >= 0 ? (size_t)c->b.log : 0;
	return advance(c, s, 1);
}

static int sl_next(struct pq_cursor *c)
{
	return advance(c, c->st, 0);
}

/* "{...}" of a payload by its type's description, or NULL */
static void json_args(sqlite3_context *ctx, const struct tlog *l, int32_t pid, unsigned type,
                      const unsigned char *d, uint32_t len)
{
	const char *desc = d ? typemap_desc(l->types, pid, type) : NULL;
	char *buf = desc ? malloc(65536) : NULL;
	if (!buf)
		return;
	buf[0] = '{';
	if (typed_json_args(buf + 1, 65536 - 2, desc, d, len) == 0) {
		size_t n = strlen(buf);
		buf[n] = '}';
		sqlite3_result_text(ctx, buf, (int)n + 1, SQLITE_TRANSIENT);
	}
	free(buf);
}

static int sl_column(struct pq_cursor *c, sqlite3_context *ctx, int col)
{
	struct slices *s = c->st;
	const struct pq_log *lg = &c->vt->logs.v[c->k];
	const struct span_stat *d = spans_stat(s->sp, s->b.def);

	if (s->flow) {
		switch (col) {
		case FL_ID: case FL_SLICE_OUT: sqlite3_result_int64(ctx, (sqlite3_int64)s->b.id); break;
		case FL_SLICE_IN: sqlite3_result_int64(ctx, (sqlite3_int64)s->end_id); break;
		case FL_NAME: pq_text(ctx, d->name); break;
		case FL_KEY: sqlite3_result_int64(ctx, s->b.key); break;
		case FL_TS_OUT: sqlite3_result_int64(ctx, (sqlite3_int64)s->ts); break;
		case FL_UTID_OUT: pq_id_result(ctx, pq_utid(lg, s->th)); break;
		case FL_TS_IN: sqlite3_result_int64(ctx, (sqlite3_int64)(s->ts + s->dur)); break;
		case FL_UTID_IN:
			pq_id_result(ctx, pq_utid(lg, s->end_th));
			break;
		}
		return 0;
	}
	switch (col) {
	case SL_ID: case SL_ARG_SET: sqlite3_result_int64(ctx, (sqlite3_int64)s->b.id); break;
	case SL_TS: sqlite3_result_int64(ctx, (sqlite3_int64)s->ts); break;
	case SL_DUR: sqlite3_result_int64(ctx, (sqlite3_int64)s->dur); break;
	case SL_NAME: pq_text(ctx, d->name); break;
	case SL_UTID: pq_id_result(ctx, pq_utid(lg, s->th)); break;
	case SL_DEPTH: sqlite3_result_int(ctx, (int)s->depth); break;
	case SL_PARENT:
		if (s->has_parent)
			sqlite3_result_int64(ctx, (sqlite3_int64)s->parent);
		break;
	case SL_KEY:
		if (s->keyed)
			sqlite3_result_int64(ctx, s->b.key);
		break;
	case SL_END_ID: sqlite3_result_int64(ctx, (sqlite3_int64)s->end_id); break;
	case SL_END_UTID: pq_id_result(ctx, pq_utid(lg, s->end_th)); break;
	case SL_ARGS: json_args(ctx, &s->l, s->b.pid, s->b.type, s->b.pl, s->b.plen); break;
	case SL_END_ARGS: json_args(ctx, &s->l, s->epid, s->etype, s->epl, s->eplen); break;
	}
	return 0;
}

static void sl_close(struct pq_cursor *c)
{
	struct slices *s = c->st;
	if (!s)
		return;
	drop_log(s);
	free(s->bt);
	free(s);
	c->st = NULL;
}

const struct pq_ops pq_slice_ops = { sl_start, sl_next, sl_column, sl_close };
