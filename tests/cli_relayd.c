/*
 * cli_relayd.c -- `posixtrace record --relayd`: a traced program streamed
 * live to Debian's lttng-relayd on loopback, read back with babeltrace2.
 * The relay runs on free ports with a private HOME, started and stopped
 * here.  The traced program is this test itself ("produce" mode): it posts
 * an exact number of "relay_tick" events in batches, each batch waiting
 * for a gate file the test creates, and creates a file after each batch.
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
 *   restart    the relay killed mid-run and started again: the events of
 *              the batch posted while it was down are counted as CTF
 *              discarded events, exactly; the others are on the relay;
 *              the local log has all of them
 *   stall      the relay stopped (SIGSTOP) mid-run: the program goes on,
 *              record drops the connection and comes back when it runs
 *   absent     no relay: a clear error naming the URL (exit 1); with -o
 *              the program is recorded locally, and record says so
 *   hostile    a fake relay that answers garbage, closes, or says
 *              nothing: a clear error, exit 1, no crash
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

/* ------------------------------------------------------ produce mode */

/* (bounded: a producer left behind by a failed test goes away) */
static void wait_file(const char *path)
{
	for (int i = 0; access(path, F_OK) != 0; i++) {
		if (i > 120 * 500)
			_exit(5);
		usleep(2000);
	}
}

/* produce PERIOD_US N:GATE:DONE ... [=COUNT]: per batch, wait for GATE
 * ("-": no wait), post N events, create DONE ("-": none); at the end,
 * write the number of events posted into file COUNT (the program's own
 * count, the witness the relay's counts are checked against). */
static int produce(int argc, char **argv)
{
	trace_event_id_t id;
	unsigned period = (unsigned)atoi(argv[2]);
	uint32_t k = 0;

	if (posix_trace_eventid_open("relay_tick", &id) != 0)
		return 3;
	for (int b = 3; b < argc; b++) {
		char gate[512], done[512];
		unsigned n;
		if (argv[b][0] == '=') {
			FILE *f = fopen(argv[b] + 1, "w");
			if (!f || fprintf(f, "%u\n", (unsigned)k) < 0 || fclose(f) != 0)
				return 6;
			continue;
		}
		if (sscanf(argv[b], "%u:%511[^:]:%511s", &n, gate, done) != 3)
			return 4;
		if (strcmp(gate, "-"))
			wait_file(gate);
		for (unsigned i = 0; i < n; i++, k++) {
			posix_trace_event(id, &k, sizeof k);
			if (period)
				usleep(period);
		}
		if (strcmp(done, "-"))
			close(open(done, O_WRONLY | O_CREAT, 0644));
	}
	return 0;
}

/* ------------------------------------------------------------ helpers */
static unsigned long long sum_after(const char *s, const char *key)
{
	unsigned long long sum = 0;
	for (const char *p = s; p && (p = strstr(p, key)) != NULL; p += strlen(key))
		sum += strtoull(p + strlen(key), NULL, 10);
	return sum;
}

static int count_str(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; p && (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* babeltrace2 on a path of the relay's output: its exit status, output
 * and stderr. */
static int bt_read(const char *sub, char **out, char **err)
{
	char path[512];
	snprintf(path, sizeof path, "%s%s%s", cli_path("out"), *sub ? "/" : "", sub);
	return cli_run((char *const[]){ (char *)bt_bin, path, NULL }, out, err);
}

static char *slurp_or_empty(const char *path)
{
	char *s = cli_slurp(path);
	if (!s)
		s = strdup("");
	REQUIRE(s != NULL);
	return s;
}

/* Wait until file path contains what (the alarm bounds it). */
static void wait_text(const char *path, const char *what)
{
	for (;;) {
		char *s = slurp_or_empty(path);
		int found = strstr(s, what) != NULL;
		free(s);
		if (found)
			return;
		usleep(10000);
	}
}

static void touch(const char *name)
{
	close(open(cli_path(name), O_WRONLY | O_CREAT, 0644));
}

static char *batch(char *buf, size_t cap, unsigned n, const char *gate, const char *done)
{
	snprintf(buf, cap, "%u:%s:%s", n, gate ? cli_path(gate) : "-", done ? cli_path(done) : "-");
	return buf;
}

/* relay_tick events of the local log */
static int log_ticks(const char *log)
{
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev);
	int k = cli_count(ev, n, "relay_tick");
	free(ev);
	return k;
}

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
	CHECK_EQ(count_str(out, " relay_tick: "), 5000);
	CHECK_EQ(count_str(out, " posix_trace_start: "), 1);
	CHECK_EQ(count_str(out, " posix_trace_stop: "), 1);
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
		int n = count_str(s, " relay_tick: ");
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
	CHECK_EQ(count_str(s, " relay_tick: "), 3000);
	CHECK(!cli_contains(e, "discarded"));
	free(s);
	free(e);
	char *out = NULL, *err = NULL;
	CHECK_EQ(bt_read("hlive", &out, &err), 0);
	CHECK_EQ(count_str(out, " relay_tick: "), 3000);
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
	CHECK_EQ(count_str(o, " relay_tick: "), N);
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
		CHECK_EQ(count_str(out, want), 1000 * (i + 1));
	}
	free(out);
	free(err);
	for (int i = 0; i < 3; i++) { /* each apart */
		CHECK_EQ(bt_read(hosts[i], &out, &err), 0);
		CHECK_EQ(count_str(out, " relay_tick: "), 1000 * (i + 1));
		free(out);
		free(err);
	}
}

/* Until babeltrace2 reads n relay_tick events in the relay's directory
 * of host (it never reads more). */
static void wait_on_disk_of(const char *host, const char *what, int n)
{
	for (;;) {
		char *out = NULL;
		bt_read(host, &out, NULL);
		int k = count_str(out, what);
		free(out);
		REQUIRE(k <= n);
		if (k == n)
			return;
		usleep(50000);
	}
}

static void wait_on_disk(const char *host, int n)
{
	wait_on_disk_of(host, " relay_tick: ", n);
}

/* record --relayd and -o of three batches of 1000 events for host (its
 * session too): the first at once, then done file HOST.1; the second
 * after gate HOST.g2, then HOST.2; the third after HOST.g3. */
static pid_t record_batches(const char *host, const char *log, const char *err)
{
	char b1[600], b2[600], b3[600], n[4][64];
	snprintf(n[0], sizeof n[0], "%s.1", host);
	snprintf(n[1], sizeof n[1], "%s.g2", host);
	snprintf(n[2], sizeof n[2], "%s.2", host);
	snprintf(n[3], sizeof n[3], "%s.g3", host);
	return spawn(CLI("record", "--relayd", (char *)url(), "--hostname", (char *)host,
	                 "--session", (char *)host, "-o", (char *)log, "--", self, "produce", "100",
	                 batch(b1, sizeof b1, 1000, NULL, n[0]),
	                 batch(b2, sizeof b2, 1000, n[1], n[2]),
	                 batch(b3, sizeof b3, 1000, n[3], NULL)),
	             NULL, err);
}

static void case_restart(void)
{
	char *log = strdup(cli_path("restart.ptlog")), *rec_err = strdup(cli_path("restart.err"));

	pid_t rec = record_batches("hrestart", log, rec_err);
	wait_file(cli_path("hrestart.1"));
	wait_on_disk("hrestart", 1000);
	relayd_stop(SIGKILL);
	touch("hrestart.g2");
	wait_file(cli_path("hrestart.2"));
	wait_text(rec_err, "connection lost");
	relayd_start();
	wait_text(rec_err, "connected again");
	touch("hrestart.g3");
	CHECK_EQ(wait_exit(rec), 0);
	char *e = slurp_or_empty(rec_err);
	CHECK(cli_contains(e, "1000 events missed while it was away"));
	CHECK(cli_contains(e, "; 1000 not delivered"));
	CHECK(cli_contains(e, "over 2 connections"));
	free(e);
	char *out = NULL, *err = NULL;
	CHECK_EQ(bt_read("hrestart", &out, &err), 0);
	CHECK_EQ(count_str(out, " relay_tick: "), 2000);
	/* "Tracer discarded N events between ..." */
	CHECK_EQ(sum_after(err, "Tracer discarded "), 1000);
	free(out);
	free(err);
	CHECK_EQ(log_ticks(log), 3000);
	free(log);
	free(rec_err);
}

/* The relay stopped (SIGSTOP) mid-run: the program goes on, record
 * drops the connection after 2 s without an acknowledgement, and comes
 * back once the relay runs again.  What the stopped relay had taken in
 * before the drop it may still write when it runs again (and record
 * counted it lost): the sum is exact within that. */
static void case_stall(void)
{
	char *log = strdup(cli_path("stall.ptlog")), *rec_err = strdup(cli_path("stall.err"));

	pid_t rec = record_batches("hstall", log, rec_err);
	wait_file(cli_path("hstall.1"));
	wait_on_disk("hstall", 1000);
	kill(relayd_pid, SIGSTOP);
	touch("hstall.g2");
	wait_file(cli_path("hstall.2")); /* the program was not held up */
	wait_text(rec_err, "connection lost");
	kill(relayd_pid, SIGCONT);
	wait_text(rec_err, "connected again");
	touch("hstall.g3");
	CHECK_EQ(wait_exit(rec), 0);
	CHECK_EQ(log_ticks(log), 3000);
	char *e = slurp_or_empty(rec_err);
	CHECK(cli_contains(e, "it stalled"));
	unsigned long long nd = 0;
	const char *p = strstr(e, " not delivered");
	if (p) {
		while (p > e && p[-1] >= '0' && p[-1] <= '9')
			p--;
		nd = strtoull(p, NULL, 10);
	}
	free(e);
	char *out = NULL, *err = NULL;
	CHECK_EQ(bt_read("hstall", &out, &err), 0);
	unsigned long long ticks = (unsigned long long)count_str(out, " relay_tick: ");
	unsigned long long disc = sum_after(err, "Tracer discarded ");
	CHECK(nd > 0);
	CHECK_EQ(disc, nd);
	CHECK(ticks >= 2000 && ticks + disc >= 3000 && ticks + disc <= 4000);
	free(out);
	free(err);
	free(log);
	free(rec_err);
}

static void case_absent(void)
{
	char u[64], b1[600], *err = NULL;
	unsigned dead = free_port();
	snprintf(u, sizeof u, "net://127.0.0.1:%u", dead);

	CHECK_EQ(cli_run(CLI("record", "--relayd", u, "--", self, "produce", "0",
	                     batch(b1, sizeof b1, 10, NULL, "absent.ran")), NULL, &err), 1);
	CHECK(cli_contains(err, u));
	CHECK(cli_contains(err, "cannot connect"));
	CHECK(cli_contains(err, "Connection refused"));
	CHECK(access(cli_path("absent.ran"), F_OK) != 0); /* not run untraced */
	free(err);

	char *log = strdup(cli_path("absent.ptlog"));
	CHECK_EQ(cli_run(CLI("record", "--relayd", u, "-o", (char *)log, "--", self, "produce", "0",
	                     batch(b1, sizeof b1, 700, NULL, NULL)), NULL, &err), 0);
	CHECK(cli_contains(err, "recording goes on into the local log only"));
	CHECK(cli_contains(err, "never reached"));
	free(err);
	CHECK_EQ(log_ticks(log), 700);
	free(log);

	CHECK_EQ(cli_run(CLI("record", "--relayd", "tcp://x", "--", self), NULL, &err), 2);
	CHECK(cli_contains(err, "not net://HOST"));
	free(err);
	CHECK_EQ(cli_run(CLI("record", "--relayd", u, "--hostname", "../x", "--", self), NULL,
	                 &err), 2);
	CHECK(cli_contains(err, "--hostname"));
	free(err);
}

/* A fake relay on two ports: after a version command (24 + 8 bytes) it
 * answers reply[len] (len < 0: closes; 0: says nothing), and keeps
 * reading.  Returns its pid. */
static pid_t fake_relay(unsigned *cp, unsigned *dp, const void *reply, int len)
{
	int ls[2] = { t_listen_loopback(cp), t_listen_loopback(dp) };
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0) {
		int c = accept(ls[0], NULL, NULL), d = accept(ls[1], NULL, NULL);
		unsigned char buf[4096];
		size_t got = 0;
		while (got < 32) {
			ssize_t n = read(c, buf, sizeof buf);
			if (n <= 0)
				_exit(0);
			got += (size_t)n;
		}
		if (len < 0)
			_exit(0);
		if (len > 0 && write(c, reply, (size_t)len) != len)
			_exit(0);
		while (read(c, buf, sizeof buf) > 0)
			;
		(void)d;
		_exit(0);
	}
	close(ls[0]);
	close(ls[1]);
	return p;
}

static void case_hostile(void)
{
	static const struct { const char *reply; int len; const char *want; } cases[] = {
		{ "HTTP/1.0 400 Bad Request\r\n\r\n", 28, "a bad reply to version check" },
		{ "\0\0\0\2\0\0\0\1", 8, "protocol version 2.1" },
		{ "\0\0\0\7\0\0\0\15", 8, "protocol version 7.13" },
		{ "", -1, "it closed the connection" },
		{ "", 0, "no reply to version check" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned cp, dp;
		char u[64], *err = NULL;
		pid_t f = fake_relay(&cp, &dp, cases[i].reply, cases[i].len);
		snprintf(u, sizeof u, "net://127.0.0.1:%u:%u", cp, dp);
		CHECK_EQ(cli_run(CLI("record", "--relayd", u, "--", self, "produce", "0", "1:-:-"),
		                 NULL, &err), 1);
		CHECK(cli_contains(err, u));
		CHECK(cli_contains(err, cases[i].want));
		if (!cli_contains(err, cases[i].want))
			fprintf(stderr, "hostile %zu: %s\n", i, err);
		free(err);
		kill(f, SIGKILL);
		wait_exit(f);
	}
	/* a version answered right, then a session directory longer than any */
	{
		unsigned char r[8 + 16] = { 0, 0, 0, 2, 0, 0, 0, 13, 0, 0, 0, 0, 0, 0, 0, 1,
		                            0, 0, 0, 10, 0x7f, 0xff, 0xff, 0xff };
		unsigned cp, dp;
		char u[64], *err = NULL;
		pid_t f = fake_relay(&cp, &dp, r, sizeof r);
		snprintf(u, sizeof u, "net://127.0.0.1:%u:%u", cp, dp);
		CHECK_EQ(cli_run(CLI("record", "--relayd", u, "--", self, "produce", "0", "1:-:-"),
		                 NULL, &err), 1);
		CHECK(cli_contains(err, "a session directory longer than 4096 bytes"));
		free(err);
		kill(f, SIGKILL);
		wait_exit(f);
	}
}

/* The count a produce program wrote into file name (-1: none). */
static long program_count(const char *name)
{
	char *s = cli_slurp(cli_path(name));
	long n = s && *s ? strtol(s, NULL, 10) : -1;
	free(s);
	return n;
}

/* What record said it sent ("N events sent to HOST/"), -1 if not said. */
static long record_sent(const char *err, const char *host)
{
	char key[96];
	snprintf(key, sizeof key, " events sent to %s/", host);
	const char *p = err ? strstr(err, key) : NULL;
	if (!p)
		return -1;
	while (p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtol(p, NULL, 10);
}

/* Host name's events on the relay are exactly the program's own count
 * (file name.count), and record said it sent them (and START, STOP) and
 * lost none. */
static void check_host(const char *name, const char *rec_err)
{
	char cnt[96], *out = NULL, *err = NULL;
	snprintf(cnt, sizeof cnt, "%s.count", name);
	long posted = program_count(cnt);
	char *e = slurp_or_empty(rec_err);
	CHECK(posted > 0);
	CHECK_EQ(record_sent(e, name), posted + 2);
	CHECK(cli_contains(e, "; 0 not delivered"));
	CHECK_EQ(bt_read(name, &out, &err), 0);
	CHECK_EQ(count_str(out, " relay_tick: "), posted);
	if (count_str(out, " relay_tick: ") != posted)
		fprintf(stderr, "%s: the program posted %ld, the relay has %d; record: %s", name,
		        posted, count_str(out, " relay_tick: "), e);
	free(e);
	free(out);
	free(err);
}

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

int main(int argc, char **argv)
{
	if (argc > 3 && !strcmp(argv[1], "produce"))
		return produce(argc, argv);
	signal(SIGALRM, relayd_on_alarm);
	T_BEGIN(240);
	cli_setup();
	relayd_need();
	relayd_ports();
	fprintf(stderr, "-- absent\n");
	case_absent();
	fprintf(stderr, "-- hostile\n");
	case_hostile();
	relayd_start();
	fprintf(stderr, "-- exact\n");
	case_exact();
	fprintf(stderr, "-- live\n");
	case_live();
	fprintf(stderr, "-- behind\n");
	case_behind();
	fprintf(stderr, "-- hosts\n");
	case_hosts();
	fprintf(stderr, "-- restart\n");
	case_restart();
	fprintf(stderr, "-- stall\n");
	case_stall();
	fprintf(stderr, "-- fleet\n");
	case_fleet();
	fprintf(stderr, "-- attach\n");
	case_attach();
	fprintf(stderr, "-- tree\n");
	case_tree();
	fprintf(stderr, "-- slowfork\n");
	case_slowfork();
	relayd_stop(SIGTERM);
	T_END();
}
