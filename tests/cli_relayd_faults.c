/*
 * cli_relayd_faults.c -- `posixtrace record --relayd` when the relay
 * fails: killed, stopped, absent or hostile.
 *
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
	CHECK_EQ(cli_count_str(out, " relay_tick: "), 2000);
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
	unsigned long long ticks = (unsigned long long)cli_count_str(out, " relay_tick: ");
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

static void no_relay(void)
{
	fprintf(stderr, "-- absent\n");
	case_absent();
	fprintf(stderr, "-- hostile\n");
	case_hostile();
}

static void run(void)
{
	fprintf(stderr, "-- restart\n");
	case_restart();
	fprintf(stderr, "-- stall\n");
	case_stall();
}

int main(int argc, char **argv)
{
	return relayrec_main(argc, argv, no_relay, run);
}
