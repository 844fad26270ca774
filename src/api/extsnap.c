/*
 * extsnap.c -- the flight recorder's looks at a LOOP stream (ext.h,
 * pt_ext_follow_*, pt_ext_snapshot, pt_ext_stream_use), each under the
 * trace id's lock, on control/snapshot.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "api.h"

struct pt_ext_follow {
	trace_id_t trid;
	struct pt_snap_follow *f;
	pt_ext_follow_fn fn;
	void *arg;
};

/* (the two event structures are one: ext.h's is the command's name) */
_Static_assert(sizeof(struct pt_ext_fev) == sizeof(struct pt_snap_ev) &&
               offsetof(struct pt_ext_fev, data) == offsetof(struct pt_snap_ev, data) &&
               offsetof(struct pt_ext_fev, id) == offsetof(struct pt_snap_ev, id),
               "pt_ext_fev and pt_snap_ev differ");

int pt_ext_follow_open(trace_id_t trid, const uint64_t *want, struct pt_ext_follow **out)
{
	struct pt_trid *t;
	int rc;

	if (!want || !out)
		return EINVAL;
	struct pt_ext_follow *x = calloc(1, sizeof *x);
	if (!x)
		return ENOMEM;
	if ((rc = pt_trid_lock(trid, &t)) != 0) {
		free(x);
		return rc;
	}
	x->trid = trid;
	x->f = pt_snap_follow_new(t, want);
	pt_trid_unlock(t);
	if (!x->f) {
		free(x);
		return ENOMEM;
	}
	*out = x;
	return 0;
}

static int relay(void *arg, const struct pt_snap_ev *e)
{
	struct pt_ext_follow *x = arg;
	return x->fn(x->arg, (const struct pt_ext_fev *)(const void *)e);
}

int pt_ext_follow_poll(struct pt_ext_follow *x, pt_ext_follow_fn fn, void *arg)
{
	struct pt_trid *t;
	int rc;

	if (!x || !fn)
		return -EINVAL;
	if ((rc = pt_trid_lock(x->trid, &t)) != 0)
		return -rc;
	x->fn = fn, x->arg = arg;
	rc = pt_snap_follow_poll(t, x->f, relay, x);
	pt_trid_unlock(t);
	return rc;
}

uint64_t pt_ext_follow_missed(const struct pt_ext_follow *x)
{
	return x ? pt_snap_follow_missed(x->f) : 0;
}

void pt_ext_follow_close(struct pt_ext_follow *x)
{
	if (!x)
		return;
	pt_snap_follow_free(x->f);
	free(x);
}

int pt_ext_snapshot(trace_id_t trid, int fd, uint64_t from_ns, uint64_t to_ns,
                    struct pt_ext_snap *out)
{
	return pt_ext_snapshot_trig(trid, fd, from_ns, to_ns, NULL, out);
}

int pt_ext_snapshot_trig(trace_id_t trid, int fd, uint64_t from_ns, uint64_t to_ns,
                         const struct pt_ext_fev *trig, struct pt_ext_snap *out)
{
	struct pt_trid *t;
	struct pt_snap_stats st;
	int rc;

	if (!out || fd < 0 || from_ns > to_ns)
		return EINVAL;
	if ((rc = pt_trid_lock(trid, &t)) != 0)
		return rc;
	rc = pt_snap_write(t, fd, from_ns, to_ns, (const struct pt_snap_ev *)(const void *)trig, &st);
	pt_trid_unlock(t);
	*out = (struct pt_ext_snap){ st.events, st.chunks, st.dropped, st.dropped_events, st.gaps,
	                             st.first, st.last, st.bytes, st.lapped,
	                             st.trig_kept, st.trig_alone };
	return rc;
}

int pt_ext_snapshot_copy(trace_id_t trid, uint64_t from_ns, uint64_t to_ns,
                         const struct pt_ext_fev *trig, struct pt_ext_snapcopy **out)
{
	struct pt_trid *t;
	struct pt_snap_copy *c = NULL;
	int rc;

	if (!out || from_ns > to_ns)
		return EINVAL;
	*out = NULL;
	if ((rc = pt_trid_lock(trid, &t)) != 0)
		return rc;
	rc = pt_snap_copy(t, from_ns, to_ns, (const struct pt_snap_ev *)(const void *)trig, &c);
	pt_trid_unlock(t);
	*out = (struct pt_ext_snapcopy *)(void *)c;
	return rc;
}

int pt_ext_snapshot_write(struct pt_ext_snapcopy *c, int fd, struct pt_ext_snap *out)
{
	struct pt_snap_stats st;

	if (!c || !out || fd < 0)
		return EINVAL;
	int rc = pt_snap_emit((struct pt_snap_copy *)(void *)c, fd, &st);
	*out = (struct pt_ext_snap){ st.events, st.chunks, st.dropped, st.dropped_events, st.gaps,
	                             st.first, st.last, st.bytes, st.lapped,
	                             st.trig_kept, st.trig_alone };
	return rc;
}

void pt_ext_snapshot_free(struct pt_ext_snapcopy *c)
{
	pt_snap_copy_free((struct pt_snap_copy *)(void *)c);
}

int pt_ext_snapshot_prepare(trace_id_t trid)
{
	struct pt_trid *t;
	int rc;

	if ((rc = pt_trid_lock(trid, &t)) != 0)
		return rc;
	/* (a copy's buffer holds every chunk; the stream's size of them is
	 * what a window can take but for the chunks still open) */
	size_t cap = (size_t)t->s.view.nchunks * t->s.view.chunk_size;
	size_t warm = (size_t)t->s.view.sealed_max * t->s.view.chunk_size;
	pt_trid_unlock(t);
	pt_snap_prepare(cap, warm);
	return 0;
}

int pt_ext_stream_use(trace_id_t trid, unsigned *permille)
{
	struct pt_trid *t;
	int rc;

	if (!permille)
		return EINVAL;
	if ((rc = pt_trid_lock(trid, &t)) != 0)
		return rc;
	*permille = pt_snap_use(t);
	pt_trid_unlock(t);
	return 0;
}
