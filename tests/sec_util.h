/*
 * sec_util.h -- for the security tests (tests/sec_*.c; docs/security.md
 * names the threat each one checks): unprivileged users made from spare
 * user ids when the suite runs as root, a scratch directory they can use,
 * and running a program as one of them with its output in files.
 *
 * Include after <trace.h> and "t.h" (it includes tests/cli_util.h).
 */
#ifndef POSIXTRACE_SEC_UTIL_H
#define POSIXTRACE_SEC_UTIL_H

#include "cli_util.h"

#define SEC_UID(k) ((uid_t)(61000 + (k))) /* k = 1..9: ids no account uses */
/* The same, and no other test process uses them either (k = 1..9): for
 * what the library counts per user, which a test run beside this one
 * (another suite: make check with and without sanitizers at once) would
 * otherwise share */
#define SEC_UID_OWN(k) ((uid_t)(200000u + (uint32_t)getpid() * 10u + (k)))
#define sec_dir cli_dir
#define sec_path cli_path

/* Skip unless root (the test makes unprivileged users); a scratch
 * directory everyone may enter, removed at exit (kept with PT_KEEP=1). */
static inline void sec_setup(void)
{
	if (geteuid() != 0)
		T_SKIP("needs root: it runs programs as unprivileged users (spare uids 61001-61009)");
	snprintf(cli_dir, sizeof cli_dir, "/tmp/pt-sec-XXXXXX");
	REQUIRE(mkdtemp(cli_dir) != NULL);
	REQUIRE(chmod(cli_dir, 0755) == 0);
	atexit(cli_cleanup);
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
	const char *to = cli_path(name);
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

/* The file's text ("" if there is none: free it). */
static inline char *sec_slurp(const char *path)
{
	char *s = cli_slurp(path);
	if (!s)
		REQUIRE((s = calloc(1, 1)) != NULL);
	return s;
}

/* argv as user u (0: root), env added, from the scratch directory; see
 * cli_run_as(). */
static inline int sec_run_as(uid_t u, char *const argv[], char *const *env, char **out, char **err)
{
	return cli_run_as(u, argv, out, err, env);
}

static inline int sec_count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; p && (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

#endif
