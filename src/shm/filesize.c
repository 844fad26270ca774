/*
 * filesize.c -- growing a memfd under RLIMIT_FSIZE: an error, never a signal.
 *
 * The kernel answers a file grown past the caller's RLIMIT_FSIZE with
 * EFBIG and SIGXFSZ, whose default action ends the process -- and memfds
 * count as files.  A program that only links the library, or makes a
 * stream, must run under any limit it would run under without it: so the
 * library grows its memfds with SIGXFSZ held in the calling thread, and
 * takes back a SIGXFSZ that its own call raised (the kernel sends it to
 * the thread that made the call) before the mask is restored.  A SIGXFSZ
 * already pending before the call is the program's and stays.
 *
 * Async-signal-safe (system calls only): a forked child of a threaded
 * program grows its control memfd here (ctlseg.c).
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "shm.h"

void pt_fsz_hold(struct pt_fsz *g)
{
	sigset_t xfsz, pend;

	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	g->held = pthread_sigmask(SIG_BLOCK, &xfsz, &g->old) == 0;
	g->pending = sigpending(&pend) != 0 || sigismember(&pend, SIGXFSZ);
}

void pt_fsz_release(struct pt_fsz *g)
{
	int e = errno;
	sigset_t xfsz, pend;

	if (!g->held)
		return;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	if (!g->pending && sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ)) {
		struct timespec zero = { 0, 0 };
		/* (the raw call: sigtimedwait is not in the async-signal-safe list) */
		(void)syscall(SYS_rt_sigtimedwait, &xfsz, NULL, &zero, _NSIG / 8);
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	errno = e;
}

int pt_fsz_truncate(int fd, uint64_t size)
{
	struct pt_fsz g;

	pt_fsz_hold(&g);
	int rc = ftruncate(fd, (off_t)size);
	pt_fsz_release(&g);
	return rc;
}

int pt_fsz_allocate(int fd, uint64_t off, uint64_t len)
{
	struct pt_fsz g;

	pt_fsz_hold(&g);
	int rc = posix_fallocate(fd, (off_t)off, (off_t)len);
	pt_fsz_release(&g);
	return rc;
}
