/*
 * pf_util.h -- what the tests of Perfetto exports share: the schema for
 * protoc (Perfetto's published one beside the repository when it is
 * there, else the repository's own tests/perfetto_min.proto, and whether
 * the two agree), and a file with its compressed containers
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
static const char *schema_file = "perfetto_trace.proto"; /* in schema_dir */
static int schema_published;  /* 1: Perfetto's own, 0: tests/perfetto_min.proto */
static const char *protoc;

/* Perfetto's published schema beside the repository (CI: shared/ beside
 * the clone), or beside the folder of work trees; 0 if found. */
static int find_published_schema(char *dir, size_t cap)
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
			snprintf(dir, cap, "%s%s", repo, up[i]);
			return 0;
		}
	}
	return -1;
}

/* The repository's own tests/perfetto_min.proto: the messages the tests
 * read, with the published field numbers; 0 if found. */
static int find_min_schema(char *dir, size_t cap)
{
	char repo[512], probe[700];
	snprintf(repo, sizeof repo, "%s", PT_BUILD_DIR);
	char *slash = strrchr(repo, '/');
	if (slash)
		*slash = 0;
	snprintf(probe, sizeof probe, "%s/tests/perfetto_min.proto", repo);
	if (access(probe, R_OK) != 0)
		return -1;
	snprintf(dir, cap, "%s/tests", repo);
	return 0;
}

/* The schema to decode with: the published one when it is there, else the
 * repository's own (so that a clone alone checks its exports). */
static int find_schema(void)
{
	if (find_published_schema(schema_dir, sizeof schema_dir) == 0) {
		schema_file = "perfetto_trace.proto";
		schema_published = 1;
		return 0;
	}
	schema_published = 0;
	schema_file = "perfetto_min.proto";
	return find_min_schema(schema_dir, sizeof schema_dir);
}

/* Each field line of tests/perfetto_min.proto ("label type name = N;")
 * found in the published schema with the same type, name and number (its
 * label may differ: a oneof's members have none); the count of those that
 * are not, each said on stderr.  -1: a schema is missing. */
static inline int min_schema_agrees(void)
{
	char pub[600], mine[600], path[700], line[512];
	if (find_published_schema(pub, sizeof pub) || find_min_schema(mine, sizeof mine))
		return -1;
	snprintf(path, sizeof path, "%s/perfetto_trace.proto", pub);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *text = malloc((size_t)n + 1);
	if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(text);
		return -1;
	}
	text[n] = 0;
	fclose(f);
	snprintf(path, sizeof path, "%s/perfetto_min.proto", mine);
	f = fopen(path, "r");
	int bad = 0, fields = 0;
	while (f && fgets(line, sizeof line, f)) {
		char label[32], type[64], name[64], want[200];
		unsigned num;
		if (sscanf(line, " %31s %63s %63s = %u;", label, type, name, &num) != 4 ||
		    (strcmp(label, "optional") && strcmp(label, "repeated")))
			continue;
		fields++;
		/* "TYPE NAME = N;" on a line of the published schema */
		snprintf(want, sizeof want, " %s %s = %u;", type, name, num);
		int found = 0;
		for (const char *p = strstr(text, want); p && !found; p = strstr(p + 1, want)) {
			const char *eol = strchr(p, '\n');
			found = eol && (size_t)(eol - p) == strlen(want);
		}
		if (!found) {
			fprintf(stderr, "perfetto_min.proto: '%s %s = %u' is not in the published schema\n",
			        type, name, num);
			bad++;
		}
	}
	if (f)
		fclose(f);
	free(text);
	return fields ? bad : -1;
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
static inline int unpack(const char *in, const char *out, struct pfile *x)
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
