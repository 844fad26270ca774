/*
 * sec_cache.c -- `posixtrace view` run by root with another user's HOME
 * (sudo -E) makes and uses no cache directory through links that user
 * planted (docs/security.md, "The trace viewer's server"; issue 47).
 * Needs root, for the other user (SKIP otherwise).
 *
 *   planted   a home of user U whose .cache is U's symbolic link to a
 *             directory of U's: root's view must make nothing there (on
 *             main it made posixtrace/ in it, root's, and wrote the index
 *             into it) and says the index is not kept;
 *   own link  root's own home whose .cache is a link: not followed either;
 *   control   root's own home without links: the cache is made there
 *             (0700) and holds the index, so the cases above are not
 *             passing for want of a cache at all.
 */
#include <dirent.h>
#include <trace.h>
#include "t.h"
#include "sec_util.h"
#include "view_http.h"

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return d ? n : -1;
}

/* view LOG as root with HOME=home; its stderr. */
static char *view_with_home(const char *home, const char *log)
{
	struct view_srv s;
	const char *out = cli_path("view.out"), *err = cli_path("view.err");
	setenv("HOME", home, 1);
	unsetenv("XDG_CACHE_HOME");
	CHECK_EQ(view_start(&s, CLI("view", (char *)log), out, err, 30), 0);
	view_stop(&s);
	return sec_slurp(err);
}

int main(void)
{
	T_BEGIN(60);
	sec_setup();
	if (access(cli_bin, X_OK) != 0 || access(cli_app, X_OK) != 0)
		T_SKIP("the posixtrace command or examples/app is not built");
	cli_need_view();
	const char *log = strdup(cli_path("a.ptlog"));
	REQUIRE(cli_record_app(log, "0") == 0);
	uid_t u = SEC_UID(1);

	/* planted: U's home, U's .cache -> U's directory */
	char *home = strdup(cli_path("uhome")), *target = strdup(cli_path("utarget"));
	REQUIRE(mkdir(home, 0755) == 0 && mkdir(target, 0755) == 0);
	REQUIRE(symlink(target, cli_path("uhome/.cache")) == 0);
	REQUIRE(chown(home, u, u) == 0 && chown(target, u, u) == 0 &&
	        lchown(cli_path("uhome/.cache"), u, u) == 0);
	char *err = view_with_home(home, log);
	CHECK_EQ(entries(target), 0);
	CHECK(cli_contains(err, "the index is not kept"));
	if (entries(target))
		fprintf(stderr, "view made %s/posixtrace (stderr: %s)\n", target, err);
	free(err);

	/* own link: root's home, its .cache a link to a directory of root's */
	char *rhome = strdup(cli_path("rhome")), *rtarget = strdup(cli_path("rtarget"));
	REQUIRE(mkdir(rhome, 0755) == 0 && mkdir(rtarget, 0700) == 0);
	REQUIRE(symlink(rtarget, cli_path("rhome/.cache")) == 0);
	err = view_with_home(rhome, log);
	CHECK_EQ(entries(rtarget), 0);
	CHECK(cli_contains(err, "the index is not kept"));
	free(err);

	/* control: root's own home, no link: the cache is made and used */
	char *chome = strdup(cli_path("chome"));
	REQUIRE(mkdir(chome, 0755) == 0);
	err = view_with_home(chome, log);
	CHECK(!cli_contains(err, "the index is not kept"));
	struct stat sb;
	CHECK(lstat(cli_path("chome/.cache/posixtrace"), &sb) == 0 && S_ISDIR(sb.st_mode) &&
	      (sb.st_mode & 0777) == 0700 && sb.st_uid == 0);
	CHECK_EQ(entries(cli_path("chome/.cache/posixtrace")), 1);
	free(err);
	free(home);
	free(target);
	free(rhome);
	free(rtarget);
	free(chome);
	free((char *)log);
	T_END();
}
