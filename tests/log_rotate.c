/*
 * log_rotate.c -- pt_ext_log_rotate() (src/ext.h): a stream's APPEND log
 * cut into parts by the flusher, through the library alone.
 *
 *  - Bad calls: no spec, an empty name, one with '/', one starting with
 *    '.', one longer than PT_EXT_ROTATE_NAME_MAX, first 0, no size and no
 *    period, a directory descriptor that is a file, or -1: EINVAL; a LOOP
 *    or UNTIL_FULL log: EINVAL; a trace id that is not a stream: EINVAL;
 *    a second call: EBUSY.  None changes the log.
 *  - This process records 300 000 events of 16 bytes (a sequence number)
 *    into a FLUSH stream in no-loss mode whose log is d/t-1.ptlog, rotated every 256K;
 *    halfway it forks a child that exits at once (the child forgets the
 *    rotation: its copies of the descriptors are closed, the parent's
 *    parts go on).  After shutdown: the stats kept in the caller's
 *    struct say how many cuts, and the part being written last; the parts
 *    d/t-1 ... d/t-K are exactly those, each opens alone with
 *    posix_trace_open(), names the type, and the sequence numbers run
 *    from 0 to 299 999 exactly once, in order, across them; no other file
 *    is in d; this process holds no descriptor more than before.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "../src/ext.h"

#define N 300000

static int nfds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	REQUIRE(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static trace_id_t make(int fd, int log_policy)
{
	trace_attr_t a;
	trace_id_t trid;
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&a, log_policy) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 4 << 20) == 0);
	REQUIRE(posix_trace_attr_setlogsize(&a, 1 << 20) == 0);
	REQUIRE(posixtrace_attr_setnoloss(&a, 1000) == 0); /* (so that nothing is lost) */
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	posix_trace_attr_destroy(&a);
	return trid;
}

int main(void)
{
	char dir[64], path[256], other[256];

	T_BEGIN(120);
	snprintf(dir, sizeof dir, "/tmp/pt-rotate-XXXXXX");
	REQUIRE(mkdtemp(dir));
	int fds0 = nfds();
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	REQUIRE(dirfd >= 0);
	snprintf(path, sizeof path, "%s/t-1.ptlog", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	REQUIRE(fd >= 0);
	snprintf(other, sizeof other, "%s/other.ptlog", dir);
	int ofd = open(other, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	REQUIRE(ofd >= 0);

	/* ---- bad calls */
	trace_id_t trid = make(fd, POSIX_TRACE_APPEND);
	struct pt_ext_rotate_stats stats;
	struct pt_ext_rotate r = { dirfd, "t", 1, 256 << 10, 0, 0, 0, &stats }, b;
	char longname[PT_EXT_ROTATE_NAME_MAX + 2];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CHECK_RC(pt_ext_log_rotate(trid, NULL), EINVAL);
	b = r, b.name = "";
	CHECK_RC(pt_ext_log_rotate(trid, &b), EINVAL);
	b = r, b.name = "a/b";
	CHECK_RC(pt_ext_log_rotate(trid, &b), EINVAL);
	b = r, b.name = ".t";
	CHECK_RC(pt_ext_log_rotate(trid, &b), EINVAL);
	b = r, b.name = longname;
	CHECK_RC(pt_ext_log_rotate(trid, &b), EINVAL);
	b = r, b.name = NULL;
	CHECK_RC(pt_ext_log_rotate(trid, &b), EINVAL);
	b = r, b.first = 0;
	CHECK_RC(pt_ext_log_rotate(trid, &b), EINVAL);
	b = r, b.size = 0;
	CHECK_RC(pt_ext_log_rotate(trid, &b), EINVAL);
	b = r, b.dirfd = ofd;
	CHECK_RC(pt_ext_log_rotate(trid, &b), EINVAL);
	b = r, b.dirfd = -1;
	CHECK_RC(pt_ext_log_rotate(trid, &b), EINVAL);
	CHECK_RC(pt_ext_log_rotate((trace_id_t)12345, &r), EINVAL);
	struct pt_ext_rotate_stats st;
	CHECK_RC(pt_ext_log_rotate_stats(trid, &st), EINVAL); /* not rotating yet */
	trace_id_t loop = make(ofd, POSIX_TRACE_LOOP);
	CHECK_RC(pt_ext_log_rotate(loop, &r), EINVAL);
	CHECK_RC(posix_trace_shutdown(loop), 0);
	CHECK_RC(pt_ext_log_rotate(trid, &r), 0);
	CHECK_RC(pt_ext_log_rotate(trid, &r), EBUSY);

	/* ---- the parts */
	trace_event_id_t id;
	REQUIRE(posix_trace_trid_eventid_open(trid, "rot", &id) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	for (uint64_t i = 0; i < N; i++) {
		uint64_t p[2] = { i, ~i };
		if (i == N / 2) {
			fflush(NULL);
			pid_t c = fork();
			REQUIRE(c >= 0);
			if (c == 0)
				_exit(0);
			REQUIRE(waitpid(c, NULL, 0) == c);
		}
		posix_trace_event(id, p, sizeof p);
	}
	CHECK_RC(pt_ext_log_rotate_stats(trid, &st), 0);
	CHECK(st.cuts >= 1);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(fd);
	close(ofd);
	unlink(other);
	CHECK(stats.cuts >= 5); /* (300 000 x 32 bytes of log, cut every 256K) */
	CHECK_EQ(stats.current, stats.cuts + 1);
	CHECK_EQ(stats.removed, 0);
	uint64_t next = 0;
	unsigned parts = 0;
	for (unsigned k = 1; k <= stats.current; k++) {
		snprintf(path, sizeof path, "%s/t-%u.ptlog", dir, k);
		int rfd = open(path, O_RDONLY);
		CHECK(rfd >= 0);
		if (rfd < 0)
			continue;
		parts++;
		trace_id_t log;
		CHECK_RC(posix_trace_open(rfd, &log), 0);
		trace_event_id_t lid = 0;
		CHECK(t_type_named(log, "rot", &lid));
		for (;;) {
			struct posix_trace_event_info ev;
			uint64_t p[2];
			size_t len;
			int unav = 0;
			if (posix_trace_getnext_event(log, &ev, p, sizeof p, &len, &unav) || unav)
				break;
			if (ev.posix_event_id != lid)
				continue;
			CHECK_EQ(len, sizeof p);
			if (p[0] != next || p[1] != ~next) {
				CHECK_EQ(p[0], next);
				break;
			}
			next++;
		}
		posix_trace_close(log);
		close(rfd);
		unlink(path);
	}
	CHECK_EQ(parts, stats.current);
	CHECK_EQ(next, N);
	close(dirfd);
	CHECK_RC(rmdir(dir) == 0 ? 0 : errno, 0); /* nothing else was made */
	CHECK_EQ(nfds(), fds0);                   /* nor kept open */
	T_END();
}
