/*
 * objstore.c -- entries of the map of loaded code kept in the room they
 * need (objstore.h).  An entry: its header (struct rec: the fixed fields
 * of struct pt_ext_obj and the path's length), its build-id's bytes, its
 * path's bytes (no NUL), padded to a multiple of 8.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "objstore.h"

struct rec {
	uint64_t ts, base, lo, hi;
	int32_t pid;
	uint16_t kind;
	uint8_t bid_len, flags;
	uint16_t plen;
	uint16_t pad[3];
};

static size_t path_len(const struct pt_ext_obj *o)
{
	const char *z = memchr(o->path, 0, sizeof o->path);
	return z ? (size_t)(z - o->path) : sizeof o->path - 1;
}

int pt_objstore_add(struct pt_objstore *st, const struct pt_ext_obj *o)
{
	unsigned bl = o->bid_len <= PT_EXT_OBJ_BID_MAX ? o->bid_len : PT_EXT_OBJ_BID_MAX;
	size_t pl = path_len(o), need = (sizeof(struct rec) + bl + pl + 7) & ~(size_t)7;

	if (st->n == st->acap) {
		size_t ncap = st->acap ? 2 * st->acap : 64;
		size_t *na = realloc(st->at, ncap * sizeof *na);
		if (!na)
			return ENOMEM;
		st->at = na, st->acap = ncap;
	}
	if (st->len + need > st->cap) {
		size_t ncap = st->cap ? 2 * st->cap : 4096;
		while (ncap < st->len + need)
			ncap *= 2;
		unsigned char *nb = realloc(st->b, ncap);
		if (!nb)
			return ENOMEM;
		st->b = nb, st->cap = ncap;
	}
	struct rec r = { o->ts, o->base, o->lo, o->hi, o->pid, o->kind, (uint8_t)bl, o->flags,
	                 (uint16_t)pl, { 0, 0, 0 } };
	unsigned char *p = st->b + st->len;
	memcpy(p, &r, sizeof r);
	memcpy(p + sizeof r, o->bid, bl);
	memcpy(p + sizeof r + bl, o->path, pl);
	memset(p + sizeof r + bl + pl, 0, need - sizeof r - bl - pl);
	st->at[st->n++] = st->len;
	st->len += need;
	return 0;
}

void pt_objstore_get(const struct pt_objstore *st, size_t i, struct pt_ext_obj *o)
{
	struct rec r;
	const unsigned char *p = st->b + st->at[i];

	memcpy(&r, p, sizeof r);
	memset(o, 0, sizeof *o);
	o->ts = r.ts, o->base = r.base, o->lo = r.lo, o->hi = r.hi;
	o->pid = r.pid, o->kind = r.kind, o->bid_len = r.bid_len, o->flags = r.flags;
	memcpy(o->bid, p + sizeof r, r.bid_len);
	memcpy(o->path, p + sizeof r + r.bid_len, r.plen);
}

unsigned pt_objstore_kind(const struct pt_objstore *st, size_t i)
{
	struct rec r;

	memcpy(&r, st->b + st->at[i], sizeof r);
	return r.kind;
}

int pt_objstore_same(const struct pt_objstore *st, size_t i, const struct pt_ext_obj *o)
{
	struct rec r;
	const unsigned char *p = st->b + st->at[i];

	memcpy(&r, p, sizeof r);
	return r.ts == o->ts && r.base == o->base && r.lo == o->lo && r.hi == o->hi &&
	       r.pid == o->pid && r.kind == o->kind && r.bid_len == o->bid_len &&
	       r.flags == o->flags && r.plen == path_len(o) &&
	       !memcmp(p + sizeof r, o->bid, r.bid_len) &&
	       !memcmp(p + sizeof r + r.bid_len, o->path, r.plen);
}

void pt_objstore_free(struct pt_objstore *st)
{
	free(st->b);
	free(st->at);
	memset(st, 0, sizeof *st);
}
