/*
 * cli_tree.c -- `posixtrace record` traces every process below the program
 * that uses the library, whatever runs in between (issue 35): a shell
 * script running three instrumented programs in sequence and two in
 * parallel, `make -j2` building and running instrumented programs, an exec
 * chain through env, a double fork; two records of similar trees at the
 * same time each get exactly their own processes; --no-inherit the
 * program alone.  `live -- sh -c ...` shows the same tree.  The tree read
 * back from show --processes and the exports (node, protoc, babeltrace2):
 * parent, command line, events per process.  Processes of other users:
 * cli_tree_users.c; `attach --tree`: cli_tree_attach.c. *
 * The instrumented program is this test (tree_util.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "sec_util.h"
#include "tree_util.h"
#include "../src/ext.h"

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

static void run(void)
{
	script_run();
	exec_chain_and_double_fork();
	concurrent();
	make_j2();
	live_tree();
}

int main(int argc, char **argv)
{
	return tree_main(argc, argv, run);
}
