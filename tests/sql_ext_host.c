/*
 * sql_ext_host.c -- loading libposixtrace_sqlite.so leaves its host
 * process as it was: a reader of logs asked for no control segment, no
 * POSIXTRACE_CTL, no fork handler of the library's.  From Debian's
 * python3 (sqlite3 module) and from the sqlite3 shell, each of which
 * loads the extension and counts a log's events (the exact count, the
 * witness that the log was read):
 *   - its descriptors (/proc/self/fd, what each names) are the same
 *     before loading and after the query, but for the log being read,
 *     and the same again once the connection is closed (python3);
 *   - no memfd is mapped (/proc/self/maps) that was not before;
 *   - a program it starts (system()) has no POSIXTRACE_ variable in its
 *     environment;
 *   - (python3) a fork()ed child has its parent's descriptors and maps,
 *     nothing more, an environment without POSIXTRACE_, and can go on
 *     reading the log it inherited.
 * The test itself records (qlog_write), so its own POSIXTRACE_CTL is
 * taken out of the hosts' environment first.
 *
 * Skips as sql_ext does: no sqlite3 shell, no python3 whose sqlite3
 * module loads extensions, or a build without SQLite.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "query_log.h"

static const char *ext = PT_BUILD_DIR "/libposixtrace_sqlite.so";

/* argv: the extension, the log (a full path), a directory for files.
 * Prints one line per difference ("FAIL ...") and "count N" for each
 * count read; exits 0 if there was none. */
static const char py_prog[] =
"import os, sqlite3, sys\n"
"ext, log, tmp = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]\n"
"bad = []\n"
"def fds():\n"
"    d = os.open('/proc/self/fd', os.O_RDONLY | os.O_DIRECTORY)\n"
"    r = {}\n"
"    for f in os.listdir(d):\n"
"        if int(f) != d:\n"
"            try: r[int(f)] = os.readlink('/proc/self/fd/' + f)\n"
"            except OSError: pass\n"
"    os.close(d)\n"
"    return r\n"
"def memfds():\n"
"    with open('/proc/self/maps') as f:\n"
"        return sorted(l.split(None, 5)[-1].strip() for l in f if 'memfd:' in l)\n"
"def child_env(tag):\n"
"    p = os.path.join(tmp, 'env-%s-%d' % (tag, os.getpid()))\n"
"    if os.system('env > ' + p) != 0: bad.append('system(env) failed')\n"
"    with open(p) as f: return sorted(l.strip() for l in f if l.startswith('POSIXTRACE'))\n"
"def same(what, a, b):\n"
"    if a != b: bad.append('%s: before %r, now %r' % (what, a, b))\n"
"def no_log(d):\n"
"    return {k: v for k, v in d.items() if v != log}\n"
"fd0, maps0, env0 = fds(), memfds(), child_env('0')\n"
"same('environment of a child before loading', [], env0)\n"
"db = sqlite3.connect(':memory:')\n"
"db.enable_load_extension(True)\n"
"db.load_extension(ext)\n"
"db.enable_load_extension(False)\n"
"db.execute(\"CREATE VIRTUAL TABLE temp.e USING posixtrace('%s', 'event')\" % log)\n"
"print('count', db.execute('SELECT count(*) FROM e').fetchone()[0])\n"
"same('descriptors (but the log)', fd0, no_log(fds()))\n"
"same('memfds mapped', maps0, memfds())\n"
"same('environment of a child', env0, child_env('1'))\n"
"fdf = fds()\n"
"pid = os.fork()\n"
"if pid == 0:\n"
"    bad = []\n"
"    same('descriptors in a fork child', fdf, fds())\n"
"    same('memfds mapped in a fork child', maps0, memfds())\n"
"    same('environment of a fork child\\'s child', env0, child_env('2'))\n"
"    n = db.execute('SELECT count(*) FROM e').fetchone()[0]\n"
"    print('count', n)\n"
"    for b in bad: print('FAIL (child)', b)\n"
"    sys.stdout.flush()\n"
"    os._exit(1 if bad else 0)\n"
"_, st = os.waitpid(pid, 0)\n"
"if not os.WIFEXITED(st) or os.WEXITSTATUS(st) != 0: bad.append('fork child: status %d' % st)\n"
"print('count', db.execute('SELECT count(*) FROM e').fetchone()[0])\n"
"db.close()\n"
"same('descriptors after close', fd0, fds())\n"
"for b in bad: print('FAIL', b)\n"
"sys.exit(1 if bad else 0)\n";

/* The same from the sqlite3 shell: .shell runs sh -c with the shell as
 * its parent, and the environment the shell's own C library gives it. */
static const char sh_state[] =
	".shell cd /proc/$PPID/fd && for f in *; do readlink $f; done | grep -vxF \"$(realpath "
	"%s)\" | sort > %s/fd%d; grep -c memfd: /proc/$PPID/maps > %s/maps%d; "
	"env | grep -c ^POSIXTRACE > %s/env%d\n";

static char *slurp_path(const char *name)
{
	return cli_slurp(cli_path(name));
}

static void python_host(const char *python)
{
	char *out = NULL, *err = NULL, cmd[300];
	snprintf(cmd, sizeof cmd, "cd %s && exec env -u POSIXTRACE_CTL \"$0\" -c \"$1\" \"$2\" "
	         "\"$3\" \"$4\"", cli_dir);
	int rc = cli_run(((char *const[]){ "/bin/sh", "-c", cmd, (char *)python, (char *)py_prog,
	                                   (char *)ext, (char *)cli_path("app.ptlog"),
	                                   (char *)cli_dir, NULL }), &out, &err);
	if (rc != 0)
		fprintf(stderr, "python3 (%d):\n%s%s", rc, out ? out : "", err ? err : "");
	CHECK_EQ(rc, 0);
	/* the parent's count, the fork child's, the parent's again */
	CHECK(out && strstr(out, "count 453\ncount 453\ncount 453\n") != NULL);
	CHECK(out && strstr(out, "FAIL") == NULL);
	free(out);
	free(err);
}

static void shell_host(const char *sqlite)
{
	const char *f = cli_path("host.sql");
	FILE *fp = fopen(f, "w");
	REQUIRE(fp);
	const char *log = cli_path("app.ptlog");
	fprintf(fp, sh_state, log, cli_dir, 0, cli_dir, 0, cli_dir, 0);
	fprintf(fp, ".load %s\nCREATE VIRTUAL TABLE temp.e USING posixtrace('%s', 'event');\n"
	        "SELECT count(*) FROM e;\n", ext, log);
	fprintf(fp, sh_state, log, cli_dir, 1, cli_dir, 1, cli_dir, 1);
	fclose(fp);
	char cmd[1400], *out = NULL, *err = NULL;
	snprintf(cmd, sizeof cmd, "cd %s && env -u POSIXTRACE_CTL %s -bail :memory: < %s", cli_dir,
	         sqlite, f);
	int rc = cli_run(((char *const[]){ "/bin/sh", "-c", cmd, NULL }), &out, &err);
	if (rc != 0)
		fprintf(stderr, "sqlite3 (%d):\n%s%s", rc, out ? out : "", err ? err : "");
	CHECK_EQ(rc, 0);
	CHECK(out && strcmp(out, "453\n") == 0);
	char *fd0 = slurp_path("fd0"), *fd1 = slurp_path("fd1");
	char *m0 = slurp_path("maps0"), *m1 = slurp_path("maps1");
	char *e0 = slurp_path("env0"), *e1 = slurp_path("env1");
	REQUIRE(fd0 && fd1 && m0 && m1 && e0 && e1);
	CHECK(fd0[0] != 0); /* (the shell's stdin, at least) */
	if (strcmp(fd0, fd1) != 0)
		fprintf(stderr, "sqlite3: descriptors before:\n%safter:\n%s", fd0, fd1);
	CHECK(strcmp(fd0, fd1) == 0);
	CHECK(strcmp(m0, "0\n") == 0);
	CHECK(strcmp(m1, "0\n") == 0);
	CHECK(strcmp(e0, "0\n") == 0);
	CHECK(strcmp(e1, "0\n") == 0);
	free(fd0), free(fd1), free(m0), free(m1), free(e0), free(e1);
	free(out);
	free(err);
}

int main(void)
{
	T_BEGIN(120);
	cli_setup();
	char *sqlite = NULL, *python = NULL;
	qlog_hosts(ext, &sqlite, &python);
	REQUIRE(qlog_write(cli_path("app.ptlog"), 50) == 0);
	python_host(python);
	shell_host(sqlite);
	T_END();
}
