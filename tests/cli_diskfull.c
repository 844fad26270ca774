/*
 * cli_diskfull.c -- a log that meets a full disk says so in plain words:
 * `posixtrace record` of examples/app into an APPEND log on a 64 KiB
 * tmpfs (in a mount namespace of its own;
 * skipped when one cannot be made, as without root).  record's summary and `info` say that events were
 * not written to the log because the disk was full (and record exits 3,
 * not 0: `record ... && upload` must not take it for a whole log), never that the log
 * "wrapped" (only a LOOP log wraps); info says the counts come from
 * reading the log (a log whose writes failed has no summary), and they
 * match the lines of `show`.  (tests/logsum: a summary that finds no
 * room is left out without an error.)
 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static const char *mnt;

static void unmount(void)
{
	if (mnt)
		umount2(mnt, MNT_DETACH);
}

int main(void)
{
	char *out = NULL, *err = NULL;

	T_BEGIN(120);
	cli_setup();
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		T_SKIP("cannot make a mount namespace (needs root or CAP_SYS_ADMIN)");
	const char *dir = cli_path("small");
	REQUIRE(mkdir(dir, 0700) == 0);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=64k") != 0)
		T_SKIP("cannot mount a tmpfs");
	mnt = dir;
	atexit(unmount);
	const char *log = cli_path("small/app.ptlog");
	/* 60 rounds of the app (40 ms each): about 270 KiB of log, four
	 * times the disk (200 rounds, 860 KiB, took 8 s for no more) */
	int rc = cli_run(CLI("record", "-o", (char *)log, "--", (char *)cli_app, "0", "60"), NULL,
	                 &err);
	/* the program exited 0, but the log is missing events: exit 3, said */
	CHECK_EQ(rc, 3);
	CHECK(cli_contains(err, "exit status 3: events were lost"));
	CHECK(cli_contains(err, "not written to the log (the disk was full)"));
	CHECK(!cli_contains(err, "wrapped"));
	CHECK(!cli_contains(err, "is it linked with libposixtrace"));
	if (!cli_contains(err, "the disk was full"))
		fprintf(stderr, "record said:\n%s\n", err ? err : "");
	free(err);
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	CHECK(cli_contains(out, "not written to the log (the disk was full)"));
	CHECK(!cli_contains(out, "wrapped"));
	CHECK(cli_contains(out, "counted       by reading the log"));
	const char *ev = out ? strstr(out, "\nevents        ") : NULL;
	long events = ev ? atol(ev + 15) : -1;
	CHECK(events >= 0); /* (none, if no block found room) */
	free(out);
	CHECK_EQ(cli_run(CLI("show", (char *)log), &out, NULL), 0);
	CHECK_EQ(cli_nlines(out), events);
	free(out);
	T_END();
}
