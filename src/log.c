/*
 * log.c -- trace logs (TRL).  Not implemented yet: no stream can have a
 * log, so every log function reports that its argument is not one.
 * posix_trace_create_withlog() checks its file descriptor, then fails.
 */
#include <fcntl.h>
#include "lib.h"

PT_API int posix_trace_create_withlog(pid_t pid, const trace_attr_t *restrict attr, int fd,
                                      trace_id_t *restrict trid)
{
	int fl = fcntl(fd, F_GETFL);

	(void)pid, (void)attr, (void)trid;
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
		return EBADF;
	return ENOSYS;
}

PT_API int posix_trace_flush(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	pt_trid_unlock(t);
	return EINVAL; /* not a stream with a log */
}

PT_API int posix_trace_open(int fd, trace_id_t *trid)
{
	(void)fd, (void)trid;
	return EINVAL;
}

PT_API int posix_trace_rewind(trace_id_t trid)
{
	(void)trid;
	return EINVAL;
}

PT_API int posix_trace_close(trace_id_t trid)
{
	(void)trid;
	return EINVAL;
}
