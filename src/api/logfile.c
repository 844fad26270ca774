/*
 * logfile.c -- a trace log opened for reading, the analyzer's side of
 * TRL: posix_trace_open(), posix_trace_rewind(), posix_trace_close(), and
 * what get_attr, get_status, the event-type list and getnext do on such an
 * id.  The file itself is read by logread.c, which trusts nothing in it.
 */
#include <stdlib.h>
#include <string.h>
#include "api.h"

PT_API int posix_trace_open(int fd, trace_id_t *trid)
{
	struct pt_logr *r;
	struct pt_trid *t;
	trace_id_t id;
	int rc;

	if (!trid)
		return EINVAL;
	if (!(r = calloc(1, sizeof *r)))
		return ENOMEM;
	if ((rc = pt_logr_open(r, fd)) != 0) {
		free(r);
		return rc == EBADF ? EBADF : rc == ENOMEM ? ENOMEM : EINVAL;
	}
	pthread_mutex_lock(&pt_trid_table_lock);
	t = pt_trid_new(PT_KIND_LOG, &id);
	pthread_mutex_unlock(&pt_trid_table_lock);
	if (!t) {
		pt_logr_close(r);
		free(r);
		return EAGAIN;
	}
	t->lr = r;
	t->status = pt_logopen_status;
	t->s.attr = *pt_logr_attr(r);
	*trid = id;
	pt_trid_unlock(t);
	return 0;
}

static int lock_log(trace_id_t trid, struct pt_trid **t)
{
	int rc = pt_trid_lock_any(trid, t);

	if (rc == 0 && (*t)->s.kind != PT_KIND_LOG) {
		pt_trid_unlock(*t);
		return EINVAL; /* a live stream, not a log */
	}
	return rc;
}

PT_API int posix_trace_rewind(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = lock_log(trid, &t);

	if (rc)
		return rc;
	pt_logr_rewind(t->lr);
	pt_trid_unlock(t);
	return 0;
}

PT_API int posix_trace_close(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = lock_log(trid, &t);

	if (rc)
		return rc;
	pt_logr_close(t->lr);
	free(t->lr);
	t->lr = NULL;
	pt_trid_free(t);
	return 0;
}

/* The status the writer saved when it finished; a log cut short (its
 * writer was killed) has none: then what the events say. */
int pt_logopen_status(struct pt_trid *t, struct posix_trace_status_info *si)
{
	if (pt_logr_status(t->lr, si) != 0) {
		memset(si, 0, sizeof *si);
		si->posix_stream_status = POSIX_TRACE_SUSPENDED;
		si->posix_stream_full_status = POSIX_TRACE_NOT_FULL;
		si->posix_stream_overrun_status = POSIX_TRACE_NO_OVERRUN;
		si->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
		si->posix_log_overrun_status =
			t->lr->lost ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
		si->posix_log_full_status = POSIX_TRACE_NOT_FULL;
	}
	return 0;
}

int pt_logopen_name(struct pt_trid *t, trace_event_id_t id, char *name)
{
	const char *n = id < PT_NIDS ? pt_logr_name(t->lr, id) : NULL;

	if (!n)
		return EINVAL;
	strncpy(name, n, TRACE_EVENT_NAME_MAX);
	name[TRACE_EVENT_NAME_MAX] = 0;
	return 0;
}

int pt_logopen_next_id(struct pt_trid *t, trace_event_id_t *id, int *unavailable)
{
	int n = t->typelist_pos < PT_NIDS ? pt_logr_next_id(t->lr, t->typelist_pos) : -1;

	*unavailable = n < 0;
	if (n >= 0) {
		*id = (trace_event_id_t)n;
		t->typelist_pos = (uint32_t)n + 1;
	} else {
		t->typelist_pos = PT_NIDS;
	}
	return 0;
}

int pt_logopen_next(struct pt_trid *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                    size_t *len, int *unavailable)
{
	return pt_logr_next(t->lr, ev, buf, num, len, unavailable);
}
