/*
 * read.h -- the bottom layer of the posixtrace command (cli/read/): a
 * trace read as a stream of events, from a log (tlog.c), a set of logs
 * (parts.c; either, trace.c) or a live stream (livestream.c), with the tables
 * that grow as processes, threads and event types appear (threads.c,
 * tracetypes.c), processes told apart when they share a pid (births.c),
 * the losses counted (losses.c) and the waits for room
 * (waits.c); and what every layer shares: messages, parsing and formatting helpers
 * (util.c), times (when.c), histograms (hist.c), a growable text buffer
 * (vbuf.c), event and policy names as a user types them (names.c).
 *
 * The command uses the public API of the library (<trace.h>) and its
 * extensions for the command (src/ext.h).  Exit codes: 0 success, 1
 * error, 2 usage; `record` passes the traced program's own status through.
 * The layers above: enrich.h, write.h, cmd.h, each including the one below.
 */
#ifndef POSIXTRACE_CLI_READ_H
#define POSIXTRACE_CLI_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <trace.h>
#include "../../src/ext.h"

struct tlog;
struct tev;
struct tbirth;
#define PT_CLI_VERSION "0.1.0"
#define EXIT_USAGE 2
#define PT_NIDS 1024 /* event ids are below this (docs/implementation-defined.md) */

/* ------------------------------------------------------------ util.c */
extern const char *prog_cmd;  /* "posixtrace record", for messages */
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Until called again with NULL, err_msg() and usage_error() write their
 * message (the last one) into buf instead of stderr: a caller that passes it on (the SQL
 * tables' errors). */
void err_capture(char *buf, size_t cap);
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int parse_size(const char *s, size_t *out);
int parse_seconds(const char *s, double *out);
int parse_pid(const char *s, pid_t *out);
/* --rows N: how many rows a table of processes or threads shows (info,
 * stats); 0 all of them.  A trace of a service that forks a worker per
 * request has tens of thousands: the rest are summed up in one line. */
#define ROWS_DEFAULT 50
int parse_rows(const char *s, unsigned *out);
uint64_t now_realtime_ns(void);
uint64_t now_mono_ns(void);
void fmt_rel(char *buf, size_t cap, uint64_t ns);            /* s.nnnnnnnnn */
void fmt_since(char *buf, size_t cap, uint64_t ts, uint64_t t0); /* ts - t0, "-s.nnnnnnnnn" before */
void fmt_abs(char *buf, size_t cap, uint64_t ns);            /* UTC ISO 8601 */
void fmt_duration(char *buf, size_t cap, uint64_t ns);       /* "1.234 s", "45.600 ms" */
/* A value of a histogram (hist.c: within 0.4%, exact below 256 ns) to the
 * precision it has: 3 significant digits ("927 us", "1.21 ms"). */
void fmt_quantile(char *buf, size_t cap, uint64_t ns);
#define TERM_WIDTH_MIN 40   /* what stats --width accepts, and COLUMNS is held to */
#define TERM_WIDTH_MAX 1000
int terminal_width(void);
int utf8_output(void);
int want_help(int argc, char **argv);
/* A progress line on stderr when it is a terminal (and the job is long);
 * total 0: not known, the line counts events. */
struct progress { const char *what; uint64_t total, done, last_ns, start_ns, delay_ns; int shown; };
void progress_begin(struct progress *p, const char *what, uint64_t total);
void progress_update(struct progress *p, uint64_t done);
void progress_end(struct progress *p);
/* Open FILE for writing: refuse to overwrite unless force (O_EXCL). */
struct stat;
/* Output files are made 0600; --force replaces by renaming a new file
 * over the old name, refusing what output_refused() names. */
int create_output(const char *path, int force);
int create_private_output(const char *path, int force);
int create_output_at(int dirfd, const char *name, const char *path, int force);
/* a log record is writing: marked so (its fd), and told (any fd of it) */
void log_mark_writing(int fd);
int log_being_written(int fd);
const char *output_refused(const struct stat *st, int want_dir);

/* ------------------------------------------------------------ when.c */
/* A time in a trace: seconds since its first event ("1.5", "250ms",
 * "20us"), an absolute UTC time ("2026-11-27T15:04:05.5Z") or epoch
 * seconds ("@1764255845.5").  0, or -1 if s is none of these. */
struct when { int absolute; uint64_t ns; };
int parse_when(const char *s, struct when *w);
uint64_t when_ns(const struct when *w, uint64_t t0);  /* ns since the epoch */

/* ------------------------------------------------------------ hist.c */
/* A histogram of durations (HdrHistogram-like): quantiles within 0.4%
 * of the true value, min and max exact; memory bounded whatever the
 * count (at most HIST_ROWS rows of 1 KiB).  Zero-initialize to start. */
#define HIST_ROWS 57
struct hist { uint64_t n, min, max; double sum; uint64_t *row[HIST_ROWS]; };
int hist_add(struct hist *h, uint64_t v);           /* 0, -1 out of memory */
uint64_t hist_quantile(const struct hist *h, double q); /* q in [0, 1] */
/* The values counted below v: exact when v is below 256, or a bucket's
 * edge, (128 + j) 2^k for j < 128 (such as 2^k, 1.25 2^k, 1.5 2^k...). */
uint64_t hist_below(const struct hist *h, uint64_t v);
void hist_free(struct hist *h);

/* ------------------------------------------------------------ vbuf.c */
struct vbuf { char *p; size_t n, cap; int oom; };
void vb_put(struct vbuf *b, const char *s, size_t n);
void vb_printf(struct vbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vb_str(struct vbuf *b, const char *s);  /* a JSON string */

/* ------------------------------------------------------------ names.c */
int exclude_events(trace_id_t trid, const char *exclude); /* --exclude NAME,... */
const char *policy_name(int policy);
int parse_policy(const char *s, int log, int *out);

/* ------------------------------------------------------------ tlog.c */
/* A trace read as a stream of events, one at a time (a log, or a live
 * stream), with tables that grow as processes, threads and event types
 * appear, and totals at the end.  Memory is bounded by processes,
 * threads, types and loaded objects, never by events. */
struct tev {
	uint64_t ts;          /* ns since the epoch (CLOCK_REALTIME) */
	uint64_t addr;        /* posix_prog_address */
	const unsigned char *data; /* the payload, valid until the next event is read */
	uint32_t len;         /* payload bytes */
	uint32_t thread;      /* index in tlog.th */
	uint16_t id;
	uint8_t trunc;        /* posix_truncation_status */
	uint64_t lost;        /* a RESUME with a count: the events its gap lost; else UINT64_MAX */
	uint64_t n;           /* its place in the trace: 0 for the first event */
};
struct tthread {
	int32_t pid;
	uint64_t tid;
	unsigned idx;
	uint32_t proc;
	uint64_t count, first, last;
	uint64_t waits, wait_ns, wait_max; /* --no-loss waits, when the tlog's waits_known */
	uint64_t born, until;  /* its process's start, the next one of its pid (births.c) */
};
/* A process: a pid from one start to the next (births.c); two processes
 * given one pid are two of these (rank: how many of its pid come before
 * it in l->pr, 0 for the first). */
struct tproc { int32_t pid; unsigned nthreads; uint64_t count, first, last, born, until;
               uint32_t rank; };
/* --t0 (main.c takes it, as --all): time 0 of every relative time, one
 * rule for every command (docs/implementation-defined.md, "Time 0").
 * T0_FIRST: the program's first event (the default), T0_TRACE: the
 * trace's first event, T0_TYPE: the first event of type name, T0_TIME:
 * a time (absolute, or seconds after the program's first event). */
enum { T0_FIRST, T0_TRACE, T0_TYPE, T0_TIME };
struct t0_spec { int kind; struct when w; char name[TRACE_EVENT_NAME_MAX + 1]; };
/* How a trace is read: what main.c takes for every reading command alike
 * and hands it (all zeros: the defaults), and between the parts of a set
 * what the parts before found.  A tlog keeps its own copy. */
struct tlog_front {
	int all;            /* --all: keep the recorder's own process (else its
	                     * events are the trace's, pid 0, and its threads and
	                     * loaded objects are not shown) */
	struct t0_spec t0;  /* --t0 */
	int32_t recorder;   /* (parts.c) the recorder of the parts before, for a
	                     * part with no START of its own; 0: none */
};
struct tlog {
	const char *path;
	trace_attr_t attr;
	struct posix_trace_status_info st;
	char *names[PT_NIDS];          /* from the log; NULL when unnamed */
	uint64_t count[PT_NIDS];       /* events per type */
	uint64_t tfirst[PT_NIDS], tlast[PT_NIDS]; /* per type: first and last timestamp */
	int listed[PT_NIDS];           /* in the log's event-type list */
	struct tthread *th;            /* in order of first event */
	size_t nth;
	struct tproc *pr;              /* sorted by pid once the totals are known */
	size_t npr;
	uint64_t nev;                  /* events read */
	uint64_t first, last;          /* smallest and largest timestamp */
	uint64_t overflows, errors;    /* OVERFLOW and ERROR events */
	/* lost events (losses.c) */
	uint64_t ngaps;                /* counted RESUMEs */
	uint64_t lost_at;              /* the stream's count at the last counted RESUME */
	uint64_t lost_stream;          /* events the stream lost: final, or at least */
	int lost_final;                /* lost_stream is the final count (END block) */
	int lost_implausible;          /* the stream's count was forged: clamped */
	uint64_t log_overwritten, log_dropped; /* lost by the log itself */
	uint64_t late;                 /* a live stream: events read after later ones */
	/* a log that is not whole */
	int unfinished;                /* no final status (END block): cut short, */
	int writing;                   /* ... or still being written (record runs) */
	uint64_t damaged;              /* stretches that could not be read */
	long long file_size;
	/* the map of loaded code the log carries (ext.h's struct pt_ext_obj) */
	struct pt_ext_obj *objs;
	size_t nobjs;
	/* thread identities and payload descriptions (read.h), read with the
	 * names: bounded by threads and types, never by events; NULL: none */
	struct thrmap *thrs;
	struct typemap *types;
	int32_t recorder;              /* its pid, shown as the trace's (pid 0); 0: none or --all */
	int32_t tracer;                /* the recorder's pid, --all or not; 0: none */
	struct pt_ext_proc *procs;     /* who the processes were (parent, command line) */
	size_t nprocs;
	struct evfilter *filter;       /* not NULL: tlog_next() gives only what passes it */
	struct tparts *parts_;         /* a set of logs read as one (parts.c), else NULL */
	struct tlog_front front;       /* how it is read (tlog_load_as) */
	/* reading (tlog.c) */
	int totals;                    /* the tables hold the whole trace: later passes count nothing */
	int summary;                   /* they come from the log's summary, not from reading it */
	int summary_merged;            /* ... which counted processes given one pid together */
	int waits_known;               /* ... with each thread's --no-loss waits (format 10) */
	trace_id_t trid_;
	int fd_, open_;
	struct pt_ext_many *many_;     /* events read ahead, many a lock (pt_ext_next_many) */
	size_t many_at_;               /* the next of them */
	uint64_t pass_n_;              /* events read in this pass */
	uint64_t pass_at_;             /* this pass's loss count at the last RESUME */
	void *hash_;                   /* (pid, born, tid) -> thread index */
	struct tbirth *births_;        /* each process's start (births.c) */
	size_t nbirths_;
	struct pt_ext_batch *stash_;   /* a batch read ahead, given out in parts (births.c) */
	size_t stash_at_;              /* the next of its events to give */
	uint32_t last_th_;             /* the thread of the last event */
	size_t hcap_;
	void *pidn_;                   /* (pid, born) -> its threads in th (a new one's idx) */
	int procs_sorted_;             /* procs by (pid, time) (tlog.c, tlog_sort_procs) */
	/* (tlog_finish) each process's threads: pth[pth_at[p]..pth_at[p + 1]) are
	 * the indices in th of l->pr[p]'s, in th's order (TLOG_PROC_THREADS) */
	uint32_t *pth;
	size_t *pth_at;
	size_t pncap_, npid_;
};
/* A log: tlog_open() reads its attributes, names, map of loaded code,
 * thread identities and payload descriptions;
 * tlog_next() gives its events one by one (1, or 0 at the end, -1 after
 * a message); tlog_end() after the last notes the final counts.
 * tlog_scan() reads the whole log for its totals and goes back to its
 * start: the next pass gives the same events and thread numbers and
 * leaves the totals alone.  tlog_load() = tlog_open() + the totals: from
 * the summary the log carries (format 5 and later), else from the count
 * the scan at open made (pt_ext_log_census(): the same figures, and the
 * damaged stretches and a missing final status), else tlog_scan(). */
int tlog_open(struct tlog *l, const char *path, const struct tlog_front *f); /* 0, or 1 with a message */
int tlog_next(struct tlog *l, struct tev *e);
int tlog_scan(struct tlog *l);                     /* 0, or 1 with a message */
/* After the totals: back to the first event, for another pass.  0, or 1
 * with a message. */
int tlog_rewind(struct tlog *l);
/* After the totals: the next event is the first of the log's first block
 * that may hold one stamped at or after ts (events before ts may follow,
 * none at or after it is skipped).  0, or 1 with a message. */
int tlog_seek(struct tlog *l, uint64_t ts);
/* For a pass that only counts: the next events in a batch (src/ext.h's
 * pt_ext_next_batch: the same events tlog_next() gives, in order,
 * without payloads or addresses; the first pass's totals counted as
 * tlog_next() counts them), and thread_of[w] the thread index (in
 * tlog.th) of each writer w of the batch (b->nw of them, at most
 * PT_EXT_BATCH_W).  1, 0 at the end, -1 after a message. */
int tlog_next_batch(struct tlog *l, struct pt_ext_batch *b, uint32_t *thread_of);
/* After the totals: reading ends once no event stamped at or before ts
 * can follow (a late one still comes; events after ts may come before
 * the end).  0, or 1 with a message. */
int tlog_until(struct tlog *l, uint64_t ts);
/* tlog_load_as(): read as f says (NULL: the defaults); tlog_load(): with
 * the defaults (what record's closing summaries count). */
int tlog_load_as(struct tlog *l, const char *path, const struct tlog_front *f); /* 0, or 1 with a message */
int tlog_load(struct tlog *l, const char *path);
/* The totals only, from the log's summary when it has one (no events
 * read: l->summary), else by reading it (tlog_load_as); as f says, or
 * with the defaults. */
int tlog_totals_as(struct tlog *l, const char *path, const struct tlog_front *f);
int tlog_totals(struct tlog *l, const char *path);
void tlog_free(struct tlog *l);
/* The functions above (trace.c) take a set of logs too (parts.c); these
 * do the same for one log (tlog.c), and parts.c reads its parts with
 * them. */
int tlog_one_load_as(struct tlog *l, const char *path, const struct tlog_front *f);
int tlog_one_totals_as(struct tlog *l, const char *path, const struct tlog_front *f);
int tlog_one_next(struct tlog *l, struct tev *e);
int tlog_one_next_batch(struct tlog *l, struct pt_ext_batch *b, uint32_t *thread_of);
int tlog_one_rewind(struct tlog *l);
int tlog_one_seek(struct tlog *l, uint64_t ts);
int tlog_one_until(struct tlog *l, uint64_t ts);
void tlog_one_warn(const struct tlog *l);
void tlog_one_free(struct tlog *l);
int t0_parse(const char *s, struct t0_spec *out);  /* 0, or -1: not a --t0 value */
/* The first event of the program: of a process other than the recorder
 * (and the trace's own lane, pid 0); the trace's first if it has none. */
uint64_t tlog_program_first(const struct tlog *l);
/* After the totals: time 0 as l->front.t0 says (0, or 1 after a message:
 * no such event type in the log). */
int tlog_t0(const struct tlog *l, uint64_t *t0);
const char *t0_what(const struct tlog *l);  /* "the program's first event"... */
/* live, as the events come, until time 0 is known: whether an event
 * stamped ts of process pid (self: the reader's own, 0: the trace's)
 * fixes time 0 as s says (1, *t0 set).  Not for T0_TYPE. */
int t0_live(const struct t0_spec *s, uint64_t ts, int32_t pid, int32_t self, uint64_t *t0);
/* The --all (and with t0 the --t0) lines of a command's help, their text
 * at column col. */
void front_help(FILE *f, int col, int t0);
const char *tlog_name(const struct tlog *l, unsigned id, char *buf, size_t cap);
/* Who process p said it was (its latest identity: an exec changes its
 * command line), or NULL. */
const struct pt_ext_proc *tlog_identity(const struct tlog *l, const struct tproc *p);
/* l->procs in the order of (pid, time), equal ones as they came (what
 * tlog_identity() searches; parts.c after merging a part's). */
void tlog_sort_procs(struct tlog *l);
/* The process tree: (*order)[k], k < l->npr, are l->pr's indices with
 * each process right after its parent (the one its identity names, when
 * the trace has it), siblings and roots in pid order; (*depth)[k] is its
 * depth (roots 0).  Both malloc'd (free them); 1 after a message. */
int tlog_tree(const struct tlog *l, size_t **order, unsigned **depth);
/* The program's processes and threads, the ones record, info and live
 * count: not the trace's own line (pid 0) nor process `also` (the
 * recorder's pid when it is known otherwise, else 0). */
void tlog_program_counts(const struct tlog *l, int32_t also, unsigned *procs, unsigned *threads);
/* Incremental use (live): each event read from trid becomes e.
 * tlog_init() reads with the defaults: set l->front after it. */
void tlog_init(struct tlog *l);
int tlog_add(struct tlog *l, trace_id_t trid, const struct posix_trace_event_info *ev,
             const void *data, size_t len, struct tev *e);
void tlog_finish(struct tlog *l);   /* per-process tables, sorted by pid */
/* n --no-loss waits of ns in all, the longest max, added to thread t's */
void tthread_waits(struct tthread *t, uint64_t n, uint64_t ns, uint64_t max);
/* Each thread of process p (an index of l->pr), in th's order, as i (an
 * index of l->th): after tlog_finish, in a process's threads' time (its
 * index, pth), not a look through every thread for each process (that
 * only when memory ran out for the index). */
int tlog_proc_thread(const struct tlog *l, size_t p, size_t *k, size_t *i);
#define TLOG_PROC_THREADS(l, p, k, i) for (size_t k = 0, i = 0; tlog_proc_thread(l, p, &k, &i);)
/* What a log that is not whole lacks: tlog_unfinished is the text for
 * l->unfinished, tlog_damage_text() the words after l->damaged's count;
 * tlog_warn() notes both cases on stderr. */
extern const char tlog_unfinished[], tlog_writing[];
void tlog_damage_text(const struct tlog *l, char *buf, size_t cap); /* after the count */
void tlog_warn(const struct tlog *l);

/* The thread index of writer (pid, tid) at time ts (its process's, births.c),
 * made on first sight: 0, or -1 out of memory (parts.c: a part's threads
 * onto the set's). */
int tlog_thread(struct tlog *l, int32_t pid, uint64_t tid, uint64_t ts, uint32_t *out);

/* ------------------------------------------------------------ births.c */
/* Each process's start, from l->objs (FORK entries) and l->procs (entries
 * that do not go on from one before: cont 0), after either changed: 0, or
 * -1 out of memory.  A log older than format 11 has no cont flags: its
 * reader sets cont on every PROC entry (only FORK entries begin one). */
int tlog_births(struct tlog *l);
/* The start of the process pid named at ts (0: one the trace did not see
 * begin), and the start of the next one given pid after it (UINT64_MAX:
 * none). */
uint64_t tlog_born(const struct tlog *l, int32_t pid, uint64_t ts);
uint64_t tlog_born_next(const struct tlog *l, int32_t pid, uint64_t born);
/* l->pr's order: by pid, then start (qsort, bsearch) */
int tproc_cmp(const void *a, const void *b);
/* After the totals: the process pid named at time ts, or NULL; the one of
 * pid born at born (as tlog_born gives it), or NULL. */
const struct tproc *tlog_proc(const struct tlog *l, int32_t pid, uint64_t ts);
const struct tproc *tlog_proc_born(const struct tlog *l, int32_t pid, uint64_t born);
/* After the totals: the pid an export gives process p (an index of l->pr),
 * where a viewer keys a process by its pid: its pid for the first process
 * the trace has of it, else pid + k 2^22 for the k-th after it (above any
 * pid Linux gives; k at most 511); of thread th's process. */
int32_t tlog_pid_key(const struct tlog *l, size_t p);
int32_t tlog_thread_pid_key(const struct tlog *l, const struct tthread *th);
/* What an export adds to process p's name when its key is not its pid:
 * " (process K of pid P)", K its rank + 1 ("512 or later" from where the
 * keys stop: those share one); "" for the first of its pid. */
void tlog_pid_key_note(const struct tlog *l, size_t p, char *buf, size_t cap);

/* ------------------------------------------------------------ parts.c */
/* A set of logs read as one trace: a directory's *.ptlog files (the
 * parts of `record --rotate`), or several LOG operands, in the order of
 * their first timestamps.  tlog_operands(): the path a command gives
 * tlog_load() for its n LOG operands (paths must outlive it): paths[0]
 * for one, else a name of the list that tlog_load() knows.  The tlog_*
 * reading functions take a set as they take a log (trace.c calls the
 * parts_* ones); threads and types are matched across parts by writer
 * and by name, totals added up, one part open at a time. */
const char *tlog_operands(int n, char *const *paths);
int tlog_is_set(const char *path);  /* a directory, or tlog_operands()'s list */
int parts_load(struct tlog *l, const char *path, const struct tlog_front *f); /* 0, or 1 after a message */
int parts_next(struct tlog *l, struct tev *e);
int parts_next_batch(struct tlog *l, struct pt_ext_batch *b, uint32_t *thread_of);
int parts_rewind(struct tlog *l);
int parts_seek(struct tlog *l, uint64_t ts);
int parts_until(struct tlog *l, uint64_t ts);
void parts_free(struct tlog *l);
void parts_warn(const struct tlog *l);
/* The parts of a set (0 for one log): the i-th's path (and its events
 * into *nev, if not NULL), NULL past the last; the notes on the set
 * (missing parts, overlaps), NULL past the last. */
size_t tlog_nparts(const struct tlog *l);
const char *tlog_part(const struct tlog *l, size_t i, uint64_t *nev);
const char *tlog_part_note(const struct tlog *l, size_t i);

/* ------------------------------------------------------------ losses.c */
/* After tlog_add() of event ev from trace id trid: the events its gap
 * lost if it is a RESUME that says, else UINT64_MAX.  After the last
 * event: the totals. */
uint64_t tlog_note_loss(struct tlog *l, trace_id_t trid, const struct posix_trace_event_info *ev);
void tlog_note_totals(struct tlog *l, trace_id_t trid);
uint64_t tlog_lost_total(const struct tlog *l);            /* stream and log */
int tlog_lost_any(const struct tlog *l);
/* "1234 events lost in 3 gaps in the stream, ..." or "no events lost" */
void tlog_loss_text(const struct tlog *l, char *out, size_t cap);
/* Losses no policy asked for: a FLUSH stream that filled faster than it
 * was written (a stalled writer), a log's failed writes (a full disk, an
 * I/O error), damage; not a LOOP stream or log overwriting, nor an
 * UNTIL_FULL one filling up, as they were told to. */
int tlog_lost_unasked(const struct tlog *l);
/* after it, when the stream lost events: what to do about it, or "" */
const char *tlog_loss_hint(const struct tlog *l);

/* ------------------------------------------------------------- waits.c */
/* --no-loss: e is a wait for room (posixtrace_noloss_wait): 1 and *ns the
 * wait; else 0. */
int tlog_wait_of(const struct tev *e, uint64_t *ns);
struct twait { uint64_t n, ns, max; };  /* a thread's waits: count, total, longest */
/* Every wait of the log at path, per thread of l (w[l->nth], zeroed by the
 * caller; the same thread numbers as l's): 0, or 1 after a message.  From
 * the totals when they hold them (l->waits_known: format 10), else by a
 * pass over the events.  A
 * log whose totals were counted by reading it (one being written, or cut
 * short) is still open in l: read there, as far as it was when opened
 * (so the waits are those of the events counted), and rewound. */
int tlog_waits(const char *path, struct tlog *l, struct twait *w);

/* ------------------------------------------------------------ ext.h */
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
		if (*n == cap) { /* (doubling: 64 more each time copied it all, again and again) */
			size_t ncap = cap ? 2 * cap : 64;
			char *na = (char *)realloc(a, ncap * elem);
			if (!na)
				break;
			a = na;
			cap = ncap;
		}
		if (fetch(trid, *n, a + *n * elem, cap - *n, &got) != 0 || got == 0)
			break;
		*n += got;
	}
	return a;
}

/* ------------------------------------------------------------ tracetypes.c */
struct typemap; /* the descriptions a trace carries */
struct typemap *typemap_load(trace_id_t trid);  /* NULL: no memory */
/* The same from entries already read (a log's summary): takes e (malloc'd). */
struct typemap *typemap_from(struct pt_ext_type *e, size_t n);
void typemap_free(struct typemap *m);
size_t typemap_count(const struct typemap *m);
/* The i-th description the trace carries (i < typemap_count), or NULL. */
const struct pt_ext_type *typemap_at(const struct typemap *m, size_t i);
/* The description of id's payloads for process pid (its own latest, else
 * any process's latest), or NULL. */
const char *typemap_desc(const struct typemap *m, int32_t pid, unsigned id);

/* ------------------------------------------------------------ layout.c */
/* A field of one payload: where it is in the payload.  A string's len
 * leaves its NUL out. */
struct typed_at { struct pt_ext_field f; size_t off, len; };
/* The fields of desc in payload d (len bytes): 0, or -1 if the payload
 * does not fit (why: the reason, when why_cap). */
int typed_layout(const char *desc, const unsigned char *d, size_t len, struct typed_at *at,
                 size_t *n, char *why, size_t why_cap);

/* ------------------------------------------------------------ threads.c */
struct thrmap; /* the thread identities a trace carries */
struct thrmap *thrmap_load(trace_id_t trid);    /* NULL: no memory */
/* The same from entries already read (a log's summary): takes e (malloc'd). */
struct thrmap *thrmap_from(struct pt_ext_thread *e, size_t n);
void thrmap_free(struct thrmap *m);
size_t thrmap_count(const struct thrmap *m);
/* The i-th identity of m (i < thrmap_count), or NULL. */
const struct pt_ext_thread *thrmap_at(const struct thrmap *m, size_t i);
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
/* The identities writer (pid, thread) had, in time order: how many, the
 * first at *first. */
size_t thrmap_ids(const struct thrmap *m, int32_t pid, uint64_t thread,
                  const struct pt_ext_thread **first);
/* Thread t of l (tlog.th) at time ts as every command names it: "PID/TID"
 * into who (the kernel TID; "PID/N", its number in its process, when the
 * trace does not say) and its name then into name ("" if none); either
 * may be NULL.  *tid: the kernel TID, or -1. */
void tlog_thread_id(const struct tlog *l, uint32_t t, uint64_t ts, char *who, size_t who_cap,
                    char *name, size_t name_cap, int64_t *tid);
/* Every identity writer (pid, thread) had: "5678 main, worker-3; 5690 w". */
void thrmap_all(const struct thrmap *m, char *buf, size_t cap, int32_t pid, uint64_t thread);

/* ------------------------------------------------------------ where.c */
/* --where EXPR: comparisons of typed payload fields (where.c's comment has
 * the grammar).  where_parse(): the expression, or NULL with the reason
 * in err.  where_eval(): whether an event matches, get() giving the value
 * of a field of it (0), or -1 when it has none (the comparison is false).
 * where_fields(): fn on each comparison (its field, operator and
 * literal), stopping at the first non-zero it returns. */
#define WHERE_MAX_LEN 4096
#define WHERE_MAX_DEPTH 64
#define WHERE_MAX_NODES 512
#define WHERE_FIELD_MAX 32      /* a field name's length, NUL included (PT_EXT_FIELD_NAME) */
enum { WHERE_EQ, WHERE_NE, WHERE_LT, WHERE_LE, WHERE_GT, WHERE_GE };
enum { WV_INT = 1, WV_UINT, WV_FLOAT, WV_STR };
struct where_val { int kind; int64_t i; uint64_t u; double f; const char *s; size_t n; };
struct where;
typedef int (*where_get)(void *arg, const char *field, struct where_val *v);
struct where *where_parse(const char *expr, char *err, size_t cap);
int where_eval(const struct where *w, where_get get, void *arg);
int where_fields(const struct where *w, int (*fn)(void *arg, const char *field, int op,
                                                  const struct where_val *lit), void *arg);
void where_free(struct where *w);
/* where_eval()'s get() on a payload laid out by typed_layout() (filter.c) */
struct typed_at;
struct where_typed { const struct typed_at *at; size_t n; const unsigned char *d; };
int where_get_typed(void *arg, const char *field, struct where_val *v);
/* A glob (* any run, ? any one character, \ quotes the next) against the
 * n bytes at s: 1 if it matches.  Linear, whatever the pattern. */
int glob_match(const char *pat, const char *s, size_t n);

/* ------------------------------------------------------------ filter.c */
/* The events a reading command keeps (show, stats, export, live, view):
 * --pid, --thread (PID/TID as show prints it, a kernel TID, a thread name
 * glob or a pthread_t 0x...), --tid (kernel TIDs), --name (thread name
 * globs), --type and --exclude (event type globs), --where EXPR.  Each
 * option given must pass (a list: any of its values).  Zero-initialize;
 * filter_option() for each option (FILTER_LONGOPTS in the command's
 * table): 0, or EXIT_USAGE after a message.  filter_check() once the log's
 * totals are known: every value must match something in it, every field
 * of --where must be described (0, or 1 after a message).  filter_event():
 * whether e passes (1); l the tlog it was read from.  A tlog with
 * l->filter set gives only the events that pass (tlog_next). */
enum { FILT_PID = 0x4000, FILT_THREAD, FILT_TID, FILT_NAME, FILT_TYPE, FILT_EXCLUDE, FILT_WHERE };
#define FILTER_LONGOPTS \
	{ "pid", required_argument, NULL, FILT_PID }, \
	{ "thread", required_argument, NULL, FILT_THREAD }, \
	{ "tid", required_argument, NULL, FILT_TID }, \
	{ "name", required_argument, NULL, FILT_NAME }, \
	{ "type", required_argument, NULL, FILT_TYPE }, \
	{ "event", required_argument, NULL, FILT_TYPE }, \
	{ "exclude", required_argument, NULL, FILT_EXCLUDE }, \
	{ "where", required_argument, NULL, FILT_WHERE }
#define FILTER_MAXSEL 64
struct tsel { int kind, opt; int32_t pid; uint64_t v; const char *s; };
struct evfilter {
	struct tsel sel[FILTER_MAXSEL]; /* --pid, --thread, --tid, --name values */
	int nsel;
	const char *types[FILTER_MAXSEL], *excl[FILTER_MAXSEL];
	int ntypes, nexcl;
	char *where_text;
	struct where *where;
	char *strs[4 * FILTER_MAXSEL];  /* copies of the lists' text (malloc'd) */
	int nstrs;
	int on;                         /* any option given */
	/* per event type: 1 kept, 2 not, 0 not known yet */
	unsigned char type_ok[PT_NIDS];
	/* per thread (tlog.th): 1 kept, 0 not, 2 by its identity at the
	 * event's time (renamed, or a pthread_t reused), -1 not known yet */
	signed char *th_ok;
	size_t nth_ok;
	int live;                       /* live: threads and types still come; nothing checked */
	const void *types_of;           /* the typemap the descriptions below came from */
	int32_t desc_pid[PT_NIDS];
	const char *desc[PT_NIDS];
};
extern const char filter_help[];
int filter_option(struct evfilter *f, int opt, const char *arg);
int filter_check(struct evfilter *f, const struct tlog *l);
int filter_event(struct evfilter *f, const struct tlog *l, const struct tev *e);
int filter_threads(const struct evfilter *f);  /* any of --pid, --thread, --tid, --name */
int filter_type(struct evfilter *f, const struct tlog *l, unsigned id); /* type id passes */
void filter_free(struct evfilter *f);

/* ------------------------------------------------------------ livestream.c */
/* A stream without a log for process pid (live, top): 0, or 1 after a
 * message.  live_drain() reads what is ready (waiting up to wait_ms for
 * the first), each event through fn (non-zero: stop, an error it said):
 * the count read, or -1.  live_add(): the event into l, its type's name
 * asked of the stream when new. */
int live_stream(pid_t pid, const char *name, int policy, size_t size, int inherit,
                const char *exclude, trace_id_t *trid);
typedef int (*live_fn)(void *arg, trace_id_t trid, const struct posix_trace_event_info *ev,
                       const void *data, size_t len);
long live_drain(trace_id_t trid, int wait_ms, live_fn fn, void *arg);
int live_add(struct tlog *l, trace_id_t trid, const struct posix_trace_event_info *ev,
             const void *data, size_t len, struct tev *e);

#endif
