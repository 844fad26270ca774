/*
 * export_ctf.c -- the log as a CTF 1.8 trace directory: `metadata` (TSDL
 * text) and a few binary stream files, `stream_K` (all of stream class
 * 0), little-endian, every field byte aligned.  Written as the log is
 * read: the log gives its events in time order across threads, so
 * nearly all of them go to one stream, the thread in each event's
 * context as LTTng writes it (write_streams says how the few others are
 * placed); babeltrace2 merges the streams by time.  Nothing is sorted or
 * held but each stream's packet being built (256 KiB).
 *
 *   packet header   u32 magic 0xC1FC1FC1, u8 uuid[16], u32 stream_id
 *   packet context  u64 timestamp_begin, timestamp_end (clock values),
 *                   u64 content_size, packet_size (bits),
 *                   u64 events_discarded
 *   event header    5-bit class id + low 27 bits of the time, or 31 and
 *                   then u32 class id, u64 time (LTTng's compact header)
 *   event context   i32 pid, i32 vtid, i32 tid (both the kernel TID, as
 *                   LTTng names them), u64 pthread_id (the pthread_t),
 *                   string procname (the
 *                   thread's name), i64 ppid (the process's parent, 0
 *                   when the trace does not say)
 *   event fields    u16 site: the number of the call site among its
 *                   type's, an enumeration (one per type) whose labels
 *                   ("0x401a2b worker+0x1a (app.c:42)": the address, and
 *                   the location as `show` prints it when it is known)
 *                   the metadata lists once each, written after the
 *                   streams, when every site is known (u32 when a type
 *                   has more than 65536: the export then starts again,
 *                   tlog_rewind); with
 *                   --raw-addresses u64 addr (shown in hex) instead;
 *                   u16 payload_len (u32 when the max data size is beyond
 *                   65535), u8 payload[payload_len], or the fields of a
 *                   described payload (typed.h)
 *
 * The clock "realtime" counts nanoseconds (freq 1e9) from offset_s, the
 * second of the first event.  A thread's clock never goes back: an event
 * stamped before the one before it in its thread (a nested writer, a
 * signal handler's) gets that one's time in the header (its fields keep
 * nothing else of time).  A packet holds about 256 KiB of events; the
 * losses are marked in stream 0, the stream of the events the reader
 * synthesizes (pid 0).  An OVERFLOW event starts a packet
 * and the RESUME after it ends it, so that a reader places the loss
 * between the events around it.  events_discarded counts the events lost
 * so far: each gap adds its count (losses.c; one per gap for a log that
 * does not count them).  A reader learns a count from the difference
 * with the packet before, so a trace that lost events starts with an
 * empty packet (count 0) at its first event's time; events the log itself
 * overwrote are the count of the gap the library puts before its oldest
 * event (docs/log-format.md), so they come first too.  What the
 * final count adds beyond the gaps goes in an empty packet at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "write.h"

#define HDR_BYTES 64 /* packet header 24, context 40 */
#define PACKET_TARGET 262144

struct buf { unsigned char *p; size_t n, cap; };

static int put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		size_t ncap = b->cap ? b->cap : 65536;
		while (ncap < b->n + n)
			ncap *= 2;
		unsigned char *p = realloc(b->p, ncap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = ncap;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
	return 0;
}

static int put_le(struct buf *b, uint64_t v, int bytes)
{
	unsigned char t[8];
	ctf_le(t, v, bytes);
	return put(b, t, (size_t)bytes);
}

/* The call sites met, each written once per event type: its label (the
 * address, then the location as `show` prints it when it is known:
 * "0x401a2b worker+0x1a (app.c:42)") -> a number among the sites of the
 * type, which is all an event carries (its class's enumeration "site",
 * whose labels the metadata lists at the end).  Numbered per type, as a
 * reader looks a label up among its enumeration's (babeltrace2 goes
 * through all of them for each event it prints): a type is recorded from
 * a few places.  Bounded by the code locations of the trace, never by
 * events. */
struct site { char *lab; uint32_t num; uint16_t type; };
struct sites {
	struct site *e;
	uint32_t n, cap, *h, hcap;
	uint32_t per[PT_NIDS]; /* sites of each type */
};

static uint32_t site_hash(unsigned type, const char *s)
{
	uint32_t h = 2166136261u ^ type * 0x9e3779b9u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The number of label s among type's, made on first sight; UINT32_MAX
 * out of memory. */
static uint32_t site_of(struct sites *t, unsigned type, const char *s)
{
	if ((t->n + 1) * 2 > t->hcap) {
		uint32_t ncap = t->hcap ? 2 * t->hcap : 1024;
		uint32_t *n = ncap ? calloc(ncap, sizeof *n) : NULL;
		if (!n)
			return UINT32_MAX;
		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t j = site_hash(t->e[i].type, t->e[i].lab) & (ncap - 1);
			while (n[j])
				j = (j + 1) & (ncap - 1);
			n[j] = i + 1;
		}
		free(t->h);
		t->h = n, t->hcap = ncap;
	}
	uint32_t j = site_hash(type, s) & (t->hcap - 1);
	for (; t->h[j]; j = (j + 1) & (t->hcap - 1)) {
		const struct site *x = &t->e[t->h[j] - 1];
		if (x->type == type && !strcmp(x->lab, s))
			return x->num;
	}
	if (t->n == t->cap) {
		uint32_t ncap = t->cap ? 2 * t->cap : 256;
		struct site *n = ncap > t->cap ? realloc(t->e, ncap * sizeof *n) : NULL;
		if (!n)
			return UINT32_MAX;
		t->e = n, t->cap = ncap;
	}
	char *lab = strdup(s);
	if (!lab)
		return UINT32_MAX;
	t->e[t->n] = (struct site){ lab, t->per[type]++, (uint16_t)type };
	t->h[j] = ++t->n;
	return t->e[t->n - 1].num;
}

static void sites_free(struct sites *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->e[i].lab);
	free(t->e);
	free(t->h);
}

/* The event classes: one per event type of the trace, and for a type
 * whose payloads a program described (enrich.h) a second one of the same
 * name with the raw payload, for those that do not fit.  Class ids go
 * to the most frequent types first, so that most events get the 4-byte
 * compact header (class id below 31). */
struct classes {
	uint16_t cid[PT_NIDS];        /* the class of a type's events */
	uint16_t raw[PT_NIDS];        /* a described type's raw class */
	const char *desc[PT_NIDS];    /* the description its class declares */
	unsigned n;
};

static const struct tlog *sort_log;
static int by_count(const void *a, const void *b)
{
	uint64_t x = sort_log->count[*(const uint16_t *)a], y = sort_log->count[*(const uint16_t *)b];
	return x > y ? -1 : x < y ? 1 : *(const uint16_t *)a - *(const uint16_t *)b;
}

/* The description type id's payloads have: the first process's that has
 * one (typemap_desc(), which falls back on any process's).  A process
 * that described it otherwise gets the raw class. */
static const char *class_desc(const struct tlog *l, unsigned id)
{
	if (id < POSIX_TRACE_UNNAMED_USEREVENT || !l->types)
		return NULL;
	for (size_t i = 0; i < l->npr; i++) {
		const char *d = typemap_desc(l->types, l->pr[i].pid, id);
		if (d)
			return d;
	}
	return NULL;
}

static void make_classes(const struct tlog *l, struct classes *c)
{
	uint16_t order[PT_NIDS];
	unsigned n = 0;
	char tsdl[8192];

	memset(c, 0, sizeof *c);
	for (unsigned id = 0; id < PT_NIDS; id++)
		if (l->count[id])
			order[n++] = (uint16_t)id;
	sort_log = l;
	qsort(order, n, sizeof *order, by_count);
	for (unsigned i = 0; i < n; i++)
		c->cid[order[i]] = (uint16_t)c->n++;
	for (unsigned i = 0; i < n; i++) {
		const char *d = class_desc(l, order[i]);
		if (d && typed_tsdl_fields(tsdl, sizeof tsdl, d, "") == 0) {
			c->desc[order[i]] = d;
			c->raw[order[i]] = (uint16_t)c->n++;
		}
	}
}

static int write_metadata(const struct tlog *l, FILE *f, const unsigned char *uuid,
                          const unsigned char *cuuid, uint64_t offset_s,
                          const struct sites *sites, int site_bytes, const struct classes *c,
                          int wide)
{
	char name[TRACE_NAME_MAX] = "", tmp[32];
	static char tsdl[8192];

	posix_trace_attr_getname(&l->attr, name);
	ctf_tsdl_trace(f, uuid, 0);
	fprintf(f, "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
	           "typealias integer { size = 8; align = 8; signed = true; encoding = UTF8; } "
	           ":= char_t;\n\n");
	ctf_tsdl_env(f, (const char *const[]){ "trace_name", name, "log", l->path, NULL });
	ctf_tsdl_clock(f, cuuid, offset_s);
	fprintf(f, "typealias integer {\n\tsize = 27; align = 1; signed = false;\n"
	           "\tmap = clock.realtime.value;\n} := uint27_clock_t;\n\n"
	           "stream {\n\tid = 0;\n\tpacket.context := struct {\n"
	           "\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
	           "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
	           "\t\tuint64_t events_discarded;\n\t};\n"
	           "\tevent.header := struct {\n"
	           "\t\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
	           "\t\tvariant <id> {\n"
	           "\t\t\tstruct { uint27_clock_t timestamp; } compact;\n"
	           "\t\t\tstruct { uint32_t id; uint64_clock_t timestamp; } extended;\n"
	           "\t\t} v;\n\t} align(8);\n"
	           "\tevent.context := struct {\n"
	           "\t\tint32_t pid;\n\t\tint32_t vtid;\n\t\tint32_t tid;\n"
	           "\t\tuint64_hex_t pthread_id;\n"
	           "\t\tstring procname;\n"
	           "\t\tinteger { size = 64; align = 8; signed = true; } ppid;\n\t};\n};\n");
	for (unsigned id = 0; sites && id < PT_NIDS; id++) { /* each type's call sites */
		if (!l->count[id])
			continue;
		fprintf(f, "\ntypealias enum : uint%d_t {", 8 * site_bytes);
		for (uint32_t i = 0, k = 0; i < sites->n; i++)
			if (sites->e[i].type == id) {
				fprintf(f, "%s\n\t", k++ ? "," : "");
				ctf_tsdl_str(f, sites->e[i].lab);
				fprintf(f, " = %u", sites->e[i].num);
			}
		if (!sites->per[id]) /* (an enumeration needs one) */
			fprintf(f, "\n\t\"0x0\" = 0");
		fprintf(f, "\n} := site%u_t;\n", id);
	}
	for (unsigned id = 0; id < PT_NIDS; id++) {
		if (!l->count[id])
			continue;
		for (int typed = 0; typed < 2; typed++) {
			if (typed && !c->desc[id])
				break;
			fprintf(f, "\nevent {\n\tname = ");
			ctf_tsdl_str(f, tlog_name(l, id, tmp, sizeof tmp));
			fprintf(f, ";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n",
			        typed ? c->cid[id] : c->desc[id] ? c->raw[id] : c->cid[id]);
			if (sites)
				fprintf(f, "\t\tsite%u_t site;\n", id);
			else
				fprintf(f, "\t\tuint64_hex_t addr;\n");
			if (typed) {
				if (typed_tsdl_fields(tsdl, sizeof tsdl, c->desc[id], "\t\t\t"))
					return -1;
				fprintf(f, "\t\tstruct {\n%s\t\t} align(64) payload;\n", tsdl);
			} else {
				fprintf(f, "\t\t%s payload_len;\n\t\tuint8_t payload[payload_len];\n",
				        wide ? "uint32_t" : "uint16_t");
			}
			fprintf(f, "\t};\n};\n");
		}
	}
	return ferror(f) ? -1 : 0;
}

/* Few streams, LTTng's way: the events of every thread go to a handful
 * of streams, each in time order, the thread named in each event's
 * context (pid; vtid and tid: the kernel TID, as LTTng's contexts of
 * those names; pthread_id: the pthread_t; procname: the
 * thread's name, ppid: its process's parent, 0 if the trace does not
 * say).  The log gives its events in time order across threads (late
 * events aside: implementation-defined.md), so one stream takes nearly
 * all; an event stamped before its stream's last goes to another stream
 * whose last is not after it (the thread's previous one first), a new
 * one if none is, up to MAX_STREAMS; beyond, the stream that ends
 * earliest, the event at its time.  A thread's own clock never goes back
 * either: an event stamped before the one before it in its thread (a
 * nested writer, a signal handler's) gets that one's time.  A reader
 * merges a few streams fast, not hundreds (babeltrace2 compares every
 * stream at each event: 300 streams read 14 times slower than one).
 * Stream 0 holds the events the reader synthesizes (pid 0: losses) and
 * any of a thread the totals did not know. */
#define MAX_STREAMS 64
#define CTX_MAX 44 /* i32 pid, i32 vtid, i32 tid, u64 pthread_id, string procname (at most
                    * 16), i64 ppid */

struct cstream {
	struct buf b;
	uint64_t tb, te, discarded;
	int empty, made;
};

/* A thread's context as its events carry it, made again when its
 * identity (thrmap_find) is another. */
struct cthread {
	const struct pt_ext_thread *id;
	uint64_t last;       /* its last event's time */
	unsigned stream;     /* the stream of its last event */
	int known;           /* ctx made */
	unsigned ctxlen;
	unsigned char ctx[CTX_MAX];
};

struct cw {
	struct cstream *s;
	size_t n;            /* streams made so far (0: the loss stream) */
	struct cthread *th;  /* per thread of the totals, and one for the rest */
	size_t nthreads;     /* threads the totals know */
	size_t target;       /* packet size to aim at */
	const char *dir;
	int dfd, force;      /* the directory's fd (open_dir), --force */
	const unsigned char *uuid;
	uint64_t base;
	const struct classes *c;
	int wide;            /* payload_len is 32 bits (max data size beyond 65535) */
	unsigned char *tmp;  /* a typed payload being laid out */
	size_t tmpcap;
	struct sites *sites; /* with symbols: the call sites met */
	int site_bytes;      /* 2, or 4 once the sites outnumber 65536 */
	/* (type, symz text id) -> site number: the label is made and looked
	 * up once per call site and process, not per event */
	uint64_t *skey;
	uint32_t *sval, scap, sn;
};

/* Fill in the packet's header and context, write it, start the next. */
static int flush_packet(struct cw *w, size_t k, uint64_t tb, uint64_t te)
{
	struct cstream *c = &w->s[k];
	struct buf *b = &c->b;
	char path[4200];

	if (!b->p && put(b, (unsigned char[HDR_BYTES]){ 0 }, HDR_BYTES))
		return -1;
	ctf_le(b->p, CTF_PACKET_MAGIC, 4);
	memcpy(b->p + 4, w->uuid, 16);
	ctf_le(b->p + 20, 0, 4);
	ctf_le(b->p + 24, tb, 8);
	ctf_le(b->p + 32, te, 8);
	ctf_le(b->p + 40, (uint64_t)b->n * 8, 8);
	ctf_le(b->p + 48, (uint64_t)b->n * 8, 8);
	ctf_le(b->p + 56, c->discarded, 8);
	char name[64];
	snprintf(name, sizeof name, "stream_%zu", k);
	snprintf(path, sizeof path, "%s/%s", w->dir, name);
	/* made 0600 through the directory's fd, then appended to (never
	 * through a symbolic link) */
	int fd = c->made ? openat(w->dfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
	                 : create_output_at(w->dfd, name, path, w->force);
	if (fd < 0 && !c->made)
		return -1; /* (said) */
	int rc = fd < 0 || write(fd, b->p, b->n) != (ssize_t)b->n ? -1 : 0;
	if (fd >= 0 && close(fd))
		rc = -1;
	if (rc)
		err_msg("writing %s: %s", path, strerror(errno));
	c->made = 1;
	b->n = HDR_BYTES;
	c->empty = 1;
	return rc;
}

/* The site number of (type, text id) known, else UINT32_MAX. */
static uint32_t *site_slot(struct cw *w, uint64_t key)
{
	if ((w->sn + 1) * 2 > w->scap) {
		uint32_t ncap = w->scap ? 2 * w->scap : 1024;
		if (w->sn >= (1u << 20)) /* (bounded: forgotten, made again) */
			ncap = w->scap, w->sn = 0;
		uint64_t *nk = calloc(ncap, sizeof *nk);
		uint32_t *nv = calloc(ncap, sizeof *nv);
		if (!nk || !nv) {
			free(nk), free(nv);
			return NULL;
		}
		for (uint32_t i = 0; w->sn && i < w->scap; i++)
			if (w->skey[i]) {
				uint32_t j = (uint32_t)(w->skey[i] * 0x9e3779b97f4a7c15ull >> 40) & (ncap - 1);
				while (nk[j])
					j = (j + 1) & (ncap - 1);
				nk[j] = w->skey[i], nv[j] = w->sval[i];
			}
		free(w->skey), free(w->sval);
		w->skey = nk, w->sval = nv, w->scap = ncap;
	}
	uint32_t j = (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 40) & (w->scap - 1);
	while (w->skey[j] && w->skey[j] != key)
		j = (j + 1) & (w->scap - 1);
	if (!w->skey[j]) {
		w->skey[j] = key;
		w->sval[j] = UINT32_MAX;
		w->sn++;
	}
	return &w->sval[j];
}

/* The number of the event's call site (site_of); -1 out of memory. */
static int64_t site_num(struct cw *w, struct symz *z, const struct tthread *th,
                        const struct tev *e)
{
	uint64_t tid = 0;
	const char *s = e->addr ? symz_lookup_id(z, th->pid, e->ts, e->addr, &tid) : "";
	uint32_t *slot = tid ? site_slot(w, tid << 10 | e->id) : NULL;
	if (slot && *slot != UINT32_MAX)
		return *slot;
	char lab[1100];
	int n = snprintf(lab, sizeof lab, "0x%llx%s%.1000s", (unsigned long long)e->addr,
	                 s[0] && strncmp(s, "0x", 2) ? " " : "", strncmp(s, "0x", 2) ? s : "");
	for (int i = 0; i < n && lab[i]; i++) /* a path could hold anything */
		if ((unsigned char)lab[i] < 0x20 || (unsigned char)lab[i] >= 0x7f)
			lab[i] = '?';
	uint32_t id = site_of(w->sites, e->id, lab);
	if (id == UINT32_MAX)
		return -1;
	if (slot)
		*slot = id;
	return (int64_t)id;
}

/* The event header: 5 bits of class id and the low 27 bits of the time
 * when the class id is below 31 and the time is less than 2^27 ns after
 * the stream's last (a reader adds the wrap), else id 31 then the class
 * id and the whole time. */
static int put_header(struct buf *b, unsigned cid, uint64_t t, uint64_t last)
{
	if (cid < 31 && t - last < (1u << 27))
		return put_le(b, cid | (t & ((1u << 27) - 1)) << 5, 4);
	return put_le(b, 31, 1) || put_le(b, cid, 4) || put_le(b, t, 8);
}

/* Event e's payload laid out by its class's description in w->tmp: its
 * length, -1 when the type has none or the payload does not fit it (its
 * process described it otherwise, truncated, too short...), -2 out of
 * memory. */
static long lay_typed(struct cw *w, const struct tlog *l, const struct tev *e)
{
	const char *d = w->c->desc[e->id];
	if (!d || e->trunc == POSIX_TRACE_TRUNCATED_RECORD)
		return -1;
	const char *mine = typemap_desc(l->types, l->th[e->thread].pid, e->id);
	if (!mine || strcmp(mine, d))
		return -1;
	size_t need = (size_t)e->len * 2 + 256; /* padding, NULs, lengths */
	if (need > w->tmpcap) {
		unsigned char *p = realloc(w->tmp, need);
		if (!p)
			return -2;
		w->tmp = p;
		w->tmpcap = need;
	}
	return typed_ctf_payload(w->tmp, w->tmpcap, d, e->data, e->len);
}

/* The stream for an event of thread x at *t (made if need be; *t moved
 * up when none can take it at its time); SIZE_MAX out of memory. */
static size_t pick_stream(struct cw *w, const struct cthread *x, uint64_t *t)
{
	if (x->stream && w->s[x->stream].te <= *t)
		return x->stream;
	size_t best = 0;
	for (size_t k = 1; k < w->n; k++) {
		if (w->s[k].te <= *t)
			return k;
		if (!best || w->s[k].te < w->s[best].te)
			best = k;
	}
	if (w->n < MAX_STREAMS + 1) {
		struct cstream *n = realloc(w->s, (w->n + 1) * sizeof *n);
		if (!n)
			return SIZE_MAX;
		w->s = n;
		w->s[w->n] = (struct cstream){ .empty = 1 };
		return w->n++;
	}
	*t = w->s[best].te;
	return best;
}

static int write_event(struct cw *w, struct tlog *l, struct symz *z, const struct tev *e,
                       int counted)
{
	const struct tthread *th = &l->th[e->thread];
	struct cthread *x = &w->th[e->thread < w->nthreads ? e->thread : w->nthreads];
	uint64_t t = e->ts >= w->base ? e->ts - w->base : 0;
	const struct pt_ext_thread *id = thrmap_find(l->thrs, th->pid, th->tid, e->ts);

	if (!x->known || x->id != id) { /* its context */
		const struct pt_ext_proc *pi =
			th->pid && th->proc < l->npr ? tlog_identity(l, &l->pr[th->proc]) : NULL;
		size_t nl = id ? strnlen(id->name, 15) : 0;
		ctf_le(x->ctx, (uint32_t)th->pid, 4);
		ctf_le(x->ctx + 4, (uint32_t)(id ? id->tid : 0), 4);
		ctf_le(x->ctx + 8, (uint32_t)(id ? id->tid : 0), 4);
		ctf_le(x->ctx + 12, th->tid, 8);
		if (nl)
			memcpy(x->ctx + 20, id->name, nl);
		x->ctx[20 + nl] = 0; /* (a string: the name, at most 15 bytes, and its NUL) */
		ctf_le(x->ctx + 21 + nl, (uint64_t)(int64_t)(pi ? pi->ppid : 0), 8);
		x->ctxlen = (unsigned)(29 + nl);
		x->id = id;
		x->known = 1;
	}
	if (t < x->last) /* a thread's clock never goes back (a nested writer) */
		t = x->last;
	size_t k = 0;
	if (!(th->pid == 0 && th->tid == 0) && e->thread < w->nthreads)
		k = pick_stream(w, x, &t);
	else if (t < w->s[0].te) /* (synthesized events never step back) */
		t = w->s[0].te;
	if (k == SIZE_MAX)
		return -1;
	struct cstream *c = &w->s[k];
	struct buf *b = &c->b;
	if (!b->p && (put(b, (unsigned char[HDR_BYTES]){ 0 }, HDR_BYTES)))
		return -1;
	if (!c->empty && e->id == POSIX_TRACE_OVERFLOW && /* the loss in a packet of its own */
	    flush_packet(w, k, c->tb, c->te))
		return -1;
	if (c->empty)
		c->tb = c->te = t;
	int64_t site = z ? site_num(w, z, th, e) : 0;
	if (site > 0xffff && w->site_bytes == 2)
		return 2; /* (write_ctf starts again with 4 bytes) */
	long typed = lay_typed(w, l, e);
	unsigned cid = typed >= 0 || !w->c->desc[e->id] ? w->c->cid[e->id] : w->c->raw[e->id];
	static const unsigned char zero[8];
	if (typed < -1 || site < 0 || put_header(b, cid, t, c->te) || put(b, x->ctx, x->ctxlen) ||
	    (typed >= 0 && put(b, zero, (8 - b->n % 8) % 8)) || /* its fields are 8-aligned */
	    (z ? put_le(b, (uint64_t)site, w->site_bytes) : put_le(b, e->addr, 8)))
		return -1;
	if (typed >= 0 ? put(b, zero, (8 - b->n % 8) % 8) || put(b, w->tmp, (size_t)typed)
	               : put_le(b, e->len, w->wide ? 4 : 2) || put(b, e->data, e->len))
		return -1;
	c->te = t;
	x->last = t;
	x->stream = (unsigned)k;
	c->empty = 0;
	if (e->id == POSIX_TRACE_OVERFLOW && !counted)
		c->discarded++;
	if (e->id == POSIX_TRACE_RESUME && counted)
		c->discarded += e->lost != UINT64_MAX ? e->lost : 0;
	if (b->n >= w->target || e->id == POSIX_TRACE_RESUME)
		return flush_packet(w, k, c->tb, c->te);
	return 0;
}

static void cw_free(struct cw *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->s[i].b.p);
	free(w->s);
	free(w->th);
	free(w->tmp);
	free(w->skey);
	free(w->sval);
}

static int write_streams(struct tlog *l, struct symz *z, const char *dir, int dfd, int force,
                         const unsigned char *uuid, uint64_t base, const struct classes *cl,
                         int wide, struct sites *sites, int site_bytes)
{
	struct cw w = { .dir = dir, .dfd = dfd, .force = force, .uuid = uuid, .base = base,
	                .c = cl, .wide = wide, .sites = sites, .site_bytes = site_bytes };
	struct progress p;
	struct tev e;
	int rc = 0, r = 0, counted = l->ngaps || l->lost_final;

	/* (threads the totals did not know: events of a damaged stretch of a
	 * log read through its summary, stamped by the reader, pid 0) */
	w.nthreads = l->nth;
	w.n = 1;
	w.target = PACKET_TARGET;
	w.s = calloc(1, sizeof *w.s);
	w.th = calloc(l->nth + 1, sizeof *w.th);
	if (!w.s || !w.th) {
		cw_free(&w);
		return -1;
	}
	w.s[0].empty = 1;
	uint64_t t0 = l->first >= base ? l->first - base : 0;
	uint64_t t1 = l->nev && l->last >= base ? l->last - base : t0;
	if (l->nev && tlog_lost_any(l)) { /* a count of 0 to start from */
		rc = flush_packet(&w, 0, t0, t0);
		w.s[0].te = t0;
	}
	progress_begin(&p, "export ctf", l->nev);
	while (!rc && (r = tlog_next(l, &e)) > 0) {
		rc = write_event(&w, l, z, &e, counted);
		progress_update(&p, e.n);
	}
	progress_end(&p);
	if (rc == 2) { /* more sites than 2 bytes number: none of it is kept */
		cw_free(&w);
		return 2;
	}
	rc |= r < 0;
	for (size_t i = 0; i < w.n && !rc; i++)
		if (!w.s[i].empty)
			rc = flush_packet(&w, i, w.s[i].tb, w.s[i].te);
	struct cstream *c = &w.s[0];
	if (!rc && l->nev && tlog_lost_total(l) > c->discarded) { /* the rest, at the end */
		uint64_t te = c->te > t1 ? c->te : t1;
		c->discarded = tlog_lost_total(l);
		rc = flush_packet(&w, 0, te, te);
	}
	if (!rc && l->nev == 0) /* an empty trace still has one (empty) packet */
		rc = flush_packet(&w, 0, 0, 0);
	cw_free(&w);
	return rc;
}

/* Stream files left by an earlier export to the same directory (--force). */
static void remove_streams(int dfd)
{
	int fd = dup(dfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d); /* (the offset is dfd's too: read before) */
	while ((de = readdir(d)) != NULL)
		if (!strncmp(de->d_name, "stream_", 7))
			unlinkat(dfd, de->d_name, 0);
	closedir(d);
}

/* A file of the trace directory, 0600, made through the directory's fd
 * (no path is followed again after the directory was checked). */
static FILE *open_in(int dfd, const char *dir, const char *name, char *path, size_t cap, int force)
{
	snprintf(path, cap, "%s/%s", dir, name);
	int fd = create_output_at(dfd, name, path, force);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (fd >= 0 && !f) {
		err_msg("cannot create %s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/* The trace directory, made 0700; with force an existing one of this
 * user's (not a symbolic link) is written into.  Its fd, or -1. */
static int open_dir(const char *dir, int force)
{
	struct stat sb;
	const char *why;
	int dfd;

	if (mkdir(dir, 0700) != 0) {
		if (errno != EEXIST || lstat(dir, &sb) != 0) {
			err_msg("cannot create the directory %s: %s", dir, strerror(errno));
			return -1;
		}
		if (!force) {
			err_msg("%s already exists; choose another name with -o, or add --force "
			        "to overwrite it", dir);
			return -1;
		}
		if ((why = output_refused(&sb, 1)) != NULL) {
			err_msg("%s: will not write into it: %s", dir, why);
			return -1;
		}
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	why = dfd < 0 || fstat(dfd, &sb) != 0 ? strerror(errno) : output_refused(&sb, 1);
	if (why) {
		err_msg("%s: will not write into it: %s", dir, why);
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	return dfd;
}

static int write_ctf(struct tlog *l, struct symz *z, const char *dir, int dfd, int force)
{
	unsigned char uuid[16], cuuid[16];
	char path[4200];

	if (ctf_uuid_new(uuid) || ctf_uuid_new(cuuid)) {
		err_msg("getrandom: %s", strerror(errno));
		return 1;
	}
	uint64_t offset_s = l->first / 1000000000u;
	static struct classes cl;
	make_classes(l, &cl);
	size_t mds = 0;
	int wide = posix_trace_attr_getmaxdatasize(&l->attr, &mds) != 0 || mds > 65535;

	/* the streams, then the metadata: it lists the call sites met */
	static struct sites sites; /* (4 KiB of counts) */
	memset(&sites, 0, sizeof sites);
	int site_bytes = 2, rc;
	remove_streams(dfd);
	while ((rc = write_streams(l, z, dir, dfd, force, uuid, offset_s * 1000000000u, &cl, wide,
	                           &sites, site_bytes)) == 2) {
		/* more than 65536 call sites: again from the start, 4 bytes each
		 * (their numbers stay) */
		remove_streams(dfd);
		site_bytes = 4;
		if (tlog_rewind(l)) {
			rc = 1;
			break;
		}
	}
	if (rc) {
		sites_free(&sites);
		return 1;
	}
	FILE *m = open_in(dfd, dir, "metadata", path, sizeof path, force);
	rc = m ? write_metadata(l, m, uuid, cuuid, offset_s, z ? &sites : NULL, site_bytes, &cl,
	                        wide) : -1;
	sites_free(&sites);
	if (!m)
		return 1;
	if ((fclose(m) | rc) != 0) {
		err_msg("writing %s: %s", path, strerror(errno));
		return 1;
	}
	return 0;
}

int export_ctf(struct tlog *l, struct symz *z, const char *dir, int force)
{
	int dfd = open_dir(dir, force), rc;

	if (dfd < 0)
		return 1;
	rc = write_ctf(l, z, dir, dfd, force);
	close(dfd);
	return rc;
}
