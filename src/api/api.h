/*
 * api.h -- the top layer: the POSIX functions and the extension functions
 * (attributes, event sets, filters, event ids, control, getnext, logs
 * opened for reading, ext.h's counts).  Only this layer has exported
 * symbols.
 */
#ifndef POSIXTRACE_API_H
#define POSIXTRACE_API_H

#include "../ext.h"
#include "../control/control.h"

/* ------------------------------------------------------ attrs (attr.c) */
int pt_attr_valid(const trace_attr_t *a);
void pt_attr_defaults(trace_attr_t *a);
uint32_t pt_attr_noloss(const trace_attr_t *a); /* UINT32_MAX: out of bounds */
void pt_trid_attrs(const struct pt_trid *t, trace_attr_t *attr);
void pt_attr_from_img(const struct pt_attr_img *img, trace_attr_t *attr);

/* ---------------------------------------------------- sets (eventset.c) */
static inline int pt_set_has(const trace_event_set_t *s, trace_event_id_t id)
{
	return id < PT_NIDS && (s->__bits[id / 64] >> (id % 64) & 1);
}

/* ------------------------------- a log opened for reading (logfile.c) */
int pt_logopen_status(struct pt_trid *t, struct posix_trace_status_info *si);
int pt_logopen_name(struct pt_trid *t, trace_event_id_t id, char *name);
int pt_logopen_next_id(struct pt_trid *t, trace_event_id_t *id, int *unavailable);
int pt_logopen_next(struct pt_trid *t, struct posix_trace_event_info *ev, void *buf, size_t num,
                    size_t *len, int *unavailable);

#endif
