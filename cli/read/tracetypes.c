/*
 * tracetypes.c -- the payload descriptions a trace carries
 * (posixtrace_eventid_describe(3); src/ext.h pt_ext_types()), read with
 * its names: per event type and process, the latest one given.  Bounded
 * by types and processes, never by events.  Decoding a payload by its
 * description is enrich/typed.c.
 */
#include <stdlib.h>
#include "read.h"

struct typemap {
	struct pt_ext_type *e;
	size_t n;
};

static int fetch_types(trace_id_t trid, size_t from, void *out, size_t cap, size_t *n)
{
	return pt_ext_types(trid, from, out, cap, n);
}

struct typemap *typemap_load(trace_id_t trid)
{
	size_t n;
	struct pt_ext_type *e = ext_fetch_all(trid, sizeof *e, fetch_types, &n);

	return typemap_from(e, n);
}

struct typemap *typemap_from(struct pt_ext_type *e, size_t n)
{
	struct typemap *m = calloc(1, sizeof *m);

	if (!m) {
		free(e);
		return NULL;
	}
	m->e = e;
	m->n = n;
	return m;
}

void typemap_free(struct typemap *m)
{
	if (!m)
		return;
	free(m->e);
	free(m);
}

size_t typemap_count(const struct typemap *m)
{
	return m ? m->n : 0;
}

const struct pt_ext_type *typemap_at(const struct typemap *m, size_t i)
{
	return m && i < m->n ? &m->e[i] : NULL;
}

const char *typemap_desc(const struct typemap *m, int32_t pid, unsigned id)
{
	const struct pt_ext_type *mine = NULL, *any = NULL;

	for (size_t i = 0; m && i < m->n; i++) {
		const struct pt_ext_type *t = &m->e[i];
		if (t->id != id)
			continue;
		if (!any || t->ts >= any->ts)
			any = t;
		if (t->pid == pid && (!mine || t->ts >= mine->ts))
			mine = t;
	}
	return mine ? mine->desc : any ? any->desc : NULL;
}
