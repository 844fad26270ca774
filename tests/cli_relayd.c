/*
 * cli_relayd.c -- `posixtrace record --relayd`: a traced program streamed
 * live to Debian's lttng-relayd on loopback, read back with babeltrace2.
 *
 *   exact      every event, from the relay's output and in the local log
 *   live       babeltrace2 attached to the live session prints every
 *              event, the first batch before the program goes on
 *   behind     a live babeltrace2 that is behind when the recording ends
 *              (its output, a pipe, is not read until record has exited)
 *              still gets every event: the session ends as LTTng ends
 *              one (its streams rotated out of their trace chunk), so the
 *              relay lets it read to the end; closed without that, the
 *              relay told it the stream hung up and it printed only what
 *              it had read before the end
 *   hosts      three producers with different --hostname, one relay:
 *              each host's trace apart, merged by time, every event
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

/* -------------------------------------------------------------- cases */

static void case_exact(void)
{
	char b1[600], *out = NULL, *err = NULL;
	char *log = strdup(cli_path("exact.ptlog"));

	int rc = cli_run(CLI("record", "--relayd", (char *)url(), "--hostname", "hexact", "--session",
	                     "exact", "-o", (char *)log, "--", self, "produce", "0",
	                     batch(b1, sizeof b1, 5000, NULL, NULL)), NULL, &err);
	CHECK_EQ(rc, 0);
	CHECK(cli_contains(err, "5002 events sent to hexact/exact-")); /* START, STOP */
	CHECK(cli_contains(err, "; 0 not delivered"));
	if (rc)
		fprintf(stderr, "record: %s\n", err);
	free(err);
	CHECK_EQ(bt_read("hexact", &out, &err), 0);
	CHECK_EQ(cli_count_str(out, " relay_tick: "), 5000);
	CHECK_EQ(cli_count_str(out, " posix_trace_start: "), 1);
	CHECK_EQ(cli_count_str(out, " posix_trace_stop: "), 1);
	CHECK_EQ(cli_nlines(out), 5002);
	CHECK(!cli_contains(err, "discarded"));
	/* the payloads: 0 to 4999 in order */
	CHECK(cli_contains(out, "payload = [ [0] = 135, [1] = 19, [2] = 0, [3] = 0 ]")); /* 4999 */
	free(out);
	free(err);
	CHECK_EQ(log_ticks(log), 5000);
	free(log);
}

/* babeltrace2's list of the relay's live sessions */
static char *live_sessions(void)
{
	char u[64], *out = NULL;
	snprintf(u, sizeof u, "url=\"net://127.0.0.1:%u\"", lport);
	cli_run((char *const[]){ (char *)bt_bin, "query", "src.ctf.lttng-live", "sessions", "-p", u,
	                         NULL }, &out, NULL);
	return out ? out : strdup("");
}

/* Until babeltrace2's list of live sessions has what in it. */
static void wait_sessions(const char *what)
{
	for (;;) {
		char *s = live_sessions();
		int there = strstr(s, what) != NULL;
		free(s);
		if (there)
			return;
		usleep(100000);
	}
}

static void case_live(void)
{
	char b1[600], b2[600], b3[600], lurl[128];
	/* (cli_path's buffers are reused: keep copies) */
	char *rec_err = strdup(cli_path("live.rec.err")), *bt_out = strdup(cli_path("live.bt.out"));

	/* batch 1 after gate g1; batch 2 after g2, which the test makes only
	 * once the live reader has printed all of batch 1 */
	pid_t rec = spawn(CLI("record", "--relayd", (char *)url(), "--hostname", "hlive", "--session",
	                      "live", "--", self, "produce", "200",
	                      batch(b1, sizeof b1, 1500, "g1", NULL),
	                      batch(b2, sizeof b2, 1500, "g2", NULL),
	                      batch(b3, sizeof b3, 0, "g3", NULL)),
	                  NULL, rec_err);
	wait_sessions("session-name: live");
	snprintf(lurl, sizeof lurl, "net://127.0.0.1:%u/host/hlive/live", lport);
	/* babeltrace2 2.0 stops reading when the session closes, maybe before
	 * its last packets (record waits a second for it): the program ends
	 * only once all of it was printed */
	pid_t bt = spawn((char *const[]){ (char *)bt_bin, "-i", "lttng-live", lurl, NULL },
	                 bt_out, cli_path("live.bt.err"));
	wait_sessions("client-count: 1"); /* attached */
	touch("g1");
	int want = 1500;
	for (;;) { /* printed live: batch 1 while the program waits, then all */
		char *s = slurp_or_empty(bt_out);
		int n = cli_count_str(s, " relay_tick: ");
		free(s);
		REQUIRE(n <= want);
		if (n == want && want == 3000) {
			touch("g3");
			break;
		}
		if (n == want)
			touch("g2");
		want = n == 1500 ? 3000 : want;
		int st;
		if (waitpid(bt, &st, WNOHANG) == bt) {
			char *e = slurp_or_empty(cli_path("live.bt.err"));
			fprintf(stderr, "babeltrace2 live ended early:\n%.3000s\n", e);
			exit(1);
		}
		usleep(10000);
	}
	CHECK_EQ(wait_exit(rec), 0);
	CHECK_EQ(wait_exit(bt), 0); /* the session closed: the reader ends */
	char *s = slurp_or_empty(bt_out), *e = slurp_or_empty(cli_path("live.bt.err"));
	CHECK_EQ(cli_count_str(s, " relay_tick: "), 3000);
	CHECK(!cli_contains(e, "discarded"));
	free(s);
	free(e);
	char *out = NULL, *err = NULL;
	CHECK_EQ(bt_read("hlive", &out, &err), 0);
	CHECK_EQ(cli_count_str(out, " relay_tick: "), 3000);
	free(out);
	free(err);
	free(rec_err);
	free(bt_out);
}

static void case_behind(void)
{
	enum { N = 20000 };
	char b1[600], lurl[128], buf[65536];
	char *rec_err = strdup(cli_path("behind.rec.err"));
	int out[2];

	pid_t rec = spawn(CLI("record", "--relayd", (char *)url(), "--hostname", "hbehind",
	                      "--session", "behind", "--", self, "produce", "0",
	                      batch(b1, sizeof b1, N, "b1", NULL)),
	                  NULL, rec_err);
	wait_sessions("session-name: behind");
	snprintf(lurl, sizeof lurl, "net://127.0.0.1:%u/host/hbehind/behind", lport);
	/* its output into a pipe nobody reads yet: it stops at the first
	 * 64 KiB, far behind the N events (about 3 MB of text) */
	REQUIRE(pipe(out) == 0);
	fflush(NULL);
	pid_t bt = fork();
	REQUIRE(bt >= 0);
	if (bt == 0) {
		setpgid(0, 0);
		int e = open(cli_path("behind.bt.err"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (e < 0)
			_exit(126);
		dup2(out[1], 1);
		dup2(e, 2);
		close(out[0]);
		close(out[1]);
		setenv("HOME", cli_path("home"), 1);
		execl(bt_bin, bt_bin, "-i", "lttng-live", lurl, (char *)NULL);
		_exit(126);
	}
	if (nkids < (int)(sizeof kids / sizeof kids[0]))
		kids[nkids++] = bt;
	close(out[1]);
	wait_sessions("client-count: 1"); /* attached */
	touch("b1");
	CHECK_EQ(wait_exit(rec), 0); /* the session has ended */
	char *e = slurp_or_empty(rec_err);
	CHECK(cli_contains(e, "20002 events sent to hbehind/behind"));
	CHECK(!cli_contains(e, "ending the session"));
	free(e);
	/* now read it: every event, then it ends (the stream hung up) */
	int n = 0;
	size_t have = 0;
	for (;;) {
		ssize_t k = read(out[0], buf + have, sizeof buf - 1 - have);
		if (k < 0 && errno == EINTR)
			continue;
		REQUIRE(k >= 0);
		if (k == 0)
			break;
		have += (size_t)k;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = 0;
			n += strstr(line, " relay_tick: ") != NULL;
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
	}
	close(out[0]);
	CHECK_EQ(wait_exit(bt), 0);
	CHECK_EQ(n, N);
	if (n != N) {
		char *err = slurp_or_empty(cli_path("behind.bt.err"));
		fprintf(stderr, "the live reader behind got %d of %d events:\n%.2000s\n", n, N, err);
		free(err);
	}
	char *o = NULL, *err = NULL;
	CHECK_EQ(bt_read("hbehind", &o, &err), 0);
	CHECK_EQ(cli_count_str(o, " relay_tick: "), N);
	free(o);
	free(err);
	free(rec_err);
}

static void case_hosts(void)
{
	static const char *const hosts[] = { "hA", "hB", "hC" };
	char b[3][600], errs[3][300];
	pid_t rec[3];

	for (int i = 0; i < 3; i++) {
		snprintf(errs[i], sizeof errs[i], "%s", cli_path(hosts[i]));
		rec[i] = spawn(CLI("record", "--relayd", (char *)url(), "--hostname", (char *)hosts[i],
		                   "--session", "fleet", "--", self, "produce", "100",
		                   batch(b[i], sizeof b[i], 1000 * (unsigned)(i + 1), NULL, NULL)),
		               NULL, errs[i]);
	}
	for (int i = 0; i < 3; i++)
		CHECK_EQ(wait_exit(rec[i]), 0);
	char *out = NULL, *err = NULL;
	CHECK_EQ(bt_read("", &out, &err), 0); /* every host, merged by time */
	for (int i = 0; i < 3; i++) {
		char want[64];
		snprintf(want, sizeof want, " %s relay_tick: ", hosts[i]);
		CHECK_EQ(cli_count_str(out, want), 1000 * (i + 1));
	}
	free(out);
	free(err);
	for (int i = 0; i < 3; i++) { /* each apart */
		CHECK_EQ(bt_read(hosts[i], &out, &err), 0);
		CHECK_EQ(cli_count_str(out, " relay_tick: "), 1000 * (i + 1));
		free(out);
		free(err);
	}
}

static void run(void)
{
	fprintf(stderr, "-- exact\n");
	case_exact();
	fprintf(stderr, "-- live\n");
	case_live();
	fprintf(stderr, "-- behind\n");
	case_behind();
	fprintf(stderr, "-- hosts\n");
	case_hosts();
}

int main(int argc, char **argv)
{
	return relayrec_main(argc, argv, NULL, run);
}
