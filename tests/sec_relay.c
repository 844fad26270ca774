/*
 * sec_relay.c -- a relay that drips its replies cannot hold back the
 * traced program, nor `record`'s end (docs/security.md, "Streaming to a
 * relay"; issue 47).  A fake relay on free loopback ports, run by this
 * test, speaks the relay protocol and answers:
 *
 *   session  CREATE_SESSION with a reply announcing a 4096-byte directory,
 *            then one byte of it every DRIP_MS (each byte well within a
 *            timeout per receive): the program starts at most the
 *            deadline of the whole session exchange (2 s) after the
 *            relay took the connection, and the local log has every event
 *            it posted (its own count);
 *   acks     the session as a relay would, then each acknowledgement
 *            (SEND_INDEX) and CLOSE_STREAM reply one byte every DRIP_MS:
 *            record ends at most END_S after the program (2 s for what is
 *            left, an exchange under way included, 1 s kept open for live
 *            readers, 2 s to close), and the local log has every event.
 *
 * The fake relay gives up after GIVE_UP_S (before the fix the program
 * started, or record ended, only then).  The program is this test
 * ("post" mode): it writes when it started (CLOCK_MONOTONIC), posts
 * events over a second, writes how many and when it ended.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "cli_util.h"

#define DRIP_MS 500
#define GIVE_UP_S 20
#define START_S 2.5 /* the 2 s deadline, and the program's release and exec */
#define END_S 5.5   /* the three bounds above, and the recorder's own end */
#define POSTS 100

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* post FILE: FILE gets "START COUNT END" */
static int post(const char *file)
{
	trace_event_id_t id;
	double t0 = mono();
	uint32_t k = 0;

	if (posix_trace_eventid_open("sec_tick", &id) != 0)
		return 3;
	for (; k < POSTS; k++) {
		posix_trace_event(id, &k, sizeof k);
		usleep(10000);
	}
	FILE *f = fopen(file, "w");
	if (!f || fprintf(f, "%.6f %u %.6f\n", t0, (unsigned)k, mono()) < 0 || fclose(f) != 0)
		return 6;
	return 0;
}

static void be(unsigned char *o, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		o[i] = (unsigned char)v;
}

static uint64_t get_be(const unsigned char *p, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* n bytes, the first at once, then one every DRIP_MS */
static void drip(int c, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			usleep(DRIP_MS * 1000);
		if (write(c, p + i, 1) != 1)
			_exit(0);
	}
}

/* The fake relay (a child): mode 's' drips the session's reply, 'a' the
 * acknowledgements and closes.  Its control and data ports in cp, dp;
 * when it took the control connection (CLOCK_MONOTONIC) into file at. */
static pid_t fake_relay(int mode, unsigned *cp, unsigned *dp, const char *at)
{
	int ls[2] = { t_listen_loopback(cp), t_listen_loopback(dp) };
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p > 0) {
		close(ls[0]);
		close(ls[1]);
		return p;
	}
	alarm(GIVE_UP_S);
	int c = accept(ls[0], NULL, NULL);
	FILE *fa = fopen(at, "w");
	if (!fa || fprintf(fa, "%.6f\n", mono()) < 0 || fclose(fa) != 0)
		_exit(0);
	int d = accept(ls[1], NULL, NULL);
	close(ls[0]); /* one connection: a try again is refused */
	close(ls[1]);
	if (c < 0 || d < 0)
		_exit(0);
	if (fork() == 0) { /* the data port read and dropped */
		static unsigned char sink[65536];
		while (read(d, sink, sizeof sink) > 0)
			;
		_exit(0);
	}
	close(d);
	static unsigned char pay[1 << 17];
	uint64_t handle = 1;
	for (;;) {
		unsigned char h[24], r[16 + 8] = { 0 };
		if (t_read_full(c, h, 24))
			_exit(0);
		uint64_t len = get_be(h + 8, 8);
		uint32_t cmd = (uint32_t)get_be(h + 16, 4);
		if (len > sizeof pay || t_read_full(c, pay, (size_t)len))
			_exit(0);
		switch (cmd) {
		case 5: /* VERSION */
			be(r, 2, 4), be(r + 4, 13, 4);
			drip(c, r, 0), (void)!write(c, r, 8);
			break;
		case 2: /* CREATE_SESSION */
			be(r, 1, 8), be(r + 8, 10, 4);
			if (mode == 's') {
				static unsigned char dir[16 + 4096];
				memcpy(dir, r, 12);
				be(dir + 12, 4096, 4);
				memset(dir + 16, 'd', 4095);
				(void)!write(c, dir, 16);
				drip(c, dir + 16, 4096);
				_exit(0);
			}
			be(r + 12, 4, 4), memcpy(r + 16, "dir", 4);
			(void)!write(c, r, 20);
			break;
		case 1: /* ADD_STREAM */
			be(r, handle++, 8), be(r + 8, 10, 4);
			(void)!write(c, r, 12);
			break;
		case 19: case 16: /* CREATE_TRACE_CHUNK, STREAMS_SENT */
			be(r, 10, 4);
			(void)!write(c, r, 4);
			break;
		case 13: case 7: /* SEND_INDEX, CLOSE_STREAM */
			be(r, 10, 4);
			drip(c, r, 4);
			break;
		default: /* SEND_METADATA: no reply */
			break;
		}
	}
}

static void one(int mode)
{
	unsigned cp, dp;
	char u[64], *err = NULL, *log = strdup(cli_path(mode == 's' ? "s.ptlog" : "a.ptlog"));
	const char *res = cli_path(mode == 's' ? "s.res" : "a.res"), *self = cli_path("self");
	const char *at = strdup(cli_path("relay.at"));
	pid_t f = fake_relay(mode, &cp, &dp, at);
	snprintf(u, sizeof u, "net://127.0.0.1:%u:%u", cp, dp);
	int rc = cli_run(CLI("record", "--relayd", u, "-o", log, "--", (char *)self, "post",
	                     (char *)res), NULL, &err);
	double t1 = mono(), start = 0, end = 0, t0 = 0;
	unsigned n = 0;
	FILE *fr = fopen(res, "r");
	CHECK(fr && fscanf(fr, "%lf %u %lf", &start, &n, &end) == 3);
	if (fr)
		fclose(fr);
	fr = fopen(at, "r");
	CHECK(fr && fscanf(fr, "%lf", &t0) == 1);
	if (fr)
		fclose(fr);
	free((char *)at);
	CHECK_EQ(rc, 0);
	CHECK_EQ(n, POSTS);
	if (mode == 's') {
		printf("session dripped: the program started %.2f s after the relay's accept\n",
		       start - t0);
		CHECK(start - t0 < START_S);
		CHECK(cli_contains(err, "within 2000 ms"));
	} else {
		printf("acknowledgements dripped: record ended %.2f s after the program\n", t1 - end);
		CHECK(t1 - end < END_S);
		CHECK(cli_contains(err, "connection lost"));
	}
	if (rc || !cli_contains(err, mode == 's' ? "within 2000 ms" : "connection lost"))
		fprintf(stderr, "record:\n%s\n", err);
	/* the local log has every event the program posted */
	struct cli_ev *ev;
	int k = cli_read_log(log, &ev);
	CHECK_EQ(cli_count(ev, k, "sec_tick"), POSTS);
	free(ev);
	free(err);
	free(log);
	kill(f, SIGKILL);
	waitpid(f, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "post"))
		return post(argv[2]);
	T_BEGIN(120);
	cli_setup();
	char self[4096] = { 0 };
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	REQUIRE(symlink(self, cli_path("self")) == 0);
	one('s');
	one('a');
	T_END();
}
