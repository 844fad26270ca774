/*
 * typed.h -- payloads decoded by their description (typed.c); thread
 * identities (threads.c).  What `show`, `info` and the exporters use of
 * the identities and descriptions a trace carries (src/ext.h).
 */
#ifndef POSIXTRACE_CLI_TYPED_H
#define POSIXTRACE_CLI_TYPED_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <trace.h>
#include "../src/ext.h"

/* Every entry one of ext.h's readers gives, from the first (fetch: a
 * wrapper of pt_ext_threads(), pt_ext_types()...), in an array of elem-
 * byte elements grown as needed (free it); *n how many, fewer if memory
 * ran out. */
static inline void *ext_fetch_all(trace_id_t trid, size_t elem,
                                  int (*fetch)(trace_id_t, size_t, void *, size_t, size_t *),
                                  size_t *n)
{
	char *a = NULL;
	size_t cap = 0;

	*n = 0;
	for (;;) {
		size_t got = 0;
		if (*n == cap) {
			char *na = (char *)realloc(a, (cap + 64) * elem);
			if (!na)
				break;
			a = na;
			cap += 64;
		}
		if (fetch(trid, *n, a + *n * elem, cap - *n, &got) != 0 || got == 0)
			break;
		*n += got;
	}
	return a;
}

/* ------------------------------------------------------ typed.c */
struct typemap; /* the descriptions a trace carries */
struct typemap *typemap_load(trace_id_t trid);  /* NULL: no memory */
/* The same from entries already read (a log's summary): takes e (malloc'd). */
struct typemap *typemap_from(struct pt_ext_type *e, size_t n);
void typemap_free(struct typemap *m);
size_t typemap_count(const struct typemap *m);
/* The description of id's payloads for process pid (its own latest, else
 * any process's latest), or NULL. */
const char *typemap_desc(const struct typemap *m, int32_t pid, unsigned id);

/* A field of one payload: where it is in the payload.  A string's len
 * leaves its NUL out. */
struct typed_at { struct pt_ext_field f; size_t off, len; };
/* The fields of desc in payload d (len bytes): 0, or -1 if the payload
 * does not fit (why: the reason, when why_cap). */
int typed_layout(const char *desc, const unsigned char *d, size_t len, struct typed_at *at,
                 size_t *n, char *why, size_t why_cap);
/* "id=3 cost_us=311 path=\"/tmp/x\"": 0, or -1 (payload does not fit). */
int typed_decode(char *out, size_t cap, const char *desc, const unsigned char *d, size_t len);
/* The note beside a raw payload that does not fit its description. */
void typed_misfit(char *out, size_t cap, const char *desc, const unsigned char *d, size_t len,
                  int truncated);
/* Chrome / Perfetto args members, no braces: "\"id\":3,\"cost_us\":311"
 * (a 64-bit integer beyond 2^53, a hex field, NaN and infinities as JSON
 * strings).  0, or -1 (does not fit, or cap too small). */
int typed_json_args(char *out, size_t cap, const char *desc, const unsigned char *d, size_t len);
/* CTF: the TSDL declarations of desc's fields, one a line, each after
 * indent, names prefixed with '_' (which CTF readers drop: no clash with
 * TSDL keywords).  Integers and floats aligned on their size; a string is
 * a CTF string; bytes are a u32 length "_NAME_len" and a sequence.  The
 * exporter puts them in a struct aligned on 8 bytes (align(64)), and
 * writes the bytes typed_ctf_payload() makes.  0, or -1. */
int typed_tsdl_fields(char *out, size_t cap, const char *desc, const char *indent);
/* The bytes of payload d laid out as typed_tsdl_fields() declares them,
 * from an 8-byte aligned start: padding, a NUL after a last string that
 * had none, bytes' length.  Its length, or -1 (does not fit, or cap). */
long typed_ctf_payload(unsigned char *out, size_t cap, const char *desc, const unsigned char *d,
                       size_t len);

/* ------------------------------------------------------ threads.c */
struct thrmap; /* the thread identities a trace carries */
struct thrmap *thrmap_load(trace_id_t trid);    /* NULL: no memory */
/* The same from entries already read (a log's summary): takes e (malloc'd). */
struct thrmap *thrmap_from(struct pt_ext_thread *e, size_t n);
void thrmap_free(struct thrmap *m);
size_t thrmap_count(const struct thrmap *m);
/* The identity of writer (pid, thread) at time ts, or NULL. */
const struct pt_ext_thread *thrmap_find(const struct thrmap *m, int32_t pid, uint64_t thread,
                                        uint64_t ts);
/* The latest identity of t's kernel thread (its name after any rename):
 * the same (pid, pthread_t, TID).  t from thrmap_find(). */
const struct pt_ext_thread *thrmap_latest(const struct thrmap *m, const struct pt_ext_thread *t);
/* The kernel TID of writer (pid, thread) at ts, else idx (its number in
 * its process): the tid of the Chrome export's rows. */
int64_t thrmap_tid(const struct thrmap *m, int32_t pid, uint64_t thread, uint64_t ts, unsigned idx);
/* "PID/TID NAME", or "PID/IDX" (idx: the thread's number in its process)
 * when the trace does not say. */
void thrmap_label(const struct thrmap *m, char *buf, size_t cap, int32_t pid, uint64_t thread,
                  uint64_t ts, unsigned idx);
/* Every identity writer (pid, thread) had: "5678 main, worker-3; 5690 w". */
void thrmap_all(const struct thrmap *m, char *buf, size_t cap, int32_t pid, uint64_t thread);

#endif
