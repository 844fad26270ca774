/*
 * cli_live.c -- `posixtrace live` and `posixtrace attach`.
 *
 * live -- PROGRAM: every event of examples/app is printed, as `show`
 * prints it, and the exit status is the app's.  A running app (ROUNDS 0:
 * it runs until killed) is attached to: `attach PID --duration` writes a
 * log of its events (the app keeps running, untouched); `live PID` prints
 * its events until SIGINT, then exits 0.  Options go before or after the
 * PID (`attach PID -o FILE --duration S`, `live PID --raw-addresses`).
 * A process that does not use the library (sleep) is refused at once
 * (exit 1, no log) unless --tree, which goes on.  Errors: no such
 * pid exits 1 naming it; a non-number, or a second argument, exits 2 with
 * a message that says which.
 */
#include <signal.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static int count_word(const char *s, const char *w)
{
	char line[2048], c[5][80];
	int n = 0;
	/* time, delta, PID/TID, then the thread's NAME when the stream says
	 * who its threads are (as show prints it), then the event's type */
	for (int i = 0; cli_line(s, i, line, sizeof line) == 0; i++) {
		int k = sscanf(line, "%79s %79s %79s %79s %79s", c[0], c[1], c[2], c[3], c[4]);
		if ((k >= 4 && !strcmp(c[3], w)) || (k == 5 && strcmp(c[3], w) && !strcmp(c[4], w)))
			n++;
	}
	return n;
}

/* `posixtrace live ARGS...` until SIGINT, sent once it has printed 25
 * request events (examples/app makes about 1000 a second; live flushes
 * what it printed every 50 ms) or after 30 s, unless it ends first (a
 * refused pid); its exit status, *out, *err.  It waits for the output rather than a fixed time: on a loaded
 * machine, or under a sanitizer, starting live can take most of a second. */
static int live_sigint(char *const args[], char **out, char **err)
{
	char of[300], ef[300];
	snprintf(of, sizeof of, "%s/live.out", cli_dir);
	snprintf(ef, sizeof ef, "%s/live.err", cli_dir);
	unlink(of); /* the last call's output is not this one's */
	unlink(ef);
	pid_t lv = fork();
	REQUIRE(lv >= 0);
	if (lv == 0) {
		char *argv[8] = { (char *)cli_bin, "live" };
		for (int i = 0; i < 5 && args[i]; i++)
			argv[2 + i] = args[i];
		int o = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(o, 1);
		dup2(e, 2);
		/* a command started with SIGINT ignored keeps it ignored (nohup);
		 * this test may itself run where it is (a script's background job) */
		signal(SIGINT, SIG_DFL);
		execv(cli_bin, argv);
		_exit(126);
	}
	int st, ended = 0;
	for (int waited = 0; waited < 30000 && !ended; waited += 20) {
		usleep(20000);
		/* a refusal ends live by itself: no SIGINT, no 30 s waited out */
		pid_t w = waitpid(lv, &st, WNOHANG);
		REQUIRE(w >= 0);
		ended = w == lv;
		char *s = cli_slurp(of);
		int n = s ? count_word(s, "request") : 0;
		free(s);
		if (n >= 25)
			break;
	}
	if (!ended) {
		kill(lv, SIGINT);
		REQUIRE(waitpid(lv, &st, 0) == lv);
	}
	*out = cli_slurp(of);
	*err = cli_slurp(ef);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A program that does not use the library, with none of our descriptors
 * (the control segment of this test is one of them). */
static pid_t start_plain(const char *prog, const char *arg)
{
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		execl(prog, prog, arg, (char *)NULL);
		_exit(126);
	}
	return pid;
}

static const char *no_lib = "does not use libposixtrace (no posixtrace-ctl segment in /proc/";

int main(void)
{
	char *out = NULL, *err = NULL, pidarg[16];

	T_BEGIN(120);
	cli_setup();

	/* live -- PROGRAM */
	CHECK_EQ(cli_run(CLI("live", "--", (char *)cli_app, "5"), &out, &err), 5);
	CHECK_EQ(count_word(out, "app_start"), 1);
	CHECK_EQ(count_word(out, "request"), 60);
	CHECK_EQ(count_word(out, "reply"), 60);
	CHECK_EQ(count_word(out, "tick"), 10);
	CHECK_EQ(count_word(out, "child_step"), 5);
	CHECK(cli_contains(out, "\"GET /item/1/3\""));
	/* as show does: each reply on the line of the thread that sent it,
	 * "PID/TID NAME" with the name the thread set (worker-K), and its
	 * payload by field, worker=K as the thread sent it */
	int named = 0;
	char line[1024];
	for (int i = 0; cli_line(out, i, line, sizeof line) == 0; i++) {
		const char *r = strstr(line, " reply ");
		const char *w = r ? strstr(r, "worker=") : NULL;
		int pid = 0, tid = 0, k = -1, at = 0;
		char name[32], want[32];
		if (!w || sscanf(line, "%*s %*s %d/%d %31s%n", &pid, &tid, name, &at) != 3 ||
		    sscanf(w, "worker=%d round=%*d status=%*d bytes=%*u", &k) != 1)
			continue;
		snprintf(want, sizeof want, "worker-%d", k);
		named += !strcmp(name, want) && tid != pid && tid > 0;
	}
	CHECK_EQ(named, 60);
	CHECK(cli_contains(err, "137 events"));
	free(out);
	free(err);

	/* a running app */
	pid_t app = cli_spawn_app();
	usleep(200000);
	snprintf(pidarg, sizeof pidarg, "%d", (int)app);
	const char *log = cli_path("attach.ptlog");
	CHECK_EQ(cli_run(CLI("attach", "-o", (char *)log, "--duration", "0.5", pidarg), NULL, &err), 0);
	CHECK(cli_contains(err, "attach.ptlog"));
	free(err);
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev), from_app = 0;
	for (int i = 0; i < n; i++)
		from_app += ev[i].info.posix_pid == app && !strcmp(ev[i].name, "request");
	CHECK(from_app > 20);       /* ~1000 a second */
	free(ev);
	CHECK(kill(app, 0) == 0);  /* still running */
	/* the trace carries the map of the app's code: no side file */
	CHECK(access(cli_path("attach.ptlog.maps"), F_OK) != 0);
	char *info = NULL, want[64];
	CHECK_EQ(cli_run(CLI("info", (char *)log), &info, NULL), 0);
	snprintf(want, sizeof want, "\n  %8d  0x", (int)app);
	CHECK(cli_contains(info, want) && cli_contains(info, "/examples/app\n"));
	free(info);

	/* options after the PID, as the README shows them */
	const char *log2 = cli_path("attach2.ptlog");
	CHECK_EQ(cli_run(CLI("attach", pidarg, "-o", (char *)log2, "--duration", "0.3"), NULL,
	                 &err), 0);
	CHECK(cli_contains(err, "attach2.ptlog"));
	CHECK(!cli_contains(err, "not a process id"));
	CHECK(!cli_contains(err, no_lib));
	free(err);
	CHECK(access(log2, F_OK) == 0);
	if (access(log2, F_OK) == 0) {
		n = cli_read_log(log2, &ev);
		from_app = 0;
		for (int i = 0; i < n; i++)
			from_app += ev[i].info.posix_pid == app && !strcmp(ev[i].name, "request");
		CHECK(from_app > 10);
		free(ev);
	}
	CHECK_EQ(cli_run(CLI("attach", "-o", (char *)log2, pidarg, "-d", "0.1", "--force"), NULL,
	                 NULL), 0);

	/* live PID until SIGINT, options before or after the PID */
	CHECK_EQ(live_sigint((char *[]){ pidarg, NULL }, &out, &err), 0);
	CHECK(count_word(out, "request") > 20);
	CHECK(count_word(out, "posix_trace_start") == 1);
	CHECK(cli_contains(out, "@ worker+0x") || cli_contains(out, "@ app+0x"));
	CHECK(cli_contains(err, " events from "));
	CHECK(!cli_contains(err, no_lib));
	free(out);
	free(err);
	CHECK_EQ(live_sigint((char *[]){ pidarg, "--raw-addresses", NULL }, &out, &err), 0);
	CHECK(count_word(out, "request") > 20);
	CHECK(cli_contains(out, "@ 0x"));
	CHECK(!cli_contains(out, "@ worker+0x") && !cli_contains(out, "@ app+0x"));
	CHECK(cli_contains(err, " events from "));
	free(out);
	free(err);
	CHECK(kill(app, 0) == 0);
	kill(app, SIGKILL);
	waitpid(app, NULL, 0);

	/* a process that does not use the library: refused at once (an empty
	 * trace would look like a quiet program), no log left behind; with
	 * --tree (its descendants may use it) it goes on */
	const char *sleep_bin = cli_which("sleep");
	if (sleep_bin) {
		pid_t sl = start_plain(sleep_bin, "5");
		char slarg[16], warn[128];
		snprintf(slarg, sizeof slarg, "%d", (int)sl);
		snprintf(warn, sizeof warn, "pid %d %s", (int)sl, no_lib);
		usleep(100000);
		CHECK_EQ(cli_run(CLI("attach", slarg, "-o", (char *)cli_path("sleep.ptlog"), "-d",
		                     "0.2"), NULL, &err), 1);
		CHECK(cli_contains(err, "posixtrace attach: ") && cli_contains(err, warn));
		CHECK(cli_contains(err, "--tree"));
		CHECK(access(cli_path("sleep.ptlog"), F_OK) != 0);
		free(err);
		CHECK_EQ(live_sigint((char *[]){ slarg, NULL }, &out, &err), 1);
		CHECK(cli_contains(err, "posixtrace live: ") && cli_contains(err, warn));
		CHECK(!cli_contains(err, " events from "));
		free(out);
		free(err);
		CHECK_EQ(cli_run(CLI("attach", "--tree", slarg, "-o",
		                     (char *)cli_path("sleep-tree.ptlog"), "-d", "0.2"), NULL, &err), 0);
		CHECK(!cli_contains(err, no_lib));
		CHECK(cli_contains(err, "sleep-tree.ptlog")); /* the summary: it went on */
		free(err);
		kill(sl, SIGKILL);
		waitpid(sl, NULL, 0);
	}

	/* errors */
	CHECK_EQ(cli_run(CLI("attach", "-o", (char *)cli_path("x.ptlog"), "12abc"), NULL, &err), 2);
	CHECK(cli_contains(err, "'12abc' is not a process id"));
	free(err);
	CHECK_EQ(cli_run(CLI("attach", "123", "extra", "-o", (char *)cli_path("x.ptlog")), NULL,
	                 &err), 2);
	CHECK(cli_contains(err, "unexpected argument 'extra'"));
	CHECK(!cli_contains(err, "not a process id"));
	free(err);
	CHECK_EQ(cli_run(CLI("attach", "123", "-o"), NULL, &err), 2);
	CHECK(cli_contains(err, "-o"));
	free(err);
	CHECK_EQ(cli_run(CLI("live", "123", "extra"), NULL, &err), 2);
	CHECK(cli_contains(err, "unexpected argument 'extra'"));
	free(err);
	CHECK_EQ(cli_run(CLI("live", "123", "--", "/bin/true"), NULL, &err), 2);
	CHECK(cli_contains(err, "123") && cli_contains(err, "/bin/true"));
	free(err);
	CHECK_EQ(cli_run(CLI("live", "--bogus", "123"), NULL, &err), 2);
	CHECK(cli_contains(err, "--bogus"));
	free(err);
	CHECK_EQ(cli_run(CLI("attach", "-o", (char *)cli_path("x.ptlog"), "999999999"), NULL, &err), 1);
	CHECK(cli_contains(err, "999999999"));
	free(err);
	CHECK_EQ(cli_run(CLI("attach", "-o", (char *)cli_path("x.ptlog"), pidarg), NULL, &err), 1);
	CHECK(cli_contains(err, pidarg));
	free(err);
	CHECK_EQ(cli_run(CLI("live", pidarg), NULL, &err), 1);
	CHECK(cli_contains(err, pidarg));
	free(err);
	CHECK_EQ(cli_run(CLI("live", "not-a-pid"), NULL, NULL), 2);
	CHECK_EQ(cli_run(CLI("live"), NULL, NULL), 2);
	T_END();
}
