/*
 * log_crash.c -- logs of processes that end badly, and write errors.
 *
 * exit() without posix_trace_shutdown(): the library's destructor shuts
 * the stream down, so the log is complete: START, every event (also with
 * the LOOP stream policy, where events reach the log only at a flush),
 * the final FLUSH_START/FLUSH_STOP pair, the event name, and an END block
 * (docs/log-format.md: the last 112 bytes, magic PTLB, type 2).
 * SIGKILL while recording (FLUSH policy, paced events): the log opens and
 * gives events with strictly increasing sequence numbers, intact (and
 * contiguous unless an OVERFLOW says events were dropped), at least those
 * of the 300 KB written before the kill; no POSIX_TRACE_ERROR event (the
 * torn tail is not damage); get_status works on it.
 * ENOSPC: a 64 KiB tmpfs mounted in a private mount namespace (root; a
 * child process): LOOP and UNTIL_FULL with a 1 MiB log fail the create
 * with ENOSPC (the space is reserved then); APPEND: 300 events flushed
 * fine, then 3000 more do not fit: posix_trace_flush() returns ENOSPC once
 * the flusher met it, get_status shows it in posix_stream_flush_error
 * (kept until read, then 0), posix_trace_shutdown() returns ENOSPC, and
 * the log still gives the first 300 events, then only intact events in
 * order.  /dev/full: the create fails with ENOSPC.
 * EFBIG: the same with RLIMIT_FSIZE 200000 set after the create (the
 * limit applies to the stream's memfd too) and SIGXFSZ ignored (1000
 * events, then 10000); the file never exceeds the limit.
 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "log_util.h"
#include "../src/log/log.h"

static char path[256];

static trace_id_t make(int stream_policy, int log_policy, int fd)
{
	trace_attr_t a;
	trace_id_t trid;

	posix_trace_attr_init(&a);
	if (stream_policy)
		posix_trace_attr_setstreamfullpolicy(&a, stream_policy);
	posix_trace_attr_setlogfullpolicy(&a, log_policy);
	posix_trace_attr_setlogsize(&a, 1 << 20);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	posix_trace_attr_destroy(&a);
	CHECK_RC(posix_trace_start(trid), 0);
	return trid;
}

static void put(trace_event_id_t id, uint32_t seq)
{
	unsigned char p[32];
	lu_make(p, seq, 0, sizeof p);
	posix_trace_event(id, p, sizeof p);
}

static int wait_child(pid_t child)
{
	int st;
	REQUIRE(waitpid(child, &st, 0) == child);
	if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL)
		fprintf(stderr, "child %d: killed by signal %d\n", (int)child, WTERMSIG(st));
	else if (WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 77)
		fprintf(stderr, "child %d: exit %d\n", (int)child, WEXITSTATUS(st));
	return st;
}

/* 1 if the file ends with an END block (docs/log-format.md) */
static int has_end_block(const char *p)
{
	unsigned char b[8];
	long long size = lu_fsize(p);
	int fd = open(p, O_RDONLY), ok;
	uint16_t type;

	REQUIRE(fd >= 0);
	ok = size >= 256 + 112 && pread(fd, b, 8, size - 112) == 8;
	close(fd);
	memcpy(&type, b + 4, 2);
	return ok && memcmp(b, "PTLB", 4) == 0 && type == 2;
}

/* The bytes of the log in p up to the end of its last whole block: a
 * SIGKILL during the write of a block leaves that block cut short (the
 * reader takes the log up to it, as it should). */
static long long whole_blocks(const char *p)
{
	long long size = lu_fsize(p), at = PT_LOG_HDR;
	unsigned char h[PT_LOG_BLK];
	int fd = open(p, O_RDONLY);

	REQUIRE(fd >= 0);
	while (at + PT_LOG_BLK <= size && pread(fd, h, sizeof h, at) == (ssize_t)sizeof h &&
	       !memcmp(h + PT_LOG_B_MAGIC, PT_LOG_BLK_MAGIC, 4)) {
		long long len = (long long)PT_LOG_ALIGN8(pt_log_get32(h + PT_LOG_B_LEN, 0));
		if (len < PT_LOG_BLK || at + len > size)
			break;
		at += len;
	}
	close(fd);
	return at;
}

/* ------------------------------------------------------------- exit() */
static void exit_without_shutdown(int stream_policy, int log_policy)
{
	enum { N = 10000 };
	int fd = lu_tmpfile(path, sizeof path, "crash", O_WRONLY), n;
	pid_t child = fork();
	trace_event_id_t id;

	REQUIRE(child >= 0);
	if (child == 0) {
		alarm(30);
		make(stream_policy, log_policy, fd);
		if (posix_trace_eventid_open("log-crash/exit", &id) != 0)
			_exit(2);
		for (uint32_t i = 0; i < N; i++)
			put(id, i);
		exit(0);                      /* no shutdown */
	}
	int st = wait_child(child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(has_end_block(path));
	trace_id_t log;
	int rfd;
	n = lu_load(path, &log, &rfd);
	CHECK_EQ(n - lu_count(n, POSIX_TRACE_STOP, -1), N + 3); /* (a STOP at shutdown: fine) */
	CHECK(n > 0 && lu_ev[0].id == POSIX_TRACE_START && lu_ev[0].pid == child);
	id = n > 1 ? lu_ev[1].id : 0;
	CHECK_EQ(lu_user(n, id, child, 1, 1, NULL, NULL), N);
	CHECK_EQ(lu_count(n, POSIX_TRACE_FLUSH_START, child), 1);
	CHECK_EQ(lu_count(n, POSIX_TRACE_FLUSH_STOP, child), 1);
	lu_name(log, id, "log-crash/exit");
	CHECK_EQ(lu_status(log).posix_stream_flush_error, 0);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
	close(fd);
	lu_rmfile(path);
}

/* ------------------------------------------------------------ SIGKILL */
static void killed(void)
{
	int fd = lu_tmpfile(path, sizeof path, "crash", O_WRONLY), n, rfd;
	pid_t child = fork();
	trace_id_t log;

	REQUIRE(child >= 0);
	if (child == 0) {
		alarm(30);
		make(0, POSIX_TRACE_APPEND, fd);
		for (uint32_t i = 0;; i++) {  /* until killed */
			put(17, i);
			if (i % 500 == 499)
				usleep(1000);
		}
	}
	long long end = lu_mono_ms() + 20000;
	while (lu_fsize(path) < 300000 && lu_mono_ms() < end)
		usleep(2000);
	CHECK(lu_fsize(path) >= 300000);
	kill(child, SIGKILL);
	int st = wait_child(child);
	long long size = lu_fsize(path);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK(!has_end_block(path));

	n = lu_load(path, &log, &rfd);
	int over = lu_count(n, POSIX_TRACE_OVERFLOW, -1);
	int k = lu_user(n, 17, child, 1, over == 0, NULL, NULL);
	/* every whole block read (a 32-byte event takes at most 49 bytes of a
	 * block); the one being written when the child died may be cut short */
	long long whole = whole_blocks(path);
	CHECK(size - whole < PT_LOG_BLOCK_DEFAULT);
	CHECK(k >= (whole - 256) / 49);
	if (k < (whole - 256) / 49)
		fprintf(stderr, "killed: %d events of ours in a log of %lld bytes, %lld in whole "
		        "blocks (%d read, %d gaps)\n", k, size, whole, n, over);
	CHECK(n > 0 && lu_ev[0].id == POSIX_TRACE_START);
	lu_no_damage(n);
	struct posix_trace_status_info si;
	CHECK_RC(posix_trace_get_status(log, &si), 0);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
	close(fd);
	lu_rmfile(path);
}

/* ---------------------------------------------------- write errors */
/* In the child: 300 + 3000 events (or 1000 + 10000) into the stream trid
 * whose APPEND log, fd, cannot hold them all; the error is err. */
static void write_error(trace_id_t trid, int fd, const char *p, int err, uint32_t n1, uint32_t n2)
{
	trace_id_t log;
	int e = -1, rc = 0, rfd;

	for (uint32_t i = 0; i < n1; i++)
		put(17, i);
	CHECK_RC(lu_flush_wait(trid, &e), 0);
	CHECK_EQ(e, 0);
	for (uint32_t i = 0; i < n2; i++) {
		put(17, n1 + i);
		if (i % 500 == 499)
			usleep(1000);
	}
	/* flush until the flusher has met the error: then flush returns it */
	long long end = lu_mono_ms() + 10000;
	while ((rc = posix_trace_flush(trid)) == 0 && lu_mono_ms() < end)
		usleep(5000);
	CHECK_RC(rc, err);
	CHECK_EQ(lu_status(trid).posix_stream_flush_error, err); /* kept until read */
	lu_wait_flushed(trid);
	CHECK_EQ(lu_status(trid).posix_stream_flush_error, 0);   /* read: gone */
	CHECK_RC(posix_trace_shutdown(trid), err);
	close(fd);

	int n = lu_load(p, &log, &rfd);
	int k = lu_user(n, 17, getpid(), 1, 0, NULL, NULL);
	CHECK(k >= (int)n1 && k < (int)(n1 + n2));
	int first = 0;                              /* the events before the error */
	while (first < n && lu_ev[first].id != 17)
		first++;
	for (uint32_t i = 0; i < n1; i++)
		CHECK(first + (int)i < n && lu_ev[first + i].id == 17 && lu_ev[first + i].seq == i);
	lu_no_damage(n);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
}

static void enospc(void)
{
	int fd = open("/dev/full", O_WRONLY);
	trace_id_t trid;

	if (fd < 0) {
		printf("SKIP-PART: /dev/full: %s\n", strerror(errno));
	} else {
		trace_attr_t a;
		posix_trace_attr_init(&a);
		posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
		CHECK_RC(posix_trace_create_withlog(0, &a, fd, &trid), ENOSPC);
		posix_trace_attr_destroy(&a);
		close(fd);
	}
	fflush(stdout);
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		char dir[] = "/tmp/pt-enospc-XXXXXX", p[300];
		alarm(60);
		if (!mkdtemp(dir))
			_exit(3);
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", dir, "tmpfs", 0, "size=64k")) {
			printf("SKIP-PART: ENOSPC on a 64 KiB tmpfs: %s\n", strerror(errno));
			rmdir(dir);
			_exit(77);
		}
		snprintf(p, sizeof p, "%s/log", dir);
		fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
		REQUIRE(fd >= 0);
		trace_attr_t a;
		posix_trace_attr_init(&a);
		posix_trace_attr_setlogsize(&a, 1 << 20);
		posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_LOOP);
		CHECK_RC(posix_trace_create_withlog(0, &a, fd, &trid), ENOSPC);
		posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_UNTIL_FULL);
		CHECK_RC(posix_trace_create_withlog(0, &a, fd, &trid), ENOSPC);
		posix_trace_attr_destroy(&a);
		write_error(make(0, POSIX_TRACE_APPEND, fd), fd, p, ENOSPC, 300, 3000);
		unlink(p);
		umount(dir);
		rmdir(dir);
		_exit(t_failures ? 1 : 0);
	}
	int st = wait_child(child);
	CHECK(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 77));
}

static void efbig(void)
{
	int fd = lu_tmpfile(path, sizeof path, "crash", O_RDWR);
	fflush(stdout);
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		/* the limit applies to the stream's memfd too: stream first */
		struct rlimit rl = { 200000, RLIM_INFINITY };
		alarm(60);
		signal(SIGXFSZ, SIG_IGN);
		trace_id_t trid = make(0, POSIX_TRACE_APPEND, fd);
		REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
		write_error(trid, fd, path, EFBIG, 1000, 10000);
		CHECK(lu_fsize(path) <= 200000);
		_exit(t_failures ? 1 : 0);
	}
	int st = wait_child(child);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(fd);
	lu_rmfile(path);
}

int main(void)
{
	T_BEGIN(120);
	exit_without_shutdown(0, POSIX_TRACE_APPEND);
	exit_without_shutdown(POSIX_TRACE_LOOP, POSIX_TRACE_LOOP);
	killed();
	enospc();
	efbig();
	T_END();
}
