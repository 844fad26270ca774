/*
 * nametable.c -- the tables of event names kept in shared memory: the traced
 * process's registry (in its control segment) and each stream's own table
 * (in the stream's segment).  Entries are claimed with a compare-and-swap
 * and published with a release store, so any process may add a name and a
 * reader of a scribbled-on table sees only whole names.  The POSIX
 * functions that give out ids are in api/eventid.c.
 */
#include <string.h>
#include "shm.h"

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
	[PT_SYS_NOLOSS_WAIT] = "posixtrace_noloss_wait",
	[PT_SYS_TRIGGER] = "posixtrace_trigger",
	[POSIX_TRACE_UNNAMED_USEREVENT] = "posix_trace_unnamed_userevent",
};

/* The system event types' names (docs/implementation-defined.md): the one
 * table of them, which every stream's table starts with and which
 * posixtrace_eventid_system() and posixtrace_eventid_system_name() look
 * up (api/eventid.c). */
const char *pt_sys_name(trace_event_id_t id)
{
	return id < sizeof sys_names / sizeof sys_names[0] ? sys_names[id] : NULL;
}

int pt_sys_id(const char *name, trace_event_id_t *id)
{
	for (size_t i = 0; i < sizeof sys_names / sizeof sys_names[0]; i++)
		if (sys_names[i] && strcmp(sys_names[i], name) == 0) {
			*id = (trace_event_id_t)i;
			return 0;
		}
	return EINVAL;
}

#define NAME_FREE  0u
#define NAME_VALID 1u
#define NAME_CLAIM 2u /* being written */

static void name_set(struct pt_name *names, trace_event_id_t id, const char *name)
{
	uint32_t v = NAME_FREE;
	if (!atomic_compare_exchange_strong(&names[id].valid, &v, NAME_CLAIM))
		return;
	strncpy(names[id].name, name, PT_NAME_SZ - 1);
	names[id].name[PT_NAME_SZ - 1] = 0;
	atomic_store_explicit(&names[id].valid, NAME_VALID, memory_order_release);
}

void pt_names_init(struct pt_name *names)
{
	for (size_t i = 0; i < sizeof sys_names / sizeof sys_names[0]; i++)
		if (sys_names[i])
			name_set(names, (trace_event_id_t)i, sys_names[i]);
}

/* Read a name from a (possibly scribbled-on) table. */
int pt_name_get(const struct pt_name *names, trace_event_id_t id, char *out)
{
	if (id >= PT_NIDS ||
	    atomic_load_explicit(&names[id].valid, memory_order_acquire) != NAME_VALID)
		return EINVAL;
	memcpy(out, names[id].name, PT_NAME_SZ);
	out[PT_NAME_SZ - 1] = 0;
	return 0;
}

/* Copy the user names of src into the free entries of dst. */
void pt_names_copy(struct pt_name *dst, const struct pt_name *src)
{
	char n[PT_NAME_SZ];

	for (trace_event_id_t i = FIRST_USER_ID; i < PT_NIDS; i++)
		if (pt_name_get(src, i, n) == 0 && n[0])
			name_set(dst, i, n);
}

int pt_name_check(const char *name)
{
	if (!name || !name[0])
		return EINVAL;
	if (strnlen(name, PT_NAME_SZ) >= PT_NAME_SZ)
		return ENAMETOOLONG;
	return 0;
}

/* Entry i of one table for name: 0 claimed now, 1 already name, -1 taken. */
static int claim(struct pt_name *e, const char *name)
{
	for (int spins = 0;; spins++) {
		uint32_t v = atomic_load_explicit(&e->valid, memory_order_acquire);
		if (v == NAME_VALID)
			return strncmp(e->name, name, PT_NAME_SZ) == 0 ? 1 : -1;
		if (v == NAME_FREE && atomic_compare_exchange_strong(&e->valid, &v, NAME_CLAIM)) {
			strcpy(e->name, name);
			atomic_store_explicit(&e->valid, NAME_VALID, memory_order_release);
			return 0;
		}
		if (v != NAME_FREE && spins > 10000)
			return -1; /* left half-written by a process that died */
	}
}

/* Give name id i in every table at once, or in none. */
static int claim_all(struct pt_name **tb, unsigned n, trace_event_id_t i, const char *name)
{
	unsigned k;
	int got[PT_SLOTS + 2];

	for (k = 0; k < n; k++)
		if ((got[k] = claim(&tb[k][i], name)) < 0)
			break;
	if (k == n)
		return 0;
	while (k-- > 0) /* undo: another process uses i for another name */
		if (got[k] == 0)
			atomic_store(&tb[k][i].valid, NAME_FREE);
	return -1;
}

static int find(const struct pt_name *t, const char *name, trace_event_id_t *id)
{
	for (trace_event_id_t i = FIRST_USER_ID; i < PT_NIDS; i++)
		if (atomic_load_explicit(&t[i].valid, memory_order_acquire) == NAME_VALID &&
		    strncmp(t[i].name, name, PT_NAME_SZ) == 0) {
			*id = i;
			return 1;
		}
	return 0;
}

/* The id of name.  tables[0] is the traced process's registry, the others
 * the tables of streams it is traced into: an id is given in all of them
 * at once, so every process traced into one stream (inheritance) and every
 * controller agree.  A name a stream already knows keeps its id. */
int pt_names_open(struct pt_name **tb, unsigned n, const char *name, trace_event_id_t *id)
{
	trace_event_id_t i;
	int rc = pt_name_check(name);

	if (rc)
		return rc;
	if (find(tb[0], name, &i)) {
		for (unsigned k = 1; k < n; k++)
			claim(&tb[k][i], name);
		*id = i;
		return 0;
	}
	for (unsigned k = 1; k < n; k++)
		if (find(tb[k], name, &i) && claim_all(tb, n, i, name) == 0) {
			*id = i;
			return 0;
		}
	for (i = FIRST_USER_ID; i < FIRST_USER_ID + TRACE_USER_EVENT_MAX; i++)
		if (claim_all(tb, n, i, name) == 0) {
			*id = i;
			return 0;
		}
	*id = POSIX_TRACE_UNNAMED_USEREVENT;
	return 0;
}
