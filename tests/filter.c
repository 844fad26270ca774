/*
 * filter.c -- the trace event type filter of a stream.  A new stream's
 * filter is empty; posix_trace_set_filter() with SET, ADD and SUB gives the
 * documented set (checked id by id through posix_trace_get_filter()); an
 * invalid how or a NULL set fails with EINVAL and leaves the filter alone.
 * Filtered-out user events are not recorded and the others are, from the
 * first event after start when the filter was set before; a change while
 * running records one FILTER event whose data is the old set followed by the
 * new set, a change while suspended records nothing; a filtered-out
 * POSIX_TRACE_START (or STOP) is not recorded.
 */
#include <trace.h>
#include "t.h"
#include "helpers.h"

static struct t_rec evs[64];

static int drain(trace_id_t trid)
{
	return t_drain_recs(trid, evs, 64);
}

/* Builds a set from a list of ids ending with 1024 (not a valid id). */
static trace_event_set_t mkset(const unsigned *ids)
{
	trace_event_set_t s;

	posix_trace_eventset_empty(&s);
	for (; *ids < 1024; ids++)
		CHECK_RC(posix_trace_eventset_add(*ids, &s), 0);
	return s;
}

/* Number of ids 0..1023 whose membership differs between a and b. */
static int diff(const trace_event_set_t *a, const trace_event_set_t *b)
{
	int n = 0, ma, mb;

	for (unsigned id = 0; id < 1024; id++) {
		ma = mb = 0;
		CHECK_RC(posix_trace_eventset_ismember(id, a, &ma), 0);
		CHECK_RC(posix_trace_eventset_ismember(id, b, &mb), 0);
		if ((ma != 0) != (mb != 0)) {
			if (n < 3)
				fprintf(stderr, "  sets differ at id %u\n", id);
			n++;
		}
	}
	return n;
}

static void check_filter(trace_id_t trid, const trace_event_set_t *want)
{
	trace_event_set_t got;

	memset(&got, 0xa5, sizeof got);
	CHECK_RC(posix_trace_get_filter(trid, &got), 0);
	CHECK_EQ(diff(&got, want), 0);
}

static void check_set_semantics(trace_id_t trid, trace_event_id_t u1, trace_event_id_t u2,
                                trace_event_id_t u3)
{
	trace_event_set_t s, want, empty, sys, all, userall;
	const unsigned l12[] = { u1, u2, 1024 }, l3[] = { u3, 1024 }, l123[] = { u1, u2, u3, 1024 },
	               l14[] = { u1, 900, POSIX_TRACE_STOP, 1024 }, l23[] = { u2, u3, 1024 };

	posix_trace_eventset_empty(&empty);
	check_filter(trid, &empty);                    /* initial filter: empty */

	s = mkset(l12);
	CHECK_RC(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET), 0);
	check_filter(trid, &s);
	s = mkset(l3);
	CHECK_RC(posix_trace_set_filter(trid, &s, POSIX_TRACE_ADD_EVENTSET), 0);
	want = mkset(l123);
	check_filter(trid, &want);
	s = mkset(l14);                                /* u1 present, 900/STOP absent */
	CHECK_RC(posix_trace_set_filter(trid, &s, POSIX_TRACE_SUB_EVENTSET), 0);
	want = mkset(l23);
	check_filter(trid, &want);

	/* invalid how / NULL: EINVAL, filter unchanged */
	s = mkset(l14);
	CHECK_RC(posix_trace_set_filter(trid, &s, 0), EINVAL);
	CHECK_RC(posix_trace_set_filter(trid, &s, 4), EINVAL);
	CHECK_RC(posix_trace_set_filter(trid, &s, -1), EINVAL);
	CHECK_RC(posix_trace_set_filter(trid, NULL, POSIX_TRACE_SET_EVENTSET), EINVAL);
	CHECK_RC(posix_trace_set_filter(trid, NULL, POSIX_TRACE_ADD_EVENTSET), EINVAL);
	CHECK_RC(posix_trace_get_filter(trid, NULL), EINVAL);
	check_filter(trid, &want);

	/* whole sets */
	posix_trace_eventset_fill(&all, POSIX_TRACE_ALL_EVENTS);
	posix_trace_eventset_fill(&sys, POSIX_TRACE_SYSTEM_EVENTS);
	CHECK_RC(posix_trace_set_filter(trid, &all, POSIX_TRACE_ADD_EVENTSET), 0);
	check_filter(trid, &all);
	CHECK_RC(posix_trace_set_filter(trid, &sys, POSIX_TRACE_SUB_EVENTSET), 0);
	userall = all;
	for (unsigned id = 0; id < PT_SYS_IDS; id++)
		posix_trace_eventset_del(id, &userall);
	check_filter(trid, &userall);
	CHECK_RC(posix_trace_set_filter(trid, &empty, POSIX_TRACE_SET_EVENTSET), 0);
	check_filter(trid, &empty);

	/* none of this was recorded: the stream is suspended */
	CHECK_EQ(drain(trid), 0);
}

int main(void)
{
	trace_event_id_t u1, u2, u3;
	trace_event_set_t s, old, want;
	trace_id_t trid;
	int n, v;

	T_BEGIN(60);
	CHECK_RC(posix_trace_eventid_open("filter-1", &u1), 0);
	CHECK_RC(posix_trace_eventid_open("filter-2", &u2), 0);
	CHECK_RC(posix_trace_eventid_open("filter-3", &u3), 0);
	CHECK_RC(posix_trace_create(0, NULL, &trid), 0);

	check_set_semantics(trid, u1, u2, u3);

	/* a filter set before start applies from the first event */
	const unsigned l1[] = { u1, 1024 }, l2[] = { u2, 1024 }, l12[] = { u1, u2, 1024 };
	s = mkset(l1);
	CHECK_RC(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	posix_trace_event(u1, NULL, 0);
	posix_trace_event(u2, "2", 1);
	posix_trace_event(u1, NULL, 0);
	posix_trace_event(u3, "3", 1);
	posix_trace_event(u1, NULL, 0);

	/* change while running: FILTER with old and new set */
	old = s;
	s = mkset(l2);
	CHECK_RC(posix_trace_set_filter(trid, &s, POSIX_TRACE_ADD_EVENTSET), 0);
	want = mkset(l12);
	check_filter(trid, &want);
	posix_trace_event(u1, NULL, 0);
	posix_trace_event(u2, NULL, 0);
	posix_trace_event(u3, "3", 1);
	CHECK_RC(posix_trace_stop(trid), 0);

	n = drain(trid);
	CHECK_EQ(n, 6);
	if (n == 6) {
		CHECK_EQ(evs[0].id, POSIX_TRACE_START);
		CHECK_EQ(evs[1].id, u2);
		CHECK_EQ(evs[2].id, u3);
		CHECK_EQ(evs[3].id, POSIX_TRACE_FILTER);
		CHECK_EQ(evs[3].len, 2 * sizeof(trace_event_set_t));
		trace_event_set_t d_old, d_new;
		memcpy(&d_old, evs[3].data, sizeof d_old);
		memcpy(&d_new, evs[3].data + sizeof d_old, sizeof d_new);
		CHECK_EQ(diff(&d_old, &old), 0);
		CHECK_EQ(diff(&d_new, &want), 0);
		CHECK_EQ(evs[4].id, u3);
		CHECK_EQ(evs[5].id, POSIX_TRACE_STOP);
	}

	/* change while suspended: recorded nothing */
	posix_trace_eventset_empty(&s);
	CHECK_RC(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_EQ(drain(trid), 0);

	/* filtering START (and STOP) */
	posix_trace_eventset_empty(&s);
	posix_trace_eventset_add(POSIX_TRACE_START, &s);
	CHECK_RC(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	posix_trace_event(u1, NULL, 0);
	CHECK_RC(posix_trace_stop(trid), 0);
	n = drain(trid);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(evs[0].id, u1);
		CHECK_EQ(evs[1].id, POSIX_TRACE_STOP);
		CHECK_EQ(evs[1].len, sizeof(int));
		memcpy(&v, evs[1].data, sizeof v);
		CHECK_EQ(v, 0);
	}
	posix_trace_eventset_add(POSIX_TRACE_STOP, &s);
	posix_trace_eventset_add(u2, &s);
	CHECK_RC(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	posix_trace_event(u2, NULL, 0);
	posix_trace_event(u3, NULL, 0);
	CHECK_RC(posix_trace_stop(trid), 0);
	n = drain(trid);
	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK_EQ(evs[0].id, u3);

	/* an empty filter again records everything */
	posix_trace_eventset_empty(&s);
	CHECK_RC(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	posix_trace_event(u1, NULL, 0);
	posix_trace_event(u2, NULL, 0);
	posix_trace_event(u3, NULL, 0);
	CHECK_RC(posix_trace_stop(trid), 0);
	n = drain(trid);
	CHECK_EQ(n, 5);
	if (n == 5) {
		CHECK_EQ(evs[0].id, POSIX_TRACE_START);
		CHECK_EQ(evs[1].id, u1);
		CHECK_EQ(evs[2].id, u2);
		CHECK_EQ(evs[3].id, u3);
		CHECK_EQ(evs[4].id, POSIX_TRACE_STOP);
	}

	CHECK_RC(posix_trace_shutdown(trid), 0);
	T_END();
}
