/*
 * cli_parts_bad.c -- a recording's parts missing, not logs, or damaged:
 * said, and what can be read read (cli/read/parts.c).
 *
 *  - a missing middle part: said (stderr, info), the others read, exit 0.
 *  - an empty directory, a part that is not a log, a part that cannot be
 *    opened: exit 1 and the file named; a damaged middle part: said, the
 *    other parts read whole, the exit status of that part read alone.
 * The parts and their witness: parts_util.h.
 */
#include <dirent.h>
#include <pthread.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "view_http.h"
#include "parts_util.h"

static void copy_file(const char *from, const char *to)
{
	char *cmd = NULL;
	REQUIRE(asprintf(&cmd, "cp '%s' '%s'", from, to) > 0);
	REQUIRE(system(cmd) == 0);
	free(cmd);
}

static void run(const char *dir, char *const *part)
{
	char *out = NULL, *err = NULL;
	int have_query = parts_have_query(dir);

	/* a missing middle part: said, not an error */
	const char *gap = cli_path("gap");
	REQUIRE(mkdir(gap, 0700) == 0);
	for (int k = 0; k < NALL; k++)
		if (k != 2) {
			char to[600];
			snprintf(to, sizeof to, "%s/w-%d.ptlog", gap, k + 1);
			copy_file(part[k], to);
		}
	CHECK_EQ(cli_run(CLI("show", (char *)gap), &out, &err), 0);
	CHECK_EQ(cli_nlines(out), total - part_n[2]);
	CHECK(cli_contains(err, "w-3.ptlog is missing"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("info", (char *)gap), &out, NULL), 0);
	CHECK(cli_contains(out, "w-3.ptlog is missing"));
	CHECK_EQ(info_events(out), total - part_n[2]);
	free(out);
	if (have_query) {
		char want[64];
		CHECK_EQ(cli_run(CLI("query", "--csv", (char *)gap, "SELECT count(*) FROM event"),
		                 &out, &err), 0);
		snprintf(want, sizeof want, "\n%ld\r\n", total - part_n[2]);
		CHECK(cli_contains(out, want));
		CHECK(cli_contains(err, "w-3.ptlog is missing"));
		free(out);
		free(err);
	}

	/* bad inputs: exit 1, the file named */
	const char *empty = cli_path("empty");
	REQUIRE(mkdir(empty, 0700) == 0);
	CHECK_EQ(cli_run(CLI("show", (char *)empty), &out, &err), 1);
	CHECK(cli_contains(err, empty) && cli_contains(err, "no logs"));
	free(out);
	free(err);
	const char *junk = cli_path("junk");
	REQUIRE(mkdir(junk, 0700) == 0);
	char jp[600];
	snprintf(jp, sizeof jp, "%s/w-1.ptlog", junk);
	copy_file(part[0], jp);
	snprintf(jp, sizeof jp, "%s/w-2.ptlog", junk);
	FILE *f = fopen(jp, "w");
	REQUIRE(f);
	for (int i = 0; i < 100; i++)
		fputs("this is not a log at all\n", f);
	fclose(f);
	CHECK_EQ(cli_run(CLI("stats", (char *)junk), &out, &err), 1);
	CHECK(cli_contains(err, "w-2.ptlog") && cli_contains(err, "not a posixtrace log"));
	free(out);
	free(err);
	REQUIRE(unlink(jp) == 0);
	REQUIRE(mkfifo(jp, 0600) == 0); /* not a file: refused, without waiting for a writer */
	CHECK_EQ(cli_run(CLI("show", (char *)junk), &out, &err), 1);
	CHECK(cli_contains(err, "w-2.ptlog") && cli_contains(err, "not a regular file"));
	free(out);
	free(err);
	REQUIRE(unlink(jp) == 0);
	REQUIRE(symlink("/nonexistent/w-2.ptlog", jp) == 0); /* a part that cannot be opened */
	CHECK_EQ(cli_run(CLI("info", (char *)junk), &out, &err), 1);
	CHECK(cli_contains(err, "w-2.ptlog") && cli_contains(err, "No such file"));
	free(out);
	free(err);
	CHECK_EQ(cli_run(CLI("export", "-f", "chrome", part[0], "/nonexistent/x.ptlog", "-o",
	                     (char *)cli_path("x.json")), &out, &err), 1);
	CHECK(cli_contains(err, "/nonexistent/x.ptlog"));
	free(out);
	free(err);

	/* a damaged middle part: said, the others read whole, the exit
	 * status that part alone gets */
	const char *dmg = cli_path("damaged");
	REQUIRE(mkdir(dmg, 0700) == 0);
	for (int k = 0; k < NALL; k++) {
		char to[600];
		snprintf(to, sizeof to, "%s/w-%d.ptlog", dmg, k + 1);
		copy_file(part[k], to);
		if (k == 1) { /* bytes in its first events block */
			int fd = open(to, O_RDWR);
			REQUIRE(fd >= 0);
			REQUIRE(pwrite(fd, "\xde\xad\xbe\xef\xde\xad\xbe\xef", 8, 600) == 8);
			close(fd);
		}
	}
	char d2[600];
	snprintf(d2, sizeof d2, "%s/w-2.ptlog", dmg);
	char *alone = NULL;
	int rc_alone = cli_run(CLI("show", d2), &alone, NULL);
	CHECK_EQ(cli_run(CLI("show", (char *)dmg), &out, &err), rc_alone);
	CHECK(cli_contains(err, "w-2.ptlog") && cli_contains(err, "damaged"));
	CHECK_EQ(cli_nlines(out), total - part_n[1] + cli_nlines(alone));
	free(alone);
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	return parts_main(argc, argv, run);
}
