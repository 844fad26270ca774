/*
 * cli_view_cache.c -- where `posixtrace view` keeps its indexes and when
 * it removes them (cli/enrich/vcache.c; docs/posixtrace.1, FILES), on small
 * generated logs (tests/biglog.h).  Each entry is found by the name the
 * policy gives it, from the log's own stat() (device and inode): the
 * witness is the file system, not the command's word.
 *   - the directory is 0700, an entry 0600, named view-DEV-INO.idx, and
 *     it holds the log's absolute path; a second start reads it;
 *   - stale entries go at the next start (of any log): a log removed, a
 *     log rewritten (other size);
 *   - an entry unused for 31 days goes, one of 29 days stays;
 *   - over the cap (POSIXTRACE_VIEW_CACHE_MAX) the least recently used go
 *     first, never the entry of the log being viewed; an index larger
 *     than the cap is not kept at all;
 *   - temporary files of a killed start go after an hour, not before;
 *   - a file of another format under an entry's name goes;
 *   - nothing is followed: a link under the entry's name is not read (the
 *     index is built) and is replaced by a file, its target untouched; a
 *     link under another entry name is left, its target untouched; a file
 *     of another user is left;
 *   - a cache directory that is a link, or open to others: no cache is
 *     used (said once), the server still answers.
 */
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "biglog.h"
#include "view_http.h"
#include "view_test.h"

#define N 20000u

static char dir[400];   /* $XDG_CACHE_HOME/posixtrace */

static void entry_of(const char *log, char *buf, size_t cap)
{
	struct stat sb;
	REQUIRE(stat(log, &sb) == 0);
	snprintf(buf, cap, "%s/view-%llx-%llx.idx", dir, (unsigned long long)sb.st_dev,
	         (unsigned long long)sb.st_ino);
}

static int exists(const char *p)
{
	struct stat sb;
	return lstat(p, &sb) == 0;
}

static long long size_of(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* Sets p's modification time days ago (a link's own with AT_SYMLINK_NOFOLLOW). */
static void age(const char *p, double days)
{
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= (time_t)(days * 86400);
	t[1] = t[0];
	REQUIRE(utimensat(AT_FDCWD, p, t, AT_SYMLINK_NOFOLLOW) == 0);
}

/* One start of view on log, stopped at once: whether it said its index
 * came from the cache (-1: it did not start); its stderr into *err. */
static int start(const char *log, char **err)
{
	struct view_srv s;
	const char *o = cli_path("view.out"), *e = cli_path("view.err");
	int rc = view_start(&s, CLI("view", (char *)log), o, e, 120);
	char *out = cli_slurp(o);
	int cached = out && cli_contains(out, "from the cache");
	free(out);
	if (rc == 0) { /* it answers: the whole trace's counts */
		char *body = NULL;
		CHECK_EQ(view_get(&s, "/meta", NULL, 0, &body), 200);
		CHECK(body && cli_contains(body, "\"events\":20000"));
		free(body);
	}
	CHECK_EQ(view_stop(&s), rc == 0 ? 0 : -1);
	char *said = cli_slurp(e);
	if (rc != 0)
		fprintf(stderr, "view %s did not start; it said: %s\n", log, said ? said : "");
	if (err)
		*err = said;
	else
		free(said);
	return rc == 0 ? cached : -1;
}

static void make_log(const char *p, uint64_t n)
{
	REQUIRE(biglog_write(p, n, 1) == 0);
}

int main(void)
{
	char a[500], b[500], c[500], d[500], x[500], *err = NULL;
	struct stat sb;

	T_BEGIN(300);
	view_test_begin(NULL);
	snprintf(dir, sizeof dir, "%s/posixtrace", getenv("XDG_CACHE_HOME"));
	/* (cli_path's buffer is reused: copies) */
	char *la = strdup(cli_path("a.ptlog")), *lb = strdup(cli_path("b.ptlog")),
	     *lc = strdup(cli_path("c.ptlog")), *ld = strdup(cli_path("d.ptlog"));
	REQUIRE(la && lb && lc && ld);
	make_log(la, N);
	make_log(lb, N);
	make_log(lc, N);
	make_log(ld, N);
	entry_of(la, a, sizeof a);
	entry_of(lb, b, sizeof b);
	entry_of(lc, c, sizeof c);
	entry_of(ld, d, sizeof d);

	/* made private; the entry 0600, with the log's absolute path */
	CHECK_EQ(start(la, &err), 0);
	CHECK(err && !err[0]);
	free(err);
	REQUIRE(stat(dir, &sb) == 0);
	CHECK_EQ(sb.st_mode & 07777, 0700u);
	REQUIRE(lstat(a, &sb) == 0);
	CHECK(S_ISREG(sb.st_mode));
	CHECK_EQ(sb.st_mode & 07777, 0600u);
	char *body = cli_slurp(a), *abs = realpath(la, NULL);
	CHECK(body && abs && memmem(body, (size_t)sb.st_size, abs, strlen(abs)));
	free(body);
	free(abs);
	CHECK_EQ(start(la, NULL), 1);
	long long one = size_of(a);
	CHECK(one > 0);

	/* stale: the log removed; the log rewritten (another size) */
	CHECK_EQ(start(lb, NULL), 0);
	CHECK(exists(a) && exists(b));
	char *moved = strdup(cli_path("a-moved.ptlog"));
	REQUIRE(moved && rename(la, moved) == 0);
	CHECK_EQ(start(lb, NULL), 1);
	CHECK(!exists(a) && exists(b));
	REQUIRE(rename(moved, la) == 0);
	free(moved);
	entry_of(la, a, sizeof a);
	make_log(lb, N - 100); /* (O_TRUNC: the same inode, another size) */
	entry_of(lb, b, sizeof b);
	CHECK(exists(b));
	CHECK_EQ(start(la, NULL), 0);
	CHECK(exists(a) && !exists(b));
	make_log(lb, N);
	entry_of(lb, b, sizeof b);

	/* age: unused 31 days goes, 29 days stays */
	CHECK_EQ(start(lb, NULL), 0);
	CHECK_EQ(start(lc, NULL), 0);
	age(a, 31);
	age(b, 29);
	CHECK_EQ(start(lc, NULL), 1);
	CHECK(!exists(a) && exists(b) && exists(c));

	/* the cap: room for two entries; the least recently used goes */
	char cap[32];
	snprintf(cap, sizeof cap, "%lld", one * 5 / 2);
	setenv("POSIXTRACE_VIEW_CACHE_MAX", cap, 1);
	age(b, 3); /* b used before c */
	age(c, 2);
	CHECK_EQ(start(ld, NULL), 0); /* d kept, b (the oldest use) goes */
	CHECK(!exists(b) && exists(c) && exists(d));
	age(d, 1);                    /* now c is the newest: d goes for a */
	CHECK_EQ(start(lc, NULL), 1);
	age(d, 1);
	CHECK_EQ(start(la, NULL), 0);
	CHECK(exists(a) && exists(c) && !exists(d));
	/* a cap below one index: none kept, none read, the rest goes */
	setenv("POSIXTRACE_VIEW_CACHE_MAX", "1k", 1);
	CHECK_EQ(start(lb, NULL), 0);
	CHECK(!exists(b) && !exists(a) && !exists(c));
	CHECK_EQ(start(lb, NULL), 0);
	setenv("POSIXTRACE_VIEW_CACHE_MAX", "1x", 1); /* not a size: said, the default taken */
	CHECK_EQ(start(lb, &err), 0);
	CHECK(err && cli_contains(err, "POSIXTRACE_VIEW_CACHE_MAX"));
	free(err);
	unsetenv("POSIXTRACE_VIEW_CACHE_MAX");
	CHECK(exists(b));

	/* temporary files of a killed start: after an hour */
	char t1[600], t2[600];
	snprintf(t1, sizeof t1, "%s.tmp.99999", a);
	snprintf(t2, sizeof t2, "%s.tmp.99998", c);
	FILE *f = fopen(t1, "w");
	REQUIRE(f && fclose(f) == 0);
	REQUIRE((f = fopen(t2, "w")) && fclose(f) == 0);
	age(t1, 2.0 / 24);
	age(t2, 0.5 / 24);
	CHECK_EQ(start(lb, NULL), 1);
	CHECK(!exists(t1) && exists(t2));
	/* another format under an entry's name */
	snprintf(x, sizeof x, "%s/view-1-2.idx", dir);
	REQUIRE((f = fopen(x, "w")) && fputs("PTVIDX01 an index of an older posixtrace", f) >= 0 &&
	        fclose(f) == 0);
	CHECK_EQ(start(lb, NULL), 1);
	CHECK(!exists(x));

	/* links are never followed */
	char *victim = strdup(cli_path("victim.idx"));
	REQUIRE(victim != NULL);
	REQUIRE(rename(b, victim) == 0); /* a good entry of b, moved out */
	REQUIRE(symlink(victim, b) == 0);
	long long vsize = size_of(victim);
	age(victim, 10);
	REQUIRE(stat(victim, &sb) == 0);
	time_t vtime = sb.st_mtim.tv_sec;
	CHECK_EQ(start(lb, NULL), 0); /* not read through the link: built */
	REQUIRE(lstat(b, &sb) == 0);
	CHECK(S_ISREG(sb.st_mode)); /* the link replaced, not written through */
	REQUIRE(stat(victim, &sb) == 0);
	CHECK(sb.st_size == vsize && sb.st_mtim.tv_sec == vtime);
	snprintf(x, sizeof x, "%s/view-5-6.idx", dir); /* a link under another entry name */
	REQUIRE(symlink(victim, x) == 0);
	age(victim, 40);
	CHECK_EQ(start(lb, NULL), 1);
	CHECK(exists(x) && exists(victim));
	REQUIRE(unlink(x) == 0);
	/* another user's file (as root: one made nobody's) stays */
	if (geteuid() == 0) {
		snprintf(x, sizeof x, "%s/view-7-8.idx", dir);
		REQUIRE((f = fopen(x, "w")) && fclose(f) == 0);
		REQUIRE(chown(x, 65534, 65534) == 0);
		CHECK_EQ(start(lb, NULL), 1);
		CHECK(exists(x));
		REQUIRE(unlink(x) == 0);
	}

	/* a directory open to others: not used, said */
	REQUIRE(chmod(dir, 0755) == 0);
	CHECK_EQ(start(lb, &err), 0);
	CHECK(err && cli_contains(err, "not a private directory"));
	free(err);
	REQUIRE(chmod(dir, 0700) == 0);
	CHECK_EQ(start(lb, NULL), 1);
	/* the directory a link to a private one: not used either */
	char real[500];
	snprintf(real, sizeof real, "%s.real", dir);
	REQUIRE(rename(dir, real) == 0);
	REQUIRE(symlink(real, dir) == 0);
	CHECK_EQ(start(lb, &err), 0);
	CHECK(err && cli_contains(err, "not a private directory"));
	free(err);
	CHECK(exists(t2)); /* (nothing swept through it) */

	free(la);
	free(lb);
	free(lc);
	free(ld);
	free(victim);
	printf("%d checks\n", t_checks);
	T_END();
}
