/*
 * ext.c -- what ext.h gives the posixtrace command beyond POSIX, for a
 * stream or a log: loss counts and the map of loaded code.
 */
#include <string.h>
#include "api.h"

int pt_ext_losses(trace_id_t trid, struct pt_ext_losses *out)
{
	struct pt_trid *t;
	int rc;

	if (!out)
		return EINVAL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	memset(out, 0, sizeof *out);
	if (t->kind == PT_KIND_LOG) {
		const struct pt_logr *r = t->lr;
		out->resume_ok = r->last_lost_ok;
		out->at_resume = r->last_lost;
		out->total_ok = r->has_stream_lost;
		out->total = r->stream_lost;
		out->log_overwritten = r->lost;
		out->log_dropped = r->dropped;
		out->wrap_at_resume = r->wrap_told;
	} else {
		const struct pt_reader *rd = &t->rd;
		out->resume_ok = rd->pairs > 0;
		out->at_resume = rd->lost_at_resume;
		out->total_ok = 1;
		out->total = pt_read_lost(t); /* (since the last clear) */
	}
	pt_trid_unlock(t);
	return 0;
}

/* The map of loaded code a stream or a log holds, entries from `from`
 * on (reader/objread.c takes a stream's). */
int pt_ext_objects(trace_id_t trid, size_t from, struct pt_ext_obj *out, size_t cap, size_t *n)
{
	struct pt_trid *t;
	int rc;

	if (!n || (cap && !out))
		return EINVAL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	const struct pt_ext_obj *src;
	size_t have;
	if (t->kind == PT_KIND_LOG) {
		src = t->lr->objs;
		have = t->lr->nobjs;
	} else {
		pt_objs_collect(t);
		src = t->rd.objs;
		have = t->rd.nobjs;
	}
	*n = 0;
	for (size_t i = from; i < have && *n < cap; i++)
		out[(*n)++] = src[i];
	pt_trid_unlock(t);
	return 0;
}
