/*
 * batch.h -- a batch of a log's events for a reader that only counts
 * them, as the log reader fills it (logiter.c) and src/ext.h hands it
 * to the command (pt_ext_next_batch(), which says what each field means).
 * Here, in log/, so that log/ needs no ext.h; ext.h includes it.
 */
#ifndef POSIXTRACE_BATCH_H
#define POSIXTRACE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#define PT_EXT_BATCH 4096u
#define PT_EXT_BATCH_W 256u   /* a block's writers, at most (docs/log-format.md) */
#define PT_EXT_BEV_LOST 1u
#define PT_EXT_BEV_WORD 2u
#define PT_EXT_BEV_QWORD 4u
struct pt_ext_bwriter { int32_t pid; uint32_t pad; uint64_t thread; };
struct pt_ext_bevent { uint64_t ts; uint16_t id, w, flags, pad; int32_t word; uint32_t hi; };
struct pt_ext_batch {
	size_t n, nw;
	struct pt_ext_bwriter w[PT_EXT_BATCH_W];
	struct pt_ext_bevent ev[PT_EXT_BATCH];
};

#endif
