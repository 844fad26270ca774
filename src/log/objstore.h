/*
 * objstore.h -- entries of the map of loaded code kept in the room they
 * need: their fixed fields, then only the bytes of their build-id and path
 * (struct pt_ext_obj, the form they are handed out in, is 504 bytes; a
 * forked child's three entries -- FORK, THREAD, PROC -- need about 56
 * each).  What a log reader keeps of a log's map (struct pt_logr) and what
 * a log's summary gives (struct pt_log_summary): a service that forked for
 * days has hundreds of thousands of them.
 */
#ifndef POSIXTRACE_OBJSTORE_H
#define POSIXTRACE_OBJSTORE_H

#include <stddef.h>
#include <stdint.h>
#include "../shm/mapent.h"

struct pt_objstore {
	unsigned char *b;  /* the entries back to back, each at a multiple of 8 */
	size_t len, cap;
	size_t *at;        /* where entry i begins in b */
	size_t n, acap;
};

/* Entry o at the end: 0, or ENOMEM (the store as it was). */
int pt_objstore_add(struct pt_objstore *st, const struct pt_ext_obj *o);
/* Entry i (< st->n) as a struct pt_ext_obj: every byte set (the path's
 * after its NUL are 0). */
void pt_objstore_get(const struct pt_objstore *st, size_t i, struct pt_ext_obj *o);
unsigned pt_objstore_kind(const struct pt_objstore *st, size_t i);
/* Whether entry i is o: its fields, its build-id's bytes and its path. */
int pt_objstore_same(const struct pt_objstore *st, size_t i, const struct pt_ext_obj *o);
void pt_objstore_free(struct pt_objstore *st);

#endif
