/*
 * sysevent.c -- a trace id's own writer of system events: START, STOP,
 * FILTER (api/control.c, api/setfilter.c) and the flusher's (flusher.c),
 * into the stream it controls.
 */
#include "flush.h"

/* Written under the trace id's lock.  The chunk stays open between the
 * id's system events: a LOOP stream steals only sealed chunks, so the
 * controller's own events (START with its filter, the flushes' pairs,
 * STOP) are never overwritten by the traced threads' events, and a loss
 * count is the count of those threads' events (a flight recorder read
 * at the end used to count its START lost: one more than its threads
 * lost; issue 46).  Only a chunk filled with system events is sealed, and
 * then taken in its turn like any other.
 *
 * A chunk names the thread that took it, which a reader reports as the
 * event's thread; so each thread that records system events (the control
 * calls' caller, the flusher) has a writer of its own, two in all: a
 * third thread takes over the one written to least recently, sealing its
 * chunk. */
static struct pt_tw *writer_of(struct pt_stream *t)
{
	pthread_t me = pthread_self();

	for (unsigned k = 0; k < 2; k++)
		if (t->sys_tw[k].key && pthread_equal(t->sys_thr[k], me))
			return t->sys_last = k, &t->sys_tw[k];
	unsigned k = t->sys_tw[0].key == 0 ? 0 : t->sys_tw[1].key == 0 ? 1 : t->sys_last ^ 1;
	if (t->sys_tw[k].key)
		pt_pool_seal(&t->view, &t->sys_tw[k], atomic_load(&t->hdr->state));
	t->sys_thr[k] = me;
	t->sys_last = k;
	return &t->sys_tw[k];
}

int pt_record_system(struct pt_stream *t, trace_event_id_t id, const void *data, size_t len,
                     void *addr, int wait)
{
	return pt_write_event(&t->view, writer_of(t), PT_LEVELS, id, data, len, (uintptr_t)addr,
	                      wait);
}
