/*
 * header.c -- <trace.h> itself: option macros read 200809L even after
 * glibc's <unistd.h> said -1; the constants the header page forgets exist;
 * both spellings of the unnamed user event agree; values that must be
 * told apart are distinct; trace_event_set_t is a plain assignable struct.
 * posix_trace_event() is both an inline test and a real function: called
 * through the macro, by name in parentheses and through a pointer, each
 * call records, and none records once the stream is stopped.
 * The Makefile also compiles the header as C++ and as pedantic C99.
 */
#include <unistd.h>
#include <limits.h>
#include <trace.h>
#include "t.h"

int main(void)
{
	T_BEGIN(10);
	CHECK_EQ(_POSIX_TRACE, 200809L);
	CHECK_EQ(_POSIX_TRACE_EVENT_FILTER, 200809L);
	CHECK_EQ(_POSIX_TRACE_INHERIT, 200809L);
	CHECK_EQ(_POSIX_TRACE_LOG, 200809L);
	CHECK(TRACE_EVENT_NAME_MAX >= _POSIX_TRACE_EVENT_NAME_MAX);
	CHECK(TRACE_NAME_MAX >= _POSIX_TRACE_NAME_MAX);
	CHECK(TRACE_SYS_MAX >= _POSIX_TRACE_SYS_MAX);
	CHECK(TRACE_USER_EVENT_MAX >= _POSIX_TRACE_USER_EVENT_MAX);
	CHECK_EQ(POSIX_TRACE_UNNAMED_USER_EVENT, POSIX_TRACE_UNNAMED_USEREVENT);

	/* the ones the header page forgets */
	int how[] = { POSIX_TRACE_SET_EVENTSET, POSIX_TRACE_ADD_EVENTSET, POSIX_TRACE_SUB_EVENTSET };
	CHECK(how[0] != how[1] && how[1] != how[2] && how[0] != how[2]);
	trace_event_id_t sys[] = { POSIX_TRACE_ERROR, POSIX_TRACE_START, POSIX_TRACE_STOP,
	                           POSIX_TRACE_FILTER, POSIX_TRACE_OVERFLOW, POSIX_TRACE_RESUME,
	                           POSIX_TRACE_FLUSH_START, POSIX_TRACE_FLUSH_STOP,
	                           POSIX_TRACE_UNNAMED_USEREVENT };
	for (unsigned i = 0; i < sizeof sys / sizeof sys[0]; i++)
		for (unsigned j = i + 1; j < sizeof sys / sizeof sys[0]; j++)
			CHECK(sys[i] != sys[j]);

	CHECK(POSIX_TRACE_RUNNING != POSIX_TRACE_SUSPENDED);
	CHECK(POSIX_TRACE_FULL != POSIX_TRACE_NOT_FULL);
	CHECK(POSIX_TRACE_OVERRUN != POSIX_TRACE_NO_OVERRUN);
	CHECK(POSIX_TRACE_FLUSHING != POSIX_TRACE_NOT_FLUSHING);
	CHECK(POSIX_TRACE_INHERITED != POSIX_TRACE_CLOSE_FOR_CHILD);
	int pol[] = { POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_FLUSH, POSIX_TRACE_APPEND };
	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = i + 1; j < 4; j++)
			CHECK(pol[i] != pol[j]);
	int tr[] = { POSIX_TRACE_NOT_TRUNCATED, POSIX_TRACE_TRUNCATED_RECORD,
	             POSIX_TRACE_TRUNCATED_READ };
	CHECK(tr[0] != tr[1] && tr[1] != tr[2] && tr[0] != tr[2]);
	int fill[] = { POSIX_TRACE_WOPID_EVENTS, POSIX_TRACE_SYSTEM_EVENTS, POSIX_TRACE_ALL_EVENTS };
	CHECK(fill[0] != fill[1] && fill[1] != fill[2] && fill[0] != fill[2]);

	/* assignable set, no pointers inside */
	trace_event_set_t a, b;
	posix_trace_eventset_empty(&a);
	posix_trace_eventset_add(POSIX_TRACE_STOP, &a);
	b = a;
	int m = 0;
	CHECK_RC(posix_trace_eventset_ismember(POSIX_TRACE_STOP, &b, &m), 0);
	CHECK(m != 0);

	/* the status structure has every member the standard names */
	struct posix_trace_status_info si = { 0 };
	si.posix_stream_status = si.posix_stream_full_status = si.posix_stream_overrun_status = 0;
	si.posix_stream_flush_status = si.posix_stream_flush_error = 0;
	si.posix_log_overrun_status = si.posix_log_full_status = 0;
	struct posix_trace_event_info ev = { 0 };
	CHECK(ev.posix_prog_address == NULL && ev.posix_event_id == 0 && ev.posix_pid == 0 &&
	      ev.posix_truncation_status == 0 && ev.posix_timestamp.tv_sec == 0);

	/* the inline test and the function itself */
	trace_attr_t attr;
	trace_id_t trid;
	trace_event_id_t e;
	void (*fp)(trace_event_id_t, const void *, size_t) = posix_trace_event;
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_create(0, &attr, &trid), 0);
	CHECK_RC(posix_trace_eventid_open("header", &e), 0);
	int once = 0;
	posix_trace_event(e, "before", (size_t)++once); /* not started: not recorded */
	CHECK_EQ(once, 1); /* the macro evaluates each argument once, traced or not */
	CHECK_RC(posix_trace_start(trid), 0);
	posix_trace_event(e, "m", 1);
	(posix_trace_event)(e, "fn", 2);
	fp(e, "ptr", 3);
	CHECK_RC(posix_trace_stop(trid), 0);
	posix_trace_event(e, "after", 5);
	(posix_trace_event)(e, "after", 5);
	struct posix_trace_event_info info;
	char buf[16];
	size_t len, lens = 0;
	int un, users = 0;
	while (posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &un) == 0 && !un)
		if (info.posix_event_id == e)
			users++, lens = lens * 10 + len;
	CHECK_EQ(users, 3);
	CHECK_EQ(lens, 123u);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&attr);
	T_END();
}
