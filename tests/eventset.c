/*
 * eventset.c -- trace event type sets (posix_trace_eventset_*).  Checks the
 * membership of every id 0..1023 after posix_trace_eventset_empty() and after
 * each posix_trace_eventset_fill() (WOPID = ERROR, OVERFLOW, RESUME,
 * FLUSH_START, FLUSH_STOP; SYSTEM = 0..15; ALL = 0..1023, as documented in
 * docs/implementation-defined.md), that fill and empty replace the previous
 * contents, that add/del touch exactly one id, that adding a member twice or
 * deleting an absent id is not an error, that an invalid what, an id of 1024
 * or more and NULL pointers fail with EINVAL, and that a trace_event_set_t
 * copied by assignment keeps its contents independently of the original.
 */
#include <limits.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#define NIDS 1024

/* Fails a check for each id whose membership differs from want(id). */
static void check_members(const trace_event_set_t *s, int (*want)(unsigned), const char *what)
{
	int bad = 0;

	for (unsigned id = 0; id < NIDS; id++) {
		int m = 42;
		int rc = posix_trace_eventset_ismember(id, s, &m);
		if (rc != 0 || (m != 0) != (want(id) != 0)) {
			if (bad++ < 5)
				fprintf(stderr, "%s: id %u: rc %d member %d, want %d\n",
				        what, id, rc, m, want(id));
		}
	}
	CHECK_EQ(bad, 0);
}

static int none(unsigned id) { (void)id; return 0; }
static int all(unsigned id) { (void)id; return 1; }
static int system_ids(unsigned id) { return id < PT_SYS_IDS; }
static int wopid(unsigned id)
{
	return id == POSIX_TRACE_ERROR || id == POSIX_TRACE_OVERFLOW ||
	       id == POSIX_TRACE_RESUME || id == POSIX_TRACE_FLUSH_START ||
	       id == POSIX_TRACE_FLUSH_STOP;
}
static int some(unsigned id) { return id == 0 || id == 16 || id == 63 || id == 64 || id == 500 || id == 1023; }
static int all_but_some(unsigned id) { return !some(id); }
static int some_but_63(unsigned id) { return some(id) && id != 63; }

static const unsigned some_ids[] = { 0, 16, 63, 64, 500, 1023 };
#define NSOME (sizeof some_ids / sizeof some_ids[0])

int main(void)
{
	trace_event_set_t s, c;
	int m;

	T_BEGIN(60);

	/* empty and each fill, starting from garbage */
	memset(&s, 0xa5, sizeof s);
	CHECK_RC(posix_trace_eventset_empty(&s), 0);
	check_members(&s, none, "empty");

	memset(&s, 0xa5, sizeof s);
	CHECK_RC(posix_trace_eventset_fill(&s, POSIX_TRACE_WOPID_EVENTS), 0);
	check_members(&s, wopid, "fill WOPID");

	memset(&s, 0xa5, sizeof s);
	CHECK_RC(posix_trace_eventset_fill(&s, POSIX_TRACE_SYSTEM_EVENTS), 0);
	check_members(&s, system_ids, "fill SYSTEM");

	memset(&s, 0, sizeof s);
	CHECK_RC(posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS), 0);
	check_members(&s, all, "fill ALL");

	/* fill replaces: ALL -> WOPID; an added user id does not survive */
	CHECK_RC(posix_trace_eventset_fill(&s, POSIX_TRACE_WOPID_EVENTS), 0);
	check_members(&s, wopid, "ALL then fill WOPID");
	CHECK_RC(posix_trace_eventset_add(900, &s), 0);
	CHECK_RC(posix_trace_eventset_fill(&s, POSIX_TRACE_SYSTEM_EVENTS), 0);
	check_members(&s, system_ids, "add 900 then fill SYSTEM");
	CHECK_RC(posix_trace_eventset_empty(&s), 0);
	check_members(&s, none, "SYSTEM then empty");

	/* add: exactly the ids added, twice is fine */
	for (size_t i = 0; i < NSOME; i++) {
		CHECK_RC(posix_trace_eventset_add(some_ids[i], &s), 0);
		m = 0;
		CHECK_RC(posix_trace_eventset_ismember(some_ids[i], &s, &m), 0);
		CHECK(m != 0);
	}
	check_members(&s, some, "add some");
	CHECK_RC(posix_trace_eventset_add(63, &s), 0);
	check_members(&s, some, "add 63 twice");

	/* del: exactly one id, absent is fine */
	CHECK_RC(posix_trace_eventset_del(63, &s), 0);
	m = 42;
	CHECK_RC(posix_trace_eventset_ismember(63, &s, &m), 0);
	CHECK_EQ(m, 0);
	check_members(&s, some_but_63, "del 63");
	CHECK_RC(posix_trace_eventset_del(63, &s), 0);
	CHECK_RC(posix_trace_eventset_del(700, &s), 0);
	check_members(&s, some_but_63, "del absent");

	/* fill ALL then delete some */
	CHECK_RC(posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS), 0);
	for (size_t i = 0; i < NSOME; i++)
		CHECK_RC(posix_trace_eventset_del(some_ids[i], &s), 0);
	check_members(&s, all_but_some, "ALL minus some");

	/* ids of 1024 and more */
	static const unsigned bad_ids[] = { 1024, 1025, 4096, 65536, UINT_MAX };
	CHECK_RC(posix_trace_eventset_empty(&s), 0);
	for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
		CHECK_RC(posix_trace_eventset_add(bad_ids[i], &s), EINVAL);
		CHECK_RC(posix_trace_eventset_del(bad_ids[i], &s), EINVAL);
		CHECK_RC(posix_trace_eventset_ismember(bad_ids[i], &s, &m), EINVAL);
	}
	check_members(&s, none, "after rejected adds");
	CHECK_RC(posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS), 0);
	CHECK_RC(posix_trace_eventset_del(1024, &s), EINVAL);
	check_members(&s, all, "after rejected del");

	/* invalid what leaves the set alone */
	static const int bad_what[] = { 0, -1, 4, 100 };
	for (size_t i = 0; i < sizeof bad_what / sizeof bad_what[0]; i++)
		CHECK_RC(posix_trace_eventset_fill(&s, bad_what[i]), EINVAL);
	check_members(&s, all, "after invalid fill");

	/* NULL pointers */
	CHECK_RC(posix_trace_eventset_empty(NULL), EINVAL);
	CHECK_RC(posix_trace_eventset_fill(NULL, POSIX_TRACE_ALL_EVENTS), EINVAL);
	CHECK_RC(posix_trace_eventset_fill(NULL, POSIX_TRACE_SYSTEM_EVENTS), EINVAL);
	CHECK_RC(posix_trace_eventset_fill(NULL, POSIX_TRACE_WOPID_EVENTS), EINVAL);
	CHECK_RC(posix_trace_eventset_add(1, NULL), EINVAL);
	CHECK_RC(posix_trace_eventset_del(1, NULL), EINVAL);
	CHECK_RC(posix_trace_eventset_ismember(1, NULL, &m), EINVAL);
	CHECK_RC(posix_trace_eventset_ismember(1, &s, NULL), EINVAL);

	/* assignment copies the contents; the two are independent */
	CHECK_RC(posix_trace_eventset_empty(&s), 0);
	for (size_t i = 0; i < NSOME; i++)
		CHECK_RC(posix_trace_eventset_add(some_ids[i], &s), 0);
	c = s;
	check_members(&c, some, "copy");
	CHECK_RC(posix_trace_eventset_del(63, &c), 0);
	check_members(&c, some_but_63, "copy after del");
	check_members(&s, some, "original after del in copy");
	CHECK_RC(posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS), 0);
	check_members(&c, some_but_63, "copy after fill of original");

	T_END();
}
