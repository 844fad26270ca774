/*
 * write.h -- the third layer of the posixtrace command (cli/write/): a
 * trace written in a format.  The text line of `show` and `live` (format.c),
 * stats' report (stats_report.c) and its part on spans (spans_report.c),
 * info's report (info_report.c), top's screen (top_report.c), the
 * exporters (export_*.c: Chrome JSON, CTF, HTML with html_assets.c and
 * html_overview.c, Perfetto with protobuf.c and perfetto_trace.c;
 * ctf_text.c what the CTF export and the relay share), the live relay to
 * lttng-relayd (relay*.c), and the requests and JSON answers of `view`
 * and its page (view_req.c, vquery.c, view_assets.c).  Below it:
 * enrich.h.
 */
#ifndef POSIXTRACE_CLI_WRITE_H
#define POSIXTRACE_CLI_WRITE_H

#include <string.h>
#include "../enrich/enrich.h"

/* ------------------------------------------------------------ format.c */
/* The payload as text in quotes, or hex; at most max bytes shown. */
void fmt_data(char *out, size_t cap, const unsigned char *d, size_t len, size_t max,
              int *is_text);
int fmt_is_text(const unsigned char *d, size_t len); /* plausibly text (format.c) */
void fmt_event_data(char *out, size_t cap, const struct tlog *l, const struct tev *e);
size_t json_str(char *out, size_t cap, const char *s);      /* "..." escaped */
/* Thread t of l (at time ts) as JSON members, no braces, the same in each
 * command: "pid":P,"thread":"PID/TID","tid":TID,"name":"NAME","pthread_t":"0x..."
 * (tid and name null when the trace does not say). */
void json_thread(FILE *f, const struct tlog *l, uint32_t t, uint64_t ts);
void fmt_line(FILE *f, const struct tlog *l, const struct tev *e, uint64_t t0, uint64_t prev,
              int absolute, int name_w, struct symz *z);
struct span_mark;
void fmt_line_span(FILE *f, const struct tlog *l, const struct tev *e, uint64_t t0, uint64_t prev,
                   int absolute, int name_w, struct symz *z, const struct span_mark *sm);

/* spans_report.c: stats' part on spans, as text and as the JSON "spans"
 * member (docs/posixtrace.1, STATS JSON); times relative to t0. */
void spans_print(FILE *f, const struct spans *s, const struct tlog *l, uint64_t t0);
void spans_json(FILE *f, const struct spans *s, const struct tlog *l, uint64_t t0);
/* info's part: a line per span (its pairing, figures, types and their
 * counts in l). */
void spans_summary(FILE *f, const struct spans *s, const struct tlog *l);
/* A complete span (m) as Chrome trace events: a complete event ("X") on
 * its thread, or for a keyed span an async pair ("b"/"e", id n). */
void spans_chrome(FILE *f, const struct spans *s, const struct tlog *l, const struct span_mark *m,
                  uint32_t end_thread, uint64_t t0, uint64_t n);

/* ------------------------------------------------------------ export_*.c */
/* Each reads the events of l (its totals known: tlog_load) in one pass. */
int export_chrome(struct tlog *l, struct symz *z, struct spans *sp, FILE *out);
/* html: every event in [from, to] (ns since the epoch; 0, UINT64_MAX: all)
 * when they fit a page, else the overview and a window (export_html.c);
 * times labelled from t0 */
int export_html(struct tlog *l, struct symz *z, struct spans *sp, FILE *out, uint64_t t0,
                uint64_t from, uint64_t to);
void html_text(FILE *f, const char *s);  /* as XML character data or an attribute's value */
int export_ctf(struct tlog *l, struct symz *z, const char *dir, int force);
/* perfetto_trace.c: through the Perfetto writer (below; plain: no
 * compressed packets).  -1 with errno: writing failed; 1: reading did (said). */
int export_perfetto(struct tlog *l, struct symz *z, struct spans *sp, FILE *out, int plain);

/* ------------------------------------------------------------ ctf_text.c */
/* What export_ctf.c and the relay's relay_ctf.c share: CTF 1.8, little
 * endian, byte-aligned integers. */
#define CTF_PACKET_MAGIC 0xC1FC1FC1u
void ctf_le(unsigned char *o, uint64_t v, int bytes);  /* v's low bytes at o */
int ctf_uuid_new(unsigned char u[16]);                 /* random (v4); 0, or -1 (errno) */
void ctf_uuid_str(char out[37], const unsigned char u[16]);
void ctf_tsdl_str(FILE *f, const char *s);             /* a TSDL string literal */
/* The metadata's start: the integer types uint8_t, uint16_t, uint32_t,
 * uint64_t, int32_t, uint64_hex_t, and the trace block (packet header:
 * magic, uuid, stream_id, and stream_instance_id if instance_id). */
void ctf_tsdl_trace(FILE *f, const unsigned char uuid[16], int instance_id);
/* The env block: the tracer's name and version, then each key kv[2i]
 * with string value kv[2i+1], up to a NULL key. */
void ctf_tsdl_env(FILE *f, const char *const kv[]);
/* The clock "realtime": CLOCK_REALTIME in ns from offset_s seconds after
 * the epoch, and uint64_clock_t, a 64-bit value of it. */
void ctf_tsdl_clock(FILE *f, const unsigned char cuuid[16], uint64_t offset_s);

/* html_spans.c: the spans of the page (bars on the lanes of the window
 * [lo, hi] drawn: lane[thread] * lane_h down, x in us from lo plus pad;
 * at the end a section per span name: figures, latency histogram, p99
 * over time).  hspans_event: after spans_event() gave m; 0, or -1 out of
 * memory. */
struct hlane { const unsigned *lane; int lane_h; uint64_t lo, hi; double pad; };
struct hspans;
struct hspans *hspans_new(struct spans *sp, const struct tlog *l); /* NULL: out of memory */
int hspans_event(struct hspans *h, FILE *f, const struct tlog *l, const struct span_mark *m,
                 const struct hlane *g);
void hspans_report(struct hspans *h, FILE *f);
void hspans_free(struct hspans *h);

/* html_assets.c: the style sheet and the script of the HTML timeline */
extern const char html_css[], html_js[];

/* ------------------------------------------------------------ html_overview.c */
/* export --format html of a large log: the window [*lo, *hi] cut to hold
 * at most max events (1 if cut), and the overview of the whole trace. */
int html_window(const struct vindex *x, uint64_t *lo, uint64_t *hi, uint64_t max);
void html_overview(FILE *f, const struct tlog *l, const struct vindex *x, const unsigned *lane,
                   uint64_t lo, uint64_t hi, int lane_h, int label_w);

/* ------------------------------------------------------------ export_perfetto.c
 * A writer of Perfetto's native trace format (a protobuf
 * `perfetto.protos.Trace`, the .pftrace files ui.perfetto.dev and
 * trace_processor open), fed one call at a time: it keeps no events, only
 * what it knows of each process, thread, event type and symbol.
 *
 *   struct pf *w = pf_open(f);
 *   pf_process(w, pid, "app", 0, NULL);        once per process, any time
 *   pf_thread(w, pid, tid, 1, "thread 1");     once per thread, any time
 *   pf_event(w, pid, tid, ts, id, "request", "main+0x2c (app.c:12)", 0, data, len, 0);
 *   pf_loss(w, pid, tid, ts, 120);             a gap where 120 events were lost
 *   rc = pf_close(w);                          0, or an errno
 *
 * An event of a thread (or process) never described gets a descriptor of
 * its own.  pid 0 is not a process: its events (a trace's own, such as the
 * OVERFLOW and RESUME the reader synthesizes) go to a track of their own.
 * Timestamps are ns since the epoch (CLOCK_REALTIME).  A symbol is written
 * as the symbolizer gives it, FUNCTION+0xOFF then " (FILE:LINE)" when it
 * knows them: its function, file and line go in the event's source
 * location.  Built with zlib (PT_HAVE_ZLIB) or libdeflate
 * (PT_HAVE_LIBDEFLATE: the same zlib streams, faster), the packets are
 * written compressed, as Perfetto's own service writes them, unless
 * pf_compress(w, 0) is called.  What goes where in the output:
 * export_perfetto.c.
 */
#define PF_TRUNCATED 1u  /* pf_event flags: the payload was cut short */

struct pf;
struct pf *pf_open(FILE *out);   /* NULL: out of memory */
/* ppid 0: unknown; cmdline NULL or "": unknown (its arguments, space
 * separated, as the trace has them).  With a ppid, a ProcessTree packet
 * too, which is where Perfetto builds its process tree from. */
int pf_process(struct pf *w, int32_t pid, const char *name, int32_t ppid, const char *cmdline);
int pf_thread(struct pf *w, int32_t pid, uint64_t tid, unsigned idx, const char *name);
/* The thread of key (pid, tid) is kernel thread ktid, named name (NULL:
 * none): its descriptor has that real TID.  Before its first event. */
int pf_thread_ident(struct pf *w, int32_t pid, uint64_t tid, int32_t ktid, const char *name);
/* symbol: where the event was recorded ("" or NULL: none), as above;
 * sym_id: 0, or a number given with this symbol's text only (such as
 * symz_lookup_id's), by which it is found again without reading it */
int pf_event(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts_ns, unsigned type_id,
             const char *type_name, const char *symbol, uint64_t sym_id, const void *payload,
             size_t len, unsigned flags);
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
                    const char *type_name, const char *symbol, uint64_t sym_id,
                    const struct pf_field *f, size_t n, unsigned flags);
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
/* The next pf_event() or pf_event_fields() starts (terminating 0) or ends
 * (1) the flow numbered flow (not 0): an arrow from one event to another,
 * on any thread (TrackEvent.flow_ids, terminating_flow_ids). */
void pf_flow(struct pf *w, uint64_t flow, int terminating);
int pf_slice(struct pf *w, int32_t pid, uint64_t tid, uint64_t ts_ns, int begin, unsigned span,
             const char *name, uint64_t track, unsigned flags);
/* Compressed packets (TracePacket.compressed_packets, zlib) from here on,
 * or plain ones (on = 0); any time.  0, ENOTSUP (on, built without zlib),
 * or the first error writing. */
int pf_compress(struct pf *w, int on);
/* Writes what is left and frees w: 0, or the first error (errno value)
 * writing or allocating. */
int pf_close(struct pf *w);

/* ------------------------------------------------------------ protobuf.c
 * A small protocol buffers encoder (wire format only: no
 * schema, no parsing).  It writes into a growable buffer:
 *
 *   varint fields      pb_uint(b, field, v)   (uint32/64, int32/64, bool, enum)
 *   length-delimited   pb_bytes(b, field, p, n), pb_str(b, field, s)
 *   nested messages    m = pb_open(b, field); ...; pb_close(b, m)
 *
 * pb_open() leaves one byte for the message's length and pb_close() writes
 * it there; a message of 128 bytes or more, whose length takes more than
 * one byte, is moved up to make room (rare for small messages, which is
 * what a trace is made of).  Nested messages nest.
 *
 * Out of memory, the buffer stops growing, later writes are dropped and
 * b->oom is set: check it once at the end.
 */

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

struct pb {
	unsigned char *p;
	size_t n, cap;
	int oom;
};

/* Room for more bytes after b->n; 0, or -1 (out of memory: b->oom set). */
static inline int pb_grow(struct pb *b, size_t more)
{
	if (b->oom)
		return -1;
	if (b->cap - b->n >= more)
		return 0;
	size_t ncap = b->cap ? b->cap : 4096;
	while (ncap - b->n < more) {
		if (ncap > SIZE_MAX / 2) {
			b->oom = 1;
			return -1;
		}
		ncap *= 2;
	}
	unsigned char *p = realloc(b->p, ncap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = ncap;
	return 0;
}

void pb_free(struct pb *b);

/* The bytes varint v takes (1..10). */
static inline size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes varint v at q (room for pb_varint_size(v) bytes): the bytes it took. */
static inline size_t pb_put_varint(unsigned char *q, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		q[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	q[n++] = (unsigned char)v;
	return n;
}

static inline void pb_varint(struct pb *b, uint64_t v)
{
	if (b->cap - b->n < 10 && pb_grow(b, 10))
		return;
	b->n += pb_put_varint(b->p + b->n, v);
}

static inline void pb_key(struct pb *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field: unsigned, bool, enum, or a signed int64/int32 as its
 * two's complement (what protobuf's int64 and int32 are on the wire). */
static inline void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	pb_key(b, field, PB_VARINT);
	pb_varint(b, v);
}

static inline void pb_int(struct pb *b, unsigned field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len);
void pb_str(struct pb *b, unsigned field, const char *s);

/* Opens a nested message (or any length-delimited field written piece by
 * piece): returns the mark to give pb_close(). */
static inline size_t pb_open(struct pb *b, unsigned field)
{
	pb_key(b, field, PB_LEN);
	if (b->cap - b->n < 1 && pb_grow(b, 1))
		return b->n;
	b->p[b->n++] = 0;
	return b->n;
}

/* pb_close() of a message of 128 bytes or more, or after an error: the
 * message moved up to make room for its length.  (Here, not in
 * protobuf.c, so that this header calls nothing in the files that
 * include it.) */
static inline void pb_close_long(struct pb *b, size_t mark)
{
	if (b->oom || mark == 0 || mark > b->n)
		return;
	size_t len = b->n - mark, k = pb_varint_size(len);
	if (k > 1) { /* the length needs more than the byte left for it */
		if (pb_grow(b, k - 1))
			return;
		memmove(b->p + mark + k - 1, b->p + mark, len);
		b->n += k - 1;
	}
	pb_put_varint(b->p + mark - 1, len);
}

/* A nested message's length, back-patched: mark is pb_open()'s value. */
static inline void pb_close(struct pb *b, size_t mark)
{
	if (!b->oom && mark && b->n - mark < 128 && mark <= b->n)
		b->p[mark - 1] = (unsigned char)(b->n - mark);
	else
		pb_close_long(b, mark);
}

/* ------------------------------------------------------------ relay*.c
 * Streaming a trace live to LTTng's relay daemon (lttng-relayd):
 * the parts of `record --relayd` (docs/relayd.md).
 *
 *   relayd_proto.c  the relay protocol: URL, messages, replies (no I/O;
 *                   fuzz/relayd_fuzz.c drives the reply parser)
 *   relay_ctf.c     events into CTF 1.8 packets with LTTng's packet
 *                   context, and the TSDL metadata that describes them
 *   relay.c         the thread that reads a second stream on the traced
 *                   process and sends it: connecting, losses, reconnecting
 */
/* ------------------------------------------------------- relayd_proto.c */
#define RELAYD_CTRL_PORT 5342
#define RELAYD_DATA_PORT 5343
#define RELAYD_HOST_MAX 256

/* net://HOST[:CTRL_PORT[:DATA_PORT]] (or net6://), LTTng's syntax; HOST
 * may be an IPv6 address in brackets.  0, or -1 with the reason in why. */
struct relayd_url { char host[RELAYD_HOST_MAX]; unsigned ctrl_port, data_port; };
int relayd_url_parse(const char *s, struct relayd_url *u, char *why, size_t cap);

/* Commands (the values lttng-relayd uses). */
enum {
	RELAYD_ADD_STREAM = 1, RELAYD_CREATE_SESSION = 2, RELAYD_VERSION = 5,
	RELAYD_SEND_METADATA = 6, RELAYD_CLOSE_STREAM = 7, RELAYD_SEND_INDEX = 13,
	RELAYD_STREAMS_SENT = 16, RELAYD_ROTATE_STREAMS = 18, RELAYD_CREATE_TRACE_CHUNK = 19,
};
#define RELAYD_OK 10              /* lttng's LTTNG_OK */
#define RELAYD_PROTO_MAJOR 2
#define RELAYD_PROTO_MINOR 13     /* what we ask for; 2.11 at least is needed */
#define RELAYD_PROTO_MINOR_MIN 11
#define RELAYD_DATA_HDR 32        /* a data packet's header on the data socket */
#define RELAYD_NAME_MAX 255       /* session name (without its NUL) */
#define RELAYD_HOSTNAME_MAX 63

/* A message being built; oom is set (and the message dropped) when an
 * allocation fails. */
struct rp_buf { unsigned char *p; size_t n, cap; int oom; };
void rp_free(struct rp_buf *b);

struct rp_session {
	const char *name, *hostname;
	uint32_t live_timer_us;
	int name_has_time;        /* the relay does not append the creation time */
	unsigned char uuid[16];   /* ours: one per record (never all zero) */
	uint64_t id;              /* ours */
	uint64_t creation_time;   /* seconds since the epoch */
};
struct rp_index {
	uint64_t relay_stream, net_seq, packet_size, content_size; /* sizes in bits */
	uint64_t ts_begin, ts_end, discarded, stream_id, instance_id, packet_seq;
};
/* Each appends one whole control message (header and payload) to b. */
void rp_version(struct rp_buf *b);
void rp_create_session(struct rp_buf *b, const struct rp_session *s);
void rp_create_chunk(struct rp_buf *b, uint64_t chunk_id, uint64_t creation_time);
void rp_add_stream(struct rp_buf *b, const char *channel, const char *path, uint64_t chunk_id);
void rp_streams_sent(struct rp_buf *b);
void rp_metadata(struct rp_buf *b, uint64_t stream, const void *text, size_t len);
void rp_index(struct rp_buf *b, const struct rp_index *ix);
void rp_close_stream(struct rp_buf *b, uint64_t stream, uint64_t last_net_seq);
/* Rotate streams[n] out of their trace chunk into none, each at net_seq[i]
 * (the sequence number after its last packet; ignored for metadata), as
 * LTTng does when a session is destroyed: a live reader then goes on
 * reading the chunk to its end after the streams are closed. */
void rp_rotate_streams(struct rp_buf *b, const uint64_t *streams, const uint64_t *net_seq,
                       unsigned n);
/* The header that goes before a packet on the data socket. */
void rp_data_hdr(unsigned char out[RELAYD_DATA_HDR], uint64_t stream, uint64_t net_seq,
                 uint32_t size);

/* A reply to command cmd, from len bytes at p.  RP_OK: whole and well
 * formed, *used bytes of it; RP_MORE: *used is the length the reply has
 * at least (read up to it and call again); RP_BAD: not a reply to cmd
 * (why says how).  A relay's refusal (ret_code not RELAYD_OK) is RP_OK
 * with code set: the caller names it. */
enum { RP_OK = 0, RP_MORE = 1, RP_BAD = -1 };
struct rp_reply {
	uint32_t code;            /* ret_code, or RELAYD_OK for VERSION */
	uint32_t major, minor;    /* VERSION */
	uint64_t id;              /* CREATE_SESSION: session; ADD_STREAM: stream handle */
	char path[4097];          /* CREATE_SESSION: the session's directory on the relay */
};
#define RP_PATH_MAX 4096
int rp_parse_reply(uint32_t cmd, const unsigned char *p, size_t len, struct rp_reply *r,
                   size_t *used, char *why, size_t cap);
const char *rp_cmd_name(uint32_t cmd);

/* ----------------------------------------------------------- relay_ctf.c */
/* Events into packets of one CTF stream (class 0).  Layout (little
 * endian, byte aligned):
 *   packet header   u32 magic, u8 uuid[16], u32 stream_id,
 *                   u64 stream_instance_id
 *   packet context  u64 timestamp_begin, timestamp_end (clock values),
 *                   u64 content_size, packet_size (bits),
 *                   u64 packet_seq_num, events_discarded
 *   event header    u32 id, u64 timestamp
 *   event fields    i32 pid, u64 tid, u64 addr, u32 payload_len,
 *                   u8 payload[payload_len]                             */
#define RCTF_HDR 80
struct rctf {
	unsigned char uuid[16], clock_uuid[16];
	uint64_t offset_s;        /* the clock's offset: a second at or before the start */
	uint64_t instance;        /* stream_instance_id */
	unsigned char *p;         /* the packet being filled: header first */
	size_t n, cap;
	uint64_t nevents, tb, te; /* in the packet: count, first and last clock value */
	int declared[1024];       /* event ids already in the metadata */
};
int rctf_init(struct rctf *c, uint64_t start_ns, uint64_t instance);
void rctf_free(struct rctf *c);
/* The metadata up to the event declarations, as text (malloc'ed, *len). */
char *rctf_metadata_head(const struct rctf *c, const char *trace_name, const char *hostname,
                         size_t *len);
/* The declaration of event id (name), once: NULL if already declared. */
char *rctf_metadata_event(struct rctf *c, unsigned id, const char *name, size_t *len);
/* Metadata text as packets, as the relay and live readers want it
 * (malloc'ed, *out_len bytes). */
#define RCTF_META_HDR 37
#define RCTF_META_TEXT 32768
unsigned char *rctf_metadata_packets(const struct rctf *c, const char *text, size_t len,
                                     size_t *out_len);
uint64_t rctf_clock(const struct rctf *c, uint64_t ns);   /* ns since the epoch -> value */
/* One event (ns: its time since the epoch); 0, or -1 out of memory. */
int rctf_add(struct rctf *c, unsigned id, uint64_t ns, int32_t pid, uint64_t tid, uint64_t addr,
             const void *data, size_t len);
/* Close the packet: fill in its header and context; its bytes are c->p,
 * c->n, its index ix (relay_stream and net_seq left for the caller).
 * An empty packet at clock value at (nevents 0) is allowed. */
void rctf_seal(struct rctf *c, uint64_t seq, uint64_t discarded, uint64_t at,
               struct rp_index *ix);
void rctf_reset(struct rctf *c);                          /* empty, for the next */

/* -------------------------------------------------------------- relay.c */
struct relay_opts {
	const char *url_text;     /* as given, for messages */
	struct relayd_url url;
	const char *session;      /* NULL: PROGRAM-PID-YYYYmmdd-HHMMSS */
	const char *hostname;     /* NULL: gethostname() */
	int inherit;
	size_t size;              /* the relay stream's size; 0: default */
	const char *exclude;
	int local_log;            /* -o FILE is kept too */
};
struct relay;
/* A --session or --hostname the relay takes as a directory name: 1 to max
 * characters, no '/', not starting with '.', printable. */
int relay_name_ok(const char *s, size_t max);
#define RELAY_SESSION_MAX (RELAYD_NAME_MAX - 20) /* room for the relay's time */
/* Check the options.  NULL: out of memory or a bad option (said). */
struct relay *relay_open(const struct relay_opts *o);
/* Make the relay's stream on pid (name: the program's), connect and open
 * the session, and start the thread that sends it (before the program
 * runs).  0, or 1 with a message: the stream could not be made, or the
 * relay could not be reached and there is no local log (with one, the
 * relay is tried again while the program runs). */
int relay_attach(struct relay *r, pid_t pid, const char *name);
/* The relay stream's POSIXTRACE_JOIN entry (pt_ext_join), for the tree
 * below the program to join it as the local log's: 0, or an errno. */
int relay_join(struct relay *r, char *buf, size_t cap);
/* After the program ended: send what is left, close, say what happened.
 * Returns 0, or 1 when nothing reached the relay. */
int relay_finish(struct relay *r);

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

/* ------------------------------------------------------------ stats_report.c */
/* stats' figures (cli/cmd/stats.c gathers them) and its report on stdout:
 * per type the gaps and the activity chart's row (none with --json); the
 * counts: the log's totals, or with filters those of the events kept. */
struct stats_type { struct hist gaps; uint64_t last; int seen; uint64_t *act; };
struct stats_counts {
	uint64_t nev, *type, *th, *pr;
	unsigned *prth;               /* per process: threads with events */
	struct twait *wait;           /* per thread: --no-loss waits */
	int waits;                    /* any */
};
struct stats {
	struct tlog l;
	struct spans *sp;
	struct stats_counts k;
	struct stats_type *ts;
	size_t known;                 /* the threads the log's header knew */
	uint64_t t0, t1, rel0;        /* the trace's span; time 0 of the slowest spans */
	int name_w, cols, utf8, width; /* the text's layout */
	unsigned rows;                /* --rows: of the processes and threads tables (0 all) */
	/* the chart's column of the last event, and the offsets from t0 it
	 * covers, [col_lo, col_hi) (stats.c, chart_col) */
	uint64_t col, col_lo, col_hi;
};
void stats_print(const struct stats *s);
void stats_json(const struct stats *s);

/* ------------------------------------------------------------ info_report.c */
/* info's figures (cli/cmd/info.c reads them): the log's totals, its time
 * 0, its spans and no-loss waits (each read in a pass of its own when the
 * log has any), its loaded code; and its report on stdout, section by
 * section (0, or 1 after a message). */
struct info {
	int held;           /* l and sp loaded (to free) */
	struct tlog l;
	uint64_t t0;
	struct spans *sp;
	int has_spans;
	struct twait *w;    /* NULL: no wait recorded */
	struct symz *z;
	unsigned rows;      /* --rows: of the processes and threads tables (0 all) */
};
int info_report(const struct info *in);
/* The processes table (a child below its parent, indented), as info
 * prints it and show --processes; first: the trace's first event; its
 * first rows rows (0: all), the others summed up in a line.  0, or 1
 * after a message. */
int info_processes(const struct tlog *l, struct symz *z, uint64_t first, unsigned rows);


/* ------------------------------------------------------------ top_report.c */
/* top's figures (cli/cmd/top.c gathers them), and a screen of them on
 * stdout: the period just ended (period_ns: its length; win, wcount) and
 * the totals since start_ns (the time now). */
struct top {
	struct tlog l;
	struct spans *sp;
	struct hist *win;             /* per span: the last period's durations */
	uint64_t *wcount;             /* per type: the last period's events */
	uint64_t start_ns, period_ns;
	int tty;
	int32_t self;                 /* top's pid: its own events */
};
void top_report(const struct top *t, pid_t pid, const char *what, uint64_t now);

/* ------------------------------------------------------------ view_assets.c */
extern const char view_page[];

/* ------------------------------------------------------------ rows.c */
/* A table of n rows (count[i]: row i's events, or what else it is
 * ranked by) cut at rows (--rows, 0: none): which rows it shows (the
 * rows with the most; ties: the first), malloc'd; NULL: every one. */
unsigned char *rows_pick(const uint64_t *count, size_t n, unsigned rows);
/* The line after a cut table: how many rows more (of what: "process",
 * "thread"), and how many of unit ("events", "waits") they hold. */
void rows_more(size_t more, const char *what, uint64_t n, const char *unit, int indent);

#endif
