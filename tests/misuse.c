/*
 * misuse.c -- every function of <trace.h> called wrongly: an error number
 * back (EINVAL unless the standard or docs/implementation-defined.md names
 * another), never a crash, and nothing already recorded is lost.
 *
 * A stream S of this process is started and 100 events are recorded.
 * Then, for each of the 50 functions (src/libposixtrace.map): NULL
 * pointers; trace ids 0, -1, 12345, INT_MIN, INT_MAX, a shut-down stream
 * (D) and a closed log; a log opened with posix_trace_open() (L) where a
 * live stream is needed, and S where a log is; event ids 1024, 100000 and
 * UINT_MAX; invalid policies, inheritance, sizes, eventset kinds, filter
 * operations and deadlines; attribute objects that are NULL, never
 * initialized or destroyed.  posix_trace_event() with system ids (0-15)
 * and ids >= 1024 records nothing; with NULL data and length 0 it records
 * an empty event; with SIZE_MAX bytes it records max-data-size bytes,
 * TRUNCATED_RECORD; with NULL data and a length it does not crash (tried
 * in a child).  Afterwards 100 more events are recorded and S holds
 * exactly START, the 202 events in order, STOP; its filter is still empty
 * and the valid attribute object unchanged.  L still reads its 10 events,
 * also after posix_trace_rewind().
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

#define N 100
#define MAXDATA 64

static trace_event_id_t ev_id;

/* Everything in a live stream (trygetnext) or a log (getnext): events,
 * ids of the first max, and the 4-byte user events' values. */
static int read_all(trace_id_t trid, int is_log, int *user, int *first, int *last,
                    int *in_order, trace_event_id_t *ids, int max)
{
	int n = 0;
	*user = 0, *in_order = 1, *first = *last = -1;
	for (;;) {
		struct posix_trace_event_info ev;
		unsigned char buf[2 * sizeof(trace_event_set_t)];
		size_t len;
		int v, un = -1;
		int rc = is_log ? posix_trace_getnext_event(trid, &ev, buf, sizeof buf, &len, &un)
		                : posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &un);
		CHECK_RC(rc, 0);
		if (rc || un)
			return n;
		if (n < max)
			ids[n] = ev.posix_event_id;
		n++;
		if (ev.posix_event_id != ev_id || len != sizeof v)
			continue;
		memcpy(&v, buf, sizeof v);
		if (*user == 0)
			*first = v;
		else if (v != *last + 1)
			*in_order = 0;
		*last = v;
		(*user)++;
	}
}

static void attrs(void)
{
	trace_attr_t a, junk, dead;
	struct timespec ts;
	char name[TRACE_NAME_MAX];
	size_t sz;
	int v;
	const trace_attr_t *bad[3] = { NULL, &junk, &dead };
	int wr = open("/dev/null", O_WRONLY), rd = open("/dev/null", O_RDONLY);

	REQUIRE(posix_trace_attr_init(&a) == 0);
	memset(&junk, 0xa5, sizeof junk);
	REQUIRE(posix_trace_attr_init(&dead) == 0);
	REQUIRE(posix_trace_attr_destroy(&dead) == 0);
	CHECK_RC(posix_trace_attr_init(NULL), EINVAL);
	for (int i = 0; i < 3; i++) {
		trace_attr_t *b = (trace_attr_t *)bad[i];
		CHECK_RC(posix_trace_attr_destroy(b), EINVAL);
		CHECK_RC(posix_trace_attr_getclockres(b, &ts), EINVAL);
		CHECK_RC(posix_trace_attr_getcreatetime(b, &ts), EINVAL);
		CHECK_RC(posix_trace_attr_getgenversion(b, name), EINVAL);
		CHECK_RC(posix_trace_attr_getname(b, name), EINVAL);
		CHECK_RC(posix_trace_attr_setname(b, "x"), EINVAL);
		CHECK_RC(posix_trace_attr_getinherited(b, &v), EINVAL);
		CHECK_RC(posix_trace_attr_setinherited(b, POSIX_TRACE_INHERITED), EINVAL);
		CHECK_RC(posix_trace_attr_getlogfullpolicy(b, &v), EINVAL);
		CHECK_RC(posix_trace_attr_setlogfullpolicy(b, POSIX_TRACE_LOOP), EINVAL);
		CHECK_RC(posix_trace_attr_getstreamfullpolicy(b, &v), EINVAL);
		CHECK_RC(posix_trace_attr_setstreamfullpolicy(b, POSIX_TRACE_LOOP), EINVAL);
		CHECK_RC(posix_trace_attr_getlogsize(b, &sz), EINVAL);
		CHECK_RC(posix_trace_attr_setlogsize(b, 4096), EINVAL);
		CHECK_RC(posix_trace_attr_getmaxdatasize(b, &sz), EINVAL);
		CHECK_RC(posix_trace_attr_setmaxdatasize(b, 16), EINVAL);
		CHECK_RC(posix_trace_attr_getmaxsystemeventsize(b, &sz), EINVAL);
		CHECK_RC(posix_trace_attr_getmaxusereventsize(b, 8, &sz), EINVAL);
		CHECK_RC(posix_trace_attr_getstreamsize(b, &sz), EINVAL);
		CHECK_RC(posix_trace_attr_setstreamsize(b, 4096), EINVAL);
		trace_id_t t;
		if (b)
			CHECK_RC(posix_trace_create(0, b, &t), EINVAL);
		CHECK_RC(posix_trace_create_withlog(0, b ? b : &junk, wr, &t), EINVAL);
	}
	/* NULL results */
	CHECK_RC(posix_trace_attr_getclockres(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getcreatetime(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getgenversion(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getname(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_setname(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getinherited(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getlogfullpolicy(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getstreamfullpolicy(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getlogsize(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxdatasize(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxsystemeventsize(&a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxusereventsize(&a, 8, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getstreamsize(&a, NULL), EINVAL);
	/* values out of range */
	int bad_inherit[] = { -1, 2, INT_MAX }, bad_log[] = { 0, POSIX_TRACE_FLUSH, 5, -1 };
	int bad_stream[] = { 0, POSIX_TRACE_APPEND, 5, -1 };
	for (int i = 0; i < 3; i++)
		CHECK_RC(posix_trace_attr_setinherited(&a, bad_inherit[i]), EINVAL);
	for (int i = 0; i < 4; i++) {
		CHECK_RC(posix_trace_attr_setlogfullpolicy(&a, bad_log[i]), EINVAL);
		CHECK_RC(posix_trace_attr_setstreamfullpolicy(&a, bad_stream[i]), EINVAL);
	}
	CHECK_RC(posix_trace_attr_setmaxdatasize(&a, TRACE_DATA_MAX + 1), EINVAL);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&a, SIZE_MAX), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamsize(&a, 0), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamsize(&a, (1ull << 40) + 1), EINVAL);
	/* ... and the object is as it was */
	CHECK(posix_trace_attr_getinherited(&a, &v) == 0 && v == POSIX_TRACE_CLOSE_FOR_CHILD);
	CHECK(posix_trace_attr_getlogfullpolicy(&a, &v) == 0 && v == POSIX_TRACE_LOOP);
	CHECK(posix_trace_attr_getstreamfullpolicy(&a, &v) == 0 && v == POSIX_TRACE_LOOP);
	CHECK(posix_trace_attr_getmaxdatasize(&a, &sz) == 0 && sz == 1024);
	CHECK(posix_trace_attr_getstreamsize(&a, &sz) == 0 && sz == 1u << 20);
	/* creating with them */
	trace_id_t t;
	CHECK_RC(posix_trace_create(0, NULL, NULL), EINVAL);
	CHECK_RC(posix_trace_create(-1, NULL, &t), ESRCH);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH), 0);
	CHECK_RC(posix_trace_create(0, &a, &t), EINVAL); /* FLUSH without a log */
	CHECK_RC(posix_trace_create_withlog(0, NULL, -1, &t), EBADF);
	CHECK_RC(posix_trace_create_withlog(0, NULL, rd, &t), EBADF);
	CHECK_RC(posix_trace_create_withlog(0, NULL, wr, NULL), EINVAL);
	close(rd);
	close(wr);
	CHECK_RC(posix_trace_attr_destroy(&a), 0);
	CHECK_RC(posix_trace_attr_destroy(&a), EINVAL);
}

static void eventsets(void)
{
	trace_event_set_t s;
	int m;
	trace_event_id_t big[] = { 1024, 100000, UINT_MAX };
	CHECK_RC(posix_trace_eventset_empty(NULL), EINVAL);
	CHECK_RC(posix_trace_eventset_fill(NULL, POSIX_TRACE_ALL_EVENTS), EINVAL);
	CHECK_RC(posix_trace_eventset_fill(&s, 0), EINVAL);
	CHECK_RC(posix_trace_eventset_fill(&s, 4), EINVAL);
	CHECK_RC(posix_trace_eventset_fill(&s, -1), EINVAL);
	CHECK_RC(posix_trace_eventset_add(1, NULL), EINVAL);
	CHECK_RC(posix_trace_eventset_del(1, NULL), EINVAL);
	CHECK_RC(posix_trace_eventset_ismember(1, NULL, &m), EINVAL);
	CHECK_RC(posix_trace_eventset_empty(&s), 0);
	CHECK_RC(posix_trace_eventset_ismember(1, &s, NULL), EINVAL);
	for (int i = 0; i < 3; i++) {
		CHECK_RC(posix_trace_eventset_add(big[i], &s), EINVAL);
		CHECK_RC(posix_trace_eventset_del(big[i], &s), EINVAL);
		CHECK_RC(posix_trace_eventset_ismember(big[i], &s, &m), EINVAL);
	}
	trace_event_set_t e;
	posix_trace_eventset_empty(&e);
	CHECK(memcmp(&s, &e, sizeof s) == 0);
}

/* The functions that take a trace id, with trid: a live stream (kind 1,
 * live), a log opened for reading (2) or neither (0). */
static void trid_calls(trace_id_t trid, int kind, trace_id_t live)
{
	struct posix_trace_event_info ev;
	struct posix_trace_status_info si;
	trace_event_set_t set;
	trace_attr_t at;
	trace_event_id_t id = 0;
	char name[TRACE_EVENT_NAME_MAX + 1];
	unsigned char buf[64];
	size_t len;
	int un;
	struct timespec far = { time(NULL) + 3600, 0 };

	posix_trace_eventset_empty(&set);
	(void)posix_trace_eventid_equal(trid, 1, 1); /* no error defined; must not crash */
	CHECK(posix_trace_eventid_equal(trid, 17, 17) != 0);
	CHECK(posix_trace_eventid_equal(trid, 17, 18) == 0);
	CHECK_RC(posix_trace_flush(trid), EINVAL); /* no stream here has a log */
	CHECK_RC(posix_trace_start(trid), kind == 1 && trid == live ? 0 : EINVAL); /* running */
	if (kind != 1) {
		CHECK_RC(posix_trace_stop(trid), EINVAL);
		CHECK_RC(posix_trace_clear(trid), EINVAL);
		CHECK_RC(posix_trace_shutdown(trid), EINVAL);
		CHECK_RC(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET), EINVAL);
		CHECK_RC(posix_trace_get_filter(trid, &set), EINVAL);
		CHECK_RC(posix_trace_trid_eventid_open(trid, "misuse", &id), EINVAL);
		CHECK_RC(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &un), EINVAL);
		CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len, &un, &far),
		         EINVAL);
	}
	if (kind != 2) {
		CHECK_RC(posix_trace_rewind(trid), EINVAL);
		CHECK_RC(posix_trace_close(trid), EINVAL);
	}
	if (kind == 0) {
		CHECK_RC(posix_trace_get_attr(trid, &at), EINVAL);
		CHECK_RC(posix_trace_get_status(trid, &si), EINVAL);
		CHECK_RC(posix_trace_eventid_get_name(trid, 1, name), EINVAL);
		CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, &un), EINVAL);
		CHECK_RC(posix_trace_eventtypelist_rewind(trid), EINVAL);
		CHECK_RC(posix_trace_getnext_event(trid, &ev, buf, sizeof buf, &len, &un), EINVAL);
		return;
	}
	/* a valid id of either kind: NULL pointers and ids out of range */
	CHECK_RC(posix_trace_get_attr(trid, NULL), EINVAL);
	CHECK_RC(posix_trace_get_status(trid, NULL), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(trid, 1, NULL), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(trid, 1024, name), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(trid, 100000, name), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(trid, UINT_MAX, name), EINVAL);
	CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, NULL, &un), EINVAL);
	CHECK_RC(posix_trace_eventtypelist_getnext_id(trid, &id, NULL), EINVAL);
	CHECK_RC(posix_trace_getnext_event(trid, NULL, buf, sizeof buf, &len, &un), EINVAL);
	CHECK_RC(posix_trace_getnext_event(trid, &ev, NULL, 8, &len, &un), EINVAL);
	CHECK_RC(posix_trace_getnext_event(trid, &ev, buf, sizeof buf, NULL, &un), EINVAL);
	CHECK_RC(posix_trace_getnext_event(trid, &ev, buf, sizeof buf, &len, NULL), EINVAL);
	if (kind == 1) {
		CHECK_RC(posix_trace_set_filter(trid, NULL, POSIX_TRACE_SET_EVENTSET), EINVAL);
		CHECK_RC(posix_trace_set_filter(trid, &set, 0), EINVAL);
		CHECK_RC(posix_trace_set_filter(trid, &set, 4), EINVAL);
		CHECK_RC(posix_trace_set_filter(trid, &set, -1), EINVAL);
		CHECK_RC(posix_trace_get_filter(trid, NULL), EINVAL);
		CHECK_RC(posix_trace_trid_eventid_open(trid, NULL, &id), EINVAL);
		CHECK_RC(posix_trace_trid_eventid_open(trid, "", &id), EINVAL);
		CHECK_RC(posix_trace_trid_eventid_open(trid, "misuse", NULL), EINVAL);
		CHECK_RC(posix_trace_trygetnext_event(trid, NULL, buf, sizeof buf, &len, &un), EINVAL);
		CHECK_RC(posix_trace_trygetnext_event(trid, &ev, NULL, 8, &len, &un), EINVAL);
		CHECK_RC(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, NULL, &un), EINVAL);
		CHECK_RC(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, NULL), EINVAL);
		CHECK_RC(posix_trace_timedgetnext_event(trid, NULL, buf, 8, &len, &un, &far), EINVAL);
		CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, buf, 8, &len, NULL, &far), EINVAL);
	}
}

/* A stream with nothing in it (never started): deadlines are checked. */
static void deadlines(void)
{
	trace_id_t e;
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len;
	int un;
	struct timespec bad1 = { time(NULL) + 1, -1 }, bad2 = { time(NULL) + 1, 1000000000 };
	struct timespec past = { 1, 0 };
	REQUIRE(posix_trace_create(0, NULL, &e) == 0);
	CHECK_RC(posix_trace_timedgetnext_event(e, &ev, buf, sizeof buf, &len, &un, NULL), EINVAL);
	CHECK_RC(posix_trace_timedgetnext_event(e, &ev, buf, sizeof buf, &len, &un, &bad1), EINVAL);
	CHECK_RC(posix_trace_timedgetnext_event(e, &ev, buf, sizeof buf, &len, &un, &bad2), EINVAL);
	CHECK_RC(posix_trace_timedgetnext_event(e, &ev, buf, sizeof buf, &len, &un, &past),
	         ETIMEDOUT);
	CHECK_RC(posix_trace_shutdown(e), 0);
}

/* A log of 10 events of ev_id, opened for reading. */
static trace_id_t make_log(int *fdp)
{
	trace_id_t w, l;
	int fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(posix_trace_create_withlog(0, NULL, fd, &w) == 0);
	REQUIRE(posix_trace_start(w) == 0);
	for (int i = 0; i < 10; i++)
		posix_trace_event(ev_id, &i, sizeof i);
	REQUIRE(posix_trace_shutdown(w) == 0);
	REQUIRE(posix_trace_open(fd, &l) == 0);
	*fdp = fd;
	return l;
}

static void null_data_child(void)
{
	int st;
	fflush(stdout);
	pid_t p = fork();
	REQUIRE(p >= 0);
	if (p == 0) {
		trace_id_t t;
		alarm(10);
		if (posix_trace_create(0, NULL, &t) || posix_trace_start(t))
			_exit(2);
		posix_trace_event(ev_id, NULL, 8);
		posix_trace_event(ev_id, NULL, SIZE_MAX);
		_exit(0);
	}
	REQUIRE(waitpid(p, &st, 0) == p);
	if (!WIFEXITED(st))
		fprintf(stderr, "posix_trace_event(id, NULL, 8): killed by signal %d\n", WTERMSIG(st));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	T_BEGIN(60);
	trace_attr_t a;
	trace_id_t s, d, c;
	int lfd, cfd;

	REQUIRE(posix_trace_eventid_open("misuse", &ev_id) == 0);
	CHECK_RC(posix_trace_eventid_open(NULL, &ev_id), EINVAL);
	CHECK_RC(posix_trace_eventid_open("", &ev_id), EINVAL);
	CHECK_RC(posix_trace_eventid_open("misuse", NULL), EINVAL);
	CHECK_RC(posix_trace_eventid_open(
	             "a-name-of-sixty-four-characters-is-one-too-long-for-the-buffer!!", &ev_id),
	         ENAMETOOLONG);
	REQUIRE(posix_trace_create(0, NULL, &d) == 0);
	REQUIRE(posix_trace_shutdown(d) == 0);
	trace_id_t l = make_log(&lfd); /* (before S: its events would go to S too) */
	c = make_log(&cfd);
	REQUIRE(posix_trace_close(c) == 0);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&a, MAXDATA) == 0);
	REQUIRE(posix_trace_create(0, &a, &s) == 0);
	REQUIRE(posix_trace_start(s) == 0);
	for (int i = 0; i < N; i++)
		posix_trace_event(ev_id, &i, sizeof i);
	trace_id_t inv[7] = { 0, -1, 12345, INT_MIN, INT_MAX, d, c };

	attrs();
	eventsets();
	for (int i = 0; i < 7; i++)
		trid_calls(inv[i], 0, s);
	trid_calls(s, 1, s);
	trid_calls(l, 2, s);
	deadlines();

	/* events that are not recorded, and two odd ones that are */
	unsigned char big[MAXDATA];
	memset(big, 7, sizeof big);
	for (trace_event_id_t id = 0; id < PT_SYS_IDS; id++)
		posix_trace_event(id, big, 4);
	posix_trace_event(1024, big, 4);
	posix_trace_event(100000, big, 4);
	posix_trace_event(UINT_MAX, big, 4);
	posix_trace_event(ev_id, NULL, 0);
	posix_trace_event(ev_id, big, SIZE_MAX);
	for (int i = N; i < 2 * N; i++)
		posix_trace_event(ev_id, &i, sizeof i);
	CHECK_RC(posix_trace_stop(s), 0);

	trace_event_id_t ids[2 * N + 8];
	int user, first, last, order;
	int n = read_all(s, 0, &user, &first, &last, &order, ids, 2 * N + 8);
	CHECK_EQ(n, 2 * N + 4);
	CHECK_EQ(user, 2 * N); /* the 4-byte ones */
	CHECK(first == 0 && last == 2 * N - 1 && order);
	if (n == 2 * N + 4) {
		CHECK_EQ(ids[0], POSIX_TRACE_START);
		CHECK_EQ(ids[N + 1], ev_id); /* NULL, 0 */
		CHECK_EQ(ids[N + 2], ev_id); /* SIZE_MAX */
		CHECK_EQ(ids[n - 1], POSIX_TRACE_STOP);
	}
	trace_event_set_t f, e;
	posix_trace_eventset_empty(&e);
	CHECK_RC(posix_trace_get_filter(s, &f), 0);
	CHECK(memcmp(&f, &e, sizeof f) == 0);
	struct posix_trace_status_info si;
	CHECK_RC(posix_trace_get_status(s, &si), 0);
	CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_RC(posix_trace_shutdown(s), 0);

	/* the odd ones, exactly */
	REQUIRE(posix_trace_create(0, &a, &s) == 0);
	REQUIRE(posix_trace_start(s) == 0);
	posix_trace_event(ev_id, NULL, 0);
	posix_trace_event(ev_id, big, SIZE_MAX);
	for (int k = 0; k < 3; k++) {
		struct posix_trace_event_info ev;
		unsigned char buf[2 * MAXDATA];
		size_t len;
		int un = -1;
		CHECK_RC(posix_trace_trygetnext_event(s, &ev, buf, sizeof buf, &len, &un), 0);
		CHECK_EQ(un, 0);
		if (k == 1)
			CHECK(ev.posix_event_id == ev_id && len == 0 &&
			      ev.posix_truncation_status == POSIX_TRACE_NOT_TRUNCATED);
		if (k == 2)
			CHECK(ev.posix_event_id == ev_id && len == MAXDATA &&
			      ev.posix_truncation_status == POSIX_TRACE_TRUNCATED_RECORD &&
			      memcmp(buf, big, MAXDATA) == 0);
	}
	CHECK_RC(posix_trace_shutdown(s), 0);
	posix_trace_attr_destroy(&a);

	/* the log: still its 10 events, twice */
	for (int k = 0; k < 2; k++) {
		n = read_all(l, 1, &user, &first, &last, &order, ids, 2 * N + 8);
		CHECK(user == 10 && first == 0 && last == 9 && order);
		CHECK_RC(posix_trace_rewind(l), 0);
	}
	CHECK_RC(posix_trace_close(l), 0);
	CHECK_RC(posix_trace_close(l), EINVAL);
	int rc = posix_trace_open(-1, &l);
	CHECK(rc == EBADF || rc == EINVAL);
	CHECK_RC(posix_trace_open(lfd, NULL), EINVAL);
	int dn = open("/dev/null", O_RDONLY);
	CHECK_RC(posix_trace_open(dn, &l), EINVAL);
	close(dn);
	close(lfd);
	close(cfd);
	null_data_child();
	T_END();
}
