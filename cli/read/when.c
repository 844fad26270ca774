/*
 * when.c -- a point in a trace as the user gives it (show --from/--to):
 * seconds since the trace's first event ("1.5", "1.5s", "250ms", "20us",
 * "+1.5"), or an absolute time in UTC as `show --absolute` prints it
 * ("2026-11-27T15:04:05.123456789Z", the fraction and the Z optional), or
 * seconds since the epoch after '@' ("@1764255845.25").
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "read.h"

/* digits after a '.', as nanoseconds (at most 9 taken, the rest must be digits) */
static int frac_ns(const char **p, uint64_t *ns)
{
	uint64_t v = 0;
	int k = 0;
	const char *s = *p;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++)
		if (k < 9) {
			v = v * 10 + (uint64_t)(*s - '0');
			k++;
		}
	for (; k < 9; k++)
		v *= 10;
	*ns = v;
	*p = s;
	return 0;
}

/* "S[.F]" as ns, with an optional unit (s, ms, us, ns) */
static int duration_ns(const char *s, uint64_t *out)
{
	uint64_t sec = 0, f = 0;
	int digits = 0;

	for (; isdigit((unsigned char)*s); s++, digits++) {
		if (sec > UINT64_MAX / 10 / 1000000000u)
			return -1;
		sec = sec * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.') {
		s++;
		if (frac_ns(&s, &f))
			return -1;
		digits++;
	}
	if (!digits)
		return -1;
	uint64_t ns = sec * 1000000000u + f; /* as if seconds */
	if (!*s || !strcmp(s, "s"))
		*out = ns;
	else if (!strcmp(s, "ms"))
		*out = ns / 1000u;
	else if (!strcmp(s, "us"))
		*out = ns / 1000000u;
	else if (!strcmp(s, "ns"))
		*out = ns / 1000000000u;
	else
		return -1;
	return 0;
}

int parse_when(const char *s, struct when *w)
{
	struct tm tm;
	uint64_t f = 0;

	if (*s == '@') {
		w->absolute = 1;
		return duration_ns(s + 1, &w->ns);
	}
	memset(&tm, 0, sizeof tm);
	const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest) {
		memset(&tm, 0, sizeof tm);
		rest = strptime(s, "%Y-%m-%d %H:%M:%S", &tm);
	}
	if (rest) {
		if (*rest == '.' && (rest++, frac_ns(&rest, &f)))
			return -1;
		if (*rest == 'Z')
			rest++;
		time_t t = timegm(&tm);
		if (*rest || t < 0)
			return -1;
		w->absolute = 1;
		w->ns = (uint64_t)t * 1000000000u + f;
		return 0;
	}
	w->absolute = 0;
	return duration_ns(*s == '+' ? s + 1 : s, &w->ns);
}

uint64_t when_ns(const struct when *w, uint64_t t0)
{
	return w->absolute ? w->ns : t0 + w->ns;
}
