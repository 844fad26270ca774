/*
 * mapent.h -- an entry of the map of loaded code as the library gives it
 * out, checked (struct pt_ext_obj): what reader/ takes from a stream's
 * segment (objread.c) and log/ from a log file, and what src/ext.h hands
 * the command (pt_ext_objects(), pt_ext_threads(), pt_ext_types(),
 * pt_ext_procs()).  Here, under both, so that neither needs ext.h; ext.h
 * includes it.  The bytes in shared memory are layout.h's.
 */
#ifndef POSIXTRACE_MAPENT_H
#define POSIXTRACE_MAPENT_H

#include <stddef.h>
#include <stdint.h>
#include <trace.h>

/* The map of loaded code (docs/design.md, "The map of loaded code"): what
 * the traced processes wrote of their loaded objects, checked.  Per pid,
 * a BEGIN entry starts a whole map (a stream reached the process, a fork,
 * an exec); ADD and DEL entries follow as objects come and go.  A LOST
 * entry says how many entries the stream could not keep (in lo). */
#define PT_EXT_OBJ_BEGIN   1u
#define PT_EXT_OBJ_ADD     2u
#define PT_EXT_OBJ_DEL     3u
#define PT_EXT_OBJ_LOST    4u
/* Entries of the same area that are not objects (pt_ext_threads(),
 * pt_ext_types() give them; pt_ext_objects() leaves them out): */
#define PT_EXT_OBJ_THREAD  5u  /* base: pthread_t, lo: kernel TID, path: name */
#define PT_EXT_OBJ_TYPE    6u  /* lo: event id, path: payload description */
#define PT_EXT_OBJ_PROC    7u  /* lo: parent's pid, path: command line */
/* A map entry (pt_ext_objects() gives it): a forked child's map, pid's, is
 * its parent's (lo: the parent's pid) as it was at ts, until its next
 * BEGIN or FORK; its own ADD and DEL after it come on top. */
#define PT_EXT_OBJ_FORK    8u
#define PT_EXT_OBJ_BID_MAX 32u
#define PT_EXT_OBJ_PATH    432u
#define PT_EXT_OBJ_TRUNC   1u  /* flags: the path was cut to fit */
#define PT_EXT_OBJ_CONT    2u  /* (PROC) the same process as the entry of its pid
                                * before it (its FORK, or the image before its exec) */
struct pt_ext_obj {
	uint64_t ts;           /* ns since the epoch (CLOCK_REALTIME), like events */
	uint64_t base;         /* load bias: run-time address - address in the file */
	uint64_t lo, hi;       /* mapped range [lo, hi) */
	int32_t pid;
	uint16_t kind;
	uint8_t bid_len;       /* GNU build-id bytes in bid; 0: none */
	uint8_t flags;
	unsigned char bid[PT_EXT_OBJ_BID_MAX];
	char path[PT_EXT_OBJ_PATH]; /* NUL-terminated; "" if not known */
};

#define PT_EXT_THREAD_NAME 16u  /* a thread's name: the kernel's length, NUL included */
#define PT_EXT_TYPE_DESC 256u   /* a payload description's length, NUL included */

/* Whether an entry of kind THREAD, TYPE or PROC read from a stream or a log is
 * sound (bid_len and hi are 0 in both; the path is the name or the
 * description, pathlen bytes before its NUL). */
static inline int pt_ext_meta_ok(unsigned kind, uint64_t lo, uint64_t hi, size_t pathlen,
                                 unsigned bid_len)
{
	if (hi || bid_len)
		return 0;
	if (kind == PT_EXT_OBJ_THREAD)
		return lo > 0 && lo <= INT32_MAX && pathlen < PT_EXT_THREAD_NAME;
	if (kind == PT_EXT_OBJ_TYPE)
		return lo < __TRACE_EVENT_ID_LIMIT && pathlen > 0 && pathlen < PT_EXT_TYPE_DESC;
	if (kind == PT_EXT_OBJ_PROC)
		return lo <= INT32_MAX && pathlen < PT_EXT_OBJ_PATH;
	return 0;
}

#endif
