/*
 * cli_record.c -- `posixtrace record`: examples/app recorded from its
 * constructor on, its threads and its forked child included; the exit
 * status passed through (a code, and 128+N for a signal); the summary; the
 * log read back with posix_trace_open() has every event; info lists the
 * app's loaded code (no FILE.maps any more); --exclude and --no-inherit; an existing -o is not
 * overwritten without --force; a program that cannot run; SIGTERM to the
 * command reaches the program and the log is kept; usage errors exit 2;
 * every command's --help (and -h) prints its usage and exits 0.  The log is
 * created with mode 0600 (under umask 022, which would let 0644 through),
 * by record and by attach, and a log replaced with --force is made 0600
 * too.  Started with SIGCHLD ignored (which makes the kernel reap children
 * unseen), record still sees its program end, passes its status through,
 * and the program starts with SIGCHLD ignored as it would untraced.
 */
#include <signal.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

/* The permission bits of path (-1: no such file). */
static int mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

static void check_app_log(const char *log, int inherit, int ticks)
{
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev);
	pid_t app = 0, child = 0;

	CHECK_EQ(cli_count(ev, n, "app_start"), 1);
	CHECK_EQ(cli_count(ev, n, "request"), 60);
	CHECK_EQ(cli_count(ev, n, "reply"), 60);
	CHECK_EQ(cli_count(ev, n, "tick"), ticks);
	CHECK_EQ(cli_count(ev, n, "child_step"), inherit ? 5 : 0);
	CHECK_EQ(cli_count(ev, n, "posix_trace_start"), 1);
	CHECK_EQ(cli_count(ev, n, "posix_trace_overflow"), 0);
	for (int i = 0; i < n; i++) {
		if (!strcmp(ev[i].name, "app_start")) {
			app = ev[i].info.posix_pid;
			CHECK(ev[i].len == 11 && memcmp(ev[i].data, "constructor", 11) == 0);
		}
		if (!strcmp(ev[i].name, "child_step"))
			child = ev[i].info.posix_pid;
	}
	CHECK(app > 0);
	if (inherit)
		CHECK(child > 0 && child != app);
	/* the first event of the program is its constructor's */
	for (int i = 0; i < n; i++)
		if (ev[i].info.posix_pid == app) {
			CHECK(strcmp(ev[i].name, "app_start") == 0);
			break;
		}
	free(ev);
}

/* record started with SIGCHLD ignored, the program's stdout in out_file:
 * its exit status, or -1 if it had not ended after 20 s (killed then). */
static int record_chld_ignored(const char *log, const char *out_file, char *const prog[])
{
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int o = open(out_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || dup2(o, 1) < 0)
			_exit(126);
		signal(SIGCHLD, SIG_IGN);
		char *argv[16] = { (char *)cli_bin, "record", "--force", "-o", (char *)log, "--" };
		int k = 6;
		for (int i = 0; prog[i] && k < 15; i++)
			argv[k++] = prog[i];
		argv[k] = NULL;
		execv(cli_bin, argv);
		_exit(126);
	}
	int st;
	for (int i = 0; i < 2000; i++) {
		pid_t p = waitpid(pid, &st, WNOHANG);
		REQUIRE(p >= 0);
		if (p == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	REQUIRE(waitpid(pid, &st, 0) == pid);
	return -1;
}

int main(void)
{
	char *out = NULL, *err = NULL;
	int rc;

	T_BEGIN(120);
	cli_setup();
	umask(022);
	const char *log = cli_path("app.ptlog");

	/* status passthrough, summary, the log, the maps */
	rc = cli_run(CLI("record", "-o", (char *)log, "--", (char *)cli_app, "3"), &out, &err);
	CHECK_EQ(rc, 3);
	CHECK(cli_contains(err, "140 events of 9 types from 2 processes (5 threads)"));
	CHECK(cli_contains(err, "no events lost"));
	CHECK(!cli_contains(err, "recorded no events of its own"));
	if (!cli_contains(err, "140 events"))
		fprintf(stderr, "summary: %s\n", err ? err : "(none)");
	free(out);
	free(err);
	check_app_log(log, 1, 10);
	/* the map of loaded code is in the log: no FILE.maps any more */
	CHECK(access(cli_path("app.ptlog.maps"), F_OK) != 0);
	char *info = NULL;
	CHECK_EQ(cli_run(CLI("info", (char *)log), &info, NULL), 0);
	CHECK(cli_contains(info, "\nloaded code (") && cli_contains(info, "/examples/app\n"));
	CHECK(cli_contains(info, "/libc.so.6\n"));
	free(info);
	CHECK_EQ(mode_of(log), 0600);

	/* an existing log is kept unless --force */
	rc = cli_run(CLI("record", "-o", (char *)log, "--", (char *)cli_app), NULL, &err);
	CHECK_EQ(rc, 1);
	CHECK(cli_contains(err, log) && cli_contains(err, "--force"));
	free(err);
	check_app_log(log, 1, 10);
	rc = cli_run(CLI("record", "--force", "-o", (char *)log, "--exclude", "tick",
	                 "--no-inherit", "--", (char *)cli_app), NULL, NULL);
	CHECK_EQ(rc, 0);
	check_app_log(log, 0, 0);

	/* a log another tool made readable, replaced with --force: private again */
	CHECK_EQ(chmod(log, 0644), 0);
	rc = cli_run(CLI("record", "--force", "-o", (char *)log, "--", (char *)cli_app), NULL, NULL);
	CHECK_EQ(rc, 0);
	CHECK_EQ(mode_of(log), 0600);

	/* attach creates its log 0600 as well */
	{
		char pidarg[16];
		const char *alog = cli_path("attach.ptlog");
		pid_t app = cli_spawn_app();
		usleep(100000);
		snprintf(pidarg, sizeof pidarg, "%d", (int)app);
		CHECK_EQ(cli_run(CLI("attach", "-o", (char *)alog, "-d", "0.1", pidarg), NULL, NULL), 0);
		kill(app, SIGKILL);
		REQUIRE(waitpid(app, NULL, 0) == app);
		CHECK_EQ(mode_of(alog), 0600);
	}

	/* stream and log policies */
	rc = cli_run(CLI("record", "--force", "-o", (char *)log, "--policy", "loop", "--size", "1M",
	                 "--log-policy", "until-full", "--log-size", "4M", "--", (char *)cli_app),
	             NULL, NULL);
	CHECK_EQ(rc, 0);
	check_app_log(log, 1, 10);

	/* a program killed by a signal: 128 + N; it need not use the library */
	rc = cli_run(CLI("record", "-o", (char *)cli_path("sh.ptlog"), "--", "/bin/sh", "-c",
	                 "kill -TERM $$"), NULL, &err);
	CHECK_EQ(rc, 128 + SIGTERM);
	CHECK(cli_contains(err, "sh.ptlog"));
	/* ... and the summary says it recorded nothing, and why that may be */
	CHECK(cli_contains(err, "recorded no events of its own: is it linked with libposixtrace"));
	free(err);

	/* a program that cannot run */
	rc = cli_run(CLI("record", "-o", (char *)cli_path("none.ptlog"), "--",
	                 "/nonexistent/program"), NULL, &err);
	CHECK_EQ(rc, 127);
	CHECK(cli_contains(err, "/nonexistent/program"));
	CHECK(access(cli_path("none.ptlog"), F_OK) != 0);
	free(err);
	/* a file that is not executable: 126, as shells say (127: not found) */
	rc = cli_run(CLI("record", "-o", (char *)cli_path("notx.ptlog"), "--", "/etc/passwd"), NULL,
	             &err);
	CHECK_EQ(rc, 126);
	CHECK(cli_contains(err, "/etc/passwd") && cli_contains(err, "Permission denied"));
	CHECK(access(cli_path("notx.ptlog"), F_OK) != 0);
	free(err);

	/* SIGTERM to the command: forwarded, the log is finished and kept */
	{
		const char *slog = cli_path("sleep.ptlog");
		char ef[300];
		snprintf(ef, sizeof ef, "%s/sleep.err", cli_dir);
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			int e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			dup2(e, 2);
			execl(cli_bin, cli_bin, "record", "-o", slog, "--", "/bin/sleep", "30",
			      (char *)NULL);
			_exit(126);
		}
		usleep(300000);
		kill(pid, SIGTERM);
		int st;
		REQUIRE(waitpid(pid, &st, 0) == pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM);
		err = cli_slurp(ef);
		CHECK(cli_contains(err, "sleep.ptlog"));
		free(err);
		struct cli_ev *ev;
		int n = cli_read_log(slog, &ev);
		CHECK_EQ(cli_count(ev, n, "posix_trace_start"), 1);
		free(ev);
	}

	/* started with SIGCHLD ignored: the end of the program is still seen,
	 * its status passed through, and the program inherits SIGCHLD ignored */
	{
		const char *clog = cli_path("chld.ptlog"), *cout = cli_path("chld.out");
		char *sh[] = { "/bin/sh", "-c", "exit 3", NULL };
		CHECK_EQ(record_chld_ignored(clog, cout, sh), 3);
		struct cli_ev *ev;
		int n = cli_read_log(clog, &ev);
		CHECK_EQ(cli_count(ev, n, "posix_trace_start"), 1);
		free(ev);
		char *grep[] = { "/bin/grep", "^SigIgn:", "/proc/self/status", NULL };
		CHECK_EQ(record_chld_ignored(clog, cout, grep), 0);
		char *o = cli_slurp(cout);
		unsigned long long ign = 0;
		CHECK(o && sscanf(o, "SigIgn: %llx", &ign) == 1);
		CHECK(ign >> (SIGCHLD - 1) & 1);
		free(o);
	}

	/* usage errors */
	CHECK_EQ(cli_run(CLI("record"), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("record", "--policy", "sometimes", "--", "/bin/true"), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("record", "--size", "lots", "--", "/bin/true"), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("frobnicate"), NULL, &err), 2);
	CHECK(cli_contains(err, "frobnicate"));
	free(err);
	/* --help and -h: every command, on stdout, exit 0, whatever else is given */
	static const char *const cmds[] = { "record", "attach", "live", "show", "info", "stats",
	                                    "export" };
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		char want[64];
		snprintf(want, sizeof want, "usage: posixtrace %s", cmds[i]);
		CHECK_EQ(cli_run(CLI((char *)cmds[i], "--help"), &out, &err), 0);
		CHECK(cli_contains(out, want) && err && !*err);
		if (!cli_contains(out, want))
			fprintf(stderr, "%s --help: %s%s\n", cmds[i], out ? out : "", err ? err : "");
		free(out);
		free(err);
		CHECK_EQ(cli_run(CLI((char *)cmds[i], "-h"), &out, NULL), 0);
		CHECK(cli_contains(out, want));
		free(out);
		CHECK_EQ(cli_run(CLI("help", (char *)cmds[i]), &out, NULL), 0);
		CHECK(cli_contains(out, want));
		free(out);
	}
	CHECK_EQ(cli_run(CLI("attach", "123", "--help"), &out, NULL), 0);
	CHECK(cli_contains(out, "usage: posixtrace attach"));
	free(out);
	CHECK_EQ(cli_run(CLI("--help"), &out, NULL), 0);
	CHECK(cli_contains(out, "usage: posixtrace COMMAND"));
	free(out);
	/* the program's own --help is the program's */
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)cli_path("h.ptlog"), "/bin/sh", "-c",
	                     "echo \"$1\"", "sh", "--help"), &out, NULL), 0);
	CHECK(out && !strcmp(out, "--help\n"));
	free(out);
	CHECK_EQ(cli_run(CLI("--version"), &out, NULL), 0);
	CHECK(cli_contains(out, "posixtrace "));
	free(out);
	T_END();
}
