/*
 * ext.c -- what ext.h gives the posixtrace command beyond POSIX, for a
 * stream or a log: loss counts, the map of loaded code, thread identities
 * and payload descriptions (the last two in the map's area).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "api.h"

/* The system events' ids ext.h gives the command are shm/layout.h's */
_Static_assert(PT_SYS_NOLOSS_WAIT == PT_EXT_NOLOSS_WAIT, "the no-loss wait's id, said twice");
_Static_assert(PT_SYS_TRIGGER == PT_EXT_TRIGGER, "the trigger's id, said twice");

/* The most events a stream created at a could have lost by now: one a
 * nanosecond on every CPU (no writer records faster), over at least a
 * second (the realtime clock may have been set back).  A creation time
 * that cannot be (before 1970, in the future, nanoseconds out of range:
 * a log's header says what its writer wrote) counts as that second. */
static uint64_t lost_cap(const struct pt_attr_img *a)
{
	struct timespec now;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t el = 1000000000, s, ns;

	clock_gettime(CLOCK_REALTIME, &now);
	if (a->create_sec >= 0 && a->create_sec <= (int64_t)now.tv_sec && a->create_nsec >= 0 &&
	    a->create_nsec < 1000000000) {
		/* both below now (< 2^63 ns since 1970 until the year 2262) */
		s = (uint64_t)now.tv_sec - (uint64_t)a->create_sec;
		ns = (uint64_t)now.tv_nsec;
		if (!__builtin_mul_overflow(s, 1000000000u, &s) &&
		    !__builtin_add_overflow(s, ns, &s) && s >= (uint64_t)a->create_nsec &&
		    s - (uint64_t)a->create_nsec > el)
			el = s - (uint64_t)a->create_nsec;
	}
	if (cpus < 1)
		cpus = 1;
	return el > UINT64_MAX / (uint64_t)cpus ? UINT64_MAX : el * (uint64_t)cpus;
}

static void clamp(uint64_t *v, uint64_t cap, int *implausible)
{
	if (*v > cap) {
		*v = cap;
		*implausible = 1;
	}
}

int pt_ext_losses(trace_id_t trid, struct pt_ext_losses *out)
{
	struct pt_trid *t;
	int rc;

	if (!out)
		return EINVAL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	memset(out, 0, sizeof *out);
	if (t->s.kind == PT_KIND_LOG) {
		const struct pt_logr *r = t->lr;
		out->resume_ok = r->last_lost_ok;
		out->at_resume = r->last_lost;
		out->total_ok = r->has_stream_lost;
		out->total = r->stream_lost;
		out->log_overwritten = r->lost;
		out->log_dropped = r->dropped;
		out->wrap_at_resume = r->wrap_told;
	} else {
		const struct pt_reader *rd = &t->s.rd;
		out->resume_ok = rd->pairs > 0;
		out->at_resume = rd->lost_at_resume;
		out->total_ok = 1;
		out->total = pt_read_lost(&t->s); /* (since the last clear) */
		out->late = rd->late;
	}
	uint64_t cap = lost_cap(&t->s.attr);
	clamp(&out->at_resume, cap, &out->implausible);
	clamp(&out->total, cap, &out->implausible);
	pt_trid_unlock(t);
	return 0;
}

/* The entries of the map's area a stream or a log holds (the map of
 * loaded code, thread identities, payload descriptions; reader/objread.c
 * takes a stream's), under t's lock; *retired: a stream's entries of
 * each kind retired (processes gone, written to its log), NULL if none. */
static void area(struct pt_trid *t, const struct pt_ext_obj **src,
                 const struct pt_objstore **st, size_t *have, const size_t **retired)
{
	*retired = NULL;
	*src = NULL, *st = NULL;
	if (t->s.kind == PT_KIND_LOG) { /* (a log's, kept in the room they need) */
		*st = &t->lr->objs;
		*have = t->lr->objs.n;
	} else {
		pt_objs_collect(&t->s);
		*src = t->s.rd.objs;
		*have = t->s.rd.nobjs;
		*retired = t->s.rd.obj_retired;
	}
}

/* The classes of entries a caller asks for (their own indices). */
enum { C_OBJECT, C_THREAD, C_PROC, C_TYPE };

/* The entries of the area whose kind `want` accepts, from the from-th of
 * them on, up to cap, each made into out's element by `put`. */
static int entries(trace_id_t trid, int (*want)(unsigned kind), unsigned cls, size_t from,
                   void *out, size_t elem, size_t cap, size_t *n,
                   void (*put)(void *dst, const struct pt_ext_obj *o))
{
	struct pt_trid *t;
	const struct pt_ext_obj *src;
	const struct pt_objstore *st;
	size_t have, k = 0;
	int rc;

	if (!n || (cap && !out))
		return EINVAL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	const size_t *retired;
	area(t, &src, &st, &have, &retired);
	*n = 0;
	/* (indices count retired entries too: asked for one of those, the
	 * first kept one comes) */
	for (unsigned kind = 0; retired && kind < 16; kind++)
		if (want(kind))
			k += retired[kind];
	if (from < k)
		from = k;
	size_t i = 0;
	/* (a log's entries only ever come after those it has: its cursor
	 * too, in the same fields, which are a log's to use; without it a
	 * caller taking 30 000 processes' entries a few at a time made each
	 * look start again from the first) */
	int cursor = retired || t->s.kind == PT_KIND_LOG;
	if (cursor && t->s.rd.obj_cur_k[cls] >= k && from >= t->s.rd.obj_cur_k[cls] &&
	    t->s.rd.obj_cur_i[cls] <= have) {
		i = t->s.rd.obj_cur_i[cls]; /* (on from where the last look stopped) */
		k = t->s.rd.obj_cur_k[cls];
	}
	for (; i < have && *n < cap; i++) {
		if (!want(src ? src[i].kind : pt_objstore_kind(st, i)) || k++ < from)
			continue;
		struct pt_ext_obj o;
		if (!src)
			pt_objstore_get(st, i, &o);
		put((char *)out + elem * (*n)++, src ? &src[i] : &o);
	}
	if (cursor) {
		t->s.rd.obj_cur_i[cls] = i;
		t->s.rd.obj_cur_k[cls] = k;
	}
	pt_trid_unlock(t);
	return 0;
}

static int is_object(unsigned kind)
{
	return (kind >= PT_EXT_OBJ_BEGIN && kind <= PT_EXT_OBJ_LOST) || kind == PT_EXT_OBJ_FORK;
}

static void put_object(void *dst, const struct pt_ext_obj *o)
{
	memcpy(dst, o, sizeof *o);
}

/* The map of loaded code, entries from `from` on (counting objects only). */
int pt_ext_objects(trace_id_t trid, size_t from, struct pt_ext_obj *out, size_t cap, size_t *n)
{
	return entries(trid, is_object, C_OBJECT, from, out, sizeof *out, cap, n, put_object);
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
	return entries(trid, is_thread, C_THREAD, from, out, sizeof *out, cap, n, put_thread);
}

static int is_proc(unsigned kind)
{
	return kind == PT_EXT_OBJ_PROC;
}

static void put_proc(void *dst, const struct pt_ext_obj *o)
{
	struct pt_ext_proc *d = dst;
	memset(d, 0, sizeof *d);
	d->ts = o->ts;
	d->pid = o->pid;
	d->ppid = (int32_t)o->lo;
	d->cut = (o->flags & PT_EXT_OBJ_TRUNC) != 0;
	d->cont = (o->flags & PT_EXT_OBJ_CONT) != 0;
	memcpy(d->cmdline, o->path, strnlen(o->path, sizeof d->cmdline - 1));
}

int pt_ext_procs(trace_id_t trid, size_t from, struct pt_ext_proc *out, size_t cap, size_t *n)
{
	return entries(trid, is_proc, C_PROC, from, out, sizeof *out, cap, n, put_proc);
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
	return entries(trid, is_type, C_TYPE, from, out, sizeof *out, cap, n, put_type);
}

int pt_ext_seek(trace_id_t trid, uint64_t ts_ns, uint64_t *lost_before)
{
	struct pt_trid *t;
	int rc;

	if (!lost_before)
		return EINVAL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	rc = t->s.kind == PT_KIND_LOG ? pt_logr_seek(t->lr, ts_ns, lost_before) : EINVAL;
	pt_trid_unlock(t);
	return rc;
}

int pt_ext_next_batch(trace_id_t trid, struct pt_ext_batch *b)
{
	struct pt_trid *t;
	int rc;

	if (!b)
		return EINVAL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	rc = t->s.kind == PT_KIND_LOG ? pt_logr_next_batch(t->lr, b) : EINVAL;
	pt_trid_unlock(t);
	return rc;
}

int pt_ext_next_many(trace_id_t trid, struct pt_ext_many *m)
{
	struct pt_trid *t;
	size_t used = 0;
	int rc;

	if (!m)
		return EINVAL;
	m->n = 0;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	if (t->s.kind != PT_KIND_LOG) {
		pt_trid_unlock(t);
		return EINVAL;
	}
	/* each event with the room getnext's caller gave it (the most a
	 * payload can be), from where the one before ended */
	while (m->n < PT_EXT_MANY && used <= PT_EXT_MANY_SOFT) {
		struct posix_trace_event_info *ev = &m->ev[m->n];
		size_t len = 0;
		int none = 0;
		if ((rc = pt_logr_next(t->lr, ev, m->data + used, TRACE_DATA_MAX + 1u, &len, &none)) ||
		    none)
			break;
		m->off[m->n] = (uint32_t)used;
		m->len[m->n] = (uint32_t)len;
		m->n++;
		used += (len + 15u) & ~(size_t)15u;
		if (ev->posix_event_id == POSIX_TRACE_RESUME)
			break;
	}
	pt_trid_unlock(t);
	return m->n ? 0 : rc; /* (pt_logr_next fails only on its arguments) */
}

int pt_ext_seek_end(trace_id_t trid, uint64_t ts_ns)
{
	struct pt_trid *t;
	int rc;

	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	if (t->s.kind == PT_KIND_LOG)
		pt_logr_stop_after(t->lr, ts_ns);
	else
		rc = EINVAL;
	pt_trid_unlock(t);
	return rc;
}

/* The n writers wr into s (s->writers has room, s->count is filled): the
 * waits known if they add up to the waits counted. */
static void writers_out(struct pt_ext_summary *s, const struct pt_logw_sumw *wr, uint32_t n)
{
	uint64_t sum = 0;
	int over = 0;

	for (uint32_t i = 0; i < n; i++) {
		s->writers[i] = (struct pt_ext_sum_writer){ wr[i].pid, wr[i].thread, wr[i].count,
		                                            wr[i].first, wr[i].last, wr[i].waits.n,
		                                            wr[i].waits.ns, wr[i].waits.max };
		over |= __builtin_add_overflow(sum, wr[i].waits.n, &sum);
	}
	s->nwriters = n;
	s->waits_known = !over && sum == s->count[PT_SYS_NOLOSS_WAIT];
}

int pt_ext_log_census(trace_id_t trid, struct pt_ext_summary **out, uint64_t *damaged)
{
	struct pt_trid *t;
	const struct pt_logw_sum *c;
	struct pt_ext_summary *s;
	int rc;

	if (!out || !damaged)
		return EINVAL;
	*out = NULL;
	if ((rc = pt_trid_lock_any(trid, &t)) != 0)
		return rc;
	rc = t->s.kind != PT_KIND_LOG ? EINVAL : pt_logr_census(t->lr, &c, damaged);
	if (!rc && (!(s = calloc(1, sizeof *s)) ||
	            !(s->writers = calloc(c->nwr + 1, sizeof *s->writers)))) {
		if (s)
			free(s);
		rc = ENOMEM;
	}
	if (rc) {
		pt_trid_unlock(t);
		return rc;
	}
	const struct pt_logr *r = t->lr;
	s->status = r->status;
	s->losses.resume_ok = c->gaps > 0;
	s->losses.at_resume = c->last_lost;
	s->losses.total_ok = r->has_stream_lost;
	s->losses.total = r->stream_lost;
	s->losses.log_overwritten = r->lost;
	s->losses.log_dropped = r->dropped;
	uint64_t cap = lost_cap(&t->s.attr);
	clamp(&s->losses.at_resume, cap, &s->losses.implausible);
	clamp(&s->losses.total, cap, &s->losses.implausible);
	s->events = c->events;
	s->first = c->first;
	s->last = c->last;
	s->gaps = c->gaps;
	memcpy(s->count, c->count, sizeof s->count);
	memcpy(s->tfirst, c->tfirst, sizeof s->tfirst);
	memcpy(s->tlast, c->tlast, sizeof s->tlast);
	writers_out(s, c->wr, c->nwr);
	pt_trid_unlock(t);
	*out = s;
	return 0;
}

int pt_ext_log_summary(int fd, struct pt_ext_summary **out)
{
	struct pt_log_summary ls;
	struct pt_ext_summary *s;
	int rc;

	if (!out)
		return EINVAL;
	*out = NULL;
	if ((rc = pt_log_summary_read(fd, &ls)) != 0)
		return rc;
	if (!(s = calloc(1, sizeof *s)) || !(s->names = calloc(PT_NIDS, sizeof *s->names))) {
		free(s);
		pt_log_summary_free(&ls);
		return ENOMEM;
	}
	pt_attr_from_img(&ls.attr, &s->attr);
	s->status = ls.status;
	s->losses.resume_ok = ls.gaps > 0;
	s->losses.at_resume = ls.last_lost;
	s->losses.total_ok = 1;
	s->losses.total = ls.stream_lost;
	s->losses.log_overwritten = ls.lost;
	s->losses.log_dropped = ls.dropped;
	uint64_t cap = lost_cap(&ls.attr); /* (the traced process wrote these) */
	clamp(&s->losses.at_resume, cap, &s->losses.implausible);
	clamp(&s->losses.total, cap, &s->losses.implausible);
	s->events = ls.events;
	s->first = ls.first;
	s->last = ls.last;
	s->gaps = ls.gaps;
	memcpy(s->count, ls.count, sizeof s->count);
	memcpy(s->tfirst, ls.tfirst, sizeof s->tfirst);
	memcpy(s->tlast, ls.tlast, sizeof s->tlast);
	for (unsigned id = 0; id < PT_NIDS; id++)
		if (ls.known[id / 64] >> (id % 64) & 1)
			memcpy(s->names[id], ls.names[id], sizeof s->names[id]);
	s->writers = calloc(ls.nwr + 1, sizeof *s->writers);
	if (!s->writers) {
		pt_log_summary_free(&ls);
		pt_ext_summary_free(s);
		return ENOMEM;
	}
	writers_out(s, ls.wr, ls.nwr);
	/* the area's entries by kind, as pt_ext_objects(), pt_ext_threads()
	 * and pt_ext_types() give them */
	size_t nobj = 0, nthr = 0, ntyp = 0, npro = 0;
	for (size_t i = 0; i < ls.objs.n; i++) {
		unsigned kind = pt_objstore_kind(&ls.objs, i);
		nobj += is_object(kind);
		nthr += is_thread(kind);
		ntyp += is_type(kind);
		npro += is_proc(kind);
	}
	s->objs = calloc(nobj + 1, sizeof *s->objs);
	s->threads = calloc(nthr + 1, sizeof *s->threads);
	s->types = calloc(ntyp + 1, sizeof *s->types);
	s->procs = calloc(npro + 1, sizeof *s->procs);
	if (!s->objs || !s->threads || !s->types || !s->procs) {
		pt_log_summary_free(&ls);
		pt_ext_summary_free(s);
		return ENOMEM;
	}
	for (size_t i = 0; i < ls.objs.n; i++) {
		struct pt_ext_obj e;
		const struct pt_ext_obj *o = &e;
		pt_objstore_get(&ls.objs, i, &e);
		if (is_object(o->kind))
			put_object(&s->objs[s->nobjs++], o);
		else if (is_thread(o->kind))
			put_thread(&s->threads[s->nthreads++], o);
		else if (is_type(o->kind))
			put_type(&s->types[s->ntypes++], o);
		else if (is_proc(o->kind))
			put_proc(&s->procs[s->nprocs++], o);
	}
	pt_log_summary_free(&ls);
	*out = s;
	return 0;
}

void pt_ext_summary_free(struct pt_ext_summary *s)
{
	if (!s)
		return;
	free(s->names);
	free(s->writers);
	free(s->objs);
	free(s->threads);
	free(s->types);
	free(s->procs);
	free(s);
}
