/*
 * typed_ctf.c -- cli/enrich/typed.c's CTF helpers against babeltrace2: a CTF 1.8
 * trace made of typed_tsdl_fields()'s declarations (in a struct aligned on
 * 8 bytes, as the exporter will write them) and typed_ctf_payload()'s
 * bytes, placed after an event header that leaves the payload unaligned
 * (so the padding the declarations imply is exercised), is read by
 * babeltrace2, which prints every field by name with the value the test
 * put in the payload (the witness).  Every type of the grammar is used:
 * integers of each width and sign, hex, floats, a string in the middle, a
 * last string without its NUL, and bytes.
 *
 * Skipped when babeltrace2 is not installed (Debian: babeltrace2).
 */
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "../cli/read/layout.c"
#include "../cli/enrich/typed.c"

static void le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* One event per payload, all of one type described by desc, into dir. */
static void write_trace(const char *dir, const char *desc, unsigned char pl[][64],
                        const size_t *len, int n)
{
	char path[512], decl[4096];
	REQUIRE(mkdir(dir, 0700) == 0);
	REQUIRE(typed_tsdl_fields(decl, sizeof decl, desc, "\t\t") == 0);
	snprintf(path, sizeof path, "%s/metadata", dir);
	FILE *f = fopen(path, "w");
	REQUIRE(f);
	fprintf(f, "/* CTF 1.8 */\n\n"
	           "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	           "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	           "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\n"
	           "trace {\n\tmajor = 1;\n\tminor = 8;\n\tbyte_order = le;\n"
	           "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint32_t stream_id;\n\t};\n};\n\n"
	           "stream {\n\tid = 0;\n\tpacket.context := struct {\n"
	           "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n\t};\n"
	           "\tevent.header := struct {\n\t\tuint8_t id;\n\t};\n};\n\n"
	           "event {\n\tname = \"typed\";\n\tid = 0;\n\tstream_id = 0;\n"
	           "\tfields := struct {\n%s\t} align(64);\n};\n", decl);
	REQUIRE(fclose(f) == 0);
	/* the packet: header 8, context 16, then per event: id (1 byte, so
	 * the payload's struct starts after 7 bytes of padding) and payload */
	static unsigned char b[65536];
	size_t o = 24;
	for (int i = 0; i < n; i++) {
		b[o++] = 0;
		o = (o + 7) & ~(size_t)7;
		long k = typed_ctf_payload(b + o, sizeof b - o, desc, pl[i], len[i]);
		REQUIRE(k >= 0);
		o += (size_t)k;
	}
	le(b, 0xC1FC1FC1u, 4);
	le(b + 4, 0, 4);
	le(b + 8, (uint64_t)o * 8, 8);
	le(b + 16, (uint64_t)o * 8, 8);
	snprintf(path, sizeof path, "%s/stream_0", dir);
	f = fopen(path, "wb");
	REQUIRE(f && fwrite(b, 1, o, f) == o && fclose(f) == 0);
}

int main(void)
{
	T_BEGIN(60);
	cli_setup();
	const char *bt = cli_which("babeltrace2");
	if (!bt)
		T_SKIP("babeltrace2 is not installed (Debian: babeltrace2)");

	const char *desc = "a:u8,b:i16,c:u32,d:i64,e:x32,f:f64,g:f32,s:string,h:u16,"
	                   "last:string";
	unsigned char pl[2][64];
	size_t len[2];
	for (int i = 0; i < 2; i++) { /* laid out as C lays out the struct */
		unsigned char *p = pl[i];
		memset(p, 0, 64);
		p[0] = (unsigned char)(200 + i);                  /* a:u8 at 0 */
		int16_t b = (int16_t)(-300 - i);
		memcpy(p + 2, &b, 2);                             /* b:i16 at 2 */
		uint32_t c = 4000000000u + (uint32_t)i;
		memcpy(p + 4, &c, 4);                             /* c:u32 at 4 */
		int64_t d = -5000000000ll - i;
		memcpy(p + 8, &d, 8);                             /* d:i64 at 8 */
		uint32_t e = 0xbeef + (uint32_t)i;
		memcpy(p + 16, &e, 4);                            /* e:x32 at 16 */
		double f = 2.5 + i;
		memcpy(p + 24, &f, 8);                            /* f:f64 at 24 */
		float g = -0.5f;
		memcpy(p + 32, &g, 4);                            /* g:f32 at 32 */
		memcpy(p + 36, i ? "xy" : "mid", i ? 3 : 4);      /* s:string at 36 */
		size_t at = 36 + (i ? 3 : 4);
		at = (at + 1) & ~(size_t)1;
		uint16_t h = (uint16_t)(7 + i);
		memcpy(p + at, &h, 2);                            /* h:u16 */
		memcpy(p + at + 2, "end", 3);                     /* last: no NUL */
		len[i] = at + 5;
		char shown[512];
		REQUIRE(typed_decode(shown, sizeof shown, desc, p, len[i]) == 0);
	}
	const char *dir = cli_path("ctf");
	write_trace(dir, desc, pl, len, 2);
	char *out = NULL, *err = NULL;
	int rc = cli_run((char *const[]){ (char *)bt, (char *)dir, NULL }, &out, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "babeltrace2: %s\n", err ? err : "");
	const char *want[2] = {
		"a = 200, b = -300, c = 4000000000, d = -5000000000, e = 0xBEEF, f = 2.5, g = -0.5, "
		"s = \"mid\", h = 7, last = \"end\"",
		"a = 201, b = -301, c = 4000000001, d = -5000000001, e = 0xBEF0, f = 3.5, g = -0.5, "
		"s = \"xy\", h = 8, last = \"end\"",
	};
	for (int i = 0; i < 2; i++) {
		if (!out || !strstr(out, want[i]))
			fprintf(stderr, "babeltrace2 did not print: %s\n%s", want[i], out ? out : "");
		CHECK(out && strstr(out, want[i]));
	}
	free(out);
	free(err);

	/* bytes: a length and a sequence */
	const char *desc2 = "kind:u16,rest:bytes";
	unsigned char p2[1][64] = { { 3, 0, 0xde, 0xad, 0xbe } };
	size_t len2[1] = { 5 };
	const char *dir2 = cli_path("ctf2");
	write_trace(dir2, desc2, p2, len2, 1);
	rc = cli_run((char *const[]){ (char *)bt, (char *)dir2, NULL }, &out, &err);
	CHECK_EQ(rc, 0);
	CHECK(out && strstr(out, "kind = 3, rest_len = 3, rest = [ [0] = 0xDE, [1] = 0xAD, [2] = 0xBE ]"));
	if (out && !strstr(out, "kind = 3, rest_len = 3"))
		fprintf(stderr, "%s%s", out, err ? err : "");
	free(out);
	free(err);
	T_END();
}
