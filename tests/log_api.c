/*
 * log_api.c -- the analyzer's side of a log written by this process
 * (posix_trace_create_withlog(0, ...)).  (File descriptors, create and
 * open errors, pipes and sockets: log_fds.c.)
 *
 * A stream with a log is read only by its flusher: getnext, trygetnext,
 * timedgetnext, rewind, close are EINVAL on it.
 * Round trip: START, user events of every length (0 .. 3 x max-data-size,
 * truncated at record time), two threads, an unregistered id, the unnamed
 * id, FILTER on a running stream, a filtered-out id, two flushes (each a
 * FLUSH_START/FLUSH_STOP pair after the events before it), STOP, events
 * while stopped (absent), shutdown (its own final flush pair).  The opened
 * log gives back exactly that sequence: ids, pid, thread, program address,
 * CLOCK_REALTIME timestamps within the readings taken around each call and
 * never decreasing, data and truncation status (system events whole, like
 * the live stream gives them: START's filter is 128 bytes, FILTER's two
 * sets 256, more than max-data-size 100); then unavailable.  get_attr =
 * the live stream's attributes; get_status the final one, twice the same;
 * the event-type list = the named ids that appear, ascending, again after
 * eventtypelist_rewind; names of the user and system events, EINVAL for
 * an unnamed id; a second open of the same log has its own cursor and,
 * with a 10-byte buffer, gets each payload's prefix with TRUNCATED_READ;
 * posix_trace_rewind gives the same events again; a fork()ed child reads
 * them all again through its copy of the log's id, the parent's cursor
 * unmoved; controller functions on the log are EINVAL; after
 * posix_trace_close every function is EINVAL.
 */
#include <sys/wait.h>
#include "log_util.h"
#include "helpers.h"

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#define M 100         /* max-data-size: smaller than the FILTER event's data */
#define N_MAIN 1500
#define N_THR 500

static char path[256];
static volatile int calls;

NOINLINE static void record_here(trace_event_id_t id, const void *data, size_t len)
{
	posix_trace_event(id, data, len);
	calls++;
}

static int in_record_here(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, f = (uintptr_t)record_here;
	return a > f && a - f < 4096;
}

/* ------------------------------------------------- what the log must hold */
enum { BY_MAIN, BY_THREAD, BY_ANY };
struct want {
	trace_event_id_t id;
	int by;
	size_t len;      /* as recorded (before max-data-size) */
	int trunc;
	long long lo, hi;
	unsigned char data[2 * sizeof(trace_event_set_t)];
};
static struct want W[4096];
static int nw;
static pthread_t worker;

static void want(trace_event_id_t id, int by, const void *data, size_t len, long long lo)
{
	REQUIRE(nw < 4096);
	struct want *w = &W[nw++];
	w->id = id, w->by = by, w->lo = lo - LU_SLACK_NS, w->hi = lu_now() + LU_SLACK_NS;
	w->trunc = id >= PT_SYS_IDS && len > M ? POSIX_TRACE_TRUNCATED_RECORD : POSIX_TRACE_NOT_TRUNCATED;
	w->len = id >= PT_SYS_IDS && len > M ? M : len;
	if (w->len)
		memcpy(w->data, data, w->len < sizeof w->data ? w->len : sizeof w->data);
}

static void rec(trace_event_id_t id, int by, const void *data, size_t len)
{
	long long lo = lu_now();
	record_here(id, data, len);
	want(id, by, data, len, lo);
}

static trace_event_id_t id_b;

static void *thread_main(void *arg)
{
	unsigned char p[M];
	(void)arg;
	for (uint32_t i = 0; i < N_THR; i++) {
		size_t len = lu_len(i, M);
		lu_make(p, i, 1, len);
		rec(id_b, BY_THREAD, p, len);
	}
	return NULL;
}

/* The n events loaded against W[]; stops at the first misplaced id. */
static void compare(int n)
{
	int bad = 0;
	CHECK_EQ(n, nw);
	for (int i = 0; i < n && i < nw && bad < 5; i++) {
		struct lu_ev *e = &lu_ev[i];
		struct want *w = &W[i];
		size_t cmp = w->len < sizeof w->data ? w->len : sizeof w->data;
		if (e->id != w->id) {
			fprintf(stderr, "  event %d: id %u, expected %u\n", i, e->id, w->id);
			CHECK(!"the log holds another sequence of events");
			return;
		}
		int ok = e->pid == getpid() && e->ts >= w->lo && e->ts <= w->hi &&
		         (i == 0 || e->ts >= lu_ev[i - 1].ts);
		if (w->by == BY_MAIN)
			ok &= pthread_equal(e->thr, pthread_self());
		if (w->by == BY_THREAD)
			ok &= pthread_equal(e->thr, worker);
		if (w->id >= PT_SYS_IDS)
			ok &= in_record_here(e->addr);
		ok &= e->len == w->len && e->trunc == w->trunc;
		ok &= memcmp(e->data, w->data, e->len < cmp ? e->len : cmp) == 0;
		if (!ok) {
			bad++;
			fprintf(stderr, "  event %d id %u: pid %d ts %lld in [%lld, %lld] len %zu/%zu "
			        "trunc %d/%d addr %p\n", i, e->id, (int)e->pid, e->ts, w->lo, w->hi,
			        e->len, w->len, e->trunc, w->trunc, e->addr);
		}
	}
	CHECK_EQ(bad, 0);
}

/* ------------------------------------------------------------ round trip */
static void dead_log(trace_id_t log)
{
	struct posix_trace_event_info ev;
	struct posix_trace_status_info si;
	trace_event_id_t id;
	trace_attr_t a;
	char buf[TRACE_EVENT_NAME_MAX + 1];
	size_t len;
	int un;

	CHECK_RC(posix_trace_close(log), EINVAL);
	CHECK_RC(posix_trace_rewind(log), EINVAL);
	CHECK_RC(posix_trace_getnext_event(log, &ev, buf, sizeof buf, &len, &un), EINVAL);
	CHECK_RC(posix_trace_get_attr(log, &a), EINVAL);
	CHECK_RC(posix_trace_get_status(log, &si), EINVAL);
	CHECK_RC(posix_trace_eventtypelist_getnext_id(log, &id, &un), EINVAL);
	CHECK_RC(posix_trace_eventtypelist_rewind(log), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(log, POSIX_TRACE_START, buf), EINVAL);
}

/* Controller functions and the live-stream readers on a log, and the
 * analyzer functions on a live stream with a log: EINVAL. */
static void wrong_kind(trace_id_t log, trace_id_t live)
{
	struct posix_trace_event_info ev;
	struct timespec ts = { 0, 0 };
	trace_event_set_t set;
	trace_event_id_t id;
	char buf[64];
	size_t len;
	int un;

	posix_trace_eventset_empty(&set);
	if (log) {
		CHECK_RC(posix_trace_start(log), EINVAL);
		CHECK_RC(posix_trace_stop(log), EINVAL);
		CHECK_RC(posix_trace_flush(log), EINVAL);
		CHECK_RC(posix_trace_clear(log), EINVAL);
		CHECK_RC(posix_trace_set_filter(log, &set, POSIX_TRACE_SET_EVENTSET), EINVAL);
		CHECK_RC(posix_trace_get_filter(log, &set), EINVAL);
		CHECK_RC(posix_trace_trygetnext_event(log, &ev, buf, sizeof buf, &len, &un), EINVAL);
		CHECK_RC(posix_trace_timedgetnext_event(log, &ev, buf, sizeof buf, &len, &un, &ts),
		         EINVAL);
		CHECK_RC(posix_trace_trid_eventid_open(log, "log-api/x", &id), EINVAL);
		CHECK_RC(posix_trace_shutdown(log), EINVAL);
	}
	if (live) {
		clock_gettime(CLOCK_REALTIME, &ts);
		CHECK_RC(posix_trace_getnext_event(live, &ev, buf, sizeof buf, &len, &un), EINVAL);
		CHECK_RC(posix_trace_trygetnext_event(live, &ev, buf, sizeof buf, &len, &un), EINVAL);
		CHECK_RC(posix_trace_timedgetnext_event(live, &ev, buf, sizeof buf, &len, &un, &ts),
		         EINVAL);
		CHECK_RC(posix_trace_rewind(live), EINVAL);
		CHECK_RC(posix_trace_close(live), EINVAL);
	}
}

/* The attributes of the log are those of the stream that wrote it. */
static void same_attr(const trace_attr_t *l, const trace_attr_t *s)
{
	char n1[TRACE_NAME_MAX], n2[TRACE_NAME_MAX];
	struct timespec t1, t2, r1, r2;
	size_t z1[3], z2[3];
	int i1[3], i2[3];

	CHECK_RC(posix_trace_attr_getname(l, n1), 0);
	CHECK(strcmp(n1, "log-api") == 0);
	CHECK_RC(posix_trace_attr_getgenversion(l, n1), 0);
	CHECK_RC(posix_trace_attr_getgenversion(s, n2), 0);
	CHECK(strcmp(n1, n2) == 0);
	CHECK_RC(posix_trace_attr_getcreatetime(l, &t1), 0);
	CHECK_RC(posix_trace_attr_getcreatetime(s, &t2), 0);
	CHECK(t1.tv_sec == t2.tv_sec && t1.tv_nsec == t2.tv_nsec && t1.tv_sec > 0);
	CHECK_RC(posix_trace_attr_getclockres(l, &r1), 0);
	CHECK_RC(posix_trace_attr_getclockres(s, &r2), 0);
	CHECK(r1.tv_sec == r2.tv_sec && r1.tv_nsec == r2.tv_nsec);
	posix_trace_attr_getstreamsize(l, &z1[0]);
	posix_trace_attr_getmaxdatasize(l, &z1[1]);
	posix_trace_attr_getlogsize(l, &z1[2]);
	posix_trace_attr_getstreamsize(s, &z2[0]);
	posix_trace_attr_getmaxdatasize(s, &z2[1]);
	posix_trace_attr_getlogsize(s, &z2[2]);
	posix_trace_attr_getstreamfullpolicy(l, &i1[0]);
	posix_trace_attr_getlogfullpolicy(l, &i1[1]);
	posix_trace_attr_getinherited(l, &i1[2]);
	posix_trace_attr_getstreamfullpolicy(s, &i2[0]);
	posix_trace_attr_getlogfullpolicy(s, &i2[1]);
	posix_trace_attr_getinherited(s, &i2[2]);
	CHECK(z1[0] == z2[0] && z1[0] >= (1 << 20));
	CHECK_EQ(z1[1], M);
	CHECK_EQ(z1[2], 12345);
	CHECK(z2[1] == M && z2[2] == 12345);
	CHECK_EQ(i1[0], POSIX_TRACE_FLUSH);
	CHECK_EQ(i1[1], POSIX_TRACE_APPEND);
	CHECK_EQ(i1[2], POSIX_TRACE_CLOSE_FOR_CHILD);
	CHECK(i2[0] == i1[0] && i2[1] == i1[1] && i2[2] == i1[2]);
}

static struct lu_ev pass1[4096];

static void round_trip(void)
{
	static const size_t lens[] = { 0, 1, 7, 8, M - 1, M, M + 1, 3 * M };
	unsigned char pay[3 * M], p[M];
	trace_attr_t a, live_a, log_a;
	trace_event_id_t id_a, unused;
	trace_event_set_t empty, f901;
	trace_id_t trid, log, log2;
	int fd, rfd, rfd2, n;
	long long lo;

	for (size_t i = 0; i < sizeof pay; i++)
		pay[i] = (unsigned char)(i * 7 + 3);
	posix_trace_eventset_empty(&empty);
	posix_trace_eventset_empty(&f901);
	posix_trace_eventset_add(901, &f901);
	posix_trace_attr_init(&a);
	posix_trace_attr_setname(&a, "log-api");
	posix_trace_attr_setmaxdatasize(&a, M);
	posix_trace_attr_setstreamsize(&a, 1 << 20);
	posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
	posix_trace_attr_setlogsize(&a, 12345);
	fd = lu_tmpfile(path, sizeof path, "api", O_WRONLY);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	CHECK_RC(posix_trace_eventid_open("log-api/a", &id_a), 0);
	CHECK_RC(posix_trace_eventid_open("log-api/b", &id_b), 0);
	CHECK_RC(posix_trace_eventid_open("log-api/unused", &unused), 0);
	CHECK_RC(posix_trace_get_attr(trid, &live_a), 0);

	lo = lu_now();
	CHECK_RC(posix_trace_start(trid), 0);
	want(POSIX_TRACE_START, BY_MAIN, &empty, sizeof empty, lo);
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
		rec(id_a, BY_MAIN, lens[i] ? pay : NULL, lens[i]);
	for (uint32_t i = 0; i < N_MAIN; i++) {
		lu_make(p, i, 0, lu_len(i, M));
		rec(id_a, BY_MAIN, p, lu_len(i, M));
	}
	REQUIRE(pthread_create(&worker, NULL, thread_main, NULL) == 0);
	pthread_join(worker, NULL);
	rec(900, BY_MAIN, pay, 9);                      /* never registered */
	rec(POSIX_TRACE_UNNAMED_USEREVENT, BY_MAIN, pay, 3);
	wrong_kind(0, trid);
	lo = lu_now();
	CHECK_RC(posix_trace_set_filter(trid, &f901, POSIX_TRACE_SET_EVENTSET), 0);
	unsigned char two[2 * sizeof(trace_event_set_t)];
	memcpy(two, &empty, sizeof empty);
	memcpy(two + sizeof empty, &f901, sizeof f901);
	want(POSIX_TRACE_FILTER, BY_MAIN, two, sizeof two, lo);
	record_here(901, pay, 5);                       /* filtered out */
	for (int k = 0; k < 2; k++) {
		lo = lu_now();
		int err = -1;
		CHECK_RC(lu_flush_wait(trid, &err), 0);
		CHECK_EQ(err, 0);
		want(POSIX_TRACE_FLUSH_START, BY_ANY, NULL, 0, lo);
		want(POSIX_TRACE_FLUSH_STOP, BY_ANY, NULL, 0, lo);
		for (uint32_t i = 0; i < 100; i++) {
			lu_make(p, N_MAIN + 100 * k + i, 0, 8);
			rec(id_a, BY_MAIN, p, 8);
		}
	}
	lo = lu_now();
	CHECK_RC(posix_trace_stop(trid), 0);
	int zero = 0;
	want(POSIX_TRACE_STOP, BY_MAIN, &zero, sizeof zero, lo);
	record_here(id_a, pay, 4);                      /* stopped: not recorded */
	lo = lu_now();
	CHECK_RC(posix_trace_shutdown(trid), 0);
	want(POSIX_TRACE_FLUSH_START, BY_ANY, NULL, 0, lo); /* the final flush */
	want(POSIX_TRACE_FLUSH_STOP, BY_ANY, NULL, 0, lo);
	CHECK_RC(posix_trace_flush(trid), EINVAL);
	close(fd);

	/* ---- the log */
	n = lu_load(path, &log, &rfd);
	compare(n);
	lu_no_damage(n);
	CHECK_EQ(lu_user(n, id_b, getpid(), 2, 1, (const uint32_t[]){ 0, 0 }, NULL), N_THR);
	REQUIRE(n <= 4096);
	memcpy(pass1, lu_ev, (size_t)n * sizeof *lu_ev);
	struct posix_trace_event_info ev;
	size_t len = 99;
	int un = 0;
	CHECK_RC(posix_trace_getnext_event(log, &ev, p, sizeof p, &len, &un), 0);
	CHECK(un != 0);
	CHECK_EQ(len, 0);

	CHECK_RC(posix_trace_get_attr(log, &log_a), 0);
	same_attr(&log_a, &live_a);

	for (int k = 0; k < 2; k++) { /* the final status, not reset by reading */
		struct posix_trace_status_info si = lu_status(log);
		CHECK_EQ(si.posix_stream_status, POSIX_TRACE_SUSPENDED);
		CHECK_EQ(si.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
		CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
		CHECK_EQ(si.posix_stream_flush_status, POSIX_TRACE_NOT_FLUSHING);
		CHECK_EQ(si.posix_stream_flush_error, 0);
		CHECK_EQ(si.posix_log_overrun_status, POSIX_TRACE_NO_OVERRUN);
		CHECK_EQ(si.posix_log_full_status, POSIX_TRACE_NOT_FULL);
	}

	/* every type of the stream: the system types and every name
	 * registered, recorded (a, b) or not (unused) */
	trace_event_id_t types[LU_STREAM_TYPES];
	lu_stream_types(types, id_a, id_b, unused);
	lu_types(log, types, LU_STREAM_TYPES, 0);
	CHECK_RC(posix_trace_eventtypelist_rewind(log), 0);
	lu_types(log, types, LU_STREAM_TYPES, 0);
	lu_name(log, unused, "log-api/unused");
	lu_name(log, POSIX_TRACE_OVERFLOW, "posix_trace_overflow");
	lu_name(log, id_a, "log-api/a");
	lu_name(log, id_b, "log-api/b");
	lu_name(log, POSIX_TRACE_START, "posix_trace_start");
	lu_name(log, POSIX_TRACE_FLUSH_STOP, "posix_trace_flush_stop");
	lu_name(log, POSIX_TRACE_UNNAMED_USEREVENT, "posix_trace_unnamed_userevent");
	char nb[TRACE_EVENT_NAME_MAX + 1];
	CHECK_RC(posix_trace_eventid_get_name(log, 900, nb), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(log, 4096, nb), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(log, id_a, NULL), EINVAL);
	CHECK_EQ(posix_trace_eventid_equal(log, id_a, id_a), 1);
	CHECK_EQ(posix_trace_eventid_equal(log, id_a, id_b), 0);
	wrong_kind(log, 0);

	/* a second cursor on the same file, with a 10-byte buffer */
	rfd2 = open(path, O_RDONLY);
	CHECK_RC(posix_trace_open(rfd2, &log2), 0);
	int bad = 0, i = 0;
	for (;; i++) {
		unsigned char small[16];
		memset(small, 0xEE, sizeof small);
		len = 99;
		CHECK_RC(posix_trace_getnext_event(log2, &ev, small, 10, &len, &un), 0);
		if (un || i >= n)
			break;
		size_t want_len = pass1[i].len < 10 ? pass1[i].len : 10;
		int tr = pass1[i].len > 10 ? POSIX_TRACE_TRUNCATED_READ : pass1[i].trunc;
		bad += ev.posix_event_id != pass1[i].id || len != want_len ||
		       ev.posix_truncation_status != tr || small[10] != 0xEE ||
		       memcmp(small, pass1[i].data, want_len) != 0;
	}
	CHECK_EQ(i, n);
	CHECK_EQ(bad, 0);
	CHECK_RC(posix_trace_getnext_event(log2, &ev, NULL, 0, &len, &un), 0);
	CHECK(un != 0);
	CHECK_RC(posix_trace_rewind(log2), 0);
	CHECK_RC(posix_trace_getnext_event(log2, &ev, NULL, 0, &len, &un), 0);
	CHECK(un == 0 && ev.posix_event_id == POSIX_TRACE_START && len == 0);
	CHECK_EQ(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);
	CHECK_RC(posix_trace_getnext_event(log2, &ev, p, sizeof p, &len, NULL), EINVAL);
	CHECK_RC(posix_trace_getnext_event(log2, NULL, p, sizeof p, &len, &un), EINVAL);
	CHECK_RC(posix_trace_close(log2), 0);
	dead_log(log2);
	close(rfd2);

	/* rewind: the same events again */
	CHECK_RC(posix_trace_rewind(log), 0);
	CHECK_EQ(lu_read_all(log), n);
	bad = 0;
	for (int k = 0; k < n; k++)
		bad += lu_ev[k].id != pass1[k].id || lu_ev[k].ts != pass1[k].ts ||
		       lu_ev[k].len != pass1[k].len || memcmp(lu_ev[k].data, pass1[k].data,
		                                              pass1[k].len < LU_DATA ? pass1[k].len
		                                                                     : LU_DATA);
	CHECK_EQ(bad, 0);

	/* a fork child keeps its copy of the log's trace id (the process has
	 * a stream, so the table's fork handlers ran): it reads every event
	 * again from the start; the parent's cursor, at the end, is unmoved */
	fflush(stdout);
	fflush(stderr);
	pid_t kid = fork();
	REQUIRE(kid >= 0);
	if (kid == 0) {
		alarm(20);
		_exit(posix_trace_rewind(log) == 0 && lu_read_all(log) == n ? 0 : 1);
	}
	int st;
	REQUIRE(waitpid(kid, &st, 0) == kid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_RC(posix_trace_getnext_event(log, &ev, NULL, 0, &len, &un), 0);
	CHECK(un != 0);

	CHECK_RC(posix_trace_close(log), 0);
	dead_log(log);
	close(rfd);
	posix_trace_attr_destroy(&a);
}

int main(void)
{
	T_BEGIN(120);
	round_trip();
	lu_rmfile(path);
	T_END();
}
