/*
 * log_fds.c -- the file descriptors of trace logs: what
 * posix_trace_create_withlog() accepts to write and posix_trace_open() to
 * read, and logs streamed through a pipe or a socket.
 *
 * Create: EBADF for an fd not open for writing (O_RDONLY, O_PATH, closed,
 * -1, a pipe's read end) with every log-full policy; EINVAL for a pipe, a
 * socket or a device (/dev/null) with LOOP or UNTIL_FULL, for LOOP on an
 * O_APPEND file (UNTIL_FULL and APPEND take it), for a log-max-size one
 * byte under the minimum given by docs/log-format.md and for 0 (that
 * minimum works, APPEND ignores the size: 1 works), for a NULL trid or an
 * attributes object never initialised; TRACE_SYS_MAX + 8 rounds of these
 * failures leave no stream behind.  Default stream-full policy: FLUSH for
 * a stream with a log (NULL attr, or the policy unset), LOOP without (and
 * FLUSH without a log is EINVAL); posix_trace_flush() on a stream without
 * log, shut down, 0 or -1: EINVAL.
 * Open: a valid log opens (O_RDONLY, O_RDWR) and gives its 100 events;
 * EINVAL for an empty file, random bytes, a text file, the header cut at
 * 1, 8, 100, 255 bytes or with one byte changed (the 256-byte header alone
 * is a log without events), a directory, /dev/null, a pipe, a NULL trid;
 * EBADF or EINVAL for a write-only, O_PATH, closed or negative fd; 384
 * open/close rounds leave nothing behind.
 * Pipes and sockets (APPEND): the log goes through a pipe to a child that
 * copies it into a file, and through a socket to a thread; the copy opens
 * and gives exactly START, the 30000 events and two flush pairs, in order.
 * A pipe without reader fails the create with EPIPE, a reader that goes
 * away later makes posix_stream_flush_error EPIPE; SIGPIPE kills nothing.
 */
#include <sys/socket.h>
#include <sys/wait.h>
#include "log_util.h"
#include "helpers.h"

/* ---------------------------------------------------------- create errors */
static int create_log(int fd, int stream_policy, int log_policy, size_t log_size)
{
	trace_attr_t a;
	trace_id_t trid = 0;
	posix_trace_attr_init(&a);
	if (stream_policy)
		posix_trace_attr_setstreamfullpolicy(&a, stream_policy);
	posix_trace_attr_setlogfullpolicy(&a, log_policy);
	posix_trace_attr_setlogsize(&a, log_size);
	int rc = posix_trace_create_withlog(0, &a, fd, &trid);
	if (rc == 0)
		CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&a);
	return rc;
}

static int policy_of(trace_id_t trid, int log)
{
	trace_attr_t a;
	int p = -1;
	CHECK_RC(posix_trace_get_attr(trid, &a), 0);
	if (log)
		CHECK_RC(posix_trace_attr_getlogfullpolicy(&a, &p), 0);
	else
		CHECK_RC(posix_trace_attr_getstreamfullpolicy(&a, &p), 0);
	return p;
}

static void create_errors(void)
{
	const int pol[] = { POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND };
	char p2[256];
	int ro, wr, pa, closed, pp[2], sp[2], null = open("/dev/null", O_WRONLY);
	trace_id_t trid;
	trace_attr_t a;

	wr = lu_tmpfile(p2, sizeof p2, "api-err", O_WRONLY);
	ro = open(p2, O_RDONLY);
	pa = open(p2, O_PATH);
	closed = open(p2, O_WRONLY);
	close(closed);
	REQUIRE(ro >= 0 && pa >= 0 && null >= 0 && pipe(pp) == 0 &&
	        socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
	for (int k = 0; k < TRACE_SYS_MAX + 8; k++) { /* failures leave nothing behind */
		for (int i = 0; i < 3; i++) {
			CHECK_RC(create_log(ro, 0, pol[i], 1 << 20), EBADF);
			CHECK_RC(create_log(pa, 0, pol[i], 1 << 20), EBADF);
			CHECK_RC(create_log(closed, 0, pol[i], 1 << 20), EBADF);
			CHECK_RC(create_log(-1, 0, pol[i], 1 << 20), EBADF);
			CHECK_RC(create_log(pp[0], 0, pol[i], 1 << 20), EBADF);
		}
		for (int i = 0; i < 2; i++) {
			CHECK_RC(create_log(pp[1], 0, pol[i], 1 << 20), EINVAL);
			CHECK_RC(create_log(sp[0], 0, pol[i], 1 << 20), EINVAL);
			CHECK_RC(create_log(null, 0, pol[i], 1 << 20), EINVAL);
		}
		if (t_failures)
			break;
	}
	/* log-max-size: the minimum is the header (256), one block holding the
	 * largest record (56 + 16 + 16 + max-data-size, to 8), the STOP block
	 * (96) and the END block (112): 1576 for the default 1024 */
	for (int i = 0; i < 2; i++) {
		CHECK_RC(create_log(wr, 0, pol[i], 1575), EINVAL);
		CHECK_RC(create_log(wr, 0, pol[i], 0), EINVAL);
		CHECK_RC(create_log(wr, 0, pol[i], 1576), 0);
	}
	CHECK_RC(create_log(wr, 0, POSIX_TRACE_APPEND, 1), 0); /* size ignored */
	CHECK_RC(create_log(pp[1], 0, POSIX_TRACE_APPEND, 1), 0);
	CHECK_RC(create_log(sp[0], 0, POSIX_TRACE_APPEND, 1), 0);
	close(wr);
	wr = open(p2, O_WRONLY | O_APPEND);
	CHECK_RC(create_log(wr, 0, POSIX_TRACE_LOOP, 1 << 20), EINVAL);
	CHECK_RC(create_log(wr, 0, POSIX_TRACE_UNTIL_FULL, 1 << 20), 0);
	CHECK_RC(create_log(wr, 0, POSIX_TRACE_APPEND, 1 << 20), 0);

	/* NULL trid, attributes never initialised */
	CHECK_RC(posix_trace_create_withlog(0, NULL, wr, NULL), EINVAL);
	memset(&a, 0, sizeof a);
	CHECK_RC(posix_trace_create_withlog(0, &a, wr, &trid), EINVAL);

	/* default stream-full policy: FLUSH with a log, LOOP without */
	close(wr);
	wr = open(p2, O_WRONLY);
	CHECK_RC(posix_trace_create_withlog(0, NULL, wr, &trid), 0);
	CHECK_EQ(policy_of(trid, 0), POSIX_TRACE_FLUSH);
	CHECK_EQ(policy_of(trid, 1), POSIX_TRACE_LOOP);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_init(&a);
	posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
	CHECK_RC(posix_trace_create_withlog(0, &a, wr, &trid), 0);
	CHECK_EQ(policy_of(trid, 0), POSIX_TRACE_FLUSH);
	CHECK_EQ(policy_of(trid, 1), POSIX_TRACE_APPEND);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	CHECK_RC(posix_trace_create(0, &a, &trid), 0);
	CHECK_EQ(policy_of(trid, 0), POSIX_TRACE_LOOP);
	CHECK_RC(posix_trace_flush(trid), EINVAL); /* no log */
	CHECK_RC(posix_trace_shutdown(trid), 0);
	CHECK_RC(posix_trace_flush(trid), EINVAL);
	CHECK_RC(posix_trace_flush(0), EINVAL);
	CHECK_RC(posix_trace_flush(-1), EINVAL);
	posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH);
	CHECK_RC(posix_trace_create(0, &a, &trid), EINVAL);
	posix_trace_attr_destroy(&a);

	close(ro); close(wr); close(pa); close(null);
	close(pp[0]); close(pp[1]); close(sp[0]); close(sp[1]);
	lu_rmfile(p2);
}

/* ------------------------------------------------------------ open errors */
static int open_rc(const char *p, int flags)
{
	trace_id_t log = 0;
	int fd = open(p, flags), rc;
	REQUIRE(fd >= 0);
	rc = posix_trace_open(fd, &log);
	if (rc == 0) {
		CHECK_RC(posix_trace_close(log), 0);
	}
	close(fd);
	return rc;
}

static void write_file(const char *p, const void *data, size_t n)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	t_write_full(fd, data, n);
	close(fd);
}

/* A small valid log of `n` user events (FLUSH stream, APPEND log). */
static void make_log(const char *p, int n)
{
	unsigned char pay[32];
	trace_id_t trid;
	trace_attr_t a;
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	REQUIRE(fd >= 0);
	posix_trace_attr_init(&a);
	posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	for (int i = 0; i < n; i++) {
		lu_make(pay, (uint32_t)i, 0, sizeof pay);
		posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, pay, sizeof pay);
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&a);
	close(fd);
}

static void open_errors(void)
{
	char good[256], bad[256], text[1000];
	unsigned char img[8192], hdr[256];
	int fd, pp[2], n;
	trace_id_t log;

	close(lu_tmpfile(good, sizeof good, "fds-good", O_WRONLY));
	close(lu_tmpfile(bad, sizeof bad, "fds-bad", O_WRONLY));
	make_log(good, 100);
	n = lu_load(good, NULL, NULL);
	CHECK_EQ(lu_user(n, POSIX_TRACE_UNNAMED_USEREVENT, getpid(), 1, 1, NULL, NULL), 100);
	CHECK_RC(open_rc(good, O_RDONLY), 0);
	CHECK_RC(open_rc(good, O_RDWR), 0);
	fd = open(good, O_RDONLY);
	REQUIRE(fd >= 0 && t_read_full(fd, hdr, 256) == 0);
	close(fd);

	CHECK_RC(open_rc(bad, O_RDONLY), EINVAL);                   /* empty */
	for (size_t i = 0; i < sizeof img; i++)
		img[i] = (unsigned char)(lu_fill((uint32_t)i, 7, i) * 13 + (i >> 5));
	write_file(bad, img, 4096);                                   /* random */
	CHECK_RC(open_rc(bad, O_RDONLY), EINVAL);
	for (size_t i = 0; i < sizeof text; i++)
		text[i] = "posix trace log? no: just text\n"[i % 31];
	write_file(bad, text, sizeof text);                           /* text */
	CHECK_RC(open_rc(bad, O_RDONLY), EINVAL);
	const size_t cut[] = { 1, 8, 100, 255 };                      /* header cut short */
	for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
		write_file(bad, hdr, cut[i]);
		CHECK_RC(open_rc(bad, O_RDONLY), EINVAL);
	}
	write_file(bad, hdr, 256);               /* the header alone: a log of nothing */
	CHECK_RC(open_rc(bad, O_RDONLY), 0);
	hdr[30] ^= 1;                            /* a header byte changed */
	write_file(bad, hdr, 256);
	CHECK_RC(open_rc(bad, O_RDONLY), EINVAL);

	/* not open for reading */
	int rc = open_rc(good, O_WRONLY);
	CHECK(rc == EBADF || rc == EINVAL);
	fd = open(good, O_RDONLY);
	close(fd);
	rc = posix_trace_open(fd, &log);
	CHECK(rc == EBADF || rc == EINVAL);
	rc = posix_trace_open(-1, &log);
	CHECK(rc == EBADF || rc == EINVAL);
	fd = open(good, O_PATH);
	rc = posix_trace_open(fd, &log);
	CHECK(rc == EBADF || rc == EINVAL);
	close(fd);
	/* not a regular file, NULL trid */
	CHECK_RC(open_rc("/tmp", O_RDONLY), EINVAL);
	CHECK_RC(open_rc("/dev/null", O_RDONLY), EINVAL);
	REQUIRE(pipe(pp) == 0);
	t_write_full(pp[1], hdr, 256);
	CHECK_RC(posix_trace_open(pp[0], &log), EINVAL);
	close(pp[0]);
	close(pp[1]);
	fd = open(good, O_RDONLY);
	CHECK_RC(posix_trace_open(fd, NULL), EINVAL);
	/* opened and closed many times: nothing left behind */
	for (int i = 0; i < 3 * TRACE_SYS_MAX && !t_failures; i++) {
		CHECK_RC(posix_trace_open(fd, &log), 0);
		CHECK_RC(posix_trace_close(log), 0);
	}
	close(fd);
	lu_rmfile(good);
	lu_rmfile(bad);
}

/* -------------------------------------------------- pipes and sockets */
/* Copies from `in` to `out` until end of file; returns the bytes copied. */
static long long copy_all(int in, int out)
{
	static _Thread_local char buf[65536];
	long long total = 0;
	for (;;) {
		ssize_t r = read(in, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return total;
		t_write_full(out, buf, (size_t)r);
		total += r;
	}
}

struct copier { int in, out; long long n; };

static void *copy_main(void *arg)
{
	struct copier *c = arg;
	c->n = copy_all(c->in, c->out);
	return NULL;
}

/* N events into a stream whose log is fd (APPEND), one flush, shutdown. */
static void record_into(int fd, int n)
{
	unsigned char pay[32];
	trace_attr_t a;
	trace_id_t trid;

	posix_trace_attr_init(&a);
	posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
	posix_trace_attr_setstreamsize(&a, 4 << 20); /* holds all: no drops */
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	for (int i = 0; i < n; i++) {
		lu_make(pay, (uint32_t)i, 0, sizeof pay);
		posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, pay, sizeof pay);
		if (i == n / 2) {
			int err = -1;
			CHECK_RC(lu_flush_wait(trid, &err), 0);
			CHECK_EQ(err, 0);
		}
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&a);
}

/* What went through the pipe or socket is the whole log. */
static void check_copy(const char *p, int n)
{
	trace_id_t log;
	int rfd, k = lu_load(p, &log, &rfd);
	CHECK_EQ(k - lu_count(k, POSIX_TRACE_STOP, -1), n + 1 + 4); /* START, 2 flush pairs */
	CHECK_EQ(lu_user(k, POSIX_TRACE_UNNAMED_USEREVENT, getpid(), 1, 1, NULL, NULL), n);
	CHECK_EQ(lu_count(k, POSIX_TRACE_FLUSH_START, getpid()), 2);
	lu_no_damage(k);
	lu_ts_sorted(k);
	struct posix_trace_status_info si = lu_status(log);
	CHECK_EQ(si.posix_stream_flush_error, 0);
	CHECK_EQ(si.posix_log_full_status, POSIX_TRACE_NOT_FULL);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
}

static void pipes_and_sockets(void)
{
	enum { N = 30000 };                      /* about 1.4 MB of log */
	char p[256];
	int pp[2], sp[2], st, out = lu_tmpfile(p, sizeof p, "fds-pipe", O_WRONLY);
	pid_t child;

	/* a pipe, copied into the file by a child process */
	REQUIRE(pipe(pp) == 0);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		close(pp[1]);
		alarm(60);
		_exit(copy_all(pp[0], out) > 0 ? 0 : 1);
	}
	close(pp[0]);
	record_into(pp[1], N);
	close(pp[1]);                            /* the child sees the end */
	REQUIRE(waitpid(child, &st, 0) == child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	check_copy(p, N);

	/* a stream socket, copied by a thread */
	REQUIRE(ftruncate(out, 0) == 0 && lseek(out, 0, SEEK_SET) == 0);
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
	struct copier c = { sp[1], out, 0 };
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, copy_main, &c) == 0);
	record_into(sp[0], N);
	shutdown(sp[0], SHUT_WR);
	pthread_join(th, NULL);
	CHECK_EQ(c.n, lu_fsize(p));
	check_copy(p, N);
	close(sp[0]);
	close(sp[1]);

	/* nobody reads the pipe: EPIPE, and the process is not killed */
	REQUIRE(pipe(pp) == 0);
	close(pp[0]);
	trace_id_t trid;
	trace_attr_t a;
	posix_trace_attr_init(&a);
	posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
	CHECK_RC(posix_trace_create_withlog(0, &a, pp[1], &trid), EPIPE);
	close(pp[1]);
	/* the reader goes away after the header */
	REQUIRE(pipe(pp) == 0);
	CHECK_RC(posix_trace_create_withlog(0, &a, pp[1], &trid), 0);
	close(pp[0]);
	CHECK_RC(posix_trace_start(trid), 0);
	unsigned char pay[32] = { 0 };
	for (int i = 0; i < 5000; i++)           /* more than one block */
		posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, pay, sizeof pay);
	int err = -1;
	CHECK_RC(lu_flush_wait(trid, &err), 0);
	CHECK_EQ(err, EPIPE);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(pp[1]);
	posix_trace_attr_destroy(&a);
	close(out);
	lu_rmfile(p);
}

int main(void)
{
	T_BEGIN(120);
	create_errors();
	open_errors();
	pipes_and_sockets();
	T_END();
}
