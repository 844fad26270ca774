/*
 * eventid.c -- event type names and identifiers.  posix_trace_eventid_open():
 * same name same id, distinct names distinct ids from 17 up; TRACE_EVENT_NAME_MAX
 * (63) counts characters, not the NUL: a name of exactly that many is accepted,
 * one more (and 200) ENAMETOOLONG -- an error, not a truncation; get_name
 * writes it into TRACE_EVENT_NAME_MAX + 1 bytes and not one more, and it
 * survives a trace log (create_withlog, then posix_trace_open); "" and NULL
 * EINVAL, and (in a
 * fork()ed child, so this process's registry stays small) exactly
 * TRACE_USER_EVENT_MAX names registered before new names get
 * POSIX_TRACE_UNNAMED_USEREVENT.  A stream knows names registered before and
 * after it was created; posix_trace_trid_eventid_open() agrees with
 * posix_trace_eventid_open() whichever comes first; posix_trace_eventid_get_name()
 * knows the nine predefined names and the user names and rejects unknown ids;
 * posix_trace_eventid_equal(); posix_trace_eventtypelist_getnext_id() walks
 * 0..8 (8: the extension posixtrace_noloss_wait), 16 and then the user ids in ascending order, each once, then reports
 * unavailable until rewound; invalid trids give EINVAL.  Finally user events
 * are recorded and read back with the right posix_event_id, while system ids
 * and ids >= 1024 passed to posix_trace_event() are ignored.
 */
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "log_util.h"

#define MAXNAMES 32

static const char *const sys_names[] = {
	"posix_trace_error", "posix_trace_start", "posix_trace_stop",
	"posix_trace_filter", "posix_trace_overflow", "posix_trace_resume",
	"posix_trace_flush_start", "posix_trace_flush_stop",
};

/* every user id this process registered (names registered by the child not included) */
static trace_event_id_t user_ids[MAXNAMES];
static int nuser;

static trace_event_id_t reg(const char *name)
{
	trace_event_id_t id = 0;
	CHECK_RC(posix_trace_eventid_open(name, &id), 0);
	CHECK(id >= 17 && id < 1024);
	for (int i = 0; i < nuser; i++)
		if (user_ids[i] == id)
			return id;
	REQUIRE(nuser < MAXNAMES);
	user_ids[nuser++] = id;
	return id;
}

static int is_user(trace_event_id_t id)
{
	for (int i = 0; i < nuser; i++)
		if (user_ids[i] == id)
			return 1;
	return 0;
}

/* In a child: fill the registry up to TRACE_USER_EVENT_MAX. */
static void check_user_limit(void)
{
	static unsigned char seen[1024];
	trace_event_id_t id, first = 0;
	char name[32];
	pid_t pid = fork();
	int status;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(30);
		for (int i = 0; i < TRACE_USER_EVENT_MAX; i++) {
			snprintf(name, sizeof name, "limit-%04d", i);
			id = 0;
			CHECK_RC(posix_trace_eventid_open(name, &id), 0);
			CHECK(id >= 17 && id < 1024);
			if (id < 1024) {
				CHECK_EQ(seen[id], 0);
				seen[id] = 1;
			}
			if (i == 0)
				first = id;
		}
		id = 12345;
		CHECK_RC(posix_trace_eventid_open("one-too-many", &id), 0);
		CHECK_EQ(id, POSIX_TRACE_UNNAMED_USEREVENT);
		id = 12345;
		CHECK_RC(posix_trace_eventid_open("one-too-many-2", &id), 0);
		CHECK_EQ(id, POSIX_TRACE_UNNAMED_USEREVENT);
		id = 0;
		CHECK_RC(posix_trace_eventid_open("limit-0000", &id), 0);
		CHECK_EQ(id, first);
		_exit(t_failures ? 1 : 0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

/* get_name writes the name and its NUL, TRACE_EVENT_NAME_MAX + 1 bytes at
 * most: the byte after them is left alone. */
static void check_name_buffer(trace_id_t trid, trace_event_id_t id, const char *want)
{
	char guard[TRACE_EVENT_NAME_MAX + 1 + 8];

	memset(guard, '#', sizeof guard);
	CHECK_RC(posix_trace_eventid_get_name(trid, id, guard), 0);
	CHECK_EQ(strlen(guard), strlen(want));
	CHECK_EQ(strcmp(guard, want), 0);
	for (size_t i = TRACE_EVENT_NAME_MAX + 1; i < sizeof guard; i++)
		CHECK_EQ(guard[i], '#');
}

/* A name of TRACE_EVENT_NAME_MAX characters through a trace log: written by
 * the flusher, read back by posix_trace_open(), whole. */
static void check_log_name(trace_event_id_t id, const char *want)
{
	char path[256], data[64];
	struct posix_trace_event_info ev;
	trace_id_t trid, log;
	size_t len;
	int fd = lu_tmpfile(path, sizeof path, "eventid", O_RDWR), un, seen = 0;

	REQUIRE(posix_trace_create_withlog(0, NULL, fd, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	posix_trace_event(id, "L", 1);
	CHECK_RC(posix_trace_shutdown(trid), 0); /* flushes and finishes the log */
	close(fd);
	fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_open(fd, &log) == 0);
	for (;;) {
		CHECK_RC(posix_trace_getnext_event(log, &ev, data, sizeof data, &len, &un), 0);
		if (un)
			break;
		REQUIRE(seen < 100);
		seen += ev.posix_event_id == id;
	}
	CHECK_EQ(seen, 1);
	check_name_buffer(log, id, want);
	CHECK_RC(posix_trace_close(log), 0);
	close(fd);
	lu_rmfile(path);
}

static void check_invalid_trid(trace_id_t bad)
{
	trace_event_id_t id;
	char name[TRACE_EVENT_NAME_MAX + 1];
	int un;

	CHECK_RC(posix_trace_eventid_get_name(bad, POSIX_TRACE_START, name), EINVAL);
	CHECK_RC(posix_trace_trid_eventid_open(bad, "alpha", &id), EINVAL);
	CHECK_RC(posix_trace_eventtypelist_getnext_id(bad, &id, &un), EINVAL);
	CHECK_RC(posix_trace_eventtypelist_rewind(bad), EINVAL);
}

/* Walk the type list once; the list must be 0..8, 16, then user_ids ascending. */
static void check_walk(trace_id_t trid)
{
	trace_event_id_t id, prev = 0;
	int un, n = 0, nu = 0;

	for (;;) {
		un = 7;
		CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, &un), 0);
		if (un != 0)
			break;
		REQUIRE(n < 2000);
		if (n < 10)
			CHECK_EQ(id, n);
		else if (n == 10)
			CHECK_EQ(id, POSIX_TRACE_UNNAMED_USEREVENT);
		else {
			CHECK(id > prev);
			CHECK(is_user(id));
			nu++;
		}
		prev = id;
		n++;
	}
	CHECK_EQ(n, 11 + nuser);
	CHECK_EQ(nu, nuser);
	/* stays unavailable */
	un = 0;
	CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, &un), 0);
	CHECK(un != 0);
	un = 0;
	CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, &un), 0);
	CHECK(un != 0);
}

int main(void)
{
	trace_event_id_t a, b, c, id, before, after, tfirst, free_id;
	/* nmax: the longest name there may be; nover: one character more */
	char name[TRACE_EVENT_NAME_MAX + 1], nmax[TRACE_EVENT_NAME_MAX + 1],
	     nover[TRACE_EVENT_NAME_MAX + 2];
	trace_id_t trid, dead;
	int un;

	T_BEGIN(60);

	/* the documented value: the names that fit are those that always did */
	CHECK_EQ(TRACE_EVENT_NAME_MAX, 63);

	check_user_limit();

	/* eventid_open */
	a = reg("alpha");
	CHECK_RC(posix_trace_eventid_open("alpha", &id), 0);
	CHECK_EQ(id, a);
	b = reg("beta");
	CHECK(a != b);
	memset(nmax, 'x', TRACE_EVENT_NAME_MAX);
	nmax[TRACE_EVENT_NAME_MAX] = 0;
	c = reg(nmax);
	CHECK(c != a && c != b);
	memset(nover, 'x', TRACE_EVENT_NAME_MAX + 1);
	nover[TRACE_EVENT_NAME_MAX + 1] = 0;
	id = 12345;
	CHECK_RC(posix_trace_eventid_open(nover, &id), ENAMETOOLONG);
	CHECK_EQ(id, 12345); /* not truncated to nmax's id either */
	{
		char n200[201];
		memset(n200, 'y', 200);
		n200[200] = 0;
		CHECK_RC(posix_trace_eventid_open(n200, &id), ENAMETOOLONG);
	}
	CHECK_RC(posix_trace_eventid_open("", &id), EINVAL);
	CHECK_RC(posix_trace_eventid_open(NULL, &id), EINVAL);

	/* names registered before and after the stream is created */
	before = reg("before");
	CHECK_RC(posix_trace_create(0, NULL, &trid), 0);
	after = reg("after");
	CHECK(before != after);
	CHECK_RC(posix_trace_trid_eventid_open(trid, "before", &id), 0);
	CHECK_EQ(id, before);
	CHECK_RC(posix_trace_trid_eventid_open(trid, "after", &id), 0);
	CHECK_EQ(id, after);
	CHECK_RC(posix_trace_trid_eventid_open(trid, "alpha", &id), 0);
	CHECK_EQ(id, a);

	/* trid_eventid_open first, then eventid_open */
	tfirst = 0;
	CHECK_RC(posix_trace_trid_eventid_open(trid, "trid-first", &tfirst), 0);
	CHECK(tfirst >= 17 && tfirst < 1024);
	CHECK(!is_user(tfirst));
	CHECK_EQ(reg("trid-first"), tfirst);
	CHECK_RC(posix_trace_trid_eventid_open(trid, "trid-first", &id), 0);
	CHECK_EQ(id, tfirst);
	CHECK_RC(posix_trace_trid_eventid_open(trid, nmax, &id), 0);
	CHECK_EQ(id, c);
	CHECK_RC(posix_trace_trid_eventid_open(trid, nover, &id), ENAMETOOLONG);

	/* get_name: the predefined names, then user names */
	for (unsigned i = 0; i < 8; i++) {
		memset(name, 'z', sizeof name);
		CHECK_RC(posix_trace_eventid_get_name(trid, i, name), 0);
		CHECK_EQ(strcmp(name, sys_names[i]), 0);
	}
	CHECK_RC(posix_trace_eventid_get_name(trid, POSIX_TRACE_UNNAMED_USEREVENT, name), 0);
	CHECK_EQ(strcmp(name, "posix_trace_unnamed_userevent"), 0);
	CHECK_RC(posix_trace_eventid_get_name(trid, a, name), 0);
	CHECK_EQ(strcmp(name, "alpha"), 0);
	CHECK_RC(posix_trace_eventid_get_name(trid, b, name), 0);
	CHECK_EQ(strcmp(name, "beta"), 0);
	CHECK_RC(posix_trace_eventid_get_name(trid, c, name), 0);
	CHECK_EQ(strcmp(name, nmax), 0);
	check_name_buffer(trid, c, nmax);
	CHECK_RC(posix_trace_eventid_get_name(trid, after, name), 0);
	CHECK_EQ(strcmp(name, "after"), 0);
	CHECK_RC(posix_trace_eventid_get_name(trid, tfirst, name), 0);
	CHECK_EQ(strcmp(name, "trid-first"), 0);

	/* unknown ids */
	free_id = 1023;
	while (is_user(free_id))
		free_id--;
	CHECK_RC(posix_trace_eventid_get_name(trid, free_id, name), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(trid, 8, name), 0); /* posixtrace_noloss_wait */
	CHECK_EQ(strcmp(name, "posixtrace_noloss_wait"), 0);
	CHECK_RC(posix_trace_eventid_get_name(trid, 9, name), 0); /* posixtrace_trigger */
	CHECK_EQ(strcmp(name, "posixtrace_trigger"), 0);
	CHECK_RC(posix_trace_eventid_get_name(trid, 10, name), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(trid, 15, name), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(trid, 1024, name), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(trid, 100000, name), EINVAL);

	/* eventid_equal */
	CHECK(posix_trace_eventid_equal(trid, a, a) != 0);
	CHECK(posix_trace_eventid_equal(trid, POSIX_TRACE_START, POSIX_TRACE_START) != 0);
	CHECK_EQ(posix_trace_eventid_equal(trid, a, b), 0);
	CHECK_EQ(posix_trace_eventid_equal(trid, POSIX_TRACE_START, POSIX_TRACE_STOP), 0);

	/* the type list, twice (rewind), and a name added in between */
	check_walk(trid);
	CHECK_RC(posix_trace_eventtypelist_rewind(trid), 0);
	check_walk(trid);
	reg("late");
	CHECK_RC(posix_trace_eventtypelist_rewind(trid), 0);
	check_walk(trid);
	/* rewind in the middle */
	CHECK_RC(posix_trace_eventtypelist_rewind(trid), 0);
	for (int i = 0; i < 3; i++)
		CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, &un), 0);
	CHECK_EQ(id, 2);
	CHECK_RC(posix_trace_eventtypelist_rewind(trid), 0);
	un = 1;
	CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, &un), 0);
	CHECK_EQ(un, 0);
	CHECK_EQ(id, 0);

	/* record user events and read them back */
	CHECK_RC(posix_trace_start(trid), 0);
	posix_trace_event(a, "A", 1);
	posix_trace_event(POSIX_TRACE_STOP, NULL, 0);   /* system ids: ignored */
	posix_trace_event(POSIX_TRACE_ERROR, NULL, 0);
	posix_trace_event(b, "BB", 2);
	posix_trace_event(1024, NULL, 0);               /* out of range: ignored */
	posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, NULL, 0);
	posix_trace_event(free_id, "F", 1);             /* unregistered: recorded */
	posix_trace_event(after, NULL, 0);
	CHECK_RC(posix_trace_stop(trid), 0);
	{
		static const trace_event_id_t want[] = {
			POSIX_TRACE_START, 0, 0, POSIX_TRACE_UNNAMED_USEREVENT, 0, 0, POSIX_TRACE_STOP
		};
		trace_event_id_t w[7];
		struct posix_trace_event_info ev;
		char data[512];
		size_t len;
		int n = 0;

		memcpy(w, want, sizeof w);
		w[1] = a; w[2] = b; w[4] = free_id; w[5] = after;
		for (;;) {
			CHECK_RC(posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len, &un), 0);
			if (un)
				break;
			REQUIRE(n < 20);
			if (n < 7)
				CHECK_EQ(ev.posix_event_id, w[n]);
			CHECK_EQ(ev.posix_pid, getpid());
			if (ev.posix_event_id == a) {
				CHECK_EQ(len, 1);
				CHECK_EQ(data[0], 'A');
			}
			if (ev.posix_event_id == b) {
				CHECK_EQ(len, 2);
				CHECK_EQ(memcmp(data, "BB", 2), 0);
			}
			n++;
		}
		CHECK_EQ(n, 7);
	}
	/* the unregistered id still has no name */
	CHECK_RC(posix_trace_eventid_get_name(trid, free_id, name), EINVAL);

	CHECK_RC(posix_trace_shutdown(trid), 0);
	dead = trid;

	check_log_name(c, nmax);

	/* invalid trids */
	check_invalid_trid(0);
	check_invalid_trid(-1);
	check_invalid_trid(12345);
	check_invalid_trid(dead);

	T_END();
}
