/*
 * typedesc.c -- payload descriptions: the one parser of their grammar,
 * which posixtrace_eventid_describe() (eventreg.c) and the posixtrace
 * command use (ext.h's pt_ext_type_parse()) on descriptions read
 * from a trace, where they are untrusted.
 *
 *   desc  := field { "," field }
 *   field := name ":" type            (blanks allowed around each token)
 *   name  := [A-Za-z_][A-Za-z0-9_]*   (1..31 characters, each once)
 *   type  := u8 u16 u32 u64 i8 i16 i32 i64 x8 x16 x32 x64 f32 f64
 *            string bytes             (bytes: the last field only)
 *
 * At most 32 fields and 255 characters.  Registering a description is
 * eventreg.c's; storing and carrying it, producer/typemap.c.
 */
#include <string.h>
#include "api.h"

static const struct { const char *name; enum pt_ext_ftype t; unsigned size; } types[] = {
	{ "u8", PT_EXT_F_U8, 1 },   { "u16", PT_EXT_F_U16, 2 }, { "u32", PT_EXT_F_U32, 4 },
	{ "u64", PT_EXT_F_U64, 8 }, { "i8", PT_EXT_F_I8, 1 },   { "i16", PT_EXT_F_I16, 2 },
	{ "i32", PT_EXT_F_I32, 4 }, { "i64", PT_EXT_F_I64, 8 }, { "x8", PT_EXT_F_X8, 1 },
	{ "x16", PT_EXT_F_X16, 2 }, { "x32", PT_EXT_F_X32, 4 }, { "x64", PT_EXT_F_X64, 8 },
	{ "f32", PT_EXT_F_F32, 4 }, { "f64", PT_EXT_F_F64, 8 }, { "string", PT_EXT_F_STRING, 0 },
	{ "bytes", PT_EXT_F_BYTES, 0 },
};

const char *pt_ext_ftype_name(enum pt_ext_ftype t)
{
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (types[i].t == t)
			return types[i].name;
	return NULL;
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

static int name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

int pt_ext_type_parse(const char *desc, struct pt_ext_field *out, size_t cap, size_t *n,
                      size_t *at)
{
	size_t i = 0, k = 0, dummy_n, dummy_at;

	if (!n)
		n = &dummy_n;
	if (!at)
		at = &dummy_at;
	*n = 0;
	*at = 0;
	if (!desc || (cap && !out))
		return EINVAL;
	size_t len = strnlen(desc, PT_EXT_TYPE_DESC);
	if (len == 0 || len >= PT_EXT_TYPE_DESC)
		return EINVAL;
	for (;;) {
		struct pt_ext_field f;
		memset(&f, 0, sizeof f);
		while (blank(desc[i]))
			i++;
		*at = i;
		size_t b = i, nb = i;
		while (name_char(desc[i], i == b))
			i++;
		if (i == b || i - b >= PT_EXT_FIELD_NAME)
			return EINVAL;
		memcpy(f.name, desc + b, i - b);
		while (blank(desc[i]))
			i++;
		if (desc[i] != ':') {
			*at = i;
			return EINVAL;
		}
		i++;
		while (blank(desc[i]))
			i++;
		*at = i;
		b = i;
		while (name_char(desc[i], 0))
			i++;
		size_t t = 0;
		for (; t < sizeof types / sizeof types[0]; t++)
			if (strlen(types[t].name) == i - b && !memcmp(types[t].name, desc + b, i - b))
				break;
		if (t == sizeof types / sizeof types[0] || k == PT_EXT_FIELDS_MAX)
			return EINVAL;
		f.type = types[t].t;
		f.size = types[t].size;
		*at = nb;
		for (size_t j = 0; j < k && j < cap; j++)
			if (!strcmp(out[j].name, f.name))
				return EINVAL; /* a name twice */
		if (k > 0 && k <= cap && out[k - 1].type == PT_EXT_F_BYTES)
			return EINVAL; /* bytes is the rest: nothing after it */
		if (k < cap)
			out[k] = f;
		*n = ++k;
		while (blank(desc[i]))
			i++;
		if (desc[i] == 0)
			return k <= cap ? 0 : EINVAL;
		if (desc[i] != ',') {
			*at = i;
			return EINVAL;
		}
		i++;
	}
}
