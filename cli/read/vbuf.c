/*
 * vbuf.c -- a growing buffer for the answers of `posixtrace view`
 * (vquery.c): bytes, printf, and JSON strings escaped so that the answer
 * stays JSON whatever the log's names and paths hold (and holds no <, >
 * or &, so that it cannot be read as markup either).  Out of memory, it
 * keeps what it has and sets oom.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "read.h"

void vb_put(struct vbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

void vb_printf(struct vbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		vb_put(b, tmp, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->oom = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	vb_put(b, big, (size_t)n);
	free(big);
}

void vb_str(struct vbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	vb_put(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			vb_put(b, e, 2);
		} else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&') {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			vb_put(b, e, 6);
		} else
			vb_put(b, s, 1);
	}
	vb_put(b, "\"", 1);
}

