/*
 * trace.c -- a trace as the commands read it: one log (tlog.c) or a set
 * of logs read as one (parts.c).  Each tlog_* reading function here
 * hands the call to the set's parts_* function when l is a set, else to
 * the one log's tlog_one_* function; parts.c reads each of its parts
 * with the latter, so the set stands on the one log and this file on
 * both.  tlog_next() also applies l->filter.
 */
#include "read.h"

int tlog_load_as(struct tlog *l, const char *path, const struct tlog_front *f)
{
	if (tlog_is_set(path)) /* a directory of parts, or several logs (parts.c) */
		return parts_load(l, path, f);
	return tlog_one_load_as(l, path, f);
}

int tlog_load(struct tlog *l, const char *path)
{
	return tlog_load_as(l, path, NULL);
}

int tlog_totals_as(struct tlog *l, const char *path, const struct tlog_front *f)
{
	if (tlog_is_set(path)) /* (no part open: they are when read) */
		return parts_load(l, path, f);
	return tlog_one_totals_as(l, path, f);
}

int tlog_totals(struct tlog *l, const char *path)
{
	return tlog_totals_as(l, path, NULL);
}

int tlog_next(struct tlog *l, struct tev *e)
{
	int r;

	/* a filter knows the threads and types once the totals do */
	while ((r = l->parts_ ? parts_next(l, e) : tlog_one_next(l, e)) > 0 && l->filter &&
	       l->totals && !filter_event(l->filter, l, e))
		;
	return r;
}

int tlog_next_batch(struct tlog *l, struct pt_ext_batch *b, uint32_t *thread_of)
{
	return l->parts_ ? parts_next_batch(l, b, thread_of) : tlog_one_next_batch(l, b, thread_of);
}

int tlog_rewind(struct tlog *l)
{
	return l->parts_ ? parts_rewind(l) : tlog_one_rewind(l);
}

int tlog_seek(struct tlog *l, uint64_t ts)
{
	return l->parts_ ? parts_seek(l, ts) : tlog_one_seek(l, ts);
}

int tlog_until(struct tlog *l, uint64_t ts)
{
	return l->parts_ ? parts_until(l, ts) : tlog_one_until(l, ts);
}

void tlog_warn(const struct tlog *l)
{
	if (l->parts_) /* (each part by its name) */
		parts_warn(l);
	else
		tlog_one_warn(l);
}

void tlog_free(struct tlog *l)
{
	parts_free(l);
	tlog_one_free(l);
}
