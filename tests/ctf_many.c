/*
 * ctf_many.c -- the CTF export of a trace of many processes (issue 54):
 * 300 children at once, each recording 200 events (its number and the
 * event's number as payload), recorded with --no-loss and exported; the
 * export writes a few streams, the thread of each event in its context
 * (pid, vtid = the kernel TID, as LTTng), not a stream per thread
 * (before: 301 stream files, and babeltrace2 read them 14 times slower
 * than one).  babeltrace2 reads back exactly the log's events: each
 * child's 200, in order, each from the pid that wrote it, vtid that pid
 * (the children are single-threaded).  Skipped without babeltrace2.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>
#include <sys/wait.h>
#include "t.h"
#include "cli_util.h"
#include "many_procs.h"

#define CHILDREN 300
#define EVENTS   200
#define MAX_STREAM_FILES 65 /* the export's bound: MAX_STREAMS, and the loss stream */

int main(int argc, char **argv)
{
	static char self_exe[4096], line[8192];
	static int got[CHILDREN], pid_of[CHILDREN];
	char *out = NULL, *err = NULL;

	if (argc == 2 && strcmp(argv[1], "fork") == 0)
		return many_procs_run(CHILDREN, EVENTS);
	T_BEGIN(120);
	const char *bt = cli_which("babeltrace2");
	if (!bt)
		T_SKIP("babeltrace2 is not installed (Debian: babeltrace2)");
	cli_setup();
	ssize_t sn = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
	REQUIRE(sn > 0);
	self_exe[sn] = 0;
	char *log = strdup(cli_path("many.ptlog")), *dir = strdup(cli_path("many.ctf"));
	int rc = cli_run(CLI("record", "--no-loss", "-o", log, "--", self_exe, "fork"), NULL, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "record: %s\n", err ? err : "");
	CHECK(cli_contains(err, "no events lost"));
	free(err);
	err = NULL;
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev);
	CHECK_EQ(cli_count(ev, n, "many-ev"), CHILDREN * EVENTS);
	CHECK_EQ(cli_run(CLI("export", "--format", "ctf", log, "-o", dir), NULL, NULL), 0);

	/* a few streams, not one per process */
	int files = 0;
	DIR *d = opendir(dir);
	REQUIRE(d != NULL);
	for (struct dirent *de; (de = readdir(d)) != NULL;)
		files += strncmp(de->d_name, "stream_", 7) == 0;
	closedir(d);
	CHECK(files >= 1 && files <= MAX_STREAM_FILES);
	if (files > MAX_STREAM_FILES)
		fprintf(stderr, "%d stream files for %d processes\n", files, CHILDREN);

	rc = cli_run((char *const[]){ (char *)bt, dir, NULL }, &out, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "babeltrace2: %s\n", err ? err : "");
	/* as many lines as the log has events (the trace's own are exported
	 * too: export without --all keeps what show shows) */
	char *shown = NULL;
	CHECK_EQ(cli_run(CLI("show", log), &shown, NULL), 0);
	CHECK_EQ(cli_nlines(out), cli_nlines(shown));
	int many = 0, bad = 0;
	for (const char *p = out ? out : ""; cli_next_line(&p, line, sizeof line) == 0;) {
		const char *q = strstr(line, " many-ev: { pid = ");
		int pid, vtid, at = 0;
		unsigned b[8];
		if (!q)
			continue;
		many++;
		if (sscanf(q, " many-ev: { pid = %d, vtid = %d, %n", &pid, &vtid, &at) != 2 || !at ||
		    !(q = strstr(q, "payload_len = 8, payload = [ ")) ||
		    sscanf(q, "payload_len = 8, payload = [ [0] = %u, [1] = %u, [2] = %u, [3] = %u, "
		              "[4] = %u, [5] = %u, [6] = %u, [7] = %u ]",
		           &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]) != 8) {
			if (bad++ < 3)
				fprintf(stderr, "unexpected babeltrace2 line: %.300s\n", line);
			continue;
		}
		int child = (int)(b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24);
		int num = (int)(b[4] | b[5] << 8 | b[6] << 16 | b[7] << 24);
		if (child < 0 || child >= CHILDREN) {
			bad++;
			continue;
		}
		if (got[child] == 0)
			pid_of[child] = pid;
		if (num != got[child] || pid != pid_of[child] || vtid != pid) {
			if (bad++ < 3)
				fprintf(stderr, "child %d: event %d (want %d) from pid %d vtid %d\n", child,
				        num, got[child], pid, vtid);
		}
		got[child]++;
	}
	CHECK_EQ(many, CHILDREN * EVENTS);
	CHECK_EQ(bad, 0);
	int whole = 0, distinct = 0;
	for (int i = 0; i < CHILDREN; i++) {
		whole += got[i] == EVENTS;
		for (int j = 0; j < i && got[i]; j++)
			if (pid_of[j] == pid_of[i])
				goto same;
		distinct++;
	same:;
	}
	CHECK_EQ(whole, CHILDREN);
	CHECK_EQ(distinct, CHILDREN);
	free(out);
	free(err);
	free(shown);
	free(ev);
	free(log);
	free(dir);
	T_END();
}
