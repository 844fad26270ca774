/*
 * typed.c -- payloads decoded against the description their program gave
 * (posixtrace_eventid_describe(3); the trace carries it, src/ext.h
 * pt_ext_types()): "id=3 cost_us=311" for `show`, JSON args for Chrome
 * and Perfetto, TSDL field declarations and the matching bytes for CTF.
 *
 * Layout (the one pt_ext_type_parse() states): fields in order, each
 * scalar at the next multiple of its size from the payload's start (as a
 * C compiler lays out a struct of those types), a string where the
 * previous field ended, up to and including its NUL (the last field may
 * instead end at the payload's end), bytes for the rest.  After the last
 * field only the struct's tail padding may remain.  A payload that does
 * not fit -- too short, a string with no NUL before another field, bytes
 * left over, cut at the stream's max data size -- is not decoded: the
 * caller shows it raw, with typed_misfit()'s note.  Values are read in
 * this machine's byte order (a trace read where it was recorded).
 *
 * Where each field is in a payload is read/layout.c's typed_layout(), which
 * the filters use too.  Self-contained (libc and ext.h, with read/layout.c),
 * so tests/typed.c includes it whole (with read/tracetypes.c, the
 * descriptions a trace carries).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "enrich.h"

static size_t round_up(size_t v, size_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

/* ------------------------------------------------------------ values */
static uint64_t get_u(const unsigned char *p, unsigned size)
{
	uint8_t a;
	uint16_t b;
	uint32_t c;
	uint64_t d;

	switch (size) {
	case 1: memcpy(&a, p, 1); return a;
	case 2: memcpy(&b, p, 2); return b;
	case 4: memcpy(&c, p, 4); return c;
	default: memcpy(&d, p, 8); return d;
	}
}

static int64_t get_i(const unsigned char *p, unsigned size)
{
	uint64_t u = get_u(p, size);
	unsigned sh = 64 - 8 * size;

	return sh ? (int64_t)(u << sh) >> sh : (int64_t)u;
}

static double get_f(const unsigned char *p, unsigned size)
{
	float f;
	double d;

	if (size == 4) {
		memcpy(&f, p, 4);
		return f;
	}
	memcpy(&d, p, 8);
	return d;
}

/* The shortest text that reads back as the same value ("0.1", not
 * 0.10000000000000001): %.*g at 1, 2... significant digits until strtod
 * (strtof for a float) gives it back; 17 (9) always do. */
static void shortest(char *buf, size_t cap, double v, int f32)
{
	int max = f32 ? 9 : 17;

	for (int p = 1; p <= max; p++) {
		snprintf(buf, cap, "%.*g", p, v);
		if (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, cap, "%.*g", max, v);
}

static int is_signed(enum pt_ext_ftype t)
{
	return t >= PT_EXT_F_I8 && t <= PT_EXT_F_I64;
}

static int is_hex(enum pt_ext_ftype t)
{
	return t >= PT_EXT_F_X8 && t <= PT_EXT_F_X64;
}

static int is_float(enum pt_ext_ftype t)
{
	return t == PT_EXT_F_F32 || t == PT_EXT_F_F64;
}

struct out { char *p; size_t cap, o; int full; };

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->full || !o->cap)
		return;
	va_start(ap, fmt);
	int k = vsnprintf(o->p + o->o, o->cap - o->o, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= o->cap - o->o) {
		o->full = 1;
		o->o = o->cap - 1;
		if (o->cap > 4)
			memcpy(o->p + o->cap - 4, "...", 4);
		return;
	}
	o->o += (size_t)k;
}

/* s[0..n) quoted; json: JSON escapes, else C-like ones */
static void put_str(struct out *o, const unsigned char *s, size_t n, int json)
{
	put(o, "\"");
	for (size_t i = 0; i < n && !o->full; i++) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c == '\n')
			put(o, "\\n");
		else if (c == '\t')
			put(o, "\\t");
		else if (c == '\r')
			put(o, "\\r");
		else if (c < 0x20 || c >= 0x7f)
			put(o, json ? "\\u%04x" : "\\x%02x", c);
		else
			put(o, "%c", c);
	}
	put(o, "\"");
}

static void put_value(struct out *o, const struct typed_at *a, const unsigned char *d, int json)
{
	const unsigned char *p = d + a->off;
	enum pt_ext_ftype t = a->f.type;

	if (t == PT_EXT_F_STRING) {
		put_str(o, p, a->len, json);
	} else if (t == PT_EXT_F_BYTES) {
		put(o, json ? "\"" : "");
		for (size_t i = 0; i < a->len; i++)
			put(o, "%02x", p[i]);
		put(o, json ? "\"" : "");
		if (!json && !a->len)
			put(o, "(none)");
	} else if (is_float(t)) {
		double v = get_f(p, a->f.size);
		if (json && (v != v || v - v != 0)) /* NaN, inf: no JSON number */
			put(o, "\"%g\"", v);
		else
		{
			char num[40];
			shortest(num, sizeof num, v, a->f.size == 4);
			put(o, "%s", num);
		}
	} else if (is_hex(t)) {
		put(o, json ? "\"0x%llx\"" : "0x%llx", (unsigned long long)get_u(p, a->f.size));
	} else if (is_signed(t)) {
		int64_t v = get_i(p, a->f.size);
		/* JSON readers keep 53 bits of an integer: larger ones as text */
		int big = json && (v > (1ll << 53) || v < -(1ll << 53));
		put(o, big ? "\"%lld\"" : "%lld", (long long)v);
	} else {
		uint64_t v = get_u(p, a->f.size);
		put(o, json && v > (1ull << 53) ? "\"%llu\"" : "%llu", (unsigned long long)v);
	}
}

/* Every field as name=value (show) or "name":value (JSON). */
static int fields(char *out, size_t cap, const char *desc, const unsigned char *d, size_t len,
                  int json)
{
	struct typed_at at[PT_EXT_FIELDS_MAX];
	struct out o = { out, cap, 0, 0 };
	size_t n;

	if (cap)
		out[0] = 0;
	if (typed_layout(desc, d, len, at, &n, NULL, 0) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		put(&o, json ? "%s\"%s\":" : "%s%s=", i ? (json ? "," : " ") : "", at[i].f.name);
		put_value(&o, &at[i], d, json);
	}
	return o.full && json ? -1 : 0;
}

int typed_decode(char *out, size_t cap, const char *desc, const unsigned char *d, size_t len)
{
	return fields(out, cap, desc, d, len, 0);
}

void typed_misfit(char *out, size_t cap, const char *desc, const unsigned char *d, size_t len,
                  int truncated)
{
	struct typed_at at[PT_EXT_FIELDS_MAX];
	char why[160];
	size_t n;

	if (truncated)
		snprintf(why, sizeof why, "cut at the stream's max data size");
	else if (typed_layout(desc, d, len, at, &n, why, sizeof why) == 0)
		snprintf(why, sizeof why, "fits"); /* (not called then) */
	snprintf(out, cap, "(not as described, \"%s\": %s)", desc, why);
}

int typed_json_args(char *out, size_t cap, const char *desc, const unsigned char *d, size_t len)
{
	return fields(out, cap, desc, d, len, 1);
}

/* ------------------------------------------------------------ CTF */
int typed_tsdl_fields(char *out, size_t cap, const char *desc, const char *indent)
{
	struct pt_ext_field f[PT_EXT_FIELDS_MAX];
	struct out o = { out, cap, 0, 0 };
	size_t n;

	if (cap)
		out[0] = 0;
	if (pt_ext_type_parse(desc, f, PT_EXT_FIELDS_MAX, &n, NULL) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		enum pt_ext_ftype t = f[i].type;
		unsigned bits = 8 * f[i].size;
		if (t == PT_EXT_F_STRING)
			put(&o, "%sstring { encoding = UTF8; } _%s;\n", indent, f[i].name);
		else if (t == PT_EXT_F_BYTES)
			put(&o, "%sinteger { size = 32; align = 32; signed = false; } _%s_len;\n"
			        "%sinteger { size = 8; align = 8; signed = false; base = 16; } "
			        "_%s[_%s_len];\n",
			    indent, f[i].name, indent, f[i].name, f[i].name);
		else if (is_float(t))
			put(&o, "%sfloating_point { exp_dig = %u; mant_dig = %u; align = %u; } _%s;\n",
			    indent, bits == 32 ? 8u : 11u, bits == 32 ? 24u : 53u, bits, f[i].name);
		else
			put(&o, "%sinteger { size = %u; align = %u; signed = %s; base = %u; } _%s;\n",
			    indent, bits, bits, is_signed(t) ? "true" : "false", is_hex(t) ? 16u : 10u,
			    f[i].name);
	}
	return o.full ? -1 : 0;
}

long typed_ctf_payload(unsigned char *out, size_t cap, const char *desc, const unsigned char *d,
                       size_t len)
{
	struct typed_at at[PT_EXT_FIELDS_MAX];
	size_t n, o = 0;

	if (typed_layout(desc, d, len, at, &n, NULL, 0) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct typed_at *a = &at[i];
		size_t need, pad = 0;
		if (a->f.size)
			pad = round_up(o, a->f.size) - o, need = a->f.size;
		else if (a->f.type == PT_EXT_F_STRING)
			need = a->len + 1;
		else
			pad = round_up(o, 4) - o, need = 4 + a->len;
		if (o + pad + need > cap)
			return -1;
		memset(out + o, 0, pad);
		o += pad;
		if (a->f.type == PT_EXT_F_BYTES) {
			uint32_t l32 = (uint32_t)a->len;
			memcpy(out + o, &l32, 4);
			o += 4;
		}
		memcpy(out + o, d + a->off, a->len);
		o += a->len;
		if (a->f.type == PT_EXT_F_STRING)
			out[o++] = 0;
	}
	return (long)o;
}
