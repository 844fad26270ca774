/*
 * extjoin.c -- what ext.h gives the posixtrace command for a process tree:
 * joining a stream to another process (control/tree.c), apart from ext.c so
 * that reading a log needs nothing of the traced side.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "api.h"

int pt_ext_join(trace_id_t trid, char *buf, size_t cap)
{
	struct pt_trid *t;
	struct stat st;
	int rc = 0, n;

	if (pt_trid_lock(trid, &t) != 0)
		return EINVAL;
	if (t->s.fd < 0 || fstat(t->s.fd, &st) != 0 || t->s.attr.inherit != POSIX_TRACE_INHERITED) {
		pt_trid_unlock(t);
		return EINVAL;
	}
	/* a region of the target's control memfd is held alive by the lock
	 * on the slot's byte; a memfd of our own has no lock (newstream.c) */
	uint32_t byte = t->s.region_off && t->slot >= 0 ? (uint32_t)t->slot : UINT32_MAX;
	n = snprintf(buf, cap, "%d.%d.%llu.%llu.%llu.%u", (int)getpid(), t->s.fd,
	             (unsigned long long)st.st_ino, (unsigned long long)t->s.region_off,
	             (unsigned long long)t->s.map_size, byte);
	if (n < 0 || (size_t)n >= cap)
		rc = ERANGE;
	else /* and the traced process passes it on to what it starts */
		rc = pt_tree_mark(t);
	pt_trid_unlock(t);
	return rc;
}

int pt_ext_join_pid(trace_id_t trid, pid_t pid)
{
	struct pt_trid *t;
	struct stat st;
	int rc;

	if (pt_trid_lock(trid, &t) != 0)
		return EINVAL;
	rc = t->s.fd < 0 || fstat(t->s.fd, &st) != 0 ? EINVAL : pt_tree_join(t, pid, (uint64_t)st.st_ino);
	pt_trid_unlock(t);
	return rc;
}
