/*
 * ext.c -- what ext.h gives the posixtrace command beyond POSIX, for a
 * stream or a log: loss counts, the map of loaded code, thread identities
 * and payload descriptions (the last two in the map's area).
 */
#include <string.h>
#include "api.h"

int pt_ext_losses(trace_id_t trid, struct pt_ext_losses *out)
{
	struct pt_trid *t;
	int rc;

	if (!out)
		return EINVAL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	memset(out, 0, sizeof *out);
	if (t->kind == PT_KIND_LOG) {
		const struct pt_logr *r = t->lr;
		out->resume_ok = r->last_lost_ok;
		out->at_resume = r->last_lost;
		out->total_ok = r->has_stream_lost;
		out->total = r->stream_lost;
		out->log_overwritten = r->lost;
		out->log_dropped = r->dropped;
	} else {
		const struct pt_reader *rd = &t->rd;
		out->resume_ok = rd->pairs > 0;
		out->at_resume = rd->lost_at_resume;
		out->total_ok = 1;
		out->total = atomic_load_explicit(&t->hdr->lost, memory_order_relaxed);
		if (out->total < rd->lost_at_resume) /* scribbled on by the traced process */
			out->total = rd->lost_at_resume;
	}
	pt_trid_unlock(t);
	return 0;
}

/* The entries of the map's area a stream or a log holds (the map of
 * loaded code, thread identities, payload descriptions; reader/objread.c
 * takes a stream's), under t's lock. */
static void area(struct pt_trid *t, const struct pt_ext_obj **src, size_t *have)
{
	if (t->kind == PT_KIND_LOG) {
		*src = t->lr->objs;
		*have = t->lr->nobjs;
	} else {
		pt_objs_collect(t);
		*src = t->rd.objs;
		*have = t->rd.nobjs;
	}
}

/* The entries of the area whose kind `want` accepts, from the from-th of
 * them on, up to cap, each made into out's element by `put`. */
static int entries(trace_id_t trid, int (*want)(unsigned kind), size_t from, void *out,
                   size_t elem, size_t cap, size_t *n,
                   void (*put)(void *dst, const struct pt_ext_obj *o))
{
	struct pt_trid *t;
	const struct pt_ext_obj *src;
	size_t have, k = 0;
	int rc;

	if (!n || (cap && !out))
		return EINVAL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	area(t, &src, &have);
	*n = 0;
	for (size_t i = 0; i < have && *n < cap; i++)
		if (want(src[i].kind) && k++ >= from)
			put((char *)out + elem * (*n)++, &src[i]);
	pt_trid_unlock(t);
	return 0;
}

static int is_object(unsigned kind)
{
	return kind >= PT_EXT_OBJ_BEGIN && kind <= PT_EXT_OBJ_LOST;
}

static void put_object(void *dst, const struct pt_ext_obj *o)
{
	memcpy(dst, o, sizeof *o);
}

/* The map of loaded code, entries from `from` on (counting objects only). */
int pt_ext_objects(trace_id_t trid, size_t from, struct pt_ext_obj *out, size_t cap, size_t *n)
{
	return entries(trid, is_object, from, out, sizeof *out, cap, n, put_object);
}

static int is_thread(unsigned kind)
{
	return kind == PT_EXT_OBJ_THREAD;
}

static void put_thread(void *dst, const struct pt_ext_obj *o)
{
	struct pt_ext_thread *d = dst;
	memset(d, 0, sizeof *d);
	d->ts = o->ts;
	d->thread = o->base;
	d->pid = o->pid;
	d->tid = (int32_t)o->lo;
	memcpy(d->name, o->path, strnlen(o->path, sizeof d->name - 1)); /* (checked: shorter) */
}

int pt_ext_threads(trace_id_t trid, size_t from, struct pt_ext_thread *out, size_t cap,
                   size_t *n)
{
	return entries(trid, is_thread, from, out, sizeof *out, cap, n, put_thread);
}

static int is_type(unsigned kind)
{
	return kind == PT_EXT_OBJ_TYPE;
}

static void put_type(void *dst, const struct pt_ext_obj *o)
{
	struct pt_ext_type *d = dst;
	memset(d, 0, sizeof *d);
	d->ts = o->ts;
	d->pid = o->pid;
	d->id = (uint32_t)o->lo;
	memcpy(d->desc, o->path, strnlen(o->path, sizeof d->desc - 1));
}

int pt_ext_types(trace_id_t trid, size_t from, struct pt_ext_type *out, size_t cap, size_t *n)
{
	return entries(trid, is_type, from, out, sizeof *out, cap, n, put_type);
}
