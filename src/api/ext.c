/*
 * ext.c -- what ext.h gives the posixtrace command beyond POSIX, for a
 * stream or a log: loss counts and the map of loaded code.
 */
#include <stdlib.h>
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
	} else {
		const struct pt_reader *rd = &t->rd;
		out->resume_ok = rd->pairs > 0;
		out->at_resume = rd->lost_at_resume;
		out->total_ok = 1;
		out->total = atomic_load_explicit(&t->hdr->lost, memory_order_relaxed);
		if (out->total < rd->lost_at_resume) /* scribbled on by the traced process */
			out->total = rd->lost_at_resume;
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

int pt_ext_seek(trace_id_t trid, uint64_t ts_ns, uint64_t *lost_before)
{
	struct pt_trid *t;
	int rc;

	if (!lost_before)
		return EINVAL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	rc = t->kind == PT_KIND_LOG ? pt_logr_seek(t->lr, ts_ns, lost_before) : EINVAL;
	pt_trid_unlock(t);
	return rc;
}

int pt_ext_log_summary(int fd, struct pt_ext_summary **out)
{
	struct pt_log_summary ls;
	struct pt_ext_summary *s;
	int rc;

	if (!out)
		return EINVAL;
	*out = NULL;
	if ((rc = pt_log_summary_read(fd, &ls)) != 0)
		return rc;
	if (!(s = calloc(1, sizeof *s)) || !(s->names = calloc(PT_NIDS, sizeof *s->names))) {
		free(s);
		pt_log_summary_free(&ls);
		return ENOMEM;
	}
	pt_attr_from_img(&ls.attr, &s->attr);
	s->status = ls.status;
	s->losses.resume_ok = ls.gaps > 0;
	s->losses.at_resume = ls.last_lost;
	s->losses.total_ok = 1;
	s->losses.total = ls.stream_lost;
	s->losses.log_overwritten = ls.lost;
	s->losses.log_dropped = ls.dropped;
	s->events = ls.events;
	s->first = ls.first;
	s->last = ls.last;
	s->gaps = ls.gaps;
	memcpy(s->count, ls.count, sizeof s->count);
	memcpy(s->tfirst, ls.tfirst, sizeof s->tfirst);
	memcpy(s->tlast, ls.tlast, sizeof s->tlast);
	for (unsigned id = 0; id < PT_NIDS; id++)
		if (ls.known[id / 64] >> (id % 64) & 1)
			memcpy(s->names[id], ls.names[id], sizeof s->names[id]);
	s->writers = calloc(ls.nwr + 1, sizeof *s->writers);
	if (!s->writers) {
		pt_log_summary_free(&ls);
		pt_ext_summary_free(s);
		return ENOMEM;
	}
	for (uint32_t i = 0; i < ls.nwr; i++)
		s->writers[i] = (struct pt_ext_sum_writer){ ls.wr[i].pid, ls.wr[i].thread,
		                                            ls.wr[i].count, ls.wr[i].first,
		                                            ls.wr[i].last };
	s->nwriters = ls.nwr;
	s->objs = ls.objs; /* (taken over) */
	s->nobjs = ls.nobjs;
	ls.objs = NULL;
	pt_log_summary_free(&ls);
	*out = s;
	return 0;
}

void pt_ext_summary_free(struct pt_ext_summary *s)
{
	if (!s)
		return;
	free(s->names);
	free(s->writers);
	free(s->objs);
	free(s);
}
