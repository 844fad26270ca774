/*
 * setfilter.c -- the event filter of a stream (TEF).  The filter lives in the
 * segment as 1024 bits that writers test with one load per event.
 */
#include "api.h"

PT_API int posix_trace_get_filter(trace_id_t trid, trace_event_set_t *set)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	if (!set) {
		rc = EINVAL;
	} else {
		pt_filter_get(t->s.hdr, set);
	}
	pt_trid_unlock(t);
	return rc;
}

PT_API int posix_trace_set_filter(trace_id_t trid, const trace_event_set_t *set, int how)
{
	trace_event_set_t ch[2]; /* old, new: the FILTER event's data */
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	if (!set || (how != POSIX_TRACE_SET_EVENTSET && how != POSIX_TRACE_ADD_EVENTSET &&
	             how != POSIX_TRACE_SUB_EVENTSET)) {
		pt_trid_unlock(t);
		return EINVAL;
	}
	struct pt_hdr *h = t->s.hdr;
	for (unsigned i = 0; i < PT_NIDS / 64; i++) {
		uint64_t old = atomic_load(&h->filter[i]), nw = set->__bits[i];
		if (how == POSIX_TRACE_ADD_EVENTSET)
			nw |= old;
		else if (how == POSIX_TRACE_SUB_EVENTSET)
			nw = old & ~nw;
		ch[0].__bits[i] = old;
		ch[1].__bits[i] = nw;
		atomic_store(&h->filter[i], nw);
	}
	if (t->slot >= 0) { /* the wanted bitmap follows; the traced process
	                     * refreshes its copy of the filter */
		pt_ctl_slot_want(t->s.tctl, (unsigned)t->slot, h->filter);
		pt_ctl_bump(t->s.tctl, 0, 0);
	}
	if (atomic_load(&h->state) & PT_ST_RUNNING)
		pt_record_system(&t->s, POSIX_TRACE_FILTER, ch, sizeof ch, __builtin_return_address(0), 0);
	pt_trid_unlock(t);
	return 0;
}
