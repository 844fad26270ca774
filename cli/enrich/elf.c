/*
 * elf.c -- the two facts about an ELF file the command needs without any
 * library: its GNU build-id (from a PT_NOTE segment) and the load bias of
 * a mapping of it (from the PT_LOAD segment the mapping's offset holds).
 * 32- and 64-bit files of the host's byte order.
 *
 * The paths come from a trace, which the traced process wrote: only a
 * regular file is opened, and without blocking, so a FIFO, a device or a
 * socket put at a path a trace names cannot stall or steer the command.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "enrich.h"

struct phdr { uint32_t type; uint64_t off, vaddr, filesz, align; };

/* path for reading if it is a regular file, else -1: looked at before it
 * is opened (no open of a device, which can act on open), opened with
 * O_NONBLOCK (a FIFO swapped in meanwhile does not block) and checked
 * again to be the same regular file. */
int elf_open(const char *path)
{
	struct stat a, b;
	int fd;

	if (stat(path, &a) != 0 || !S_ISREG(a.st_mode))
		return -1;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &b) != 0 || !S_ISREG(b.st_mode) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Program headers of path; returns the count (at most max), -1 if not ELF. */
static int read_phdrs(int fd, struct phdr *ph, int max)
{
	unsigned char id[EI_NIDENT];
	int n = 0;

	if (pread(fd, id, sizeof id, 0) != (ssize_t)sizeof id || memcmp(id, ELFMAG, SELFMAG))
		return -1;
	if (id[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
		    eh.e_phentsize != sizeof(Elf64_Phdr))
			return -1;
		for (int i = 0; i < eh.e_phnum && n < max; i++) {
			Elf64_Phdr p;
			if (pread(fd, &p, sizeof p, (off_t)(eh.e_phoff + (uint64_t)i * sizeof p)) !=
			    (ssize_t)sizeof p)
				return -1;
			ph[n++] = (struct phdr){ p.p_type, p.p_offset, p.p_vaddr, p.p_filesz, p.p_align };
		}
	} else if (id[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;
		if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
		    eh.e_phentsize != sizeof(Elf32_Phdr))
			return -1;
		for (int i = 0; i < eh.e_phnum && n < max; i++) {
			Elf32_Phdr p;
			if (pread(fd, &p, sizeof p, (off_t)(eh.e_phoff + (uint64_t)i * sizeof p)) !=
			    (ssize_t)sizeof p)
				return -1;
			ph[n++] = (struct phdr){ p.p_type, p.p_offset, p.p_vaddr, p.p_filesz, p.p_align };
		}
	} else {
		return -1;
	}
	return n;
}

/* The build-id of path as lowercase hex.  0 if found. */
int elf_build_id(const char *path, char *hex, size_t cap)
{
	struct phdr ph[64];
	int fd = elf_open(path), n, found = -1;

	if (fd < 0)
		return -1;
	n = read_phdrs(fd, ph, 64);
	for (int i = 0; i < n && found; i++) {
		if (ph[i].type != PT_NOTE || ph[i].filesz > 65536)
			continue;
		unsigned char *b = malloc(ph[i].filesz);
		if (!b || pread(fd, b, ph[i].filesz, (off_t)ph[i].off) != (ssize_t)ph[i].filesz) {
			free(b);
			continue;
		}
		size_t align = ph[i].align == 8 ? 8 : 4;
		for (size_t o = 0; o + 12 <= ph[i].filesz;) {
			uint32_t nsz, dsz, type;
			memcpy(&nsz, b + o, 4);
			memcpy(&dsz, b + o + 4, 4);
			memcpy(&type, b + o + 8, 4);
			size_t name = o + 12, desc = name + ((nsz + align - 1) & ~(align - 1));
			if (nsz > ph[i].filesz || dsz > ph[i].filesz || desc + dsz > ph[i].filesz)
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(b + name, "GNU", 4) &&
			    dsz > 0 && dsz * 2 < cap) {
				for (uint32_t k = 0; k < dsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", b[desc + k]);
				found = 0;
				break;
			}
			o = desc + ((dsz + align - 1) & ~(align - 1));
		}
		free(b);
	}
	close(fd);
	return found;
}

/* A mapping of path at map_start holding file offset map_off: the bias to
 * add to the file's virtual addresses (0 for a fixed-address executable). */
int elf_load_bias(const char *path, uint64_t map_start, uint64_t map_off, uint64_t *bias)
{
	struct phdr ph[64];
	int fd = elf_open(path), n;
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (fd < 0)
		return -1;
	n = read_phdrs(fd, ph, 64);
	close(fd);
	for (int i = 0; i < n; i++) {
		if (ph[i].type != PT_LOAD)
			continue;
		uint64_t o = ph[i].off & ~(page - 1);
		if (o == map_off || (map_off >= o && map_off < ph[i].off + ph[i].filesz)) {
			*bias = map_start - map_off - ((ph[i].vaddr & ~(page - 1)) - o);
			return 0;
		}
	}
	return -1;
}
