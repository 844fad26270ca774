/*
 * rotation.h -- a log cut into parts: the parameters and counts of a
 * stream's rotation (struct pt_ext_rotate, struct pt_ext_rotate_stats;
 * what they mean: src/ext.h, pt_ext_log_rotate) as the flusher takes and
 * keeps them (flush/rotate.c), and the byte a log being written locks.
 * Here, in log/, under the trace ids' layer, so that control.h needs no
 * ext.h; ext.h includes it.
 */
#ifndef POSIXTRACE_ROTATION_H
#define POSIXTRACE_ROTATION_H

#include <stdint.h>

struct pt_ext_rotate_stats {
	uint64_t cuts, removed, current;
	uint64_t max_over_bytes, max_over_ns, max_cut_ns, total_cut_ns, max_cut_cpu_ns;
	/* the losses the removed parts told (gone with them): the stream's
	 * (removed_lost, as each part's END block counts them) and the log's
	 * (removed_dropped: events whose writes failed or were overwritten) */
	uint64_t removed_lost, removed_dropped;
};
struct pt_ext_rotate {
	int dirfd;             /* the directory of the parts (the library dups it) */
	const char *name;      /* parts: NAME-N.ptlog */
	unsigned first;        /* N of the log given at creation (>= 1) */
	uint64_t size;         /* bytes of a part before a cut; 0: none */
	uint64_t period_ns;    /* time of a part before a cut; 0: none */
	uint64_t keep;         /* parts kept, the one being written included; 0: all */
	uint64_t keep_size;    /* bytes the finished parts kept take at most; 0: no limit */
	/* if not NULL: what the rotation did (pt_ext_log_rotate_stats()),
	 * kept up to date by the flusher until posix_trace_shutdown() returns */
	struct pt_ext_rotate_stats *stats;
};
#define PT_EXT_ROTATE_NAME_MAX 200u

/* A log being written (`record`, and the parts of a rotation) carries an
 * OFD write lock on this byte, far past any data, through the open file
 * it is written with: a reader tells a log being written from one cut
 * short. */
#define PT_EXT_LOG_WRITING_BYTE (1ll << 62)

#endif
