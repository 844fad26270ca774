/*
 * cli_map_many.c -- a service that forked tens of thousands of children
 * keeps every child's identity and map in its log (issue 54: always on
 * for days).  Each forked child adds three entries to the map area (its
 * FORK, its THREAD and its PROC); a reader kept the first 65 536 of a log
 * and dropped the rest, so after about 21 800 children every event came
 * out with no thread name, no command line and its address as a number
 * (a recording of 25 000 children: the last 3 175 events).
 *
 * A log written as the recorder writes one (src/log, pt_logw_*): a
 * service (pid 5000) with its object, then KIDS children (pids 10000 on,
 * no pid reused), each forked from the service, saying its thread's name
 * ("k" and its number) and command line, and recording one event at an
 * address in the service's object.  `posixtrace show` must name every
 * child's event by its thread and place its address in the object (no
 * raw address); `info` must count the KIDS processes that recorded and
 * give the last child's command line and parent.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "helpers.h"
#include "../src/log/log.h"

#define KIDS    25000
#define SERVICE 5000
#define T0      1700000000000000000ull
#define OBJ_LO  0x400000ull
#define OBJ_HI  0x500000ull

/* (tests/helpers.c) */
#define entry(w, kind, pid, ts, base, lo, hi, path) \
	CHECK_RC(t_log_entry(w, kind, pid, ts, base, lo, hi, 0, path), 0)

static void write_log(const char *path)
{
	struct pt_logw w;
	int fd = t_log_create(path, &w, 256);
	CHECK_RC(pt_logw_name(&w, 20, "job"), 0);
	entry(&w, PT_EXT_OBJ_BEGIN, SERVICE, T0, 0, 0, 0, "");
	entry(&w, PT_EXT_OBJ_ADD, SERVICE, T0, 0, OBJ_LO, OBJ_HI, "/opt/svc/bin/service");
	entry(&w, PT_EXT_OBJ_THREAD, SERVICE, T0, 0x1000, SERVICE, 0, "service");
	entry(&w, PT_EXT_OBJ_PROC, SERVICE, T0, 0, 1, 0, "service --forever");
	for (int i = 0; i < KIDS; i++) {
		int32_t pid = 10000 + i;
		uint64_t ts = T0 + 1000000ull * (uint64_t)(i + 1);
		char s[64];
		entry(&w, PT_EXT_OBJ_FORK, pid, ts, 0, SERVICE, 0, "");
		snprintf(s, sizeof s, "k%d", i);
		entry(&w, PT_EXT_OBJ_THREAD, pid, ts, 0x7000, (uint64_t)pid, 0, s);
		snprintf(s, sizeof s, "service --kid %d", i);
		entry(&w, PT_EXT_OBJ_PROC, pid, ts, 0, SERVICE, 0, s);
		CHECK_RC(pt_logw_event(&w, ts + 1000, pid, 0x7000, OBJ_LO + 0x1234, 20, 0, &i,
		                       sizeof i), 0);
	}
	CHECK_RC(t_log_close(&w, fd), 0);
}

int main(void)
{
	T_BEGIN(300);
	cli_setup();
	const char *log = cli_path("many.ptlog");
	write_log(log);

	char *out = NULL, *err = NULL;
	char *show[] = { (char *)cli_bin, "show", (char *)log, NULL };
	CHECK_EQ(cli_run(show, &out, &err), 0);
	int jobs = 0, named = 0, placed = 0;
	for (const char *p = out; p && *p;) {
		char line[512];
		if (cli_next_line(&p, line, sizeof line) < 0)
			break;
		if (!strstr(line, " job "))
			continue;
		int pid = 0, tid = 0, k = -1;
		char name[32] = "";
		jobs++;
		if (sscanf(line, "%*s %*s %d/%d %31s", &pid, &tid, name) == 3 && tid == pid &&
		    sscanf(name, "k%d", &k) == 1 && k == pid - 10000)
			named++;
		placed += strstr(line, "@ 0x") == NULL && strstr(line, "service") != NULL;
	}
	printf("show: %d events of %d children, %d named by their thread, %d placed in the "
	       "service's object\n", jobs, KIDS, named, placed);
	CHECK_EQ(jobs, KIDS);
	CHECK_EQ(named, KIDS);
	CHECK_EQ(placed, KIDS);
	free(out), free(err);

	char *info[] = { (char *)cli_bin, "info", "--rows", "0", (char *)log, NULL }; /* (every row) */
	CHECK_EQ(cli_run(info, &out, &err), 0);
	char want[128];
	snprintf(want, sizeof want, "processes (%d)", KIDS); /* (the service recorded nothing) */
	CHECK(cli_contains(out, want));
	snprintf(want, sizeof want, "%8d  %8d", 10000 + KIDS - 1, SERVICE);
	CHECK(cli_contains(out, want));
	snprintf(want, sizeof want, "service --kid %d", KIDS - 1);
	CHECK(cli_contains(out, want));
	if (t_failures)
		fprintf(stderr, "%s", out);
	free(out), free(err);
	unlink(log);
	cli_cleanup();
	T_END();
}
