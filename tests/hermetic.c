/*
 * hermetic.c -- make check does not depend on the machine it runs on.
 *
 *  1. The tests of a machine-wide resource pass while another process
 *     holds streams beside them (as a `posixtrace record` or another
 *     make check would): a child holds 3 streams in this test's network
 *     namespace (one of its own, ns_util.h, so that this test is
 *     hermetic too), and tests/sysmax (TRACE_SYS_MAX: every stream of the
 *     namespace counted) and tests/stream_api run beside it and pass.
 *     sysmax used to find 125 of its 128 streams and fail.
 *  2. A test that makes no check fails (tests/t.h): T_END() in a child
 *     that made none exits 1; with one passing check, 0.
 */
#include <trace.h>
#include "t.h"
#include "ns_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif

static int run(const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/%s", PT_BUILD_DIR, name);
	if (access(path, X_OK) != 0) {
		fprintf(stderr, "%s: not built\n", path);
		return -1;
	}
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0) {
		execl(path, name, (char *)NULL);
		_exit(127);
	}
	int rc = t_wait_for(p, 120000);
	if (rc != 0)
		fprintf(stderr, "%s beside another process's streams: exit %d\n", name, rc);
	return rc;
}

/* T_END in a child that made `checks` passing checks: its exit status */
static int end_with(int checks)
{
	fflush(NULL);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0) {
		t_checks = t_failures = 0;
		for (int i = 0; i < checks; i++)
			CHECK(1);
		T_END();
	}
	return t_wait_for(p, 10000);
}

int main(void)
{
	int hold[2], ready[2];
	char b;

	ns_private();
	T_BEGIN(300);

	CHECK_EQ(end_with(0), 1);
	CHECK_EQ(end_with(1), 0);

	REQUIRE(pipe(hold) == 0 && pipe(ready) == 0);
	pid_t holder = fork();
	REQUIRE(holder >= 0);
	if (holder == 0) {
		trace_id_t t[3];
		int made = 0;
		alarm(290);
		close(hold[1]);
		close(ready[0]);
		for (int i = 0; i < 3; i++)
			made += posix_trace_create(0, NULL, &t[i]) == 0;
		if (write(ready[1], &made, sizeof made) != sizeof made)
			_exit(1);
		while (read(hold[0], &b, 1) > 0)
			;
		_exit(0);
	}
	close(hold[0]);
	close(ready[1]);
	int made = 0;
	REQUIRE(read(ready[0], &made, sizeof made) == sizeof made);
	CHECK_EQ(made, 3);
	CHECK_EQ(ns_count_names("posixtrace/stream/"), 3);

	CHECK_EQ(run("sysmax"), 0);
	CHECK_EQ(run("stream_api"), 0);

	close(hold[1]);
	CHECK_EQ(t_wait_for(holder, 10000), 0);
	close(ready[0]);
	T_END();
}
