/*
 * fault_limits.c -- resource limits: a stream bigger than the machine, and
 * no file descriptor left.
 *
 * 1. posix_trace_attr_setstreamsize() takes 1 .. 2^40 (0, 2^40 + 1 and
 *    SIZE_MAX are EINVAL).  A stream of 2^40 bytes, and one of RAM + swap
 *    + 1 GiB, "a stream size the machine cannot back", fail with ENOMEM,
 *    quickly and without backing memory on the way: each is tried in a
 *    child H watched from here (a reservation of more than 1 GiB, or a
 *    quarter, of the machine's available memory, or 20 s, and H is killed
 *    and the check fails, instead of the machine running out of memory).
 *    H checks that nothing is left behind: the same /proc/self/fd
 *    listing, its control memfd (POSIXTRACE_CTL) holding no more blocks
 *    than before, RssShmem not grown; and that a small stream then works
 *    (exact count).
 * 2. RLIMIT_NOFILE set to the lowest free fd number plus 0..7:
 *    posix_trace_create() for this process and for a traced child either
 *    fails with EAGAIN, ENOMEM or EMFILE (never ESRCH for a child that
 *    exists, never a crash) and leaves the fd listing as it was, or
 *    succeeds with a stream that really traces its target (exact count of
 *    events the target records).  With the limit back, both work.
 * (TRACE_SYS_MAX: tests/sysmax.c.)
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

static trace_event_id_t ev_id;

/* This process's open fds as a bit set (fds below 1024), via /proc. */
struct fdset { uint64_t b[16]; };

static void fd_list(struct fdset *s)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	REQUIRE(d != NULL);
	memset(s, 0, sizeof *s);
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd != dirfd(d) && fd < 1024)
			s->b[fd / 64] |= 1ull << (fd % 64);
	}
	closedir(d);
}

static int fd_same(const struct fdset *a, const struct fdset *b)
{
	int same = memcmp(a, b, sizeof *a) == 0;
	for (int fd = 0; !same && fd < 1024; fd++)
		if ((a->b[fd / 64] ^ b->b[fd / 64]) >> (fd % 64) & 1)
			fprintf(stderr, "fd %d %s\n", fd, a->b[fd / 64] >> (fd % 64) & 1 ? "closed" : "left open");
	return same;
}

/* Blocks (kB) the control memfd holds. */
static long ctl_kb(void)
{
	const char *e = getenv("POSIXTRACE_CTL");
	struct stat st;
	return e && fstat(atoi(e), &st) == 0 ? (long)(st.st_blocks / 2) : -1;
}

/* Read trid to its end: how many events of ev_id (and of pid, unless it
 * is 0) carry 0, 1, 2, ... in order. */
static int count_seq(trace_id_t trid, pid_t pid)
{
	int got = 0;
	for (;;) {
		struct posix_trace_event_info ev;
		int v, un = -1;
		size_t len;
		if (posix_trace_trygetnext_event(trid, &ev, &v, sizeof v, &len, &un) != 0 || un)
			break;
		if (ev.posix_event_id == ev_id && (!pid || ev.posix_pid == pid) && len == sizeof v &&
		    v == got)
			got++;
	}
	return got;
}

/* Record n events here and read them back from trid: exactly n? */
static int small_batch(trace_id_t trid, int n)
{
	for (int i = 0; i < n; i++)
		posix_trace_event(ev_id, &i, sizeof i);
	return count_seq(trid, 0);
}

/* ------------------------------------------------------- 1: too big */
struct hrep { int rc, fds_same, small_ok; long ctl_before, ctl_after, shm_before, shm_after; double secs; };

static void huge_in_child(size_t size, int out)
{
	struct hrep r = { -1, 0, 0, 0, 0, 0, 0, 0 };
	struct fdset a, b;
	trace_attr_t attr;
	trace_id_t trid;
	alarm(60);
	posix_trace_attr_init(&attr);
	if (posix_trace_attr_setstreamsize(&attr, size) != 0)
		_exit(2);
	fd_list(&a);
	r.ctl_before = ctl_kb();
	r.shm_before = t_proc_kb("/proc/self/status", "RssShmem");
	double t0 = t_now_s();
	r.rc = posix_trace_create(0, &attr, &trid);
	r.secs = t_now_s() - t0;
	if (r.rc == 0)
		posix_trace_shutdown(trid);
	r.ctl_after = ctl_kb();
	r.shm_after = t_proc_kb("/proc/self/status", "RssShmem");
	fd_list(&b);
	r.fds_same = fd_same(&b, &a);
	/* the library still works: a small stream records */
	if (posix_trace_create(0, NULL, &trid) == 0) {
		r.small_ok = posix_trace_start(trid) == 0 && small_batch(trid, 100) == 100;
		posix_trace_shutdown(trid);
	}
	t_write_full(out, &r, sizeof r);
	_exit(0);
}

static void huge(size_t size, const char *what)
{
	int p[2], st;
	struct hrep r;
	REQUIRE(pipe(p) == 0);
	long base = t_proc_kb("/proc/meminfo", "MemAvailable"), low = base;
	long limit = base / 4 < (1l << 20) ? base / 4 : (1l << 20); /* kB */
	fflush(stdout);
	pid_t h = fork();
	REQUIRE(h >= 0);
	if (h == 0) {
		close(p[0]);
		huge_in_child(size, p[1]);
	}
	close(p[1]);
	double end = t_now_s() + 20;
	int killed = 0;
	while (waitpid(h, &st, WNOHANG) == 0) {
		long v = t_proc_kb("/proc/meminfo", "MemAvailable");
		low = v >= 0 && v < low ? v : low;
		if ((base >= 0 && base - v > limit) || t_now_s() > end) {
			kill(h, SIGKILL);
			REQUIRE(waitpid(h, &st, 0) == h);
			killed = 1;
			break;
		}
		usleep(1000);
	}
	if (killed) {
		fprintf(stderr, "%s: posix_trace_create() was backing the stream: %ld MB of "
		        "the machine's memory gone after %s; killed\n", what, (base - low) >> 10,
		        t_now_s() > end ? "20 s" : "a moment");
		CHECK(!"a stream the machine cannot back must fail with ENOMEM at once");
		close(p[0]);
		return;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	REQUIRE(t_read_full(p[0], &r, sizeof r) == 0);
	close(p[0]);
	printf("%s: %s in %.3f s, %ld MB of memory used on the way\n", what, strerror(r.rc),
	       r.secs, (base - low) >> 10);
	CHECK_RC(r.rc, ENOMEM);
	CHECK(r.fds_same);
	CHECK(r.ctl_after <= r.ctl_before + 1024);
	CHECK(r.shm_after <= r.shm_before + 1024);
	CHECK(r.small_ok);
}

static void too_big(void)
{
	trace_attr_t a;
	struct sysinfo si;
	REQUIRE(posix_trace_attr_init(&a) == 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&a, 0), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamsize(&a, (1ull << 40) + 1), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamsize(&a, SIZE_MAX), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamsize(&a, 1ull << 40), 0);
	posix_trace_attr_destroy(&a);
	huge(1ull << 40, "2^40 bytes");
	REQUIRE(sysinfo(&si) == 0);
	uint64_t ram = ((uint64_t)si.totalram + si.totalswap) * si.mem_unit + (1ull << 30);
	if (ram < 1ull << 40)
		huge((size_t)ram, "RAM + swap + 1 GiB");
}

/* ------------------------------------------- 2: no file descriptor left */
struct tcmd { char op; int n; };

static void traced_child(int cfd, int rfd)
{
	struct tcmd c;
	alarm(60);
	while (t_read_full(cfd, &c, sizeof c) == 0) {
		for (int i = 0; i < c.n; i++)
			posix_trace_event(ev_id, &i, sizeof i);
		t_write_full(rfd, "d", 1);
	}
	_exit(0);
}

/* Events of pid in trid after the child recorded n (0..n-1 in order). */
static int remote_batch(trace_id_t trid, pid_t pid, int cfd, int rfd, int n)
{
	struct tcmd c = { 'B', n };
	char d;
	t_write_full(cfd, &c, sizeof c);
	REQUIRE(t_read_full(rfd, &d, 1) == 0);
	return count_seq(trid, pid);
}

static void no_fds(void)
{
	struct rlimit old, lim;
	struct fdset a, b;
	int c[2], r[2], st, lowest = 0, rcs[2][8];
	REQUIRE(pipe(c) == 0 && pipe(r) == 0);
	pid_t tp = fork();
	REQUIRE(tp >= 0);
	if (tp == 0) {
		close(c[1]);
		traced_child(c[0], r[1]);
	}
	REQUIRE(getrlimit(RLIMIT_NOFILE, &old) == 0);
	while (fcntl(lowest, F_GETFD) != -1)
		lowest++;
	for (int extra = 0; extra < 8; extra++) {
		for (int who = 0; who < 2; who++) {
			trace_id_t trid;
			fd_list(&a);
			lim = old;
			lim.rlim_cur = (rlim_t)(lowest + extra);
			REQUIRE(setrlimit(RLIMIT_NOFILE, &lim) == 0);
			int rc = posix_trace_create(who ? tp : 0, NULL, &trid);
			REQUIRE(setrlimit(RLIMIT_NOFILE, &old) == 0);
			rcs[who][extra] = rc;
			if (rc != 0) {
				if (rc != EAGAIN && rc != ENOMEM && rc != EMFILE)
					fprintf(stderr, "RLIMIT_NOFILE %d, %s: posix_trace_create: %s\n",
					        lowest + extra, who ? "a child" : "this process", strerror(rc));
				CHECK(rc == EAGAIN || rc == ENOMEM || rc == EMFILE);
				fd_list(&b);
				CHECK(fd_same(&b, &a));
				continue;
			}
			CHECK_RC(posix_trace_start(trid), 0);
			int got = who ? remote_batch(trid, tp, c[1], r[0], 100) : small_batch(trid, 100);
			if (got != 100)
				fprintf(stderr, "RLIMIT_NOFILE %d, %s: created, but the stream got %d "
				        "of 100 events\n", lowest + extra, who ? "a child" : "this process", got);
			CHECK_EQ(got, 100);
			CHECK_RC(posix_trace_shutdown(trid), 0);
			fd_list(&b);
			CHECK(fd_same(&b, &a));
		}
	}
	for (int who = 0; who < 2; who++)
		printf("RLIMIT_NOFILE lowest free fd + 0..7, %s: %d %d %d %d %d %d %d %d\n",
		       who ? "a child" : "this process", rcs[who][0], rcs[who][1], rcs[who][2],
		       rcs[who][3], rcs[who][4], rcs[who][5], rcs[who][6], rcs[who][7]);
	/* the limit back: both work */
	for (int who = 0; who < 2; who++) {
		trace_id_t trid;
		REQUIRE(posix_trace_create(who ? tp : 0, NULL, &trid) == 0);
		CHECK_RC(posix_trace_start(trid), 0);
		CHECK_EQ(who ? remote_batch(trid, tp, c[1], r[0], 100) : small_batch(trid, 100), 100);
		CHECK_RC(posix_trace_shutdown(trid), 0);
	}
	close(c[1]);
	REQUIRE(waitpid(tp, &st, 0) == tp);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(c[0]); close(r[0]); close(r[1]);
}

int main(void)
{
	T_BEGIN(120);
	signal(SIGPIPE, SIG_IGN);
	REQUIRE(posix_trace_eventid_open("fault-limits", &ev_id) == 0);
	too_big();
	no_fds();
	T_END();
}
