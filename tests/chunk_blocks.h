/*
 * chunk_blocks.h -- a log's blocks walked by their headers (offset 256
 * on, each padded to 8 bytes), for the tests of CHUNK blocks (log_chunk,
 * cli_rotate_chunk): how many records CHUNK blocks (type 5) and events
 * blocks (type 1) hold, and where the first and last CHUNK block lie.
 */
#ifndef POSIXTRACE_TEST_CHUNK_BLOCKS_H
#define POSIXTRACE_TEST_CHUNK_BLOCKS_H

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "t.h"

struct blocks {
	uint64_t chunk_rec, other_rec, n_chunk;
	uint64_t first_off, first_len, first_nrec, last_off, last_len;
};

/* The blocks of the log at p added into b (the first and last CHUNK
 * block: of all the walks into b); 1 if every header from the first
 * block on is one and they end where the file does, else 0. */
static inline int chunk_blocks(const char *p, struct blocks *b)
{
	unsigned char h[56];
	int fd = open(p, O_RDONLY);
	REQUIRE(fd >= 0);
	uint64_t size = (uint64_t)lseek(fd, 0, SEEK_END), off = 256;
	int ok = 1;

	while (off + sizeof h <= size) {
		REQUIRE(pread(fd, h, sizeof h, (off_t)off) == (ssize_t)sizeof h);
		uint16_t type;
		uint32_t len, nrec;
		memcpy(&type, h + 4, 2);
		memcpy(&len, h + 8, 4);
		memcpy(&nrec, h + 12, 4);
		if (memcmp(h, "PTLB", 4) || len < 56) {
			ok = 0;
			break;
		}
		if (type == 5) {
			if (!b->n_chunk++)
				b->first_off = off, b->first_len = len, b->first_nrec = nrec;
			b->last_off = off, b->last_len = len;
			b->chunk_rec += nrec;
		} else if (type == 1) {
			b->other_rec += nrec;
		}
		off += (len + 7u) & ~7u;
	}
	close(fd);
	return ok && off == size;
}

#endif
