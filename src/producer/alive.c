/*
 * alive.c -- this process's liveness lock in each stream it records into.
 *
 * A process that exits (or is killed, or execs) leaves its threads' open
 * chunks open: nothing seals them.  So that their space goes back to the
 * stream once they are read, the reader must know their writer is gone.
 * Each process holds an OFD write lock on one byte of the file the
 * segment lives in (PT_ALIVE_BYTE(key), shm/layout.h), taken through an
 * open file of its own before it takes a chunk, and stamps the key on
 * every chunk it takes (ring/pool.c).  The kernel drops the lock with
 * the last descriptor of that open file: at exit, at a kill, at exec
 * (close-on-exec).  The file is opened again through /proc/self/fd, not
 * dup'ed, so that no other process shares it; a forked child closes its
 * copy of the parent's and opens its own.  Where any of this fails the
 * key is 0 and the reader never gives those chunks back.
 *
 * The same open file holds a read lock on the first byte of the stream's
 * region for as long as the view maps it, so that a controller does not
 * put a new stream where this process could still write (control/slots.c).
 *
 * The key is the pid with a varying part above it (keys are per file,
 * and processes of other pid namespaces may record into the same one;
 * an exec'd image of the same pid had better not reuse the key of the
 * chunks its old image left).  Everything here is async-signal-safe: a
 * resync may run in a signal handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "producer.h"

#define KEY_PROBES 16u

static void drop(struct pt_view *sl)
{
	if (sl->alive_fd > 0) /* (by its file: the number may be the program's now) */
		pt_close_own(sl->alive_fd - 1, &sl->alive_id);
	sl->alive_fd = 0;
	sl->alive_key = 0;
}

/* "/proc/self/fd/N" without snprintf (not async-signal-safe). */
static void fd_path(char *p, int fd)
{
	static const char pre[] = "/proc/self/fd/";
	char d[16];
	unsigned n = 0, i = 0;

	for (; pre[i]; i++)
		p[i] = pre[i];
	do
		d[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) != 0);
	while (n)
		p[i++] = d[--n];
	p[i] = 0;
}

static void take(struct pt_view *sl)
{
	char path[40];
	uint32_t vary = (uint32_t)(pt_now() >> 4);

	drop(sl);
	if (sl->home_fd < 0 || pt_pid <= 0 || (uint32_t)pt_pid >= 1u << 22)
		return;
	fd_path(path, sl->home_fd);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0 && fd < 3) { /* never a standard stream the program closed */
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		close(fd);
		fd = hi;
	}
	if (fd < 0)
		return;
	for (unsigned i = 0; i < KEY_PROBES; i++) {
		uint32_t key = (uint32_t)pt_pid | ((vary + i) & 1023u) << 22;
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
		                    .l_start = (off_t)PT_ALIVE_BYTE(key), .l_len = 1 };
		if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
			sl->alive_fd = fd + 1;
			pt_fdid_of(fd, &sl->alive_id);
			sl->alive_key = key;
			break;
		}
	}
	if (!sl->alive_fd) {
		close(fd);
		return;
	}
	/* the region is mapped here: a controller does not place a new
	 * stream where this view could still write (control/slots.c,
	 * region_again) */
	if (sl->region_off >= PT_CTL_SIZE) {
		struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET,
		                    .l_start = (off_t)sl->region_off, .l_len = 1 };
		fcntl(fd, F_OFD_SETLK, &fl);
	}
}

/* Take this process's lock in sl's file (home_fd), dropping any it held.
 * (errno as it was: this runs inside posix_trace_event(), maybe in a
 * signal handler.) */
void pt_alive_take(struct pt_view *sl)
{
	int saved = errno;
	take(sl);
	errno = saved;
}

/* A view is unmapped: its lock goes. */
void pt_alive_drop(struct pt_view *sl)
{
	int saved = errno;
	drop(sl);
	errno = saved;
}

/* In a forked child, after its control segment is its own: the locks it
 * inherited are its parent's (closing our copies leaves them held by the
 * parent); each stream it keeps gets one of its own before any chunk. */
void pt_alive_atfork_child(void)
{
	uint32_t att = atomic_load(&pt_proc.att);
	int saved = errno;

	for (unsigned v = 0; v < PT_VIEWS; v++)
		drop(&pt_proc.view[v]);
	while (att) {
		unsigned s = (unsigned)__builtin_ctz(att);
		att &= att - 1;
		take(pt_view(s));
	}
	errno = saved;
}
