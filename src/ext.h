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
#include "log/batch.h"
#include "log/rotation.h"
#include "shm/mapent.h"

struct pt_ext_losses {
	/* The stream's lost events (all causes: overwritten in LOOP, dropped
	 * while full) that the POSIX_TRACE_RESUMEs a getnext on this id
	 * returned told, up to the last one; resume_ok is 0 if none did, or
	 * (a log) if that RESUME did not say (logs of format version 1, the
	 * wrap of a log with no END block).  Once the reader has read to the
	 * end, it is the total: every loss is told (an UNTIL_FULL stream tells
	 * its losses with its automatic STOP instead).  (A wrapped log's first
	 * RESUME says what the gaps it overwrote told: 0 when a later one
	 * says, else the total.) */
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
	/* A log only: the events overwritten in the log (LOOP) that the last
	 * RESUME returned reported, or an earlier one: the RESUME of the pair
	 * before the oldest event kept carries log_overwritten, as a gap of
	 * its own (0 before it, or if the log did not wrap).  A gap's count
	 * is the growth of at_resume + wrap_at_resume. */
	uint64_t wrap_at_resume;
	/* The stream's counts (at_resume, total) come from memory the traced
	 * process can write: a count above the most events the stream could
	 * have lost (one a nanosecond on every CPU since it was created) is
	 * clamped to that, and implausible is set. */
	int implausible;
	/* A live stream only: events a reader of this id returned after one
	 * stamped later (their writer was held between stamping and
	 * committing them for longer than the reader waits: POSIXTRACE_LATE_WAIT_MS,
	 * docs/implementation-defined.md, "Reading a live stream"). */
	uint64_t late;
};

/* 0, or EINVAL if trid is not a trace id of this process. */
int pt_ext_losses(trace_id_t trid, struct pt_ext_losses *out);

/* The value of POSIXTRACE_JOIN (src/producer/join.c) that makes a process
 * loading the library join the stream trid, an inherited one this process
 * made; the traced process is told too, and puts it into its own
 * environment: 0, EINVAL (not such a stream), ERANGE (cap too small). */
#define PT_EXT_JOIN_ENV "POSIXTRACE_JOIN"
int pt_ext_join(trace_id_t trid, char *buf, size_t cap);
/* Ask the running process pid to join the stream trid as the processes
 * started with that variable do (`attach --tree`): 0; EEXIST (it records
 * into it already); ENOENT (it does not use the library); EPERM (not
 * ours to trace); ESRCH (gone); EAGAIN (its slots are all taken);
 * EINVAL (trid is not such a stream). */
int pt_ext_join_pid(trace_id_t trid, pid_t pid);

/* The map of loaded code (docs/design.md, "The map of loaded code"): its
 * entries, struct pt_ext_obj and their kinds, are in shm/mapent.h. */

/* Entries from index `from` on (a stream: what its processes wrote so
 * far, read now; a log: what it holds), up to cap into out; *n how many.
 * Objects only (kinds BEGIN to LOST); `from` counts those.  A stream
 * written to a log drops the entries of processes gone once the log has
 * them: they still count in the indices, and a `from` among them gives
 * the entries kept after them.
 * 0, or EINVAL if trid is not a trace id of this process. */
int pt_ext_objects(trace_id_t trid, size_t from, struct pt_ext_obj *out, size_t cap,
                   size_t *n);

/* Thread identities (docs/design.md, "Thread identities"): each traced
 * thread says who it is in each stream when it takes its first chunk
 * there, and again at its next chunk after its name changed.  An event's
 * writer is its (posix_pid, posix_thread_id); the entry that names it is
 * the latest one of that pair stamped at or before the event (a pthread_t
 * is reused after its thread ended), else the first one after. */
struct pt_ext_thread {
	uint64_t ts;           /* when it was said (ns since the epoch) */
	uint64_t thread;       /* the pthread_t its events carry (posix_thread_id) */
	int32_t pid;
	int32_t tid;           /* kernel thread id (gettid()) */
	char name[PT_EXT_THREAD_NAME]; /* NUL-terminated; "" if it had none */
};
/* Entries from index `from` on, as pt_ext_objects().  0, or EINVAL. */
int pt_ext_threads(trace_id_t trid, size_t from, struct pt_ext_thread *out, size_t cap,
                   size_t *n);

/* Payload descriptions (posixtrace_eventid_describe(3)): the latest of an
 * id (of its process, else of any) describes its events. */
struct pt_ext_type {
	uint64_t ts;
	int32_t pid;           /* the process that described it */
	uint32_t id;           /* the event type */
	char desc[PT_EXT_TYPE_DESC]; /* as given, NUL-terminated */
};
int pt_ext_types(trace_id_t trid, size_t from, struct pt_ext_type *out, size_t cap, size_t *n);

/* The system event a thread of a no-loss stream records when it had to
 * wait for room (posixtrace_noloss_wait; src/shm/layout.h
 * PT_SYS_NOLOSS_WAIT): its payload is the wait in ns, a u64. */
#define PT_EXT_NOLOSS_WAIT 8u

/* Event ids below it are system events: src/shm/layout.h's, to the letter
 * (api/ext.c includes both: another value there stops the build). */
#define PT_SYS_IDS        16u                    /* ids below are system events */

/* A payload description parsed (the grammar is in
 * posixtrace_eventid_describe(3)): fields in order, with the offsets they
 * take in a payload as a C compiler lays out the struct of those types
 * (each scalar at a multiple of its size; a string or bytes field at any
 * byte, as long as its content).  0 and *n fields, or EINVAL (then *n is
 * how many parsed, and *at the byte of desc where it went wrong). */
#define PT_EXT_FIELDS_MAX 32u
#define PT_EXT_FIELD_NAME 32u   /* a field name's length, NUL included */
enum pt_ext_ftype {
	PT_EXT_F_U8 = 1, PT_EXT_F_U16, PT_EXT_F_U32, PT_EXT_F_U64,
	PT_EXT_F_I8, PT_EXT_F_I16, PT_EXT_F_I32, PT_EXT_F_I64,
	PT_EXT_F_X8, PT_EXT_F_X16, PT_EXT_F_X32, PT_EXT_F_X64, /* unsigned, shown in hex */
	PT_EXT_F_F32, PT_EXT_F_F64,
	PT_EXT_F_STRING,  /* NUL-terminated; the last field may end at the payload's end */
	PT_EXT_F_BYTES,   /* the rest of the payload (last field only) */
};
struct pt_ext_field {
	char name[PT_EXT_FIELD_NAME];
	enum pt_ext_ftype type;
	unsigned size;        /* bytes of a scalar; 0 for string and bytes */
};
int pt_ext_type_parse(const char *desc, struct pt_ext_field *out, size_t cap, size_t *n,
                      size_t *at);
const char *pt_ext_ftype_name(enum pt_ext_ftype t); /* "u32", ...; NULL if none */

/* Process identities (docs/design.md, "Tracing a process tree"): each
 * traced process says, in each stream that reaches it (attached, inherited
 * at fork, kept across exec, joined), its parent's pid and its command
 * line (its arguments separated by spaces; cut: it did not fit).  The
 * latest entry of a pid says who it is (an exec changes the command line).
 * cont: the entry goes on from the one of its pid before it in the stream
 * (the process's FORK entry, or its image before an exec): the same
 * process; an entry without it, in a stream of format 11 and later, begins
 * a process that may have had its pid from another one (pid reuse).
 * Entries from index `from` on, as pt_ext_objects().  0, or EINVAL. */
struct pt_ext_proc {
	uint64_t ts;
	int32_t pid, ppid;
	int cut, cont;
	char cmdline[PT_EXT_OBJ_PATH];
};
int pt_ext_procs(trace_id_t trid, size_t from, struct pt_ext_proc *out, size_t cap, size_t *n);

/* (Whether an entry of kind THREAD, TYPE or PROC is sound:
 * pt_ext_meta_ok(), shm/mapent.h.) */

/* A log open with posix_trace_open(): the next event read is the first
 * of the first block of the log that may hold an event stamped at or
 * after ts_ns (ns since the epoch), found through the log's block index;
 * every event before it is stamped before ts_ns, so reading on and
 * skipping events before ts_ns gives exactly those at or after it.
 * *lost_before: the stream's loss count at the last RESUME before that
 * point (0 if none), where a reader that counts each gap's losses as the
 * difference between RESUMEs starts from.  0; EINVAL: not a log. */
int pt_ext_seek(trace_id_t trid, uint64_t ts_ns, uint64_t *lost_before);

/* A log open with posix_trace_open(): reading ends (no event available,
 * as at the end of the log) once no block left may hold an event stamped
 * at or before ts_ns, so that a reader of a window [.., ts_ns] stops at
 * its end without skipping a late event (a block's smallest timestamp is
 * known without reading it: the block index, or the scan at open).
 * UINT64_MAX: to the end of the log again.  posix_trace_rewind() and
 * pt_ext_seek() keep it.  0; EINVAL: not a log. */
int pt_ext_seek_end(trace_id_t trid, uint64_t ts_ns);

/* A log open with posix_trace_open(): its next events for a reader that
 * only counts them, as posix_trace_getnext_event() would return them one
 * by one (the same order, ids, timestamps and writers, the loss counts of
 * pt_ext_losses() kept the same: the two may be mixed), without payloads
 * or addresses, one lock and no copy an event.  A batch holds at most
 * PT_EXT_BATCH events, all from one block of the log or from a group of
 * blocks whose times overlap, merged (or a single event the reader
 * makes: an error, a wrap's pair); event i was written by
 * w[ev[i].w], and w has nw entries.  A batch ends with an event that
 * carries a loss count (flag PT_EXT_BEV_LOST: a RESUME's), so that
 * pt_ext_losses() then tells that event's, as after getnext.  An event
 * whose payload is 4 bytes has flag PT_EXT_BEV_WORD and them in word
 * (as getnext copies them: an error event's error number); one whose
 * payload is 8 bytes, flag PT_EXT_BEV_QWORD and them as a uint64_t read
 * from the payload's bytes (memcpy) split into word (its low 32 bits) and
 * hi (a posixtrace_noloss_wait's wait, say).  n == 0: no
 * more (the end, or where pt_ext_seek_end() stops).  0; EINVAL: not a
 * log (or b NULL).  The batch and its constants: log/batch.h. */
int pt_ext_next_batch(trace_id_t trid, struct pt_ext_batch *b);

/* A log open with posix_trace_open(): its next events with their
 * payloads, many a call, for a reader that reads every event: exactly
 * what as many calls of posix_trace_getnext_event() with a buffer of
 * TRACE_DATA_MAX + 1 bytes would return (the same order, events,
 * payloads, truncation statuses), one lock for all (a lock an event is
 * a fifth of what reading a log costs).  Event i is ev[i], its payload
 * len[i] bytes at data + off[i] (16-byte aligned).  A call ends after a
 * POSIX_TRACE_RESUME, so that pt_ext_losses() then tells its count, as
 * after getnext; the two may be mixed.  n == 0: no more (the end, or
 * where pt_ext_seek_end() stops).  0; EINVAL: not a log (or m NULL). */
/* (64 events and 16 KiB: what a call brings stays in the first level of
 * the cache beside the caller's own work; 128 and 64 KiB made the Perfetto
 * export 7% slower, 16 and 4 KiB stats 4%: docs/performance.md) */
#define PT_EXT_MANY 64u
#define PT_EXT_MANY_SOFT (16u * 1024u) /* payload bytes after which a call ends */
struct pt_ext_many {
	size_t n;
	struct posix_trace_event_info ev[PT_EXT_MANY];
	uint32_t off[PT_EXT_MANY], len[PT_EXT_MANY];
	_Alignas(16) unsigned char data[PT_EXT_MANY_SOFT + TRACE_DATA_MAX + 1u];
};
int pt_ext_next_many(trace_id_t trid, struct pt_ext_many *m);

/* The summary a log carries (format 5 and later, APPEND and UNTIL_FULL
 * logs): what
 * its writer counted of the events it wrote, read from the end of the
 * file without reading the events (src/log/logsum.c).  Writers are in
 * the order of their first event in the log; types and names by id. */
struct pt_ext_sum_writer {
	int32_t pid;
	uint64_t thread, count, first, last;
	uint64_t waits, wait_ns, wait_max; /* (format 10) its no-loss waits: how many, their
	                                    * payloads (ns) added up, the longest */
};
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
	struct pt_ext_thread *threads; /* (format 6) thread identities, as pt_ext_threads() */
	size_t nthreads;
	struct pt_ext_type *types;    /* (format 6) payload descriptions, as pt_ext_types() */
	size_t ntypes;
	struct pt_ext_proc *procs;    /* (format 6) process identities, as pt_ext_procs() */
	size_t nprocs;
	int waits_known;              /* the writers' waits are every posixtrace_noloss_wait
	                               * event's (they add up to its count: format 10, no
	                               * waiting writer retired), as a pass over the events
	                               * with an 8-byte payload each would add them up */
};

/* The summary of the log open for reading on fd (only pread is used).
 * 0; ENOENT: the log has none (an older format, a LOOP log, a log cut
 * short, or a summary that does not check); EINVAL: not a log; ENOMEM.
 * pt_ext_summary_free() then. */
int pt_ext_log_summary(int fd, struct pt_ext_summary **out);
/* For a log open for reading that has no summary to read (cut short,
 * killed writer, LOOP, an older format): the same counts (events, time
 * range, per type, per writer, gaps and losses as they will be known
 * after the last event), taken by the scan posix_trace_open() does
 * anyway, with the reader's error events counted too (*damaged of them);
 * attr, names and the map's entries are left empty.  0; ENOENT: not
 * known exactly (a wrapped LOOP log, blocks out of order, a log opened
 * through its summary); EINVAL: not a log; ENOMEM. */
int pt_ext_log_census(trace_id_t trid, struct pt_ext_summary **out, uint64_t *damaged);
void pt_ext_summary_free(struct pt_ext_summary *s);

/* Rotation (src/flush/rotate.c): the log of a stream made with
 * posix_trace_create_withlog() (log policy APPEND) is cut into parts, each a
 * whole log of its own: from the first block boundary after the part
 * holds `size` bytes, or after it has been written to for `period_ns`
 * (and holds an event), the flusher finishes the part (its summary and
 * END block) and goes on in DIR/NAME-N.ptlog, N one more than the part
 * before (a name taken already is stepped over), which begins as a new
 * log does: every event type's name, the map of loaded code, the thread
 * and process identities and the payload descriptions of the processes
 * traced (and each type's latest description, its process ended or not).  The first part is the log the stream was made with, numbered
 * `first` (named DIR/NAME-first.ptlog for `keep` to remove it).  No
 * block is in two parts, and no cut is made between an OVERFLOW and
 * the event after its RESUME: a loss is told in the part of the event
 * after it.  After each cut, the oldest finished parts are removed
 * (unlinked) while more than keep - 1 are kept (keep counts the part
 * being written), or while those kept take more than keep_size bytes;
 * 0: no limit.  The library holds dirfd's duplicate and the part being
 * written open, no other.  A part that cannot be made (or the directory
 * gone) is an error of the stream (posix_trace_get_status), and the
 * log goes on in the part being written, tried again a second later.
 * Once per stream, before or after posix_trace_start().  0; EINVAL (not
 * a stream with an APPEND log, a name empty, longer than 200 bytes,
 * with '/' or starting with '.', no size and no period, dirfd not a
 * directory); EBUSY (rotating already); ENOMEM; EMFILE. */
/* (struct pt_ext_rotate, its stats and the name's limit: log/rotation.h) */
int pt_ext_log_rotate(trace_id_t trid, const struct pt_ext_rotate *r);
/* What the rotation of trid did so far: parts finished (cuts), parts
 * removed, the number of the part being written, and the cuts' delays:
 * the largest number of bytes a part had beyond `size` when it was cut
 * (before its last block, summary and END), how long after its
 * threshold a cut was made at most (by size: since the flusher last
 * found none due, a bound), and the time the longest cut took (finishing
 * the part, making the next, its names and map): its wall time, and the
 * most CPU time the flusher's thread spent on one (the rest is waiting:
 * preempted, or writes the kernel held).  0; EINVAL (not a rotating
 * stream). */
int pt_ext_log_rotate_stats(trace_id_t trid, struct pt_ext_rotate_stats *out);

/* PT_EXT_LOG_WRITING_BYTE, the byte a log being written locks: log/rotation.h */
/* ---- the flight recorder (`record --flight`; src/control/snapshot.c):
 * two looks at a LOOP stream of this process's that nobody consumes,
 * neither of which changes it (no chunk freed, no reader progress).
 *
 * The follower: each poll gives, through fn, the records of the ids set
 * in want (a bitmap of __TRACE_EVENT_ID_LIMIT bits) written since the
 * last poll (from the open on), each writer's in its order (fn's data
 * points into the follower's own copy, valid during the call; fn returns
 * non-zero to end this poll after that record: the next poll goes on
 * from the record after it).  A chunk
 * overwritten before it was read to its end is counted in missed.  Poll:
 * the records given, or -errno (EINVAL: trid is not a stream). */
struct pt_ext_fev {
	uint64_t ns, thread;   /* its time (ns since the epoch), pthread_t */
	int32_t pid;
	uint32_t level, id, len; /* signal nesting level; type; payload bytes */
	const unsigned char *data;
};
typedef int (*pt_ext_follow_fn)(void *arg, const struct pt_ext_fev *e);
struct pt_ext_follow;
int pt_ext_follow_open(trace_id_t trid, const uint64_t *want, struct pt_ext_follow **out);
int pt_ext_follow_poll(struct pt_ext_follow *f, pt_ext_follow_fn fn, void *arg);
uint64_t pt_ext_follow_missed(const struct pt_ext_follow *f);
void pt_ext_follow_close(struct pt_ext_follow *f);
/* The snapshot: every event the stream holds stamped in [from_ns, to_ns],
 * written to fd as a whole log (event names, map of loaded code, thread
 * and process identities, payload descriptions), finished and fsync'ed.
 * A chunk overwritten while it was copied is dropped, counted in dropped
 * (its events, as far as known, in dropped_events); a writer whose
 * chunks are missing inside the window gets an OVERFLOW/RESUME pair
 * there (gaps).  lapped: writers whose chunks up to to_ns were all
 * overwritten before the copy (those left all begin after it): the
 * program lapped the stream since.  0, EINVAL, ENOMEM, or the error of a
 * write. */
struct pt_ext_snap {
	uint64_t events, chunks, dropped, dropped_events, gaps, first, last, bytes;
	uint64_t lapped, trig_kept, trig_alone; /* (src/control/control.h, struct pt_snap_stats) */
};
int pt_ext_snapshot(trace_id_t trid, int fd, uint64_t from_ns, uint64_t to_ns,
                    struct pt_ext_snap *out);
/* The same, given the trigger event as the follower delivered it (its
 * data copied by the caller): when the stream no longer holds it (the
 * program overwrote it before the copy), it is written all the same, after
 * an OVERFLOW/RESUME pair, and out->trig_kept says so. */
int pt_ext_snapshot_trig(trace_id_t trid, int fd, uint64_t from_ns, uint64_t to_ns,
                         const struct pt_ext_fev *trig, struct pt_ext_snap *out);
/* The same in two steps, so that the copy is prompt and the writing goes
 * on elsewhere: pt_ext_snapshot_copy copies the window's chunks out of
 * the stream (and the names, map of loaded code and clock the log needs)
 * under the trace id's lock; pt_ext_snapshot_write writes that copy to fd
 * as pt_ext_snapshot_trig does, with no lock, in any thread, once;
 * pt_ext_snapshot_free frees it.  A copy holds up to the stream's size. */
struct pt_ext_snapcopy;
int pt_ext_snapshot_copy(trace_id_t trid, uint64_t from_ns, uint64_t to_ns,
                         const struct pt_ext_fev *trig, struct pt_ext_snapcopy **out);
int pt_ext_snapshot_write(struct pt_ext_snapcopy *c, int fd, struct pt_ext_snap *out);
void pt_ext_snapshot_free(struct pt_ext_snapcopy *c);
/* The memory the copies of trid's stream are made in and the writer's,
 * allocated, the stream's size of it touched now, and kept for the
 * snapshots, so that the first one is as quick as the next (its fresh
 * pages: about 5 ms for a 12 MB window).  No lock held while it touches
 * it.  0, or the trace id's error. */
int pt_ext_snapshot_prepare(trace_id_t trid);
/* Tests only: called with the arg after each chunk a snapshot copies. */
extern void (*pt_ext_snapshot_copy_hook)(void *);
extern void *pt_ext_snapshot_copy_arg;
/* How full the stream is, in thousandths of its size (sealed chunks). */
int pt_ext_stream_use(trace_id_t trid, unsigned *permille);
/* The system event posixtrace_trigger(3) records: its payload is the
 * trigger's name (src/shm/layout.h PT_SYS_TRIGGER). */
#define PT_EXT_TRIGGER 9u

#endif
