/*
 * fuzz_file.h -- the input of a log fuzzer as a file: one memfd for the
 * whole run, emptied and written again for each input (the log readers
 * take a descriptor; the commands and the SQL tables a path, given as
 * /proc/self/fd/N).  Aborts when the input cannot be written: a target
 * that went on would test nothing.
 */
#ifndef PT_FUZZ_FILE_H
#define PT_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The memfd named name holding data (its offset at 0); its path into
 * path (cap bytes) unless path is NULL. */
static inline int fuzz_file(const char *name, const uint8_t *data, size_t size, char *path,
                            size_t cap)
{
	static int fd = -1;

	if (fd < 0 && (fd = memfd_create(name, MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size) ||
	    lseek(fd, 0, SEEK_SET) != 0)
		abort();
	if (path)
		snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
