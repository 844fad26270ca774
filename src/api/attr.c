/*
 * attr.c -- the trace_attr_t object: defaults, validation, get and set.
 */
#include <string.h>
#include "api.h"

#define DEFAULT_STREAM_SIZE (1u << 20)
#define DEFAULT_MAX_DATA    1024u
#define DEFAULT_LOG_SIZE    (16u << 20)
#define MAX_STREAM_SIZE     (1ull << 40)

int pt_attr_valid(const trace_attr_t *a)
{
	return a && a->__magic == PT_ATTR_MAGIC;
}

void pt_attr_defaults(trace_attr_t *a)
{
	memset(a, 0, sizeof *a);
	a->__magic = PT_ATTR_MAGIC;
	a->__stream_policy = 0; /* LOOP without log, FLUSH with one */
	a->__log_policy = POSIX_TRACE_LOOP;
	a->__inherit = POSIX_TRACE_CLOSE_FOR_CHILD;
	a->__stream_size = DEFAULT_STREAM_SIZE;
	a->__max_data_size = DEFAULT_MAX_DATA;
	a->__log_size = DEFAULT_LOG_SIZE;
	strcpy(a->__version, PT_VERSION_STRING);
	a->__clock_res.tv_nsec = 1;
}

PT_API int posix_trace_attr_init(trace_attr_t *attr)
{
	if (!attr)
		return EINVAL;
	pt_attr_defaults(attr);
	if (!pt_clock_tsc) /* a TSC ticks faster than 1 GHz: 1 ns, the default */
		clock_getres(CLOCK_MONOTONIC, &attr->__clock_res);
	return 0;
}

PT_API int posix_trace_attr_destroy(trace_attr_t *attr)
{
	if (!pt_attr_valid(attr))
		return EINVAL;
	memset(attr, 0, sizeof *attr);
	return 0;
}

PT_API int posix_trace_attr_getclockres(const trace_attr_t *attr, struct timespec *res)
{
	if (!pt_attr_valid(attr) || !res)
		return EINVAL;
	*res = attr->__clock_res;
	return 0;
}

PT_API int posix_trace_attr_getcreatetime(const trace_attr_t *attr, struct timespec *t)
{
	if (!pt_attr_valid(attr) || !t)
		return EINVAL;
	*t = attr->__create_time;
	return 0;
}

PT_API int posix_trace_attr_getgenversion(const trace_attr_t *attr, char *v)
{
	if (!pt_attr_valid(attr) || !v)
		return EINVAL;
	memcpy(v, attr->__version, TRACE_NAME_MAX);
	v[TRACE_NAME_MAX - 1] = 0;
	return 0;
}

PT_API int posix_trace_attr_getname(const trace_attr_t *attr, char *name)
{
	if (!pt_attr_valid(attr) || !name)
		return EINVAL;
	memcpy(name, attr->__name, TRACE_NAME_MAX);
	name[TRACE_NAME_MAX - 1] = 0;
	return 0;
}

PT_API int posix_trace_attr_setname(trace_attr_t *attr, const char *name)
{
	if (!pt_attr_valid(attr) || !name)
		return EINVAL;
	strncpy(attr->__name, name, TRACE_NAME_MAX - 1);
	attr->__name[TRACE_NAME_MAX - 1] = 0;
	return 0;
}

PT_API int posix_trace_attr_getinherited(const trace_attr_t *restrict attr, int *restrict v)
{
	if (!pt_attr_valid(attr) || !v)
		return EINVAL;
	*v = attr->__inherit;
	return 0;
}

PT_API int posix_trace_attr_setinherited(trace_attr_t *attr, int v)
{
	if (!pt_attr_valid(attr) ||
	    (v != POSIX_TRACE_INHERITED && v != POSIX_TRACE_CLOSE_FOR_CHILD))
		return EINVAL;
	attr->__inherit = v;
	return 0;
}

PT_API int posix_trace_attr_getlogfullpolicy(const trace_attr_t *restrict attr, int *restrict v)
{
	if (!pt_attr_valid(attr) || !v)
		return EINVAL;
	*v = attr->__log_policy;
	return 0;
}

PT_API int posix_trace_attr_setlogfullpolicy(trace_attr_t *attr, int v)
{
	if (!pt_attr_valid(attr) || (v != POSIX_TRACE_LOOP && v != POSIX_TRACE_UNTIL_FULL &&
	                             v != POSIX_TRACE_APPEND))
		return EINVAL;
	attr->__log_policy = v;
	return 0;
}

PT_API int posix_trace_attr_getstreamfullpolicy(const trace_attr_t *restrict attr,
                                                int *restrict v)
{
	if (!pt_attr_valid(attr) || !v)
		return EINVAL;
	*v = attr->__stream_policy ? attr->__stream_policy : POSIX_TRACE_LOOP;
	return 0;
}

PT_API int posix_trace_attr_setstreamfullpolicy(trace_attr_t *attr, int v)
{
	if (!pt_attr_valid(attr) || (v != POSIX_TRACE_LOOP && v != POSIX_TRACE_UNTIL_FULL &&
	                             v != POSIX_TRACE_FLUSH))
		return EINVAL;
	attr->__stream_policy = v;
	return 0;
}

PT_API int posix_trace_attr_getlogsize(const trace_attr_t *restrict attr, size_t *restrict v)
{
	if (!pt_attr_valid(attr) || !v)
		return EINVAL;
	*v = attr->__log_size;
	return 0;
}

PT_API int posix_trace_attr_setlogsize(trace_attr_t *attr, size_t v)
{
	if (!pt_attr_valid(attr))
		return EINVAL;
	attr->__log_size = v;
	return 0;
}

PT_API int posix_trace_attr_getmaxdatasize(const trace_attr_t *restrict attr,
                                           size_t *restrict v)
{
	if (!pt_attr_valid(attr) || !v)
		return EINVAL;
	*v = attr->__max_data_size;
	return 0;
}

PT_API int posix_trace_attr_setmaxdatasize(trace_attr_t *attr, size_t v)
{
	if (!pt_attr_valid(attr) || v > TRACE_DATA_MAX)
		return EINVAL;
	attr->__max_data_size = v;
	return 0;
}

PT_API int posix_trace_attr_getmaxsystemeventsize(const trace_attr_t *restrict attr,
                                                  size_t *restrict v)
{
	if (!pt_attr_valid(attr) || !v)
		return EINVAL;
	*v = PT_REC_SIZE(2 * sizeof(trace_event_set_t));
	return 0;
}

PT_API int posix_trace_attr_getmaxusereventsize(const trace_attr_t *restrict attr,
                                                size_t len, size_t *restrict v)
{
	if (!pt_attr_valid(attr) || !v)
		return EINVAL;
	if (len > attr->__max_data_size)
		len = attr->__max_data_size;
	*v = PT_REC_SIZE(len);
	return 0;
}

PT_API int posix_trace_attr_getstreamsize(const trace_attr_t *restrict attr,
                                          size_t *restrict v)
{
	if (!pt_attr_valid(attr) || !v)
		return EINVAL;
	*v = attr->__stream_size;
	return 0;
}

PT_API int posix_trace_attr_setstreamsize(trace_attr_t *attr, size_t v)
{
	if (!pt_attr_valid(attr) || v == 0 || (uint64_t)v > MAX_STREAM_SIZE)
		return EINVAL;
	attr->__stream_size = v;
	return 0;
}

/* Extension, outside the POSIX names: no-loss mode (docs/implementation-defined.md).
 * The bound sits in the reserved words, so trace_attr_t keeps its size. */
#define NOLOSS_WORD __reserved[0]

PT_API int posixtrace_attr_setnoloss(trace_attr_t *attr, unsigned timeout_ms)
{
	if (!pt_attr_valid(attr) || timeout_ms > PT_NOLOSS_MAX_MS)
		return EINVAL;
	attr->NOLOSS_WORD = (long)timeout_ms;
	return 0;
}

PT_API int posixtrace_attr_getnoloss(const trace_attr_t *restrict attr,
                                     unsigned *restrict timeout_ms)
{
	if (!pt_attr_valid(attr) || !timeout_ms)
		return EINVAL;
	*timeout_ms = pt_attr_noloss(attr);
	return 0;
}

/* What create takes: a value no setter could store (the object was
 * written to directly) is out of bounds, not trusted. */
uint32_t pt_attr_noloss(const trace_attr_t *a)
{
	long v = a->NOLOSS_WORD;
	return v < 0 || v > (long)PT_NOLOSS_MAX_MS ? UINT32_MAX : (uint32_t)v;
}

/* Attributes from an image (a trace id's trusted copy, a log's header). */
void pt_attr_from_img(const struct pt_attr_img *img, trace_attr_t *a)
{
	pt_attr_defaults(a);
	memcpy(a->__name, img->name, TRACE_NAME_MAX);
	a->__create_time.tv_sec = (time_t)img->create_sec;
	a->__create_time.tv_nsec = (long)img->create_nsec;
	a->__clock_res.tv_sec = (time_t)img->res_sec;
	a->__clock_res.tv_nsec = (long)img->res_nsec;
	a->__stream_size = img->stream_size;
	a->__max_data_size = img->max_data;
	a->__log_size = img->log_size;
	a->__stream_policy = img->stream_policy;
	a->__log_policy = img->log_policy;
	a->__inherit = img->inherit;
}

/* The attributes of a trace id, from its trusted copy. */
void pt_trid_attrs(const struct pt_trid *t, trace_attr_t *a)
{
	pt_attr_from_img(&t->s.attr, a);
	posixtrace_attr_setnoloss(a, t->noloss_ms);
}
