/*
 * cli_live.c -- `posixtrace live` and `posixtrace attach`.
 *
 * live -- PROGRAM: every event of examples/app is printed, as `show`
 * prints it, and the exit status is the app's.  A running app (ROUNDS 0:
 * it runs until killed) is attached to: `attach PID --duration` writes a
 * log of its events (the app keeps running, untouched); `live PID` prints
 * its events until SIGINT, then exits 0.  Errors: no such pid exits 1
 * naming it; a non-number exits 2.
 */
#include <signal.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static int count_word(const char *s, const char *w)
{
	char line[2048], c[4][80];
	int n = 0;
	for (int i = 0; cli_line(s, i, line, sizeof line) == 0; i++)
		if (sscanf(line, "%79s %79s %79s %79s", c[0], c[1], c[2], c[3]) == 4 && !strcmp(c[3], w))
			n++;
	return n;
}

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
	CHECK(cli_contains(err, "137 events"));
	free(out);
	free(err);

	/* a running app */
	pid_t app = fork();
	REQUIRE(app >= 0);
	if (app == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(cli_app, cli_app, "0", "0", (char *)NULL);
		_exit(126);
	}
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
	char *maps = cli_slurp(cli_path("attach.ptlog.maps"));
	char want[32];
	snprintf(want, sizeof want, "\nS %d ", (int)app);
	CHECK(cli_contains(maps, want));
	free(maps);

	/* live PID until SIGINT */
	{
		char of[300];
		snprintf(of, sizeof of, "%s/live.out", cli_dir);
		pid_t lv = fork();
		REQUIRE(lv >= 0);
		if (lv == 0) {
			int o = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			int e = open(cli_path("live.err"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
			dup2(o, 1);
			dup2(e, 2);
			execl(cli_bin, cli_bin, "live", pidarg, (char *)NULL);
			_exit(126);
		}
		usleep(500000);
		kill(lv, SIGINT);
		int st;
		REQUIRE(waitpid(lv, &st, 0) == lv);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		out = cli_slurp(of);
		CHECK(count_word(out, "request") > 20);
		CHECK(count_word(out, "posix_trace_start") == 1);
		free(out);
		err = cli_slurp(cli_path("live.err"));
		CHECK(cli_contains(err, " events from "));
		free(err);
	}
	CHECK(kill(app, 0) == 0);
	kill(app, SIGKILL);
	waitpid(app, NULL, 0);

	/* errors */
	CHECK_EQ(cli_run(CLI("attach", "-o", (char *)cli_path("x.ptlog"), "12abc"), NULL, NULL), 2);
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
