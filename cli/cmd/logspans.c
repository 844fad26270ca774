/*
 * logspans.c -- what show, stats, info and export do first: their --span
 * options made into spans, the log read, the spans checked against its
 * types.
 */
#include "cmd.h"

int spans_load(const struct span_args *a, struct spans **sp, struct tlog *l, const char *path,
               int totals, const struct tlog_front *f)
{
	int c = spans_make(a, sp);
	if (c)
		return c;
	if ((totals ? tlog_totals_as(l, path, f) : tlog_load_as(l, path, f)) ||
	    (spans_check(*sp, l) && (tlog_free(l), 1))) {
		spans_free(*sp);
		*sp = NULL;
		return 1;
	}
	return 0;
}
