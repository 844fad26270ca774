/*
 * cli_tree_users.c -- a process tree's record and other users (issue 35):
 * a process outside the tree given the variable of a stream of another
 * user records nothing there (and, as the same user, does: the check is
 * the kernel's ptrace rule, not secrecy); a root process given the
 * variable of a user's record does not join it either.  A request to join
 * written into a process's control segment: one of this user joins and
 * records exactly its events; one of another user refuses and records
 * nothing.  Needs root (to run as other users); else each case says it is
 * skipped. *
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

static void run(void)
{
	forged();
	more_privileged();
	join_requests();
}

int main(int argc, char **argv)
{
	return tree_main(argc, argv, run);
}
