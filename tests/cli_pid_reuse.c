/*
 * cli_pid_reuse.c -- processes that were given one pid are told apart.
 *
 * The kernel gives a gone process's pid to a new one: after pid_max forks
 * (a service recorded for days that forks a worker per request), or at
 * once.  Here it is at once, in a PID namespace of the test's own (with a
 * /proc of its own), through /proc/sys/kernel/ns_last_pid: `posixtrace
 * record` traces a service (this test again) that starts four processes
 * in turn, each given the same pid:
 *
 *   C  started with posix_spawn (no fork handlers), joins the recording
 *      through its environment and records 6 (a PROC entry that begins a
 *      process);
 *   A  forked, records 5 events and exits, its chunk open;
 *   A2 forked, records 2: the same writer as A (pid and pthread_t, the
 *      service's main thread's), its chunk queued behind A's open one,
 *      which nobody will seal (the reader gives it back: reader/read.c,
 *      service(); A2's events were lost, and not counted, before);
 *   B  forked, records 3 (again behind A's chunk), execs this test again
 *      and records 4 more: one process across its exec (its PROC entry
 *      goes on from its FORK's), its first image's chunk given back once
 *      its new image began (reader/read.c, alive()).
 *
 * The log then holds 4 processes of that pid, of 6, 5, 2 and 7 events,
 * and every reading of it says so: record's closing line, `info` (from
 * the log's summary), `stats --json` (reading the events, in batches),
 * `show --processes`, the SQL process table, the Chrome export, and the
 * same recording cut into parts (record --rotate) read as one.  Without
 * a way to make a PID namespace (not root, no user namespaces) the test
 * skips.
 *
 * And without a namespace: a forked child that records 3 events, execs
 * and records 4 more is one process of 7 events (its PROC entry after
 * the exec goes on from the one before: PT_EXT_OBJ_CONT); and a log
 * written here as a service's would be after pid_max forks: 1000
 * children on 100 pids, each pid given to 10 of them, all with one
 * pthread_t, several in each block of the log (a reading in batches
 * cuts a batch where one of them begins; the log's summary counts a
 * writer of 10 processes, so the totals are read from the events).
 */
#include <errno.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"
#include "../src/log/log.h"

extern char **environ;

#define REUSED 200 /* the pid the three are given */

static const char *self;

static void emit(const char *name, int n)
{
	trace_event_id_t id;
	if (posix_trace_eventid_open(name, &id) != 0)
		_exit(3);
	for (int i = 0; i < n; i++)
		posix_trace_event(id, &i, sizeof i);
}

/* The next process made gets pid REUSED (it is free: the one before was
 * waited for). */
static int next_is_reused(void)
{
	char v[16];
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int n = snprintf(v, sizeof v, "%d", REUSED - 1);
	int ok = write(fd, v, (size_t)n) == n;
	close(fd);
	return ok ? 0 : -1;
}

static int reaped(pid_t p)
{
	int st;
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* A forked child (with pid REUSED when reuse) that records n events of
 * name and, with exec, runs this test again with --after-exec: 0 once it
 * ended well; 1 it could not be made (there), 2 it had another pid or
 * ended badly. */
static int child(int reuse, const char *name, int n, int exec)
{
	pid_t p;

	if ((reuse && next_is_reused()) || (p = fork()) < 0)
		return 1;
	if (p == 0) {
		emit(name, n);
		if (exec)
			execl(self, self, "--after-exec", (char *)NULL);
		_exit(exec ? 4 : 0);
	}
	return (reuse && p != REUSED) || !reaped(p) ? 2 : 0;
}

/* The traced service: C, A, A2 and B in turn.  Exit status 0 when each
 * had pid REUSED and ended well. */
static int service(void)
{
	pid_t p;
	int rc;

	emit("svc", 2);
	char *argv[] = { (char *)self, "--spawned", NULL };
	if (next_is_reused() || posix_spawn(&p, self, NULL, NULL, argv, environ) != 0)
		return 14;
	if (p != REUSED || !reaped(p))
		return 15;
	if ((rc = child(1, "a", 5, 0)) != 0)
		return 10 + rc;
	if ((rc = child(1, "a2", 2, 0)) != 0)
		return 20 + rc;
	if ((rc = child(1, "b", 3, 1)) != 0)
		return 30 + rc;
	emit("svc", 1);
	return 0;
}

static const char *rec_err; /* record's stderr: its closing summary */

/* pid 1 of the namespace: /proc of its own, then `posixtrace record`,
 * waited for (and every orphan reaped meanwhile).  Its status. */
static int ns_init(char *const *rec)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		return 70;
	pid_t r = fork();
	if (r < 0)
		return 71;
	if (r == 0) {
		int fd = open(rec_err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(72);
		execv(cli_bin, rec);
		_exit(72);
	}
	for (;;) {
		int st;
		pid_t w = wait(&st);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return 73;
		if (w == r)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 74;
	}
}

/* In a child of the test (a process whose PID namespace's first process
 * has ended can fork no more): the namespaces, then their first process.
 * Its status; 69 no namespace (the reason on stderr). */
static int ns_run(char *const *rec)
{
	int flags = CLONE_NEWPID | CLONE_NEWNS;
	if (unshare(flags) != 0) {
		int e = errno;
		if (unshare(flags | CLONE_NEWUSER) != 0) {
			fprintf(stderr, "no PID namespace here (%s; as a user: %s)\n", strerror(e),
			        strerror(errno));
			return 69;
		}
	}
	pid_t init = fork();
	if (init < 0)
		return 69;
	if (init == 0) {
		alarm(120);
		_exit(ns_init(rec));
	}
	int st;
	while (waitpid(init, &st, 0) < 0)
		if (errno != EINTR)
			return 75;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 76;
}

/* `posixtrace record ARGS... -- self --service` in a PID and mount
 * namespace of its own: its status, or -1 when no namespace can be made
 * here (*why says why). */
static int record_in_ns(char *const *rec, char *why, size_t cap)
{
	fflush(NULL);
	pid_t r = fork();
	REQUIRE(r >= 0);
	if (r == 0)
		_exit(ns_run(rec));
	int st;
	while (waitpid(r, &st, 0) < 0)
		REQUIRE(errno == EINTR);
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 77;
	if (rc == 69 || rc == 70) {
		snprintf(why, cap, rc == 69 ? "no PID namespace can be made here"
		                            : "cannot mount a /proc of the namespace's own");
		return -1;
	}
	return rc;
}

/* The counts of the processes of pid REUSED in `stats --json`, sorted. */
static int reused_counts(const char *out, int *c, int cap)
{
	char key[32];
	int n = 0;
	const char *s = strstr(out, "\"processes\":["), *end = s ? strstr(s, "\"threads\":[") : NULL;
	snprintf(key, sizeof key, "{\"pid\":%d,", REUSED);
	for (; s && (s = strstr(s, key)) != NULL && s < end && n < cap; s++) {
		const char *k = strstr(s, "\"count\":");
		if (k)
			c[n++] = atoi(k + 8);
	}
	for (int i = 1; i < n; i++) /* (a sort by insertion) */
		for (int j = i; j > 0 && c[j] < c[j - 1]; j--) {
			int t = c[j];
			c[j] = c[j - 1], c[j - 1] = t;
		}
	return n;
}

/* ------------------------------------------- a log of 1000 children */
#define KIDS 1000
#define PIDS 100
#define SVC  5000
#define T0   1700000000000000000ull

/* (tests/helpers.c) */
#define entry(w, kind, pid, ts, lo, flags, path) \
	CHECK_RC(t_log_entry(w, kind, pid, ts, 0, lo, 0, flags, path), 0)

static void write_wrapped(const char *path, int kids, int pids)
{
	struct pt_logw w;
	int fd = t_log_create(path, &w, 256);
	CHECK_RC(pt_logw_name(&w, 20, "job"), 0);
	entry(&w, PT_EXT_OBJ_PROC, SVC, T0, 1, 0, "service");
	CHECK_RC(pt_logw_event(&w, T0 + 10, SVC, 0x7000, 0, 20, 0, NULL, 0), 0);
	for (int i = 0; i < kids; i++) {
		int32_t pid = 10000 + i % pids;
		uint64_t ts = T0 + 1000ull * (uint64_t)(i + 1);
		char s[64];
		entry(&w, PT_EXT_OBJ_FORK, pid, ts, SVC, 0, "");
		snprintf(s, sizeof s, "service --kid %d", i);
		entry(&w, PT_EXT_OBJ_PROC, pid, ts + 1, SVC, PT_EXT_OBJ_CONT, s);
		for (int k = 0; k < 3; k++) /* (the fork child's pthread_t: its parent's) */
			CHECK_RC(pt_logw_event(&w, ts + 100 + (uint64_t)k, pid, 0x7000, 0, 20, 0, &i,
			                       sizeof i), 0);
	}
	CHECK_RC(t_log_close(&w, fd), 0);
}

static void check_wrapped(void)
{
	const char *log = cli_path("wrapped.ptlog");
	char *out = NULL, *err = NULL;
	write_wrapped(log, KIDS, PIDS);
	CHECK_EQ(cli_run(CLI("stats", "--json", (char *)log), &out, &err), 0);
	const char *pr = out ? strstr(out, "\"processes\":[") : NULL;
	const char *th = pr ? strstr(pr, "\"threads\":[") : NULL;
	int rows = 0, threes = 0;
	for (const char *s = pr; s && (s = strstr(s, "{\"pid\":")) != NULL && s < th; s++) {
		rows++;
		threes += !strncmp(strstr(s, "\"count\":"), "\"count\":3,", 10);
	}
	CHECK_EQ(rows, KIDS + 1);
	CHECK_EQ(threes, KIDS);
	/* the ten of pid 10042 each with its own first event, in order */
	const char *s = pr;
	for (int j = 0; j < KIDS / PIDS; j++) {
		char want[96];
		snprintf(want, sizeof want, "{\"pid\":10042,\"threads\":1,\"count\":3,");
		s = s ? strstr(s, want) : NULL;
		const char *f = s ? strstr(s, "\"first_ns\":") : NULL;
		CHECK(f && f < th);
		CHECK_EQ(f ? strtoull(f + 11, NULL, 10) : 0,
		         T0 + 1000ull * (uint64_t)(42 + PIDS * j + 1) + 100);
		s = s ? s + 1 : NULL;
	}
	free(out), free(err);
	/* and in the text (time 0: the service's first event, T0 + 10) */
	CHECK_EQ(cli_run(CLI("stats", "--rows", "0", (char *)log), &out, &err), 0);
	int seen = 0;
	char line[256];
	for (const char *p = out; p && cli_next_line(&p, line, sizeof line) == 0;) {
		char want[32];
		size_t len = strlen(line);
		if (strncmp(line, "10042 ", 6))
			continue;
		snprintf(want, sizeof want, " 0.000%06d",
		         1000 * (42 + PIDS * seen + 1) + 100 - 10);
		CHECK(len > strlen(want) && !strcmp(line + len - strlen(want), want));
		if (len <= strlen(want) || strcmp(line + len - strlen(want), want))
			fprintf(stderr, "row %d of pid 10042: \"%s\", not ending \"%s\"\n", seen,
			        line, want);
		seen++;
	}
	CHECK_EQ(seen, KIDS / PIDS);
	free(out), free(err);
	CHECK_EQ(cli_run(CLI("info", "--rows", "0", (char *)log), &out, &err), 0);
	CHECK(out && cli_contains(out, "processes (1001)"));
	CHECK_EQ(out ? cli_count_str(out, "\n     10042      5000        1           3  ") : 0, 10);
	CHECK(out && cli_contains(out, "service --kid 942\n"));
	free(out), free(err);
}

/* 515 processes of one pid: in Chrome's JSON the first 511 after the
 * first have a pid of their own (pid + k 2^22 stays an int32 up to k =
 * 511), and from the 512th on they share the last one, named so. */
#define MANY 515
static void check_many(void)
{
	const char *log = cli_path("many.ptlog"), *json = cli_path("many.json");
	char key[48], name[64];
	write_wrapped(log, MANY, 1);
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", "--force", "-o", (char *)json,
	                     (char *)log), NULL, NULL), 0);
	char *j = cli_slurp(json);
	REQUIRE(j);
	for (int k = 1; k < 511; k++) {
		snprintf(name, sizeof name, "(process %d of pid 10000)\"", k + 1);
		snprintf(key, sizeof key, "\"pid\":%d,", 10000 + (k << 22));
		CHECK_EQ(cli_count_str(j, name), 1);
		CHECK_EQ(cli_count_str(j, key), 3 + 1 + 3); /* events, thread name, metadata */
	}
	snprintf(name, sizeof name, "(process 512 of pid 10000)");
	CHECK_EQ(cli_count_str(j, name), 0);
	snprintf(name, sizeof name, "(process 512 or later of pid 10000)\"");
	CHECK_EQ(cli_count_str(j, name), MANY - 511);
	snprintf(key, sizeof key, "\"pid\":%d,", 10000 + (511 << 22));
	CHECK_EQ(cli_count_str(j, key), (MANY - 511) * (3 + 1 + 3));
	free(j);
}

static void check_reading(const char *log)
{
	char *out = NULL, *err = NULL;
	int c[8];

	/* the events read (in batches) */
	CHECK_EQ(cli_run((char *const[]){ (char *)cli_bin, "stats", "--json", (char *)log, NULL },
	                 &out, &err), 0);
	int n = out ? reused_counts(out, c, 8) : 0;
	if (n != 4 || c[0] != 2 || c[1] != 5 || c[2] != 6 || c[3] != 7)
		fprintf(stderr, "%s: stats --json:\n%s\n%s\n", log, out ? out : "", err ? err : "");
	CHECK_EQ(n, 4);
	CHECK(n == 4 && c[0] == 2 && c[1] == 5 && c[2] == 6 && c[3] == 7);
	free(out), free(err);

	/* the totals (the log's summary, or a pass when it cannot tell) */
	CHECK_EQ(cli_run((char *const[]){ (char *)cli_bin, "info", (char *)log, NULL }, &out, &err),
	         0);
	CHECK(out && cli_contains(out, "processes (5)"));
	if (!out || !cli_contains(out, "processes (5)"))
		fprintf(stderr, "%s: info:\n%s\n%s\n", log, out ? out : "", err ? err : "");
	free(out), free(err);

	/* one event at a time, each on its process's lane */
	CHECK_EQ(cli_run((char *const[]){ (char *)cli_bin, "show", "--processes", (char *)log, NULL },
	                 &out, &err), 0);
	char want[64];
	snprintf(want, sizeof want, "\n  %8d  ", REUSED); /* (a row of the table) */
	int rows = out ? cli_count_str(out, want) : 0;
	if (rows != 4)
		fprintf(stderr, "%s: show --processes:\n%s\n%s\n", log, out ? out : "", err ? err : "");
	CHECK_EQ(rows, 4);
	free(out), free(err);

	/* Chrome's JSON, where a viewer keys a process by its pid: the later
	 * three get pids of their own above any real one (pid + k 2^22),
	 * named after the real one, their events and threads under them */
	const char *json = cli_path("reuse.json");
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", "--force", "-o", (char *)json,
	                     (char *)log), NULL, NULL), 0);
	char *j = cli_slurp(json);
	char k1[32], k2[32], k3[32];
	snprintf(k1, sizeof k1, "\"pid\":%d,", REUSED + (1 << 22));
	snprintf(k2, sizeof k2, "\"pid\":%d,", REUSED + (2 << 22));
	snprintf(k3, sizeof k3, "\"pid\":%d,", REUSED + (3 << 22));
	CHECK(j && cli_contains(j, "(process 2 of pid 200)") && cli_contains(j, "(process 4 of pid 200)"));
	/* each: its events, its threads' names, its process's three metadata */
	CHECK_EQ(j ? cli_count_str(j, k1) : 0, 5 + 1 + 3); /* A, the second given the pid */
	CHECK_EQ(j ? cli_count_str(j, k2) : 0, 2 + 1 + 3); /* A2 */
	CHECK_EQ(j ? cli_count_str(j, k3) : 0, 7 + 2 + 3); /* B, two images */
	free(j);
}

int main(int argc, char **argv)
{
	char why[300];

	self = argv[0];
	if (argc > 1 && !strcmp(argv[1], "--service"))
		return service();
	if (argc > 1 && !strcmp(argv[1], "--exec-chain")) /* (no namespace) */
		return child(0, "b", 3, 1);
	if (argc > 1 && !strcmp(argv[1], "--after-exec")) {
		emit("b2", 4);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--spawned")) {
		emit("c", 6);
		return 0;
	}
	alarm(300);
	cli_setup();
	if ((self = realpath(argv[0], NULL)) == NULL)
		T_SKIP("cannot find this program's path");
	check_wrapped();
	check_many();

	/* one process across its exec, pid reused or not */
	const char *chain = cli_path("chain.ptlog");
	char *out = NULL;
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)chain, "--", (char *)self, "--exec-chain"), NULL,
	                 NULL), 0);
	CHECK_EQ(cli_run(CLI("stats", "--json", (char *)chain), &out, NULL), 0);
	CHECK(out && cli_contains(out, "\"threads\":2,\"count\":7,"));
	if (!out || !cli_contains(out, "\"threads\":2,\"count\":7,"))
		fprintf(stderr, "exec chain: %s\n", out ? out : "");
	free(out);

	const char *log = cli_path("reuse.ptlog"), *dir = cli_path("parts");
	rec_err = cli_path("record.err");
	char *rec[] = { (char *)cli_bin, "record", "-o", (char *)log, "--",
	                (char *)self, "--service", NULL };
	int rc = record_in_ns(rec, why, sizeof why);
	if (rc < 0)
		T_SKIP(why);
	CHECK_EQ(rc, 0);
	check_reading(log);

	char *said = cli_slurp(rec_err); /* record's closing summary */
	CHECK(said && cli_contains(said, "from 5 processes"));
	if (!said || !cli_contains(said, "from 5 processes"))
		fprintf(stderr, "record said:\n%s\n", said ? said : "");
	free(said);

	/* the SQL process table: three rows of that pid (when the command
	 * has SQL) */
	char *qerr = NULL;
	int sql_ok = cli_run(CLI("query", "/dev/null", "SELECT 1"), NULL, &qerr) == 0 ||
	             !cli_contains(qerr ? qerr : "", "without SQLite");
	free(qerr);
	if (sql_ok) {
		char sql[200];
		snprintf(sql, sizeof sql,
		         "select count(*), count(distinct upid), sum(count) from process where pid = %d",
		         REUSED);
		char *csv = cli_query_csv(log, sql);
		if (csv) {
			CHECK(cli_contains(csv, "4,4,20"));
			if (!cli_contains(csv, "4,4,20"))
				fprintf(stderr, "query: %s\n", csv);
			free(csv);
		}
	}

	/* the same recording cut into parts, read as one */
	char *rot[] = { (char *)cli_bin, "record", "--rotate", "64K", "-o", (char *)dir, "--",
	                (char *)self, "--service", NULL };
	CHECK_EQ(record_in_ns(rot, why, sizeof why), 0);
	check_reading(dir);
	T_END();
}
