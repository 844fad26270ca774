/*
 * where_fuzz.c -- libFuzzer target for the --where expression of the
 * reading commands (cli/read/where.c): text from whoever runs the command,
 * or from a script that built it out of data it read.
 *
 * Input: the expression (at most FUZZ_MAX_LEN bytes, cut at a NUL).
 * Checked: no crash, out-of-bounds access, undefined behaviour (ASan,
 * UBSan) or deep recursion; a refusal always says why, in its buffer; an
 * expression that parses evaluates, against events whose fields answer
 * from a fixed set of values (numbers of each kind, strings, missing),
 * to 0 or 1, and the same twice; its fields are each a name the grammar
 * allows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../cli/read/where.c"

struct ev { int variant; };

static int get(void *arg, const char *field, struct where_val *v)
{
	const struct ev *e = arg;
	size_t h = strlen(field) + (size_t)e->variant;

	memset(v, 0, sizeof *v);
	switch (h % 6) {
	case 0: return -1;                                  /* not in this event */
	case 1: v->kind = WV_INT; v->i = INT64_MIN + (int64_t)h; return 0;
	case 2: v->kind = WV_UINT; v->u = UINT64_MAX - h; return 0;
	case 3: v->kind = WV_FLOAT; v->f = h & 1 ? 0.0 / 0.0 : 1e308; return 0;
	case 4: v->kind = WV_STR; v->s = "worker-**?x"; v->n = 11; return 0;
	default: v->kind = WV_STR; v->s = field; v->n = strlen(field); return 0; /* no NUL needed */
	}
}

static int field_ok(void *arg, const char *field, int op, const struct where_val *lit)
{
	(void)arg;
	if (!field[0] || strlen(field) >= WHERE_FIELD_MAX || op < WHERE_EQ || op > WHERE_GE)
		abort();
	if (lit->kind == WV_STR && strlen(lit->s) > lit->n)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), err[200];
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	memset(err, 'x', sizeof err);
	struct where *w = where_parse(s, err, sizeof err);
	if (!w) {
		if (!memchr(err, 0, sizeof err) || !err[0])
			abort(); /* a refusal says why */
	} else {
		where_fields(w, field_ok, NULL);
		for (int v = 0; v < 6; v++) {
			struct ev e = { v };
			int a = where_eval(w, get, &e), b = where_eval(w, get, &e);
			if ((a != 0 && a != 1) || a != b)
				abort();
		}
		where_free(w);
	}
	/* the glob on its own: the input split at its first byte 0x01 */
	const char *cut = memchr(s, 1, strlen(s));
	if (cut)
		(void)glob_match(cut + 1, s, (size_t)(cut - s));
	free(s);
	return 0;
}
