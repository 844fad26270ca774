/*
 * tree_util.h -- what the tests of tracing a process tree share
 * (cli_tree*.c): the instrumented program, which is the test itself
 * ("emit TAG N": one event from a constructor and N from main, each
 * carrying TAG; "wait TAG N DIR": a process running before `attach
 * --tree`, or started where no environment tells it, that records once
 * asked to join; "root DIR BEFORE AFTER": a program that uses the library
 * and starts BEFORE, then, once attached, AFTER), a log checked against
 * what each tag wants (exactly 1 + N events, all from one process, and no
 * other tag), `record` of a shell script, and the tests' main.  Needs t.h
 * and sec_util.h first.
 */
#ifndef PT_TREE_UTIL_H
#define PT_TREE_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

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
static inline void await_file(const char *path)
{
	for (int ms = 0; access(path, F_OK) != 0; ms++) {
		if (ms > HELPER_WAIT_MS)
			exit(1);
		usleep(1000);
	}
}

static inline void touch(const char *path)
{
	FILE *f = fopen(path, "w");
	if (f)
		fclose(f);
}

/* Until this process's environment names a stream (it joined one, or a
 * stream that traces a tree reached it): an event now and then, which is
 * when the library looks at its control segment. */
static inline void until_joined(void)
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
static inline int wait_main(char **argv)
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
static inline int root_main(char **argv)
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

static inline int emit_main(char **argv)
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

static inline void check_log(const char *what, const char *log, const struct want *w, int nw)
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
static inline int record_sh(const char *log, const char *opt, const char *script, char **err)
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

/* A test's main: the instrumented program when it runs as one, else the
 * set-up (as root: to run as other users too), self and bin (the
 * command), and run(), under an alarm. */
static inline int tree_main(int argc, char **argv, void (*run)(void))
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
	run();
	T_END();
}
#endif
