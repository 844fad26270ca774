/*
 * protobuf.c -- the protocol buffers encoder's strings and bytes, and the
 * back-patched length of a nested message (write.h has its varints and
 * the buffer's growth, inline).
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

/* pb_close() of a message of 128 bytes or more, or after an error */
void pb_close_long(struct pb *b, size_t mark)
{
	if (b->oom || mark == 0 || mark > b->n)
		return;
	size_t len = b->n - mark, k = pb_varint_size(len);
	if (k > 1) { /* the length needs more than the byte left for it */
		if (pb_grow(b, k - 1))
			return;
		memmove(b->p + mark + k - 1, b->p + mark, len);
		b->n += k - 1;
	}
	pb_put_varint(b->p + mark - 1, len);
}
