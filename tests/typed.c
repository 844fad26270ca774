/*
 * typed.c -- payload descriptions: the grammar (pt_ext_type_parse), the
 * command's decoder and the helpers the exporters use (cli/enrich/typed.c,
 * included whole), posixtrace_eventid_describe() and how a description
 * travels (a stream of this process, a stream made before or after the
 * description, its log), and `show` on a recorded program: fields by
 * name, a payload that does not fit shown raw with a note, and the text
 * guess (a small integer is hex, a C string is text), with the Chrome
 * export keeping the bytes of every payload (base64).
 *
 * The witness for every decoded value is the struct the test built.
 */
#include <fcntl.h>
#include <math.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"
#include "../cli/read/tracetypes.c"
#include "../cli/read/layout.c"
#include "../cli/enrich/typed.c"

/* ------------------------------------------------------------ grammar */
static void grammar(void)
{
	struct pt_ext_field f[PT_EXT_FIELDS_MAX];
	size_t n, at;

	CHECK_RC(pt_ext_type_parse("id:u32,cost_us:u32", f, PT_EXT_FIELDS_MAX, &n, &at), 0);
	CHECK_EQ(n, 2);
	CHECK(!strcmp(f[0].name, "id") && f[0].type == PT_EXT_F_U32 && f[0].size == 4);
	CHECK(!strcmp(f[1].name, "cost_us") && f[1].type == PT_EXT_F_U32);
	CHECK_RC(pt_ext_type_parse("  a : i8 ,\tb:x64 , s:string,rest:bytes ", f, 32, &n, &at), 0);
	CHECK_EQ(n, 4);
	CHECK(f[0].type == PT_EXT_F_I8 && f[1].type == PT_EXT_F_X64 && f[1].size == 8 &&
	      f[2].type == PT_EXT_F_STRING && f[2].size == 0 && f[3].type == PT_EXT_F_BYTES);
	CHECK_RC(pt_ext_type_parse("x:f32,y:f64", f, 32, &n, &at), 0);
	CHECK(f[0].type == PT_EXT_F_F32 && f[1].size == 8);
	CHECK(!strcmp(pt_ext_ftype_name(PT_EXT_F_I16), "i16"));
	CHECK(pt_ext_ftype_name((enum pt_ext_ftype)99) == NULL);

	static const struct { const char *d; size_t at; } bad[] = {
		{ "", 0 }, { "id", 2 }, { "id:", 3 }, { "id:u33", 3 }, { ":u8", 0 }, { "1a:u8", 0 },
		{ "a:u8,", 5 }, { "a:u8,,b:u8", 5 }, { "a:u8 b:u8", 5 }, { "a:u8,a:u16", 5 },
		{ "r:bytes,a:u8", 8 }, { "a:U8", 2 }, { "a-b:u8", 1 },
		{ "a_name_that_is_thirty_two_chars_:u8", 0 },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = pt_ext_type_parse(bad[i].d, f, 32, &n, &at);
		if (rc != EINVAL || at != bad[i].at)
			fprintf(stderr, "'%s': rc %d at %zu, expected EINVAL at %zu\n", bad[i].d, rc, at,
			        bad[i].at);
		CHECK(rc == EINVAL && at == bad[i].at);
	}
	CHECK_RC(pt_ext_type_parse("a_name_that_is_thirty_one_chars:u8", f, 32, &n, &at), 0);
	/* 33 fields, and 256 characters: too many */
	char many[512] = "";
	for (int i = 0; i < 33; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%sf%d:u8", i ? "," : "", i);
	CHECK_RC(pt_ext_type_parse(many, f, 32, &n, &at), EINVAL);
	*strrchr(many, ',') = 0; /* 32 */
	CHECK_RC(pt_ext_type_parse(many, f, 32, &n, &at), 0);
	CHECK_EQ(n, 32);
	char lng[300];
	memset(lng, ' ', sizeof lng);
	memcpy(lng + 280, "a:u8", 5);
	CHECK_RC(pt_ext_type_parse(lng, f, 32, &n, &at), EINVAL);
	CHECK_RC(pt_ext_type_parse(NULL, f, 32, &n, &at), EINVAL);
}

/* ------------------------------------------------------------ decoding */
static void decoding(void)
{
	char out[512];
	struct { int32_t id; uint32_t cost; } a = { 3, 311 };
	CHECK_EQ(typed_decode(out, sizeof out, "id:u32,cost_us:u32", (void *)&a, sizeof a), 0);
	CHECK(!strcmp(out, "id=3 cost_us=311"));

	/* C padding: char then int */
	struct { char c; int32_t x; } b = { 'q', -7 };
	CHECK_EQ(sizeof b, 8);
	CHECK_EQ(typed_decode(out, sizeof out, "c:u8,x:i32", (void *)&b, sizeof b), 0);
	CHECK(!strcmp(out, "c=113 x=-7"));
	/* tail padding: u64 then u32, 16 bytes */
	struct { uint64_t big; uint32_t small; } c = { 0xfedcba9876543210ull, 9 };
	CHECK_EQ(sizeof c, 16);
	CHECK_EQ(typed_decode(out, sizeof out, "big:x64,small:i32", (void *)&c, sizeof c), 0);
	CHECK(!strcmp(out, "big=0xfedcba9876543210 small=9"));
	/* floats, and every width */
	struct { float f; double d; } fl = { 1.5f, -0.25 };
	CHECK_EQ(typed_decode(out, sizeof out, "f:f32,d:f64", (void *)&fl, sizeof fl), 0);
	CHECK(!strcmp(out, "f=1.5 d=-0.25"));
	/* the shortest text that reads back as the same value (babeltrace2's
	 * way), never 0.10000000000000001; and exactly the same value back */
	struct { float f; double d; } tenth = { 0.1f, 0.1 };
	CHECK_EQ(typed_decode(out, sizeof out, "f:f32,d:f64", (void *)&tenth, sizeof tenth), 0);
	CHECK(!strcmp(out, "f=0.1 d=0.1"));
	struct { double a, b, c; } rt = { 1.0 / 3, 2e-300, 123456789.125 };
	CHECK_EQ(typed_decode(out, sizeof out, "a:f64,b:f64,c:f64", (void *)&rt, sizeof rt), 0);
	CHECK(!strcmp(out, "a=0.3333333333333333 b=2e-300 c=123456789.125"));
	struct { float a; } third = { 1.0f / 3 };
	CHECK_EQ(typed_decode(out, sizeof out, "a:f32", (void *)&third, sizeof third), 0);
	CHECK(!strcmp(out, "a=0.33333334"));
	struct { int8_t a; uint8_t b; int16_t c; uint16_t d; int64_t e; } w = { -1, 255, -300, 60000, -5 };
	CHECK_EQ(typed_decode(out, sizeof out, "a:i8,b:u8,c:i16,d:u16,e:i64", (void *)&w, sizeof w), 0);
	CHECK(!strcmp(out, "a=-1 b=255 c=-300 d=60000 e=-5"));
	/* strings: with its NUL, the last one without, one in the middle */
	CHECK_EQ(typed_decode(out, sizeof out, "path:string", (const unsigned char *)"/tmp/x", 7), 0);
	CHECK(!strcmp(out, "path=\"/tmp/x\""));
	CHECK_EQ(typed_decode(out, sizeof out, "path:string", (const unsigned char *)"/tmp/x", 6), 0);
	CHECK(!strcmp(out, "path=\"/tmp/x\""));
	unsigned char mid[16] = "ab\0\0\0\0\0\0";
	uint32_t v = 77;
	memcpy(mid + 4, &v, 4); /* "ab\0" then pad to 4, then a u32 */
	CHECK_EQ(typed_decode(out, sizeof out, "s:string,v:u32", mid, 8), 0);
	CHECK(!strcmp(out, "s=\"ab\" v=77"));
	CHECK_EQ(typed_decode(out, sizeof out, "s:string", (const unsigned char *)"a\"b\n\x01", 5), 0);
	CHECK(!strcmp(out, "s=\"a\\\"b\\n\\x01\""));
	/* bytes: the rest */
	unsigned char raw[6] = { 1, 0, 0xde, 0xad, 0xbe, 0xef };
	CHECK_EQ(typed_decode(out, sizeof out, "kind:u16,rest:bytes", raw, 6), 0);
	CHECK(!strcmp(out, "kind=1 rest=deadbeef"));
	CHECK_EQ(typed_decode(out, sizeof out, "kind:u16,rest:bytes", raw, 2), 0);
	CHECK(!strcmp(out, "kind=1 rest=(none)"));

	/* does not fit: shown raw by the caller, with the reason */
	CHECK_EQ(typed_decode(out, sizeof out, "id:u32,cost_us:u32", (void *)&a, 5), -1);
	typed_misfit(out, sizeof out, "id:u32,cost_us:u32", (void *)&a, 5, 0);
	CHECK(!strcmp(out, "(not as described, \"id:u32,cost_us:u32\": 5 bytes, field 'cost_us' needs 8)"));
	CHECK_EQ(typed_decode(out, sizeof out, "id:u32", (void *)&a, sizeof a), -1); /* 4 left over */
	typed_misfit(out, sizeof out, "id:u32", (void *)&a, sizeof a, 0);
	CHECK(strstr(out, "8 bytes, its fields take 4") != NULL);
	CHECK_EQ(typed_decode(out, sizeof out, "s:string,v:u32", (const unsigned char *)"abcdefgh", 8), -1);
	typed_misfit(out, sizeof out, "s:string,v:u32", (const unsigned char *)"abcdefgh", 8, 0);
	CHECK(strstr(out, "string 's' has no NUL before the next field") != NULL);
	typed_misfit(out, sizeof out, "id:u32,cost_us:u32", (void *)&a, sizeof a, 1);
	CHECK(strstr(out, "cut at the stream's max data size") != NULL);
	CHECK_EQ(typed_decode(out, sizeof out, "bad desc", (void *)&a, sizeof a), -1);
	CHECK_EQ(typed_decode(out, sizeof out, "s:string", (const unsigned char *)"", 0), -1);
	/* a small buffer: cut with "...", never past it */
	char tiny[8];
	CHECK_EQ(typed_decode(tiny, sizeof tiny, "id:u32,cost_us:u32", (void *)&a, sizeof a), 0);
	CHECK(strlen(tiny) == 7 && !strcmp(tiny + 4, "..."));
}

/* ------------------------------------------------- exporters' helpers */
static void helpers(void)
{
	char out[1024];
	struct { uint64_t big; int64_t neg; uint32_t x; float nan; } j = { (1ull << 53) + 1, -3,
	                                                                  0xbeef, NAN };
	CHECK_EQ(typed_json_args(out, sizeof out, "big:u64,neg:i64,x:x32,nan:f32", (void *)&j,
	                         sizeof j), 0);
	CHECK(!strcmp(out, "\"big\":\"9007199254740993\",\"neg\":-3,\"x\":\"0xbeef\",\"nan\":\"nan\""));
	CHECK_EQ(typed_json_args(out, sizeof out, "s:string", (const unsigned char *)"a\"\x7f", 3), 0);
	CHECK(!strcmp(out, "\"s\":\"a\\\"\\u007f\""));
	CHECK_EQ(typed_json_args(out, 8, "s:string", (const unsigned char *)"abcdefghij", 10), -1);
	CHECK_EQ(typed_json_args(out, sizeof out, "a:u64", (const unsigned char *)"abc", 3), -1);

	CHECK_EQ(typed_tsdl_fields(out, sizeof out, "id:u32,t:i8,x:x16,f:f64,s:string,b:bytes", "\t"),
	         0);
	const char *want =
		"\tinteger { size = 32; align = 32; signed = false; base = 10; } _id;\n"
		"\tinteger { size = 8; align = 8; signed = true; base = 10; } _t;\n"
		"\tinteger { size = 16; align = 16; signed = false; base = 16; } _x;\n"
		"\tfloating_point { exp_dig = 11; mant_dig = 53; align = 64; } _f;\n"
		"\tstring { encoding = UTF8; } _s;\n"
		"\tinteger { size = 32; align = 32; signed = false; } _b_len;\n"
		"\tinteger { size = 8; align = 8; signed = false; base = 16; } _b[_b_len];\n";
	if (strcmp(out, want))
		fprintf(stderr, "TSDL:\n%s", out);
	CHECK(!strcmp(out, want));
	CHECK_EQ(typed_tsdl_fields(out, sizeof out, "nope", ""), -1);

	/* CTF bytes: the payload as TSDL lays it out (from an 8-aligned start) */
	unsigned char in[32], ctf[64];
	memset(in, 0, sizeof in);
	in[0] = 7;                           /* c:u8 at 0 */
	int32_t x = -2;
	memcpy(in + 4, &x, 4);               /* x:i32 at 4 */
	memcpy(in + 8, "hi", 2);             /* s:string, last, no NUL */
	long n = typed_ctf_payload(ctf, sizeof ctf, "c:u8,x:i32,s:string", in, 10);
	CHECK_EQ(n, 11);
	CHECK(ctf[0] == 7 && !memcmp(ctf + 4, &x, 4) && !memcmp(ctf + 8, "hi", 3));
	/* a string, then a u16 aligned in the output, then bytes with a length */
	unsigned char in2[16] = { 'a', 0, 5, 0, 0xaa, 0xbb };
	n = typed_ctf_payload(ctf, sizeof ctf, "s:string,v:u16,r:bytes", in2, 6);
	uint32_t blen;
	CHECK_EQ(n, 10);
	memcpy(&blen, ctf + 4, 4);
	CHECK(ctf[0] == 'a' && ctf[1] == 0 && ctf[2] == 5 && ctf[3] == 0 && blen == 2 &&
	      ctf[8] == 0xaa && ctf[9] == 0xbb);
	CHECK_EQ(typed_ctf_payload(ctf, 4, "s:string,v:u16,r:bytes", in2, 6), -1);
}

/* ------------------------------------------ the library: describe, carry */
static trace_event_id_t ev_cost, ev_path;

static int type_of(trace_id_t trid, unsigned id, char *desc, size_t cap)
{
	struct pt_ext_type t[64];
	size_t n = 0;
	int found = 0;
	if (pt_ext_types(trid, 0, t, 64, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].id == id && t[i].pid == getpid()) {
			snprintf(desc, cap, "%s", t[i].desc);
			found++;
		}
	return found;
}

static void library(void)
{
	char d[PT_EXT_TYPE_DESC];

	CHECK_RC(posix_trace_eventid_open("cost", &ev_cost), 0);
	CHECK_RC(posix_trace_eventid_open("path", &ev_path), 0);
	CHECK_RC(posixtrace_eventid_describe(POSIX_TRACE_START, "a:u8"), EINVAL);
	CHECK_RC(posixtrace_eventid_describe(1024, "a:u8"), EINVAL);
	CHECK_RC(posixtrace_eventid_describe(ev_cost, NULL), EINVAL);
	CHECK_RC(posixtrace_eventid_describe(ev_cost, "id:u32,"), EINVAL);
	/* before any stream: kept, and given to a stream made later */
	CHECK_RC(posixtrace_eventid_describe(ev_cost, "id:u32,cost_us:u32"), 0);
	CHECK_RC(posixtrace_eventid_describe(POSIX_TRACE_UNNAMED_USEREVENT, "v:i64"), 0);

	trace_attr_t attr;
	trace_id_t trid;
	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH);
	const char *logp = cli_path("typed_lib.ptlog");
	int fd = open(logp, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	CHECK_RC(posix_trace_create_withlog(0, &attr, fd, &trid), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	CHECK_EQ(type_of(trid, ev_cost, d, sizeof d), 1);
	CHECK(!strcmp(d, "id:u32,cost_us:u32"));
	CHECK_EQ(type_of(trid, POSIX_TRACE_UNNAMED_USEREVENT, d, sizeof d), 1);
	/* after: written into the running stream at once */
	CHECK_RC(posixtrace_eventid_describe(ev_path, "path:string"), 0);
	CHECK_EQ(type_of(trid, ev_path, d, sizeof d), 1);
	CHECK(!strcmp(d, "path:string"));
	/* again: replaced (the latest counts) */
	CHECK_RC(posixtrace_eventid_describe(ev_path, "path : string"), 0);
	CHECK_EQ(type_of(trid, ev_path, d, sizeof d), 2);
	CHECK(!strcmp(d, "path : string"));
	struct { uint32_t id, cost; } c = { 1, 2 };
	posix_trace_event(ev_cost, &c, sizeof c);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(fd);
	posix_trace_attr_destroy(&attr);

	/* the log carries them */
	fd = open(logp, O_RDONLY);
	REQUIRE(fd >= 0);
	CHECK_RC(posix_trace_open(fd, &trid), 0);
	CHECK_EQ(type_of(trid, ev_cost, d, sizeof d), 1);
	CHECK(!strcmp(d, "id:u32,cost_us:u32"));
	CHECK(type_of(trid, ev_path, d, sizeof d) >= 1);
	struct typemap *m = typemap_load(trid);
	CHECK(m && !strcmp(typemap_desc(m, getpid(), ev_path), "path : string"));
	CHECK(m && !strcmp(typemap_desc(m, getpid() + 1, ev_cost), "id:u32,cost_us:u32"));
	CHECK(m && typemap_desc(m, getpid(), ev_cost + 100) == NULL);
	typemap_free(m);
	posix_trace_close(trid);
	close(fd);
}

/* ------------------------------------------------- a recorded program */
static int program(void)
{
	trace_event_id_t id_cost, id_path, id_int, id_str, id_pad;
	posix_trace_eventid_open("cost", &id_cost);
	posix_trace_eventid_open("path", &id_path);
	posix_trace_eventid_open("int", &id_int);
	posix_trace_eventid_open("str", &id_str);
	posix_trace_eventid_open("padded", &id_pad);
	posixtrace_eventid_describe(id_cost, "id:u32,cost_us:u32");
	posixtrace_eventid_describe(id_path, "path:string");
	struct { uint32_t id, cost; } c = { 3, 311 };
	posix_trace_event(id_cost, &c, sizeof c);
	posix_trace_event(id_cost, &c, 5);            /* does not fit */
	posix_trace_event(id_path, "/etc/hosts", 11);
	uint64_t nine = 9, bang = 33;
	posix_trace_event(id_int, &nine, sizeof nine); /* an integer, not "\t" */
	posix_trace_event(id_int, &bang, sizeof bang); /* not "!" */
	posix_trace_event(id_str, "hello", 6);        /* a C string with its NUL */
	char buf[12] = "hostname";                    /* a string in a fixed buffer */
	posix_trace_event(id_pad, buf, sizeof buf);
	return 0;
}

static void recorded(char *self)
{
	char *out = NULL, *err = NULL;
	const char *log = cli_path("typed.ptlog");

	CHECK_EQ(cli_run(CLI("record", "--force", "-o", (char *)log, "--", self, "--program"), NULL,
	                 &err), 0);
	CHECK_EQ(cli_run(CLI("show", (char *)log, "--raw-addresses"), &out, NULL), 0);
	const char *want[] = {
		" cost ", "  id=3 cost_us=311  @",
		" cost ", ("  03000000 37 (not as described, \"id:u32,cost_us:u32\": 5 bytes, field "
		           "'cost_us' needs 8)  @"),
		" path ", "  path=\"/etc/hosts\"  @",
		" int ", "  09000000 00000000  @",
		" int ", "  21000000 00000000  @",
		" str ", "  \"hello\"  @",
		" padded ", "  \"hostname\"  @",
	};
	const char *p = out ? out : "";
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i += 2) {
		const char *e = strstr(p, want[i]), *nl = e ? strchr(e, '\n') : NULL;
		const char *d = e ? strstr(e, want[i + 1]) : NULL;
		if (!d || (nl && d > nl))
			fprintf(stderr, "show: no line%s...%s\n", want[i], want[i + 1]);
		CHECK(d && (!nl || d < nl));
		if (nl)
			p = nl;
	}
	free(out);
	/* Chrome JSON: text when it is text, and the bytes always (base64),
	 * each event's those the program sent, in its order */
	const char *js = cli_path("typed.json");
	CHECK_EQ(cli_run(CLI("export", "--format", "chrome", "--force", "-o", (char *)js, (char *)log),
	                 NULL, NULL), 0);
	char *j = cli_slurp(js), line[1024];
	CHECK(j && !strstr(j, "\"text\":\"\\t\"") && strstr(j, "\"text\":\"hello\""));
	struct { uint32_t id, cost; } c = { 3, 311 };
	uint64_t nine = 9, bang = 33;
	char buf[12] = "hostname";
	const struct { const char *name; const void *d; size_t n; } sent[] = {
		{ "cost", &c, sizeof c }, { "cost", &c, 5 }, { "path", "/etc/hosts", 11 },
		{ "int", &nine, 8 }, { "int", &bang, 8 }, { "str", "hello", 6 }, { "padded", buf, 12 },
	};
	size_t k = 0;
	for (int i = 0; j && cli_line(j, i, line, sizeof line) == 0; i++) {
		unsigned char b[64];
		const char *a = strstr(line, "\"b64\":\"");
		if (!strstr(line, "\"ph\":\"i\"") || strstr(line, "\"cat\":\"posix_trace\""))
			continue;
		long n = a ? cli_unb64(a + 7, b, sizeof b) : -1;
		int same = k < sizeof sent / sizeof sent[0] && n == (long)sent[k].n &&
		           !memcmp(b, sent[k].d, sent[k].n) && strstr(line, sent[k].name);
		if (!same)
			fprintf(stderr, "Chrome event %zu, not what the program sent: %s\n", k, line);
		CHECK(same);
		k++;
	}
	CHECK_EQ(k, sizeof sent / sizeof sent[0]);
	free(j);
	free(err);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--program"))
		return program();
	T_BEGIN(60);
	cli_setup();
	grammar();
	decoding();
	helpers();
	library();
	char self[4096] = { 0 };
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	recorded(self);
	T_END();
}
