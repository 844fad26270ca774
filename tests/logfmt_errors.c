/*
 * logfmt_errors.c -- damaged trace logs, failing writes, bad descriptors
 * (src/log/logfmt.h).  A log cut at every byte offset opens (or is EINVAL when
 * the header is cut) and yields exactly the events of its complete blocks;
 * random byte flips yield a POSIX_TRACE_ERROR event or fewer events, never
 * a wrong one; ENOSPC (a 64 KiB tmpfs, /dev/full) and EFBIG (RLIMIT_FSIZE)
 * are returned and kept, and what was written before stays readable;
 * descriptors of the wrong kind are EBADF or EINVAL.
 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "logfmt_util.h"

static struct res A, B;
static uint64_t seed = 12345;

static uint64_t rnd(void)
{
	return seed = mix(seed);
}

/* A small finished log: 150 events, blocks of <= 512 bytes. */
static uint64_t small_log(int fd, int policy, uint64_t log_max, uint64_t n)
{
	struct pt_attr_img a = mkattr(60);
	struct pt_logw_opt o = { .block_size = 512 };
	struct posix_trace_status_info st = { 0 };
	struct pt_logw w;
	uint64_t lost;

	g_maxlen = 60, g_maxpay = 64;
	REQUIRE(pt_logw_init_opt(&w, fd, &a, policy, log_max, &o) == 0);
	put_names(&w);
	for (uint64_t i = 0; i < n; i++)
		CHECK_RC(put_ev(&w, i), 0);
	CHECK_RC(pt_logw_finish(&w, &st), 0);
	lost = w.lost;
	pt_logw_free(&w);
	return lost;
}

static void t_cuts(void)
{
	static uint64_t end[150];
	struct pt_logr r;
	int fd = mfd(), cp = mfd();
	uint64_t size, bad_at = 0, nbad = 0;

	small_log(fd, POSIX_TRACE_APPEND, 0, 150);
	read_log(fd, &A, &r);
	REQUIRE(A.rc == 0 && contiguous(&A, 0, 150) && A.has_status);
	for (size_t k = 0; k < 150; k++) /* where the block of event k ends */
		end[k] = r.items[A.item[k]].off + r.items[A.item[k]].len;
	pt_logr_close(&r);
	size = fsize(fd);
	copy_fd(fd, cp, size);
	for (uint64_t c = size + 1; c-- > 0;) {
		size_t want = 0;
		int ok;

		REQUIRE(ftruncate(cp, (off_t)c) == 0);
		read_log(cp, &B, NULL);
		while (want < 150 && end[want] <= c)
			want++;
		if (c < PT_LOG_HDR)
			ok = B.rc == EINVAL;
		else
			ok = B.rc == 0 && contiguous(&B, 0, want) && !B.nerr && !B.bad && !B.nstop &&
			     B.has_status == (c == size);
		if (!ok)
			nbad++, bad_at = c;
	}
	if (nbad)
		fprintf(stderr, "cut: %llu bad lengths, e.g. %llu\n", (unsigned long long)nbad,
		        (unsigned long long)bad_at);
	CHECK_EQ(nbad, 0);

	/* a LOOP log that wrapped: any cut reads the events in order */
	small_log(fd, POSIX_TRACE_LOOP, 4096, 400);
	size = fsize(fd);
	copy_fd(fd, cp, size);
	nbad = 0;
	for (uint64_t c = size + 1; c-- > 0;) {
		REQUIRE(ftruncate(cp, (off_t)c) == 0);
		read_log(cp, &B, NULL);
		if (B.rc != (c < PT_LOG_HDR ? EINVAL : 0) || B.bad || B.nstop)
			nbad++, bad_at = c;
	}
	CHECK_EQ(nbad, 0);
	close(fd);
	close(cp);
}

/* One flipped byte in an event block costs that block, reported as one
 * error event; in padding nothing; in the END block the status. */
static void t_flip_one(void)
{
	struct blk { uint64_t off; uint32_t len, nev; } b[64];
	struct pt_logr r;
	int fd = mfd(), cp = mfd();
	size_t nb = 0, nbad = 0;
	uint64_t size;

	small_log(fd, POSIX_TRACE_APPEND, 0, 150);
	size = fsize(fd);
	read_log(fd, &A, &r);
	REQUIRE(A.rc == 0 && contiguous(&A, 0, 150));
	for (uint64_t off = PT_LOG_FIRST; off < size; nb++) {
		unsigned char h[PT_LOG_BLK];
		REQUIRE(nb < 64 && pread(fd, h, sizeof h, (off_t)off) == (ssize_t)sizeof h);
		b[nb].off = off;
		b[nb].len = pt_log_get32(h + PT_LOG_B_LEN, 0);
		b[nb].nev = 0;
		for (size_t k = 0; k < A.nidx; k++)
			b[nb].nev += r.items[A.item[k]].off == off;
		off += PT_LOG_ALIGN8(b[nb].len);
	}
	pt_logr_close(&r);
	for (int it = 0; it < 3000; it++) {
		uint64_t pos = PT_LOG_FIRST + rnd() % (size - PT_LOG_FIRST);
		unsigned char x;
		size_t k = 0;
		int ok;

		copy_fd(fd, cp, size);
		REQUIRE(pread(cp, &x, 1, (off_t)pos) == 1);
		x ^= (unsigned char)(1 + rnd() % 255);
		REQUIRE(pwrite(cp, &x, 1, (off_t)pos) == 1);
		read_log(cp, &B, NULL);
		while (k + 1 < nb && b[k + 1].off <= pos)
			k++;
		if (pos >= b[k].off + b[k].len) /* padding */
			ok = B.nerr == 0 && B.nidx == 150 && B.has_status;
		else if (k == nb - 1) /* the END block */
			ok = B.nerr == 0 && B.nidx == 150 && !B.has_status;
		else
			ok = B.nerr == 1 && B.nidx == 150 - b[k].nev && B.has_status;
		ok = ok && B.rc == 0 && !B.bad;
		if (!ok && nbad++ < 5)
			fprintf(stderr, "flip at %llu (block %zu): rc %d, %zu events, %zu errors\n",
			        (unsigned long long)pos, k, B.rc, B.nidx, B.nerr);
	}
	CHECK_EQ(nbad, 0);
	close(fd);
	close(cp);
}

/* Several flipped bytes anywhere, in a sequential and a wrapped log. */
static void t_flip_many(int policy)
{
	int fd = mfd(), cp = mfd();
	uint64_t size;
	size_t nbad = 0;

	small_log(fd, policy, 4096, policy == POSIX_TRACE_LOOP ? 400 : 150);
	size = fsize(fd);
	for (int it = 0; it < 2000; it++) {
		unsigned nflip = 1 + (unsigned)(rnd() % 8);
		copy_fd(fd, cp, size);
		for (unsigned f = 0; f < nflip; f++) {
			uint64_t pos = (it % 2 ? PT_LOG_FIRST : 0) + rnd() % (size - PT_LOG_FIRST);
			unsigned char x;
			REQUIRE(pread(cp, &x, 1, (off_t)pos) == 1);
			x ^= (unsigned char)(1 + rnd() % 255);
			REQUIRE(pwrite(cp, &x, 1, (off_t)pos) == 1);
		}
		read_log(cp, &B, NULL);
		if ((B.rc && B.rc != EINVAL) || B.bad || B.nerr > nflip + 1 || B.nstop)
			nbad++;
	}
	CHECK_EQ(nbad, 0);
	close(fd);
	close(cp);
}

/* Writes until a write fails with `want`; then everything that was not
 * dropped reads back, in order, with no error event. */
static void fill_until(int fd, int want)
{
	struct pt_attr_img a = mkattr(200);
	struct pt_logw_opt o = { .block_size = 4096 };
	struct pt_logw w;
	uint64_t n = 0;
	int rc = 0;

	g_maxlen = g_maxpay = 200;
	REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
	while (!rc && n < MAXN)
		rc = put_ev(&w, n++);
	CHECK_RC(rc, want);
	for (int k = 0; k < 20; k++)
		put_ev(&w, n++);
	rc = pt_logw_finish(&w, NULL);
	CHECK(rc == 0 || rc == want);
	CHECK_EQ(w.err, want);
	CHECK(w.dropped > 0);
	read_log(fd, &A, NULL);
	CHECK_RC(A.rc, 0);
	CHECK_EQ(A.nidx, n - w.dropped);
	CHECK_EQ(A.nerr + A.bad + A.nstop, 0);
	printf("%s after %llu events, %llu dropped, %llu bytes\n", strerror(want),
	       (unsigned long long)n, (unsigned long long)w.dropped, (unsigned long long)fsize(fd));
	fflush(stdout); /* before a smaller RLIMIT_FSIZE could cut it */
	pt_logw_free(&w);
}

static int child_result(pid_t pid)
{
	int st;
	REQUIRE(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void t_enospc(void)
{
	struct pt_attr_img a = mkattr(200);
	struct pt_logw w;
	int fd = open("/dev/full", O_WRONLY);
	pid_t pid;

	if (fd < 0) {
		printf("SKIP-PART: /dev/full: %s\n", strerror(errno));
	} else {
		CHECK_RC(pt_logw_init(&w, fd, &a, POSIX_TRACE_APPEND, 0), ENOSPC);
		close(fd);
	}
	/* a 64 KiB tmpfs mounted in a mount namespace of a child */
	int before = t_failures;
	REQUIRE((pid = fork()) >= 0);
	if (pid == 0) {
		char dir[] = "/tmp/logfmt-XXXXXX", path[64];
		g_maxlen = g_maxpay = 200;
		if (!mkdtemp(dir))
			_exit(2);
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", dir, "tmpfs", 0, "size=64k")) {
			printf("SKIP-PART: ENOSPC on a small tmpfs: %s\n", strerror(errno));
			fflush(stdout);
			rmdir(dir);
			_exit(77);
		}
		snprintf(path, sizeof path, "%s/log", dir);
		REQUIRE((fd = open(path, O_RDWR | O_CREAT, 0600)) >= 0);
		/* LOOP and UNTIL_FULL reserve the whole log at init */
		CHECK_RC(pt_logw_init(&w, fd, &a, POSIX_TRACE_UNTIL_FULL, 1 << 20), ENOSPC);
		CHECK_RC(pt_logw_init(&w, fd, &a, POSIX_TRACE_LOOP, 1 << 20), ENOSPC);
		REQUIRE(pt_logw_init(&w, fd, &a, POSIX_TRACE_UNTIL_FULL, 40 << 10) == 0);
		/* another file takes all the rest: the log still fills up */
		static unsigned char junk[1024];
		char filler[80];
		snprintf(filler, sizeof filler, "%s/filler", dir);
		int other = open(filler, O_RDWR | O_CREAT, 0600);
		REQUIRE(other >= 0);
		while (write(other, junk, sizeof junk) > 0)
			;
		CHECK_EQ(errno, ENOSPC);
		for (uint64_t i = 0; !w.full; i++) {
			int rc = put_ev(&w, i);
			CHECK_RC(rc, w.full ? ENOSPC : 0);
		}
		CHECK_RC(pt_logw_finish(&w, NULL), 0);
		CHECK_EQ(w.err, 0);
		pt_logw_free(&w);
		close(other);
		unlink(filler);
		fill_until(fd, ENOSPC);
		CHECK(fsize(fd) <= 64 << 10);
		close(fd);
		umount2(dir, MNT_DETACH);
		rmdir(dir);
		fflush(stdout);
		_exit(t_failures > before);
	}
	int rc = child_result(pid);
	CHECK(rc == 0 || rc == 77);
}

static void t_efbig(void)
{
	int before = t_failures;
	pid_t pid;

	REQUIRE((pid = fork()) >= 0);
	if (pid == 0) {
		struct rlimit rl = { 20000, 20000 };
		struct pt_attr_img a = mkattr(200);
		struct pt_logw w;
		char path[] = "/tmp/logfmt-XXXXXX";
		int fd = mkstemp(path);

		REQUIRE(fd >= 0);
		unlink(path);
		signal(SIGXFSZ, SIG_IGN);
		REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
		fill_until(fd, EFBIG);
		CHECK(fsize(fd) <= 20000);
		rl.rlim_cur = 100;
		REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
		CHECK_RC(pt_logw_init(&w, fd, &a, POSIX_TRACE_APPEND, 0), EFBIG);
		CHECK_EQ(fsize(fd), 0); /* the partial header is gone */
		fflush(stdout);
		_exit(t_failures > before);
	}
	CHECK_EQ(child_result(pid), 0);
}

static void t_fds(void)
{
	struct pt_attr_img a = mkattr(200);
	struct pt_logw w;
	struct pt_logr r;
	char path[] = "/tmp/logfmtXXXXXX";
	int p[2], fd = mkstemp(path), ro, wo, dir, opath, dead;

	REQUIRE(fd >= 0 && pipe(p) == 0);
	ro = open(path, O_RDONLY);
	wo = open(path, O_WRONLY | O_APPEND);
	opath = open(path, O_PATH);
	dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	dead = dup(fd);
	close(dead);
	unlink(path);
	REQUIRE(ro >= 0 && wo >= 0 && dir >= 0 && opath >= 0);
	/* writer */
	CHECK_RC(pt_logw_init(&w, ro, &a, POSIX_TRACE_APPEND, 0), EBADF);
	CHECK_RC(pt_logw_init(&w, dead, &a, POSIX_TRACE_APPEND, 0), EBADF);
	CHECK_RC(pt_logw_init(&w, -1, &a, POSIX_TRACE_APPEND, 0), EBADF);
	CHECK_RC(pt_logw_init(&w, opath, &a, POSIX_TRACE_APPEND, 0), EBADF);
	CHECK_RC(pt_logw_init(&w, p[0], &a, POSIX_TRACE_APPEND, 0), EBADF);
	CHECK_RC(pt_logw_init(&w, p[1], &a, POSIX_TRACE_LOOP, 1 << 20), EINVAL);
	CHECK_RC(pt_logw_init(&w, p[1], &a, POSIX_TRACE_UNTIL_FULL, 1 << 20), EINVAL);
	CHECK_RC(pt_logw_init(&w, wo, &a, POSIX_TRACE_LOOP, 1 << 20), EINVAL);
	CHECK_RC(pt_logw_init(&w, fd, &a, POSIX_TRACE_FLUSH, 1 << 20), EINVAL);
	CHECK_RC(pt_logw_init(&w, fd, &a, 0, 1 << 20), EINVAL);
	CHECK_RC(pt_logw_init(&w, fd, NULL, POSIX_TRACE_APPEND, 0), EINVAL);
	CHECK_RC(pt_logw_init(&w, fd, &a, POSIX_TRACE_LOOP, pt_logw_min_size(&a) - 1), EINVAL);
	CHECK_RC(pt_logw_init(&w, fd, &a, POSIX_TRACE_UNTIL_FULL, 100), EINVAL);
	CHECK_RC(pt_logw_init(&w, fd, &a, POSIX_TRACE_LOOP, pt_logw_min_size(&a)), 0);
	pt_logw_free(&w);
	/* UNTIL_FULL through O_APPEND is sequential: fine */
	CHECK_RC(pt_logw_init(&w, wo, &a, POSIX_TRACE_UNTIL_FULL, 1 << 20), 0);
	CHECK_RC(put_ev(&w, 0), 0);
	CHECK_RC(pt_logw_finish(&w, NULL), 0);
	pt_logw_free(&w);
	read_log(fd, &A, NULL);
	CHECK(A.rc == 0 && contiguous(&A, 0, 1) && A.has_status);
	/* a pipe nobody reads: EPIPE, and no SIGPIPE */
	close(p[0]);
	CHECK_RC(pt_logw_init(&w, p[1], &a, POSIX_TRACE_APPEND, 0), EPIPE);
	close(p[1]);
	/* reader */
	CHECK_RC(pt_logr_open(&r, -1), EBADF);
	CHECK_RC(pt_logr_open(&r, dead), EBADF);
	CHECK_RC(pt_logr_open(&r, dir), EINVAL);
	REQUIRE(pipe(p) == 0);
	CHECK_RC(pt_logr_open(&r, p[0]), EINVAL);
	close(p[0]), close(p[1]);
	CHECK_RC(pt_logr_open(&r, wo), EBADF);
	int m = mfd();
	CHECK_RC(pt_logr_open(&r, m), EINVAL); /* empty */
	copy_fd(fd, m, PT_LOG_HDR - 1);
	CHECK_RC(pt_logr_open(&r, m), EINVAL); /* short */
	copy_fd(fd, m, fsize(fd));
	CHECK_RC(pt_logr_open(&r, m), 0);
	pt_logr_close(&r);
	unsigned char junk[4096];
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (unsigned char)mix(i);
	REQUIRE(pwrite(m, junk, sizeof junk, 0) == (ssize_t)sizeof junk);
	CHECK_RC(pt_logr_open(&r, m), EINVAL);
	close(m), close(fd), close(ro), close(wo), close(dir), close(opath);
}

int main(void)
{
	T_BEGIN(120);
	t_cuts();
	t_flip_one();
	t_flip_many(POSIX_TRACE_APPEND);
	t_flip_many(POSIX_TRACE_LOOP);
	t_enospc();
	t_efbig();
	t_fds();
	printf("logfmt_errors: %d checks\n", t_checks);
	T_END();
}
