/*
 * layout.c -- where each field of a payload is, by the description its
 * program gave (posixtrace_eventid_describe(3)): the one reading of the
 * layout pt_ext_type_parse() states, for the decoder (enrich/typed.c) and
 * the --where filter (filter.c).  Fields in order, each scalar at the next
 * multiple of its size from the payload's start (as a C compiler lays out
 * a struct of those types), a string where the previous field ended, up to
 * and including its NUL (the last field may instead end at the payload's
 * end), bytes for the rest.  After the last field only the struct's tail
 * padding may remain.  Self-contained (libc and ext.h): the fuzz targets
 * and tests/typed.c include it whole.
 */
#include <stdio.h>
#include <string.h>
#include "read.h"

static size_t lay_round_up(size_t v, size_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

int typed_layout(const char *desc, const unsigned char *d, size_t len, struct typed_at *at,
                 size_t *n, char *why, size_t why_cap)
{
	size_t nf = 0, off = 0, align = 1;

#define WHY(...) do { if (why_cap) snprintf(why, why_cap, __VA_ARGS__); } while (0)
	*n = 0;
	struct pt_ext_field f[PT_EXT_FIELDS_MAX];
	if (pt_ext_type_parse(desc, f, PT_EXT_FIELDS_MAX, &nf, NULL) != 0) {
		WHY("its description does not parse");
		return -1;
	}
	for (size_t i = 0; i < nf; i++) {
		struct typed_at *a = &at[i];
		a->f = f[i];
		if (f[i].size) {
			off = lay_round_up(off, f[i].size);
			align = f[i].size > align ? f[i].size : align;
			if (off + f[i].size > len) {
				WHY("%zu bytes, field '%s' needs %zu", len, f[i].name, off + f[i].size);
				return -1;
			}
			a->off = off;
			a->len = f[i].size;
			off += f[i].size;
		} else if (f[i].type == PT_EXT_F_STRING) {
			const unsigned char *z = off < len ? memchr(d + off, 0, len - off) : NULL;
			if (!z && i + 1 < nf) {
				WHY("string '%s' has no NUL before the next field", f[i].name);
				return -1;
			}
			if (!z && off >= len) {
				WHY("%zu bytes, string '%s' is missing", len, f[i].name);
				return -1;
			}
			a->off = off;
			a->len = z ? (size_t)(z - (d + off)) : len - off;
			off = z ? (size_t)(z - d) + 1 : len;
		} else { /* bytes: the rest */
			a->off = off < len ? off : len;
			a->len = len - a->off;
			off = len;
		}
	}
	if (lay_round_up(off, align) < len || (off < len && len - off >= align)) {
		WHY("%zu bytes, its fields take %zu", len, off);
		return -1;
	}
	*n = nf;
	return 0;
#undef WHY
}
