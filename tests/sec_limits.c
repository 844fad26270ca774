/*
 * sec_limits.c -- bounded work and fair shares (docs/security.md; issue
 * 41, findings 6-8).
 *
 *  1. A target holding 30000 duplicates of a memfd named like a control
 *     segment, and another holding 2000 distinct ones (sealed, big enough,
 *     with a wrong magic number): posix_trace_create() for each returns 0
 *     (a process without the library) within the 30 s a child allows it;
 *     a search that rescans every descriptor takes minutes.
 *  2. (root, SKIP otherwise) Streams: user A, through the library, gets
 *     exactly 64 of 72 streams (9 processes x 8), then also binds the 128
 *     names of the earlier fixed scheme and 200 more directly.  Meanwhile
 *     root and user B each create a stream.  (The users' ids are this
 *     run's own, and the part holds a lock file: runs side by side, as
 *     two suites at once, take their turns.)
 *  3. COLUMNS=2147483647 and COLUMNS=100000 `posixtrace stats`: lines of
 *     at most 1000 columns (the command runs with a 10 MB file-size limit,
 *     so a regression cannot fill the disk).
 */
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stddef.h>
#include <trace.h>
#include "t.h"
#include "sec_util.h"
#include "../src/shm/layout.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

#define HOG_MARK "--hog"
#define ONE_MARK "--one"
#define KIDS 9

/* A child that holds n fds naming memfds "posixtrace-ctl" (distinct:
 * each its own memfd, sealed and sized like a control segment; else dups
 * of one), with its own control fd closed; it waits on a pipe. */
static pid_t flooded(unsigned n, int distinct, int *wake)
{
	int ready[2], go[2];
	REQUIRE(pipe(ready) == 0 && pipe(go) == 0);
	fflush(NULL);
	pid_t c = fork();
	REQUIRE(c >= 0);
	if (c == 0) {
		const char *e = getenv("POSIXTRACE_CTL");
		close(go[1]);
		if (e)
			close(atoi(e));
		int one = -1;
		for (unsigned i = 0; i < n; i++) {
			int fd;
			if (!distinct && one >= 0) {
				fd = dup(one);
			} else {
				fd = memfd_create("posixtrace-ctl", MFD_ALLOW_SEALING);
				if (fd >= 0 && distinct &&
				    (ftruncate(fd, PT_CTL_SIZE) || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK)))
					_exit(2);
				one = fd;
			}
			if (fd < 0)
				_exit(3);
		}
		char ch = 'r';
		if (write(ready[1], &ch, 1) != 1)
			_exit(4);
		if (read(go[0], &ch, 1) < 0)
			_exit(5);
		_exit(0);
	}
	char ch;
	REQUIRE(read(ready[0], &ch, 1) == 1);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	*wake = go[1];
	return c;
}

/* create() for pid in a child with 30 s to do it: its status. */
static int create_in_time(pid_t pid)
{
	fflush(NULL);
	pid_t c = fork();
	REQUIRE(c >= 0);
	if (c == 0) {
		alarm(30);
		trace_id_t trid;
		int rc = posix_trace_create(pid, NULL, &trid);
		if (rc == 0)
			rc = posix_trace_shutdown(trid);
		_exit(rc);
	}
	int st;
	REQUIRE(waitpid(c, &st, 0) == c);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int bind_name(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	memcpy(a.sun_path + 1, name, n);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a,
	                   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0)
		return -1;
	return fd;
}

/* User A: streams for 9 children of its own (8 each), then names bound
 * directly; reports "made M eagain E bound B" on fd 3, waits on fd 4. */
static int hog_main(void)
{
	int go[2];
	pid_t kid[KIDS];
	trace_id_t ids[KIDS * PT_SLOTS];
	int made = 0, eagain = 0, bound = 0;

	if (pipe(go))
		return 2;
	for (int k = 0; k < KIDS; k++) {
		if ((kid[k] = fork()) == 0) {
			char ch;
			close(go[1]);
			if (read(go[0], &ch, 1) < 0)
				_exit(1);
			_exit(0);
		}
	}
	for (int k = 0; k < KIDS; k++)
		for (unsigned i = 0; i < PT_SLOTS; i++) {
			int rc = posix_trace_create(kid[k], NULL, &ids[made]);
			if (rc == 0)
				made++;
			else if (rc == EAGAIN)
				eagain++;
		}
	char name[64];
	for (int i = 0; i < 128 + 200; i++) {
		if (i < 128)
			snprintf(name, sizeof name, "posixtrace/stream/%d", i);
		else
			snprintf(name, sizeof name, "posixtrace/stream/hog%d", i);
		bound += bind_name(name) >= 0;
	}
	dprintf(3, "made %d eagain %d bound %d\n", made, eagain, bound);
	char ch;
	if (read(4, &ch, 1) < 0)
		return 3;
	close(go[1]);
	return 0;
}

static int one_main(void)
{
	trace_id_t trid;
	int rc = posix_trace_create(0, NULL, &trid);
	printf("create %d\n", rc);
	return rc;
}

static void columns(const char *log, const char *value)
{
	char env[64], of[300];
	snprintf(env, sizeof env, "COLUMNS=%s", value);
	snprintf(of, sizeof of, "%s/stats-%s.out", sec_dir, value);
	fflush(NULL);
	pid_t c = fork();
	REQUIRE(c >= 0);
	if (c == 0) {
		struct rlimit fs = { 10 << 20, 10 << 20 };
		int o = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || setrlimit(RLIMIT_FSIZE, &fs) != 0)
			_exit(126);
		dup2(o, 1);
		putenv(env);
		putenv("LC_ALL=C");
		execl(PT_BUILD_DIR "/posixtrace", "posixtrace", "stats", log, (char *)NULL);
		_exit(126);
	}
	int st;
	REQUIRE(waitpid(c, &st, 0) == c);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char *out = sec_slurp(of);
	size_t longest = 0, lines = 0;
	for (char *p = out; *p;) {
		size_t n = strcspn(p, "\n");
		longest = n > longest ? n : longest;
		lines++;
		p += n + (p[n] == '\n');
	}
	CHECK(lines > 5);
	CHECK(longest <= 1000);
	if (longest > 1000)
		fprintf(stderr, "COLUMNS=%s: a line of %zu columns\n", value, longest);
	free(out);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], HOG_MARK))
		return hog_main();
	if (argc > 1 && !strcmp(argv[1], ONE_MARK))
		return one_main();
	T_BEGIN(240);

	/* 1. the fd flood */
	struct rlimit rl;
	unsigned dups = 30000;
	REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 31000) {
		struct rlimit up = { 31000, 31000 }; /* root may raise it */
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
		else if (rl.rlim_max < 2200)
			T_SKIP("RLIMIT_NOFILE's hard limit is below 2200");
		else
			dups = (unsigned)rl.rlim_max - 100;
	}
	rl.rlim_cur = rl.rlim_max;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	int wake;
	pid_t t = flooded(dups, 0, &wake);
	CHECK_EQ(create_in_time(t), 0);
	close(wake);
	waitpid(t, NULL, 0);
	t = flooded(2000, 1, &wake);
	CHECK_EQ(create_in_time(t), 0);
	close(wake);
	waitpid(t, NULL, 0);

	if (geteuid() != 0) {
		printf("SKIP (parts 2 and 3): not root\n");
		T_END();
	}
	sec_setup();
	const char *self = sec_copy("/proc/self/exe", "sec_limits", 0755);

	/* 2. the stream hog: alone on the machine (the streams a user may
	 * have are a share of what all may have: two hogs at once, from two
	 * runs of the suites side by side, leave root none) */
	int lk = open("/tmp/posixtrace-sec_limits.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	REQUIRE(lk >= 0 && flock(lk, LOCK_EX) == 0);
	int rep[2], hold[2];
	REQUIRE(pipe2(rep, O_CLOEXEC) == 0 && pipe2(hold, O_CLOEXEC) == 0);
	fflush(NULL);
	pid_t hog = fork();
	REQUIRE(hog >= 0);
	if (hog == 0) {
		if (dup2(rep[1], 3) != 3 || dup2(hold[0], 4) != 4 || sec_become(SEC_UID_OWN(5)) != 0)
			_exit(120);
		execl(self, self, HOG_MARK, (char *)NULL);
		_exit(121);
	}
	close(rep[1]);
	close(hold[0]);
	char line[128] = "";
	ssize_t n = read(rep[0], line, sizeof line - 1);
	line[n > 0 ? n : 0] = 0;
	int made = -1, eagain = -1, bound = -1;
	CHECK(sscanf(line, "made %d eagain %d bound %d", &made, &eagain, &bound) == 3);
	CHECK_EQ(made, 64);
	CHECK_EQ(eagain, KIDS * PT_SLOTS - 64);
	CHECK(bound > 128); /* the earlier scheme's names among them */
	trace_id_t trid;
	CHECK_RC(posix_trace_create(0, NULL, &trid), 0);
	char *out = NULL;
	CHECK_EQ(sec_run_as(SEC_UID_OWN(6), (char *const[]){ (char *)self, ONE_MARK, NULL }, NULL, &out,
	                    NULL),
	         0);
	CHECK(sec_count(out, "create 0\n") == 1);
	free(out);
	posix_trace_shutdown(trid);
	close(hold[1]);
	int st;
	REQUIRE(waitpid(hog, &st, 0) == hog);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(lk); /* (the hog's streams are gone with it) */

	/* 3. COLUMNS */
	if (access(PT_BUILD_DIR "/posixtrace", X_OK) || access(PT_BUILD_DIR "/examples/app", X_OK)) {
		printf("SKIP (part 3): the posixtrace command or examples/app is not built\n");
		T_END();
	}
	const char *log = sec_path("c.ptlog");
	CHECK_EQ(sec_run_as(0, (char *const[]){ PT_BUILD_DIR "/posixtrace", "record", "-o",
	                                        (char *)log, "--", PT_BUILD_DIR "/examples/app", "0",
	                                        NULL },
	                    NULL, NULL, NULL),
	         0);
	columns(log, "2147483647");
	columns(log, "100000");
	T_END();
}
