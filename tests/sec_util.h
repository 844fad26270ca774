/*
 * sec_util.h -- for the security tests (tests/sec_*.c; docs/security.md
 * names the threat each one checks): unprivileged users made from spare
 * user ids when the suite runs as root, a scratch directory they can use,
 * and running a program as one of them with its output in files.
 *
 * Include after "t.h".
 */
#ifndef POSIXTRACE_SEC_UTIL_H
#define POSIXTRACE_SEC_UTIL_H

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define SEC_UID(k) ((uid_t)(61000 + (k))) /* k = 1..9: ids no account uses */

static char sec_dir[64];

static inline void sec_cleanup(void)
{
	char cmd[128];
	if (sec_dir[0] && !getenv("PT_KEEP")) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", sec_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", sec_dir);
	}
}

/* Skip unless root (the test makes unprivileged users); a scratch
 * directory everyone may enter, removed at exit (kept with PT_KEEP=1). */
static inline void sec_setup(void)
{
	if (geteuid() != 0)
		T_SKIP("needs root: it runs programs as unprivileged users (spare uids 61001-61009)");
	snprintf(sec_dir, sizeof sec_dir, "/tmp/pt-sec-XXXXXX");
	REQUIRE(mkdtemp(sec_dir) != NULL);
	REQUIRE(chmod(sec_dir, 0755) == 0);
	atexit(sec_cleanup);
}

/* A path in the scratch directory (64 rotating static buffers). */
static inline const char *sec_path(const char *name)
{
	static char buf[64][256]; /* (enough for a test: no path is reused) */
	static int k;
	char *b = buf[k++ % 64];
	snprintf(b, 256, "%s/%s", sec_dir, name);
	return b;
}

/* This process becomes user u (no supplementary groups): 0 if it did. */
static inline int sec_become(uid_t u)
{
	return setgroups(0, NULL) == 0 && setgid((gid_t)u) == 0 && setuid(u) == 0 &&
	               getuid() == u && geteuid() == u
	           ? 0
	           : -1;
}

/* A copy of file at name in the scratch directory, mode mode; its path. */
static inline const char *sec_copy(const char *file, const char *name, mode_t mode)
{
	const char *to = sec_path(name);
	char buf[65536];
	int in = open(file, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	ssize_t n;
	REQUIRE(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof buf)) > 0)
		REQUIRE(write(out, buf, (size_t)n) == n);
	close(in);
	close(out);
	REQUIRE(chmod(to, mode) == 0);
	return to;
}

static inline char *sec_slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	size_t cap = 4096, n = 0;
	char *s = malloc(cap + 1);
	ssize_t r;
	REQUIRE(s != NULL);
	if (fd < 0) {
		s[0] = 0;
		return s;
	}
	while ((r = read(fd, s + n, cap - n)) > 0)
		if ((n += (size_t)r) == cap)
			REQUIRE((s = realloc(s, (cap *= 2) + 1)) != NULL);
	close(fd);
	s[n] = 0;
	return s;
}

/* Run argv as user u (root: u 0) with the environment env added, from the
 * scratch directory, stdout and stderr into files; the exit status (128+N
 * when killed by signal N).  *out / *err: the output (free them), unless
 * NULL. */
static inline int sec_run_as(uid_t u, char *const argv[], char *const *env, char **out, char **err)
{
	static int seq;
	char of[300], ef[300];
	snprintf(of, sizeof of, "%s/run-out.%d", sec_dir, seq);
	snprintf(ef, sizeof ef, "%s/run-err.%d", sec_dir, seq++);
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int o = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || chdir(sec_dir) != 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		if (u != 0 && sec_become(u) != 0)
			_exit(125);
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		execv(argv[0], argv);
		_exit(126);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		REQUIRE(errno == EINTR);
	if (out)
		*out = sec_slurp(of);
	if (err)
		*err = sec_slurp(ef);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static inline int sec_count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; p && (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

#endif
