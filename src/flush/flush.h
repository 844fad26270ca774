/*
 * flush.h -- the controller's writers into a stream it made: a stream's
 * log writer, the flusher (flusher.c: its thread; flushrun.c: its fast
 * path; rotate.c: a log cut into parts), and a trace id's own writer of
 * system events (sysevent.c: START, STOP, FILTER, and the flusher's
 * FLUSH_START, FLUSH_STOP).  Above reader/ (what it takes from the
 * stream, and the trace id's lock), log/ (what it writes) and producer/
 * (how a record is written); under control/, which starts and stops it.
 */
#ifndef POSIXTRACE_FLUSH_H
#define POSIXTRACE_FLUSH_H

#include "../log/log.h"
#include "../log/rotation.h"
#include "../producer/producer.h"
#include "../reader/lock.h"
#include "../reader/reader.h"

/* ------------------------------------- system events (sysevent.c) */
/* Record a system event (START, STOP, FILTER) into a stream through the
 * trace id's own writer.  wait: if the stream has no room, record nothing
 * and count nothing, and return -1 (the flusher then makes room and tries
 * again); else 0. */
int pt_record_system(struct pt_stream *t, trace_event_id_t id, const void *data, size_t len,
                     void *addr, int wait);

/* ------------------------------------ a stream's log (flusher.c, flushrun.c) */
int pt_flusher_start(struct pt_stream *t, int fd);
/* posix_trace_get_status() of a stream, t locked (the flusher's part too) */
void pt_status_locked(struct pt_stream *t, struct posix_trace_status_info *si);
/* final flush (with stop: a STOP event first, from addr), log finished;
 * the first error */
int pt_flusher_stop(struct pt_stream *t, int stop, void *addr);
int pt_flusher_claim(struct pt_stream *t); /* locked: 0 for the first shutdown, else EINVAL */
int pt_flusher_request(struct pt_stream *t); /* posix_trace_flush */
void pt_flusher_clear(struct pt_stream *t);  /* posix_trace_clear, t locked */
void pt_flusher_status(struct pt_stream *t, struct posix_trace_status_info *si);
void pt_flusher_forget(struct pt_stream *t); /* fork child: not ours */
/* copy a run straight into the log's block; the events copied (0: none,
 * use pt_read_next).  *full: it stopped because the block has no more
 * room (write it out).  *caught: it stopped because every writer it read
 * was at the end of what it had committed, in a chunk still open. */
unsigned pt_flush_run(struct pt_stream *t, struct pt_logw *w, const uint64_t *named, int *full,
                      int *caught);

/* ---------------------------------- a log cut into parts (rotate.c) */
struct pt_rotate;
int pt_rotate_new(const struct pt_ext_rotate *in, struct pt_rotate **out);
void pt_rotate_free(struct pt_rotate *r);
int pt_rotate_due(struct pt_rotate *r, const struct pt_logw *w); /* at a block boundary */
int pt_rotate_ready(struct pt_rotate *r, int caught_up); /* a cut due: 1, now */
int pt_rotate_closing(const struct pt_rotate *r); /* ... waits: write in time order */
uint64_t pt_rotate_size(const struct pt_rotate *r); /* bytes a part holds before its cut; 0: none */
int pt_rotate_open(struct pt_rotate *r, int *fd, unsigned *n);  /* the next part */
void pt_rotate_abandon(struct pt_rotate *r, int fd, unsigned n); /* ... not begun */
void pt_rotate_begin(struct pt_rotate *r);                       /* a cut begins */
void pt_rotate_switched(struct pt_rotate *r, uint64_t bytes, uint64_t lost, uint64_t dropped,
                        int fd, unsigned n);
void pt_rotate_status(struct pt_stream *t, struct posix_trace_status_info *si); /* t locked */
void pt_rotate_stats(struct pt_rotate *r, struct pt_ext_rotate_stats *out);
void pt_rotate_forget(struct pt_rotate *r); /* fork child */
/* flusher.c: rotate t's log (t locked); its statistics */
int pt_flusher_rotate(struct pt_stream *t, const struct pt_ext_rotate *in);
int pt_flusher_rotate_stats(struct pt_stream *t, struct pt_ext_rotate_stats *out);
#endif
