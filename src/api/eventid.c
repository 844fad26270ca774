/*
 * eventid.c -- event type names and ids: the POSIX functions.
 *
 * The process keeps its registry of user event names in its control
 * segment (traced/ctlseg.c), where a controller can read it and add to
 * it; ids are given out from 17.  Each stream holds its own table (in its
 * segment), filled from the registry when it is created and when the
 * traced process maps it, and kept up to date on every new registration,
 * so a reader in another process, or after this one is gone, can name
 * every id.  The tables themselves are shm/names.c, and so is the one
 * table of the system event types' names, which the extensions
 * posixtrace_eventid_system() and posixtrace_eventid_system_name() look
 * up without a stream.
 */
#include <string.h>
#include "api.h"

PT_API int posix_trace_eventid_open(const char *restrict name, trace_event_id_t *restrict id)
{
	struct pt_name *tb[PT_SLOTS + 1];
	unsigned n = 0;
	int rc = pt_name_check(name);

	if (rc)
		return rc;
	if (!id)
		return EINVAL;
	pthread_mutex_lock(&pt_trid_table_lock);
	unsigned level = pt_enter(); /* the views stay mapped while we use them */
	tb[n++] = pt_ctl_names(pt_ctl);
	uint32_t att = atomic_load(&pt_proc.att);
	for (unsigned s = 0; s < PT_SLOTS; s++)
		if (att >> s & 1)
			tb[n++] = pt_view(s)->names;
	rc = pt_names_open(tb, n, name, id);
	pt_leave(level);
	pthread_mutex_unlock(&pt_trid_table_lock);
	return rc;
}

/* The traced process's registry and the stream's table: the id the traced
 * process gets (or got) for the same name. */
PT_API int posix_trace_trid_eventid_open(trace_id_t trid, const char *restrict name,
                                         trace_event_id_t *restrict id)
{
	struct pt_name *tb[2];
	struct pt_trid *t;
	unsigned n = 0;
	int rc = pt_name_check(name);

	if (rc)
		return rc;
	pthread_mutex_lock(&pt_trid_table_lock);
	if ((rc = pt_trid_lock(trid, &t)) == 0) {
		if (!id) {
			rc = EINVAL;
		} else {
			if (t->tctl)
				tb[n++] = pt_ctl_names(t->tctl);
			tb[n++] = t->view.names;
			rc = pt_names_open(tb, n, name, id);
		}
		pt_trid_unlock(t);
	}
	pthread_mutex_unlock(&pt_trid_table_lock);
	return rc;
}

PT_API int posix_trace_eventid_equal(trace_id_t trid, trace_event_id_t a, trace_event_id_t b)
{
	(void)trid;
	return a == b;
}

/* Names the traced process registered after the stream was made, before
 * it mapped the stream (it copies them then): take them from its registry. */
static void sync_names(struct pt_trid *t)
{
	if (t->tctl)
		pt_names_copy(t->view.names, pt_ctl_names(t->tctl));
}

PT_API int posix_trace_eventid_get_name(trace_id_t trid, trace_event_id_t id, char *name)
{
	struct pt_trid *t;
	int rc = pt_trid_lock_any(trid, &t);

	if (rc)
		return rc;
	if (t->kind == PT_KIND_LOG) {
		rc = name ? pt_logopen_name(t, id, name) : EINVAL;
		pt_trid_unlock(t);
		return rc;
	}
	rc = name ? pt_name_get(t->view.names, id, name) : EINVAL;
	if (rc && name && id < PT_NIDS) {
		sync_names(t);
		rc = pt_name_get(t->view.names, id, name);
	}
	pt_trid_unlock(t);
	return rc;
}

PT_API int posix_trace_eventtypelist_getnext_id(trace_id_t trid, trace_event_id_t *restrict id,
                                                int *restrict unavailable)
{
	struct pt_trid *t;
	int rc = pt_trid_lock_any(trid, &t);

	if (rc)
		return rc;
	if (!id || !unavailable) {
		pt_trid_unlock(t);
		return EINVAL;
	}
	if (t->kind == PT_KIND_LOG) {
		rc = pt_logopen_next_id(t, id, unavailable);
		pt_trid_unlock(t);
		return rc;
	}
	*unavailable = 1;
	if (t->typelist_pos == 0)
		sync_names(t);
	while (t->typelist_pos < PT_NIDS) {
		uint32_t i = t->typelist_pos++;
		char name[PT_NAME_SZ];
		if (pt_name_get(t->view.names, i, name) == 0) {
			*id = i;
			*unavailable = 0;
			break;
		}
	}
	pt_trid_unlock(t);
	return 0;
}

PT_API int posix_trace_eventtypelist_rewind(trace_id_t trid)
{
	struct pt_trid *t;
	int rc = pt_trid_lock_any(trid, &t);

	if (rc)
		return rc;
	t->typelist_pos = 0;
	pt_trid_unlock(t);
	return 0;
}

/* Extension: a system event type by its name, and its name by its id,
 * with no stream and no registration (posix_trace_eventid_open() would
 * register a user event of that name). */
PT_API int posixtrace_eventid_system(const char *name, trace_event_id_t *id)
{
	if (!name || !id)
		return EINVAL;
	return pt_sys_id(name, id);
}

PT_API const char *posixtrace_eventid_system_name(trace_event_id_t id)
{
	return pt_sys_name(id);
}
