/*
 * query.h -- SQL over trace logs (cli/query/): SQLite virtual tables that
 * read a log as it streams (nothing loaded first), shared by `posixtrace
 * query` (cli/cmd/query_cmd.c) and the loadable extension
 * libposixtrace_sqlite.so (sqlite_ext.c).  On enrich.h: the tables are
 * the events of tlog.c, the spans of spans.c, the fields of typed.c and
 * the call sites of symbolize.c.  posixtrace-query(1) documents every
 * table and column.
 *
 *   vtab.c     the module "posixtrace": arguments, schemas, the plan
 *              (xBestIndex: which constraints reach the reader)
 *   logs.c     the logs a table reads: opened, numbered (ids, utid and
 *              upid unique across them)
 *   meta.c     the small tables: thread, process, type, object
 *   events.c   event and loss: the log read event by event, in batches
 *              when no payload is asked for; ts, type, thread and id
 *              constraints skip, seek and stop
 *   slices.c   slice and flow: spans paired as stats pairs them
 *   args.c     args: each typed payload's fields, one row each
 *   funcs.c    pt_quantile() (stats' histogram) and pt_visited()
 *   print.c    results as an aligned table, CSV or JSON (the command)
 */
#ifndef POSIXTRACE_CLI_QUERY_H
#define POSIXTRACE_CLI_QUERY_H

#include "../enrich/enrich.h"
#include "sql.h"

/* The tables, by the name given as the module's last argument. */
enum pq_kind { PQ_EVENT, PQ_THREAD, PQ_PROCESS, PQ_TYPE, PQ_LOSS, PQ_OBJECT, PQ_SLICE, PQ_ARGS,
               PQ_FLOW, PQ_NKINDS };
extern const char *const pq_table_names[PQ_NKINDS];

/* ------------------------------------------------------------ logs.c */
/* One log of a table: read once for its tables (meta) when the table is
 * made; each cursor opens its own reading (struct tlog) of it. */
struct pq_log {
	char *path;            /* as given */
	struct tlog meta;      /* totals, threads, processes, types, objects */
	uint64_t id0, utid0, upid0; /* its first event id, utid and upid */
	uint32_t *upid_of;     /* per thread (meta.th): its process's index in meta.pr */
};
struct pq_logs { struct pq_log *v; size_t n; };
/* Opens paths[0..n) (tlog_load): 0, or -1 with the reason in err. */
int pq_logs_open(struct pq_logs *ls, char *const *paths, size_t n, char *err, size_t cap);
void pq_logs_free(struct pq_logs *ls);
/* The log and local index of a global utid / upid: the log's index, or -1. */
long pq_log_of_utid(const struct pq_logs *ls, int64_t utid, uint32_t *local);
long pq_log_of_upid(const struct pq_logs *ls, int64_t upid, uint32_t *local);
/* The utid and upid of thread th of a cursor's reading of lg (its tlog
 * numbers threads as the table's did), or -1: a thread the log's totals
 * did not have (a damaged log, read past what its census counted). */
int64_t pq_utid(const struct pq_log *lg, uint32_t th);
int64_t pq_upid(const struct pq_log *lg, uint32_t th);
void pq_id_result(sqlite3_context *ctx, int64_t v);  /* NULL when v < 0 */
/* A reading of log k for a cursor (tlog_load): 0, or -1 with err. */
int pq_reading_open(const struct pq_log *lg, struct tlog *l, char *err, size_t cap);
/* The kernel TID of thread th of l at ts, or of its first identity (ts 0); 0: not known. */
int64_t pq_tid(const struct tlog *l, uint32_t th, uint64_t ts);
const char *pq_thread_name(const struct tlog *l, uint32_t th, uint64_t ts);

/* ------------------------------------------------------------ funcs.c */
/* Events the tables of this connection read from logs (pt_visited()). */
extern uint64_t pq_visited;
int pq_funcs_register(sqlite3 *db);

/* ------------------------------------------------------------ vtab.c */
/* The module "posixtrace" on db: CREATE VIRTUAL TABLE t USING
 * posixtrace(LOG..., TABLE).  SQLITE_OK or an error code. */
int pq_register(sqlite3 *db);

/* The columns of each table (the schemas are in vtab.c; col 0 is always
 * "log", the path of the row's log). */
enum { EV_LOG, EV_ID, EV_TS, EV_TYPE, EV_NAME, EV_UTID, EV_UPID, EV_PID, EV_TID, EV_THREAD,
       EV_PAYLOAD, EV_ARGS, EV_ADDRESS, EV_FUNCTION, EV_FILE, EV_LINE, EV_OBJECT, EV_NCOLS };
enum { TH_LOG, TH_UTID, TH_TID, TH_PTHREAD, TH_NAME, TH_UPID, TH_PID, TH_START, TH_END, TH_COUNT };
enum { PR_LOG, PR_UPID, PR_PID, PR_PPID, PR_PARENT, PR_NAME, PR_CMDLINE, PR_EXE, PR_START, PR_END,
       PR_THREADS, PR_COUNT };
enum { TY_LOG, TY_ID, TY_NAME, TY_DESC, TY_COUNT, TY_START, TY_END };
enum { LO_LOG, LO_TS, LO_UTID, LO_COUNT };
enum { OB_LOG, OB_TS, OB_UPID, OB_PID, OB_KIND, OB_START, OB_END, OB_BIAS, OB_BUILD_ID, OB_NAME };
enum { SL_LOG, SL_ID, SL_TS, SL_DUR, SL_NAME, SL_UTID, SL_DEPTH, SL_PARENT, SL_KEY, SL_ARG_SET,
       SL_END_ID, SL_END_UTID, SL_ARGS, SL_END_ARGS };
enum { FL_LOG, FL_ID, FL_SLICE_OUT, FL_SLICE_IN, FL_NAME, FL_KEY, FL_TS_OUT, FL_UTID_OUT, FL_TS_IN,
       FL_UTID_IN };
enum { AR_LOG, AR_ARG_SET, AR_TS, AR_FLAT_KEY, AR_KEY, AR_TYPE, AR_INT, AR_REAL, AR_STRING,
       AR_DISPLAY };

/* A table: its kind, its logs, and (slice, flow) the span definitions
 * given as module arguments 'span=BEGIN,END[,NAME][,key]' (--span). */
struct pq_vtab { sqlite3_vtab base; enum pq_kind kind; struct pq_logs logs;
                 struct span_args spans; };

/* What a statement asks of a table, from the constraints xBestIndex
 * passed on (each one narrows; SQLite checks every row again, so a bound
 * is only ever wider than the constraint, never narrower). */
struct pq_bounds {
	uint64_t ts_lo, ts_hi;     /* inclusive */
	int64_t id_lo, id_hi;      /* global event ids (slice, args: their ids) */
	int64_t type;              /* -1: any */
	int64_t utid, upid;        /* -1: any */
	int64_t pid, tid;          /* INT64_MIN: any */
	const char *name;          /* NULL: any; else name_buf */
	char name_buf[2 * TRACE_EVENT_NAME_MAX + 4];
	long log;                  /* -1: any */
	int empty;                 /* no row can match */
	int seek;                  /* ts may seek: ids not asked for */
	uint64_t used;             /* columns the statement reads (colUsed) */
	int totals, by_name, desc; /* event: rows from the per-type totals, in this order */
};

struct pq_cursor {
	sqlite3_vtab_cursor base;
	struct pq_vtab *vt;
	struct pq_bounds b;
	int eof;
	sqlite3_int64 rowid;
	size_t k;                  /* the log being read */
	void *st;                  /* the table kind's state */
};

/* One table kind's reading: start (after the bounds are set: the first
 * row, or eof), next, a column, close.  0, or -1 with vt->base.zErrMsg. */
struct pq_ops {
	int (*start)(struct pq_cursor *c);
	int (*next)(struct pq_cursor *c);
	int (*column)(struct pq_cursor *c, sqlite3_context *ctx, int col);
	void (*close)(struct pq_cursor *c);
};
extern const struct pq_ops pq_event_ops, pq_loss_ops, pq_meta_ops, pq_slice_ops, pq_args_ops;
/* an error of cursor c's table (printf-style) */
int pq_fail(struct pq_cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A column's value: a text that SQLite copies */
void pq_text(sqlite3_context *ctx, const char *s);
/* Cursor c on to the next log its bounds allow that begin(c, st, k)
 * opens: 1 (opened), 0 at the end (c->eof set) or -1 (failed).  begin
 * gives 1 (opened), 0 (nothing there can match: the next log is tried) or
 * -1.  (logs.c) */
int pq_next_log(struct pq_cursor *c, int (*begin)(struct pq_cursor *, void *, size_t), void *st);

/* ------------------------------------------------------------ print.c */
enum { PQ_OUT_TABLE, PQ_OUT_CSV, PQ_OUT_JSON };
struct pq_out;
struct pq_out *pq_out_new(FILE *f, int mode, int width);
/* One statement's rows: 0, or -1 (the statement's error, in *errmsg). */
int pq_out_run(struct pq_out *o, sqlite3_stmt *st);
void pq_out_free(struct pq_out *o);

#endif
