/*
 * eventset.c -- trace_event_set_t: a plain 1024-bit set of event ids.
 */
#include <string.h>
#include "api.h"

/* System events that are not tied to a process (POSIX_TRACE_WOPID_EVENTS). */
static const trace_event_id_t wopid[] = {
	POSIX_TRACE_ERROR, POSIX_TRACE_OVERFLOW, POSIX_TRACE_RESUME,
	POSIX_TRACE_FLUSH_START, POSIX_TRACE_FLUSH_STOP,
};

PT_API int posix_trace_eventset_empty(trace_event_set_t *set)
{
	if (!set)
		return EINVAL;
	memset(set, 0, sizeof *set);
	return 0;
}

PT_API int posix_trace_eventset_fill(trace_event_set_t *set, int what)
{
	if (!set)
		return EINVAL;
	switch (what) {
	case POSIX_TRACE_WOPID_EVENTS:
		memset(set, 0, sizeof *set);
		for (size_t i = 0; i < sizeof wopid / sizeof wopid[0]; i++)
			set->__bits[0] |= 1ull << wopid[i];
		return 0;
	case POSIX_TRACE_SYSTEM_EVENTS:
		memset(set, 0, sizeof *set);
		set->__bits[0] = (1ull << PT_SYS_IDS) - 1;
		return 0;
	case POSIX_TRACE_ALL_EVENTS:
		memset(set, 0xff, sizeof *set);
		return 0;
	}
	return EINVAL;
}

PT_API int posix_trace_eventset_add(trace_event_id_t id, trace_event_set_t *set)
{
	if (!set || id >= PT_NIDS)
		return EINVAL;
	set->__bits[id / 64] |= 1ull << (id % 64);
	return 0;
}

PT_API int posix_trace_eventset_del(trace_event_id_t id, trace_event_set_t *set)
{
	if (!set || id >= PT_NIDS)
		return EINVAL;
	set->__bits[id / 64] &= ~(1ull << (id % 64));
	return 0;
}

PT_API int posix_trace_eventset_ismember(trace_event_id_t id,
                                         const trace_event_set_t *restrict set,
                                         int *restrict ismember)
{
	if (!set || !ismember || id >= PT_NIDS)
		return EINVAL;
	*ismember = pt_set_has(set, id);
	return 0;
}
