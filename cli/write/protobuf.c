/*
 * protobuf.c -- the protocol buffers encoder's strings and bytes (write.h
 * has its varints, the buffer's growth and the back-patched length of a
 * nested message, inline).
 */
#include <stdlib.h>
#include <string.h>
#include "write.h"

void pb_free(struct pb *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len)
{
	pb_key(b, field, PB_LEN);
	pb_varint(b, len);
	if (b->cap - b->n < len && pb_grow(b, len))
		return;
	if (len)
		memcpy(b->p + b->n, data, len);
	b->n += len;
}

void pb_str(struct pb *b, unsigned field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}
