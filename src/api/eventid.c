/*
 * eventid.c -- event type names and ids: the POSIX functions.
 *
 * The process keeps its registry of user event names in its control
 * segment (producer/ctlseg.c), where a controller can read it and add to
 * it; ids are given out from 17.  Each stream holds its own table (in its
 * segment), filled from the registry when it is created and when the
 * traced process maps it, and kept up to date on every new registration,
 * so a reader in another process, or after this one is gone, can name
 * every id.  The tables themselves are shm/nametable.c, and so is the one
 * table of the system event types' names, which the extensions
 * posixtrace_eventid_system() and posixtrace_eventid_system_name() look
 * up without a stream.  Registering a name (the process's registry, a
 * stream's table) is eventreg.c: this file only looks names up, for a
 * stream or a log.
 */
#include <string.h>
#include "api.h"

PT_API int posix_trace_eventid_equal(trace_id_t trid, trace_event_id_t a, trace_event_id_t b)
{
	(void)trid;
	return a == b;
}

/* Names the traced process registered after the stream was made, before
 * it mapped the stream (it copies them then): take them from its registry. */
static void sync_names(struct pt_trid *t)
{
	if (t->s.tctl)
		pt_names_copy(t->s.view.names, pt_ctl_names(t->s.tctl));
}

PT_API int posix_trace_eventid_get_name(trace_id_t trid, trace_event_id_t id, char *name)
{
	struct pt_trid *t;
	int rc = pt_trid_lock_any(trid, &t);

	if (rc)
		return rc;
	if (t->s.kind == PT_KIND_LOG) {
		rc = name ? pt_logopen_name(t, id, name) : EINVAL;
		pt_trid_unlock(t);
		return rc;
	}
	rc = name ? pt_name_get(t->s.view.names, id, name) : EINVAL;
	if (rc && name && id < PT_NIDS) {
		sync_names(t);
		rc = pt_name_get(t->s.view.names, id, name);
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
	if (t->s.kind == PT_KIND_LOG) {
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
		if (pt_name_get(t->s.view.names, i, name) == 0) {
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
