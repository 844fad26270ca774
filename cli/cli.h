/*
 * cli.h -- what the parts of the posixtrace command share.
 *
 * The command uses only the public API of the library (<trace.h>).
 * Exit codes: 0 success, 1 error, 2 usage; `record` passes the traced
 * program's own status through.
 */
#ifndef POSIXTRACE_CLI_H
#define POSIXTRACE_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <trace.h>

struct pt_ext_obj;
struct tlog;
struct tev;
#define PT_CLI_VERSION "0.1.0"
#define EXIT_USAGE 2
#define PT_NIDS 1024 /* event ids are below this (docs/implementation-defined.md) */

/* ------------------------------------------------------------ util.c */
extern const char *prog_cmd;  /* "posixtrace record", for messages */
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int parse_size(const char *s, size_t *out);
int parse_seconds(const char *s, double *out);
int parse_pid(const char *s, pid_t *out);
uint64_t now_realtime_ns(void);
uint64_t now_mono_ns(void);
void fmt_rel(char *buf, size_t cap, uint64_t ns);            /* s.nnnnnnnnn */
void fmt_abs(char *buf, size_t cap, uint64_t ns);            /* UTC ISO 8601 */
void fmt_duration(char *buf, size_t cap, uint64_t ns);       /* "1.23 s", "45.6 ms" */
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
void hist_free(struct hist *h);

/* ------------------------------------------------------------ spans.c */
/* Spans: a begin event and its end event (docs/design.md, "Spans").  By
 * convention types NAME/begin and NAME/end pair on one thread (nested,
 * last begun first ended), NAME/async-begin and NAME/async-end anywhere,
 * by a key: the first 8 bytes of the payload (zero-padded).  --span
 * BEGIN,END[,NAME][,key] pairs two other types.  Truth first: a begin
 * or end that cannot be paired for sure (no partner, or a lost-event gap
 * between them, or still open at the end) makes an incomplete span, and
 * has no duration.  Memory: the open spans and a histogram per span. */
#define SPAN_SLOWEST 10
#define SPAN_MAX 256            /* span definitions */
struct span_inst { uint64_t start, dur; uint32_t thread; };
struct span_stat {
	char name[TRACE_EVENT_NAME_MAX + 1];
	char begin[TRACE_EVENT_NAME_MAX + 1], end[TRACE_EVENT_NAME_MAX + 1];
	int keyed;
	uint64_t incomplete;        /* complete ones: h.n */
	struct hist h;              /* durations of the complete spans */
	struct span_inst slow[SPAN_SLOWEST]; /* the slowest, slowest first */
	unsigned nslow;
	uint64_t *inside;           /* per thread: ns inside the outermost span (same-thread spans) */
	size_t ninside;
};
/* What an event did: kind SPAN_NONE (not a span event), SPAN_BEGIN,
 * SPAN_END (dur, start: a complete span), SPAN_CUT (an end counted
 * incomplete).  depth: the open same-thread spans around the event on
 * its thread (a begin or end: those around its span). */
enum { SPAN_NONE, SPAN_BEGIN, SPAN_END, SPAN_CUT };
struct span_mark { int kind; unsigned def, depth; uint64_t start, dur; uint32_t thread; };
/* SPAN_END: thread is the begin's (keyed spans may end on another). */
struct spans;
struct spans *spans_new(void);                  /* NULL: out of memory */
int spans_option(struct spans *s, const char *arg); /* --span: 0, or EXIT_USAGE after a message */
/* The --span options a command collects (span_arg), then its spans:
 * 0, 1 (out of memory) or EXIT_USAGE, after a message. */
struct span_args { const char *v[SPAN_MAX]; int n; };
int span_arg(struct span_args *a, const char *arg);  /* 0, or EXIT_USAGE after a message */
int spans_make(const struct span_args *a, struct spans **out);
/* After a log's names are read: each --span type is one of its types (0,
 * or 1 after a message). */
int spans_check(const struct spans *s, const struct tlog *l);
int spans_event(struct spans *s, const struct tlog *l, const struct tev *e, struct span_mark *m);
/* Whether a type of the log (its names and counts) is a span's begin or end. */
int spans_any(struct spans *s, const struct tlog *l);
void spans_end(struct spans *s);                /* the end of the trace: open ones are incomplete */
size_t spans_count(const struct spans *s);
const struct span_stat *spans_stat(const struct spans *s, size_t i);
void spans_free(struct spans *s);
extern const char spans_help[];                 /* the --span line of each command's help */
/* spans_report.c: stats' part on spans, as text and as the JSON "spans"
 * member (docs/posixtrace.1, STATS JSON); times relative to t0. */
void spans_print(FILE *f, const struct spans *s, const struct tlog *l, uint64_t t0);
void spans_json(FILE *f, const struct spans *s, const struct tlog *l, uint64_t t0);
/* A complete span (m) as Chrome trace events: a complete event ("X") on
 * its thread, or for a keyed span an async pair ("b"/"e", id n). */
void spans_chrome(FILE *f, const struct spans *s, const struct tlog *l, const struct span_mark *m,
                  uint32_t end_thread, uint64_t t0, uint64_t n);

/* ------------------------------------------------------------ names.c */
const char *system_event_name(unsigned id);     /* NULL for user ids */
int system_event_id(const char *name, trace_event_id_t *id);
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
struct tthread { int32_t pid; uint64_t tid; unsigned idx; uint32_t proc; uint64_t count, first, last; };
struct tproc { int32_t pid; unsigned nthreads; uint64_t count, first, last; };
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
	/* a log that is not whole */
	int unfinished;                /* no final status (END block): cut short */
	uint64_t damaged;              /* stretches that could not be read */
	long long file_size;
	/* the map of loaded code the log carries (ext.h's struct pt_ext_obj) */
	struct pt_ext_obj *objs;
	size_t nobjs;
	/* thread identities and payload descriptions (typed.h), read with the
	 * names: bounded by threads and types, never by events; NULL: none */
	struct thrmap *thrs;
	struct typemap *types;
	int32_t recorder;              /* its pid, shown as the trace's (pid 0); 0: none or --all */
	struct pt_ext_proc *procs;     /* who the processes were (parent, command line) */
	size_t nprocs;
	/* reading (tlog.c) */
	int totals;                    /* the tables hold the whole trace: later passes count nothing */
	int summary;                   /* they come from the log's summary, not from reading it */
	trace_id_t trid_;
	int fd_, open_;
	unsigned char *buf_;
	uint64_t pass_n_;              /* events read in this pass */
	uint64_t pass_at_;             /* this pass's loss count at the last RESUME */
	void *hash_;                   /* (pid, tid) -> thread index */
	uint32_t last_th_;             /* the thread of the last event */
	size_t hcap_;
};
/* A log: tlog_open() reads its attributes, names, map of loaded code,
 * thread identities and payload descriptions;
 * tlog_next() gives its events one by one (1, or 0 at the end, -1 after
 * a message); tlog_end() after the last notes the final counts.
 * tlog_scan() reads the whole log for its totals and goes back to its
 * start: the next pass gives the same events and thread numbers and
 * leaves the totals alone.  tlog_load() = tlog_open() + the totals: from
 * the summary the log carries (format 5 and later), else tlog_scan(). */
int tlog_open(struct tlog *l, const char *path);   /* 0, or 1 with a message */
int tlog_next(struct tlog *l, struct tev *e);
int tlog_scan(struct tlog *l);                     /* 0, or 1 with a message */
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
struct pt_ext_batch;
int tlog_next_batch(struct tlog *l, struct pt_ext_batch *b, uint32_t *thread_of);
/* After the totals: reading ends once no event stamped at or before ts
 * can follow (a late one still comes; events after ts may come before
 * the end).  0, or 1 with a message. */
int tlog_until(struct tlog *l, uint64_t ts);
int tlog_load(struct tlog *l, const char *path);   /* 0, or 1 with a message */
/* The totals only, from the log's summary when it has one (no events
 * read: l->summary), else by reading it (tlog_load). */
int tlog_totals(struct tlog *l, const char *path);
void tlog_free(struct tlog *l);
/* --all: keep the recorder's own process (else its events are the
 * trace's, pid 0, and its threads and loaded objects are not shown). */
extern int tlog_all;
const char *tlog_name(const struct tlog *l, unsigned id, char *buf, size_t cap);
const struct tproc *tlog_proc(const struct tlog *l, int32_t pid); /* after the totals */
/* The program's processes and threads, the ones record, info and live
 * count: not the trace's own line (pid 0) nor process `also` (the
 * recorder's pid when it is known otherwise, else 0). */
void tlog_program_counts(const struct tlog *l, int32_t also, unsigned *procs, unsigned *threads);
/* Incremental use (live): each event read from trid becomes e. */
void tlog_init(struct tlog *l);
int tlog_add(struct tlog *l, trace_id_t trid, const struct posix_trace_event_info *ev,
             const void *data, size_t len, struct tev *e);
void tlog_finish(struct tlog *l);   /* per-process tables, sorted by pid */
/* What a log that is not whole lacks: tlog_unfinished is the text for
 * l->unfinished, tlog_damage_text() the words after l->damaged's count;
 * tlog_warn() notes both cases on stderr. */
extern const char tlog_unfinished[];
void tlog_damage_text(const struct tlog *l, char *buf, size_t cap); /* after the count */
void tlog_warn(const struct tlog *l);

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
/* after it, when the stream lost events: what to do about it, or "" */
const char *tlog_loss_hint(const struct tlog *l);

/* ------------------------------------------------------------ elf.c */
int elf_open(const char *path); /* a regular file only, never blocking; -1 otherwise */
int elf_build_id(const char *path, char *hex, size_t cap);   /* 0 = found */
int elf_load_bias(const char *path, uint64_t map_start, uint64_t map_off, uint64_t *bias);

/* ------------------------------------------------------------ maps.c */
struct mapping { uint64_t start, end, off; char *path; char *build_id; };
struct snapshot { int32_t pid; uint64_t ts; char *exe; struct mapping *m; size_t n; };
struct mapsdb { struct snapshot *s; size_t n, cap; };
int maps_read_proc(pid_t pid, struct snapshot *s);          /* one live snapshot */
int mapsdb_load(struct mapsdb *db, const char *path);       /* 0, -1 if no file */
int mapsdb_add_live(struct mapsdb *db, pid_t pid);
const struct mapping *mapsdb_find(const struct mapsdb *db, int32_t pid, uint64_t ts,
                                  uint64_t addr, int *other_pid);
const char *mapsdb_exe(const struct mapsdb *db, int32_t pid);
void mapsdb_free(struct mapsdb *db);
void snapshot_free(struct snapshot *s);

/* ------------------------------------------------------------ symbolize.c */
struct symz;
/* From the map of loaded code the log carries (l), else from FILE.maps
 * beside an older log; live: the stream's map (symz_live), else
 * /proc/PID/maps.  Never NULL. */
struct symz *symz_open(const struct tlog *l, const char *log_path, int live);
void symz_live(struct symz *z, trace_id_t trid);          /* live: the stream read */
/* The map of loaded code: per pid, its objects (info) */
size_t symz_objects(const struct symz *z, const struct pt_ext_obj **out);
const char *symz_lookup(struct symz *z, int32_t pid, uint64_t ts, uint64_t addr);
const char *symz_exe(struct symz *z, int32_t pid);
int symz_have_maps(const struct symz *z);
void symz_close(struct symz *z);
int symz_backend_dwarf(void);

/* ------------------------------------------------------------ format.c */
/* The payload as text in quotes, or hex; at most max bytes shown. */
void fmt_data(char *out, size_t cap, const unsigned char *d, size_t len, size_t max,
              int *is_text);
int fmt_is_text(const unsigned char *d, size_t len); /* plausibly text (format.c) */
void fmt_event_data(char *out, size_t cap, const struct tlog *l, const struct tev *e);
size_t json_str(char *out, size_t cap, const char *s);      /* "..." escaped */
void fmt_line(FILE *f, const struct tlog *l, const struct tev *e, uint64_t t0, uint64_t prev,
              int absolute, int name_w, struct symz *z);
struct span_mark;
void fmt_line_span(FILE *f, const struct tlog *l, const struct tev *e, uint64_t t0, uint64_t prev,
                   int absolute, int name_w, struct symz *z, const struct span_mark *sm);

/* ------------------------------------------------------------ commands */
int cmd_record(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_live(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_view(int argc, char **argv);   /* view.c */

/* ------------------------------------------------------------ live.c */
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
/* The target of live and top: a PID, or the program after "--" (prog:
 * its argv, else NULL).  live_args() checks them (0, or EXIT_USAGE after
 * a message; *pid from pid_arg); live_start() starts the program paused
 * (or checks the pid), makes and starts the stream, lets the program
 * go: 0, or the exit status after a message. */
struct target;
int live_args(const char *pid_arg, const char *extra, char **prog, const char *verb, pid_t *pid);
int live_start(struct target *t, char **prog, pid_t *pid, const char *name, int policy,
               size_t size, int inherit, const char *exclude, const char *what,
               trace_id_t *trid);
int live_add(struct tlog *l, trace_id_t trid, const struct posix_trace_event_info *ev,
             const void *data, size_t len, struct tev *e);

/* ------------------------------------------------------------ target.c */
struct target {
	pid_t pid;
	int child;        /* we launched it (and can wait for it) */
	int go_fd;        /* write end: releases the paused child */
	int exec_fd;      /* read end: EOF when exec succeeded, else errno */
	int pidfd;
	int exited, status;
	char join[128];   /* launched: the stream its tree joins (POSIXTRACE_JOIN), or "" */
};
int target_launch(struct target *t, char **argv);
int target_release(struct target *t);         /* 0, or the exec errno */
int target_attach(struct target *t, pid_t pid);
void target_check_library(pid_t pid, const char *what);  /* warns if it has none */
void target_check_privileged(char **argv, const char *what); /* warns if setuid... */
int target_poll(struct target *t);            /* 1 once the target has ended */
void target_forward(struct target *t, int sig);
int target_exit_code(const struct target *t);
void signals_block(void);
void signals_unblock(void); /* in the main thread, once the other threads exist */
int signals_take(int timeout_ms, int *from_tty);  /* a signal, or 0 */

/* ------------------------------------------------------------ summary.c */
void print_summary(FILE *f, const char *log_path, pid_t root);

/* ------------------------------------------------------------ export_*.c */
/* Each reads the events of l (its totals known: tlog_load) in one pass. */
int export_chrome(struct tlog *l, struct symz *z, struct spans *sp, FILE *out);
/* html: every event in [from, to] (ns since the epoch; 0, UINT64_MAX: all)
 * when they fit a page, else the overview and a window (export_html.c) */
int export_html(struct tlog *l, struct symz *z, FILE *out, uint64_t from, uint64_t to);
int export_ctf(struct tlog *l, struct symz *z, const char *dir, int force);

#endif
