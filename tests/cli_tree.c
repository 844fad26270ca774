/*
 * cli_tree.c -- `posixtrace record` traces every process below the program
 * that uses the library, whatever runs in between (issue 35): a shell
 * script running three instrumented programs in sequence and two in
 * parallel, `make -j2` building and running instrumented programs, an exec
 * chain through env, a double fork; two records of similar trees at the
 * same time each get exactly their own processes; --no-inherit the
 * program alone; a process outside the tree given the variable of a
 * stream of another user records nothing there (and, as the same user, does:
 * the check is the kernel's ptrace rule, not secrecy); a root process given
 * the variable of a user's record does not join it either.  `live --
 * sh -c ...` shows the same tree.  `attach --tree` of a running program
 * that uses the library, and of a shell that does not: the descendants
 * running at attach time join when asked (from then on), and those
 * started after join too (from their constructor where the environment
 * could tell them), and nothing from outside the tree.  A request to join
 * written into a process's control segment: one of this user joins and
 * records exactly its events; one of another user refuses and records
 * nothing.  The tree read back from show --processes and the exports
 * (node, protoc, babeltrace2): parent, command line, events per process.
 *
 * The instrumented program is this test ("emit TAG N"): one event from a
 * constructor and N from main, each carrying TAG; the log must hold, per
 * tag, exactly 1 + N events, all from one process, and no other tag.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "sec_util.h"
#include "../src/ext.h"

/* ------------------------------------------------ the instrumented side */
__attribute__((constructor)) static void emit_ctor(int argc, char **argv)
{
	trace_event_id_t id;
	if (argc >= 4 && strcmp(argv[1], "emit") == 0 &&
	    posix_trace_eventid_open("tree-ctor", &id) == 0)
		posix_trace_event(id, argv[2], strlen(argv[2]));
}

/* A helper process gives up after this long (the test's alarm ends the
 * test before; its helpers must not outlive it for ever). */
#define HELPER_WAIT_MS 200000

/* A file appears (another process's signal). */
static void await_file(const char *path)
{
	for (int ms = 0; access(path, F_OK) != 0; ms++) {
		if (ms > HELPER_WAIT_MS)
			exit(1);
		usleep(1000);
	}
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");
	if (f)
		fclose(f);
}

/* Until this process's environment names a stream (it joined one, or a
 * stream that traces a tree reached it): an event now and then, which is
 * when the library looks at its control segment. */
static void until_joined(void)
{
	trace_event_id_t tick;
	if (posix_trace_eventid_open("tree-tick", &tick) != 0)
		exit(1);
	for (int ms = 0; !getenv("POSIXTRACE_JOIN"); ms++) {
		if (ms > HELPER_WAIT_MS)
			exit(1);
		posix_trace_event(tick, NULL, 0);
		usleep(1000);
	}
}

/* "wait TAG N DIR": a process running before `attach --tree` (or started
 * where no environment tells it): DIR/TAG.started; once asked to join,
 * DIR/TAG.ready;
 * then, once DIR/go exists, N events; then DIR/TAG.done. */
static int wait_main(char **argv)
{
	char path[4200];
	trace_event_id_t id;
	snprintf(path, sizeof path, "%s/%s.started", argv[4], argv[2]);
	touch(path);
	until_joined();
	snprintf(path, sizeof path, "%s/%s.ready", argv[4], argv[2]);
	touch(path);
	snprintf(path, sizeof path, "%s/go", argv[4]);
	await_file(path);
	if (posix_trace_eventid_open("tree-ev", &id) != 0)
		return 1;
	for (int i = atoi(argv[3]); i > 0; i--)
		posix_trace_event(id, argv[2], strlen(argv[2]));
	snprintf(path, sizeof path, "%s/%s.done", argv[4], argv[2]);
	touch(path);
	return 0;
}

/* "root DIR BEFORE AFTER": starts the shell command BEFORE, then, once
 * attached with --tree (its environment then names the stream),
 * DIR/root.ready; once DIR/go exists, the shell command AFTER. */
static int root_main(char **argv)
{
	char path[4200];
	pid_t p = fork();
	if (p < 0)
		return 1;
	if (p == 0) {
		execl("/bin/sh", "sh", "-c", argv[3], (char *)NULL);
		_exit(127);
	}
	until_joined();
	snprintf(path, sizeof path, "%s/root.ready", argv[2]);
	touch(path);
	snprintf(path, sizeof path, "%s/go", argv[2]);
	await_file(path);
	return system(argv[4]) == 0 ? 0 : 1;
}

static int emit_main(char **argv)
{
	trace_event_id_t id;
	int n = atoi(argv[3]);
	if (posix_trace_eventid_open("tree-ev", &id) != 0)
		return 1;
	for (int i = 0; i < n; i++)
		posix_trace_event(id, argv[2], strlen(argv[2]));
	return 0;
}

/* ------------------------------------------------------- the checks */
static char self[4096], bin[4096];

struct want {
	const char *tag;
	int n;
	int no_ctor; /* its constructor ran before it was traced */
};

/* The log holds exactly what w says, and nothing tagged otherwise. */
static pid_t got_pid[16]; /* by check_log(): the process of each tag */

static void check_log(const char *what, const char *log, const struct want *w, int nw)
{
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev), ctor[16] = { 0 }, evs[16] = { 0 }, stray = 0;
	pid_t pid[16] = { 0 };
	int pid_mixed[16] = { 0 };

	REQUIRE(nw <= 16);
	for (int i = 0; i < n; i++) {
		int is_ctor = strcmp(ev[i].name, "tree-ctor") == 0;
		if (!is_ctor && strcmp(ev[i].name, "tree-ev") != 0)
			continue;
		int k = 0;
		while (k < nw && (strlen(w[k].tag) != ev[i].len ||
		                  memcmp(w[k].tag, ev[i].data, ev[i].len) != 0))
			k++;
		if (k == nw) {
			stray++;
			continue;
		}
		(is_ctor ? ctor : evs)[k]++;
		if (pid[k] && pid[k] != ev[i].info.posix_pid)
			pid_mixed[k] = 1;
		pid[k] = ev[i].info.posix_pid;
	}
	for (int k = 0; k < nw; k++) {
		if (ctor[k] != !w[k].no_ctor || evs[k] != w[k].n || pid_mixed[k])
			fprintf(stderr, "%s: %s: %d constructor events, %d of %d others%s\n", what,
			        w[k].tag, ctor[k], evs[k], w[k].n, pid_mixed[k] ? ", mixed pids" : "");
		CHECK_EQ(ctor[k], !w[k].no_ctor);
		CHECK_EQ(evs[k], w[k].n);
		CHECK(!pid_mixed[k]);
		for (int j = 0; j < k; j++)
			CHECK(pid[j] != pid[k]);
		got_pid[k] = pid[k];
	}
	if (stray)
		fprintf(stderr, "%s: %d events of processes outside the tree\n", what, stray);
	CHECK_EQ(stray, 0);
	free(ev);
}

/* record -o log [opt] -- /bin/sh -c script */
static int record_sh(const char *log, const char *opt, const char *script, char **err)
{
	char *argv[10];
	int k = 0;
	argv[k++] = bin;
	argv[k++] = "record";
	argv[k++] = "-o";
	argv[k++] = (char *)log;
	if (opt)
		argv[k++] = (char *)opt;
	argv[k++] = "--";
	argv[k++] = "/bin/sh";
	argv[k++] = "-c";
	argv[k++] = (char *)script;
	argv[k] = NULL;
	return cli_run(argv, NULL, err);
}

/* ------------------------------------------- the tree in show and exports */
/* What a consumer read of the script's trace: per process, its parent,
 * its command line and its events of the test (tree-ctor, tree-ev). */
struct seen {
	int pid, ppid, events;
	char cmd[4400];
};

static struct seen *seen_of(struct seen *s, int *n, int pid)
{
	for (int i = 0; i < *n; i++)
		if (s[i].pid == pid)
			return &s[i];
	REQUIRE(*n < 32);
	memset(&s[*n], 0, sizeof s[*n]);
	s[*n].pid = pid;
	s[*n].ppid = -1;
	return &s[(*n)++];
}

/* Each of the script's five processes, as the consumer `what` read them:
 * its parent is the script's shell, its command line what it was run
 * with, its events exactly 1 + N; and no other process has any. */
static void check_seen(const char *what, struct seen *s, int n, const struct want *w,
                       const pid_t *pid, int ppid, int check_cmd, int check_events)
{
	int others = 0;
	for (int k = 0; k < 5; k++) {
		struct seen *x = seen_of(s, &n, (int)pid[k]);
		char cmd[4400];
		snprintf(cmd, sizeof cmd, "%s emit %s %d", self, w[k].tag, w[k].n);
		if (x->ppid != ppid || (check_cmd && strcmp(x->cmd, cmd)) ||
		    (check_events && x->events != w[k].n + 1))
			fprintf(stderr, "%s: pid %d: ppid %d (want %d), cmdline '%s', %d events (want %d)\n",
			        what, x->pid, x->ppid, ppid, x->cmd, x->events, w[k].n + 1);
		CHECK_EQ(x->ppid, ppid);
		if (check_cmd)
			CHECK_EQ(strcmp(x->cmd, cmd), 0);
		if (check_events)
			CHECK_EQ(x->events, w[k].n + 1);
	}
	for (int i = 0; i < n; i++) {
		int mine = 0;
		for (int k = 0; k < 5; k++)
			mine |= s[i].pid == (int)pid[k];
		others += !mine && s[i].events;
	}
	CHECK_EQ(others, 0);
}

/* The script's trace (five processes of one shell) in show --processes,
 * and exported: Chrome read by node's JSON parser, Perfetto by protoc
 * against Perfetto's schema, CTF by babeltrace2. */
static void tree_in_outputs(const char *log, const struct want *w, const pid_t *pid, int ppid)
{
	struct seen s[32];
	int n = 0;
	char *out = NULL, *err = NULL, line[4096];

	/* show --processes: the table first (pid, ppid, ..., command line),
	 * a blank line, then the events ("PID/THREAD" third) */
	char *sh[] = { bin, "show", "--processes", (char *)log, NULL };
	CHECK_EQ(cli_run(sh, &out, NULL), 0);
	REQUIRE(out);
	int in_table = 0, rows = 0;
	for (int i = 0; cli_line(out, i, line, sizeof line) == 0; i++) {
		int p, pp, used = 0;
		if (!strncmp(line, "processes (", 11)) {
			in_table = 1;
			continue;
		}
		if (in_table && !line[0] && rows) {
			in_table = 0;
			continue;
		}
		if (in_table && sscanf(line, " %d %d %*u %*u %*s %*s %n", &p, &pp, &used) == 2 && used) {
			struct seen *x = seen_of(s, &n, p);
			x->ppid = pp;
			snprintf(x->cmd, sizeof x->cmd, "%s", line + used);
			rows++;
		} else if (!in_table && (strstr(line, " tree-ev ") || strstr(line, " tree-ctor ")) &&
		           sscanf(line, "%*s %*s %d/", &p) == 1) {
			seen_of(s, &n, p)->events++;
		}
	}
	CHECK_EQ(rows, 5);
	check_seen("show --processes", s, n, w, pid, ppid, 1, 1);
	free(out);

	/* Chrome: process_name's args (ppid, cmdline), events by pid */
	const char *json = cli_path("script.json"), *node = cli_which("node");
	char *ex[] = { bin, "export", "--format", "chrome", (char *)log, "-o", (char *)json, NULL };
	CHECK_EQ(cli_run(ex, NULL, NULL), 0);
	if (!node) {
		printf("SKIP part: Chrome read by node (node is not installed)\n");
	} else {
		static const char js[] =
			"const t = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));"
			"const ev = {};"
			"for (const e of t.traceEvents) {"
			"  if (e.ph === 'M' && e.name === 'process_name' && e.args.ppid !== undefined)"
			"    console.log('P ' + e.pid + ' ' + e.args.ppid + ' ' + e.args.cmdline);"
			"  else if (e.ph !== 'M' && (e.name === 'tree-ev' || e.name === 'tree-ctor'))"
			"    ev[e.pid] = (ev[e.pid] || 0) + 1;"
			"}"
			"for (const p in ev) console.log('E ' + p + ' ' + ev[p]);";
		char *nv[] = { (char *)node, "-e", (char *)js, (char *)json, NULL };
		n = 0;
		CHECK_EQ(cli_run(nv, &out, &err), 0);
		for (int i = 0; out && cli_line(out, i, line, sizeof line) == 0; i++) {
			int p, v, used = 0;
			if (sscanf(line, "P %d %d %n", &p, &v, &used) == 2 && used) {
				struct seen *x = seen_of(s, &n, p);
				x->ppid = v;
				snprintf(x->cmd, sizeof x->cmd, "%s", line + used);
			} else if (sscanf(line, "E %d %d", &p, &v) == 2) {
				seen_of(s, &n, p)->events = v;
			}
		}
		check_seen("chrome (node)", s, n, w, pid, ppid, 1, 1);
		free(out);
		free(err);
	}

	/* Perfetto: a ProcessTree per process (pid, ppid, cmdline), decoded
	 * by protoc against the schema */
	char src[4096], schema[4200];
	t_source_dir(src, sizeof src);
	const char *protoc = cli_which("protoc");
	/* Perfetto's published schema beside the repository, else the
	 * repository's own few messages (tests/perfetto_min.proto) */
	const char *proto = "perfetto_trace.proto";
	snprintf(schema, sizeof schema, "%s/../../shared/formats/perfetto", src);
	if (access(schema, R_OK) != 0)
		snprintf(schema, sizeof schema, "%s/../shared/formats/perfetto", src);
	if (access(schema, R_OK) != 0) {
		snprintf(schema, sizeof schema, "%s/tests", src);
		proto = "perfetto_min.proto";
	}
	const char *pf = cli_path("script.pftrace"), *txt = cli_path("script.pftxt");
	char *ep[] = { bin, "export", "--format", "perfetto", "--no-compress", (char *)log, "-o",
		       (char *)pf, NULL };
	CHECK_EQ(cli_run(ep, NULL, NULL), 0);
	if (!protoc || access(schema, R_OK) != 0) {
		printf("SKIP part: Perfetto read by protoc (%s)\n",
		       protoc ? "Perfetto's schema not found" : "protoc is not installed");
	} else {
		char cmd[13000];
		snprintf(cmd, sizeof cmd, "'%s' --decode=perfetto.protos.Trace -I '%s' "
		         "'%s' < '%s' > '%s'", protoc, schema, proto, pf, txt);
		CHECK_EQ(system(cmd), 0);
		char *dec = cli_slurp(txt);
		REQUIRE(dec);
		n = 0;
		int trees = 0;
		for (const char *q = dec; (q = strstr(q, "process_tree {")) != NULL; q++) {
			int p = 0, pp = 0;
			const char *a = strstr(q, "pid: "), *b = strstr(q, "ppid: "),
			           *c = strstr(q, "cmdline: \"");
			REQUIRE(a && b && c);
			p = atoi(a + 5);
			pp = atoi(b + 6);
			struct seen *x = seen_of(s, &n, p);
			x->ppid = pp;
			const char *e = strchr(c + 10, '"');
			REQUIRE(e);
			snprintf(x->cmd, sizeof x->cmd, "%.*s", (int)(e - c - 10), c + 10);
			trees++;
		}
		CHECK_EQ(trees, 5);
		check_seen("perfetto (protoc)", s, n, w, pid, ppid, 1, 0);
		free(dec);
	}

	/* CTF: ppid in each packet's context, events by pid */
	const char *bt = cli_which("babeltrace2"), *ctf = cli_path("script.ctf");
	char *ec[] = { bin, "export", "--format", "ctf", (char *)log, "-o", (char *)ctf, NULL };
	CHECK_EQ(cli_run(ec, NULL, NULL), 0);
	if (!bt) {
		printf("SKIP part: CTF read by babeltrace2 (babeltrace2 is not installed)\n");
	} else {
		char *bv[] = { (char *)bt, (char *)ctf, NULL };
		CHECK_EQ(cli_run(bv, &out, NULL), 0);
		n = 0;
		for (int i = 0; out && cli_line(out, i, line, sizeof line) == 0; i++) {
			const char *a = strstr(line, "{ pid = "), *b = strstr(line, ", ppid = ");
			if (!a || !b || (!strstr(line, " tree-ev: ") && !strstr(line, " tree-ctor: ")))
				continue;
			struct seen *x = seen_of(s, &n, atoi(a + 8));
			x->ppid = atoi(b + 9);
			x->events++;
		}
		check_seen("ctf (babeltrace2)", s, n, w, pid, ppid, 0, 1);
		free(out);
	}
}

static void script_run(void)
{
	char sc[16384], *err;
	const char *log = cli_path("script.ptlog"), *file = cli_path("script.sh");
	FILE *f = fopen(file, "w");
	REQUIRE(f);
	fprintf(f, "#!/bin/sh\nT='%s'\n"
	           "\"$T\" emit s1 100\n\"$T\" emit s2 200\n\"$T\" emit s3 300\n"
	           "\"$T\" emit p1 150 &\n\"$T\" emit p2 250 &\nwait\n", self);
	fclose(f);
	snprintf(sc, sizeof sc, "sh '%s'", file);
	CHECK_EQ(record_sh(log, NULL, sc, &err), 0);
	free(err);
	static const struct want w[] = { { "s1", 100, 0 }, { "s2", 200, 0 }, { "s3", 300, 0 },
	                                 { "p1", 150, 0 }, { "p2", 250, 0 } };
	check_log("script", log, w, 5);

	/* info names each with its parent (the script's shell, the same for
	 * all five) and its command line */
	char *argv[] = { bin, "info", (char *)log, NULL }, *out;
	CHECK_EQ(cli_run(argv, &out, NULL), 0);
	int ppid0 = -1;
	for (int k = 0; k < 5; k++) {
		char want[4200], *line;
		snprintf(want, sizeof want, "\n  %8d  ", (int)got_pid[k]);
		REQUIRE(out && (line = strstr(out, want)) != NULL);
		int pid, ppid;
		CHECK_EQ(sscanf(line, "%d %d", &pid, &ppid), 2);
		if (ppid0 < 0)
			ppid0 = ppid;
		CHECK_EQ(ppid, ppid0);
		CHECK(ppid != pid && ppid > 1);
		snprintf(want, sizeof want, "%s emit %s %d\n", self, w[k].tag, w[k].n);
		char *eol = strchr(line + 1, '\n');
		CHECK(eol && (size_t)(eol + 1 - line) > strlen(want) &&
		      memcmp(eol + 1 - strlen(want), want, strlen(want)) == 0);
	}
	free(out);
	pid_t pids[5];
	memcpy(pids, got_pid, sizeof pids);
	tree_in_outputs(log, w, pids, ppid0);
}

static void exec_chain_and_double_fork(void)
{
	char sc[16384], *err;
	const char *log = cli_path("chain.ptlog"), *done = cli_path("daemon.done");

	/* env, then a shell exec'ing the program; and a daemon: a subshell
	 * that backgrounds it and exits at once (its parent is then gone);
	 * the script waits for the file it writes when it has finished */
	snprintf(sc, sizeof sc,
	         "exec env TREE_X=1 /bin/sh -c '"
	         "( \"%s\" emit d1 60 && : > \"%s\" & ) ; "
	         "env -u TREE_Y \"%s\" emit e1 40; "
	         "while ! [ -e \"%s\" ]; do sleep 0.01; done'",
	         self, done, self, done);
	CHECK_EQ(record_sh(log, NULL, sc, &err), 0);
	free(err);
	static const struct want w[] = { { "e1", 40, 0 }, { "d1", 60, 0 } };
	check_log("exec chain, double fork", log, w, 2);

	/* --no-inherit: the program alone (here a shell: nothing) */
	const char *log2 = cli_path("noinh.ptlog");
	snprintf(sc, sizeof sc, "\"%s\" emit n1 10", self);
	CHECK_EQ(record_sh(log2, "--no-inherit", sc, &err), 0);
	free(err);
	check_log("--no-inherit", log2, NULL, 0);
}

static void make_j2(void)
{
	char cmd[16384], *err;
	const char *dir = cli_path("mk"), *log = cli_path("make.ptlog");

	if (!cli_which("make")) {
		printf("make: not installed, its case skipped\n");
		return;
	}
	REQUIRE(mkdir(dir, 0755) == 0);
	FILE *f = fopen(cli_path("mk/prog.c"), "w");
	REQUIRE(f);
	fputs("#include <stdlib.h>\n#include <string.h>\n#include <trace.h>\n"
	      "__attribute__((constructor)) static void c(int argc, char **argv)\n"
	      "{ trace_event_id_t id; if (argc >= 3 && !posix_trace_eventid_open(\"tree-ctor\", &id))\n"
	      "  posix_trace_event(id, argv[1], strlen(argv[1])); }\n"
	      "int main(int argc, char **argv)\n"
	      "{ trace_event_id_t id; if (argc < 3 || posix_trace_eventid_open(\"tree-ev\", &id))\n"
	      "  return 1; for (int i = atoi(argv[2]); i > 0; i--)\n"
	      "  posix_trace_event(id, argv[1], strlen(argv[1])); return 0; }\n", f);
	fclose(f);
	REQUIRE((f = fopen(cli_path("mk/Makefile"), "w")) != NULL);
	fprintf(f, "all: run1 run2\nrun1: p1\n\t./p1 m1 70\nrun2: p2\n\t./p2 m2 90\n"
	           "p1 p2: prog.c\n\t%s -std=c11 %s -I'%s/../include' prog.c -o $@ -L'%s' "
	           "-lposixtrace -Wl,-rpath,'%s' -lpthread -ldl\n",
	        PT_TEST_CC, PT_TEST_SANFLAGS, PT_BUILD_DIR, PT_BUILD_DIR, PT_BUILD_DIR);
	fclose(f);
	snprintf(cmd, sizeof cmd, "make -s -j2 -C '%s'", dir);
	int rc = record_sh(log, NULL, cmd, &err);
	if (rc != 0)
		fprintf(stderr, "make: %s", err ? err : "");
	CHECK_EQ(rc, 0);
	free(err);
	static const struct want w[] = { { "m1", 70, 0 }, { "m2", 90, 0 } };
	check_log("make -j2", log, w, 2);
}

/* Two records of similar trees at once: each gets its own, nothing of
 * the other's. */
static void concurrent(void)
{
	char sc[2][16384];
	const char *log[2] = { cli_path("ca.ptlog"), cli_path("cb.ptlog") };
	pid_t p[2];

	for (int k = 0; k < 2; k++) {
		const char *x = k ? "b" : "a";
		snprintf(sc[k], sizeof sc[k],
		         "T='%s'; \"$T\" emit %s1 300 & \"$T\" emit %s2 200 & "
		         "sh -c '\"$0\" emit %s3 100' \"$T\"; wait", self, x, x, x);
	}
	fflush(NULL);
	for (int k = 0; k < 2; k++) {
		REQUIRE((p[k] = fork()) >= 0);
		if (p[k] == 0) {
			char *err;
			_exit(record_sh(log[k], NULL, sc[k], &err));
		}
	}
	for (int k = 0; k < 2; k++)
		CHECK_EQ(t_wait_for(p[k], 60000), 0);
	static const struct want wa[] = { { "a1", 300, 0 }, { "a2", 200, 0 }, { "a3", 100, 0 } };
	static const struct want wb[] = { { "b1", 300, 0 }, { "b2", 200, 0 }, { "b3", 100, 0 } };
	check_log("concurrent a", log[0], wa, 3);
	check_log("concurrent b", log[1], wb, 3);
}

/* The POSIXTRACE_JOIN a recorded shell wrote into the file val, once it
 * has (malloc'd), and "POSIXTRACE_JOIN=" it into env. */
static char *join_value(const char *val, char *env, size_t cap)
{
	char *v = NULL;
	for (int i = 0; i < 20000 && (!(v = cli_slurp(val)) || !*v); i++) {
		free(v);
		v = NULL;
		usleep(1000);
	}
	REQUIRE(v && *v);
	snprintf(env, cap, "POSIXTRACE_JOIN=%s", v);
	return v;
}

/* Let the recorded shell end (it waits for the file go), and its record. */
static void release(const char *go, pid_t record)
{
	FILE *f = fopen(go, "w");
	REQUIRE(f);
	fclose(f);
	CHECK_EQ(t_wait_for(record, 60000), 0);
}

/* A process outside the tree given a running record's POSIXTRACE_JOIN: as
 * another user it cannot open the recorder's descriptor (and records
 * nothing there); as the recorder's user it may, as it may ptrace it. */
static void forged(void)
{
	char sc[16384], *err;
	const char *log = cli_path("forged.ptlog"), *val = cli_path("join.val"),
	           *go = cli_path("forged.go");

	if (geteuid() != 0) {
		printf("forged variable: needs root to run as another user, skipped\n");
		return;
	}
	const char *copy = sec_copy(self, "tree_emit", 0755);
	snprintf(sc, sizeof sc,
	         "printf %%s \"$POSIXTRACE_JOIN\" > '%s'; \"%s\" emit in1 20; "
	         "while ! [ -e '%s' ]; do sleep 0.01; done", val, self, go);
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0)
		_exit(record_sh(log, NULL, sc, &err));
	char envv[300], *env[] = { envv, NULL }, *v = join_value(val, envv, sizeof envv);
	char *other[] = { (char *)copy, "emit", "other", "30", NULL };
	char *same[] = { (char *)copy, "emit", "same", "25", NULL };
	CHECK_EQ(cli_run_as(SEC_UID(3), other, NULL, NULL, env), 0); /* it runs, untraced */
	CHECK_EQ(cli_run_env(same, NULL, NULL, env), 0);
	/* a forged value naming this stream's fd but another inode: refused */
	unsigned long long ino = 0;
	const char *dot = strchr(strchr(v, '.') + 1, '.');
	REQUIRE(sscanf(dot + 1, "%llu", &ino) == 1);
	char bad[300], *bad_env[] = { bad, NULL }, *badv[] = { (char *)copy, "emit", "badino", "5",
	                                                       NULL };
	snprintf(bad, sizeof bad, "POSIXTRACE_JOIN=%.*s%llu%s", (int)(dot + 1 - v), v, ino + 1,
	         strchr(dot + 1, '.'));
	CHECK_EQ(cli_run_env(badv, NULL, NULL, bad_env), 0);
	release(go, p);
	free(v);
	static const struct want w[] = { { "in1", 20, 0 }, { "same", 25, 0 } };
	check_log("forged", log, w, 2);
}

/* A record run by a user: a root process given its POSIXTRACE_JOIN (which
 * root could open) does not join, one of the user's does. */
static void more_privileged(void)
{
	char sc[16384];

	if (geteuid() != 0)
		return;
	const char *dir = cli_path("user"), *copy = cli_path("tree_emit");
	REQUIRE(mkdir(dir, 0700) == 0 && chown(dir, SEC_UID(4), SEC_UID(4)) == 0);
	const char *log = cli_path("user/u.ptlog"), *val = cli_path("user/join.val"),
	           *go = cli_path("user/go");
	snprintf(sc, sizeof sc,
	         "printf %%s \"$POSIXTRACE_JOIN\" > '%s'; \"%s\" emit u1 20; "
	         "while ! [ -e '%s' ]; do sleep 0.01; done", val, copy, go);
	/* the command copied where the user can reach it, as tree_emit is (the
	 * build tree may be in a directory only root may enter) */
	char *ubin = (char *)sec_copy(bin, "posixtrace", 0755);
	char *argv[] = { ubin, "record", "-o", (char *)log, "--", "/bin/sh", "-c", sc, NULL };
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0)
		_exit(cli_run_as(SEC_UID(4), argv, NULL, NULL, NULL));
	char envv[300], *env[] = { envv, NULL }, *v = join_value(val, envv, sizeof envv);
	char *root[] = { (char *)copy, "emit", "root", "30", NULL };
	char *user[] = { (char *)copy, "emit", "user", "35", NULL };
	CHECK_EQ(cli_run_env(root, NULL, NULL, env), 0); /* it runs, untraced */
	CHECK_EQ(cli_run_as(SEC_UID(4), user, NULL, NULL, env), 0);
	release(go, p);
	free(v);
	static const struct want w[] = { { "u1", 20, 0 }, { "user", 35, 0 } };
	check_log("recorded by a user", log, w, 2);
}

/* live -- sh -c '...': the instrumented programs the shell runs are
 * printed, each from its constructor's event, as record records them. */
static void live_tree(void)
{
	char sc[8192], *out = NULL, *err = NULL;
	snprintf(sc, sizeof sc, "T='%s'; \"$T\" emit l1 30; \"$T\" emit l2 20 & wait", self);
	char *argv[] = { bin, "live", "--", "/bin/sh", "-c", sc, NULL };
	int rc = cli_run(argv, &out, &err);
	if (rc != 0)
		fprintf(stderr, "live: %s", err ? err : "");
	CHECK_EQ(rc, 0);
	REQUIRE(out);
	static const char *tag[] = { "l1", "l2" };
	static const int want[] = { 30, 20 };
	for (int k = 0; k < 2; k++) {
		int ctor = 0, evs = 0;
		char q[8];
		snprintf(q, sizeof q, "\"%s\"", tag[k]);
		for (char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			char *eol = strchr(l, '\n'), *hit = strstr(l, q);
			if (!hit || (eol && hit > eol))
				continue;
			char *name = strstr(l, "tree-");
			if (!name || (eol && name > eol))
				continue;
			ctor += strncmp(name, "tree-ctor ", 10) == 0;
			evs += strncmp(name, "tree-ev ", 8) == 0;
		}
		if (ctor != 1 || evs != want[k])
			fprintf(stderr, "live: %s: %d constructor events, %d of %d others\n", tag[k],
			        ctor, evs, want[k]);
		CHECK_EQ(ctor, 1);
		CHECK_EQ(evs, want[k]);
	}
	free(out);
	free(err);
}

/* What the processes p[0] and p[1] recorded into trid (this process's
 * own stream): tree-ev events of p[0], tree-tick events of p[1]. */
static void stream_counts(trace_id_t trid, const pid_t *p, int *evs, int *ticks)
{
	trace_event_id_t ev_id, tick_id;
	struct posix_trace_event_info ev;
	char data[64];
	size_t len;
	int unavail;
	*evs = *ticks = 0;
	REQUIRE(posix_trace_trid_eventid_open(trid, "tree-ev", &ev_id) == 0);
	REQUIRE(posix_trace_trid_eventid_open(trid, "tree-tick", &tick_id) == 0);
	while (posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len, &unavail) == 0 &&
	       !unavail) {
		*evs += ev.posix_pid == p[0] && posix_trace_eventid_equal(trid, ev.posix_event_id, ev_id);
		*ticks += ev.posix_pid == p[1] &&
		          posix_trace_eventid_equal(trid, ev.posix_event_id, tick_id);
	}
}

/* A request to join (what attach --tree writes into a running process's
 * control segment) is acted on by the process itself: a process of this
 * user joins and records exactly its events into the stream, asked again
 * it is in already; one of another user refuses (it cannot open this
 * process's descriptor, nor may it join another user's stream), frees
 * the slot (asked again, the request is new), and records nothing. */
static void join_requests(void)
{
	trace_attr_t attr;
	trace_id_t trid;
	char dir[300], path[400];

	if (geteuid() != 0) {
		printf("join requests: needs root to run as another user, skipped\n");
		return;
	}
	snprintf(dir, sizeof dir, "%s", cli_path("jr"));
	REQUIRE(mkdir(dir, 0777) == 0 && chmod(dir, 0777) == 0);
	const char *copy = cli_path("tree_emit");
	if (access(copy, X_OK) != 0)
		copy = sec_copy(self, "tree_emit", 0755);
	pid_t v[2];
	for (int k = 0; k < 2; k++) { /* k 0: this user; 1: another */
		char tag[8];
		snprintf(tag, sizeof tag, "j%d", k);
		fflush(NULL);
		REQUIRE((v[k] = fork()) >= 0);
		if (v[k] == 0) {
			char *argv[] = { (char *)copy, "wait", tag, "40", dir, NULL };
			_exit(cli_run_as(k ? SEC_UID(5) : 0, argv, NULL, NULL, NULL));
		}
		snprintf(path, sizeof path, "%s/%s.started", dir, tag);
		await_file(path);
	}
	/* the processes themselves (the children of cli_run_as) */
	pid_t p[2] = { 0, 0 };
	for (int k = 0; k < 2; k++) {
		char cmd[600];
		snprintf(cmd, sizeof cmd, "pgrep -P %d", (int)v[k]);
		FILE *f = popen(cmd, "r");
		REQUIRE(f && fscanf(f, "%d", &p[k]) == 1);
		pclose(f);
	}
	/* (made after they started: they did not inherit it) */
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 1 << 20) == 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	posix_trace_attr_destroy(&attr);
	int seen[2] = { 0, 0 };
	CHECK_EQ(pt_ext_join_pid(trid, p[0]), 0);
	CHECK_EQ(pt_ext_join_pid(trid, p[1]), 0);
	snprintf(path, sizeof path, "%s/j0.ready", dir);
	await_file(path); /* it joined */
	CHECK_EQ(pt_ext_join_pid(trid, p[0]), EEXIST);
	/* the other refuses: its slot is freed, so a new request is written */
	int rc = EEXIST;
	for (int i = 0; i < 5000 && rc == EEXIST; i++) {
		usleep(1000);
		rc = pt_ext_join_pid(trid, p[1]);
	}
	CHECK_EQ(rc, 0);
	snprintf(path, sizeof path, "%s/go", dir);
	touch(path);
	snprintf(path, sizeof path, "%s/j0.done", dir);
	await_file(path);
	CHECK_EQ(t_wait_for(v[0], 60000), 0);
	kill(p[1], SIGKILL);
	t_wait_for(v[1], 60000);
	stream_counts(trid, p, &seen[0], &seen[1]);
	CHECK_EQ(seen[0], 40);
	CHECK_EQ(seen[1], 0); /* nothing of the other: its ticks would be here */
	REQUIRE(posix_trace_shutdown(trid) == 0);
}

/* attach --tree -o log pid, in the background. */
static pid_t attach_tree_start(const char *log, pid_t pid)
{
	char p[16];
	snprintf(p, sizeof p, "%d", (int)pid);
	fflush(NULL);
	pid_t a = fork();
	REQUIRE(a >= 0);
	if (a == 0) {
		char *err = NULL;
		char *argv[] = { bin, "attach", "--tree", "-o", (char *)log, p, NULL };
		int rc = cli_run(argv, NULL, &err);
		if (rc != 0)
			fprintf(stderr, "attach --tree: %s", err ? err : "");
		_exit(rc);
	}
	return a;
}

/* A running program that uses the library, attached with --tree: a
 * descendant it started before (through a shell that does not use the
 * library) is asked to join and does, from then on; what it starts after
 * (system(), a shell, a double fork) joins from its first event through
 * the environment; a process outside the tree, recording meanwhile, is
 * not in the log. */
static void attach_tree(void)
{
	char before[8192], after[8192], dir[300];
	const char *log = cli_path("attach.ptlog");

	snprintf(dir, sizeof dir, "%s", cli_path("at"));
	REQUIRE(mkdir(dir, 0755) == 0);
	snprintf(before, sizeof before, "\"%s\" wait x1 30 \"%s\"; :", self, dir);
	snprintf(after, sizeof after,
	         "T='%s'; D='%s'; \"$T\" emit c1 100; "
	         "( \"$T\" emit c2 50 && : > \"$D/c2.done\" & ); "
	         "while ! [ -e \"$D/c2.done\" ] || ! [ -e \"$D/x1.done\" ]; do sleep 0.01; done",
	         self, dir);
	fflush(NULL);
	pid_t root = fork();
	REQUIRE(root >= 0);
	if (root == 0) {
		execl(self, self, "root", dir, before, after, (char *)NULL);
		_exit(127);
	}
	/* attached once the earlier descendant is there to be found */
	char ready[400], go[400];
	snprintf(ready, sizeof ready, "%s/x1.started", dir);
	await_file(ready);
	pid_t a = attach_tree_start(log, root);
	snprintf(ready, sizeof ready, "%s/root.ready", dir);
	await_file(ready);
	snprintf(ready, sizeof ready, "%s/x1.ready", dir);
	await_file(ready);
	/* outside the tree: records as much meanwhile, and is not in the log */
	char *outside[] = { self, "emit", "out", "200", NULL };
	snprintf(go, sizeof go, "%s/go", dir);
	touch(go);
	CHECK_EQ(cli_run(outside, NULL, NULL), 0);
	CHECK_EQ(t_wait_for(root, 60000), 0);
	CHECK_EQ(t_wait_for(a, 60000), 0);
	static const struct want w[] = { { "x1", 30, 1 }, { "c1", 100, 0 }, { "c2", 50, 0 } };
	check_log("attach --tree", log, w, 3);
}

/* A shell that does not use the library, attached with --tree: its
 * descendant that does, running before, and one it starts after (whose
 * environment names nothing: it is found in /proc and asked) join. */
static void attach_tree_shell(void)
{
	char sc[8192], dir[300], ready[400], go[400];
	const char *log = cli_path("attach_sh.ptlog");

	snprintf(dir, sizeof dir, "%s", cli_path("ash"));
	REQUIRE(mkdir(dir, 0755) == 0);
	snprintf(ready, sizeof ready, "%s/y1.ready", dir);
	snprintf(go, sizeof go, "%s/go", dir);
	snprintf(sc, sizeof sc,
	         "T='%s'; D='%s'; \"$T\" wait y1 40 \"$D\" & "
	         "while ! [ -e \"$D/started\" ]; do sleep 0.01; done; "
	         "\"$T\" wait y2 20 \"$D\"; wait", self, dir);
	fflush(NULL);
	pid_t sh = fork();
	REQUIRE(sh >= 0);
	if (sh == 0) {
		execl("/bin/sh", "sh", "-c", sc, (char *)NULL);
		_exit(127);
	}
	pid_t a = attach_tree_start(log, sh);
	char started[400];
	snprintf(started, sizeof started, "%s/started", dir);
	await_file(ready); /* y1 joined: attach runs */
	touch(started);
	snprintf(ready, sizeof ready, "%s/y2.ready", dir);
	await_file(ready);
	touch(go);
	CHECK_EQ(t_wait_for(sh, 60000), 0);
	CHECK_EQ(t_wait_for(a, 60000), 0);
	static const struct want w[] = { { "y1", 40, 1 }, { "y2", 20, 1 } };
	check_log("attach --tree of a shell", log, w, 2);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "emit") == 0)
		return emit_main(argv);
	if (argc >= 5 && strcmp(argv[1], "wait") == 0)
		return wait_main(argv);
	if (argc >= 5 && strcmp(argv[1], "root") == 0)
		return root_main(argv);
	T_BEGIN(180);
	if (geteuid() == 0)
		sec_setup();
	else
		cli_setup();
	REQUIRE(realpath("/proc/self/exe", self) != NULL);
	REQUIRE(realpath(cli_bin, bin) != NULL);
	script_run();
	exec_chain_and_double_fork();
	concurrent();
	forged();
	more_privileged();
	make_j2();
	live_tree();
	attach_tree();
	attach_tree_shell();
	join_requests();
	T_END();
}
