/*
 * livestream.c -- a stream without a log, read as it is written (`live` and
 * `top`): made for a process with posix_trace_create(), drained with
 * posix_trace_timedgetnext_event() and posix_trace_trygetnext_event(),
 * each event added to a trace's tables (tlog_add) with its type's name,
 * thread identities and payload descriptions asked of the stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "read.h"

int live_stream(pid_t pid, const char *name, int policy, size_t size, int inherit,
                const char *exclude, trace_id_t *trid)
{
	trace_attr_t attr;
	int rc;

	posix_trace_attr_init(&attr);
	posix_trace_attr_setname(&attr, name);
	posix_trace_attr_setinherited(&attr, inherit ? POSIX_TRACE_INHERITED
	                                             : POSIX_TRACE_CLOSE_FOR_CHILD);
	posix_trace_attr_setstreamfullpolicy(&attr, policy);
	if (size && (rc = posix_trace_attr_setstreamsize(&attr, size)) != 0) {
		posix_trace_attr_destroy(&attr);
		err_msg("--size: %s", strerror(rc));
		return 1;
	}
	rc = posix_trace_create(pid, &attr, trid);
	posix_trace_attr_destroy(&attr);
	if (rc) {
		err_msg("cannot trace process %d: %s%s", (int)pid, strerror(rc),
		        rc == EPERM ? " (it belongs to another user or is not dumpable; "
		                      "run as its user or as root)" :
		        rc == ESRCH ? " (no such process)" : "");
		return 1;
	}
	return exclude ? exclude_events(*trid, exclude) : 0;
}

/* The thread identities (TID, name) and payload descriptions the stream
 * carries, read again when a thread or an event type appears, and at most
 * once a second else (renames): bounded by threads and types, whatever
 * the events.  (One stream a process: live or top.) */
static void refresh_identities(struct tlog *l, trace_id_t trid, const struct tev *e, int new_type)
{
	static uint64_t at;
	uint64_t now = now_mono_ns();
	if (!new_type && l->th[e->thread].count > 1 && now - at < 1000000000u)
		return;
	struct thrmap *m = thrmap_load(trid);
	if (m) {
		thrmap_free(l->thrs);
		l->thrs = m;
	}
	struct typemap *t = typemap_load(trid);
	if (t) {
		typemap_free(l->types);
		l->types = t;
	}
	at = now;
}

int live_add(struct tlog *l, trace_id_t trid, const struct posix_trace_event_info *ev,
             const void *data, size_t len, struct tev *e)
{
	unsigned id = ev->posix_event_id < PT_NIDS ? ev->posix_event_id : 0;
	char name[TRACE_EVENT_NAME_MAX + 1];

	int new_type = !l->names[id];
	if (new_type && posix_trace_eventid_get_name(trid, id, name) == 0)
		l->names[id] = strdup(name);
	int rc = tlog_add(l, trid, ev, data, len, e);
	if (rc == 0)
		refresh_identities(l, trid, e, new_type);
	return rc;
}

/* A blocking read that finds nothing asks the stream's writers to wake
 * it: the traced program's next event then makes a futex call, and on a
 * busy machine the reader runs at once in its place.  A live reader
 * draining a busy stream round after round asked each round: about a
 * thousand wakes a second in a program recording 180 k events/s, its
 * p99.9 from 31 ns to 13 us (issue 54).  So after a round that read
 * events the next one first looks again LIVE_LOOK_MS later without
 * asking; only a look that finds nothing makes the one after it block
 * (a display is not slower for it: `top` redraws each second, `live`
 * prints lines). */
#define LIVE_LOOK_MS 5
static int busy; /* the last round read events */

long live_drain(trace_id_t trid, int wait_ms, live_fn fn, void *arg)
{
	static unsigned char buf[TRACE_DATA_MAX + 1];
	long n = 0;

	for (;;) {
		struct posix_trace_event_info ev;
		size_t len = 0;
		int none = 0, rc;
		if (wait_ms > 0 && n == 0 && busy) {
			struct timespec d = { 0, (wait_ms < LIVE_LOOK_MS ? wait_ms : LIVE_LOOK_MS) * 1000000L };
			nanosleep(&d, NULL);
			rc = posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &none);
			if (rc == 0 && none) {
				busy = 0;
				return 0;
			}
		} else if (wait_ms > 0 && n == 0) {
			uint64_t d = now_realtime_ns() + (uint64_t)wait_ms * 1000000u;
			struct timespec ts = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
			rc = posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len, &none, &ts);
			if (rc == ETIMEDOUT)
				return 0;
		} else {
			rc = posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &none);
		}
		if (rc == EINTR)
			continue;
		if (rc) {
			err_msg("reading events: %s", strerror(rc));
			return -1;
		}
		if (none) {
			busy = n > 0;
			return n;
		}
		if (fn(arg, trid, &ev, buf, len))
			return -1;
		if (++n >= 4096) {
			busy = 1;
			return n;
		}
	}
}
