/*
 * cli_tree_attach.c -- `attach --tree` (issue 35) of a running program
 * that uses the library, and of a shell that does not: the descendants
 * running at attach time join when asked (from then on), and those
 * started after join too (from their constructor where the environment
 * could tell them), and nothing from outside the tree. *
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

static void run(void)
{
	attach_tree();
	attach_tree_shell();
}

int main(int argc, char **argv)
{
	return tree_main(argc, argv, run);
}
