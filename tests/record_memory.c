/*
 * record_memory.c -- the recorder's memory with a program that forks
 * children for ever (issue 54, item 4): `posixtrace record` of this
 * program ("fork N"), which forks N children one after another, each
 * recording 10 events, and samples the recorder's VmRSS (its parent's)
 * after its 500th child and after the last, each once the recorder is
 * done with them (the same VmRSS three times 50 ms apart).  Each child
 * adds five entries to the map of loaded code (its BEGIN and its four
 * objects); the recorder kept each (504 bytes) for as long as it ran,
 * 4.2 KB a child in all.  It now drops those of processes gone once its
 * log has them: what remains per child is what the log's summary must
 * list (each entry of the map and each writer, about 0.8 KB a child):
 * below 2 KB a child, counted over the last 1 500 children.  Every event
 * is in the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <time.h>
#include <unistd.h>
#include "t.h"
#include "cli_util.h"
#include "fork_util.h"
#include "helpers.h"

#define CHILDREN 2000
#define EARLY    500
#define EVENTS   10


static int forker(const char *out)
{
	trace_event_id_t ev;
	pid_t rec = getppid();
	long early = -1;

	if (posix_trace_eventid_open("mem-ev", &ev) != 0)
		return 2;
	for (int i = 0; i < CHILDREN; i++) {
		if (fu_child(ev, EVENTS, sizeof(int32_t)) < 0)
			return 3;
		if (i == EARLY - 1)
			early = t_settled_kb(rec, "VmRSS");
	}
	long late = t_settled_kb(rec, "VmRSS");
	FILE *f = fopen(out, "w");
	if (!f)
		return 5;
	fprintf(f, "%ld %ld\n", early, late);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	static char self_exe[4096];
	char *err = NULL;

	if (argc == 3 && strcmp(argv[1], "fork") == 0)
		return forker(argv[2]);
	T_BEGIN(120);
	cli_setup();
	ssize_t sn = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
	REQUIRE(sn > 0);
	self_exe[sn] = 0;
	char *log = strdup(cli_path("mem.ptlog")), *sizes = strdup(cli_path("mem.rss"));
	int rc = cli_run(CLI("record", "-o", log, "--", self_exe, "fork", sizes), NULL, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "record: %s\n", err ? err : "");
	CHECK(cli_contains(err, "no events lost"));
	struct cli_ev *ev;
	int n = cli_read_log(log, &ev);
	CHECK_EQ(cli_count(ev, n, "mem-ev"), CHILDREN * EVENTS);

	long early = -1, late = -1;
	char *s = cli_slurp(sizes);
	REQUIRE(s && sscanf(s, "%ld %ld", &early, &late) == 2);
	CHECK(early > 0 && late > 0);
	double per_child = (double)(late - early) * 1024 / (CHILDREN - EARLY);
	fprintf(stderr, "recorder VmRSS %ld kB after %d children, %ld kB after %d: %.0f bytes a child\n",
	        early, EARLY, late, CHILDREN, per_child);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* a sanitizer's allocator keeps what is freed (AddressSanitizer's
	 * quarantine: 23 KB a child here), so the recorder's RSS says nothing
	 * of what it keeps: the events are checked, not the memory */
	printf("(a sanitized build: the recorder's memory is not checked)\n");
#else
	CHECK(per_child < 2048);
#endif
	free(s);
	free(ev);
	free(err);
	free(log);
	free(sizes);
	T_END();
}
