/*
 * status.c -- posix_trace_get_attr() and posix_trace_get_status(), for a
 * stream or a log opened for reading.  Each trace id carries its own
 * status function (set by control/newstream.c or logfile.c), so reading a log
 * links nothing of a stream's.
 */
#include "api.h"

PT_API int posix_trace_get_attr(trace_id_t trid, trace_attr_t *attr)
{
	struct pt_trid *t;
	int rc = pt_trid_lock_any(trid, &t);

	if (rc)
		return rc;
	if (attr)
		pt_trid_attrs(t, attr);
	else
		rc = EINVAL;
	pt_trid_unlock(t);
	return rc;
}

PT_API int posix_trace_get_status(trace_id_t trid, struct posix_trace_status_info *si)
{
	struct pt_trid *t;
	int rc = pt_trid_lock_any(trid, &t);

	if (rc)
		return rc;
	if (!si)
		rc = EINVAL;
	else
		rc = t->status(t, si); /* a stream's or a log's (pt_trid_status_fn) */
	pt_trid_unlock(t);
	return rc;
}
