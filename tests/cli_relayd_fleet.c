/*
 * cli_relayd_fleet.c -- `posixtrace record --relayd` and `attach
 * --relayd` of many programs, of a running one and of a tree.
 *
 *   fleet      FLEET_N producers started at once, each under its own
 *              record --relayd: each host's events in the relay's
 *              directory are exactly what that program counted posting
 *   attach     attach --relayd to a running program: what it posts once
 *              the relay has the stream's start, exactly
 *   tree       the program started through a shell (no library in it):
 *              it joins the relay's stream as it joins the local log's
 *              (POSIXTRACE_JOIN names both), and the relay, the log and
 *              the program's own count agree
 *   slowfork   record's new child held stopped (ptrace) for a second
 *              before it runs: the stream is made for the program only
 *              once the child has its own control segment, so the relay
 *              and the local log have every event the program counted
 *              (the cause of the fleet's lost producers: the stream was
 *              made for a child not yet running, taken for a process
 *              without the library, and got only START and STOP)
 *
 * The relay runs on free ports with a private HOME, started and stopped
 * here; the traced program is this test itself (relayrec_util.h).
 * SKIP (77) without lttng-relayd (Debian: lttng-tools) or babeltrace2.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"
#include "relayd_util.h"
#include "relayrec_util.h"

#define FLEET_N 12
#define FLEET_EVENTS 2000

/* FLEET_N records started at once, one relay: per host, exact. */
static void case_fleet(void)
{
	char hosts[FLEET_N][16], b[FLEET_N][600], cnt[FLEET_N][300], errs[FLEET_N][300];
	pid_t rec[FLEET_N];

	for (int i = 0; i < FLEET_N; i++) {
		snprintf(hosts[i], sizeof hosts[i], "f%02d", i);
		snprintf(errs[i], sizeof errs[i], "%s", cli_path(hosts[i]));
		snprintf(cnt[i], sizeof cnt[i], "=%s.count", cli_path(hosts[i]));
		rec[i] = spawn(CLI("record", "--relayd", (char *)url(), "--hostname", hosts[i],
		                   "--session", "fleet", "--", self, "produce", "20",
		                   batch(b[i], sizeof b[i], FLEET_EVENTS, NULL, NULL), cnt[i]),
		               NULL, errs[i]);
	}
	for (int i = 0; i < FLEET_N; i++)
		CHECK_EQ(wait_exit(rec[i]), 0);
	for (int i = 0; i < FLEET_N; i++)
		check_host(hosts[i], errs[i]);
}

/* attach --relayd PID: the program runs (it has written its ready file:
 * attach is to a running process, not to one still in its exec), then
 * waits for a gate, which opens once the relay has the stream's START;
 * then every event it counted is there. */
static void case_attach(void)
{
	char b1[600], cnt[300], ready[300], ps[32];
	snprintf(cnt, sizeof cnt, "=%s.count", cli_path("hattach"));
	snprintf(ready, sizeof ready, "=%s.ready", cli_path("hattach"));
	pid_t prog = spawn((char *const[]){ self, "produce", "0", ready,
	                                    batch(b1, sizeof b1, 2000, "hattach.g", NULL), cnt,
	                                    NULL }, NULL, NULL);
	wait_text(cli_path("hattach.ready"), "\n");
	snprintf(ps, sizeof ps, "%d", (int)prog);
	pid_t rec = spawn(CLI("attach", "--relayd", (char *)url(), "--hostname", "hattach",
	                      "--session", "attach", ps), NULL, cli_path("hattach"));
	wait_on_disk_of("hattach", " posix_trace_start: ", 1);
	touch("hattach.g");
	CHECK_EQ(wait_exit(prog), 0);
	CHECK_EQ(wait_exit(rec), 0);
	check_host("hattach", cli_path("hattach"));
}

/* The program below a shell, which does not load the library: it reaches
 * the relay through POSIXTRACE_JOIN, as it reaches the local log. */
static void case_tree(void)
{
	char cmd[4096 + 400], *err = NULL;
	char *log = strdup(cli_path("tree.ptlog"));

	snprintf(cmd, sizeof cmd, "'%s' produce 0 2500:-:- '=%s.count'; true", self,
	         cli_path("htree"));
	CHECK_EQ(cli_run(CLI("record", "--relayd", (char *)url(), "--hostname", "htree",
	                     "--session", "tree", "-o", log, "--", "/bin/sh", "-c", cmd),
	                 NULL, &err), 0);
	FILE *f = fopen(cli_path("htree"), "w");
	REQUIRE(f && fputs(err ? err : "", f) >= 0 && fclose(f) == 0);
	free(err);
	check_host("htree", cli_path("htree"));
	CHECK_EQ(log_ticks(log), program_count("htree.count"));
	free(log);
}

/* Run argv as spawn() does, under ptrace until its first fork: the new
 * process is held stopped, before it runs a single instruction of its
 * own, for hold_ms, then let go; the parent goes on at once, no longer
 * traced (LeakSanitizer, for one, does not work under ptrace).  Returns
 * its exit status, or -1 if ptrace is not allowed here (the program then
 * did not run). */
static int run_slow_fork(char *const argv[], const char *err, unsigned hold_ms)
{
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0) {
		setpgid(0, 0);
		int o = open("/dev/null", O_WRONLY), e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(125);
		dup2(o, 1);
		dup2(e, 2);
		setenv("HOME", cli_path("home"), 1);
		raise(SIGSTOP);
		execv(argv[0], argv);
		_exit(126);
	}
	if (nkids < (int)(sizeof kids / sizeof kids[0]))
		kids[nkids++] = p;
	int st;
	REQUIRE(waitpid(p, &st, 0) == p);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 125)
		return -1;
	REQUIRE(WIFSTOPPED(st));
	REQUIRE(ptrace(PTRACE_SETOPTIONS, p, NULL,
	               (void *)(long)(PTRACE_O_TRACEFORK | PTRACE_O_TRACEEXEC)) == 0);
	REQUIRE(ptrace(PTRACE_CONT, p, NULL, NULL) == 0);
	for (;;) {
		while (waitpid(p, &st, 0) < 0)
			REQUIRE(errno == EINTR);
		REQUIRE(WIFSTOPPED(st)); /* it cannot end before it forks */
		int sig = WSTOPSIG(st), ev = st >> 16;
		if (sig == SIGTRAP && ev == PTRACE_EVENT_FORK)
			break;
		/* its exec, or a signal for it: pass the signal on */
		REQUIRE(ptrace(PTRACE_CONT, p, NULL,
		               (void *)(long)(sig == SIGTRAP || sig == SIGSTOP ? 0 : sig)) == 0);
	}
	unsigned long kid = 0;
	REQUIRE(ptrace(PTRACE_GETEVENTMSG, p, NULL, &kid) == 0);
	REQUIRE(ptrace(PTRACE_DETACH, p, NULL, NULL) == 0); /* the parent goes on */
	int kst;
	while (waitpid((pid_t)kid, &kst, __WALL) < 0)
		REQUIRE(errno == EINTR);
	REQUIRE(WIFSTOPPED(kst));
	usleep(hold_ms * 1000u); /* its child waits */
	REQUIRE(ptrace(PTRACE_DETACH, (pid_t)kid, NULL, NULL) == 0);
	return wait_exit(p);
}

/* record's child not running for a second after the fork (a loaded
 * machine): every event the program counted, on the relay and in the
 * local log. */
static void case_slowfork(void)
{
	char b1[600], cnt[300];
	char *log = strdup(cli_path("slowfork.ptlog")), *rec_err = strdup(cli_path("hslow"));

	snprintf(cnt, sizeof cnt, "=%s.count", cli_path("hslow"));
	/* --no-inherit: no POSIXTRACE_JOIN, which would let the program join
	 * the streams at load even if they were made too early */
	int rc = run_slow_fork(CLI("record", "--relayd", (char *)url(), "--hostname", "hslow",
	                           "--session", "slow", "-o", log, "--no-inherit", "--", self,
	                           "produce", "0", batch(b1, sizeof b1, 3000, NULL, NULL), cnt),
	                       rec_err, 1000);
	if (rc < 0) {
		printf("SKIP (case slowfork): ptrace is not allowed here\n");
	} else {
		CHECK_EQ(rc, 0);
		if (rc) {
			char *e = slurp_or_empty(rec_err);
			fprintf(stderr, "slowfork: record: %s", e);
			free(e);
		}
		check_host("hslow", rec_err);
		CHECK_EQ(log_ticks(log), program_count("hslow.count"));
	}
	free(log);
	free(rec_err);
}

static void run(void)
{
	fprintf(stderr, "-- fleet\n");
	case_fleet();
	fprintf(stderr, "-- attach\n");
	case_attach();
	fprintf(stderr, "-- tree\n");
	case_tree();
	fprintf(stderr, "-- slowfork\n");
	case_slowfork();
}

int main(int argc, char **argv)
{
	return relayrec_main(argc, argv, NULL, run);
}
