/*
 * pf_util.h -- what the tests of Perfetto exports share: where Perfetto's
 * schema is (for protoc), and a file with its compressed containers
 * inflated as trace_processor does, each checked (whole packets, below
 * 512 KB), for protoc to decode.  Needs t.h, and zlib (ZLIB_DEFS,
 * ZLIB_LIBS) to read compressed exports.
 */
#ifndef PT_PF_UTIL_H
#define PT_PF_UTIL_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef PT_HAVE_ZLIB
#include <zlib.h>
#endif

struct pfile {                /* the file as it was (decode): */
	long containers, top_plain; /* compressed containers and plain packets at the top */
	long long file_bytes, packet_bytes; /* its bytes; the packets' after inflating */
};


static char schema_dir[600];
static const char *protoc;

/* The schema beside the repository (CI: shared/ beside the clone), or
 * beside the folder of work trees. */
static int find_schema(void)
{
	static const char *const up[] = { "/../shared/formats/perfetto",
	                                  "/../../shared/formats/perfetto" };
	char repo[512], probe[700];
	snprintf(repo, sizeof repo, "%s", PT_BUILD_DIR);
	char *slash = strrchr(repo, '/'); /* PT_BUILD_DIR is REPO/build... */
	if (slash)
		*slash = 0;
	for (int i = 0; i < 2; i++) {
		snprintf(probe, sizeof probe, "%s%s/perfetto_trace.proto", repo, up[i]);
		if (access(probe, R_OK) == 0) {
			snprintf(schema_dir, sizeof schema_dir, "%s%s", repo, up[i]);
			return 0;
		}
	}
	return -1;
}

/* A varint at *p, before end: 0 when cut short. */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (int sh = 0; *p < end && sh < 64; sh += 7) {
		unsigned char c = *(*p)++;
		*v |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80))
			return 1;
	}
	return 0;
}

/* Whether p..p+n is whole TracePackets as a Trace holds them (field 1,
 * length-delimited, each within the bytes); their number in *count. */
static int whole_packets(const unsigned char *p, size_t n, long *count)
{
	const unsigned char *end = p + n;
	uint64_t len;
	while (p < end) {
		if (*p++ != 0x0a || !get_varint(&p, end, &len) || len > (uint64_t)(end - p))
			return 0;
		p += len;
		++*count;
	}
	return 1;
}

/* The file at in written to out with every compressed container
 * (a TracePacket of compressed_packets only) inflated in its place, as
 * trace_processor does: each container a zlib stream of its own (or
 * gzip), holding whole packets, and, as Perfetto asks, below 512 KB. */
static int unpack(const char *in, const char *out, struct pfile *x)
{
	FILE *f = fopen(in, "rb");
	REQUIRE(f);
	struct stat sb;
	REQUIRE(fstat(fileno(f), &sb) == 0);
	size_t n = (size_t)sb.st_size, on = 0, ocap = 2 * n + 4096;
	unsigned char *d = malloc(n + 1), *o = malloc(ocap);
	REQUIRE(d && o);
	REQUIRE(fread(d, 1, n, f) == n);
	fclose(f);
	x->containers = x->top_plain = 0;
	x->file_bytes = (long long)n;
	int bad = 0;
	for (const unsigned char *p = d, *end = d + n; p < end && !bad;) {
		const unsigned char *at = p, *q;
		uint64_t len, key, zlen;
		if (*p++ != 0x0a || !get_varint(&p, end, &len) || len > (uint64_t)(end - p)) {
			bad = 1;
			break;
		}
		q = p;
		p += len;
		if (!(get_varint(&q, p, &key) && key == (50 << 3 | 2) && get_varint(&q, p, &zlen) &&
		      zlen == (uint64_t)(p - q))) {
			x->top_plain++;
			if (on + (size_t)(p - at) > ocap)
				REQUIRE((o = realloc(o, ocap = 2 * (on + (size_t)(p - at)))));
			memcpy(o + on, at, (size_t)(p - at));
			on += (size_t)(p - at);
			continue;
		}
		x->containers++;
		CHECK(p - at < 512 * 1024);
#ifdef PT_HAVE_ZLIB
		z_stream z;
		memset(&z, 0, sizeof z);
		REQUIRE(inflateInit2(&z, 32 + MAX_WBITS) == Z_OK);
		z.next_in = (Bytef *)(uintptr_t)q;
		z.avail_in = (uInt)zlen;
		size_t start = on;
		int rc;
		do {
			if (ocap - on < 65536)
				REQUIRE((o = realloc(o, ocap *= 2)));
			z.next_out = o + on;
			z.avail_out = (uInt)(ocap - on);
			rc = inflate(&z, Z_NO_FLUSH);
			on = (size_t)(z.next_out - o);
		} while (rc == Z_OK);
		long inner = 0;
		if (rc != Z_STREAM_END || z.avail_in != 0 || !whole_packets(o + start, on - start, &inner) ||
		    inner == 0)
			bad = 1;
		inflateEnd(&z);
#else
		bad = 1; /* (the command writes none without zlib, nor does this test read them) */
#endif
	}
	long total = 0;
	if (!bad && !whole_packets(o, on, &total))
		bad = 1;
	if (bad)
		fprintf(stderr, "%s: not whole packets, or a container that does not inflate\n", in);
	CHECK_EQ(bad, 0);
	x->packet_bytes = (long long)on;
	f = fopen(out, "wb");
	REQUIRE(f && fwrite(o, 1, on, f) == on && fclose(f) == 0);
	free(d);
	free(o);
	return bad;
}

#endif
