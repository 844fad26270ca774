/*
 * fdown.c -- the library's own descriptors, known again by their file.
 *
 * A program may close descriptors it did not open (close_range(3, ~0U),
 * a loop over /proc/self/fd before exec, a daemon closing everything),
 * and then open files of its own, which get those numbers.  The library
 * must then not close, or change the flags of, a descriptor by its number
 * alone: it would close the program's file.  So what it closes or hands
 * on at exec it first recognises by device and inode.
 * Async-signal-safe: fstat and close.
 */
#include <sys/stat.h>
#include <unistd.h>
#include "shm.h"

void pt_fdid_of(int fd, struct pt_fdid *id)
{
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0)
		*id = (struct pt_fdid){ (uint64_t)st.st_dev, (uint64_t)st.st_ino };
	else
		*id = (struct pt_fdid){ 0, 0 };
}

int pt_fd_is(int fd, const struct pt_fdid *id)
{
	struct pt_fdid now;

	if (fd < 0 || (!id->dev && !id->ino))
		return 0;
	pt_fdid_of(fd, &now);
	return now.dev == id->dev && now.ino == id->ino;
}

void pt_close_own(int fd, const struct pt_fdid *id)
{
	if (pt_fd_is(fd, id))
		close(fd);
}
