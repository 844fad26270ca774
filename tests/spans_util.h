/*
 * spans_util.h -- what the span tests read of `stats --json`
 * (cli_spans.c, cli_spans_big.c): a number of a span's object.
 */
#ifndef PT_SPANS_UTIL_H
#define PT_SPANS_UTIL_H
#include <stdlib.h>
#include <string.h>

/* The number after key in the object of span name in js, or -1. */
static inline long long span_num(const char *js, const char *name, const char *key)
{
	char pat[96];
	snprintf(pat, sizeof pat, "{\"name\":\"%s\",\"begin\"", name);
	const char *p = js ? strstr(js, pat) : NULL;
	if (!p)
		return -1;
	const char *end = strstr(p, "\"slowest\":");
	const char *k = strstr(p, key);
	if (!k || (end && k > end))
		return -1;
	return strtoll(k + strlen(key), NULL, 10);
}
#endif
