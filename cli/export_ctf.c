/*
 * export_ctf.c -- the log as a CTF 1.8 trace directory: `metadata` (TSDL
 * text) and one binary stream file, `stream_0`, little-endian, every
 * field byte aligned.
 *
 *   packet header   u32 magic 0xC1FC1FC1, u8 uuid[16], u32 stream_id
 *   packet context  u64 timestamp_begin, timestamp_end (clock values),
 *                   u64 content_size, packet_size (bits),
 *                   u64 events_discarded
 *   event header    u32 id (the POSIX event type id), u64 timestamp
 *   event fields    i32 pid, u64 tid, u64 addr (shown in hex),
 *                   string symbol (the address symbolized as `show` prints
 *                   it, "func+0x1a (file.c:42)"; "" when not known; the
 *                   field is left out with --raw-addresses),
 *                   u32 payload_len, u8 payload[payload_len]
 *
 * The clock "realtime" counts nanoseconds (freq 1e9) from offset_s, the
 * second of the first event.  Events are written in timestamp order.  A
 * packet holds about 64 KiB of events; an OVERFLOW event starts a packet
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
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

#define CTF_MAGIC 0xC1FC1FC1u
#define HDR_BYTES 64
#define PACKET_TARGET 65536

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

static void le(unsigned char *o, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		o[i] = (unsigned char)(v >> (8 * i));
}

static int put_le(struct buf *b, uint64_t v, int bytes)
{
	unsigned char t[8];
	le(t, v, bytes);
	return put(b, t, (size_t)bytes);
}

static void uuid_str(char *out, const unsigned char *u)
{
	sprintf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	        u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
	        u[13], u[14], u[15]);
}

/* A TSDL string literal. */
static void tsdl_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f)
			fputc(*s, f);
	}
	fputc('"', f);
}

static int write_metadata(const struct tlog *l, FILE *f, const unsigned char *uuid,
                          const unsigned char *cuuid, uint64_t offset_s, int symbols)
{
	char u[40], cu[40], name[TRACE_NAME_MAX] = "", tmp[32];

	uuid_str(u, uuid);
	uuid_str(cu, cuuid);
	posix_trace_attr_getname(&l->attr, name);
	fprintf(f, "/* CTF 1.8 */\n\n"
	           "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	           "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	           "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	           "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	           "typealias integer { size = 64; align = 8; signed = false; base = 16; } "
	           ":= uint64_hex_t;\n\n"
	           "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
	           "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
	           "\t\tuint32_t stream_id;\n\t};\n};\n\n", u);
	fprintf(f, "env {\n\ttracer_name = \"posixtrace\";\n\ttracer_major = 0;\n"
	           "\ttracer_minor = 1;\n\ttrace_name = ");
	tsdl_str(f, name);
	fprintf(f, ";\n\tlog = ");
	tsdl_str(f, l->path);
	fprintf(f, ";\n};\n\n"
	           "clock {\n\tname = \"realtime\";\n\tuuid = \"%s\";\n"
	           "\tdescription = \"CLOCK_REALTIME, as recorded by posixtrace\";\n"
	           "\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %llu;\n\toffset = 0;\n"
	           "\tabsolute = true;\n};\n\n"
	           "typealias integer {\n\tsize = 64; align = 8; signed = false;\n"
	           "\tmap = clock.realtime.value;\n} := uint64_clock_t;\n\n"
	           "stream {\n\tid = 0;\n\tpacket.context := struct {\n"
	           "\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
	           "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
	           "\t\tuint64_t events_discarded;\n\t};\n"
	           "\tevent.header := struct {\n\t\tuint32_t id;\n\t\tuint64_clock_t timestamp;\n"
	           "\t};\n};\n", cu, (unsigned long long)offset_s);
	for (unsigned id = 0; id < PT_NIDS; id++) {
		if (!l->count[id])
			continue;
		fprintf(f, "\nevent {\n\tname = ");
		tsdl_str(f, tlog_name(l, id, tmp, sizeof tmp));
		fprintf(f, ";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n"
		           "\t\tint32_t pid;\n\t\tuint64_hex_t tid;\n\t\tuint64_hex_t addr;\n%s"
		           "\t\tuint32_t payload_len;\n\t\tuint8_t payload[payload_len];\n\t};\n};\n",
		        id, symbols ? "\t\tstring { encoding = UTF8; } symbol;\n" : "");
	}
	return ferror(f) ? -1 : 0;
}

static const struct tlog *sort_log;

static int by_time(const void *a, const void *b)
{
	const struct tev *x = &sort_log->ev[*(const size_t *)a], *y = &sort_log->ev[*(const size_t *)b];
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Fill in the packet's header and context, write it, start the next. */
static int flush_packet(struct buf *b, FILE *f, const unsigned char *uuid, uint64_t tb,
                        uint64_t te, uint64_t discarded)
{
	le(b->p, CTF_MAGIC, 4);
	memcpy(b->p + 4, uuid, 16);
	le(b->p + 20, 0, 4);
	le(b->p + 24, tb, 8);
	le(b->p + 32, te, 8);
	le(b->p + 40, (uint64_t)b->n * 8, 8);
	le(b->p + 48, (uint64_t)b->n * 8, 8);
	le(b->p + 56, discarded, 8);
	int rc = fwrite(b->p, 1, b->n, f) == b->n ? 0 : -1;
	b->n = HDR_BYTES;
	return rc;
}

/* The symbol field: the location as `show` prints it, "" when it is not
 * known (no address, or one outside every mapping: a bare "0x..."). */
static int put_symbol(struct buf *b, struct symz *z, const struct tthread *th, const struct tev *e)
{
	const char *s = e->addr ? symz_lookup(z, th->pid, e->ts, e->addr) : "";
	if (!strncmp(s, "0x", 2))
		s = "";
	size_t at = b->n;
	if (put(b, s, strlen(s) + 1))
		return -1;
	for (unsigned char *c = b->p + at; *c; c++) /* a path could hold anything */
		if (*c < 0x20 || *c == 0x7f)
			*c = '?';
	return 0;
}

static int write_stream(const struct tlog *l, struct symz *z, FILE *f, const unsigned char *uuid,
                        uint64_t base)
{
	struct buf b = { NULL, 0, 0 };
	unsigned char zero[HDR_BYTES] = { 0 };
	size_t *ord = malloc((l->nev + 1) * sizeof *ord);
	uint64_t tb = 0, te = 0, discarded = 0;
	struct progress p;
	int rc = 0, empty = 1;

	if (!ord || put(&b, zero, HDR_BYTES)) {
		free(ord);
		return -1;
	}
	for (size_t i = 0; i < l->nev; i++)
		ord[i] = i;
	sort_log = l;
	qsort(ord, l->nev, sizeof *ord, by_time);
	progress_begin(&p, "export ctf", l->nev);
	int counted = l->ngaps || l->lost_final;
	if (l->nev && tlog_lost_any(l)) {
		uint64_t t = l->ev[ord[0]].ts >= base ? l->ev[ord[0]].ts - base : 0;
		rc = flush_packet(&b, f, uuid, t, t, 0);
	}
	for (size_t k = 0; k < l->nev && !rc; k++) {
		const struct tev *e = &l->ev[ord[k]];
		const struct tthread *th = &l->th[e->thread];
		uint64_t t = e->ts >= base ? e->ts - base : 0;
		if (e->id == POSIX_TRACE_OVERFLOW && !empty) { /* the loss in a packet of its own */
			rc = flush_packet(&b, f, uuid, tb, te, discarded);
			empty = 1;
			if (rc)
				break;
		}
		if (empty)
			tb = t;
		te = t;
		empty = 0;
		if (put_le(&b, e->id, 4) || put_le(&b, t, 8) || put_le(&b, (uint32_t)th->pid, 4) ||
		    put_le(&b, th->tid, 8) || put_le(&b, e->addr, 8) ||
		    (z && put_symbol(&b, z, th, e)) || put_le(&b, e->len, 4) ||
		    put(&b, l->data + e->data, e->len)) {
			rc = -1;
			break;
		}
		if (e->id == POSIX_TRACE_OVERFLOW && !counted)
			discarded++;
		if (e->id == POSIX_TRACE_RESUME && counted) {
			uint64_t n = tlog_gap_lost(l, ord[k]);
			discarded += n != UINT64_MAX ? n : 0;
		}
		if (b.n >= PACKET_TARGET || e->id == POSIX_TRACE_RESUME) {
			rc = flush_packet(&b, f, uuid, tb, te, discarded);
			empty = 1;
		}
		progress_update(&p, k);
	}
	if (!rc && !empty)
		rc = flush_packet(&b, f, uuid, tb, te, discarded);
	if (!rc && l->nev && tlog_lost_total(l) > discarded) /* the rest, at the end */
		rc = flush_packet(&b, f, uuid, te, te, tlog_lost_total(l));
	if (!rc && l->nev == 0) /* an empty trace still has one (empty) packet */
		rc = flush_packet(&b, f, uuid, 0, 0, 0);
	progress_end(&p);
	free(b.p);
	free(ord);
	return rc;
}

static FILE *open_in(const char *dir, const char *name, char *path, size_t cap)
{
	snprintf(path, cap, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f)
		err_msg("cannot create %s: %s", path, strerror(errno));
	return f;
}

int export_ctf(const struct tlog *l, struct symz *z, const char *dir, int force)
{
	unsigned char uuid[16], cuuid[16];
	char path[4200];
	struct stat sb;

	if (mkdir(dir, 0755) != 0) {
		if (errno != EEXIST || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			err_msg("cannot create the directory %s: %s", dir,
			        errno == EEXIST ? "a file of that name exists" : strerror(errno));
			return 1;
		}
		if (!force) {
			err_msg("%s already exists; choose another name with -o, or add --force "
			        "to overwrite it", dir);
			return 1;
		}
	}
	if (getrandom(uuid, sizeof uuid, 0) != (ssize_t)sizeof uuid ||
	    getrandom(cuuid, sizeof cuuid, 0) != (ssize_t)sizeof cuuid) {
		err_msg("getrandom: %s", strerror(errno));
		return 1;
	}
	uuid[6] = (uuid[6] & 0x0f) | 0x40; /* version 4, variant 1 */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
	cuuid[6] = (cuuid[6] & 0x0f) | 0x40;
	cuuid[8] = (cuuid[8] & 0x3f) | 0x80;
	uint64_t t0 = l->nev ? l->ev[0].ts : 0;
	for (size_t i = 0; i < l->nev; i++)
		t0 = l->ev[i].ts < t0 ? l->ev[i].ts : t0;
	uint64_t offset_s = t0 / 1000000000u;

	FILE *m = open_in(dir, "metadata", path, sizeof path);
	if (!m)
		return 1;
	int rc = write_metadata(l, m, uuid, cuuid, offset_s, z != NULL);
	if ((fclose(m) | rc) != 0) {
		err_msg("writing %s: %s", path, strerror(errno));
		return 1;
	}
	FILE *s = open_in(dir, "stream_0", path, sizeof path);
	if (!s)
		return 1;
	rc = write_stream(l, z, s, uuid, offset_s * 1000000000u);
	if ((fclose(s) | rc) != 0) {
		err_msg("writing %s: %s", path, strerror(errno));
		return 1;
	}
	return 0;
}
