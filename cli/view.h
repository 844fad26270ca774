/*
 * view.h -- what the parts of `posixtrace view` share: the request
 * checks and routing (view_req.c, no HTTP library: fuzzed on its own),
 * the index of a log (vindex.c), the JSON answers (vquery.c), the page
 * (view_assets.c) and the server (view.c, libmicrohttpd).
 */
#ifndef POSIXTRACE_VIEW_H
#define POSIXTRACE_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include "cli.h"

/* ------------------------------------------------------------ view_req.c */
#define VIEW_TOKEN_LEN 32 /* hex characters: 128 random bits */
enum vroute { VR_PAGE, VR_META, VR_QUERY, VR_EVENT };
struct vreq {
	enum vroute route;
	uint64_t from, to;   /* ns after the trace's first event (VR_QUERY) */
	unsigned cols;       /* pixel columns (VR_QUERY), 1..VIEW_MAX_COLS */
	uint64_t at;         /* ns after the first event (VR_EVENT) */
	uint32_t lane;       /* VR_EVENT */
	uint64_t n;          /* its place among the events at that time and lane */
};
#define VIEW_MAX_COLS 8192
/* The value of a query-string argument, or NULL. */
typedef const char *(*varg_fn)(void *ctx, const char *key);
/* Checks a request and says what it asks for: 0, or the HTTP status to
 * refuse it with (403: no or a wrong token, a Host that is not this
 * server's; 404: no such path; 405: not GET; 400: a bad argument).
 * port: the server's, for the Host check; token: VIEW_TOKEN_LEN chars. */
int view_route(const char *method, const char *path, const char *host, unsigned port,
               const char *token, varg_fn arg, void *ctx, struct vreq *out);
int view_host_ok(const char *host, unsigned port);
int view_parse_u64(const char *s, uint64_t *out); /* decimal, whole string */

/* ------------------------------------------------------------ vbuf.c */
struct vbuf { char *p; size_t n, cap; int oom; };
void vb_put(struct vbuf *b, const char *s, size_t n);
void vb_printf(struct vbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vb_str(struct vbuf *b, const char *s);  /* a JSON string */

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
struct vmark { uint32_t lane; uint16_t id; uint64_t ts; }; /* OVERFLOW, RESUME, ERROR */
struct vlane { int32_t pid; uint64_t tid; };
struct vindex {
	uint64_t t0, t1;          /* first and last timestamp */
	uint64_t nev;
	uint32_t nlanes, nb, nlevels, nslots;
	uint16_t slot_of[PT_NIDS]; /* type id -> slot */
	struct vlane *lanes;
	uint32_t **cnt;           /* per level: nlanes * (nb >> k) * nslots */
	struct vmark *marks;
	uint32_t nmarks, marks_dropped;
	int from_cache;
	struct vkey key;          /* the log's identity */
	double build_s;           /* seconds the build took (0 from cache) */
	const struct tlog *l;     /* (while building) */
};
/* The index of the log l (open, totals known; at its start): from the
 * cache when it has one for this very file (cache >= VIX_CACHE_READ),
 * else built in one pass, and then cached (VIX_CACHE_WRITE).  The log is
 * left at its start.  0, or 1 after a message. */
enum { VIX_CACHE_NONE, VIX_CACHE_READ, VIX_CACHE_WRITE };
int vindex_get(struct vindex *x, struct tlog *l, int cache);
/* Only from the cache, for the log at path (not opened): 0, or -1. */
int vindex_cached(struct vindex *x, const char *path);
/* view: the cache swept (vcache_sweep), keeping x's entry. */
void vindex_sweep(const struct vindex *x);
void vindex_free(struct vindex *x);
uint64_t vindex_bucket_ns(const struct vindex *x, unsigned level);
/* Events of lane (or all when lane == UINT32_MAX) in [from, to] (ns since the epoch), as the index counts
 * them (buckets overlapping the window: an upper bound). */
uint64_t vindex_estimate(const struct vindex *x, uint64_t from, uint64_t to);

/* ------------------------------------------------------------ vquery.c */
struct vsrv {
	struct tlog *l;           /* the totals, names, threads (/meta) */
	/* the log open for reading events: l itself, or (view.c) one opened
	 * in the background while /meta and the counts are already served;
	 * NULL if it could not be opened */
	struct tlog *(*reader)(struct vsrv *s);
	struct tlog *rd;          /* what reader gave */
	void *ctx;
	struct vindex *x;
	struct symz *z;
	uint32_t *lane_of;        /* tlog thread index -> index lane */
	size_t nlane_of;          /* (for rd's thread numbers) */
	uint64_t max_events;      /* a window with fewer gets its events */
	const struct span_args *span_args; /* spans drawn with them; NULL: none */
};
/* The JSON answer to a routed request into b: 0, or an HTTP status. */
int vq_answer(struct vsrv *s, const struct vreq *r, struct vbuf *b);
int vq_init(struct vsrv *s, struct tlog *l, struct vindex *x, struct symz *z);
void vq_free(struct vsrv *s);

/* ------------------------------------------------------------ html_overview.c */
/* export --format html of a large log: the window [*lo, *hi] cut to hold
 * at most max events (1 if cut), and the overview of the whole trace. */
int html_window(const struct vindex *x, uint64_t *lo, uint64_t *hi, uint64_t max);
void html_overview(FILE *f, const struct tlog *l, const struct vindex *x, const unsigned *lane,
                   uint64_t lo, uint64_t hi, int lane_h, int label_w);

/* ------------------------------------------------------------ view_assets.c */
extern const char view_page[];

#endif
