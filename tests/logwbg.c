/*
 * logwbg.c -- a log writer whose writes a thread of its own makes while
 * the caller goes on encoding (src/log/logwbg.c, pt_logw_bg_start; what
 * a flight recorder's snapshot is written with):
 *  - the log is the one the caller's thread writes, byte for byte (same
 *    nonce; its CRCs made by that thread): 60 000 events of 0 to 299
 *    bytes from 5 writers, in both byte orders, losses,
 *    checkpoints, a pt_logw_sync() in the middle (when it returns, the
 *    file holds every block made so far), with the smallest ring the
 *    writer takes (blocks wrap around its end at odd places) and with
 *    2 MiB; with 64 MiB of the file reserved first (what the log does
 *    not take is freed: the file takes no more blocks than its size);
 *    and a log of 3 000 processes one after another whose summary
 *    reads spilled checkpoints back (they must be in the file by then);
 *  - refused (EINVAL) where it cannot write in sequence at its offsets:
 *    a LOOP log, a pipe, a file opened with O_APPEND, a ring smaller
 *    than two of the largest blocks; the log is then written as before;
 *  - a write error is kept and returned: past RLIMIT_FSIZE, in a child,
 *    pt_logw_finish() returns EFBIG and the process is not killed by
 *    SIGXFSZ (the thread has every signal blocked); the 8 MiB reserved
 *    first is given back all the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "t.h"
#include "logfmt_util.h"
#include "../src/ext.h"

#define NEV 60000
#define NONCE 0x5eed5eedull

static const struct posix_trace_status_info ST = { 1, 2, 0, 0, 0, 1, 2 };

static int32_t g_final_below;
static int g_swap;          /* (the other byte order) */
static uint64_t g_prealloc; /* (bytes the log's file is given first) */
static int g_errs_expected; /* (past RLIMIT_FSIZE: the writes fail) */
#define EV_RC(expr) do { int ev_rc_ = (expr); if (!g_errs_expected) CHECK_RC(ev_rc_, 0); } while (0)
static int final(void *ctx, int32_t pid)
{
	(void)ctx;
	return pid >= 10000 && pid < g_final_below;
}

/* The log's content: spill, 3 000 processes one after another (10
 * events each, two map entries); else NEV events of 5 writers.  With a
 * ring (ring_size > 0), written by the writer's thread from the start of
 * the events on.  The writer's result of finish. */
static int mklog(int fd, int policy, size_t ring_size, int spill, int *bg_rc)
{
	static unsigned char ring[2u << 20];
	struct pt_attr_img a = mkattr(300);
	struct pt_logw_opt o = { .nonce = NONCE, .ckpt_bytes = 256u << 10, .swap = g_swap };
	struct pt_logw w;
	unsigned char pl[300];

	REQUIRE(pt_logw_init_opt(&w, fd, &a, policy, policy == POSIX_TRACE_LOOP ? 4u << 20 : 0,
	                         &o) == 0);
	if (spill)
		w.pid_final = final;
	CHECK_RC(pt_logw_name(&w, 20, "ev-a"), 0);
	CHECK_RC(pt_logw_name(&w, 21, "ev-b"), 0);
	*bg_rc = ring_size ? pt_logw_bg_start(&w, ring, ring_size, 64u << 10, g_prealloc) : -1;
	int n = spill ? 3000 * 11 : NEV;
	for (int i = 0; i < n; i++) {
		uint64_t ts = T0 + (uint64_t)i * 1000;
		int32_t pid = spill ? 10000 + i / 11 : 100 + i % 5;
		if (spill && i % 11 == 0) {
			struct pt_ext_obj ob;
			memset(&ob, 0, sizeof ob);
			ob.kind = PT_EXT_OBJ_BEGIN, ob.pid = pid, ob.ts = ts;
			EV_RC(pt_logw_obj(&w, &ob));
			ob.kind = PT_EXT_OBJ_ADD, ob.lo = 0x400000 + (uint64_t)i * 4096, ob.hi = ob.lo + 4096;
			snprintf(ob.path, sizeof ob.path, "/kid/%d", i);
			EV_RC(pt_logw_obj(&w, &ob));
			g_final_below = pid - 20;
		}
		uint32_t len = spill ? 40 : (uint32_t)(i * 37) % 300;
		for (uint32_t j = 0; j < len; j++)
			pl[j] = pbyte((uint64_t)i, j);
		if (!spill && i % 5000 == 4999)
			EV_RC(pt_logw_event_lost(&w, ts, pid, 0x9000, 0, 21, (uint64_t)i));
		else
			EV_RC(pt_logw_event(&w, ts, pid, 0x7000 + (uint64_t)(i % 3), 0x401000, 20 + i % 2,
			                    0, pl, len));
		if (!spill && i == n / 2 && !g_errs_expected) {
			CHECK_RC(pt_logw_sync(&w), 0);
			CHECK_EQ(fsize(fd), w.pos); /* (written when sync returns) */
		}
	}
	if (spill)
		CHECK(w.sum->nsp > 0); /* (the case: checkpoints read back) */
	int rc = pt_logw_finish(&w, &ST);
	CHECK(w.bg == NULL); /* (stopped by finish) */
	if (!rc)
		CHECK_EQ(fsize(fd), w.pos);
	pt_logw_free(&w);
	return rc;
}

static unsigned char *contents(int fd, size_t *n)
{
	*n = (size_t)fsize(fd);
	unsigned char *p = malloc(*n ? *n : 1);
	REQUIRE(p && pread(fd, p, *n, 0) == (ssize_t)*n);
	return p;
}

static void same_as_plain(int policy, size_t ring_size, int spill, int want_bg, const char *what)
{
	int f0 = mfd(), f1 = mfd(), bg;
	CHECK_RC(mklog(f0, policy, 0, spill, &bg), 0);
	CHECK_RC(mklog(f1, policy, ring_size, spill, &bg), 0);
	CHECK_RC(bg, want_bg);
	size_t n0, n1;
	unsigned char *a = contents(f0, &n0), *b = contents(f1, &n1);
	CHECK_EQ(n0, n1);
	int same = n0 == n1 && !memcmp(a, b, n0);
	CHECK(same);
	printf("logwbg: %s: %zu bytes, %s\n", what, n1, same ? "the same" : "DIFFERENT");
	/* what was reserved beyond the log's end is given back */
	struct stat st;
	REQUIRE(fstat(f1, &st) == 0);
	CHECK((uint64_t)st.st_blocks * 512 < n1 + (1u << 20));
	/* and the reader reads it whole (the summary's counts included) */
	struct pt_log_summary s;
	CHECK_RC(pt_log_summary_read(f1, &s), 0);
	CHECK_EQ(s.events, (uint64_t)(spill ? 3000 * 11 : NEV));
	pt_log_summary_free(&s);
	free(a);
	free(b);
	close(f0);
	close(f1);
}

/* The smallest ring the writer takes: two of the largest blocks. */
static size_t min_ring(void)
{
	return 2 * ((size_t)PT_LOG_BLOCK_DEFAULT + PT_LOG_BLK + PT_LOG_MAX_WRITERS * PT_LOG_WENT + 8);
}

static void refused(void)
{
	static unsigned char ring[2u << 20];
	struct pt_attr_img a = mkattr(300);
	struct pt_logw w;
	int p[2], fd;

	/* too small a ring */
	same_as_plain(POSIX_TRACE_APPEND, min_ring() - 8, 0, EINVAL, "a ring too small: refused");
	/* LOOP: written over from the start again */
	fd = mfd();
	REQUIRE(pt_logw_init(&w, fd, &a, POSIX_TRACE_LOOP, 4u << 20) == 0);
	CHECK_RC(pt_logw_bg_start(&w, ring, sizeof ring, 0, 0), EINVAL);
	CHECK(w.bg == NULL);
	pt_logw_free(&w);
	close(fd);
	/* a pipe */
	REQUIRE(pipe(p) == 0);
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	REQUIRE(pt_logw_init(&w, p[1], &a, POSIX_TRACE_APPEND, 0) == 0);
	CHECK_RC(pt_logw_bg_start(&w, ring, sizeof ring, 0, 0), EINVAL);
	pt_logw_free(&w);
	close(p[0]);
	close(p[1]);
	/* O_APPEND */
	char path[] = "/tmp/pt-logwbg-XXXXXX";
	REQUIRE((fd = mkstemp(path)) >= 0);
	close(fd);
	REQUIRE((fd = open(path, O_WRONLY | O_APPEND)) >= 0);
	unlink(path);
	REQUIRE(pt_logw_init(&w, fd, &a, POSIX_TRACE_APPEND, 0) == 0);
	CHECK_RC(pt_logw_bg_start(&w, ring, sizeof ring, 0, 0), EINVAL);
	pt_logw_free(&w);
	close(fd);
}

/* Past RLIMIT_FSIZE: EFBIG, kept; not killed. */
static void too_big(void)
{
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 256u << 10, 256u << 10 };
		char path[] = "/tmp/pt-logwbg-XXXXXX";
		int fd = mkstemp(path), bg;
		if (fd < 0 || setrlimit(RLIMIT_FSIZE, &rl))
			_exit(10);
		unlink(path);
		g_errs_expected = 1;
		g_prealloc = 8u << 20; /* (and what it reserved is given back) */
		int rc = mklog(fd, POSIX_TRACE_APPEND, 2u << 20, 0, &bg);
		/* (w.err is gone with w: finish returns the first error) */
		struct stat st;
		if (fstat(fd, &st) || (uint64_t)st.st_blocks * 512 > (uint64_t)st.st_size + (1u << 20))
			_exit(13);
		_exit(bg != 0 ? 11 : rc == EFBIG ? 0 : 12);
	}
	int st;
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	if (WIFSIGNALED(st))
		fprintf(stderr, "logwbg: the child was killed by signal %d\n", WTERMSIG(st));
	CHECK_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
}

int main(void)
{
	T_BEGIN(120);
	same_as_plain(POSIX_TRACE_APPEND, min_ring(), 0, 0, "the smallest ring");
	same_as_plain(POSIX_TRACE_APPEND, min_ring() + 13, 0, 0, "the smallest ring + 13");
	same_as_plain(POSIX_TRACE_APPEND, 2u << 20, 0, 0, "a 2 MiB ring");
	same_as_plain(POSIX_TRACE_APPEND, 2u << 20, 1, 0, "spilled checkpoints read back");
	g_swap = 1;
	same_as_plain(POSIX_TRACE_APPEND, min_ring() + 13, 0, 0, "the other byte order");
	g_swap = 0;
	g_prealloc = 64u << 20;
	same_as_plain(POSIX_TRACE_APPEND, 2u << 20, 0, 0, "64 MiB reserved first");
	g_prealloc = 0;
	refused();
	too_big();
	T_END();
}
