/*
 * eventid_system.c -- the extension posixtrace_eventid_system() and
 * posixtrace_eventid_system_name(): the system event types by name with no
 * stream.  The witness is the list docs/implementation-defined.md gives
 * (written out here, not taken from the library), and what a stream's own
 * table says: posix_trace_eventid_get_name() on a live stream names the
 * same ids the same way.
 *
 *  - each of the eleven names gives its id, and that id gives the name back
 *    (the same string, byte for byte);
 *  - every other id below 1024, and ids far above, have no name (NULL):
 *    exactly eleven ids have one;
 *  - an unknown name, a user event's name that is registered, a name that
 *    differs in case or by a trailing blank, "" and NULL give EINVAL and
 *    leave *id as it was; a NULL id gives EINVAL;
 *  - looking up registers nothing: the user name asked for is not given
 *    an id by it, and posix_trace_eventid_open() of a fresh name still gets
 *    the next free user id.
 */
#include <errno.h>
#include <string.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

static const struct { const char *name; trace_event_id_t id; } sys[] = {
	{ "posix_trace_error", 0 },       { "posix_trace_start", 1 },
	{ "posix_trace_stop", 2 },        { "posix_trace_filter", 3 },
	{ "posix_trace_overflow", 4 },    { "posix_trace_resume", 5 },
	{ "posix_trace_flush_start", 6 }, { "posix_trace_flush_stop", 7 },
	{ "posixtrace_noloss_wait", 8 }, /* an extension: a no-loss stream's wait for room */
	{ "posixtrace_trigger", 9 },     /* an extension: posixtrace_trigger(3) */
	{ "posix_trace_unnamed_userevent", 16 },
};
#define NSYS (sizeof sys / sizeof sys[0])

int main(void)
{
	T_BEGIN(20);

	/* every name round-trips */
	for (size_t i = 0; i < NSYS; i++) {
		trace_event_id_t id = 999;
		CHECK_RC(posixtrace_eventid_system(sys[i].name, &id), 0);
		CHECK_EQ(id, sys[i].id);
		const char *n = posixtrace_eventid_system_name(id);
		CHECK(n && strcmp(n, sys[i].name) == 0);
	}
	CHECK_EQ(POSIX_TRACE_OVERFLOW, 4);
	CHECK_EQ(POSIX_TRACE_UNNAMED_USEREVENT, 16);

	/* exactly the eleven ids have a name */
	unsigned named = 0;
	for (trace_event_id_t id = 0; id < 1024; id++)
		named += posixtrace_eventid_system_name(id) != NULL;
	CHECK_EQ(named, NSYS);
	for (trace_event_id_t id = 10; id < PT_SYS_IDS; id++)
		CHECK(posixtrace_eventid_system_name(id) == NULL);
	CHECK(posixtrace_eventid_system_name(17) == NULL);
	CHECK(posixtrace_eventid_system_name(1u << 20) == NULL);
	CHECK(posixtrace_eventid_system_name((trace_event_id_t)-1) == NULL);

	/* unknown names: EINVAL, *id untouched */
	trace_event_id_t mine = 0;
	CHECK_RC(posix_trace_eventid_open("request", &mine), 0);
	const char *bad[] = { "request", "posix_trace_overflows", "POSIX_TRACE_OVERFLOW",
	                      "posix_trace_overflow ", " posix_trace_start", "posix_trace_",
	                      "posix_trace_unnamed_user_event", "overflow", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		trace_event_id_t id = 777;
		CHECK_RC(posixtrace_eventid_system(bad[i], &id), EINVAL);
		CHECK_EQ(id, 777);
	}
	trace_event_id_t id = 777;
	CHECK_RC(posixtrace_eventid_system(NULL, &id), EINVAL);
	CHECK_EQ(id, 777);
	CHECK_RC(posixtrace_eventid_system("posix_trace_start", NULL), EINVAL);

	/* nothing was registered: a looked-up user name is unknown, and the
	 * next name takes the id right after "request" */
	trace_event_id_t next = 0;
	CHECK_RC(posixtrace_eventid_system("never_registered", &id), EINVAL);
	CHECK_RC(posix_trace_eventid_open("never_registered", &next), 0);
	CHECK_EQ(next, mine + 1);

	/* a stream's own table agrees, id by id */
	trace_attr_t attr;
	trace_id_t trid;
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	int rc = posix_trace_create(0, &attr, &trid);
	CHECK_RC(rc, 0);
	if (rc == 0) {
		for (size_t i = 0; i < NSYS; i++) {
			char name[TRACE_EVENT_NAME_MAX + 1] = "";
			CHECK_RC(posix_trace_eventid_get_name(trid, sys[i].id, name), 0);
			CHECK(strcmp(name, posixtrace_eventid_system_name(sys[i].id)) == 0);
		}
		CHECK_RC(posix_trace_shutdown(trid), 0);
	}
	posix_trace_attr_destroy(&attr);

	T_END();
}
