/*
 * vtab.c -- the SQLite module "posixtrace": CREATE VIRTUAL TABLE t USING
 * posixtrace(LOG [, LOG...], TABLE [, 'span=DEF'...]) makes t one of the
 * tables of posixtrace-query(1) over those logs (DEF: a --span of stats).  Read-only (no xUpdate: nothing
 * a statement does through it writes anywhere), and direct-only: a
 * schema's triggers and views cannot reach it (a database file from
 * someone else cannot read logs behind its user's back).
 *
 * The plan: xBestIndex takes the constraints the reader can use (a ts
 * range, an id range, type, name, pid, tid, utid, upid, log: see
 * pushable[]) and names them in idxStr ("ts>= ts<= type="), which EXPLAIN
 * QUERY PLAN shows and xFilter reads back; each narrows what the table
 * reads (struct pq_bounds), and SQLite checks every row again.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "query.h"

const char *const pq_table_names[PQ_NKINDS] = {
	"event", "thread", "process", "type", "loss", "object", "slice", "args", "flow",
};

/* an error of the extension names where it comes from; the command's
 * messages already do */
#ifdef PT_SQLITE_EXT
#define ERR_PREFIX "posixtrace: "
#else
#define ERR_PREFIX ""
#endif

static const char *const schemas[PQ_NKINDS] = {
	[PQ_EVENT] = "CREATE TABLE x(log TEXT, id INTEGER, ts INTEGER, type INTEGER, name TEXT, "
	             "utid INTEGER, upid INTEGER, pid INTEGER, tid INTEGER, thread TEXT, "
	             "payload BLOB, args TEXT, address INTEGER, function TEXT, file TEXT, "
	             "line INTEGER, object TEXT)",
	[PQ_THREAD] = "CREATE TABLE x(log TEXT, utid INTEGER, tid INTEGER, pthread INTEGER, "
	              "name TEXT, upid INTEGER, pid INTEGER, start_ts INTEGER, end_ts INTEGER, "
	              "count INTEGER)",
	[PQ_PROCESS] = "CREATE TABLE x(log TEXT, upid INTEGER, pid INTEGER, ppid INTEGER, "
	               "parent_upid INTEGER, name TEXT, cmdline TEXT, executable TEXT, "
	               "start_ts INTEGER, end_ts INTEGER, threads INTEGER, count INTEGER)",
	[PQ_TYPE] = "CREATE TABLE x(log TEXT, id INTEGER, name TEXT, description TEXT, "
	            "count INTEGER, start_ts INTEGER, end_ts INTEGER)",
	[PQ_LOSS] = "CREATE TABLE x(log TEXT, ts INTEGER, utid INTEGER, count INTEGER)",
	[PQ_OBJECT] = "CREATE TABLE x(log TEXT, ts INTEGER, upid INTEGER, pid INTEGER, kind TEXT, "
	              "start INTEGER, end INTEGER, load_bias INTEGER, build_id TEXT, name TEXT)",
	[PQ_SLICE] = "CREATE TABLE x(log TEXT, id INTEGER, ts INTEGER, dur INTEGER, name TEXT, "
	             "utid INTEGER, depth INTEGER, parent_id INTEGER, key INTEGER, "
	             "arg_set_id INTEGER, end_id INTEGER, end_utid INTEGER, args TEXT, "
	             "end_args TEXT)",
	[PQ_ARGS] = "CREATE TABLE x(log TEXT, arg_set_id INTEGER, ts INTEGER, flat_key TEXT, "
	            "key TEXT, value_type TEXT, int_value INTEGER, real_value REAL, "
	            "string_value TEXT, display_value TEXT)",
	[PQ_FLOW] = "CREATE TABLE x(log TEXT, id INTEGER, slice_out INTEGER, slice_in INTEGER, "
	            "name TEXT, key INTEGER, ts_out INTEGER, utid_out INTEGER, ts_in INTEGER, "
	            "utid_in INTEGER)",
};

/* What a column's constraint bounds (per table) */
enum { B_NONE, B_TS, B_ID, B_TYPE, B_NAME, B_UTID, B_UPID, B_PID, B_TID, B_LOG };
static const char *const bname[] = { "", "ts", "id", "type", "name", "utid", "upid", "pid", "tid",
                                     "log" };

static int pushable(enum pq_kind k, int col)
{
	if (col == 0)
		return B_LOG;
	switch (k) {
	case PQ_EVENT:
		return col == EV_TS ? B_TS : col == EV_ID ? B_ID : col == EV_TYPE ? B_TYPE :
		       col == EV_NAME ? B_NAME : col == EV_UTID ? B_UTID : col == EV_UPID ? B_UPID :
		       col == EV_PID ? B_PID : col == EV_TID ? B_TID : B_NONE;
	case PQ_LOSS:
		return col == LO_TS ? B_TS : col == LO_UTID ? B_UTID : B_NONE;
	case PQ_THREAD:
		return col == TH_UTID ? B_UTID : col == TH_UPID ? B_UPID : col == TH_PID ? B_PID :
		       col == TH_TID ? B_TID : B_NONE;
	case PQ_PROCESS:
		return col == PR_UPID ? B_UPID : col == PR_PID ? B_PID : B_NONE;
	case PQ_TYPE:
		return col == TY_ID ? B_TYPE : col == TY_NAME ? B_NAME : B_NONE;
	case PQ_SLICE:
		return col == SL_NAME ? B_NAME : col == SL_UTID ? B_UTID : col == SL_ID ? B_ID :
		       col == SL_TS ? B_TS : B_NONE;
	case PQ_FLOW:
		return col == FL_NAME ? B_NAME : B_NONE;
	case PQ_ARGS:
		return col == AR_ARG_SET ? B_ID : col == AR_TS ? B_TS : B_NONE;
	default:
		return B_NONE;
	}
}

static const struct pq_ops *ops_of(enum pq_kind k)
{
	switch (k) {
	case PQ_EVENT: return &pq_event_ops;
	case PQ_LOSS: return &pq_loss_ops;
	case PQ_SLICE: case PQ_FLOW: return &pq_slice_ops;
	case PQ_ARGS: return &pq_args_ops;
	default: return &pq_meta_ops;
	}
}

/* A module argument as given, unquoted ('a''b' -> a'b). */
static char *unquote(const char *s)
{
	size_t n = strlen(s);
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	char *o = sqlite3_malloc64(n + 1), *p = o;
	if (!o)
		return NULL;
	if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0]) {
		char q = s[0];
		for (size_t i = 1; i + 1 < n; i++) {
			*p++ = s[i];
			if (s[i] == q && s[i + 1] == q)
				i++;
		}
	} else {
		memcpy(o, s, n);
		p += n;
	}
	*p = 0;
	return o;
}

static void free_spans(struct span_args *a)
{
	for (int i = 0; i < a->n; i++)
		sqlite3_free((char *)a->v[i]);
	a->n = 0;
}

/* The span definitions work on every log of the table: 0, or -1 with
 * the reason in msg. */
static int check_spans(struct pq_vtab *vt, char *msg, size_t cap)
{
	struct spans *sp = NULL;
	int rc = 0;

	err_capture(msg, cap);
	if (spans_make(&vt->spans, &sp))
		rc = -1;
	for (size_t k = 0; !rc && k < vt->logs.n; k++)
		if (spans_check(sp, &vt->logs.v[k].meta))
			rc = -1;
	err_capture(NULL, 0);
	spans_free(sp);
	return rc;
}

/* argv[3...]: LOG..., TABLE, then any 'span=DEF' */
static int connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                   sqlite3_vtab **out, char **err)
{
	(void)aux;
	char msg[600] = "";
	int kind = -1, nlogs = 0, rc = SQLITE_NOMEM;
	char **args = sqlite3_malloc64(sizeof *args * (size_t)(argc > 3 ? argc - 3 : 1));
	struct pq_vtab *vt = sqlite3_malloc64(sizeof *vt);

	if (!args || !vt)
		goto out;
	memset(vt, 0, sizeof *vt);
	for (int i = 3; i < argc; i++) {
		char *a = unquote(argv[i]);
		if (!a)
			goto out;
		if (!strncmp(a, "span=", 5) && vt->spans.n < SPAN_MAX) {
			memmove(a, a + 5, strlen(a + 5) + 1);
			vt->spans.v[vt->spans.n++] = a;
		} else {
			args[nlogs++] = a;
		}
	}
	if (nlogs >= 2)
		for (int k = 0; k < PQ_NKINDS; k++)
			if (!strcmp(args[nlogs - 1], pq_table_names[k]))
				kind = k;
	rc = SQLITE_ERROR;
	if (kind < 0) {
		*err = sqlite3_mprintf("%sgive LOG [, LOG...], TABLE (event, thread, process, type, "
		                       "loss, object, slice, args or flow) [, 'span=BEGIN,END"
		                       "[,NAME][,key]'...]", ERR_PREFIX);
		goto out;
	}
	vt->kind = (enum pq_kind)kind;
	if (pq_logs_open(&vt->logs, args, (size_t)nlogs - 1, msg, sizeof msg) ||
	    check_spans(vt, msg, sizeof msg)) {
		*err = sqlite3_mprintf("%s%s", ERR_PREFIX, msg);
		goto out;
	}
	if ((rc = sqlite3_declare_vtab(db, schemas[kind])) != SQLITE_OK)
		goto out;
	sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
	*out = &vt->base;
	vt = NULL;
	rc = SQLITE_OK;
out:
	for (int i = 0; args && i < nlogs; i++)
		sqlite3_free(args[i]);
	sqlite3_free(args);
	if (vt) {
		pq_logs_free(&vt->logs);
		free_spans(&vt->spans);
		sqlite3_free(vt);
	}
	return rc;
}

static int disconnect(sqlite3_vtab *v)
{
	struct pq_vtab *vt = (struct pq_vtab *)v;
	pq_logs_free(&vt->logs);
	free_spans(&vt->spans);
	sqlite3_free(vt);
	return SQLITE_OK;
}

static const char *opname(int op)
{
	switch (op) {
	case SQLITE_INDEX_CONSTRAINT_EQ: return "=";
	case SQLITE_INDEX_CONSTRAINT_GT: return ">";
	case SQLITE_INDEX_CONSTRAINT_GE: return ">=";
	case SQLITE_INDEX_CONSTRAINT_LT: return "<";
	case SQLITE_INDEX_CONSTRAINT_LE: return "<=";
	default: return NULL;
	}
}

/* idxStr: one "COLUMNOP" a constraint passed on, in argv's order (then,
 * for EXPLAIN QUERY PLAN, "[type totals...]" when by_totals());
 * idxNum: the statement's columns (colUsed; PLAN_MORE for any beyond
 * the first 24) and by_totals()'s flags. */
#define PLAN_COLS    0xffffff
#define PLAN_MORE    0x1000000
#define PLAN_TOTALS  0x2000000
#define PLAN_BY_NAME 0x4000000
#define PLAN_DESC    0x8000000
static int by_totals(const struct pq_vtab *vt, const sqlite3_index_info *ix);

static int best_index(sqlite3_vtab *v, sqlite3_index_info *ix)
{
	struct pq_vtab *vt = (struct pq_vtab *)v;
	char plan[400] = "";
	size_t at = 0;
	int n = 0, eq = 0, ranges = 0;

	for (int i = 0; i < ix->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ix->aConstraint[i];
		int b = c->iColumn >= 0 ? pushable(vt->kind, c->iColumn) : B_NONE;
		const char *op = opname(c->op);
		if (!c->usable || b == B_NONE || !op)
			continue;
		if ((b != B_TS && b != B_ID) && c->op != SQLITE_INDEX_CONSTRAINT_EQ)
			continue;
		if (at + 16 >= sizeof plan)
			break;
		at += (size_t)snprintf(plan + at, sizeof plan - at, "%s%s%s", n ? " " : "", bname[b], op);
		ix->aConstraintUsage[i].argvIndex = ++n;
		ix->aConstraintUsage[i].omit = 0; /* (SQLite checks each row again) */
		if (b == B_TS || b == B_ID)
			ranges++;
		else
			eq++;
	}
	/* the cost is the events read: a ts or id range reads less (it seeks
	 * or stops), the others only pass rows over; the small tables are
	 * read from memory, an equality going straight to its row */
	double rows = 0, cost;
	for (size_t k = 0; k < vt->logs.n; k++)
		rows += (double)vt->logs.v[k].meta.nev;
	int small = vt->kind != PQ_EVENT && vt->kind != PQ_SLICE && vt->kind != PQ_ARGS &&
	            vt->kind != PQ_FLOW && vt->kind != PQ_LOSS;
	if (small) {
		rows = eq ? 1 : 50;
		cost = rows;
	} else {
		for (int i = 0; i < ranges; i++)
			rows /= 8;
		cost = rows;
		for (int i = 0; i < eq; i++)
			rows /= 4;
		cost = cost * 0.75 + rows * 0.25;
	}
	ix->estimatedCost = cost + 1;
	ix->estimatedRows = (sqlite3_int64)(rows + 1);
	ix->idxNum = (int)(ix->colUsed & PLAN_COLS);
	if (ix->colUsed & ~(sqlite3_uint64)PLAN_COLS)
		ix->idxNum |= PLAN_MORE;
	int t = by_totals(vt, ix);
	if (t) {
		ix->idxNum |= t;
		ix->orderByConsumed = 1;
		ix->estimatedCost = ix->estimatedCost / 1000 + 1;
		at += (size_t)snprintf(plan + at, sizeof plan - at, "%s[type totals, by %s%s]",
		                       n ? " " : "", t & PLAN_BY_NAME ? "name" : "type",
		                       t & PLAN_DESC ? " desc" : "");
	}
	if (n || t) {
		ix->idxStr = sqlite3_mprintf("%s", plan);
		ix->needToFreeIdxStr = 1;
	}
	return SQLITE_OK;
}

/* A statement that reads only the log, type and name of event, and
 * wants its rows ordered or grouped by name or type: its rows are the
 * log's per-type totals (the counts stats gives), count[id] rows of each
 * type, made in that order without reading an event (SQLite then needs
 * no sort).  The plan's flags, or 0. */
static int by_totals(const struct pq_vtab *vt, const sqlite3_index_info *ix)
{
	const sqlite3_uint64 ok = 1u | 1u << EV_TYPE | 1u << EV_NAME;
	if (vt->kind != PQ_EVENT || (ix->colUsed & ~ok) || ix->nOrderBy < 1 || ix->nOrderBy > 2)
		return 0;
	int first = ix->aOrderBy[0].iColumn, desc = ix->aOrderBy[0].desc;
	if (first != EV_TYPE && first != EV_NAME)
		return 0;
	if (ix->nOrderBy == 2) {
		int second = ix->aOrderBy[1].iColumn;
		if (second == first || (second != EV_TYPE && second != EV_NAME) ||
		    ix->aOrderBy[1].desc != desc)
			return 0;
	}
	return PLAN_TOTALS | (first == EV_NAME ? PLAN_BY_NAME : 0) | (desc ? PLAN_DESC : 0);
}

static int open_cursor(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct pq_cursor *c = sqlite3_malloc64(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	c->vt = (struct pq_vtab *)v;
	c->eof = 1;
	*out = &c->base;
	return SQLITE_OK;
}

static int close_cursor(sqlite3_vtab_cursor *cur)
{
	struct pq_cursor *c = (struct pq_cursor *)cur;
	ops_of(c->vt->kind)->close(c);
	sqlite3_free(c);
	return SQLITE_OK;
}

/* An integer bound from v: 0 and *out, or -1 (v is no number: no bound
 * taken from it).  A real is rounded outwards (down for a lower bound). */
static int int_of(sqlite3_value *v, int lower, int64_t *out)
{
	int t = sqlite3_value_numeric_type(v);
	if (t == SQLITE_INTEGER) {
		*out = sqlite3_value_int64(v);
		return 0;
	}
	if (t != SQLITE_FLOAT)
		return -1;
	double d = sqlite3_value_double(v);
	if (isnan(d))
		return -1;
	d = lower ? floor(d) : ceil(d);
	if (d >= 9.2e18 || d <= -9.2e18)
		return -1;
	*out = (int64_t)d;
	return 0;
}

static void bound_ts(struct pq_bounds *b, const char *op, int64_t v)
{
	/* ts are unsigned: a negative bound is below every one */
	uint64_t u = v < 0 ? 0 : (uint64_t)v;
	if (!strcmp(op, "=")) {
		if (v < 0)
			b->empty = 1;
		b->ts_lo = u > b->ts_lo ? u : b->ts_lo;
		b->ts_hi = u < b->ts_hi ? u : b->ts_hi;
	} else if (op[0] == '>') {
		if (op[1] != '=' && v >= 0)
			u = u == UINT64_MAX ? u : u + 1;
		b->ts_lo = u > b->ts_lo ? u : b->ts_lo;
	} else {
		if (v < 0 || (op[1] != '=' && v == 0))
			b->empty = 1;
		else if (op[1] != '=')
			u--;
		b->ts_hi = u < b->ts_hi ? u : b->ts_hi;
	}
}

static void bound_id(struct pq_bounds *b, const char *op, int64_t v)
{
	int64_t lo = v, hi = v;
	if (op[0] == '>')
		lo = op[1] == '=' ? v : (v == INT64_MAX ? v : v + 1), hi = INT64_MAX;
	else if (op[0] == '<')
		hi = op[1] == '=' ? v : (v == INT64_MIN ? v : v - 1), lo = INT64_MIN;
	if (op[0] == '<' && op[1] != '=' && v == INT64_MIN)
		b->empty = 1;
	b->id_lo = lo > b->id_lo ? lo : b->id_lo;
	b->id_hi = hi < b->id_hi ? hi : b->id_hi;
}

/* The same column bound twice to different values: nothing matches. */
static void bound_eq(struct pq_bounds *b, int64_t *slot, int64_t any, int64_t v)
{
	if (*slot != any && *slot != v)
		b->empty = 1;
	*slot = v;
}

static int filter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr, int argc,
                  sqlite3_value **argv)
{
	struct pq_cursor *c = (struct pq_cursor *)cur;
	struct pq_bounds *b = &c->b;
	const struct pq_ops *ops = ops_of(c->vt->kind);

	*b = (struct pq_bounds){ .ts_lo = 0, .ts_hi = UINT64_MAX, .id_lo = INT64_MIN,
	                         .id_hi = INT64_MAX, .type = -1, .utid = -1, .upid = -1,
	                         .pid = INT64_MIN, .tid = INT64_MIN, .log = -1 };
	b->used = (uint64_t)idxNum & PLAN_COLS;
	if (idxNum & PLAN_MORE)
		b->used |= ~(uint64_t)PLAN_COLS;
	b->totals = !!(idxNum & PLAN_TOTALS);
	b->by_name = !!(idxNum & PLAN_BY_NAME);
	b->desc = !!(idxNum & PLAN_DESC);
	const char *p = idxStr ? idxStr : "";
	for (int i = 0; i < argc && *p; i++) {
		char col[8] = "", op[3] = "";
		size_t n = strcspn(p, "=<>");
		if (n >= sizeof col)
			break;
		memcpy(col, p, n);
		p += n;
		size_t m = strspn(p, "=<>");
		if (m >= sizeof op)
			break;
		memcpy(op, p, m);
		p += m;
		p += *p == ' ';
		sqlite3_value *v = argv[i];
		int64_t x;
		if (sqlite3_value_type(v) == SQLITE_NULL) {
			b->empty = 1; /* a comparison with NULL is never true */
			continue;
		}
		if (!strcmp(col, "name")) {
			const char *t = (const char *)sqlite3_value_text(v);
			if (sqlite3_value_type(v) != SQLITE_TEXT || !t)
				continue;
			if (strlen(t) >= sizeof b->name_buf || (b->name && strcmp(b->name, t)))
				b->empty = 1; /* (no name is that long) */
			else
				b->name = strcpy(b->name_buf, t);
			continue;
		}
		if (!strcmp(col, "log")) {
			long k = -1;
			const char *s = (const char *)sqlite3_value_text(v);
			for (size_t j = 0; s && j < c->vt->logs.n; j++)
				if (!strcmp(c->vt->logs.v[j].path, s))
					k = (long)j;
			if (k < 0 || (b->log >= 0 && b->log != k))
				b->empty = 1;
			b->log = k;
			continue;
		}
		if (int_of(v, op[0] == '>', &x))
			continue;
		if (!strcmp(col, "ts"))
			bound_ts(b, op, x);
		else if (!strcmp(col, "id"))
			bound_id(b, op, x);
		else if (!strcmp(col, "type"))
			bound_eq(b, &b->type, -1, x < 0 ? -2 : x);
		else if (!strcmp(col, "utid"))
			bound_eq(b, &b->utid, -1, x < 0 ? -2 : x);
		else if (!strcmp(col, "upid"))
			bound_eq(b, &b->upid, -1, x < 0 ? -2 : x);
		else if (!strcmp(col, "pid"))
			bound_eq(b, &b->pid, INT64_MIN, x);
		else if (!strcmp(col, "tid"))
			bound_eq(b, &b->tid, INT64_MIN, x);
	}
	if (b->type == -2 || b->utid == -2 || b->upid == -2 || b->ts_lo > b->ts_hi ||
	    b->id_lo > b->id_hi)
		b->empty = 1;
	/* ids count from a log's start: a statement that reads or bounds them
	 * reads from there, else a ts bound may seek (a slice's depth and
	 * parent need the spans open before too: slices.c) */
#define COL(x) ((uint64_t)1 << (x))
	uint64_t idcols = c->vt->kind == PQ_EVENT ? COL(EV_ID) : c->vt->kind == PQ_ARGS ? COL(AR_ARG_SET) :
	                  c->vt->kind == PQ_SLICE ? COL(SL_ID) | COL(SL_DEPTH) | COL(SL_PARENT) |
	                                            COL(SL_ARG_SET) | COL(SL_END_ID) : 0;
#undef COL
	b->seek = !(b->used & idcols) && b->id_lo == INT64_MIN && b->id_hi == INT64_MAX;
	c->rowid = 0;
	c->k = 0;
	c->eof = 0;
	return ops->start(c) ? SQLITE_ERROR : SQLITE_OK;
}

static int next(sqlite3_vtab_cursor *cur)
{
	struct pq_cursor *c = (struct pq_cursor *)cur;
	c->rowid++;
	return ops_of(c->vt->kind)->next(c) ? SQLITE_ERROR : SQLITE_OK;
}

static int eof(sqlite3_vtab_cursor *cur)
{
	return ((struct pq_cursor *)cur)->eof;
}

static int column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct pq_cursor *c = (struct pq_cursor *)cur;
	if (col == 0) {
		pq_text(ctx, c->k < c->vt->logs.n ? c->vt->logs.v[c->k].path : NULL);
		return SQLITE_OK;
	}
	return ops_of(c->vt->kind)->column(c, ctx, col) ? SQLITE_ERROR : SQLITE_OK;
}

static int rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	*out = ((struct pq_cursor *)cur)->rowid;
	return SQLITE_OK;
}

int pq_fail(struct pq_cursor *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sqlite3_free(c->vt->base.zErrMsg);
	c->vt->base.zErrMsg = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	c->eof = 1;
	return -1;
}

void pq_text(sqlite3_context *ctx, const char *s)
{
	if (s)
		sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_result_null(ctx);
}

static const sqlite3_module module = {
	.iVersion = 1,
	.xCreate = connect,
	.xConnect = connect,
	.xBestIndex = best_index,
	.xDisconnect = disconnect,
	.xDestroy = disconnect,
	.xOpen = open_cursor,
	.xClose = close_cursor,
	.xFilter = filter,
	.xNext = next,
	.xEof = eof,
	.xColumn = column,
	.xRowid = rowid,
};

int pq_register(sqlite3 *db)
{
	int rc = sqlite3_create_module(db, "posixtrace", &module, NULL);
	return rc == SQLITE_OK ? pq_funcs_register(db) : rc;
}
