/*
 * sysevent.c -- a trace id's own writer of system events: START, STOP,
 * FILTER (api/control.c, api/filter.c) and the flusher's (flusher.c),
 * into the stream it controls.
 */
#include "trid.h"

/* Written under the trace id's lock, into a chunk sealed at once, so that
 * a LOOP stream overwrites it in its turn like any other. */
int pt_record_system(struct pt_trid *t, trace_event_id_t id, const void *data, size_t len,
                     void *addr, int wait)
{
	int rc = pt_write_event(&t->view, &t->sys_tw, PT_LEVELS, id, data, len, (uintptr_t)addr,
	                        wait);
	if (t->sys_tw.key)
		pt_pool_seal(&t->view, &t->sys_tw, atomic_load(&t->hdr->state));
	return rc;
}
