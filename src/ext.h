/*
 * ext.h -- what the library tells the posixtrace command and the tests
 * beyond the POSIX interface: how many events were lost, where the
 * standard only marks that some were (POSIX_TRACE_OVERFLOW carries no
 * data).  Not exported from libposixtrace.so: its users link the static
 * library.
 */
#ifndef POSIXTRACE_EXT_H
#define POSIXTRACE_EXT_H

#include <stdint.h>
#include <trace.h>

struct pt_ext_losses {
	/* The stream's count of lost events (all causes: overwritten in LOOP,
	 * dropped while full) as of the last POSIX_TRACE_RESUME a getnext on
	 * this id returned; resume_ok is 0 if none did, or (a log) if that
	 * RESUME did not say (logs of format version 1). */
	int resume_ok;
	uint64_t at_resume;
	/* The stream's count in all: for a stream, now; for a log, as it was
	 * when the log was finished (total_ok is 0 if the log has no such
	 * record: cut short, or version 1). */
	int total_ok;
	uint64_t total;
	/* A log only, from its END block: events lost by the log itself,
	 * overwritten (log-full policy LOOP) or not written (log full, or a
	 * failed write). */
	uint64_t log_overwritten, log_dropped;
};

/* 0, or EINVAL if trid is not a trace id of this process. */
int pt_ext_losses(trace_id_t trid, struct pt_ext_losses *out);

/* The map of loaded code (docs/design.md, "The map of loaded code"): what
 * the traced processes wrote of their loaded objects, checked.  Per pid,
 * a BEGIN entry starts a whole map (a stream reached the process, a fork,
 * an exec); ADD and DEL entries follow as objects come and go.  A LOST
 * entry says how many entries the stream could not keep (in lo). */
#define PT_EXT_OBJ_BEGIN   1u
#define PT_EXT_OBJ_ADD     2u
#define PT_EXT_OBJ_DEL     3u
#define PT_EXT_OBJ_LOST    4u
#define PT_EXT_OBJ_BID_MAX 32u
#define PT_EXT_OBJ_PATH    432u
#define PT_EXT_OBJ_TRUNC   1u  /* flags: the path was cut to fit */
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

/* Entries from index `from` on (a stream: what its processes wrote so
 * far, read now; a log: what it holds), up to cap into out; *n how many.
 * 0, or EINVAL if trid is not a trace id of this process. */
int pt_ext_objects(trace_id_t trid, size_t from, struct pt_ext_obj *out, size_t cap,
                   size_t *n);

/* A log open with posix_trace_open(): the next event read is the first
 * of the first block of the log that may hold an event stamped at or
 * after ts_ns (ns since the epoch), found through the log's block index;
 * every event before it is stamped before ts_ns, so reading on and
 * skipping events before ts_ns gives exactly those at or after it.
 * *lost_before: the stream's loss count at the last RESUME before that
 * point (0 if none), where a reader that counts each gap's losses as the
 * difference between RESUMEs starts from.  0; EINVAL: not a log. */
int pt_ext_seek(trace_id_t trid, uint64_t ts_ns, uint64_t *lost_before);

/* The summary a log carries (format 5, APPEND and UNTIL_FULL logs): what
 * its writer counted of the events it wrote, read from the end of the
 * file without reading the events (src/log/logsum.c).  Writers are in
 * the order of their first event in the log; types and names by id. */
struct pt_ext_sum_writer { int32_t pid; uint64_t thread, count, first, last; };
struct pt_ext_summary {
	trace_attr_t attr;
	struct posix_trace_status_info status; /* the END block's */
	struct pt_ext_losses losses;  /* as pt_ext_losses() gives them after the last event */
	uint64_t events, first, last; /* events, smallest and largest timestamp (ns) */
	uint64_t gaps;                /* RESUME events that carry a loss count */
	uint64_t count[__TRACE_EVENT_ID_LIMIT], tfirst[__TRACE_EVENT_ID_LIMIT],
	         tlast[__TRACE_EVENT_ID_LIMIT];
	char (*names)[TRACE_EVENT_NAME_MAX + 1]; /* by id; "" when unnamed */
	struct pt_ext_sum_writer *writers;
	size_t nwriters;
	struct pt_ext_obj *objs;      /* the map of loaded code, as pt_ext_objects() */
	size_t nobjs;
};

/* The summary of the log open for reading on fd (only pread is used).
 * 0; ENOENT: the log has none (an older format, a LOOP log, a log cut
 * short, or a summary that does not check); EINVAL: not a log; ENOMEM.
 * pt_ext_summary_free() then. */
int pt_ext_log_summary(int fd, struct pt_ext_summary **out);
void pt_ext_summary_free(struct pt_ext_summary *s);

#endif
