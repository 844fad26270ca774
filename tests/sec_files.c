/*
 * sec_files.c -- the files the command writes cannot be turned against
 * their owner (docs/security.md; issue 41, findings 3-5).  Needs root,
 * for a second user who plants things (SKIP otherwise).
 *
 * With umask 022: a log, a chrome export and a CTF directory are made
 * 0600, 0600 and 0700 (its files 0600).  --force over this user's own
 * file makes a new file (another inode, 0600): a descriptor the old one
 * was open on does not see the new log.  In a 1777 directory another user
 * plants a symbolic link to a root file and a file of their own: record
 * --force refuses both (the root file and theirs keep their contents, the
 * latter stays theirs).  --force refuses a FIFO (without blocking), a
 * device and a directory.  export --force into a CTF directory another
 * user owns is refused, and so is one into root's own whose `metadata` is
 * a symbolic link to a root file (the link and the file stay).  export
 * --force (chrome) over a symbolic link is refused.
 */
#include <sys/sysmacros.h>
#include <trace.h>
#include "t.h"
#include "sec_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

static const char *cli, *app;

static mode_t mode_of(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static ino_t ino_of(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 ? st.st_ino : 0;
}

static void put(const char *p, const char *s, mode_t mode)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	REQUIRE(fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s));
	close(fd);
	REQUIRE(chmod(p, mode) == 0);
}

static int same_text(const char *p, const char *s)
{
	char *t = sec_slurp(p);
	int same = !strcmp(t, s);
	free(t);
	return same;
}

/* record app into out (with --force or not); the status, stderr. */
static int record(const char *out, int force, char **err)
{
	char *const plain[] = { (char *)cli, "record", "-o", (char *)out, "--", (char *)app, "0", NULL };
	char *const forced[] = { (char *)cli, "record", "--force", "-o", (char *)out, "--", (char *)app,
	                         "0", NULL };
	return sec_run_as(0, force ? forced : plain, NULL, NULL, err);
}

static int export(const char *fmt, const char *log, const char *out, char **err)
{
	char *const argv[] = { (char *)cli, "export", "--format", (char *)fmt, (char *)log, "-o",
	                       (char *)out, "--force", NULL };
	return sec_run_as(0, argv, NULL, NULL, err);
}

static void refused(int rc, char **errp, const char *why)
{
	char *err = *errp;
	CHECK_EQ(rc, 1);
	CHECK(sec_count(err, why) == 1);
	if (sec_count(err, why) != 1)
		fprintf(stderr, "expected '%s' in: %s\n", why, err);
	free(err);
}

int main(void)
{
	T_BEGIN(120);
	if (access(PT_BUILD_DIR "/posixtrace", X_OK) || access(PT_BUILD_DIR "/examples/app", X_OK))
		T_SKIP("the posixtrace command or examples/app is not built");
	sec_setup();
	const uid_t u = SEC_UID(4);
	cli = PT_BUILD_DIR "/posixtrace";
	app = PT_BUILD_DIR "/examples/app";
	umask(022);
	char *err = NULL;
	int rc;

	/* modes */
	const char *log = sec_path("a.ptlog");
	CHECK_EQ(record(log, 0, NULL), 0);
	CHECK_EQ(mode_of(log), 0600);
	const char *json = sec_path("a.json"), *ctf = sec_path("a.ctf");
	CHECK_EQ(export("chrome", log, json, NULL), 0);
	CHECK_EQ(mode_of(json), 0600);
	CHECK_EQ(export("ctf", log, ctf, NULL), 0);
	CHECK_EQ(mode_of(ctf), 0700);
	char p[300];
	snprintf(p, sizeof p, "%s/metadata", ctf);
	CHECK_EQ(mode_of(p), 0600);
	snprintf(p, sizeof p, "%s/stream_0", ctf);
	CHECK_EQ(mode_of(p), 0600);

	/* --force over our own file: a new file, renamed into place */
	const char *own = sec_path("own.ptlog");
	put(own, "OLD", 0644);
	ino_t old_ino = ino_of(own);
	int held = open(own, O_RDONLY);
	REQUIRE(held >= 0);
	CHECK_EQ(record(own, 1, NULL), 0);
	CHECK(ino_of(own) != old_ino);
	CHECK_EQ(mode_of(own), 0600);
	char buf[16] = "";
	CHECK(pread(held, buf, sizeof buf, 0) == 3 && !memcmp(buf, "OLD", 3));
	close(held);

	/* another user's plants in a 1777 directory */
	const char *pub = sec_path("pub"), *rootfile = sec_path("rootfile");
	REQUIRE(mkdir(pub, 0755) == 0 && chmod(pub, 01777) == 0);
	put(rootfile, "ROOT", 0600);
	char link[300], theirs[300];
	snprintf(link, sizeof link, "%s/s.ptlog", pub);
	snprintf(theirs, sizeof theirs, "%s/f.ptlog", pub);
	fflush(NULL);
	pid_t c = fork();
	if (c == 0) {
		if (sec_become(u) != 0 || symlink(rootfile, link) != 0)
			_exit(1);
		int fd = open(theirs, O_WRONLY | O_CREAT | O_EXCL, 0666);
		_exit(fd >= 0 && write(fd, "THEIRS", 6) == 6 && fchmod(fd, 0666) == 0 ? 0 : 2);
	}
	int st;
	REQUIRE(c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	err = NULL;
	rc = record(link, 1, &err);
	refused(rc, &err, "it is a symbolic link");
	CHECK(same_text(rootfile, "ROOT"));
	rc = record(theirs, 1, &err);
	refused(rc, &err, "it belongs to another user");
	CHECK(same_text(theirs, "THEIRS"));
	struct stat tst;
	CHECK(lstat(theirs, &tst) == 0 && tst.st_uid == u);

	/* a FIFO (no reader: an open for writing would block), a device, a directory */
	const char *fifo = sec_path("fifo"), *dev = sec_path("null"), *dir = sec_path("dir");
	REQUIRE(mkfifo(fifo, 0600) == 0);
	REQUIRE(mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0);
	REQUIRE(mkdir(dir, 0700) == 0);
	rc = record(fifo, 1, &err);
	refused(rc, &err, "not a regular file");
	struct stat fst;
	CHECK(lstat(fifo, &fst) == 0 && S_ISFIFO(fst.st_mode));
	rc = record(dev, 1, &err);
	refused(rc, &err, "not a regular file");
	struct stat dst;
	CHECK(lstat(dev, &dst) == 0 && S_ISCHR(dst.st_mode));
	rc = record(dir, 1, &err);
	refused(rc, &err, "it is a directory");

	/* CTF --force: another user's directory; our own with a planted link */
	const char *uctf = sec_path("u.ctf"), *rootfile2 = sec_path("rootfile2");
	put(rootfile2, "ROOT2", 0600);
	REQUIRE(chmod(sec_dir, 0777) == 0); /* (for the user's mkdir, before it runs) */
	fflush(NULL);
	if ((c = fork()) == 0) {
		char m[300];
		snprintf(m, sizeof m, "%s/metadata", uctf);
		_exit(sec_become(u) == 0 && mkdir(uctf, 0777) == 0 && chmod(uctf, 0777) == 0 &&
		              symlink(rootfile2, m) == 0
		          ? 0
		          : 1);
	}
	REQUIRE(c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	REQUIRE(chmod(sec_dir, 0755) == 0);
	rc = export("ctf", log, uctf, &err);
	refused(rc, &err, "it belongs to another user");
	CHECK(same_text(rootfile2, "ROOT2"));
	const char *octf = sec_path("o.ctf");
	REQUIRE(mkdir(octf, 0700) == 0);
	snprintf(p, sizeof p, "%s/metadata", octf);
	REQUIRE(symlink(rootfile2, p) == 0);
	rc = export("ctf", log, octf, &err);
	refused(rc, &err, "it is a symbolic link");
	CHECK(same_text(rootfile2, "ROOT2"));
	struct stat mst;
	CHECK(lstat(p, &mst) == 0 && S_ISLNK(mst.st_mode));
	char jlink[300];
	snprintf(jlink, sizeof jlink, "%s/j.json", pub);
	REQUIRE(symlink(rootfile2, jlink) == 0);
	rc = export("chrome", log, jlink, &err);
	refused(rc, &err, "it is a symbolic link");
	CHECK(same_text(rootfile2, "ROOT2"));
	T_END();
}
