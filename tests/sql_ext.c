/*
 * sql_ext.c -- libposixtrace_sqlite.so, the SQLite extension, from the
 * sqlite3 shell (.load) and from Debian's python3 (sqlite3 module,
 * enable_load_extension), and the examples of posixtrace-query(1) run as
 * written everywhere.
 *
 * On a log with known rows (tests/query_log.h) named app.ptlog, as the
 * page's examples name it: each example line of the page ("posixtrace
 * query app.ptlog '...'") runs from posixtrace query, then its SQL from
 * the shell and from Python over tables made by CREATE VIRTUAL TABLE ...
 * USING posixtrace('app.ptlog', TABLE) under the same names; the three
 * give the same rows (CSV).  Then: several logs in one table, the
 * module's errors (no such table, no log, a file that is not a log)
 * as SQL errors, a table made in a database file and read again from a
 * new connection, and the module refused to a view (direct-only).
 *
 * Skips when sqlite3 or a python3 whose sqlite3 module loads extensions
 * is missing (Debian: sqlite3, python3), or when the extension was not
 * built (no libsqlite3-dev).
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "query_log.h"

static const char *ext = PT_BUILD_DIR "/libposixtrace_sqlite.so";
static const char *sqlite, *python;
static const char *const tables[] = { "event", "thread", "process", "type", "loss", "object",
                                      "slice", "args", "flow" };

/* CR out (CSV from posixtrace query ends lines with CRLF) */
static char *lf(char *s)
{
	char *w = s;
	for (char *p = s; p && *p; p++)
		if (*p != '\r')
			*w++ = *p;
	if (w)
		*w = 0;
	return s;
}

/* the SQL made into a file of sqlite3 shell commands: the tables, then it */
static char *shell_run(const char *sql, int *rc)
{
	const char *f = cli_path("shell.sql");
	FILE *fp = fopen(f, "w");
	REQUIRE(fp);
	fprintf(fp, ".load %s\n.headers on\n.mode csv\n", ext);
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		fprintf(fp, "CREATE VIRTUAL TABLE temp.%s USING posixtrace('app.ptlog', '%s');\n",
		        tables[i], tables[i]);
	fprintf(fp, "%s;\n", sql);
	fclose(fp);
	char cmd[1400], *out = NULL;
	snprintf(cmd, sizeof cmd, "cd %s && %s -bail :memory: < %s", cli_dir, sqlite, f);
	*rc = cli_run(((char *const[]){ "/bin/sh", "-c", cmd, NULL }), &out, NULL);
	return lf(out);
}

static const char py_prog[] =
"import csv, sqlite3, sys\n"
"db = sqlite3.connect(':memory:')\n"
"db.enable_load_extension(True)\n"
"db.load_extension(sys.argv[1])\n"
"db.enable_load_extension(False)\n"
"for t in sys.argv[3].split(','):\n"
"    db.execute(\"CREATE VIRTUAL TABLE temp.%s USING posixtrace('app.ptlog', '%s')\" % (t, t))\n"
"cur = db.execute(sys.argv[2])\n"
"w = csv.writer(sys.stdout, lineterminator='\\n')\n"
"w.writerow([d[0] for d in cur.description])\n"
"for row in cur:\n"
"    w.writerow(['' if v is None else v.hex() if isinstance(v, bytes) else v for v in row])\n";

static char *python_run(const char *sql, int *rc)
{
	char list[200] = "", *out = NULL, *err = NULL;
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "",
		         tables[i]);
	char cmd[200];
	snprintf(cmd, sizeof cmd, "cd %s && exec \"$0\" -c \"$1\" \"$2\" \"$3\" \"$4\"", cli_dir);
	*rc = cli_run(((char *const[]){ "/bin/sh", "-c", cmd, (char *)python, (char *)py_prog,
	                                (char *)ext, (char *)sql, list, NULL }), &out, &err);
	if (*rc)
		fprintf(stderr, "python3: %s\n", err ? err : "");
	free(err);
	return lf(out);
}

/* the page's example lines: the SQL between the quotes, roff undone */
static int examples(const char *page, char sql[][600], int max)
{
	int n = 0;
	const char *tag = "\nposixtrace query app.ptlog '";
	for (const char *p = strstr(page, tag); p && n < max; p = strstr(p + 1, tag)) {
		const char *s = p + strlen(tag), *e = strchr(s, '\n');
		if (!e || e[-1] != '\'')
			continue;
		size_t o = 0;
		for (const char *q = s; q < e - 1 && o < 599; q++) {
			if (!strncmp(q, "\\(aq", 4))
				sql[n][o++] = '\'', q += 3;
			else if (!strncmp(q, "\\-", 2))
				sql[n][o++] = '-', q += 1;
			else if (!strncmp(q, "\\e", 2))
				sql[n][o++] = '\\', q += 1;
			else
				sql[n][o++] = *q;
		}
		sql[n++][o] = 0;
	}
	return n;
}

static void page_examples(void)
{
	char src[1024], path[1100];
	static char sql[40][600];
	t_source_dir(src, sizeof src);
	snprintf(path, sizeof path, "%s/docs/man/man1/posixtrace-query.1", src);
	char *page = cli_slurp(path);
	REQUIRE(page);
	int n = examples(page, sql, 40);
	CHECK(n >= 8);
	for (int i = 0; i < n; i++) {
		char *cmd_out = NULL, *err = NULL, cmd[1400];
		int rc1, rc2, rc3;
		snprintf(cmd, sizeof cmd, "cd %s && exec \"$0\" query --csv app.ptlog \"$1\"", cli_dir);
		rc1 = cli_run(((char *const[]){ "/bin/sh", "-c", cmd, (char *)cli_bin, sql[i], NULL }),
		              &cmd_out, &err);
		lf(cmd_out);
		char *sh = shell_run(sql[i], &rc2), *py = python_run(sql[i], &rc3);
		CHECK_EQ(rc1, 0);
		CHECK_EQ(rc2, 0);
		CHECK_EQ(rc3, 0);
		/* a header and at least one row */
		CHECK(cmd_out && strchr(cmd_out, '\n') && strchr(cmd_out, '\n')[1]);
		CHECK(cmd_out && sh && !strcmp(cmd_out, sh));
		CHECK(cmd_out && py && !strcmp(cmd_out, py));
		if (rc1 || rc2 || rc3 || !cmd_out || !sh || !py || strcmp(cmd_out, sh) ||
		    strcmp(cmd_out, py))
			fprintf(stderr, "example %d: %s\nquery (%d): %s%s\nsqlite3 (%d): %s\npython3 (%d): %s\n",
			        i, sql[i], rc1, cmd_out ? cmd_out : "", err ? err : "", rc2, sh ? sh : "",
			        rc3, py ? py : "");
		free(cmd_out), free(err), free(sh), free(py);
	}
	free(page);
}

static char *shell(const char *script, int *rc)
{
	const char *f = cli_path("script.sql");
	FILE *fp = fopen(f, "w");
	REQUIRE(fp);
	fprintf(fp, ".load %s\n%s\n", ext, script);
	fclose(fp);
	char cmd[1400], *out = NULL, *err = NULL;
	snprintf(cmd, sizeof cmd, "cd %s && %s -bail %s/x.db < %s 2>&1", cli_dir, sqlite, cli_dir, f);
	*rc = cli_run(((char *const[]){ "/bin/sh", "-c", cmd, NULL }), &out, &err);
	free(err);
	return out;
}

static void module(void)
{
	int rc;
	char *out;
	/* several logs, the column log */
	out = shell("CREATE VIRTUAL TABLE temp.e USING posixtrace('app.ptlog', 'two.ptlog', event);\n"
	            "SELECT log, count(*), min(id), max(id) FROM e GROUP BY log ORDER BY log;", &rc);
	CHECK_EQ(rc, 0);
	CHECK(cli_contains(out, "app.ptlog|453|0|452\ntwo.ptlog|93|453|545\n"));
	free(out);
	/* errors are SQL errors, naming the cause */
	out = shell("CREATE VIRTUAL TABLE temp.e USING posixtrace('app.ptlog', 'nosuch');", &rc);
	CHECK(rc != 0 && rc < 128 && cli_contains(out, "give LOG"));
	free(out);
	out = shell("CREATE VIRTUAL TABLE temp.e USING posixtrace('missing.ptlog', 'event');", &rc);
	CHECK(rc != 0 && rc < 128 && cli_contains(out, "missing.ptlog"));
	free(out);
	out = shell("CREATE VIRTUAL TABLE temp.e USING posixtrace('junk', 'event');", &rc);
	CHECK(rc != 0 && rc < 128 && cli_contains(out, "junk"));
	free(out);
	/* a table kept in a database file, read from a new connection */
	out = shell("CREATE VIRTUAL TABLE s USING posixtrace('app.ptlog', 'slice');", &rc);
	CHECK_EQ(rc, 0);
	free(out);
	out = shell("SELECT name, count(*) FROM s GROUP BY name ORDER BY name;", &rc);
	CHECK_EQ(rc, 0);
	CHECK(cli_contains(out, "db|50\nhand|50\nreq|50\n"));
	free(out);
	/* direct-only: a view of the file's schema cannot reach it */
	out = shell("CREATE VIEW v AS SELECT count(*) FROM s;\nSELECT * FROM v;", &rc);
	CHECK(rc != 0 && rc < 128 && cli_contains(out, "unsafe use of virtual table"));
	free(out);
}

int main(void)
{
	T_BEGIN(240);
	cli_setup();
	char *sq = NULL, *py = NULL;
	qlog_hosts(ext, &sq, &py);
	sqlite = sq, python = py;
	REQUIRE(qlog_write(cli_path("app.ptlog"), 50) == 0);
	REQUIRE(qlog_write(cli_path("two.ptlog"), 10) == 0);
	FILE *f = fopen(cli_path("junk"), "w");
	REQUIRE(f);
	fputs("not a log", f);
	fclose(f);
	page_examples();
	module();
	T_END();
}
