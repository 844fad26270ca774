/*
 * args.c -- the table args: the fields of each event whose payload has a
 * description (posixtrace_eventid_describe(3), typed.c's layout), one row
 * per field, arg_set_id the event's id (a slice's arg_set_id is its begin
 * event's).  A payload that does not fit its description has no rows
 * (show prints it raw).  Values as typed: integers in int_value (a u64
 * above 2^63 wraps there; display_value has it exact), floats in
 * real_value, strings in string_value, bytes as a blob in string_value
 * (and as hex in display_value).
 *
 * The log is read event by event (payloads are needed); events of types
 * that no process described are passed over at once.  An arg_set_id
 * range stops once past its end.
 */
#include <inttypes.h>
#include <string.h>
#include "query.h"

struct argrows {
	struct tlog l;
	long open;
	struct tev e;
	uint64_t place, id;
	unsigned char described[PT_NIDS];
	struct typed_at at[PT_EXT_FIELDS_MAX];
	size_t nat, i;
};

static int begin_log(struct pq_cursor *c, void *st, size_t k)
{
	struct argrows *s = st;
	char err[600];

	if (s->open != (long)k) {
		if (s->open >= 0)
			tlog_free(&s->l);
		s->open = -1;
		if (pq_reading_open(&c->vt->logs.v[k], &s->l, err, sizeof err))
			return pq_fail(c, "%s", err);
		s->open = (long)k;
	}
	int any = 0;
	for (unsigned id = 0; id < PT_NIDS; id++)
		any |= s->described[id] = typemap_desc(s->l.types, -1, id) != NULL && s->l.count[id];
	if (!any)
		return 0;
	const struct pq_bounds *b = &c->b;
	int rc = b->seek && b->ts_lo > 0 ? tlog_seek(&s->l, b->ts_lo) : tlog_rewind(&s->l);
	if (!rc)
		rc = tlog_until(&s->l, b->ts_hi);
	if (rc)
		return pq_fail(c, "%s: seeking in the log failed", s->l.path);
	s->place = 0;
	s->nat = s->i = 0;
	return 1;
}

static int advance(struct pq_cursor *c, struct argrows *s, int fresh)
{
	const struct pq_bounds *b = &c->b;

	for (;;) {
		if (!fresh && ++s->i < s->nat)
			return 0;
		s->nat = s->i = 0;
		if (fresh) {
			int r = pq_next_log(c, begin_log, s);
			if (r <= 0)
				return r;
			fresh = 0;
		}
		int r = tlog_next(&s->l, &s->e);
		if (r < 0)
			return pq_fail(c, "%s: reading events failed", s->l.path);
		if (r == 0) {
			c->k++;
			fresh = 1;
			continue;
		}
		s->id = c->vt->logs.v[c->k].id0 + s->place++;
		pq_visited++;
		if (b->id_hi != INT64_MAX && (int64_t)s->id > b->id_hi) {
			c->k++;
			fresh = 1;
			continue;
		}
		if (!s->described[s->e.id] || (b->id_lo != INT64_MIN && (int64_t)s->id < b->id_lo) ||
		    s->e.ts < b->ts_lo || s->e.ts > b->ts_hi)
			continue;
		int32_t pid = s->e.thread < s->l.nth ? s->l.th[s->e.thread].pid : 0;
		const char *desc = typemap_desc(s->l.types, pid, s->e.id);
		size_t n = 0;
		if (!desc || typed_layout(desc, s->e.data, s->e.len, s->at, &n, NULL, 0) || !n)
			continue;
		s->nat = n;
		s->i = 0;
		return 0;
	}
}

static int a_start(struct pq_cursor *c)
{
	struct argrows *s = c->st;
	if (!s) {
		if (!(s = c->st = calloc(1, sizeof *s)))
			return pq_fail(c, "out of memory");
		s->open = -1;
	}
	if (c->b.empty) {
		c->eof = 1;
		return 0;
	}
	c->k = c->b.log >= 0 ? (size_t)c->b.log : 0;
	return advance(c, s, 1);
}

static int a_next(struct pq_cursor *c)
{
	return advance(c, c->st, 0);
}

static uint64_t get_u(const unsigned char *p, unsigned size)
{
	uint8_t a;
	uint16_t b;
	uint32_t c;
	uint64_t d;

	switch (size) {
	case 1: memcpy(&a, p, 1); return a;
	case 2: memcpy(&b, p, 2); return b;
	case 4: memcpy(&c, p, 4); return c;
	default: memcpy(&d, p, 8); return d;
	}
}

static int a_column(struct pq_cursor *c, sqlite3_context *ctx, int col)
{
	struct argrows *s = c->st;
	const struct typed_at *a = &s->at[s->i];
	const unsigned char *p = s->e.data + a->off;
	enum pt_ext_ftype t = a->f.type;
	int is_int = t >= PT_EXT_F_U8 && t <= PT_EXT_F_X64;
	int is_signed = t >= PT_EXT_F_I8 && t <= PT_EXT_F_I64;
	int is_real = t == PT_EXT_F_F32 || t == PT_EXT_F_F64;
	uint64_t u = is_int ? get_u(p, a->f.size) : 0;
	int64_t i = (int64_t)u;
	unsigned sh = is_int ? 64 - 8 * a->f.size : 0;
	char buf[80];

	if (is_signed && sh)
		i = (int64_t)(u << sh) >> sh;
	switch (col) {
	case AR_ARG_SET: sqlite3_result_int64(ctx, (sqlite3_int64)s->id); break;
	case AR_TS: sqlite3_result_int64(ctx, (sqlite3_int64)s->e.ts); break;
	case AR_FLAT_KEY: case AR_KEY: pq_text(ctx, a->f.name); break;
	case AR_TYPE:
		pq_text(ctx, is_real ? "real" : t == PT_EXT_F_STRING ? "string" :
		             t == PT_EXT_F_BYTES ? "bytes" : is_signed ? "int" : "uint");
		break;
	case AR_INT:
		if (is_int)
			sqlite3_result_int64(ctx, i);
		break;
	case AR_REAL:
		if (is_real) {
			float f;
			double d;
			if (a->f.size == 4)
				memcpy(&f, p, 4), d = f;
			else
				memcpy(&d, p, 8);
			sqlite3_result_double(ctx, d);
		}
		break;
	case AR_STRING:
		if (t == PT_EXT_F_STRING)
			sqlite3_result_text(ctx, (const char *)p, (int)a->len, SQLITE_TRANSIENT);
		else if (t == PT_EXT_F_BYTES)
			sqlite3_result_blob(ctx, p, (int)a->len, SQLITE_TRANSIENT);
		break;
	case AR_DISPLAY:
		if (t == PT_EXT_F_STRING) {
			sqlite3_result_text(ctx, (const char *)p, (int)a->len, SQLITE_TRANSIENT);
		} else if (t == PT_EXT_F_BYTES) {
			char *h = malloc(2 * a->len + 1);
			if (!h)
				return pq_fail(c, "out of memory");
			for (size_t k = 0; k < a->len; k++)
				snprintf(h + 2 * k, 3, "%02x", p[k]);
			h[2 * a->len] = 0;
			sqlite3_result_text(ctx, h, (int)(2 * a->len), SQLITE_TRANSIENT);
			free(h);
		} else {
			if (is_real) {
				double d;
				float f;
				if (a->f.size == 4)
					memcpy(&f, p, 4), d = f;
				else
					memcpy(&d, p, 8);
				snprintf(buf, sizeof buf, "%.17g", d);
			} else if (t >= PT_EXT_F_X8 && t <= PT_EXT_F_X64) {
				snprintf(buf, sizeof buf, "0x%" PRIx64, u);
			} else if (is_signed) {
				snprintf(buf, sizeof buf, "%" PRId64, i);
			} else {
				snprintf(buf, sizeof buf, "%" PRIu64, u);
			}
			pq_text(ctx, buf);
		}
		break;
	}
	return 0;
}

static void a_close(struct pq_cursor *c)
{
	struct argrows *s = c->st;
	if (!s)
		return;
	if (s->open >= 0)
		tlog_free(&s->l);
	free(s);
	c->st = NULL;
}

const struct pq_ops pq_args_ops = { a_start, a_next, a_column, a_close };
