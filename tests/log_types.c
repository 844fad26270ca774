/*
 * log_types.c -- a log carries every event type of its stream.
 *
 * posix_trace_eventtypelist_getnext_id() and posix_trace_eventid_get_name()
 * must give on a log what they gave on its stream just before shutdown:
 * the system types, the names the traced process registered (recorded or
 * not, before or after the stream was made) and those a controller
 * registered with posix_trace_trid_eventid_open().  Checked for this
 * process traced into a stream of each stream policy (FLUSH, LOOP) with
 * each log policy (LOOP, UNTIL_FULL, APPEND), and for another process
 * (a child) traced by this one.  The names of the system types read on
 * the log (POSIX_TRACE_OVERFLOW among them, which no event of the log
 * carries) are the library's.
 */
#include <fcntl.h>
#include <trace.h>
#include "t.h"

#define MAXT 64

struct types {
	unsigned n;
	trace_event_id_t id[MAXT];
	char name[MAXT][TRACE_EVENT_NAME_MAX + 1];
};

static void list(trace_id_t trid, struct types *ty)
{
	int none = 0;

	ty->n = 0;
	CHECK_RC(posix_trace_eventtypelist_rewind(trid), 0);
	for (;;) {
		trace_event_id_t id;
		CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, &none), 0);
		if (none || ty->n == MAXT)
			break;
		ty->id[ty->n] = id;
		CHECK_RC(posix_trace_eventid_get_name(trid, id, ty->name[ty->n]), 0);
		ty->n++;
	}
}

static int has(const struct types *ty, const char *name)
{
	for (unsigned i = 0; i < ty->n; i++)
		if (!strcmp(ty->name[i], name))
			return 1;
	return 0;
}

/* the log's types are the stream's, id for id and name for name */
static void same(const struct types *s, const struct types *l, const char *what)
{
	CHECK_EQ(l->n, s->n);
	for (unsigned i = 0; i < s->n && i < l->n; i++) {
		CHECK_EQ(l->id[i], s->id[i]);
		CHECK(!strcmp(l->name[i], s->name[i]));
	}
	if (l->n != s->n)
		fprintf(stderr, "%s: %u types on the stream, %u on its log\n", what, s->n, l->n);
}

static int tmpfile_fd(char *path)
{
	strcpy(path, "/tmp/pt-log_types-XXXXXX");
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	return fd;
}

static void read_log(const char *path, struct types *l)
{
	int fd = open(path, O_RDONLY);
	trace_id_t trid;
	char name[TRACE_EVENT_NAME_MAX + 1];

	REQUIRE(fd >= 0);
	CHECK_RC(posix_trace_open(fd, &trid), 0);
	list(trid, l);
	/* a system type that no event of the log carries is named all the same */
	CHECK_RC(posix_trace_eventid_get_name(trid, POSIX_TRACE_OVERFLOW, name), 0);
	CHECK(!strcmp(name, "posix_trace_overflow"));
	CHECK_RC(posix_trace_eventid_get_name(trid, POSIX_TRACE_ERROR, name), 0);
	CHECK(!strcmp(name, "posix_trace_error"));
	CHECK_RC(posix_trace_close(trid), 0);
	close(fd);
}

static void self_case(int spol, int lpol)
{
	trace_attr_t a;
	trace_id_t trid;
	trace_event_id_t rec, unrec, late, ctl, ctl2;
	struct types s, l;
	char path[64], what[64];
	int fd = tmpfile_fd(path), x = 7;

	snprintf(what, sizeof what, "stream policy %d, log policy %d", spol, lpol);
	CHECK_RC(posix_trace_eventid_open("lt_recorded", &rec), 0);
	CHECK_RC(posix_trace_eventid_open("lt_never_recorded", &unrec), 0);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, spol) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&a, lpol) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&a, 64) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&a, 1 << 16) == 0);
	REQUIRE(posix_trace_attr_setlogsize(&a, 1 << 20) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	posix_trace_event(rec, &x, sizeof x);
	/* registered after the stream was made, never recorded */
	CHECK_RC(posix_trace_eventid_open("lt_late", &late), 0);
	/* registered by the controller on the stream */
	CHECK_RC(posix_trace_trid_eventid_open(trid, "lt_by_controller", &ctl), 0);
	CHECK_RC(posix_trace_flush(trid), 0);
	CHECK_RC(posix_trace_trid_eventid_open(trid, "lt_after_flush", &ctl2), 0);
	list(trid, &s);
	CHECK(has(&s, "lt_recorded") && has(&s, "lt_never_recorded") && has(&s, "lt_late") &&
	      has(&s, "lt_by_controller") && has(&s, "lt_after_flush") &&
	      has(&s, "posix_trace_overflow") && has(&s, "posix_trace_start"));
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&a);
	read_log(path, &l);
	same(&s, &l, what);
	close(fd);
	unlink(path);
}

/* a child registers its names (one recorded, one not), this process
 * traces it into a stream with a log */
static void child_case(void)
{
	int go[2], ready[2];
	char b, path[64];
	trace_attr_t a;
	trace_id_t trid;
	struct types s, l;

	REQUIRE(pipe(go) == 0 && pipe(ready) == 0);
	pid_t kid = fork();
	REQUIRE(kid >= 0);
	if (kid == 0) {
		trace_event_id_t r, u;
		int x = 1;
		alarm(30);
		close(go[1]);
		close(ready[0]);
		if (read(go[0], &b, 1) != 1) /* the stream exists */
			_exit(1);
		if (posix_trace_eventid_open("kid_recorded", &r) ||
		    posix_trace_eventid_open("kid_never_recorded", &u))
			_exit(2);
		posix_trace_event(r, &x, sizeof x);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		while (read(go[0], &b, 1) > 0)
			;
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	int fd = tmpfile_fd(path);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_create_withlog(kid, &a, fd, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	REQUIRE(write(go[1], "g", 1) == 1);
	REQUIRE(read(ready[0], &b, 1) == 1);
	list(trid, &s);
	CHECK(has(&s, "kid_recorded") && has(&s, "kid_never_recorded"));
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&a);
	close(go[1]);
	CHECK_EQ(t_wait_for(kid, 10000), 0);
	read_log(path, &l);
	same(&s, &l, "a child traced");
	close(fd);
	close(ready[0]);
	unlink(path);
}

int main(void)
{
	static const int spols[] = { POSIX_TRACE_FLUSH, POSIX_TRACE_LOOP };
	static const int lpols[] = { POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND };

	T_BEGIN(60);
	for (unsigned i = 0; i < 2; i++)
		for (unsigned j = 0; j < 3; j++)
			self_case(spols[i], lpols[j]);
	child_case();
	T_END();
}
