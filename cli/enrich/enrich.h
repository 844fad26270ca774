/*
 * enrich.h -- the second layer of the posixtrace command (cli/enrich/):
 * what a trace's events mean beyond their fields.  Addresses as symbols
 * and source lines (symbolize.c, from the ELF files (elf.c) and the map
 * of loaded code (maps.c)), spans paired from begin and end events
 * (spans.c), payloads decoded by their description (typed.c), and the
 * index of a log by time and thread that `view` and the HTML export
 * answer from (vindex.c) and its cache (vcache.c).  Below it: read.h.
 */
#ifndef POSIXTRACE_CLI_ENRICH_H
#define POSIXTRACE_CLI_ENRICH_H

#include "../read/read.h"

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
/* The same, and in *id a number (not 0) given to this text alone, for as
 * long as z is open (0: none) */
const char *symz_lookup_id(struct symz *z, int32_t pid, uint64_t ts, uint64_t addr, uint64_t *id);
/* The same as parts: the object (path as recorded) and the address in
 * it, the function and the source line when its symbols say ("" and
 * 0 otherwise).  0, or -1: no known object holds addr. */
struct symz_site { char object[PT_EXT_OBJ_PATH], function[256], file[512]; int line;
                   uint64_t offset; };
int symz_site(struct symz *z, int32_t pid, uint64_t ts, uint64_t addr, struct symz_site *out);
/* The program process pid ran at time ts (the first object of its map
 * then; a forked child's, its parent's at the fork), or NULL. */
const char *symz_exe(struct symz *z, int32_t pid, uint64_t ts);
int symz_have_maps(const struct symz *z);
void symz_close(struct symz *z);
int symz_backend_dwarf(void);

/* ------------------------------------------------------------ spans.c */
/* Spans: a begin event and its end event (docs/design.md, "Spans").  By
 * convention types NAME/begin and NAME/end pair on one thread (nested,
 * last begun first ended), NAME/async-begin and NAME/async-end anywhere,
 * by a key: the first 8 bytes of the payload (zero-padded).  --span
 * BEGIN,END[,NAME][,key[=FIELD]] pairs two other types (key=FIELD: by the
 * value of a described payload field); a type --span names is its alone
 * (its built-in partner becomes a plain event, and spans_check says so).  Truth first: a begin
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
	char keyfield[WHERE_FIELD_MAX]; /* keyed by this described field; "": the first 8 bytes */
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
struct span_mark { int kind; unsigned def, depth; uint64_t start, dur; uint32_t thread, lane;
                   uint8_t paired, replaced; uint64_t flow; };
/* flow (keyed spans, begin and paired end): a number of the span, not 0,
 * the same at its begin and its end, for the exports' flow arrows.
 * SPAN_END: thread is the begin's (keyed spans may end on another).
 * paired: an end (SPAN_END, or SPAN_CUT) that closed an open span (else
 * it had no begin); start is then its begin's time.  lane (keyed spans,
 * begin and paired end): the lowest lane of its definition free at its
 * begin (every span in it ended before), so that the spans of one lane
 * never overlap; replaced (a keyed begin): a span of the same key was
 * open in that lane, and is now incomplete. */
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
/* The definition (spans_stat's index) type id begins or ends, or -1. */
long spans_def_of(struct spans *s, const struct tlog *l, unsigned id);
void spans_end(struct spans *s);                /* the end of the trace: open ones are incomplete */
/* The same-thread spans open on a thread (tlog's index), outermost
 * first: how many, and the definition of the i-th. */
unsigned spans_open(const struct spans *s, uint32_t thread);
unsigned spans_open_def(const struct spans *s, uint32_t thread, unsigned i);
size_t spans_count(const struct spans *s);
const struct span_stat *spans_stat(const struct spans *s, size_t i);
void spans_free(struct spans *s);
extern const char spans_help[];                 /* the --span line of each command's help */

/* ------------------------------------------------------------ typed.c */
/* (where each field is: read.h, typed_layout) */
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

/* ------------------------------------------------------------ vcache.c */
/* Where view keeps its indexes, and when it removes them (the policy is
 * at the top of vcache.c).  A log file's identity: */
struct stat;
struct iovec;
struct vkey { uint64_t dev, ino, size, mtime_s, mtime_ns; };
void vkey_of(struct vkey *k, const struct stat *sb);
/* The cache directory, open (made if create): its fd, or -1 (none, or
 * not private: said if create). */
int vcache_dir(int create);
/* The entry of the log whose identity is k: an fd at the start of its
 * index, *len bytes of it; or -1.  The entry is marked used. */
int vcache_open(int dir, const struct vkey *k, uint64_t *len);
/* n bytes from fd, all: 0, or -1. */
int vcache_read(int fd, void *p, size_t n);
/* Keeps the index (iov) of the log at path, identity k (not if larger
 * than the cap; failures are silent: the next start builds it again). */
void vcache_store(int dir, const struct vkey *k, const char *path, const struct iovec *iov,
                  size_t niov);
/* Removes stale, old and unreadable entries, then the least recently
 * used while over the cap, never keep's (NULL: none).  How many. */
size_t vcache_sweep(int dir, const struct vkey *keep);

/* ------------------------------------------------------------ vindex.c */
/* Event counts per lane (thread), per time bucket, per type slot, at
 * levels of detail: level 0 has nb buckets over [t0, t1], level k
 * nb >> k.  Types are mapped to at most VIX_SLOTS slots (the most
 * frequent types their own, the rest share the last). */
#define VIX_SLOTS 16
#define VIX_MAX_MARKS 65536
/* OVERFLOW, RESUME, ERROR (dur 0), and the no-loss waits
 * (posixtrace_noloss_wait, id PT_EXT_NOLOSS_WAIT: stamped when the wait
 * ended, dur the wait in ns, its thread's lane) */
struct vmark { uint32_t lane; uint16_t id, pad; uint64_t ts, dur; };
struct vlane { int32_t pid; uint64_t tid; };
/* A complete span at least long_ns long (the view's flame chart: a span
 * begun before a window is drawn from here, vquery.c): its begin's lane
 * (lanes are tlog's thread numbers), its end's, its definition's number
 * (spans_stat) and nesting depth (span_mark's). */
struct vspan { uint64_t start, dur; uint32_t lane, elane; uint16_t def, depth; uint32_t pad; };
#define VIX_MAX_LONG (1u << 19)  /* 16 MiB of them at most: long_ns doubles past it */
struct vindex {
	uint64_t t0, t1;          /* first and last timestamp */
	uint64_t nev;
	uint32_t nlanes, nb, nlevels, nslots;
	uint16_t slot_of[PT_NIDS]; /* type id -> slot */
	struct vlane *lanes;
	uint32_t **cnt;           /* per level: nlanes * (nb >> k) * nslots */
	struct vmark *marks;
	uint32_t nmarks, marks_dropped, marks_cap;
	int waits_due;            /* (while building: waits marked, their lengths not read) */
	/* spans (when asked for): those at least long_ns long, and per
	 * lane the most spans open at once (the flame chart's rows) */
	int has_spans;
	uint64_t long_ns;
	struct vspan *sp;
	uint32_t nsp;
	uint16_t *depth;          /* nlanes of them */
	int from_cache;
	struct vkey key;          /* the log's identity */
	double build_s;           /* seconds the build took (0 from cache) */
	const struct tlog *l;     /* (while building) */
};
/* The index of the log l (open, totals known; at its start): from the
 * cache when it has one for this very file (cache >= VIX_CACHE_READ),
 * else built in one pass, and then cached (VIX_CACHE_WRITE).  spans:
 * the long spans too, paired as these --span options say (a second pass
 * when the log has spans; a cache entry made with other options is not
 * used); NULL: none wanted.  The log is left at its start.  0, or 1
 * after a message. */
enum { VIX_CACHE_NONE, VIX_CACHE_READ, VIX_CACHE_WRITE };
int vindex_get(struct vindex *x, struct tlog *l, int cache, const struct span_args *spans);
/* Only from the cache, for the log at path (not opened): 0, or -1. */
int vindex_cached(struct vindex *x, const char *path, const struct span_args *spans);
/* view: the cache swept (vcache_sweep), keeping x's entry. */
void vindex_sweep(const struct vindex *x);
void vindex_free(struct vindex *x);
uint64_t vindex_bucket_ns(const struct vindex *x, unsigned level);
/* Events of lane (or all when lane == UINT32_MAX) in [from, to] (ns since the epoch), as the index counts
 * them (buckets overlapping the window: an upper bound). */
uint64_t vindex_estimate(const struct vindex *x, uint64_t from, uint64_t to);

#endif
