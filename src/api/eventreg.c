/*
 * eventreg.c -- registering event types: a user event name in this
 * process's registry (its control segment, producer/ctlseg.c) or a stream's
 * table, and a payload description (posixtrace_eventid_describe(), an
 * extension).  The traced side's half of eventid.c and typedesc.c, apart
 * so that reading a log (eventid.c's look-ups, typedesc.c's parser) needs
 * nothing of the traced side.
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
			if (t->s.tctl)
				tb[n++] = pt_ctl_names(t->s.tctl);
			tb[n++] = t->s.view.names;
			rc = pt_names_open(tb, n, name, id);
		}
		pt_trid_unlock(t);
	}
	pthread_mutex_unlock(&pt_trid_table_lock);
	return rc;
}

/* Extension: describe the payload of id's events (see
 * posixtrace_eventid_describe(3)).  Not async-signal-safe. */
PT_API int posixtrace_eventid_describe(trace_event_id_t id, const char *desc)
{
	struct pt_ext_field f[PT_EXT_FIELDS_MAX];
	size_t n;

	if (id < POSIX_TRACE_UNNAMED_USEREVENT || id >= PT_NIDS || !desc ||
	    pt_ext_type_parse(desc, f, PT_EXT_FIELDS_MAX, &n, NULL) != 0)
		return EINVAL;
	return pt_typemap_set(id, desc);
}
