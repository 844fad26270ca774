/*
 * ns_util.h -- for the tests of a machine-wide resource (TRACE_SYS_MAX,
 * the per-user share of it): the streams are counted through abstract
 * Unix socket names (src/control/sysmax.c), which belong to a network
 * namespace, so a test that needs to know every stream there is runs in
 * a network namespace of its own, where nobody else's stream is: the
 * same on a quiet machine and beside a `posixtrace record` or another
 * make check.
 *
 *   ns_private()   call first in main(), before any thread, stream or
 *                  socket: moves this process (and the children it makes
 *                  after) into a new network namespace, with
 *                  unshare(CLONE_NEWNET) (root), else in a new user
 *                  namespace too, with this user's uid and gid mapped to
 *                  themselves (an unprivileged user, where the kernel lets
 *                  one make user namespaces).  Where neither is allowed it
 *                  counts the stream names others hold in this namespace:
 *                  none, the test runs here; some, it skips (exit 77)
 *                  saying how many and why it cannot run beside them.
 */
#ifndef POSIXTRACE_TEST_NS_UTIL_H
#define POSIXTRACE_TEST_NS_UTIL_H

#include <fcntl.h>
#include <sched.h>
#include "t.h"

static inline int ns_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Abstract socket names bound in this network namespace that start with
 * prefix (/proc/net/unix shows them with a leading '@'). */
static inline int ns_count_names(const char *prefix)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512], want[128];
	int n = 0;

	if (!f)
		return -1;
	snprintf(want, sizeof want, " @%s", prefix);
	while (fgets(line, sizeof line, f))
		n += strstr(line, want) != NULL;
	fclose(f);
	return n;
}

static inline void ns_private(void)
{
	char why[256];

	if (unshare(CLONE_NEWNET) == 0)
		return;
	int e1 = errno;
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
		char map[64];
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		REQUIRE(ns_write("/proc/self/uid_map", map) == 0);
		if (ns_write("/proc/self/setgroups", "deny\n") != 0 && errno != ENOENT)
			REQUIRE(!"cannot write /proc/self/setgroups");
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
		REQUIRE(ns_write("/proc/self/gid_map", map) == 0);
		return;
	}
	int e2 = errno, others = ns_count_names("posixtrace/stream/");
	if (others == 0)
		return; /* alone in this namespace: the counts are this test's own */
	snprintf(why, sizeof why, "no network namespace of its own (unshare: %s; with a user "
	         "namespace: %s) and %d posixtrace streams of other processes share this one: "
	         "its counts of every stream would include theirs",
	         strerror(e1), strerror(e2), others);
	T_SKIP(why);
}

#endif
