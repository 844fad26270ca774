/*
 * perfetto.h -- a writer of Perfetto's native trace format (a protobuf
 * `perfetto.protos.Trace`, the .pftrace files ui.perfetto.dev and
 * trace_processor open), fed one call at a time: it keeps no events, only
 * what it knows of each process, thread, event type and symbol.
 *
 *   struct pf *w = pf_open(f);
 *   pf_process(w, pid, "app", 0);              once per process, any time
 *   pf_thread(w, pid, tid, 1, "thread 1");     once per thread, any time
 *   pf_event(w, pid, tid, ts, id, "request", "main+0x2c (app.c:12)", data, len, 0);
 *   pf_loss(w, pid, tid, ts, 120);             a gap where 120 events were lost
 *   rc = pf_close(w);                          0, or an errno
 *
 * An event of a thread (or process) never described gets a descriptor of
 * its own.  pid 0 is not a process: its events (a trace's own, such as the
 * OVERFLOW and RESUME the reader synthesizes) go to a track of their own.
 * Timestamps are ns since the epoch (CLOCK_REALTIME).  A symbol is written
 * as the symbolizer gives it, FUNCTION+0xOFF then " (FILE:LINE)" when it
 * knows them: its function, file and line go in the event's source
 * location.  Built with zlib (PT_HAVE_ZLIB), the packets are written
 * compressed, as Perfetto's own service writes them, unless
 * pf_compress(w, 0) is called.  What goes where in the output:
 * export_perfetto.c.
 */
#ifndef POSIXTRACE_PERFETTO_H
#define POSIXTRACE_PERFETTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PF_TRUNCATED 1u  /* pf_event flags: the payload was cut short */

struct pf;
struct pf *pf_open(FILE *out);   /* NULL: out of memory */
int pf_process(struct pf *w, int32_t pid, const char *name, int32_t ppid); /* ppid 0: unknown */
int pf_thread(struct pf *w, int32_t pid, uint64_t tid, unsigned idx, const char *name);
/* The thread of key (pid, tid) is kernel thread ktid, named name (NULL:
 * none): its descriptor has that real TID.  Before its first event. */
int pf_thread_ident(struct pf *w, int32_t pid, uint64_t tid, int32_t ktid, const char *name);
/* symbol: where the event was recorded ("" or NULL: none), as above */
int pf_event(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts_ns, unsigned type_id,
             const char *type_name, const char *symbol, const void *payload, size_t len,
             unsigned flags);
/* The same for a payload its program described: its fields by name. */
enum pf_kind { PF_UINT, PF_INT, PF_DOUBLE, PF_STRING };
struct pf_field {
	const char *name;
	enum pf_kind kind;
	uint64_t u;
	int64_t i;
	double d;
	const char *s;     /* PF_STRING: len bytes */
	size_t len;
};
int pf_event_fields(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts_ns, unsigned type_id,
                    const char *type_name, const char *symbol, const struct pf_field *f,
                    size_t n, unsigned flags);
int pf_loss(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts_ns, uint64_t count);
/* Spans as slices (TYPE_SLICE_BEGIN, TYPE_SLICE_END), written by the
 * thread (pid, tid) at ts.  track 0: the thread's own track, where slices
 * nest (an end closes the last begun one); else async track number
 * track (not 0), described once with pf_async_track() beforehand.  span:
 * a number for the name (interned per sequence).  flags, on an end:
 * PF_INCOMPLETE (the span has no true duration: a "incomplete" argument),
 * PF_SPLIT (on an end and the begin after it: one span cut in two
 * slices, to keep the nesting of a track: a "split" argument). */
#define PF_INCOMPLETE 2u
#define PF_SPLIT 4u
int pf_async_track(struct pf *w, uint64_t track, const char *name);
int pf_slice(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts_ns, int begin, unsigned span,
             const char *name, uint64_t track, unsigned flags);
/* Compressed packets (TracePacket.compressed_packets, zlib) from here on,
 * or plain ones (on = 0); any time.  0, ENOTSUP (on, built without zlib),
 * or the first error writing. */
int pf_compress(struct pf *w, int on);
/* Writes what is left and frees w: 0, or the first error (errno value)
 * writing or allocating. */
int pf_close(struct pf *w);

#endif
