/*
 * relayd_proto.c -- the relay daemon's protocol, as LTTng 2.11 and later
 * speak it (lttng-relayd; docs/relayd.md): the URL, the control messages a
 * producer sends, the header of a packet on the data socket, and the
 * replies.  No I/O here: relay.c moves the bytes, fuzz/relayd_fuzz.c
 * feeds the reply parser.
 *
 * Every integer on the wire is big-endian; structures are packed.  A
 * control message is a 24-byte header (u64 circuit id, unused; u64
 * payload size; u32 command; u32 command version) and its payload.  The
 * relay answers each command we send with one reply:
 *   VERSION          u32 major, u32 minor
 *   CREATE_SESSION   u64 session id, u32 code, u32 path length (with its
 *                    NUL), the session's directory
 *   ADD_STREAM       u64 stream handle, u32 code
 *   others           u32 code
 * (ROTATE_STREAMS: u32 count, an optional u64 chunk, then u64 stream and
 * u64 sequence number each.)
 * A reply is untrusted input: lengths are bounded, strings must end where
 * their length says, and anything else is RP_BAD with the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "write.h"

#define HDR 24
#define CTRL_PAYLOAD_MAX (128u << 10) /* stay below the relay's limit on a command */

void rp_free(struct rp_buf *b)
{
	free(b->p);
	*b = (struct rp_buf){ NULL, 0, 0, 0 };
}

static unsigned char *grow(struct rp_buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->n + n > b->cap) {
		size_t ncap = b->cap ? b->cap : 256;
		while (ncap < b->n + n)
			ncap *= 2;
		unsigned char *p = realloc(b->p, ncap);
		if (!p) {
			b->oom = 1;
			return NULL;
		}
		b->p = p;
		b->cap = ncap;
	}
	unsigned char *at = b->p + b->n;
	b->n += n;
	return at;
}

static void be(unsigned char *o, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		o[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t get_be(const unsigned char *p, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be(struct rp_buf *b, uint64_t v, int bytes)
{
	unsigned char *o = grow(b, (size_t)bytes);
	if (o)
		be(o, v, bytes);
}

static void put_bytes(struct rp_buf *b, const void *d, size_t n)
{
	unsigned char *o = grow(b, n);
	if (o && n)
		memcpy(o, d, n);
}

static void header(struct rp_buf *b, uint32_t cmd, size_t payload)
{
	put_be(b, 0, 8);
	put_be(b, payload, 8);
	put_be(b, cmd, 4);
	put_be(b, 0, 4);
}

void rp_version(struct rp_buf *b)
{
	header(b, RELAYD_VERSION, 8);
	put_be(b, RELAYD_PROTO_MAJOR, 4);
	put_be(b, RELAYD_PROTO_MINOR, 4);
}

void rp_create_session(struct rp_buf *b, const struct rp_session *s)
{
	size_t nl = strlen(s->name) + 1, hl = strlen(s->hostname) + 1;
	/* 4 lengths and the live timer, 2 flags, the uuid, 2 u64, an optional
	 * u64 (is_set byte and value, packed), then the names */
	size_t fixed = 4 * 4 + 2 + 16 + 8 + 8 + 9;

	header(b, RELAYD_CREATE_SESSION, fixed + nl + hl);
	put_be(b, nl, 4);
	put_be(b, hl, 4);
	put_be(b, 0, 4);                 /* no base path */
	put_be(b, s->live_timer_us, 4);
	put_be(b, 0, 1);                 /* not a snapshot */
	put_be(b, s->name_has_time ? 1 : 0, 1);
	put_bytes(b, s->uuid, 16);
	put_be(b, s->id, 8);
	put_be(b, s->creation_time, 8);
	put_be(b, 0, 1);                 /* no current trace chunk yet */
	put_be(b, 0, 8);
	put_bytes(b, s->name, nl);
	put_bytes(b, s->hostname, hl);
}

void rp_create_chunk(struct rp_buf *b, uint64_t chunk_id, uint64_t creation_time)
{
	header(b, RELAYD_CREATE_TRACE_CHUNK, 8 + 8 + 4);
	put_be(b, chunk_id, 8);
	put_be(b, creation_time, 8);
	put_be(b, 0, 4);                 /* the chunk keeps the session's directory */
}

void rp_add_stream(struct rp_buf *b, const char *channel, const char *path, uint64_t chunk_id)
{
	size_t cl = strlen(channel) + 1, pl = strlen(path) + 1;

	header(b, RELAYD_ADD_STREAM, 4 + 4 + 8 + 8 + 8 + cl + pl);
	put_be(b, cl, 4);
	put_be(b, pl, 4);
	put_be(b, 0, 8);                 /* one trace file, no size limit */
	put_be(b, 0, 8);
	put_be(b, chunk_id, 8);
	put_bytes(b, channel, cl);
	put_bytes(b, path, pl);
}

void rp_streams_sent(struct rp_buf *b)
{
	header(b, RELAYD_STREAMS_SENT, 0);
}

void rp_metadata(struct rp_buf *b, uint64_t stream, const void *text, size_t len)
{
	/* in pieces the relay accepts on its control socket */
	const unsigned char *t = text;
	do {
		size_t n = len < CTRL_PAYLOAD_MAX - 12 ? len : CTRL_PAYLOAD_MAX - 12;
		header(b, RELAYD_SEND_METADATA, 8 + 4 + n);
		put_be(b, stream, 8);
		put_be(b, 0, 4);         /* no padding */
		put_bytes(b, t, n);
		t += n;
		len -= n;
	} while (len);
}

void rp_index(struct rp_buf *b, const struct rp_index *ix)
{
	header(b, RELAYD_SEND_INDEX, 10 * 8);
	put_be(b, ix->relay_stream, 8);
	put_be(b, ix->net_seq, 8);
	put_be(b, ix->packet_size, 8);
	put_be(b, ix->content_size, 8);
	put_be(b, ix->ts_begin, 8);
	put_be(b, ix->ts_end, 8);
	put_be(b, ix->discarded, 8);
	put_be(b, ix->stream_id, 8);
	put_be(b, ix->instance_id, 8);
	put_be(b, ix->packet_seq, 8);
}

void rp_close_stream(struct rp_buf *b, uint64_t stream, uint64_t last_net_seq)
{
	header(b, RELAYD_CLOSE_STREAM, 16);
	put_be(b, stream, 8);
	put_be(b, last_net_seq, 8);
}

void rp_rotate_streams(struct rp_buf *b, const uint64_t *streams, const uint64_t *net_seq,
                       unsigned n)
{
	/* u32 count, an optional u64 new chunk (is_set byte and value, packed:
	 * not set, no chunk), then (u64 stream, u64 sequence number) each */
	header(b, RELAYD_ROTATE_STREAMS, 4 + 9 + 16u * n);
	put_be(b, n, 4);
	put_be(b, 0, 1);
	put_be(b, 0, 8);
	for (unsigned i = 0; i < n; i++) {
		put_be(b, streams[i], 8);
		put_be(b, net_seq[i], 8);
	}
}

void rp_data_hdr(unsigned char out[RELAYD_DATA_HDR], uint64_t stream, uint64_t net_seq,
                 uint32_t size)
{
	be(out, 0, 8);
	be(out + 8, stream, 8);
	be(out + 16, net_seq, 8);
	be(out + 24, size, 4);
	be(out + 28, 0, 4);              /* no padding */
}

const char *rp_cmd_name(uint32_t cmd)
{
	switch (cmd) {
	case RELAYD_VERSION: return "version check";
	case RELAYD_CREATE_SESSION: return "create session";
	case RELAYD_CREATE_TRACE_CHUNK: return "create trace chunk";
	case RELAYD_ADD_STREAM: return "add stream";
	case RELAYD_STREAMS_SENT: return "streams sent";
	case RELAYD_SEND_METADATA: return "metadata";
	case RELAYD_SEND_INDEX: return "packet index";
	case RELAYD_CLOSE_STREAM: return "close stream";
	case RELAYD_ROTATE_STREAMS: return "rotate streams";
	default: return "unknown command";
	}
}

static int bad(char *why, size_t cap, const char *what)
{
	if (why && cap)
		snprintf(why, cap, "%s", what);
	return RP_BAD;
}

int rp_parse_reply(uint32_t cmd, const unsigned char *p, size_t len, struct rp_reply *r,
                   size_t *used, char *why, size_t cap)
{
	size_t need;

	memset(r, 0, sizeof *r);
	switch (cmd) {
	case RELAYD_VERSION:
		need = 8;
		break;
	case RELAYD_CREATE_SESSION:
		need = 16;
		break;
	case RELAYD_ADD_STREAM:
		need = 12;
		break;
	case RELAYD_CREATE_TRACE_CHUNK:
	case RELAYD_STREAMS_SENT:
	case RELAYD_SEND_INDEX:
	case RELAYD_CLOSE_STREAM:
	case RELAYD_ROTATE_STREAMS:
		need = 4;
		break;
	default:
		return bad(why, cap, "a reply to a command that has none");
	}
	if (len < need) {
		*used = need;
		return RP_MORE;
	}
	switch (cmd) {
	case RELAYD_VERSION:
		r->code = RELAYD_OK;
		r->major = (uint32_t)get_be(p, 4);
		r->minor = (uint32_t)get_be(p + 4, 4);
		if (r->major != RELAYD_PROTO_MAJOR) {
			snprintf(why, cap, "protocol version %u.%u, not %d.x", r->major, r->minor,
			         RELAYD_PROTO_MAJOR);
			return RP_BAD;
		}
		if (r->minor < RELAYD_PROTO_MINOR_MIN || r->minor > RELAYD_PROTO_MINOR) {
			/* it must answer with the lower of its version and ours */
			snprintf(why, cap, "protocol version %u.%u (2.%d to 2.%d needed)", r->major,
			         r->minor, RELAYD_PROTO_MINOR_MIN, RELAYD_PROTO_MINOR);
			return RP_BAD;
		}
		break;
	case RELAYD_CREATE_SESSION: {
		r->id = get_be(p, 8);
		r->code = (uint32_t)get_be(p + 8, 4);
		uint32_t pl = (uint32_t)get_be(p + 12, 4);
		if (pl > RP_PATH_MAX)
			return bad(why, cap, "a session directory longer than 4096 bytes");
		need += pl;
		if (len < need) {
			*used = need;
			return RP_MORE;
		}
		if (pl) {
			const unsigned char *s = p + 16;
			if (s[pl - 1] != 0 || memchr(s, 0, pl) != s + pl - 1)
				return bad(why, cap, "a session directory that is not one string");
			memcpy(r->path, s, pl);
		}
		if (r->code == RELAYD_OK && !pl)
			return bad(why, cap, "a session created without a directory");
		break;
	}
	case RELAYD_ADD_STREAM:
		r->id = get_be(p, 8);
		r->code = (uint32_t)get_be(p + 8, 4);
		if (r->code == RELAYD_OK && r->id == UINT64_MAX)
			return bad(why, cap, "a stream created without a handle");
		break;
	default:
		r->code = (uint32_t)get_be(p, 4);
		break;
	}
	*used = need;
	return RP_OK;
}

/* A decimal port, 1 to 65535. */
static int port(const char *s, size_t n, unsigned *out)
{
	unsigned v = 0;
	if (n == 0 || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*out = v;
	return 0;
}

int relayd_url_parse(const char *s, struct relayd_url *u, char *why, size_t cap)
{
	const char *h, *rest;
	size_t hl;

	memset(u, 0, sizeof *u);
	u->ctrl_port = RELAYD_CTRL_PORT;
	u->data_port = RELAYD_DATA_PORT;
	if (!strncmp(s, "net://", 6))
		h = s + 6;
	else if (!strncmp(s, "net6://", 7))
		h = s + 7;
	else {
		snprintf(why, cap, "not net://HOST[:CTRL_PORT[:DATA_PORT]]");
		return -1;
	}
	if (*h == '[') { /* an IPv6 address */
		const char *e = strchr(h, ']');
		if (!e) {
			snprintf(why, cap, "an IPv6 address without its ']'");
			return -1;
		}
		hl = (size_t)(e - h - 1);
		h++;
		rest = e + 1;
	} else {
		hl = strcspn(h, ":/");
		rest = h + hl;
	}
	if (hl == 0 || hl >= sizeof u->host) {
		snprintf(why, cap, hl ? "the host name is too long" : "no host");
		return -1;
	}
	memcpy(u->host, h, hl);
	u->host[hl] = 0;
	if (*rest == ':') {
		const char *p = rest + 1;
		size_t n = strcspn(p, ":/");
		if (port(p, n, &u->ctrl_port)) {
			snprintf(why, cap, "'%.*s' is not a port (1 to 65535)", (int)n, p);
			return -1;
		}
		rest = p + n;
		if (*rest == ':') {
			p = rest + 1;
			n = strcspn(p, ":/");
			if (port(p, n, &u->data_port)) {
				snprintf(why, cap, "'%.*s' is not a port (1 to 65535)", (int)n, p);
				return -1;
			}
			rest = p + n;
		}
	}
	if (*rest == '/' && rest[1] == 0)
		rest++;
	if (*rest) {
		snprintf(why, cap, "unexpected '%s' after the host and ports", rest);
		return -1;
	}
	return 0;
}
