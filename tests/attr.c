/*
 * attr.c -- the trace attributes object (posix_trace_attr_*).  Checks the
 * defaults after posix_trace_attr_init() against docs/implementation-defined.md,
 * a set/get round trip and every accepted and rejected value of each
 * settable attribute (a rejected value leaves the attribute unchanged), that
 * every function fails with EINVAL on NULL pointers and on an object that was
 * never initialized or was destroyed (destroy twice included), trace-name
 * truncation to 63 characters, the event size formulas
 * (getmaxusereventsize = 16 + round_up_8(min(len, max-data-size)),
 * getmaxsystemeventsize = 272), and, through posix_trace_get_attr(), that a
 * stream keeps the attributes it was created with when the object changes
 * later, that its creation time lies between two CLOCK_REALTIME readings
 * taken around posix_trace_create(), and that its default policy is LOOP.
 * The no-loss extension (posixtrace_attr_setnoloss/getnoloss): off by
 * default, 0..60000 ms accepted, EINVAL beyond and on bad objects, the
 * size of trace_attr_t unchanged by it, create with it on a stream that is
 * not FLUSH fails with EINVAL, and get_attr gives the stream's bound back.
 */
#include <stdint.h>
#include <time.h>
#include <trace.h>
#include "t.h"

#define MiB ((size_t)1 << 20)

static size_t round8(size_t n) { return (n + 7) & ~(size_t)7; }

static int ts_le(struct timespec a, struct timespec b)
{
	return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec <= b.tv_nsec);
}

/* Every function of the family on an object that must be rejected. */
static void check_all_einval(trace_attr_t *a)
{
	char buf[TRACE_NAME_MAX];
	struct timespec ts;
	size_t sz;
	int v;

	CHECK_RC(posix_trace_attr_getclockres(a, &ts), EINVAL);
	CHECK_RC(posix_trace_attr_getcreatetime(a, &ts), EINVAL);
	CHECK_RC(posix_trace_attr_getgenversion(a, buf), EINVAL);
	CHECK_RC(posix_trace_attr_getname(a, buf), EINVAL);
	CHECK_RC(posix_trace_attr_setname(a, "x"), EINVAL);
	CHECK_RC(posix_trace_attr_getinherited(a, &v), EINVAL);
	CHECK_RC(posix_trace_attr_setinherited(a, POSIX_TRACE_CLOSE_FOR_CHILD), EINVAL);
	CHECK_RC(posix_trace_attr_getlogfullpolicy(a, &v), EINVAL);
	CHECK_RC(posix_trace_attr_setlogfullpolicy(a, POSIX_TRACE_LOOP), EINVAL);
	CHECK_RC(posix_trace_attr_getstreamfullpolicy(a, &v), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(a, POSIX_TRACE_LOOP), EINVAL);
	CHECK_RC(posix_trace_attr_getlogsize(a, &sz), EINVAL);
	CHECK_RC(posix_trace_attr_setlogsize(a, 4096), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxdatasize(a, &sz), EINVAL);
	CHECK_RC(posix_trace_attr_setmaxdatasize(a, 16), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxsystemeventsize(a, &sz), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxusereventsize(a, 8, &sz), EINVAL);
	CHECK_RC(posix_trace_attr_getstreamsize(a, &sz), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamsize(a, 4096), EINVAL);
	CHECK_RC(posix_trace_attr_destroy(a), EINVAL);
}

static void check_defaults(const trace_attr_t *a, int created)
{
	char buf[TRACE_NAME_MAX];
	struct timespec ts;
	size_t sz;
	int v;

	memset(buf, 'z', sizeof buf);
	CHECK_RC(posix_trace_attr_getname(a, buf), 0);
	CHECK_EQ(strcmp(buf, ""), 0);
	memset(buf, 'z', sizeof buf);
	CHECK_RC(posix_trace_attr_getgenversion(a, buf), 0);
	CHECK(memchr(buf, 0, sizeof buf) != NULL);
	CHECK(strlen(buf) > 0);
	CHECK_EQ(strcmp(buf, "posixtrace 0.1.0"), 0);
	CHECK_RC(posix_trace_attr_getstreamsize(a, &sz), 0);
	CHECK_EQ(sz, MiB);
	v = -1;
	CHECK_RC(posix_trace_attr_getstreamfullpolicy(a, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_LOOP);
	CHECK_RC(posix_trace_attr_getmaxdatasize(a, &sz), 0);
	CHECK_EQ(sz, 1024);
	CHECK_RC(posix_trace_attr_getlogsize(a, &sz), 0);
	CHECK_EQ(sz, 16 * MiB);
	v = -1;
	CHECK_RC(posix_trace_attr_getlogfullpolicy(a, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_LOOP);
	v = -1;
	CHECK_RC(posix_trace_attr_getinherited(a, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_CLOSE_FOR_CHILD);
	ts.tv_sec = ts.tv_nsec = 0;
	CHECK_RC(posix_trace_attr_getclockres(a, &ts), 0);
	CHECK(ts.tv_sec > 0 || ts.tv_nsec > 0);
	CHECK(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
	if (!created) {
		ts.tv_sec = ts.tv_nsec = 77;
		CHECK_RC(posix_trace_attr_getcreatetime(a, &ts), 0);
		CHECK_EQ(ts.tv_sec, 0);
		CHECK_EQ(ts.tv_nsec, 0);
	}
}

static void check_setters(trace_attr_t *a)
{
	char buf[TRACE_NAME_MAX], longname[200];
	size_t sz;
	int v;

	/* trace-name: round trip, 63 characters kept, longer truncated */
	CHECK_RC(posix_trace_attr_setname(a, "my trace"), 0);
	CHECK_RC(posix_trace_attr_getname(a, buf), 0);
	CHECK_EQ(strcmp(buf, "my trace"), 0);
	memset(longname, 'n', sizeof longname);
	longname[63] = 0;
	CHECK_RC(posix_trace_attr_setname(a, longname), 0);
	CHECK_RC(posix_trace_attr_getname(a, buf), 0);
	CHECK_EQ(strcmp(buf, longname), 0);
	longname[63] = 'n';
	longname[64] = 0;
	CHECK_RC(posix_trace_attr_setname(a, longname), 0);
	CHECK_RC(posix_trace_attr_getname(a, buf), 0);
	CHECK_EQ(strlen(buf), 63);
	CHECK_EQ(strncmp(buf, longname, 63), 0);
	longname[64] = 'n';
	longname[199] = 0;
	CHECK_RC(posix_trace_attr_setname(a, longname), 0);
	CHECK_RC(posix_trace_attr_getname(a, buf), 0);
	CHECK_EQ(strlen(buf), 63);
	CHECK_RC(posix_trace_attr_setname(a, ""), 0);
	CHECK_RC(posix_trace_attr_getname(a, buf), 0);
	CHECK_EQ(strcmp(buf, ""), 0);

	/* stream-min-size: 1 .. 2^40 */
	static const size_t ok_sizes[] = { 1, 7, 4096, 3 * MiB + 5, (size_t)1 << 40 };
	for (size_t i = 0; i < sizeof ok_sizes / sizeof ok_sizes[0]; i++) {
		CHECK_RC(posix_trace_attr_setstreamsize(a, ok_sizes[i]), 0);
		CHECK_RC(posix_trace_attr_getstreamsize(a, &sz), 0);
		CHECK_EQ(sz, ok_sizes[i]);
	}
	CHECK_RC(posix_trace_attr_setstreamsize(a, 0), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamsize(a, ((size_t)1 << 40) + 1), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamsize(a, SIZE_MAX), EINVAL);
	CHECK_RC(posix_trace_attr_getstreamsize(a, &sz), 0);
	CHECK_EQ(sz, (size_t)1 << 40);

	/* stream-full-policy: LOOP, UNTIL_FULL, FLUSH */
	static const int ok_spol[] = { POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_FLUSH, POSIX_TRACE_LOOP };
	for (int i = 0; i < 3; i++) {
		CHECK_RC(posix_trace_attr_setstreamfullpolicy(a, ok_spol[i]), 0);
		CHECK_RC(posix_trace_attr_getstreamfullpolicy(a, &v), 0);
		CHECK_EQ(v, ok_spol[i]);
	}
	static const int bad_spol[] = { 0, -1, POSIX_TRACE_APPEND, 5, 1000 };
	for (int i = 0; i < 5; i++)
		CHECK_RC(posix_trace_attr_setstreamfullpolicy(a, bad_spol[i]), EINVAL);
	CHECK_RC(posix_trace_attr_getstreamfullpolicy(a, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_LOOP);

	/* max-data-size: 0 .. TRACE_DATA_MAX */
	static const size_t ok_mds[] = { 0, 1, 100, TRACE_DATA_MAX, 512 };
	for (int i = 0; i < 5; i++) {
		CHECK_RC(posix_trace_attr_setmaxdatasize(a, ok_mds[i]), 0);
		CHECK_RC(posix_trace_attr_getmaxdatasize(a, &sz), 0);
		CHECK_EQ(sz, ok_mds[i]);
	}
	CHECK_RC(posix_trace_attr_setmaxdatasize(a, TRACE_DATA_MAX + 1), EINVAL);
	CHECK_RC(posix_trace_attr_setmaxdatasize(a, SIZE_MAX), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxdatasize(a, &sz), 0);
	CHECK_EQ(sz, 512);

	/* log-max-size: any value */
	static const size_t ok_logs[] = { 0, 1, 12345, SIZE_MAX, 8 * MiB };
	for (int i = 0; i < 5; i++) {
		CHECK_RC(posix_trace_attr_setlogsize(a, ok_logs[i]), 0);
		CHECK_RC(posix_trace_attr_getlogsize(a, &sz), 0);
		CHECK_EQ(sz, ok_logs[i]);
	}

	/* log-full-policy: LOOP, UNTIL_FULL, APPEND */
	static const int ok_lpol[] = { POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND, POSIX_TRACE_LOOP };
	for (int i = 0; i < 3; i++) {
		CHECK_RC(posix_trace_attr_setlogfullpolicy(a, ok_lpol[i]), 0);
		CHECK_RC(posix_trace_attr_getlogfullpolicy(a, &v), 0);
		CHECK_EQ(v, ok_lpol[i]);
	}
	static const int bad_lpol[] = { 0, -1, POSIX_TRACE_FLUSH, 5, 1000 };
	for (int i = 0; i < 5; i++)
		CHECK_RC(posix_trace_attr_setlogfullpolicy(a, bad_lpol[i]), EINVAL);
	CHECK_RC(posix_trace_attr_getlogfullpolicy(a, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_LOOP);

	/* inheritance: CLOSE_FOR_CHILD, INHERITED */
	CHECK_RC(posix_trace_attr_setinherited(a, POSIX_TRACE_INHERITED), 0);
	CHECK_RC(posix_trace_attr_getinherited(a, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_INHERITED);
	CHECK_RC(posix_trace_attr_setinherited(a, 2), EINVAL);
	CHECK_RC(posix_trace_attr_setinherited(a, -1), EINVAL);
	CHECK_RC(posix_trace_attr_getinherited(a, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_INHERITED);
	CHECK_RC(posix_trace_attr_setinherited(a, POSIX_TRACE_CLOSE_FOR_CHILD), 0);
	CHECK_RC(posix_trace_attr_getinherited(a, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_CLOSE_FOR_CHILD);
}

static void check_null_outputs(trace_attr_t *a)
{
	CHECK_RC(posix_trace_attr_getclockres(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getcreatetime(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getgenversion(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getname(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_setname(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getinherited(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getlogfullpolicy(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getstreamfullpolicy(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getlogsize(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxdatasize(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxsystemeventsize(a, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getmaxusereventsize(a, 8, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_getstreamsize(a, NULL), EINVAL);
}

static void check_event_sizes(trace_attr_t *a)
{
	static const size_t mds[] = { 0, 1, 8, 13, 1024, TRACE_DATA_MAX };
	static const size_t lens[] = { 0, 1, 7, 8, 9, 13, 100, 1023, 1024, 1025, 70000 };
	size_t sz;

	for (size_t i = 0; i < sizeof mds / sizeof mds[0]; i++) {
		CHECK_RC(posix_trace_attr_setmaxdatasize(a, mds[i]), 0);
		for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++) {
			size_t n = lens[j] < mds[i] ? lens[j] : mds[i];
			sz = 0;
			CHECK_RC(posix_trace_attr_getmaxusereventsize(a, lens[j], &sz), 0);
			if (sz != 16 + round8(n))
				fprintf(stderr, "max-data-size %zu, data_len %zu:\n", mds[i], lens[j]);
			CHECK_EQ(sz, 16 + round8(n));
		}
		sz = 0;
		CHECK_RC(posix_trace_attr_getmaxsystemeventsize(a, &sz), 0);
		CHECK_EQ(sz, 272);
		CHECK_EQ(sz, 16 + 2 * sizeof(trace_event_set_t));
	}
}

/* A stream keeps its own copy of the attributes. */
static void check_noloss(void)
{
	trace_attr_t a, zero;
	unsigned ms = 7;
	trace_id_t trid;

	/* the extension lives in the reserved words: the ABI size stays */
	CHECK_EQ(sizeof(trace_attr_t), 4 * sizeof(int) + 3 * sizeof(size_t) +
	                               2 * sizeof(struct timespec) + 2 * TRACE_NAME_MAX +
	                               4 * sizeof(long));
	memset(&zero, 0, sizeof zero);
	CHECK_RC(posixtrace_attr_setnoloss(&zero, 10), EINVAL);
	CHECK_RC(posixtrace_attr_getnoloss(&zero, &ms), EINVAL);
	CHECK_RC(posixtrace_attr_setnoloss(NULL, 10), EINVAL);
	CHECK_RC(posixtrace_attr_getnoloss(NULL, &ms), EINVAL);
	CHECK_RC(posix_trace_attr_init(&a), 0);
	CHECK_RC(posixtrace_attr_getnoloss(&a, NULL), EINVAL);
	CHECK_RC(posixtrace_attr_getnoloss(&a, &ms), 0);
	CHECK_EQ(ms, 0); /* off by default */
	CHECK_RC(posixtrace_attr_setnoloss(&a, 1), 0);
	CHECK_RC(posixtrace_attr_getnoloss(&a, &ms), 0);
	CHECK_EQ(ms, 1);
	CHECK_RC(posixtrace_attr_setnoloss(&a, 60000), 0);
	CHECK_RC(posixtrace_attr_setnoloss(&a, 60001), EINVAL);
	CHECK_RC(posixtrace_attr_setnoloss(&a, UINT32_MAX), EINVAL);
	CHECK_RC(posixtrace_attr_getnoloss(&a, &ms), 0);
	CHECK_EQ(ms, 60000); /* a rejected value leaves it unchanged */
	CHECK_RC(posixtrace_attr_setnoloss(&a, 0), 0);
	CHECK_RC(posixtrace_attr_getnoloss(&a, &ms), 0);
	CHECK_EQ(ms, 0);

	/* only FLUSH has a flusher to wait for: LOOP (the default without a
	 * log) and UNTIL_FULL with the mode on are refused */
	CHECK_RC(posixtrace_attr_setnoloss(&a, 250), 0);
	CHECK_RC(posix_trace_create(0, &a, &trid), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL), 0);
	CHECK_RC(posix_trace_create(0, &a, &trid), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH), 0);
	FILE *f = tmpfile();
	REQUIRE(f);
	CHECK_RC(posix_trace_create_withlog(0, &a, fileno(f), &trid), 0);
	trace_attr_t got;
	CHECK_RC(posix_trace_get_attr(trid, &got), 0);
	CHECK_RC(posixtrace_attr_getnoloss(&got, &ms), 0);
	CHECK_EQ(ms, 250);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	/* a stream without the mode reports 0 */
	CHECK_RC(posixtrace_attr_setnoloss(&a, 0), 0);
	CHECK_RC(posix_trace_create_withlog(0, &a, fileno(f), &trid), 0);
	CHECK_RC(posix_trace_get_attr(trid, &got), 0);
	CHECK_RC(posixtrace_attr_getnoloss(&got, &ms), 0);
	CHECK_EQ(ms, 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	fclose(f);
	CHECK_RC(posix_trace_attr_destroy(&a), 0);
	CHECK_RC(posixtrace_attr_setnoloss(&a, 10), EINVAL); /* destroyed */
}

static void check_stream_attrs(void)
{
	trace_attr_t a, got;
	trace_id_t trid = 0;
	struct timespec before, after, ct, res;
	char buf[TRACE_NAME_MAX];
	size_t sz;
	int v;

	CHECK_RC(posix_trace_attr_init(&a), 0);
	CHECK_RC(posix_trace_attr_setname(&a, "stream one"), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&a, 64 * 1024), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL), 0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&a, 100), 0);
	CHECK_RC(posix_trace_attr_setlogsize(&a, 2 * MiB), 0);
	CHECK_RC(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND), 0);

	clock_gettime(CLOCK_REALTIME, &before);
	CHECK_RC(posix_trace_create(0, &a, &trid), 0);
	clock_gettime(CLOCK_REALTIME, &after);
	CHECK(trid != 0);

	/* the object passed in is not written to */
	CHECK_RC(posix_trace_attr_getcreatetime(&a, &ct), 0);
	CHECK_EQ(ct.tv_sec, 0);
	CHECK_EQ(ct.tv_nsec, 0);

	/* change everything, then destroy the object */
	CHECK_RC(posix_trace_attr_setname(&a, "changed"), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&a, 128 * 1024), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP), 0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&a, 200), 0);
	CHECK_RC(posix_trace_attr_setlogsize(&a, 3 * MiB), 0);
	CHECK_RC(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_UNTIL_FULL), 0);
	CHECK_RC(posix_trace_attr_destroy(&a), 0);

	CHECK_RC(posix_trace_attr_init(&got), 0);
	CHECK_RC(posix_trace_get_attr(trid, &got), 0);
	CHECK_RC(posix_trace_attr_getname(&got, buf), 0);
	CHECK_EQ(strcmp(buf, "stream one"), 0);
	CHECK_RC(posix_trace_attr_getstreamsize(&got, &sz), 0);
	CHECK_EQ(sz, 64 * 1024);
	CHECK_RC(posix_trace_attr_getstreamfullpolicy(&got, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_UNTIL_FULL);
	CHECK_RC(posix_trace_attr_getmaxdatasize(&got, &sz), 0);
	CHECK_EQ(sz, 100);
	CHECK_RC(posix_trace_attr_getlogsize(&got, &sz), 0);
	CHECK_EQ(sz, 2 * MiB);
	CHECK_RC(posix_trace_attr_getlogfullpolicy(&got, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_APPEND);
	CHECK_RC(posix_trace_attr_getinherited(&got, &v), 0);
	CHECK_EQ(v, POSIX_TRACE_CLOSE_FOR_CHILD);
	CHECK_RC(posix_trace_attr_getgenversion(&got, buf), 0);
	CHECK_EQ(strcmp(buf, "posixtrace 0.1.0"), 0);
	CHECK_RC(posix_trace_attr_getclockres(&got, &res), 0);
	CHECK(res.tv_sec > 0 || res.tv_nsec > 0);
	CHECK_RC(posix_trace_attr_getmaxusereventsize(&got, 1000, &sz), 0);
	CHECK_EQ(sz, 16 + 104);
	CHECK_RC(posix_trace_attr_getcreatetime(&got, &ct), 0);
	CHECK(ts_le(before, ct));
	CHECK(ts_le(ct, after));
	CHECK_RC(posix_trace_attr_destroy(&got), 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);

	/* default attributes (NULL, or a fresh object): LOOP, and the defaults */
	for (int pass = 0; pass < 2; pass++) {
		CHECK_RC(posix_trace_attr_init(&a), 0);
		CHECK_RC(posix_trace_create(0, pass ? &a : NULL, &trid), 0);
		CHECK_RC(posix_trace_attr_destroy(&a), 0);
		CHECK_RC(posix_trace_attr_init(&got), 0);
		CHECK_RC(posix_trace_get_attr(trid, &got), 0);
		check_defaults(&got, 1);
		CHECK_RC(posix_trace_attr_getcreatetime(&got, &ct), 0);
		CHECK(ct.tv_sec > 0);
		CHECK_RC(posix_trace_attr_destroy(&got), 0);
		CHECK_RC(posix_trace_shutdown(trid), 0);
	}
}

int main(void)
{
	trace_attr_t a, zero;

	T_BEGIN(60);

	CHECK_RC(posix_trace_attr_init(NULL), EINVAL);
	check_all_einval(NULL);

	memset(&zero, 0, sizeof zero);
	check_all_einval(&zero);

	CHECK_RC(posix_trace_attr_init(&a), 0);
	check_defaults(&a, 0);
	check_null_outputs(&a);
	check_setters(&a);
	check_event_sizes(&a);
	CHECK_RC(posix_trace_attr_destroy(&a), 0);
	check_all_einval(&a);           /* destroyed; includes a second destroy */

	/* a destroyed object can be initialized again, with the defaults */
	CHECK_RC(posix_trace_attr_init(&a), 0);
	check_defaults(&a, 0);
	CHECK_RC(posix_trace_attr_destroy(&a), 0);
	CHECK_RC(posix_trace_attr_destroy(&a), EINVAL);

	check_stream_attrs();
	check_noloss();
	T_END();
}
