/*
 * rotate_orphan.c -- a log cut into parts names the code of every event
 * it holds, even of a process whose map is its ended parent's.  A forked
 * child's map is its parent's as it was (a FORK entry naming the parent),
 * so the recorder must keep the parent's map entries, and theirs in turn,
 * while the child's stay; it dropped them once the parent had ended,
 * holding no chunk of the stream, and the parts begun after that held the
 * child's events with no code to name them (`show`: raw addresses; in
 * tests/cli_rotate_procs, a part in about 30 runs).
 *
 * This process (T) records into a FLUSH stream (no-loss, inherited by
 * children) whose APPEND log is cut every 64K.  It starts P (this program
 * again, joining the stream as `record` makes a program's descendants
 * join: its map begins with it), which forks C and ends at once,
 * recording nothing.  Once P is gone (reaped), C records EVENTS events of
 * 200 bytes and ends: some 3 MB in about 28 parts, all written after P
 * ended.  Checked in every part with C's events: C's map
 * resolves, from C's FORK through P's to T's BEGIN, with entries the part
 * itself holds; and every event is there, once (C's sequence numbers).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "../src/ext.h"

#define EVENTS 15000u

static struct pt_ext_obj objs[4096];

/* pid's map in the part: its latest BEGIN, or a FORK (then its parent's,
 * as found so), among the n entries; 1 if it ends at a BEGIN. */
static int resolves(size_t n, int32_t pid, int depth)
{
	if (depth > 8)
		return 0;
	for (size_t i = n; i-- > 0;) {
		const struct pt_ext_obj *o = &objs[i];
		if (o->pid != pid)
			continue;
		if (o->kind == PT_EXT_OBJ_BEGIN)
			return 1;
		if (o->kind == PT_EXT_OBJ_FORK)
			return o->lo > 0 && o->lo <= INT32_MAX && resolves(n, (int32_t)o->lo, depth + 1);
	}
	return 0;
}

/* P (exec'd, joined the stream): forks C, says its pid, ends; C, once
 * told, records EVENTS events of 200 bytes (k, its sequence number,
 * first) and ends. */
static int run_p(const char *fds)
{
	int go_r, go_w, cp_w;
	trace_event_id_t ev;

	if (sscanf(fds, "%d %d %d", &go_r, &go_w, &cp_w) != 3 ||
	    posix_trace_eventid_open("orphan.ev", &ev) != 0)
		return 2;
	pid_t c = fork();
	if (c == 0) {
		char b, pl[200] = { 0 };
		close(go_w);
		if (read(go_r, &b, 1) != 1)
			_exit(3);
		for (uint32_t k = 0; k < EVENTS; k++) {
			memcpy(pl, &k, sizeof k);
			posix_trace_event(ev, pl, sizeof pl);
		}
		_exit(0);
	}
	return c > 0 && write(cp_w, &c, sizeof c) == (ssize_t)sizeof c ? 0 : 2;
}

int main(int argc, char **argv)
{
	char dir[64], path[300], self[4096];

	if (argc == 3 && !strcmp(argv[1], "P"))
		return run_p(argv[2]);
	trace_attr_t a;
	trace_id_t trid;
	trace_event_id_t ev;
	struct pt_ext_rotate_stats stats;

	T_BEGIN(120);
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	REQUIRE(sl > 0);
	self[sl] = 0;
	snprintf(dir, sizeof dir, "/tmp/pt-rotorph-XXXXXX");
	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/t-1.ptlog", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	REQUIRE(fd >= 0 && dfd >= 0);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) == 0);
	REQUIRE(posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED) == 0);
	REQUIRE(posixtrace_attr_setnoloss(&a, 10000) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	posix_trace_attr_destroy(&a);
	struct pt_ext_rotate r = { .dirfd = dfd, .name = "t", .first = 1, .size = 64 * 1024,
	                           .stats = &stats };
	REQUIRE(pt_ext_log_rotate(trid, &r) == 0);
	REQUIRE(posix_trace_eventid_open("orphan.ev", &ev) == 0);
	REQUIRE(posix_trace_start(trid) == 0);

	int go[2], cpid[2];
	REQUIRE(pipe(go) == 0 && pipe(cpid) == 0);
	REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0); /* (C, orphaned, is ours to wait for) */
	char join[256], fds[32];
	REQUIRE(pt_ext_join(trid, join, sizeof join) == 0);
	snprintf(fds, sizeof fds, "%d %d %d", go[0], go[1], cpid[1]);
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0) { /* P: a program of its own (a map that begins with it) */
		setenv(PT_EXT_JOIN_ENV, join, 1);
		execl(self, self, "P", fds, (char *)NULL);
		_exit(127);
	}
	int st;
	pid_t c = -1;
	REQUIRE(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	REQUIRE(read(cpid[0], &c, sizeof c) == (ssize_t)sizeof c && c > 0);
	close(go[0]);
	/* (the flusher, idle meanwhile, gives back the chunk P took when it
	 * joined: P then holds none, and its entries would go) */
	usleep(200000);
	REQUIRE(write(go[1], "g", 1) == 1); /* P is gone: C records */
	close(go[1]);
	REQUIRE(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(fd);
	CHECK(stats.cuts >= 10);

	/* every part with C's events names its code; C's events, all, once */
	unsigned parts = 0, with_c = 0, resolved = 0;
	uint64_t got = 0, dup = 0;
	static unsigned char seen[EVENTS];
	for (unsigned k = 1; k <= stats.current; k++) {
		snprintf(path, sizeof path, "%s/t-%u.ptlog", dir, k);
		int lfd = open(path, O_RDONLY | O_CLOEXEC);
		trace_id_t l;
		if (lfd < 0)
			continue;
		REQUIRE(posix_trace_open(lfd, &l) == 0);
		parts++;
		size_t n = 0;
		CHECK_RC(pt_ext_objects(l, 0, objs, sizeof objs / sizeof *objs, &n), 0);
		int has_c = 0;
		for (;;) {
			struct posix_trace_event_info e;
			uint32_t pl[50];
			size_t len;
			int un;
			CHECK_RC(posix_trace_getnext_event(l, &e, pl, sizeof pl, &len, &un), 0);
			if (un)
				break;
			if (e.posix_event_id != ev || e.posix_pid != c || len != sizeof pl)
				continue;
			has_c = 1;
			got++;
			if (pl[0] < EVENTS)
				dup += seen[pl[0]]++ != 0;
		}
		with_c += has_c;
		if (has_c) {
			int ok = resolves(n, c, 0);
			resolved += ok;
			if (!ok)
				fprintf(stderr, "%s: %zu map entries, C (%d)'s map does not resolve\n",
				        path, n, (int)c);
		}
		CHECK_RC(posix_trace_close(l), 0);
		close(lfd);
		if (!getenv("KEEP")) unlink(path);
	}
	printf("%u parts, %u with C's events (its parent ended before any of them), %u of them "
	       "naming its code; %llu of %u events\n", parts, with_c, resolved,
	       (unsigned long long)got, EVENTS);
	CHECK(with_c >= 10);
	CHECK_EQ(resolved, with_c);
	CHECK_EQ(got, EVENTS);
	CHECK_EQ(dup, 0);
	close(dfd);
	if (!getenv("KEEP")) rmdir(dir);
	T_END();
}
