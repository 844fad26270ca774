/*
 * relay.h -- streaming a trace live to LTTng's relay daemon (lttng-relayd):
 * the parts of `record --relayd` (docs/relayd.md).
 *
 *   relayd_proto.c  the relay protocol: URL, messages, replies (no I/O;
 *                   fuzz/relayd_fuzz.c drives the reply parser)
 *   relay_ctf.c     events into CTF 1.8 packets with LTTng's packet
 *                   context, and the TSDL metadata that describes them
 *   relay.c         the thread that reads a second stream on the traced
 *                   process and sends it: connecting, losses, reconnecting
 */
#ifndef POSIXTRACE_RELAY_H
#define POSIXTRACE_RELAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <trace.h>

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
	RELAYD_STREAMS_SENT = 16, RELAYD_CREATE_TRACE_CHUNK = 19,
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

#endif
