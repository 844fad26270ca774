/*
 * rows.c -- tables of processes and threads cut at --rows (info, stats):
 * a trace of a service that forks a worker per request has tens of
 * thousands of each.  The rows shown are the ones with the most events
 * (info's no-loss waits: the longest held), in the table's own order; a
 * line says how many more there are and their events (waits).
 */
#include <stdlib.h>
#include <string.h>
#include "write.h"

struct rank { uint64_t count; size_t i; };

static int by_count(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

unsigned char *rows_pick(const uint64_t *count, size_t n, unsigned rows)
{
	if (!rows || n <= rows)
		return NULL;
	struct rank *r = malloc(n * sizeof *r);
	unsigned char *keep = calloc(n, 1);
	if (!r || !keep) { /* (then every row: more lines, nothing wrong) */
		free(r);
		free(keep);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		r[i] = (struct rank){ count[i], i };
	qsort(r, n, sizeof *r, by_count); /* (ties: the table's order) */
	for (size_t k = 0; k < rows; k++)
		keep[r[k].i] = 1;
	free(r);
	return keep;
}

void rows_more(size_t more, const char *what, uint64_t n, const char *unit, int indent)
{
	if (more)
		printf("%*s(and %zu more %s%s, %llu %s in all: --rows 0 lists every one)\n", indent, "",
		       more, what, more == 1 ? "" : strcmp(what, "process") ? "s" : "es",
		       (unsigned long long)n, unit);
}
