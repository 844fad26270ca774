/*
 * log_ahead.c -- an APPEND log on a disk's file system has its blocks
 * reserved ahead of the writes (logwio.c, ahead()), from its first MiB
 * on, and given back when the log is finished.
 *
 * In a scratch directory under the build directory (in the repository's
 * tree, on whatever file system holds it), logs of 40-byte events are
 * written with the log writer and checked by their size and the space
 * the file system gives them (st_blocks):
 *  - a 24 MiB log, while written (looked at every 4096 events, 160 KiB):
 *    reserved past its end, at the most, at least 1 MiB less 256 KiB (a
 *    step is an eighth of what it wrote, 1 MiB at least; the looks are
 *    160 KiB apart), and never more than 17 MiB and 64 KiB; once
 *    finished, no more than 64 KiB past its size rounded up to a block
 *    (the file system's own records of where the blocks are); it reads
 *    back whole, every event in order;
 *  - a log whose writer a forked child frees (pt_logw_free: memory only,
 *    as a traced program's child does with its parent's flusher): the
 *    child leaves the file as it was (it once cut the blocks reserved,
 *    and with them what the parent wrote meanwhile); the parent goes on,
 *    finishes, and its log reads back whole;
 *  - a 64 KiB log: nothing reserved, ever.
 * On tmpfs or ramfs nothing may be reserved (a page reserved there is a
 * page made, which the writes then make again).  Where the file system
 * cannot reserve (fallocate: EOPNOTSUPP) the test checks the rest and
 * says so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "helpers.h"
#include "../src/log/log.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

#define PAYLOAD 32
#define MIB (1ull << 20)
#define SLACK (64ull << 10)

static char dir[1024];

static void cleanup(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[1400];
	while (d && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.') {
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* bytes the file system gives the file past its size, rounded up to a
 * block (negative: fewer, a sparse file) */
static long long over(int fd)
{
	struct stat st;
	REQUIRE(fstat(fd, &st) == 0);
	long long bs = st.st_blksize > 0 ? st.st_blksize : 4096;
	long long round = (st.st_size + bs - 1) / bs * bs;
	return (long long)st.st_blocks * 512 - round;
}

/* events of a log written here, in order (posix_trace_open, getnext) */
static long read_back(const char *path)
{
	static unsigned char buf[TRACE_DATA_MAX];
	trace_id_t log;
	long n = 0, bad = 0;
	int fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_open(fd, &log) == 0);
	for (;;) {
		struct posix_trace_event_info ev;
		size_t len = 0;
		int un = -1;
		if (posix_trace_getnext_event(log, &ev, buf, sizeof buf, &len, &un) || un)
			break;
		if (ev.posix_event_id != 20)
			continue;
		long i = -1;
		memcpy(&i, buf, sizeof i);
		bad += i != n || len != PAYLOAD;
		n++;
	}
	CHECK_EQ(bad, 0);
	posix_trace_close(log);
	close(fd);
	return n;
}

/* Event i into w (checked) */
static void put(struct pt_logw *w, long i)
{
	unsigned char p[PAYLOAD] = { 0 };
	memcpy(p, &i, sizeof i);
	CHECK_RC(pt_logw_event(w, 1000000000ull + (uint64_t)i * 10, 100, 0x7000, 0, 20, 0, p,
	                       sizeof p), 0);
}

/* A log of up to `bytes` of events, checked as it grows (reserve 1:
 * reserving expected, 0: none); then (fork) a forked child frees its
 * copy of the writer, and the parent writes on; finished.  Its events. */
static long write_log(const char *path, uint64_t bytes, int reserve, int fork_)
{
	struct pt_logw w;
	int fd = t_log_create(path, &w, 64);
	long i = 0;
	long long most = 0;
	CHECK_RC(pt_logw_name(&w, 20, "tick"), 0);
	for (; w.written < bytes; i++) {
		put(&w, i);
		if (i % 4096 == 0) {
			long long o = over(fd);
			most = o > most ? o : most;
		}
	}
	if (fork_) {
		/* (once some is reserved past the end, if any can be) */
		for (long k = 0; reserve && over(fd) < (256 << 10) && k < 100000; k++, i++)
			put(&w, i);
		long long before = over(fd);
		pid_t c = fork();
		REQUIRE(c >= 0);
		if (c == 0) {
			pt_logw_free(&w);
			_exit(0);
		}
		int st;
		REQUIRE(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		CHECK_EQ(over(fd), before);
		if (reserve)
			CHECK(before >= (256 << 10));
		for (uint64_t end = w.written + MIB; w.written < end; i++)
			put(&w, i);
	}
	if (reserve > 0) {
		CHECK(most >= (long long)(MIB - (256 << 10)));
		CHECK(most <= (long long)(17 * MIB + SLACK));
		if (most < (long long)(MIB - (256 << 10)) || most > (long long)(17 * MIB + SLACK))
			fprintf(stderr, "%s: %lld reserved past its end at most\n", path, most);
	} else if (reserve == 0) {
		CHECK(most <= (long long)SLACK);
		if (most > (long long)SLACK)
			fprintf(stderr, "%s: %lld reserved (none expected)\n", path, most);
	}
	CHECK_RC(pt_logw_finish(&w, NULL), 0);
	long long o = over(fd);
	CHECK(o <= (long long)SLACK);
	if (o > (long long)SLACK)
		fprintf(stderr, "%s: %lld past its end once finished\n", path, o);
	pt_logw_free(&w);
	close(fd);
	return i;
}

int main(void)
{
	char path[1400];
	struct statfs fs;

	T_BEGIN(120);
	snprintf(dir, sizeof dir, "%s/log_ahead-XXXXXX", PT_BUILD_DIR);
	REQUIRE(mkdtemp(dir) != NULL);
	atexit(cleanup);
	REQUIRE(statfs(dir, &fs) == 0);
	int memfs = fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC;
	snprintf(path, sizeof path, "%s/probe", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	int can = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20) == 0;
	int why = errno;
	close(fd);
	unlink(path);
	if (!memfs && !can)
		fprintf(stderr, "log_ahead: %s cannot reserve blocks (%s): the logs' reading alone "
		        "is checked\n", dir, strerror(why));
	int reserve = !memfs && can;

	snprintf(path, sizeof path, "%s/finished.ptlog", dir);
	long n = write_log(path, 24 * MIB, reserve, 0);
	CHECK(n > 500000);
	CHECK_EQ(read_back(path), n);

	snprintf(path, sizeof path, "%s/forked.ptlog", dir);
	n = write_log(path, 12 * MIB, reserve, 1);
	CHECK_EQ(read_back(path), n);

	snprintf(path, sizeof path, "%s/small.ptlog", dir);
	n = write_log(path, 64 << 10, 0, 0);
	CHECK_EQ(read_back(path), n);
	T_END();
}
