/*
 * create.c -- posix_trace_create and posix_trace_create_withlog: the
 * attributes checked and resolved (the stream-full policy a stream gets by
 * default, the no-loss extension), then control/newstream.c makes the stream;
 * and at exit, the streams a program left running are shut down.
 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "api.h"

/* A process that exits or execs without shutting its streams down: they
 * are shut down "as if an explicit call were made to the
 * posix_trace_shutdown() function" -- at exit by this destructor (also
 * when a flusher ends the process for a program whose threads have all
 * ended, flush/flusher.c), at exec by the exec functions of the library
 * (producer/exec.c).  The streams of a parent that forked this process are
 * the parent's, and so are those of a child made by clone().  (A kill is
 * seen by the traced side through the liveness lock.) */
static void streams_shutdown(void)
{
	/* a child made by clone() without the C library's fork handlers
	 * (pt_pid is then its parent's): the parent's streams are not its own,
	 * and their flushers are not in this process */
	if ((pid_t)syscall(SYS_getpid) != pt_pid)
		return;
	for (unsigned i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_trid *t = pt_trid_at(i);
		if (t->in_use && !atomic_load(&t->dead) && t->fork_gen == pt_fork_gen &&
		    t->s.kind == PT_KIND_STREAM)
			posix_trace_shutdown(pt_trid_id(t));
	}
}

__attribute__((destructor)) static void stream_fini(void)
{
	streams_shutdown();
}

/* (with a priority: a program linked with the static library runs its
 * own default-priority constructors first, and one may make a stream
 * and exec) */
__attribute__((constructor(102))) static void stream_init(void)
{
	pt_exec_shutdown = streams_shutdown;
}

static int create(pid_t pid, const trace_attr_t *attr, int logfd, trace_id_t *trid)
{
	trace_attr_t def;
	trace_id_t undo;
	int rc;

	if (!trid)
		return EINVAL;
	if (!attr) {
		posix_trace_attr_init(&def);
		attr = &def;
	} else if (!pt_attr_valid(attr)) {
		return EINVAL;
	}
	int policy = attr->__stream_policy ? attr->__stream_policy
	                                   : logfd >= 0 ? POSIX_TRACE_FLUSH : POSIX_TRACE_LOOP;
	if (policy == POSIX_TRACE_FLUSH && logfd < 0)
		return EINVAL;
	/* no-loss mode waits for a flusher: only a FLUSH stream has one */
	uint32_t noloss = pt_attr_noloss(attr);
	if (noloss == UINT32_MAX || (noloss && policy != POSIX_TRACE_FLUSH))
		return EINVAL;
	rc = pt_stream_create(pid, attr, policy, noloss, logfd, trid, &undo);
	if (undo)
		posix_trace_shutdown(undo);
	return rc;
}

PT_API int posix_trace_create(pid_t pid, const trace_attr_t *restrict attr,
                              trace_id_t *restrict trid)
{
	return create(pid, attr, -1, trid);
}

PT_API int posix_trace_create_withlog(pid_t pid, const trace_attr_t *restrict attr, int fd,
                                      trace_id_t *restrict trid)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
		return EBADF;
	return create(pid, attr, fd, trid);
}
