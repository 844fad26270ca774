/*
 * export_perfetto.c -- Perfetto's native trace format, written as the
 * events come (write.h): a `perfetto.protos.Trace`, a series of
 * TracePackets (docs/posixtrace.1 tells a user what is where).
 *
 * Tracks.  A process is a track with a ProcessDescriptor (pid, name); a
 * thread a track with a ThreadDescriptor (pid, tid, name).  A thread the
 * trace identifies (pf_thread_ident: its kernel TID and name, cli/read/threads.c)
 * has its real TID and name.  Otherwise (an older log) only its POSIX
 * thread id is known, and a forked child's thread has the same one as its
 * parent's, so the descriptor's tid is made up, unique in the trace and
 * never a real pid: IDX * 2^22 + pid (Linux pids are below 2^22), and its
 * name is "thread IDX (0xPTHREAD_ID)".  pid 0 (the trace's own
 * events) is a plain named track.  Lost events: an instant "events lost"
 * with their count where the gap is, and a counter track "lost events"
 * with the running total.
 *
 * Sequences.  Each thread writes its own packet sequence (its
 * trusted_packet_sequence_id), so that everything repeated is said once
 * per sequence: its first packet clears the incremental state
 * (SEQ_INCREMENTAL_STATE_CLEARED) and carries
 *   - the defaults: the thread's track for every TrackEvent, and clock 64,
 *     a clock of this sequence, for every timestamp;
 *   - a ClockSnapshot: clock 64 is CLOCK_REALTIME, incremental (each
 *     packet's timestamp is the ns since the sequence's previous one), and
 *     the trace's clock is REALTIME;
 *   - the interned names of the debug annotations.
 * An event type's name, and a symbol (a source location), are interned in
 * the sequence the first time one of its events uses them.  A thread
 * whose clock goes back goes on in a new sequence, on the same track: a
 * delta is never negative, and trace_processor refuses a snapshot where
 * the trace's clock (REALTIME) goes back in a sequence.
 *
 * An event is a TrackEvent of TYPE_INSTANT with its interned name and its
 * payload as debug annotations: "text" (printable, trailing NULs dropped,
 * then "len" when some were), else "u8".."u64" for 1, 2, 4 or 8 bytes (as
 * a little-endian unsigned integer: 1 or 2 bytes always, 4 or 8 unless
 * text with one trailing NUL at most), else "hex"; then "truncated".
 * A payload its program described (pf_event_fields) is one annotation per
 * field instead, named by the field (not interned: a name is said in each
 * event), an unsigned, signed, double or string value.  Its
 * symbol is its source location (source_location_iid): a SourceLocation
 * interned in the sequence, whose function_name is the symbol's
 * FUNCTION+0xOFF and file_name and line_number its (FILE:LINE) when the
 * symbolizer gave them (trace_processor shows them as the arguments
 * source.function_name, source.file_name, source.line_number).
 *
 * Bytes.  An event with an 8-byte payload and a symbol is, in bytes:
 *   2 packet (key, length)       2 TrackEvent (key, length)
 *   1 + D timestamp (its delta)  2 type          2 name_iid
 *   2 sequence id                5 + V payload (annotation key and length,
 *   3 source_location_iid          name_iid, uint_value key; V its value)
 * = 19 + D + V, D and V the varints of the delta and of the value (1 to
 * 10 bytes each): 22 or 23 for the events of a busy thread.  Nothing of it
 * can go: trace_processor refuses a TrackEvent with neither a type nor a
 * legacy phase (longer), and a debug annotation without a name; a name
 * is what an instant shows, and 2 bytes as an iid; a packet without a
 * sequence id is on sequence 0, which has no interned data, defaults or
 * incremental clock, and the track would then be 2 more bytes in each
 * event.  SEQ_NEEDS_INCREMENTAL_STATE is not set: it only tells a reader
 * to skip packets after a loss of packets, which a file has not, and it
 * would be 2 bytes per event.
 *
 * Compressed packets.  Built with zlib, the packets are written, as
 * Perfetto's own service does, in TracePackets of compressed_packets: up
 * to FLUSH_AT bytes of packets (whole ones, as a Trace encodes them) as
 * one zlib stream, which trace_processor inflates before it reads them.
 * The stream is made by libdeflate when built with it too (the same
 * format, in half the time: zlib's deflate was half the export's time).
 * A busy thread's 8-byte events then take 2 to 4 bytes each.  A container
 * stays below the 512 KB Perfetto asks for: FLUSH_AT is reached at a
 * packet's end, and a packet of a log (a payload of TRACE_DATA_MAX bytes
 * at most, as hex) is below 132 KB.  pf_compress(w, 0): plain packets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write.h"
#if defined PT_HAVE_LIBDEFLATE
#include <libdeflate.h>
#define PF_CAN_COMPRESS 1
#elif defined PT_HAVE_ZLIB
#include <zlib.h>
#define PF_CAN_COMPRESS 1
#else
#define PF_CAN_COMPRESS 0
#endif

/* field numbers, perfetto_trace.proto */
enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	TP_PROCESS_TREE = 2,
	TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11,
	TP_INTERNED = 12, TP_SEQ_FLAGS = 13, TP_COMPRESSED = 50, TP_DEFAULTS = 59,
	TP_TRACK_DESCRIPTOR = 60,
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	/* TracePacketDefaults, TrackEventDefaults */
	DEF_CLOCK_ID = 58, DEF_TRACK_EVENT = 11, TED_TRACK_UUID = 11,
	/* ClockSnapshot, its Clock */
	CS_CLOCK = 1, CS_PRIMARY = 2, CLK_ID = 1, CLK_TS = 2, CLK_INCREMENTAL = 3,
	CLOCK_REALTIME_ID = 1, CLOCK_SEQ = 64,
	/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
	PD_PID = 1, PD_CMDLINE = 2, PD_NAME = 6, PD_LABELS = 8, THD_PID = 1, THD_TID = 2, THD_NAME = 5,
	CD_UNIT = 3, UNIT_COUNT = 2,
	/* ProcessTree, its Process */
	PT_PROCESSES = 1, PTP_PID = 1, PTP_PPID = 2, PTP_CMDLINE = 3,
	/* TrackEvent */
	TE_ANNOTATION = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK_UUID = 11, TE_COUNTER = 30,
	TE_SOURCE_LOCATION_IID = 34, TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48,
	TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,
	/* DebugAnnotation */
	DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_DOUBLE = 5, DA_STRING = 6,
	DA_NAME = 10,
	/* InternedData: EventName, DebugAnnotationName (iid 1, name 2), SourceLocation */
	ID_EVENT_NAMES = 2, ID_ANNOTATION_NAMES = 3, ID_SOURCE_LOCATIONS = 4, IN_IID = 1, IN_NAME = 2,
	SL_IID = 1, SL_FILE = 2, SL_FUNCTION = 3, SL_LINE = 4,
};

/* the debug annotations' names, interned in every sequence (iid = index) */
enum { A_TEXT = 1, A_HEX, A_U8, A_U16, A_U32, A_U64, A_TRUNCATED, A_LEN, A_COUNT,
       A_INCOMPLETE, A_SPLIT, A_N };
static const char *const ann_name[A_N] = {
	"", "text", "hex", "u8", "u16", "u32", "u64", "truncated", "len", "count",
	"incomplete", "split",
};
#define IID_LOST 1             /* event name "events lost"; a type's iid is its id + 2 */
#define UUID_PROC (1ull << 40) /* track uuids: a process's is this + pid, ... */
#define UUID_THREAD (2ull << 40)
#define UUID_LOST (3ull << 40)
#define UUID_ASYNC (1ull << 62)  /* + the caller's number of an async track */
#define IID_SPAN (1u << 20)      /* + a span's number: its interned name */
#define FLUSH_AT (256u << 10)  /* bytes kept before a write (or a compressed container) */
#define ZLEVEL 1               /* the fastest (zlib's 2: a few % to a third smaller, 10% slower) */
#define TYPE_BITS 65536        /* type ids a sequence keeps a bit for */
#define SYM_IDS 4096           /* symbols known by their caller's id (slot: id % this) */

struct seq {
	int32_t pid;
	uint64_t tid;
	uint32_t id;           /* trusted_packet_sequence_id (a new one when its clock goes back) */
	uint32_t track;        /* its track: UUID_THREAD + this */
	unsigned idx;
	int started;
	uint64_t clock;        /* the value of its clock 64 */
	unsigned char *types;  /* bitmaps: interned in this sequence */
	size_t ntypes;         /* (bytes) */
	unsigned char *syms;   /* (source locations) */
	size_t nsyms;
	unsigned char *spans;  /* (span names) */
	size_t nspans;
	uint32_t last_sym;     /* index + 1 of the symbol its last event had */
};

/* An open-addressing hash index of the n items of an array: a slot holds
 * an item's index + 1 (0: free); at most half full. */
struct index {
	uint32_t *slot;
	size_t cap;
};

struct pf {
	FILE *f;
	struct pb b;
	int err;
	struct seq *seq;
	size_t nseq, cseq, last;
	uint32_t seq_ids;      /* sequence ids given */
	struct index seqx;     /* by (pid, tid) */
	int32_t *pids;         /* the processes described */
	size_t npids, cpids;
	struct index pidx;
	struct pidn { int32_t pid; uint32_t n; } *pn; /* each pid's sequences so far */
	size_t npn, cpn;
	struct index pnx;
	char **sym;            /* symbols, by index */
	size_t nsym, csym;
	struct index symx;     /* by the string */
	struct sym_id { uint64_t id; uint32_t sym; } *ids; /* by the caller's id: the last SYM_IDS */
	uint64_t lost;         /* lost events so far */
	int lost_track;
	int compress;          /* packets go out in compressed containers */
#if defined PT_HAVE_LIBDEFLATE
	struct libdeflate_compressor *z;
#elif defined PT_HAVE_ZLIB
	z_stream *z;
#endif
	unsigned char *zout;   /* a compressed container's stream */
	size_t zcap;
	uint64_t flow;         /* pf_flow(): for the next event, 0 none */
	int flow_end;
};

static uint64_t mix(uint64_t h)
{
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ h >> 31;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return mix(h);
}

static int fail(struct pf *w, int e)
{
	if (!w->err)
		w->err = e;
	return w->err;
}

static void put(struct pf *w, const void *p, size_t n)
{
	errno = 0;
	if (!w->err && fwrite(p, 1, n, w->f) != n)
		fail(w, errno ? errno : EIO);
}

#if PF_CAN_COMPRESS
/* Room for a zlib stream of up to bound bytes in w->zout: 0, or the error. */
static int zout_room(struct pf *w, size_t bound)
{
	if (bound > w->zcap) {
		unsigned char *m = realloc(w->zout, bound);
		if (!m)
			return fail(w, ENOMEM);
		w->zout = m;
		w->zcap = bound;
	}
	return 0;
}

#ifdef PT_HAVE_LIBDEFLATE
/* The n bytes at p as one zlib stream in w->zout: its length, 0 on failure. */
static size_t zlib_stream(struct pf *w, const unsigned char *p, size_t n)
{
	if (!w->z && !(w->z = libdeflate_alloc_compressor(ZLEVEL)))
		return fail(w, ENOMEM), 0;
	if (zout_room(w, libdeflate_zlib_compress_bound(w->z, n)))
		return 0;
	size_t zn = libdeflate_zlib_compress(w->z, p, n, w->zout, w->zcap);
	return zn ? zn : (fail(w, EIO), 0);
}
#else
static size_t zlib_stream(struct pf *w, const unsigned char *p, size_t n)
{
	if (!w->z) {
		if (!(w->z = calloc(1, sizeof *w->z)))
			return fail(w, ENOMEM), 0;
		if (deflateInit(w->z, ZLEVEL) != Z_OK) {
			free(w->z);
			w->z = NULL;
			return fail(w, ENOMEM), 0;
		}
	} else if (deflateReset(w->z) != Z_OK) {
		return fail(w, EIO), 0;
	}
	if (zout_room(w, deflateBound(w->z, (uLong)n)))
		return 0;
	w->z->next_in = (Bytef *)(uintptr_t)p;
	w->z->avail_in = (uInt)n;
	w->z->next_out = w->zout;
	w->z->avail_out = (uInt)w->zcap;
	if (deflate(w->z, Z_FINISH) != Z_STREAM_END) /* (room for all of it: one call) */
		return fail(w, EIO), 0;
	return (size_t)w->z->total_out;
}
#endif

/* The n bytes of packets at p as one TracePacket of compressed_packets:
 * a zlib stream of its own, which trace_processor inflates alone. */
static void put_compressed(struct pf *w, const unsigned char *p, size_t n)
{
	size_t zn = zlib_stream(w, p, n);
	if (!zn)
		return;
	/* Trace.packet { compressed_packets: the stream } */
	unsigned char head[32];
	size_t k = 0, inner = pb_varint_size((uint64_t)TP_COMPRESSED << 3 | PB_LEN) +
	                      pb_varint_size(zn) + zn;
	k += pb_put_varint(head + k, (uint64_t)TRACE_PACKET << 3 | PB_LEN);
	k += pb_put_varint(head + k, inner);
	k += pb_put_varint(head + k, (uint64_t)TP_COMPRESSED << 3 | PB_LEN);
	k += pb_put_varint(head + k, zn);
	put(w, head, k);
	put(w, w->zout, zn);
}
#endif

/* Writes what the buffer holds (between packets only). */
static int flush(struct pf *w)
{
	if (w->b.oom)
		fail(w, ENOMEM);
	if (w->b.n && !w->err) {
#if PF_CAN_COMPRESS
		if (w->compress)
			put_compressed(w, w->b.p, w->b.n);
		else
#endif
			put(w, w->b.p, w->b.n);
	}
	w->b.n = 0;
	return w->err;
}

static int packet_done(struct pf *w)
{
	return w->b.n >= FLUSH_AT || w->b.oom ? flush(w) : w->err;
}

/* Room in ix for one more of the n items whose keys key() gives: 0, or
 * the error. */
static int index_room(struct pf *w, struct index *ix, size_t n,
                      uint64_t (*key)(const struct pf *, size_t))
{
	if ((n + 1) * 2 <= ix->cap)
		return 0;
	size_t ncap = ix->cap ? 2 * ix->cap : 256;
	uint32_t *slot = calloc(ncap, sizeof *slot);
	if (!slot)
		return fail(w, ENOMEM);
	for (size_t i = 0; i < n; i++) {
		size_t j = key(w, i) & (ncap - 1);
		while (slot[j])
			j = (j + 1) & (ncap - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(ix->slot);
	ix->slot = slot;
	ix->cap = ncap;
	return 0;
}

/* Array a of n items of size bytes with room for one more (moved, maybe);
 * NULL when out of memory. */
static void *array_room(struct pf *w, void *a, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return a;
	size_t ncap = *cap ? 2 * *cap : 64;
	void *m = realloc(a, ncap * size);
	if (!m)
		return fail(w, ENOMEM), NULL;
	*cap = ncap;
	return m;
}

static int bit_grow(unsigned char **map, size_t *nbytes, size_t i);

/* Sets bit i of a growable bitmap; returns 1 if it was clear, -1 out of memory. */
static inline int bit_set(unsigned char **map, size_t *nbytes, size_t i)
{
	if (i / 8 < *nbytes && (*map)[i / 8] & 1u << i % 8)
		return 0;
	return bit_grow(map, nbytes, i);
}

static int bit_grow(unsigned char **map, size_t *nbytes, size_t i)
{
	if (i / 8 >= *nbytes) {
		size_t n = *nbytes ? *nbytes : 16;
		while (n <= i / 8)
			n *= 2;
		unsigned char *m = realloc(*map, n);
		if (!m)
			return -1;
		memset(m + *nbytes, 0, n - *nbytes);
		*map = m;
		*nbytes = n;
	}
	if ((*map)[i / 8] & 1u << i % 8)
		return 0;
	(*map)[i / 8] |= (unsigned char)(1u << i % 8);
	return 1;
}

static void put_descriptor_name(struct pb *b, unsigned field, const char *name, const char *dflt)
{
	pb_str(b, field, name && *name ? name : dflt);
}

/* --------------------------------------------------------------- tracks */
static uint64_t pid_key(const struct pf *w, size_t i)
{
	return mix((uint32_t)w->pids[i]);
}

/* Whether pid was described; add: now it is (0: it was not, or out of
 * memory). */
static int proc_known(struct pf *w, int32_t pid, int add)
{
	if (add) {
		int32_t *grown;
		if (index_room(w, &w->pidx, w->npids, pid_key) ||
		    !(grown = array_room(w, w->pids, w->npids, &w->cpids, sizeof *w->pids)))
			return 0;
		w->pids = grown;
	}
	if (!w->pidx.cap)
		return 0;
	size_t j = mix((uint32_t)pid) & (w->pidx.cap - 1);
	for (; w->pidx.slot[j]; j = (j + 1) & (w->pidx.cap - 1))
		if (w->pids[w->pidx.slot[j] - 1] == pid)
			return 1;
	if (add) {
		w->pids[w->npids++] = pid;
		w->pidx.slot[j] = (uint32_t)w->npids;
	}
	return 0;
}

int pf_process(struct pf *w, int32_t pid, const char *name, int32_t ppid, const char *cmdline)
{
	char dflt[32], label[40];

	if (pid == 0 || proc_known(w, pid, 1) || w->err)
		return w->err;
	snprintf(dflt, sizeof dflt, "pid %d", (int)pid);
	size_t pkt = pb_open(&w->b, TRACE_PACKET);
	size_t td = pb_open(&w->b, TP_TRACK_DESCRIPTOR);
	pb_uint(&w->b, TD_UUID, UUID_PROC + (uint32_t)pid);
	size_t pd = pb_open(&w->b, TD_PROCESS);
	pb_int(&w->b, PD_PID, pid);
	if (cmdline && *cmdline)
		pb_str(&w->b, PD_CMDLINE, cmdline);
	put_descriptor_name(&w->b, PD_NAME, name, dflt);
	if (ppid) {
		snprintf(label, sizeof label, "parent %d", (int)ppid);
		pb_str(&w->b, PD_LABELS, label);
	}
	pb_close(&w->b, pd);
	pb_close(&w->b, td);
	pb_close(&w->b, pkt);
	if (packet_done(w) || !ppid)
		return w->err;
	/* the parent, where Perfetto builds its process tree from: a
	 * ProcessTree with this one process */
	pkt = pb_open(&w->b, TRACE_PACKET);
	size_t pt = pb_open(&w->b, TP_PROCESS_TREE);
	size_t pr = pb_open(&w->b, PT_PROCESSES);
	pb_int(&w->b, PTP_PID, pid);
	pb_int(&w->b, PTP_PPID, ppid);
	if (cmdline && *cmdline)
		pb_str(&w->b, PTP_CMDLINE, cmdline);
	pb_close(&w->b, pr);
	pb_close(&w->b, pt);
	pb_close(&w->b, pkt);
	return packet_done(w);
}

static uint64_t seq_key(int32_t pid, uint64_t tid)
{
	return mix(tid ^ mix((uint32_t)pid));
}

static uint64_t seq_key_of(const struct pf *w, size_t i)
{
	return seq_key(w->seq[i].pid, w->seq[i].tid);
}

static uint64_t pn_key(const struct pf *w, size_t i)
{
	return mix((uint32_t)w->pn[i].pid);
}

/* How many sequences pid has (a look through them all for each new one
 * took seconds with 30 000 processes): NULL when out of memory. */
static uint32_t *pid_seqs(struct pf *w, int32_t pid)
{
	struct pidn *grown;
	if (index_room(w, &w->pnx, w->npn, pn_key) ||
	    !(grown = array_room(w, w->pn, w->npn, &w->cpn, sizeof *w->pn)))
		return NULL;
	w->pn = grown;
	size_t mask = w->pnx.cap - 1, j = mix((uint32_t)pid) & mask;
	for (; w->pnx.slot[j]; j = (j + 1) & mask)
		if (w->pn[w->pnx.slot[j] - 1].pid == pid)
			return &w->pn[w->pnx.slot[j] - 1].n;
	w->pn[w->npn] = (struct pidn){ pid, 0 };
	w->pnx.slot[j] = (uint32_t)++w->npn;
	return &w->pn[w->npn - 1].n;
}

/* The sequence of (pid, tid), made (with its track) when new: NULL when
 * out of memory. */
static struct seq *seq_of(struct pf *w, int32_t pid, uint64_t tid, unsigned idx, int32_t ktid,
                          const char *name)
{
	if (w->last < w->nseq && w->seq[w->last].pid == pid && w->seq[w->last].tid == tid)
		return &w->seq[w->last];
	uint64_t key = seq_key(pid, tid);
	uint32_t *slot = w->seqx.slot;
	size_t mask = w->seqx.cap - 1, j = key & mask;
	for (; w->seqx.cap && slot[j]; j = (j + 1) & mask) {
		struct seq *s = &w->seq[slot[j] - 1];
		if (s->pid == pid && s->tid == tid) {
			w->last = slot[j] - 1;
			return s;
		}
	}
	/* a new one */
	struct seq *grown;
	if (index_room(w, &w->seqx, w->nseq, seq_key_of) ||
	    !(grown = array_room(w, w->seq, w->nseq, &w->cseq, sizeof *w->seq)))
		return NULL;
	w->seq = grown;
	slot = w->seqx.slot;
	mask = w->seqx.cap - 1;
	for (j = key & mask; slot[j]; j = (j + 1) & mask)
		;
	uint32_t *had = pid_seqs(w, pid);
	if (!had)
		return NULL;
	if (!idx) /* not described: the next index in its process */
		idx = *had + 1;
	++*had;
	struct seq *s = &w->seq[w->nseq];
	w->seq_ids++;
	*s = (struct seq){ .pid = pid, .tid = tid, .id = w->seq_ids, .track = w->seq_ids, .idx = idx };
	slot[j] = (uint32_t)++w->nseq;
	w->last = w->nseq - 1;

	/* its track */
	char dflt[64];
	if (pid)
		snprintf(dflt, sizeof dflt, "thread %u (0x%llx)", idx, (unsigned long long)tid);
	else
		snprintf(dflt, sizeof dflt, "trace (synthesized events)");
	if (pid && !proc_known(w, pid, 0))
		pf_process(w, pid, NULL, 0, NULL);
	size_t pkt = pb_open(&w->b, TRACE_PACKET);
	size_t td = pb_open(&w->b, TP_TRACK_DESCRIPTOR);
	pb_uint(&w->b, TD_UUID, UUID_THREAD + s->track);
	if (pid) {
		size_t th = pb_open(&w->b, TD_THREAD);
		pb_int(&w->b, THD_PID, pid);
		pb_int(&w->b, THD_TID, ktid > 0 ? ktid : (int64_t)idx << 22 | (uint32_t)pid);
		put_descriptor_name(&w->b, THD_NAME, name, dflt);
		pb_close(&w->b, th);
	} else {
		put_descriptor_name(&w->b, TD_NAME, name, dflt);
	}
	pb_close(&w->b, td);
	pb_close(&w->b, pkt);
	packet_done(w);
	return s;
}

int pf_thread(struct pf *w, int32_t pid, uint64_t tid, unsigned idx, const char *name)
{
	seq_of(w, pid, tid, idx, 0, name);
	return w->err;
}

int pf_thread_ident(struct pf *w, int32_t pid, uint64_t tid, int32_t ktid, const char *name)
{
	seq_of(w, pid, tid, 0, ktid, name);
	return w->err;
}

/* ------------------------------------------------------------ sequences */
static void clock_snapshot(struct pb *b, uint64_t ts)
{
	size_t cs = pb_open(b, TP_CLOCK_SNAPSHOT);
	size_t c = pb_open(b, CS_CLOCK);
	pb_uint(b, CLK_ID, CLOCK_REALTIME_ID);
	pb_uint(b, CLK_TS, ts);
	pb_close(b, c);
	c = pb_open(b, CS_CLOCK);
	pb_uint(b, CLK_ID, CLOCK_SEQ);
	pb_uint(b, CLK_TS, ts);
	pb_uint(b, CLK_INCREMENTAL, 1);
	pb_close(b, c);
	pb_uint(b, CS_PRIMARY, CLOCK_REALTIME_ID);
	pb_close(b, cs);
}

/* The sequence's first packet, at its first event (at ts). */
static void seq_start(struct pf *w, struct seq *s, uint64_t ts)
{
	size_t pkt = pb_open(&w->b, TRACE_PACKET);
	pb_uint(&w->b, TP_SEQ_ID, s->id);
	pb_uint(&w->b, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	size_t d = pb_open(&w->b, TP_DEFAULTS);
	pb_uint(&w->b, DEF_CLOCK_ID, CLOCK_SEQ);
	size_t ted = pb_open(&w->b, DEF_TRACK_EVENT);
	pb_uint(&w->b, TED_TRACK_UUID, UUID_THREAD + s->track);
	pb_close(&w->b, ted);
	pb_close(&w->b, d);
	size_t in = pb_open(&w->b, TP_INTERNED);
	size_t m = pb_open(&w->b, ID_EVENT_NAMES);
	pb_uint(&w->b, IN_IID, IID_LOST);
	pb_str(&w->b, IN_NAME, "events lost");
	pb_close(&w->b, m);
	for (unsigned i = 1; i < A_N; i++) {
		m = pb_open(&w->b, ID_ANNOTATION_NAMES);
		pb_uint(&w->b, IN_IID, i);
		pb_str(&w->b, IN_NAME, ann_name[i]);
		pb_close(&w->b, m);
	}
	pb_close(&w->b, in);
	clock_snapshot(&w->b, ts);
	pb_close(&w->b, pkt);
	s->started = 1;
	s->clock = ts;
}

/* Sequence s ready for a packet at ts: started, and a new one (nothing
 * interned) if its clock would go back. */
static void seq_ready(struct pf *w, struct seq *s, uint64_t ts)
{
	if (s->started && ts < s->clock) {
		s->id = ++w->seq_ids;
		s->started = 0;
		if (s->ntypes) /* (the maps: NULL until a first bit is set) */
			memset(s->types, 0, s->ntypes);
		if (s->nsyms)
			memset(s->syms, 0, s->nsyms);
		if (s->nspans)
			memset(s->spans, 0, s->nspans);
		s->last_sym = 0;
	}
	if (!s->started)
		seq_start(w, s, ts);
}

/* Opens an event's packet on sequence s at ts (its delta timestamp). */
static size_t packet_at(struct pf *w, struct seq *s, uint64_t ts)
{
	seq_ready(w, s, ts);
	size_t pkt = pb_open(&w->b, TRACE_PACKET);
	pb_uint(&w->b, TP_TIMESTAMP, ts - s->clock);
	pb_uint(&w->b, TP_SEQ_ID, s->id);
	s->clock = ts;
	return pkt;
}

/* ------------------------------------------------------------- symbols */
static uint64_t sym_key(const struct pf *w, size_t i)
{
	return hash_str(w->sym[i]);
}

/* The index + 1 of a symbol in the table; 0 when out of memory. */
static uint32_t sym_index(struct pf *w, const char *sym)
{
	char **grown;
	if (index_room(w, &w->symx, w->nsym, sym_key) ||
	    !(grown = array_room(w, w->sym, w->nsym, &w->csym, sizeof *w->sym)))
		return 0;
	w->sym = grown;
	uint32_t *slot = w->symx.slot;
	size_t mask = w->symx.cap - 1, j = hash_str(sym) & mask;
	for (; slot[j]; j = (j + 1) & mask)
		if (!strcmp(w->sym[slot[j] - 1], sym))
			return slot[j];
	char *copy = strdup(sym);
	if (!copy)
		return fail(w, ENOMEM), 0;
	w->sym[w->nsym++] = copy;
	slot[j] = (uint32_t)w->nsym;
	return slot[j];
}

/* The index + 1 of a symbol the caller numbered id (0: not), found by
 * its id when it was met lately; 0 when out of memory. */
static uint32_t sym_of(struct pf *w, const char *sym, uint64_t id)
{
	struct sym_id *c = w->ids ? &w->ids[id % SYM_IDS] : NULL;
	if (id && c && c->id == id)
		return c->sym;
	uint32_t i = sym_index(w, sym);
	if (id && c && i) {
		c->id = id;
		c->sym = i;
	}
	return i;
}

/* A symbol as InternedData's SourceLocation iid: FUNCTION+0xOFF, and
 * " (FILE:LINE)" after it when the symbolizer knew them (a file of one
 * character at least, a line of 1 to 4294967295 in decimal, no leading
 * 0), which go in file_name and line_number; anything else is all
 * function_name.  (The parts give back the symbol exactly.) */
static void put_source_location(struct pb *b, uint32_t iid, const char *sym)
{
	size_t n = strlen(sym), fn = n;
	const char *file = NULL, *colon = NULL;
	uint64_t line = 0;

	if (n && sym[n - 1] == ')')
		for (const char *o = strstr(sym, " ("); o && !file; o = strstr(o + 1, " (")) {
			colon = NULL;
			for (const char *c = o + 2; c < sym + n - 1; c++)
				colon = *c == ':' ? c : colon;
			if (!colon || colon == o + 2 || colon[1] == '0' || colon + 1 == sym + n - 1 ||
			    sym + n - 1 - (colon + 1) > 10)
				continue;
			line = 0;
			const char *d = colon + 1;
			for (; d < sym + n - 1 && *d >= '0' && *d <= '9'; d++)
				line = line * 10 + (uint64_t)(*d - '0');
			if (d == sym + n - 1 && line <= UINT32_MAX) {
				file = o + 2;
				fn = (size_t)(o - sym);
			}
		}
	size_t m = pb_open(b, ID_SOURCE_LOCATIONS);
	pb_uint(b, SL_IID, iid);
	if (file)
		pb_bytes(b, SL_FILE, file, (size_t)(colon - file));
	pb_bytes(b, SL_FUNCTION, sym, fn);
	if (file)
		pb_uint(b, SL_LINE, line);
	pb_close(b, m);
}

/* --------------------------------------------------------------- events */
static void annotation_uint(struct pb *b, unsigned name, uint64_t v)
{
	size_t a = pb_open(b, TE_ANNOTATION);
	pb_uint(b, DA_NAME_IID, name);
	pb_uint(b, DA_UINT, v);
	pb_close(b, a);
}

static int printable(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r';
}

/* Whether a payload of len bytes at d goes as one unsigned integer (the
 * rules at the top): then its annotation's name in *name, its value in *v. */
static int payload_word(const unsigned char *d, size_t len, unsigned *name, uint64_t *v)
{
	if (len != 1 && len != 2 && len != 4 && len != 8)
		return 0;
	/* (text: 4 or 8 bytes, printable up to one NUL at most at the end) */
	if (len >= 4 && d[len - 2]) {
		size_t n = len - !d[len - 1], i = 0;
		while (i < n && printable(d[i]))
			i++;
		if (i == n)
			return 0;
	}
	*v = 0;
	for (size_t i = len; i-- > 0;)
		*v = *v << 8 | d[i];
	*name = len == 1 ? A_U8 : len == 2 ? A_U16 : len == 4 ? A_U32 : A_U64;
	return 1;
}

/* The payload as debug annotations (the rules at the top). */
static void put_payload(struct pb *b, const unsigned char *d, size_t len)
{
	static const char hexd[] = "0123456789abcdef";
	size_t n = len;
	unsigned name;
	uint64_t v;

	if (!len)
		return;
	if (payload_word(d, len, &name, &v)) {
		annotation_uint(b, name, v);
		return;
	}
	while (n && !d[n - 1])
		n--;
	int text = n > 0;
	for (size_t i = 0; i < n && text; i++)
		text = printable(d[i]);
	int word = len == 1 || len == 2 || len == 4 || len == 8;
	if (text && (!word || (n >= 3 && n + 1 >= len))) {
		size_t a = pb_open(b, TE_ANNOTATION);
		pb_uint(b, DA_NAME_IID, A_TEXT);
		pb_bytes(b, DA_STRING, d, n);
		pb_close(b, a);
		if (n != len)
			annotation_uint(b, A_LEN, len);
	} else {
		size_t a = pb_open(b, TE_ANNOTATION);
		pb_uint(b, DA_NAME_IID, A_HEX);
		pb_key(b, DA_STRING, PB_LEN);
		pb_varint(b, 2 * (uint64_t)len);
		if (b->cap - b->n < 2 * len && pb_grow(b, 2 * len))
			return;
		for (size_t i = 0; i < len; i++) {
			b->p[b->n++] = (unsigned char)hexd[d[i] >> 4];
			b->p[b->n++] = (unsigned char)hexd[d[i] & 15];
		}
		pb_close(b, a);
	}
}

/* A described payload's fields, one debug annotation each, by name. */
static void put_fields(struct pb *b, const struct pf_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++, f++) {
		size_t a = pb_open(b, TE_ANNOTATION);
		pb_str(b, DA_NAME, f->name);
		if (f->kind == PF_UINT) {
			pb_uint(b, DA_UINT, f->u);
		} else if (f->kind == PF_INT) {
			pb_int(b, DA_INT, f->i);
		} else if (f->kind == PF_DOUBLE) {
			uint64_t bits;
			memcpy(&bits, &f->d, sizeof bits);
			pb_key(b, DA_DOUBLE, PB_I64);
			if (b->cap - b->n >= 8 || !pb_grow(b, 8))
				for (int k = 0; k < 8; k++)
					b->p[b->n++] = (unsigned char)(bits >> (8 * k));
		} else {
			pb_bytes(b, DA_STRING, f->s, f->len);
		}
		pb_close(b, a);
	}
}

static int event(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts, unsigned type_id,
                 const char *type_name, const char *symbol, uint64_t sym_id, const void *payload,
                 size_t len, const struct pf_field *fields, size_t nfields, unsigned flags);

/* The event most events are, written straight: sequence s started at or
 * before ts, its type and symbol (sym: 0 for none) interned, its payload
 * one integer (annotation name, value v), no flags.  The same bytes as
 * event() writes. */
static int word_event(struct pf *w, struct seq *s, uint64_t ts, unsigned type_id, uint32_t sym,
                      unsigned name, uint64_t v)
{
	uint64_t delta = ts - s->clock, iid = (uint64_t)type_id + 2;
	/* TrackEvent: type, name_iid, the annotation {name_iid, uint_value},
	 * source_location_iid; the packet: timestamp, sequence id, TrackEvent */
	size_t ann = 2 + 1 + pb_varint_size(v);
	size_t te = 2 + 1 + pb_varint_size(iid) + 2 + ann + (sym ? 2 + pb_varint_size(sym) : 0);
	size_t pkt = 1 + pb_varint_size(delta) + 1 + pb_varint_size(s->id) + 1 + pb_varint_size(te) +
	             te;
	struct pb *b = &w->b;
	if (b->cap - b->n < 64 && pb_grow(b, 64))
		return fail(w, ENOMEM);
	unsigned char *q = b->p + b->n;
	*q++ = TRACE_PACKET << 3 | PB_LEN;
	q += pb_put_varint(q, pkt);
	*q++ = TP_TIMESTAMP << 3 | PB_VARINT;
	q += pb_put_varint(q, delta);
	*q++ = TP_SEQ_ID << 3 | PB_VARINT;
	q += pb_put_varint(q, s->id);
	*q++ = TP_TRACK_EVENT << 3 | PB_LEN;
	q += pb_put_varint(q, te);
	*q++ = TE_TYPE << 3 | PB_VARINT;
	*q++ = TYPE_INSTANT;
	*q++ = TE_NAME_IID << 3 | PB_VARINT;
	q += pb_put_varint(q, iid);
	*q++ = TE_ANNOTATION << 3 | PB_LEN;
	*q++ = (unsigned char)ann;
	*q++ = DA_NAME_IID << 3 | PB_VARINT;
	*q++ = (unsigned char)name;
	*q++ = DA_UINT << 3 | PB_VARINT;
	q += pb_put_varint(q, v);
	if (sym) {
		q += pb_put_varint(q, (uint64_t)TE_SOURCE_LOCATION_IID << 3 | PB_VARINT);
		q += pb_put_varint(q, sym);
	}
	b->n = (size_t)(q - b->p);
	s->clock = ts;
	return packet_done(w);
}

int pf_event(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts, unsigned type_id,
             const char *type_name, const char *symbol, uint64_t sym_id, const void *payload,
             size_t len, unsigned flags)
{
	return event(w, pid, tid, ts, type_id, type_name, symbol, sym_id, payload, len, NULL, 0,
	             flags);
}

int pf_event_fields(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts, unsigned type_id,
                    const char *type_name, const char *symbol, uint64_t sym_id,
                    const struct pf_field *f, size_t n, unsigned flags)
{
	return event(w, pid, tid, ts, type_id, type_name, symbol, sym_id, NULL, 0, f, n, flags);
}

static int event(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts, unsigned type_id,
                 const char *type_name, const char *symbol, uint64_t sym_id, const void *payload,
                 size_t len, const struct pf_field *fields, size_t nfields, unsigned flags)
{
	struct seq *s = seq_of(w, pid, tid, 0, 0, NULL);
	if (!s)
		return w->err;
	seq_ready(w, s, ts); /* (before what it has interned is looked at) */
	uint32_t sym = 0;
	int new_type, new_sym = 0;
	if (symbol && *symbol) {
		if (!sym_id && s->last_sym && !strcmp(w->sym[s->last_sym - 1], symbol))
			sym = s->last_sym;
		else if ((sym = sym_of(w, symbol, sym_id)) == 0)
			return w->err;
		if ((new_sym = bit_set(&s->syms, &s->nsyms, sym)) < 0)
			return fail(w, ENOMEM);
		s->last_sym = sym;
	}
	/* (an id beyond any a log has: named again at each event, in no table) */
	new_type = type_id < TYPE_BITS ? bit_set(&s->types, &s->ntypes, type_id) : 1;
	if (new_type < 0)
		return fail(w, ENOMEM);

	struct pb *b = &w->b;
	unsigned name;
	uint64_t v;
	if (!new_type && !new_sym && !fields && !flags && !w->flow &&
	    payload_word(payload, len, &name, &v))
		return word_event(w, s, ts, type_id, sym, name, v);
	size_t pkt = packet_at(w, s, ts);
	if (new_type || new_sym) {
		size_t in = pb_open(b, TP_INTERNED);
		if (new_type) {
			char dflt[32];
			size_t m = pb_open(b, ID_EVENT_NAMES);
			pb_uint(b, IN_IID, (uint64_t)type_id + 2);
			snprintf(dflt, sizeof dflt, "event-%u", type_id);
			put_descriptor_name(b, IN_NAME, type_name, dflt);
			pb_close(b, m);
		}
		if (new_sym)
			put_source_location(b, sym, w->sym[sym - 1]);
		pb_close(b, in);
	}
	size_t te = pb_open(b, TP_TRACK_EVENT);
	pb_uint(b, TE_TYPE, TYPE_INSTANT);
	pb_uint(b, TE_NAME_IID, (uint64_t)type_id + 2);
	if (fields)
		put_fields(b, fields, nfields);
	else
		put_payload(b, payload, len);
	if (sym)
		pb_uint(b, TE_SOURCE_LOCATION_IID, sym);
	if (flags & PF_TRUNCATED) {
		size_t a = pb_open(b, TE_ANNOTATION);
		pb_uint(b, DA_NAME_IID, A_TRUNCATED);
		pb_uint(b, DA_BOOL, 1);
		pb_close(b, a);
	}
	if (w->flow) { /* a flow arrow from (or to) this event: a fixed64 id */
		pb_key(b, w->flow_end ? TE_TERMINATING_FLOW_IDS : TE_FLOW_IDS, PB_I64);
		if (b->cap - b->n >= 8 || !pb_grow(b, 8))
			for (int k = 0; k < 8; k++)
				b->p[b->n++] = (unsigned char)(w->flow >> (8 * k));
		w->flow = 0;
	}
	pb_close(b, te);
	pb_close(b, pkt);
	return packet_done(w);
}

int pf_loss(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts, uint64_t count)
{
	struct seq *s = seq_of(w, pid, tid, 0, 0, NULL);
	if (!s)
		return w->err;
	struct pb *b = &w->b;
	if (!w->lost_track) {
		size_t pkt = pb_open(b, TRACE_PACKET);
		size_t td = pb_open(b, TP_TRACK_DESCRIPTOR);
		pb_uint(b, TD_UUID, UUID_LOST);
		pb_str(b, TD_NAME, "lost events");
		size_t cd = pb_open(b, TD_COUNTER);
		pb_uint(b, CD_UNIT, UNIT_COUNT);
		pb_close(b, cd);
		pb_close(b, td);
		pb_close(b, pkt);
		w->lost_track = 1;
	}
	w->lost += count;
	/* the instant, on the thread's track */
	size_t pkt = packet_at(w, s, ts);
	size_t te = pb_open(b, TP_TRACK_EVENT);
	pb_uint(b, TE_TYPE, TYPE_INSTANT);
	pb_uint(b, TE_NAME_IID, IID_LOST);
	annotation_uint(b, A_COUNT, count);
	pb_close(b, te);
	pb_close(b, pkt);
	/* the running total */
	pkt = packet_at(w, s, ts);
	te = pb_open(b, TP_TRACK_EVENT);
	pb_uint(b, TE_TYPE, TYPE_COUNTER);
	pb_uint(b, TE_TRACK_UUID, UUID_LOST);
	pb_int(b, TE_COUNTER, (int64_t)w->lost);
	pb_close(b, te);
	pb_close(b, pkt);
	return packet_done(w);
}

/* ---------------------------------------------------------------- spans */
void pf_flow(struct pf *w, uint64_t flow, int terminating)
{
	w->flow = flow;
	w->flow_end = terminating;
}

int pf_async_track(struct pf *w, uint64_t track, const char *name)
{
	struct pb *b = &w->b;
	size_t pkt = pb_open(b, TRACE_PACKET);
	size_t td = pb_open(b, TP_TRACK_DESCRIPTOR);
	pb_uint(b, TD_UUID, UUID_ASYNC + track);
	pb_str(b, TD_NAME, name);
	pb_close(b, td);
	pb_close(b, pkt);
	return packet_done(w);
}

int pf_slice(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts, int begin, unsigned span,
             const char *name, uint64_t track, unsigned flags)
{
	struct seq *s = seq_of(w, pid, tid, 0, 0, NULL);
	if (!s)
		return w->err;
	seq_ready(w, s, ts);
	int new_name = 0;
	if (begin && (new_name = bit_set(&s->spans, &s->nspans, span)) < 0)
		return fail(w, ENOMEM);
	struct pb *b = &w->b;
	size_t pkt = packet_at(w, s, ts);
	if (new_name) {
		size_t in = pb_open(b, TP_INTERNED);
		size_t m = pb_open(b, ID_EVENT_NAMES);
		pb_uint(b, IN_IID, (uint64_t)IID_SPAN + span);
		pb_str(b, IN_NAME, name);
		pb_close(b, m);
		pb_close(b, in);
	}
	size_t te = pb_open(b, TP_TRACK_EVENT);
	pb_uint(b, TE_TYPE, begin ? TYPE_SLICE_BEGIN : TYPE_SLICE_END);
	if (begin)
		pb_uint(b, TE_NAME_IID, (uint64_t)IID_SPAN + span);
	if (track)
		pb_uint(b, TE_TRACK_UUID, UUID_ASYNC + track);
	for (unsigned f = PF_INCOMPLETE; f <= PF_SPLIT; f <<= 1)
		if (flags & f) {
			size_t a = pb_open(b, TE_ANNOTATION);
			pb_uint(b, DA_NAME_IID, f == PF_INCOMPLETE ? A_INCOMPLETE : A_SPLIT);
			pb_uint(b, DA_BOOL, 1);
			pb_close(b, a);
		}
	pb_close(b, te);
	pb_close(b, pkt);
	return packet_done(w);
}

/* ---------------------------------------------------------------- file */
struct pf *pf_open(FILE *out)
{
	struct pf *w = calloc(1, sizeof *w);
	if (w && !(w->ids = calloc(SYM_IDS, sizeof *w->ids))) {
		free(w);
		return NULL;
	}
	if (w) {
		w->f = out;
		w->compress = PF_CAN_COMPRESS;
	}
	return w;
}

int pf_compress(struct pf *w, int on)
{
	if (on && !PF_CAN_COMPRESS)
		return ENOTSUP;
	if (!on != !w->compress)
		flush(w); /* what was written so far, as it was to be */
	w->compress = on != 0;
	return w->err;
}

int pf_close(struct pf *w)
{
	int rc = flush(w);
	for (size_t i = 0; i < w->nseq; i++) {
		free(w->seq[i].types);
		free(w->seq[i].syms);
		free(w->seq[i].spans);
	}
	for (size_t i = 0; i < w->nsym; i++)
		free(w->sym[i]);
	free(w->seq);
	free(w->seqx.slot);
	free(w->pn);
	free(w->pnx.slot);
	free(w->pids);
	free(w->pidx.slot);
	free(w->sym);
	free(w->symx.slot);
	free(w->ids);
	pb_free(&w->b);
#if defined PT_HAVE_LIBDEFLATE
	if (w->z)
		libdeflate_free_compressor(w->z);
#elif defined PT_HAVE_ZLIB
	if (w->z) {
		deflateEnd(w->z);
		free(w->z);
	}
#endif
	free(w->zout);
	free(w);
	return rc;
}
