/*
 * stream_api.c -- the life of an active trace stream and every "shall fail"
 * of the control functions.  Status right after posix_trace_create();
 * posix_trace_start() records exactly one START whose data is the filter,
 * a second start records nothing; posix_trace_stop() records one STOP with
 * int 0, a second stop nothing; events generated while suspended are lost;
 * posix_trace_clear() drops recorded events and keeps the run state.
 * posix_trace_create() rejects a NULL trid and a bad attributes object
 * (EINVAL), a dead or negative pid (ESRCH), and more than TRACE_SYS_MAX
 * streams (EAGAIN; one shutdown makes room for one more).  Every function
 * taking a trid fails with EINVAL for 0, -1, 12345, a shut-down trid and, in
 * a fork()ed child, the parent's trid.  posix_trace_flush() on a stream
 * without log, posix_trace_rewind()/posix_trace_close() on a stream trid and
 * posix_trace_open() on a file that is not a trace log fail with EINVAL.
 */
#include <pthread.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

static struct t_rec evs[64];

/* Reads every available event into evs[]; returns how many. */
static int drain(trace_id_t trid)
{
	return t_drain_recs(trid, evs, 64);
}

static void check_status(trace_id_t trid, int run)
{
	struct posix_trace_status_info st;

	memset(&st, 0x55, sizeof st);
	CHECK_RC(posix_trace_get_status(trid, &st), 0);
	CHECK_EQ(st.posix_stream_status, run);
	CHECK_EQ(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_EQ(st.posix_stream_flush_status, POSIX_TRACE_NOT_FLUSHING);
	CHECK_EQ(st.posix_stream_flush_error, 0);
	CHECK_EQ(st.posix_log_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_EQ(st.posix_log_full_status, POSIX_TRACE_NOT_FULL);
}

/* Every function that takes a trid, on one that is not valid here. */
static void check_bad_trid(trace_id_t bad)
{
	struct posix_trace_event_info ev;
	struct posix_trace_status_info st;
	struct timespec deadline;
	trace_event_set_t set;
	trace_event_id_t id;
	trace_attr_t attr;
	char buf[256];
	size_t len;
	int un;

	posix_trace_eventset_empty(&set);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 2;
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_getnext_event(bad, &ev, buf, sizeof buf, &len, &un), EINVAL);
	CHECK_RC(posix_trace_trygetnext_event(bad, &ev, buf, sizeof buf, &len, &un), EINVAL);
	CHECK_RC(posix_trace_timedgetnext_event(bad, &ev, buf, sizeof buf, &len, &un, &deadline), EINVAL);
	CHECK_RC(posix_trace_start(bad), EINVAL);
	CHECK_RC(posix_trace_stop(bad), EINVAL);
	CHECK_RC(posix_trace_clear(bad), EINVAL);
	CHECK_RC(posix_trace_get_status(bad, &st), EINVAL);
	CHECK_RC(posix_trace_get_attr(bad, &attr), EINVAL);
	CHECK_RC(posix_trace_get_filter(bad, &set), EINVAL);
	CHECK_RC(posix_trace_set_filter(bad, &set, POSIX_TRACE_SET_EVENTSET), EINVAL);
	CHECK_RC(posix_trace_eventtypelist_getnext_id(bad, &id, &un), EINVAL);
	CHECK_RC(posix_trace_eventtypelist_rewind(bad), EINVAL);
	CHECK_RC(posix_trace_eventid_get_name(bad, POSIX_TRACE_START, buf), EINVAL);
	CHECK_RC(posix_trace_trid_eventid_open(bad, "some-event", &id), EINVAL);
	CHECK_RC(posix_trace_flush(bad), EINVAL);
	CHECK_RC(posix_trace_rewind(bad), EINVAL);
	CHECK_RC(posix_trace_close(bad), EINVAL);
	CHECK_RC(posix_trace_shutdown(bad), EINVAL);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
}

static void check_start_stop_clear(trace_event_id_t u1, trace_event_id_t u2)
{
	trace_event_set_t filt, got;
	trace_id_t trid = 0;
	int n, v, m;

	CHECK_RC(posix_trace_create(0, NULL, &trid), 0);
	CHECK(trid != 0);
	check_status(trid, POSIX_TRACE_SUSPENDED);
	CHECK_EQ(drain(trid), 0);

	/* suspended: nothing is recorded */
	posix_trace_event(u1, "x", 1);
	CHECK_EQ(drain(trid), 0);

	/* a filter that does not touch u1/u2, to see it in START's data */
	CHECK_RC(posix_trace_eventset_empty(&filt), 0);
	CHECK_RC(posix_trace_eventset_add(1000, &filt), 0);
	CHECK_RC(posix_trace_eventset_add(POSIX_TRACE_OVERFLOW, &filt), 0);
	CHECK_RC(posix_trace_set_filter(trid, &filt, POSIX_TRACE_SET_EVENTSET), 0);
	CHECK_EQ(drain(trid), 0);

	CHECK_RC(posix_trace_start(trid), 0);
	check_status(trid, POSIX_TRACE_RUNNING);
	CHECK_RC(posix_trace_start(trid), 0);          /* already running */
	check_status(trid, POSIX_TRACE_RUNNING);
	posix_trace_event(u1, "hello", 5);
	posix_trace_event(u2, NULL, 0);
	CHECK_RC(posix_trace_stop(trid), 0);
	check_status(trid, POSIX_TRACE_SUSPENDED);
	CHECK_RC(posix_trace_stop(trid), 0);           /* already stopped */
	check_status(trid, POSIX_TRACE_SUSPENDED);
	posix_trace_event(u1, "lost", 4);

	n = drain(trid);
	CHECK_EQ(n, 4);
	if (n == 4) {
		CHECK_EQ(evs[0].id, POSIX_TRACE_START);
		CHECK_EQ(evs[0].len, sizeof(trace_event_set_t));
		memcpy(&got, evs[0].data, sizeof got);
		for (unsigned id = 0; id < 1024; id++) {
			m = 0;
			CHECK_RC(posix_trace_eventset_ismember(id, &filt, &m), 0);
			v = !m;
			CHECK_RC(posix_trace_eventset_ismember(id, &got, &m), 0);
			if ((m != 0) == v) {
				CHECK(!"START data differs from the filter");
				fprintf(stderr, "  at id %u\n", id);
				break;
			}
		}
		CHECK_EQ(evs[0].pid, getpid());
		CHECK(pthread_equal(evs[0].thr, pthread_self()));
		CHECK_EQ(evs[1].id, u1);
		CHECK_EQ(evs[1].len, 5);
		CHECK_EQ(memcmp(evs[1].data, "hello", 5), 0);
		CHECK_EQ(evs[1].pid, getpid());
		CHECK(pthread_equal(evs[1].thr, pthread_self()));
		CHECK_EQ(evs[2].id, u2);
		CHECK_EQ(evs[2].len, 0);
		CHECK_EQ(evs[3].id, POSIX_TRACE_STOP);
		CHECK_EQ(evs[3].len, sizeof(int));
		memcpy(&v, evs[3].data, sizeof v);
		CHECK_EQ(v, 0);
		CHECK_EQ(evs[3].pid, getpid());
		CHECK(pthread_equal(evs[3].thr, pthread_self()));
	}

	/* clear while running: everything before it is gone, still running */
	CHECK_RC(posix_trace_start(trid), 0);
	posix_trace_event(u1, NULL, 0);
	posix_trace_event(u2, NULL, 0);
	CHECK_RC(posix_trace_clear(trid), 0);
	check_status(trid, POSIX_TRACE_RUNNING);
	CHECK_EQ(drain(trid), 0);
	posix_trace_event(u2, "after", 5);
	n = drain(trid);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(evs[0].id, u2);
		CHECK_EQ(evs[0].len, 5);
	}
	/* the filter survives clear (only the events are dropped) */
	CHECK_RC(posix_trace_get_filter(trid, &got), 0);
	CHECK_RC(posix_trace_eventset_ismember(1000, &got, &m), 0);
	CHECK(m != 0);

	/* clear while suspended: still suspended, STOP and events gone */
	posix_trace_event(u1, NULL, 0);
	CHECK_RC(posix_trace_stop(trid), 0);
	CHECK_RC(posix_trace_clear(trid), 0);
	check_status(trid, POSIX_TRACE_SUSPENDED);
	CHECK_EQ(drain(trid), 0);
	posix_trace_event(u1, NULL, 0);
	CHECK_EQ(drain(trid), 0);

	CHECK_RC(posix_trace_shutdown(trid), 0);
	check_bad_trid(trid);
}

static void check_create_errors(void)
{
	trace_attr_t attr;
	trace_id_t trid;
	pid_t pid;

	CHECK_RC(posix_trace_create(0, NULL, NULL), EINVAL);
	memset(&attr, 0, sizeof attr);
	CHECK_RC(posix_trace_create(0, &attr, &trid), EINVAL);
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_create(0, &attr, NULL), EINVAL);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH), 0);
	CHECK_RC(posix_trace_create(0, &attr, &trid), EINVAL);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	CHECK_RC(posix_trace_create(0, &attr, &trid), EINVAL);    /* destroyed */

	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(0);
	REQUIRE(waitpid(pid, NULL, 0) == pid);
	CHECK_RC(posix_trace_create(pid, NULL, &trid), ESRCH);
	CHECK_RC(posix_trace_create(-5, NULL, &trid), ESRCH);
}

/* The parent's trid in a child: EINVAL everywhere, and the parent's stream survives. */
static void check_child(trace_event_id_t u1)
{
	trace_id_t trid;
	pid_t pid;
	int status, n;

	CHECK_RC(posix_trace_create(0, NULL, &trid), 0);
	CHECK_RC(posix_trace_start(trid), 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(20);
		posix_trace_event(u1, NULL, 0);   /* CLOSE_FOR_CHILD: not traced */
		check_bad_trid(trid);
		_exit(t_failures ? 1 : 0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	check_status(trid, POSIX_TRACE_RUNNING);
	posix_trace_event(u1, NULL, 0);
	n = drain(trid);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(evs[0].id, POSIX_TRACE_START);
		CHECK_EQ(evs[1].id, u1);
		CHECK_EQ(evs[1].pid, getpid());
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

/* At most 8 streams may trace one process at a time (the per-process
 * limit in docs/implementation-defined.md); TRACE_SYS_MAX is larger and
 * counts streams of all processes. */
#define PER_PROCESS_MAX 8

static void check_sys_max(void)
{
	static trace_id_t ids[TRACE_SYS_MAX + 10];
	trace_attr_t attr;
	trace_id_t extra;
	int n = 0, rc = 0;

	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, 4096), 0);
	while (n < TRACE_SYS_MAX + 10) {
		rc = posix_trace_create(0, &attr, &ids[n]);
		if (rc != 0)
			break;
		n++;
	}
	CHECK_RC(rc, EAGAIN);
	CHECK_EQ(n, PER_PROCESS_MAX < TRACE_SYS_MAX ? PER_PROCESS_MAX : TRACE_SYS_MAX);
	if (n > 0) {
		CHECK_RC(posix_trace_shutdown(ids[n - 1]), 0);
		n--;
		CHECK_RC(posix_trace_create(0, &attr, &ids[n]), 0);
		n++;
		CHECK_RC(posix_trace_create(0, &attr, &extra), EAGAIN);
	}
	for (int i = 0; i < n; i++)
		CHECK_RC(posix_trace_shutdown(ids[i]), 0);
	/* all gone: creating works again */
	CHECK_RC(posix_trace_create(0, &attr, &extra), 0);
	CHECK_RC(posix_trace_shutdown(extra), 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
}

static void check_log_functions(void)
{
	trace_id_t trid, opened;
	FILE *f;

	CHECK_RC(posix_trace_create(0, NULL, &trid), 0);
	CHECK_RC(posix_trace_flush(trid), EINVAL);
	CHECK_RC(posix_trace_rewind(trid), EINVAL);
	CHECK_RC(posix_trace_close(trid), EINVAL);
	/* still a working stream afterwards */
	check_status(trid, POSIX_TRACE_SUSPENDED);
	CHECK_RC(posix_trace_shutdown(trid), 0);

	f = tmpfile();
	REQUIRE(f != NULL);
	CHECK_RC(posix_trace_open(fileno(f), &opened), EINVAL);
	fclose(f);
}

int main(void)
{
	trace_event_id_t u1, u2;

	T_BEGIN(60);
	CHECK_RC(posix_trace_eventid_open("stream-api-1", &u1), 0);
	CHECK_RC(posix_trace_eventid_open("stream-api-2", &u2), 0);

	check_start_stop_clear(u1, u2);
	check_create_errors();
	check_bad_trid(0);
	check_bad_trid(-1);
	check_bad_trid(12345);
	check_child(u1);
	check_log_functions();
	check_sys_max();
	T_END();
}
