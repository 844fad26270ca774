/*
 * names.c -- names as a user types them: the event types of --exclude
 * and the policies.
 *
 * System event names (docs/implementation-defined.md) are resolved by the
 * library's table (posixtrace_eventid_system(3)), not with
 * posix_trace_trid_eventid_open(), which would register a user event of
 * the same name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "read.h"

/* --exclude NAME,...: a filter of those event types on trid (system names
 * resolved here, user names through the stream).  0, or 1 after a message. */
int exclude_events(trace_id_t trid, const char *exclude)
{
	trace_event_set_t set;
	char *list = strdup(exclude), *save = NULL;
	int rc;

	if (!list) {
		err_msg("--exclude: %s", strerror(ENOMEM));
		return 1;
	}
	posix_trace_eventset_empty(&set);
	for (char *n = strtok_r(list, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		trace_event_id_t id;
		if (posixtrace_eventid_system(n, &id) && (rc = posix_trace_trid_eventid_open(trid, n, &id))) {
			err_msg("--exclude: event type '%s': %s", n, strerror(rc));
			free(list);
			return 1;
		}
		posix_trace_eventset_add(id, &set);
	}
	free(list);
	if ((rc = posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET)) != 0) {
		err_msg("posix_trace_set_filter: %s", strerror(rc));
		return 1;
	}
	return 0;
}

const char *policy_name(int policy)
{
	switch (policy) {
	case POSIX_TRACE_LOOP: return "loop";
	case POSIX_TRACE_UNTIL_FULL: return "until-full";
	case POSIX_TRACE_FLUSH: return "flush";
	case POSIX_TRACE_APPEND: return "append";
	default: return "?";
	}
}

/* Stream policies: loop, until-full, flush; log policies: loop,
 * until-full, append. */
int parse_policy(const char *s, int log, int *out)
{
	if (!strcmp(s, "loop"))
		*out = POSIX_TRACE_LOOP;
	else if (!strcmp(s, "until-full") || !strcmp(s, "until_full"))
		*out = POSIX_TRACE_UNTIL_FULL;
	else if (!log && !strcmp(s, "flush"))
		*out = POSIX_TRACE_FLUSH;
	else if (log && !strcmp(s, "append"))
		*out = POSIX_TRACE_APPEND;
	else
		return -1;
	return 0;
}
