/*
 * cli_tty.c -- the posixtrace command at a terminal: a pseudo-terminal
 * made with forkpty(), the test reading what the terminal would show.
 *
 *   progress  `export --format chrome` of a log of 200 000 events
 *             (made here with the library: posix_trace_create_withlog,
 *             posix_trace_event, shutdown) draws a progress line with a
 *             percentage on the terminal and ends it at 100%; with stderr
 *             a pipe it writes nothing at all.  The line normally waits
 *             for half a second of work; POSIXTRACE_PROGRESS_MS=0 shows
 *             it at once, so the test does not depend on the machine's
 *             speed.  Reading the log (`stats`): nothing on a pipe; on a
 *             terminal, a line counting the events read, ending at all
 *             of them.
 *   Ctrl-C    `record -o FILE -- golden_app --sleep 30`: once the program
 *             says its events are recorded, ^C (0x03) is typed at the
 *             terminal.  The terminal interrupts the program (and record,
 *             which keeps going), record exits 130 (128 + SIGINT, the
 *             program's end), and the log is kept: posix_trace_open()
 *             reads every event of the program and the STOP of a clean
 *             shutdown.
 *   ignored   the same, record started with SIGINT ignored (as nohup or
 *             a script's background job would start it): ^C typed twice
 *             stops neither record nor the program, which sleeps its 2 s
 *             out; record exits 0 with its summary and a complete log.
 * Every wait is bounded; a command still running at its deadline is
 * killed (its process group) and the test fails.
 */
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "log_util.h"

static const char *golden_app = PT_BUILD_DIR "/examples/golden_app";

/* ------------------------------------------------------------ the pty */
struct term { pid_t pid; int fd, closed; char *s; size_t n, cap; };

static void term_start_sigint(struct term *t, char *const argv[], void (*sigint)(int))
{
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	memset(t, 0, sizeof *t);
	fflush(NULL);
	t->pid = forkpty(&t->fd, NULL, NULL, &ws);
	REQUIRE(t->pid >= 0);
	if (t->pid == 0) {
		/* a terminal's session starts with the signals a user's keys send
		 * taken by default (SIGINT: as the caller says) and none blocked;
		 * this test may run where they are ignored (a background job of a
		 * script ignores SIGINT), and exec would hand that on to the
		 * command and its program */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGINT, sigint);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGTSTP, SIG_DFL);
		execv(argv[0], argv);
		_exit(126);
	}
}

static void term_start(struct term *t, char *const argv[])
{
	term_start_sigint(t, argv, SIG_DFL);
}

/* Reads what the terminal shows into t->s until `until` is in it (NULL:
 * until every process closed the terminal) or ms milliseconds pass;
 * returns 1 when it got there. */
static int term_read(struct term *t, const char *until, int ms)
{
	long long end = lu_mono_ms() + ms;
	for (;;) {
		if (until && t->s && strstr(t->s, until))
			return 1;
		if (t->closed)
			return until == NULL;
		long long left = end - lu_mono_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = { .fd = t->fd, .events = POLLIN };
		int rc = poll(&p, 1, (int)left);
		if (rc < 0 && errno == EINTR)
			continue;
		REQUIRE(rc >= 0);
		if (rc == 0)
			continue;
		if (t->n + 4097 > t->cap) {
			t->cap = t->cap ? t->cap * 2 : 65536;
			t->s = realloc(t->s, t->cap);
			REQUIRE(t->s != NULL);
			t->s[t->n] = 0;
		}
		ssize_t r = read(t->fd, t->s + t->n, 4096);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) { /* EIO: the last process holding the terminal closed it */
			t->closed = 1;
			continue;
		}
		t->n += (size_t)r;
		t->s[t->n] = 0;
	}
}

/* Waits ms at most for the command to end: its status (128+N when killed
 * by signal N), or -1 after killing its process group at the deadline. */
static int term_wait(struct term *t, int ms)
{
	long long end = lu_mono_ms() + ms;
	int st;
	for (;;) {
		pid_t w = waitpid(t->pid, &st, WNOHANG);
		REQUIRE(w >= 0 || errno == EINTR);
		if (w == t->pid)
			break;
		if (lu_mono_ms() > end) {
			fprintf(stderr, "still running after %d ms: killed\n", ms);
			kill(-t->pid, SIGKILL); /* a pty's session (and process group) */
			kill(t->pid, SIGKILL);
			while (waitpid(t->pid, &st, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
		usleep(10000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void term_close(struct term *t)
{
	close(t->fd);
	free(t->s);
}

/* ----------------------------------------------------- progress line */
/* A log of n events of one type (no data), written by this process. */
static void make_log(const char *path, long n)
{
	trace_attr_t attr;
	trace_id_t trid;
	trace_event_id_t id;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	REQUIRE(fd >= 0);
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, 8 << 20), 0);
	CHECK_RC(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND), 0);
	int rc = posix_trace_create_withlog(0, &attr, fd, &trid);
	if (rc == EAGAIN)
		T_SKIP("no trace stream available (the machine's limit is reached)");
	CHECK_RC(rc, 0);
	REQUIRE(rc == 0);
	CHECK_RC(posix_trace_eventid_open("tick", &id), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	for (long i = 0; i < n; i++) {
		posix_trace_event(id, NULL, 0);
		if (i % 200000 == 199999) /* 3.2 MB: room left in the stream */
			CHECK_RC(lu_flush_wait(trid, NULL), 0);
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	close(fd);
}

/* Run argv with stdout and stderr into one pipe: what it wrote; *ms its
 * run time; returns its status. */
static int run_piped(char *const argv[], char **text, long long *ms, int timeout_ms)
{
	int p[2];
	REQUIRE(pipe(p) == 0);
	long long t0 = lu_mono_ms();
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execv(argv[0], argv);
		_exit(126);
	}
	close(p[1]);
	struct term t = { .pid = pid, .fd = p[0] };
	term_read(&t, NULL, timeout_ms);
	int st = term_wait(&t, 1000 + (t.closed ? 0 : 5000));
	*ms = lu_mono_ms() - t0;
	*text = t.s ? t.s : strdup("");
	close(p[0]);
	return st;
}

static void test_progress(void)
{
	const char *log = cli_path("big.ptlog"), *json = cli_path("big.json");
	char *text = NULL;
	long long ms = 0;
	long n;
	int rc;

	/* the progress line at once (POSIXTRACE_PROGRESS_MS=0), so that what
	 * is checked does not depend on how fast the machine is */
	setenv("POSIXTRACE_PROGRESS_MS", "0", 1);
	n = 200000;
	make_log(log, n);
	rc = run_piped(CLI("export", "--format", "chrome", "--force", (char *)log, "-o",
	                   (char *)json), &text, &ms, 120000);
	CHECK_EQ(rc, 0);
	/* stderr a pipe: no progress, and nothing else either */
	if (text[0])
		fprintf(stderr, "export wrote to a pipe:\n%.300s\n", text);
	CHECK(!text[0]);
	free(text);

	struct term t;
	term_start(&t, CLI("export", "--format", "chrome", "--force", (char *)log, "-o",
	                   (char *)json));
	term_read(&t, NULL, 120000);
	CHECK_EQ(term_wait(&t, 5000), 0);
	/* "\rexport chrome:  42% (860160 of 2000000 events)" ... "100% (2000000 events)" */
	int lines = 0, partial = 0, done = 0;
	for (const char *p = t.s; p && (p = strstr(p, "\rexport chrome: ")) != NULL; p++) {
		int pct = -1;
		char tail[32] = "";
		lines++;
		if (sscanf(p + 16, "%d%% (%31[^)]", &pct, tail) != 2)
			continue;
		partial += pct >= 0 && pct < 100 && strstr(tail, " of ") != NULL;
		done += pct == 100;
	}
	CHECK(partial >= 1);
	CHECK_EQ(done, 1);
	CHECK(cli_contains(t.s, "wrote ")); /* on a terminal only */
	if (!partial || done != 1)
		fprintf(stderr, "%d progress lines; the terminal showed:\n%.600s\n", lines,
		        t.s ? t.s : "");
	term_close(&t);

	/* reading the log: a line that counts events (how many there are, the
	 * log does not say), on a terminal only, when reading takes a while */
	char *out = NULL;
	rc = run_piped(CLI("stats", (char *)log), &out, &ms, 120000);
	CHECK_EQ(rc, 0);
	CHECK(out && !strstr(out, "reading "));
	free(out);
	{
		term_start(&t, CLI("stats", (char *)log));
		term_read(&t, NULL, 120000);
		CHECK_EQ(term_wait(&t, 5000), 0);
		char want[600];
		const char *last = NULL;
		snprintf(want, sizeof want, "\rreading %s: ", log);
		for (const char *q = t.s; q && (q = strstr(q, want)) != NULL; q++)
			last = q;
		long long counted = -1;
		CHECK(last && sscanf(last + strlen(want), "%lld", &counted) == 1);
		CHECK(counted >= n); /* the last line: every event (n and the system ones) */
		if (!last || counted < n)
			fprintf(stderr, "stats on a terminal showed:\n%.600s\n", t.s ? t.s : "");
		term_close(&t);
	}
	unlink(json);
	unlink(log);
}

/* The log of golden_app --sleep: every event of the program, and the STOP
 * of a clean shutdown. */
static void check_golden_log(const char *log)
{
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev);
	CHECK(n > 0);
	CHECK_EQ(cli_count(ev, n, "golden_start"), 1);
	CHECK_EQ(cli_count(ev, n, "step"), 3);
	CHECK_EQ(cli_count(ev, n, "mark"), 2);
	CHECK_EQ(cli_count(ev, n, "posix_trace_stop"), 1);
	free(ev);
}

/* ------------------------------------------------------------ Ctrl-C */
static void test_ctrl_c(void)
{
	const char *log = cli_path("ctrlc.ptlog");
	struct term t;

	term_start(&t, CLI("record", "-o", (char *)log, "--", (char *)golden_app, "--sleep", "30"));
	int ready = term_read(&t, "golden_app: events recorded", 30000);
	CHECK(ready);
	if (!ready)
		fprintf(stderr, "the program did not start; the terminal showed:\n%s\n",
		        t.s ? t.s : "");
	usleep(100000);
	REQUIRE(write(t.fd, "\003", 1) == 1); /* ^C */
	term_read(&t, NULL, 20000);
	int rc = term_wait(&t, 20000);
	CHECK_EQ(rc, 130);
	if (rc != 130)
		fprintf(stderr, "record exited %d; the terminal showed:\n%s\n", rc, t.s ? t.s : "");
	/* the summary names the log: it was kept */
	CHECK(cli_contains(t.s, log));
	term_close(&t);

	check_golden_log(log);
}

/* ------------------------------------------------- Ctrl-C, ignored */
static void test_ctrl_c_ignored(void)
{
	const char *log = cli_path("ignored.ptlog");
	struct term t;

	term_start_sigint(&t, CLI("record", "-o", (char *)log, "--", (char *)golden_app, "--sleep",
	                          "2"), SIG_IGN);
	int ready = term_read(&t, "golden_app: events recorded", 30000);
	CHECK(ready);
	for (int i = 0; i < 2; i++) {
		usleep(100000);
		REQUIRE(write(t.fd, "\003", 1) == 1); /* ^C, ignored */
	}
	term_read(&t, NULL, 30000);
	int rc = term_wait(&t, 20000);
	CHECK_EQ(rc, 0); /* the program's own exit status: it slept its time out */
	if (rc != 0 || !ready)
		fprintf(stderr, "record exited %d; the terminal showed:\n%s\n", rc, t.s ? t.s : "");
	CHECK(cli_contains(t.s, log));
	term_close(&t);

	check_golden_log(log);
}

int main(void)
{
	T_BEGIN(280);
	cli_setup();
	if (access(golden_app, X_OK) != 0)
		T_SKIP("examples/golden_app is not built (make examples)");
	int mfd, sfd;
	if (openpty(&mfd, &sfd, NULL, NULL, NULL) != 0)
		T_SKIP("no pseudo-terminal (openpty failed: is /dev/pts mounted?)");
	close(mfd);
	close(sfd);
	test_progress();
	test_ctrl_c();
	test_ctrl_c_ignored();
	T_END();
}
