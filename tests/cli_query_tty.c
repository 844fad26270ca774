/*
 * cli_query_tty.c -- `posixtrace query LOG` at a terminal (a
 * pseudo-terminal made with forkpty(), the test typing keys and reading
 * what the terminal shows): the prompt edits a line and keeps a history
 * (cli/cmd/lineedit.c; issue 51).
 *
 *   history    a statement typed over two lines comes back on Up as one
 *              line, and runs again on Enter (its answer twice); Up then
 *              Down gives back the line being typed
 *   editing    Left to the middle of a line and a digit typed there;
 *              Backspace; Home and End (escape sequences and Ctrl-A);
 *              Delete; Ctrl-U and Ctrl-K
 *   Ctrl-C     drops the line being typed (no error from it), the prompt
 *              goes on
 *   Ctrl-D     on an empty line ends the prompt, typed ahead while a
 *              statement runs too: exit 0, the terminal given back as it
 *              was (canonical, echoing)
 * Every answer is checked exactly.  Every wait is bounded; a command still
 * running at its deadline is killed and the test fails.
 */
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "query_log.h"

static char shown[65536];
static size_t nshown;

/* reads what the terminal shows until `until` occurs `times` times in
 * all, or ms pass: 1 when it did */
static int wait_for(int fd, const char *until, int times, int ms)
{
	for (int waited = 0;; waited += 20) {
		int seen = 0;
		for (const char *p = shown; (p = strstr(p, until)) != NULL; p += strlen(until))
			seen++;
		if (seen >= times)
			return 1;
		if (waited >= ms || nshown + 1 >= sizeof shown)
			return 0;
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 20) > 0) {
			ssize_t k = read(fd, shown + nshown, sizeof shown - 1 - nshown);
			if (k <= 0)
				return 0;
			nshown += (size_t)k;
			shown[nshown] = 0;
		}
	}
}

static void type(int fd, const char *keys)
{
	size_t n = strlen(keys);
	REQUIRE(write(fd, keys, n) == (ssize_t)n);
}

/* what the prompt shows once a statement's result is out: keys typed
 * before it are typed while the statement still runs, with the terminal
 * as the program found it (canonical: a Ctrl-C there is a signal, and
 * the line discipline drops what was typed before it) */
#define PROMPT "\rposixtrace> \x1b[K"

#define STEP(until, times, keys) do { \
	int ok_ = wait_for(fd, until, times, 20000); \
	if (!ok_) \
		fprintf(stderr, "line %d: no \"%s\" (x%d) on the terminal\n", __LINE__, until, times); \
	CHECK(ok_); \
	if (!ok_) \
		goto out; \
	if (keys) \
		type(fd, keys); \
} while (0)

int main(void)
{
	T_BEGIN(90);
	cli_setup();
	cli_need_sqlite();
	char *log = strdup(cli_path("tty.ptlog"));
	REQUIRE(qlog_write(log, 10) == 0);

	struct winsize ws = { .ws_row = 24, .ws_col = 100 };
	int fd, st = -1;
	fflush(NULL);
	pid_t pid = forkpty(&fd, NULL, NULL, &ws);
	if (pid < 0)
		T_SKIP("no pseudo-terminal (forkpty failed)");
	if (pid == 0) {
		execl(cli_bin, cli_bin, "query", log, (char *)NULL);
		_exit(126);
	}
	/* history: a statement on two lines, recalled as one */
	STEP("posixtrace> ", 1, "SELECT count(*) AS flows\r");
	STEP("   ...> ", 1, "FROM flow;\r");
	STEP("flows\r\n-----\r\n    5\r\n" PROMPT, 1, "\x1b[A");
	STEP("posixtrace> SELECT count(*) AS flows FROM flow;", 1, "\r");
	STEP("flows\r\n-----\r\n    5\r\n" PROMPT, 2, "SELECT 1");
	/* Up, then Down: the line being typed comes back */
	type(fd, "\x1b[A");
	STEP("posixtrace> SELECT count(*) AS flows FROM flow;", 2, "\x1b[B");
	STEP("posixtrace> SELECT 1\x1b[K", 2, " AS one;\r");
	STEP("one\r\n---\r\n  1\r\n" PROMPT, 1, NULL);
	/* editing: a digit typed in the middle, Backspace, Home, End */
	type(fd, "SELECT 2 AS v;");
	type(fd, "\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D"); /* before the 2 */
	type(fd, "4\r");
	STEP(" v\r\n--\r\n42\r\n" PROMPT, 1, "SELECT 99X\x7f AS w;\r");
	STEP(" w\r\n--\r\n99\r\n" PROMPT, 1, "AS h;");
	type(fd, "\x01SELECT 7 \x1b[F\r"); /* Ctrl-A, End */
	STEP("h\r\n-\r\n7\r\n" PROMPT, 1, "SELECT 5 AS d;");
	type(fd, "\x1b[H\x1b[3~\x1b[3~\x1b[3~\x1b[3~\x1b[3~\x1b[3~\x1b[3~VALUES(8);"); /* Delete x7 */
	type(fd, "\x0b\r"); /* Ctrl-K: the rest (" AS d;") */
	STEP("column1\r\n-------\r\n      8\r\n" PROMPT, 1, "garbage\x15SELECT 6 AS u;\r"); /* Ctrl-U */
	STEP("u\r\n-\r\n6\r\n" PROMPT, 1, NULL);
	/* Ctrl-C drops the line */
	type(fd, "SELECT nonsense FROM nowhere");
	type(fd, "\x03");
	STEP("^C\r\n", 1, "SELECT 3 AS c;\r");
	STEP("c\r\n-\r\n3\r\n" PROMPT, 1, NULL);
	/* Ctrl-D on an empty line: the end, the terminal as it was; typed
	 * at once after a statement, it comes while the statement runs (the
	 * terminal canonical then) or after: the same end either way */
	type(fd, "SELECT 4 AS e;\r\x04");
	STEP("e\r\n-\r\n4\r\n", 1, NULL);
	for (int i = 0; i < 500 && waitpid(pid, &st, WNOHANG) == 0; i++)
		usleep(20000);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(!cli_contains(shown, "no such"));
	CHECK(!cli_contains(shown, "nonsense FROM nowhere\r\n"));
	struct termios tio;
	CHECK(tcgetattr(fd, &tio) == 0 && (tio.c_lflag & ICANON) && (tio.c_lflag & ECHO));
out:
	if (waitpid(pid, &st, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		fprintf(stderr, "the terminal showed:\n%s\n", shown);
	} else if (t_failures) {
		fprintf(stderr, "the terminal showed:\n%s\n", shown);
	}
	close(fd);
	free(log);
	T_END();
}
