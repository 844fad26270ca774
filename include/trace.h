/*
 * <trace.h> -- the POSIX Tracing option (TRC, TEF, TRL, TRI) for Linux.
 *
 * posixtrace: IEEE Std 1003.1-2008 tracing as a library.  Every function
 * returns 0 or an error number; none of them sets errno.
 */
#ifndef POSIXTRACE_TRACE_H
#define POSIXTRACE_TRACE_H

#include <sys/types.h>
#include <stddef.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* glibc advertises the tracing options as unsupported (-1); this library
 * supports all four, so programs that include <trace.h> see 200809L. */
#undef _POSIX_TRACE
#undef _POSIX_TRACE_EVENT_FILTER
#undef _POSIX_TRACE_INHERIT
#undef _POSIX_TRACE_LOG
#define _POSIX_TRACE              200809L
#define _POSIX_TRACE_EVENT_FILTER 200809L
#define _POSIX_TRACE_INHERIT      200809L
#define _POSIX_TRACE_LOG          200809L

/* Minimum values required by the standard (<limits.h>). */
#ifndef _POSIX_TRACE_EVENT_NAME_MAX
#define _POSIX_TRACE_EVENT_NAME_MAX 30
#endif
#ifndef _POSIX_TRACE_NAME_MAX
#define _POSIX_TRACE_NAME_MAX 8
#endif
#ifndef _POSIX_TRACE_SYS_MAX
#define _POSIX_TRACE_SYS_MAX 8
#endif
#ifndef _POSIX_TRACE_USER_EVENT_MAX
#define _POSIX_TRACE_USER_EVENT_MAX 32
#endif

/* This implementation's limits.  TRACE_EVENT_NAME_MAX counts characters,
 * as the standard has it: an event name of up to 63 characters is accepted,
 * and a buffer that receives one (posix_trace_eventid_get_name) needs
 * TRACE_EVENT_NAME_MAX + 1 bytes.  (Earlier versions said 64 and counted
 * the NUL; the names that fit are the same.)  TRACE_NAME_MAX is the size of a
 * trace-name or generation-version buffer, the NUL included: names hold at
 * most TRACE_NAME_MAX - 1 characters, as the attribute functions say. */
#define TRACE_EVENT_NAME_MAX 63
#define TRACE_NAME_MAX       64
#define TRACE_SYS_MAX        128
#define TRACE_USER_EVENT_MAX 1000
/* posixtrace extension: the largest max-data-size attribute accepted. */
#define TRACE_DATA_MAX       65535

/* ------------------------------------------------------------------ types */

typedef int trace_id_t;
typedef unsigned int trace_event_id_t;

/* A set of event types: a plain, assignable bit set (no pointers). */
#define __TRACE_EVENT_ID_LIMIT 1024
typedef struct {
	unsigned long long __bits[__TRACE_EVENT_ID_LIMIT / 64];
} trace_event_set_t;

/* Attributes object.  Fields are private; use the posix_trace_attr_*
 * functions. */
typedef struct {
	unsigned int __magic;
	int __stream_policy;   /* 0 = not set: default depends on log or not */
	int __log_policy;
	int __inherit;
	size_t __stream_size;
	size_t __max_data_size;
	size_t __log_size;
	struct timespec __create_time;
	struct timespec __clock_res;
	char __name[TRACE_NAME_MAX];
	char __version[TRACE_NAME_MAX];
	long __reserved[4];
} trace_attr_t;

struct posix_trace_event_info {
	trace_event_id_t posix_event_id;
	pid_t posix_pid;
	void *posix_prog_address;
	int posix_truncation_status;
	struct timespec posix_timestamp;
	pthread_t posix_thread_id;
};

struct posix_trace_status_info {
	int posix_stream_status;
	int posix_stream_full_status;
	int posix_stream_overrun_status;
	int posix_stream_flush_status;
	int posix_stream_flush_error;
	int posix_log_overrun_status;
	int posix_log_full_status;
};

/* -------------------------------------------------------------- constants */

/* posix_stream_status */
#define POSIX_TRACE_RUNNING   1
#define POSIX_TRACE_SUSPENDED 2
/* posix_stream_full_status, posix_log_full_status */
#define POSIX_TRACE_FULL      1
#define POSIX_TRACE_NOT_FULL  2
/* posix_stream_overrun_status, posix_log_overrun_status */
#define POSIX_TRACE_OVERRUN    1
#define POSIX_TRACE_NO_OVERRUN 0
/* posix_stream_flush_status */
#define POSIX_TRACE_FLUSHING     1
#define POSIX_TRACE_NOT_FLUSHING 0

/* stream-full-policy and log-full-policy */
#define POSIX_TRACE_LOOP       1
#define POSIX_TRACE_UNTIL_FULL 2
#define POSIX_TRACE_FLUSH      3
#define POSIX_TRACE_APPEND     4

/* inheritance */
#define POSIX_TRACE_CLOSE_FOR_CHILD 0
#define POSIX_TRACE_INHERITED       1

/* posix_truncation_status */
#define POSIX_TRACE_NOT_TRUNCATED    0
#define POSIX_TRACE_TRUNCATED_RECORD 1
#define POSIX_TRACE_TRUNCATED_READ   2

/* posix_trace_eventset_fill() */
#define POSIX_TRACE_WOPID_EVENTS  1
#define POSIX_TRACE_SYSTEM_EVENTS 2
#define POSIX_TRACE_ALL_EVENTS    3

/* posix_trace_set_filter() */
#define POSIX_TRACE_SET_EVENTSET 1
#define POSIX_TRACE_ADD_EVENTSET 2
#define POSIX_TRACE_SUB_EVENTSET 3

/* Predefined event types.  System events are 0..15; user events follow. */
#define POSIX_TRACE_ERROR       ((trace_event_id_t)0)
#define POSIX_TRACE_START       ((trace_event_id_t)1)
#define POSIX_TRACE_STOP        ((trace_event_id_t)2)
#define POSIX_TRACE_FILTER      ((trace_event_id_t)3)
#define POSIX_TRACE_OVERFLOW    ((trace_event_id_t)4)
#define POSIX_TRACE_RESUME      ((trace_event_id_t)5)
#define POSIX_TRACE_FLUSH_START ((trace_event_id_t)6)
#define POSIX_TRACE_FLUSH_STOP  ((trace_event_id_t)7)
#define POSIX_TRACE_UNNAMED_USEREVENT  ((trace_event_id_t)16)
#define POSIX_TRACE_UNNAMED_USER_EVENT POSIX_TRACE_UNNAMED_USEREVENT

/* ------------------------------------------------------------- functions */

int posix_trace_attr_init(trace_attr_t *);
int posix_trace_attr_destroy(trace_attr_t *);
int posix_trace_attr_getclockres(const trace_attr_t *, struct timespec *);
int posix_trace_attr_getcreatetime(const trace_attr_t *, struct timespec *);
int posix_trace_attr_getgenversion(const trace_attr_t *, char *);
int posix_trace_attr_getname(const trace_attr_t *, char *);
int posix_trace_attr_setname(trace_attr_t *, const char *);
int posix_trace_attr_getinherited(const trace_attr_t *__restrict, int *__restrict);
int posix_trace_attr_setinherited(trace_attr_t *, int);
int posix_trace_attr_getlogfullpolicy(const trace_attr_t *__restrict, int *__restrict);
int posix_trace_attr_setlogfullpolicy(trace_attr_t *, int);
int posix_trace_attr_getstreamfullpolicy(const trace_attr_t *__restrict, int *__restrict);
int posix_trace_attr_setstreamfullpolicy(trace_attr_t *, int);
int posix_trace_attr_getlogsize(const trace_attr_t *__restrict, size_t *__restrict);
int posix_trace_attr_setlogsize(trace_attr_t *, size_t);
int posix_trace_attr_getmaxdatasize(const trace_attr_t *__restrict, size_t *__restrict);
int posix_trace_attr_setmaxdatasize(trace_attr_t *, size_t);
int posix_trace_attr_getmaxsystemeventsize(const trace_attr_t *__restrict, size_t *__restrict);
int posix_trace_attr_getmaxusereventsize(const trace_attr_t *__restrict, size_t,
                                         size_t *__restrict);
int posix_trace_attr_getstreamsize(const trace_attr_t *__restrict, size_t *__restrict);
int posix_trace_attr_setstreamsize(trace_attr_t *, size_t);

/* Extension (not POSIX): no-loss mode.  A traced thread that finds a
 * POSIX_TRACE_FLUSH stream full waits for the flusher to make room, up to
 * timeout_ms (1..60000) per wait, rather than lose the event; 0 (the
 * default) turns it off.  See posixtrace_attr_setnoloss(3). */
int posixtrace_attr_setnoloss(trace_attr_t *, unsigned);
int posixtrace_attr_getnoloss(const trace_attr_t *__restrict, unsigned *__restrict);

/* Extension (not POSIX): what the payload of an event type holds, given
 * once, e.g. "id:u32,cost_us:u32" or "path:string"; carried in the trace
 * so that readers show the fields by name.  0, or EINVAL (a system event
 * id, an id out of range, a description that does not parse), ENOMEM.
 * See posixtrace_eventid_describe(3). */
int posixtrace_eventid_describe(trace_event_id_t, const char *);

/* Extension (not POSIX): the system event types by name, with no stream
 * and nothing registered: the id of "posix_trace_overflow" and the like
 * (0, or EINVAL for a name that is no system event type's), and the name
 * of a system event id (NULL for any other id).
 * See posixtrace_eventid_system(3). */
int posixtrace_eventid_system(const char *, trace_event_id_t *);
const char *posixtrace_eventid_system_name(trace_event_id_t);

int posix_trace_create(pid_t, const trace_attr_t *__restrict, trace_id_t *__restrict);
int posix_trace_create_withlog(pid_t, const trace_attr_t *__restrict, int,
                               trace_id_t *__restrict);
int posix_trace_flush(trace_id_t);
int posix_trace_shutdown(trace_id_t);
int posix_trace_start(trace_id_t);
int posix_trace_stop(trace_id_t);
int posix_trace_clear(trace_id_t);
int posix_trace_get_attr(trace_id_t, trace_attr_t *);
int posix_trace_get_status(trace_id_t, struct posix_trace_status_info *);

void posix_trace_event(trace_event_id_t, const void *__restrict, size_t);

/* With no stream running in the process, or with every running stream
 * filtering the id out, posix_trace_event() does nothing.  This inline test
 * lets a call site find that out with two loads and one branch, without
 * making the call: __posix_trace_want points at the process's wanted
 * bitmap (in its control segment), whose bit id is set whenever a running
 * stream may record id (the library keeps it current; controllers in
 * other processes do too, before posix_trace_start() or
 * posix_trace_set_filter() returns).  The index is masked, so an id out of
 * range reads a word of the bitmap, never past it (the function rejects
 * such an id).  An id that passes goes to __posix_trace_event_wanted()
 * (since POSIXTRACE_0.8), posix_trace_event() for a caller that has just
 * made this test: it does not test again whether a stream runs here.
 * (posix_trace_event)(...) or defining POSIXTRACE_NO_INLINE before
 * including <trace.h> calls the function always; the function makes the
 * same test itself.  __posix_trace_gate, which programs built
 * with older headers test instead, still points at a word whose low 8 bits
 * are non-zero whenever a stream may record here. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(POSIXTRACE_NO_INLINE)
extern const unsigned int *__posix_trace_gate;
extern const unsigned long long *__posix_trace_want;
void __posix_trace_event_wanted(trace_event_id_t, const void *__restrict, size_t);
/* a statement expression rather than an inline function, so the call's
 * address and line are the caller's own; each argument evaluated once */
#define posix_trace_event(id, data, len) __extension__({ \
	trace_event_id_t __pt_id = (id); \
	const void *__pt_data = (data); \
	size_t __pt_len = (len); \
	if (__builtin_expect(__atomic_load_n(&__posix_trace_want[(__pt_id / 64u) % \
	                     (__TRACE_EVENT_ID_LIMIT / 64u)], __ATOMIC_RELAXED) >> \
	                     (__pt_id % 64u) & 1u, 0)) \
		__posix_trace_event_wanted(__pt_id, __pt_data, __pt_len); \
	(void)0; })
#endif

/* Extension: posix_trace_event() with the call site given, so that an
 * event recorded through a helper is attributed to the helper's caller:
 *   posixtrace_event_at(id, data, len, __builtin_return_address(0));
 * in the helper.  A NULL site: the caller's own, as posix_trace_event(). */
void posixtrace_event_at(trace_event_id_t, const void *__restrict, size_t, const void *);

/* Extension: raise the named trigger NAME (at most 63 bytes kept) in the
 * streams this thread records into: a system event, posixtrace_trigger,
 * whose payload is the name.  A flight recorder (`posixtrace record
 * --flight --snapshot-on trigger:NAME`) takes a snapshot when it sees it.
 * As cheap and as safe as posix_trace_event() (async-signal-safe, no
 * system call but a new chunk's); nothing when no stream runs. */
void posixtrace_trigger(const char *);

int posix_trace_eventid_open(const char *__restrict, trace_event_id_t *__restrict);
int posix_trace_trid_eventid_open(trace_id_t, const char *__restrict,
                                  trace_event_id_t *__restrict);
int posix_trace_eventid_equal(trace_id_t, trace_event_id_t, trace_event_id_t);
int posix_trace_eventid_get_name(trace_id_t, trace_event_id_t, char *);
int posix_trace_eventtypelist_getnext_id(trace_id_t, trace_event_id_t *__restrict,
                                         int *__restrict);
int posix_trace_eventtypelist_rewind(trace_id_t);

int posix_trace_eventset_empty(trace_event_set_t *);
int posix_trace_eventset_fill(trace_event_set_t *, int);
int posix_trace_eventset_add(trace_event_id_t, trace_event_set_t *);
int posix_trace_eventset_del(trace_event_id_t, trace_event_set_t *);
int posix_trace_eventset_ismember(trace_event_id_t, const trace_event_set_t *__restrict,
                                  int *__restrict);
int posix_trace_set_filter(trace_id_t, const trace_event_set_t *, int);
int posix_trace_get_filter(trace_id_t, trace_event_set_t *);

int posix_trace_getnext_event(trace_id_t, struct posix_trace_event_info *__restrict,
                              void *__restrict, size_t, size_t *__restrict,
                              int *__restrict);
int posix_trace_timedgetnext_event(trace_id_t, struct posix_trace_event_info *__restrict,
                                   void *__restrict, size_t, size_t *__restrict,
                                   int *__restrict, const struct timespec *__restrict);
int posix_trace_trygetnext_event(trace_id_t, struct posix_trace_event_info *__restrict,
                                 void *__restrict, size_t, size_t *__restrict,
                                 int *__restrict);

int posix_trace_open(int, trace_id_t *);
int posix_trace_rewind(trace_id_t);
int posix_trace_close(trace_id_t);

#ifdef __cplusplus
}
#endif

#endif /* POSIXTRACE_TRACE_H */
