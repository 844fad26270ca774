/*
 * query_cmd.c -- `posixtrace query LOG... [SQL]`: SQL over logs, as they
 * stream (the tables of cli/query/, posixtrace-query(1)).  One statement
 * from the command line, or statements from -f FILE or stdin; with no
 * SQL and a terminal, a prompt (edited, with a history: lineedit.c).
 * Results as an aligned table, --csv or --json.
 *
 * The database is SQLite's in memory; the tables are made in its temp
 * schema.  A statement may read any log as its user, never write a file:
 * ATTACH (and so VACUUM INTO) and loading extensions are refused, the
 * database is defensive, and the tables have no write method.
 *
 * (Named query_cmd.c, not query.c: ../query/query.h is the header of the
 * query layer below, not of this file.)
 */
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd.h"
#ifdef PT_HAVE_SQLITE
#include "../query/query.h"
#endif

static const char help[] =
"usage: posixtrace query LOG... [SQL] [--csv | --json] [-f FILE] [-w N] [--span ...]\n"
"\n"
"Runs SQL over the logs, read as they stream (nothing loaded first):\n"
"tables event, slice, args, flow, thread, process, type, loss and object\n"
"(posixtrace-query(1) describes each column).  Several logs make one set:\n"
"the column log names each row's.  A directory is one log: its *.ptlog\n"
"files (the parts of one recording, record --rotate) read as one trace.\n"
"SQL is the last argument when it is\n"
"not a file; else statements come from -f FILE, or stdin (a prompt at a\n"
"terminal: Up and Down for the statements before).\n"
"\n"
"      --csv        comma-separated values, a header line first\n"
"      --json       a JSON array of objects per statement\n"
"  -f, --file FILE  run the statements in FILE ('-': stdin)\n"
"  -w, --width N    the table's width (default: the terminal's, or 80)\n"
"  -h, --help       this help\n"
"Also: pt_quantile(X, Q) (stats' quantiles), pt_visited() (events read).\n";

#ifndef PT_HAVE_SQLITE
int cmd_query(int argc, char **argv)
{
	if (want_help(argc, argv)) {
		fputs(help, stdout);
		return 0;
	}
	err_msg("this posixtrace was built without SQLite (Debian: libsqlite3-dev; then make)");
	return 1;
}
#else

static int table_mode;

/* No statement writes a file or reaches another database. */
static int authorize(void *arg, int what, const char *a, const char *b, const char *c,
                     const char *d)
{
	(void)arg, (void)a, (void)b, (void)c, (void)d;
	return what == SQLITE_ATTACH || what == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

/* 'text' as an SQL string literal */
static char *literal(const char *s)
{
	return sqlite3_mprintf("%Q", s);
}

static int make_tables(sqlite3 *db, char **logs, int n, const struct span_args *sa)
{
	char *list = sqlite3_mprintf("%s", "");
	for (int i = 0; list && i < n; i++) {
		char *q = literal(logs[i]), *nl = q ? sqlite3_mprintf("%s%s, ", list, q) : NULL;
		sqlite3_free(q);
		sqlite3_free(list);
		list = nl;
	}
	if (!list) {
		err_msg("out of memory");
		return 1;
	}
	for (int k = 0; k < PQ_NKINDS; k++) {
		char *err = NULL;
		char *spans = sqlite3_mprintf("%s", "");
		for (int i = 0; spans && i < sa->n && (k == PQ_SLICE || k == PQ_FLOW); i++) {
			char *ns = sqlite3_mprintf("%s, 'span=%q'", spans, sa->v[i]);
			sqlite3_free(spans);
			spans = ns;
		}
		char *sql = spans ? sqlite3_mprintf("CREATE VIRTUAL TABLE temp.\"%w\" USING "
		                                    "posixtrace(%s'%q'%s)", pq_table_names[k], list,
		                                    pq_table_names[k], spans) : NULL;
		sqlite3_free(spans);
		int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, &err) : SQLITE_NOMEM;
		sqlite3_free(sql);
		if (rc != SQLITE_OK) {
			err_msg("%s", err ? err : sqlite3_errstr(rc));
			sqlite3_free(err);
			sqlite3_free(list);
			return 1;
		}
	}
	sqlite3_free(list);
	return 0;
}

/* Every statement of sql, each one's rows printed: 0, or 1 after a message. */
static int run(sqlite3 *db, struct pq_out *o, const char *sql, int *printed)
{
	const char *tail = sql;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
			err_msg("%s", sqlite3_errmsg(db));
			return 1;
		}
		if (!st) /* (a comment, or blank) */
			continue;
		if (sqlite3_column_count(st) && (*printed)++ && table_mode)
			putchar('\n'); /* (between tables) */
		int rc = pq_out_run(o, st);
		if (rc) {
			err_msg("%s", sqlite3_errmsg(db));
			sqlite3_finalize(st);
			return 1;
		}
		sqlite3_finalize(st);
		fflush(stdout);
	}
	return 0;
}

static char *slurp(FILE *f)
{
	struct vbuf b = { 0 };
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		vb_put(&b, chunk, n);
	vb_put(&b, "", 1);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* a statement as one line of the history: its lines joined by spaces */
static void remember(struct ledit *le, const char *stmt)
{
	char *h = strdup(stmt);
	if (!h)
		return;
	size_t n = strlen(h);
	while (n && (h[n - 1] == '\n' || h[n - 1] == ' '))
		h[--n] = 0;
	for (char *p = h; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	ledit_add(le, h);
	free(h);
}

/* the prompt: lines gathered into complete statements; at a terminal
 * (stderr too) each line edited and the statements kept as a history
 * (lineedit.c) */
static int prompt(sqlite3 *db, struct pq_out *o)
{
	struct vbuf b = { 0 };
	struct ledit le = { 0 };
	char line[8192];
	int printed = 0, bad = 0, edit = ledit_usable();

	fprintf(stderr, "SQL over %s; end a statement with ';', quit with Ctrl-D%s.\n",
	        "the logs (tables: event, slice, args, flow, thread, process, type, loss, object)",
	        edit ? " (Up and Down: the statements before)" : "");
	for (;;) {
		const char *p = b.n ? "   ...> " : "posixtrace> ";
		if (edit) {
			char *typed = NULL;
			int r = ledit_read(&le, p, &typed);
			if (r == 2) { /* Ctrl-C: the statement dropped */
				b.n = 0;
				continue;
			}
			if (r != 1)
				break;
			vb_put(&b, typed, strlen(typed));
			vb_put(&b, "\n", 1);
			free(typed);
		} else {
			fputs(p, stderr);
			if (!fgets(line, sizeof line, stdin))
				break;
			vb_put(&b, line, strlen(line));
		}
		vb_put(&b, "", 1);
		b.n--;
		if (b.oom)
			break;
		if (sqlite3_complete(b.p)) {
			if (edit)
				remember(&le, b.p);
			bad |= run(db, o, b.p, &printed);
			printed = 0;
			b.n = 0;
		}
	}
	fputc('\n', stderr);
	free(b.p);
	ledit_free(&le);
	return bad;
}

/* What the command line asks: the logs, the statements (sql, or from
 * file, or the prompt when neither), the output's mode and width. */
struct query_opts {
	char **logs;
	int n, mode, width;
	const char *sql, *file;
	struct span_args sa;
};

/* The options into o; -1 to go on, else the exit status. */
static int query_options(int argc, char **argv, struct query_opts *o)
{
	static const struct option opts[] = {
		{ "csv", no_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' },
		{ "file", required_argument, NULL, 'f' }, { "width", required_argument, NULL, 'w' },
		{ "span", required_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "f:w:h", opts, NULL)) != -1)
		switch (c) {
		case 'c': o->mode = PQ_OUT_CSV; break;
		case 'j': o->mode = PQ_OUT_JSON; break;
		case 'f': o->file = optarg; break;
		case 'w': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < TERM_WIDTH_MIN || v > TERM_WIDTH_MAX)
				return usage_error("--width: '%s' is not a width (%d to %d)", optarg,
				                   TERM_WIDTH_MIN, TERM_WIDTH_MAX);
			o->width = (int)v;
			break;
		}
		case 's':
			if (span_arg(&o->sa, optarg))
				return EXIT_USAGE;
			break;
		case 'h': fputs(help, stdout); fputs(spans_help, stdout); return 0;
		default: return EXIT_USAGE;
		}
	o->logs = argv + optind;
	o->n = argc - optind;
	struct stat sb;
	if (o->n >= 2 && stat(o->logs[o->n - 1], &sb) != 0)
		o->sql = o->logs[--o->n];
	if (o->n < 1)
		return usage_error("give a log (posixtrace query LOG... [SQL])");
	if (o->sql && o->file)
		return usage_error("give SQL or -f FILE, not both");
	return -1;
}

/* SQLite's database in memory, defensive, with the tables over the logs
 * and the authorizer set: the database (*db, to close whatever the
 * answer), 0, or 1 after a message. */
static int query_open(const struct query_opts *o, sqlite3 **db)
{
	*db = NULL;
	if (sqlite3_open_v2(":memory:", db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
	    SQLITE_OK) {
		err_msg("cannot open SQLite: %s", *db ? sqlite3_errmsg(*db) : "out of memory");
		return 1;
	}
	sqlite3_db_config(*db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
	sqlite3_limit(*db, SQLITE_LIMIT_ATTACHED, 0);
	if (pq_register(*db) != SQLITE_OK) {
		err_msg("cannot set SQLite up: %s", sqlite3_errmsg(*db));
		return 1;
	}
	if (make_tables(*db, o->logs, o->n, &o->sa))
		return 1;
	sqlite3_set_authorizer(*db, authorize, NULL);
	return 0;
}

/* The statements the options name (the SQL given, the prompt, or a
 * file's or stdin's), each one's rows printed through out: 0, or 1. */
static int query_run(const struct query_opts *o, sqlite3 *db, struct pq_out *out)
{
	int printed = 0, rc;

	if (o->sql)
		return run(db, out, o->sql, &printed);
	if (!o->file && isatty(0))
		return prompt(db, out);
	FILE *f = !o->file || !strcmp(o->file, "-") ? stdin : fopen(o->file, "re");
	if (!f) {
		err_msg("cannot open %s: %m", o->file);
		return 1;
	}
	char *text = slurp(f);
	if (f != stdin)
		fclose(f);
	if (!text) {
		err_msg("%s: out of memory", o->file ? o->file : "stdin");
		return 1;
	}
	rc = run(db, out, text, &printed);
	free(text);
	return rc;
}

int cmd_query(int argc, char **argv)
{
	struct query_opts o = { .mode = PQ_OUT_TABLE };
	sqlite3 *db = NULL;
	struct pq_out *out = NULL;
	int rc;

	if ((rc = query_options(argc, argv, &o)) >= 0)
		return rc;
	rc = 1;
	if (query_open(&o, &db) == 0) {
		table_mode = o.mode == PQ_OUT_TABLE;
		if (!(out = pq_out_new(stdout, o.mode, o.width ? o.width : terminal_width())))
			err_msg("cannot set SQLite up: %s", sqlite3_errmsg(db));
		else
			rc = query_run(&o, db, out);
	}
	pq_out_free(out);
	sqlite3_close(db);
	if (fflush(stdout) || ferror(stdout)) {
		err_msg("writing the results: %m");
		rc = 1;
	}
	return rc;
}
#endif
