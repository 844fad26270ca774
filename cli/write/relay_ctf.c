/*
 * relay_ctf.c -- events into CTF 1.8 packets for the relay daemon, and the
 * metadata (TSDL text) that describes them.  The layout is in write.h.
 *
 * The relay and its live readers want what LTTng's own packets carry:
 * the packet context has timestamp_begin/end, content_size, packet_size,
 * packet_seq_num and events_discarded, and the header stream_id and
 * stream_instance_id; each packet's index repeats them (relay.c sends
 * it).  events_discarded counts, from the trace's start, the events the
 * relay will never get; a reader learns a packet's losses from the
 * difference with the packet before.
 *
 * The clock "realtime" counts nanoseconds (freq 1e9) from offset_s, a
 * second at or before the recording's start, so readers place every host
 * on the real time line.  The metadata is sent in pieces: the head at
 * the start, then each event type's declaration before the first packet
 * that holds one (a live reader appends metadata as it comes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "write.h"

int rctf_init(struct rctf *c, uint64_t start_ns, uint64_t instance)
{
	memset(c, 0, sizeof *c);
	if (ctf_uuid_new(c->uuid) || ctf_uuid_new(c->clock_uuid))
		return -1;
	c->offset_s = start_ns / 1000000000u;
	c->instance = instance;
	c->cap = 65536 + RCTF_HDR;
	if (!(c->p = calloc(1, c->cap)))
		return -1;
	c->n = RCTF_HDR;
	return 0;
}

void rctf_free(struct rctf *c)
{
	free(c->p);
	c->p = NULL;
}

static char *closed(FILE *f, char **text)
{
	if (fclose(f) != 0) {
		free(*text);
		return NULL;
	}
	return *text;
}

char *rctf_metadata_head(const struct rctf *c, const char *trace_name, const char *hostname,
                         size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	ctf_tsdl_trace(f, c->uuid, 1);
	ctf_tsdl_env(f, (const char *const[]){ "domain", "posixtrace", "hostname", hostname,
	                                       "trace_name", trace_name, NULL });
	ctf_tsdl_clock(f, c->clock_uuid, c->offset_s);
	fprintf(f, "\nstream {\n\tid = 0;\n\tpacket.context := struct {\n"
	           "\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
	           "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
	           "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n\t};\n"
	           "\tevent.header := struct {\n\t\tuint32_t id;\n\t\tuint64_clock_t timestamp;\n"
	           "\t};\n};\n");
	return closed(f, &text);
}

char *rctf_metadata_event(struct rctf *c, unsigned id, const char *name, size_t *len)
{
	char *text = NULL;
	FILE *f;

	if (id >= sizeof c->declared / sizeof c->declared[0] || c->declared[id])
		return NULL;
	if (!(f = open_memstream(&text, len)))
		return NULL;
	fprintf(f, "\nevent {\n\tname = ");
	ctf_tsdl_str(f, name);
	fprintf(f, ";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n"
	           "\t\tint32_t pid;\n\t\tuint64_hex_t pthread_id;\n\t\tuint64_hex_t addr;\n"
	           "\t\tuint32_t payload_len;\n\t\tuint8_t payload[payload_len];\n\t};\n};\n", id);
	if (!closed(f, &text))
		return NULL;
	c->declared[id] = 1;
	return text;
}

/* Text as metadata packets (CTF 1.8's packetized metadata, which a live
 * reader decodes piece by piece): each a 37-byte header (u32 magic
 * 0x75D11D57, u8 uuid[16], u32 checksum 0, u32 content_size and
 * packet_size in bits, u8 compression, encryption and checksum schemes
 * 0, u8 major 1, minor 8) and up to 32 KiB of the text. */
unsigned char *rctf_metadata_packets(const struct rctf *c, const char *text, size_t len,
                                     size_t *out_len)
{
	size_t npk = len ? (len + RCTF_META_TEXT - 1) / RCTF_META_TEXT : 1;
	unsigned char *out = malloc(len + npk * RCTF_META_HDR), *o = out;

	if (!out)
		return NULL;
	do {
		size_t n = len < RCTF_META_TEXT ? len : RCTF_META_TEXT;
		uint32_t bits = (uint32_t)((RCTF_META_HDR + n) * 8);
		ctf_le(o, 0x75D11D57u, 4);
		memcpy(o + 4, c->uuid, 16);
		ctf_le(o + 20, 0, 4);
		ctf_le(o + 24, bits, 4);
		ctf_le(o + 28, bits, 4);
		o[32] = o[33] = o[34] = 0;
		o[35] = 1;
		o[36] = 8;
		memcpy(o + RCTF_META_HDR, text, n);
		o += RCTF_META_HDR + n;
		text += n;
		len -= n;
	} while (len);
	*out_len = (size_t)(o - out);
	return out;
}

uint64_t rctf_clock(const struct rctf *c, uint64_t ns)
{
	uint64_t base = c->offset_s * 1000000000u;
	return ns > base ? ns - base : 0;
}

int rctf_add(struct rctf *c, unsigned id, uint64_t ns, int32_t pid, uint64_t tid, uint64_t addr,
             const void *data, size_t len)
{
	size_t need = 4 + 8 + 4 + 8 + 8 + 4 + len;

	if (c->n + need > c->cap) {
		size_t ncap = c->cap * 2;
		while (ncap < c->n + need)
			ncap *= 2;
		unsigned char *p = realloc(c->p, ncap);
		if (!p)
			return -1;
		c->p = p;
		c->cap = ncap;
	}
	uint64_t t = rctf_clock(c, ns);
	unsigned char *o = c->p + c->n;
	ctf_le(o, id, 4);
	ctf_le(o + 4, t, 8);
	ctf_le(o + 12, (uint32_t)pid, 4);
	ctf_le(o + 16, tid, 8);
	ctf_le(o + 24, addr, 8);
	ctf_le(o + 32, len, 4);
	if (len)
		memcpy(o + 36, data, len);
	c->n += need;
	if (!c->nevents++)
		c->tb = t;
	c->te = t > c->te ? t : c->te;
	return 0;
}

void rctf_seal(struct rctf *c, uint64_t seq, uint64_t discarded, uint64_t at,
               struct rp_index *ix)
{
	uint64_t tb = c->nevents ? c->tb : at, te = c->nevents ? c->te : at;
	uint64_t bits = (uint64_t)c->n * 8;

	ctf_le(c->p, CTF_PACKET_MAGIC, 4);
	memcpy(c->p + 4, c->uuid, 16);
	ctf_le(c->p + 20, 0, 4);
	ctf_le(c->p + 24, c->instance, 8);
	ctf_le(c->p + 32, tb, 8);
	ctf_le(c->p + 40, te, 8);
	ctf_le(c->p + 48, bits, 8);
	ctf_le(c->p + 56, bits, 8);
	ctf_le(c->p + 64, seq, 8);
	ctf_le(c->p + 72, discarded, 8);
	*ix = (struct rp_index){ 0, 0, bits, bits, tb, te, discarded, 0, c->instance, seq };
}

void rctf_reset(struct rctf *c)
{
	c->n = RCTF_HDR;
	c->nevents = 0;
	c->tb = c->te = 0;
}
