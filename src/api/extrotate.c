/*
 * extrotate.c -- what ext.h gives the posixtrace command to cut a stream's
 * log into parts (flush/rotate.c and the flusher), apart from ext.c so
 * that reading a log needs nothing of the recording side.
 */
#include <errno.h>
#include "api.h"

int pt_ext_log_rotate(trace_id_t trid, const struct pt_ext_rotate *r)
{
	struct pt_trid *t;
	int rc;

	if (pt_trid_lock(trid, &t) != 0)
		return EINVAL;
	rc = pt_flusher_rotate(&t->s, r);
	pt_trid_unlock(t);
	return rc;
}

int pt_ext_log_rotate_stats(trace_id_t trid, struct pt_ext_rotate_stats *out)
{
	struct pt_trid *t;
	int rc;

	if (!out || pt_trid_lock(trid, &t) != 0)
		return EINVAL;
	rc = pt_flusher_rotate_stats(&t->s, out);
	pt_trid_unlock(t);
	return rc;
}
