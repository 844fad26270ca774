/*
 * eventid.c -- event type names and ids.
 *
 * The process keeps one registry of user event names; ids are given out
 * in order from 17.  Each stream the process records into holds its own
 * copy of the table (in the shared segment), filled at creation and kept
 * up to date on every new registration, so a reader in another process,
 * or after this one is gone, can name every id.
 */
#include <string.h>
#include "lib.h"

#define FIRST_USER_ID (POSIX_TRACE_UNNAMED_USEREVENT + 1)

static const char *const sys_names[] = {
	[POSIX_TRACE_ERROR] = "posix_trace_error",
	[POSIX_TRACE_START] = "posix_trace_start",
	[POSIX_TRACE_STOP] = "posix_trace_stop",
	[POSIX_TRACE_FILTER] = "posix_trace_filter",
	[POSIX_TRACE_OVERFLOW] = "posix_trace_overflow",
	[POSIX_TRACE_RESUME] = "posix_trace_resume",
	[POSIX_TRACE_FLUSH_START] = "posix_trace_flush_start",
	[POSIX_TRACE_FLUSH_STOP] = "posix_trace_flush_stop",
	[POSIX_TRACE_UNNAMED_USEREVENT] = "posix_trace_unnamed_userevent",
};

/* The registry: under pt_ctl_lock. */
static char reg_name[PT_NIDS][PT_NAME_SZ];
static uint32_t reg_count; /* user names registered */

static void name_set(struct pt_name *names, trace_event_id_t id, const char *name)
{
	if (atomic_load_explicit(&names[id].valid, memory_order_acquire))
		return;
	strncpy(names[id].name, name, PT_NAME_SZ - 1);
	names[id].name[PT_NAME_SZ - 1] = 0;
	atomic_store_explicit(&names[id].valid, 1, memory_order_release);
}

void pt_names_init(struct pt_name *names)
{
	for (size_t i = 0; i < sizeof sys_names / sizeof sys_names[0]; i++)
		if (sys_names[i])
			name_set(names, (trace_event_id_t)i, sys_names[i]);
}

/* Under pt_ctl_lock. */
void pt_names_copy_registry(struct pt_name *names)
{
	for (uint32_t i = 0; i < reg_count; i++)
		name_set(names, FIRST_USER_ID + i, reg_name[FIRST_USER_ID + i]);
}

/* Read a name from a (possibly scribbled-on) table. */
int pt_name_get(const struct pt_name *names, trace_event_id_t id, char *out)
{
	if (id >= PT_NIDS || !atomic_load_explicit(&names[id].valid, memory_order_acquire))
		return EINVAL;
	memcpy(out, names[id].name, PT_NAME_SZ);
	out[PT_NAME_SZ - 1] = 0;
	return 0;
}

static int check_name(const char *name)
{
	if (!name || !name[0])
		return EINVAL;
	if (strnlen(name, PT_NAME_SZ) >= PT_NAME_SZ)
		return ENAMETOOLONG;
	return 0;
}

/* Find or add name in the registry and publish it to every stream this
 * process records into.  Under pt_ctl_lock. */
static trace_event_id_t registry_open(const char *name)
{
	for (uint32_t i = 0; i < reg_count; i++)
		if (strcmp(reg_name[FIRST_USER_ID + i], name) == 0)
			return FIRST_USER_ID + i;
	if (reg_count >= TRACE_USER_EVENT_MAX)
		return POSIX_TRACE_UNNAMED_USEREVENT;
	trace_event_id_t id = FIRST_USER_ID + reg_count++;
	strcpy(reg_name[id], name);
	uint32_t att = atomic_load(&pt_proc.att);
	for (unsigned s = 0; s < PT_SLOTS; s++)
		if (att >> s & 1)
			name_set(pt_proc.slot[s].names, id, name);
	return id;
}

PT_API int posix_trace_eventid_open(const char *restrict name, trace_event_id_t *restrict id)
{
	int rc = check_name(name);

	if (rc)
		return rc;
	if (!id)
		return EINVAL;
	pthread_mutex_lock(&pt_ctl_lock);
	*id = registry_open(name);
	pthread_mutex_unlock(&pt_ctl_lock);
	return 0;
}

/* The registry publishes each name to every stream of this process,
 * this one included. */
PT_API int posix_trace_trid_eventid_open(trace_id_t trid, const char *restrict name,
                                         trace_event_id_t *restrict id)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	pt_trid_unlock(t);
	return posix_trace_eventid_open(name, id);
}

PT_API int posix_trace_eventid_equal(trace_id_t trid, trace_event_id_t a, trace_event_id_t b)
{
	(void)trid;
	return a == b;
}

PT_API int posix_trace_eventid_get_name(trace_id_t trid, trace_event_id_t id, char *name)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	rc = name ? pt_name_get(t->view.names, id, name) : EINVAL;
	pt_trid_unlock(t);
	return rc;
}

PT_API int posix_trace_eventtypelist_getnext_id(trace_id_t trid, trace_event_id_t *restrict id,
                                                int *restrict unavailable)
{
	struct pt_trid *t;
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	if (!id || !unavailable) {
		pt_trid_unlock(t);
		return EINVAL;
	}
	*unavailable = 1;
	while (t->typelist_pos < PT_NIDS) {
		uint32_t i = t->typelist_pos++;
		if (atomic_load_explicit(&t->view.names[i].valid, memory_order_acquire)) {
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
	int rc = pt_trid_lock(trid, &t);

	if (rc)
		return rc;
	t->typelist_pos = 0;
	pt_trid_unlock(t);
	return 0;
}
