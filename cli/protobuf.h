/*
 * protobuf.h -- a small protocol buffers encoder (wire format only: no
 * schema, no parsing).  It writes into a growable buffer:
 *
 *   varint fields      pb_uint(b, field, v)   (uint32/64, int32/64, bool, enum)
 *   length-delimited   pb_bytes(b, field, p, n), pb_str(b, field, s)
 *   nested messages    m = pb_open(b, field); ...; pb_close(b, m)
 *
 * pb_open() leaves one byte for the message's length and pb_close() writes
 * it there; a message of 128 bytes or more, whose length takes more than
 * one byte, is moved up to make room (rare for small messages, which is
 * what a trace is made of).  Nested messages nest.
 *
 * Out of memory, the buffer stops growing, later writes are dropped and
 * b->oom is set: check it once at the end.
 */
#ifndef POSIXTRACE_PROTOBUF_H
#define POSIXTRACE_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

struct pb {
	unsigned char *p;
	size_t n, cap;
	int oom;
};

/* Room for more bytes after b->n; 0, or -1 (out of memory: b->oom set). */
int pb_grow(struct pb *b, size_t more);
void pb_free(struct pb *b);
/* A nested message's length, back-patched: mark is pb_open()'s value. */
void pb_close(struct pb *b, size_t mark);

/* The bytes varint v takes (1..10). */
static inline size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes varint v at q (room for pb_varint_size(v) bytes): the bytes it took. */
static inline size_t pb_put_varint(unsigned char *q, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		q[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	q[n++] = (unsigned char)v;
	return n;
}

static inline void pb_varint(struct pb *b, uint64_t v)
{
	if (b->cap - b->n < 10 && pb_grow(b, 10))
		return;
	b->n += pb_put_varint(b->p + b->n, v);
}

static inline void pb_key(struct pb *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field: unsigned, bool, enum, or a signed int64/int32 as its
 * two's complement (what protobuf's int64 and int32 are on the wire). */
static inline void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	pb_key(b, field, PB_VARINT);
	pb_varint(b, v);
}

static inline void pb_int(struct pb *b, unsigned field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len);
void pb_str(struct pb *b, unsigned field, const char *s);

/* Opens a nested message (or any length-delimited field written piece by
 * piece): returns the mark to give pb_close(). */
static inline size_t pb_open(struct pb *b, unsigned field)
{
	pb_key(b, field, PB_LEN);
	if (b->cap - b->n < 1 && pb_grow(b, 1))
		return b->n;
	b->p[b->n++] = 0;
	return b->n;
}

#endif
