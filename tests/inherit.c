/*
 * inherit.c -- TRI for streams a process creates for itself: with
 * POSIX_TRACE_INHERITED, fork()ed children and grandchildren record into
 * the parent's stream with their own pid; with POSIX_TRACE_CLOSE_FOR_CHILD
 * they do not; a trace id is invalid in the child; forking while other
 * threads record loses and corrupts nothing.  Exact counts throughout.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

static trace_event_id_t ev_a;

struct payload {
	int pid;
	int seq;
	unsigned sum;
};

static void rec(int seq)
{
	struct payload p = { getpid(), seq, 0 };
	p.sum = (unsigned)p.pid * 2654435761u ^ (unsigned)seq;
	posix_trace_event(ev_a, &p, sizeof p);
}

/* Count user events per pid (up to 8 pids), checking payloads. */
struct tally {
	int pid[8];
	int n[8];
	int bad;
};

static void drain(trace_id_t trid, struct tally *t)
{
	memset(t, 0, sizeof *t);
	for (;;) {
		struct posix_trace_event_info ev;
		struct payload p;
		size_t len;
		int none;
		REQUIRE(posix_trace_trygetnext_event(trid, &ev, &p, sizeof p, &len, &none) == 0);
		if (none)
			break;
		if (ev.posix_event_id != ev_a)
			continue;
		if (len != sizeof p || p.pid != ev.posix_pid ||
		    p.sum != ((unsigned)p.pid * 2654435761u ^ (unsigned)p.seq))
			t->bad++;
		int i = 0;
		while (i < 8 && t->pid[i] && t->pid[i] != ev.posix_pid)
			i++;
		if (i < 8) {
			t->pid[i] = ev.posix_pid;
			t->n[i]++;
		}
	}
}

static int count_of(const struct tally *t, int pid)
{
	for (int i = 0; i < 8; i++)
		if (t->pid[i] == pid)
			return t->n[i];
	return 0;
}

static void child_and_grandchild(trace_id_t trid, int n)
{
	struct posix_trace_status_info st;
	/* the creator's id means nothing here */
	if (posix_trace_get_status(trid, &st) != EINVAL || posix_trace_stop(trid) != EINVAL)
		_exit(3);
	for (int i = 0; i < n; i++)
		rec(i);
	pid_t g = fork();
	if (g == 0) {
		for (int i = 0; i < n; i++)
			rec(i);
		_exit(0);
	}
	int s;
	waitpid(g, &s, 0);
	_exit(WIFEXITED(s) && WEXITSTATUS(s) == 0 ? g % 250 + 5 : 2);
}

static void one_policy(int inherit)
{
	trace_id_t trid = t_own_started(inherit, 8 << 20);
	int n = 1000;
	for (int i = 0; i < n; i++)
		rec(i);
	pid_t c = fork();
	REQUIRE(c >= 0);
	if (c == 0)
		child_and_grandchild(trid, n);
	int s;
	REQUIRE(waitpid(c, &s, 0) == c);
	CHECK(WIFEXITED(s) && WEXITSTATUS(s) >= 5);
	for (int i = 0; i < n; i++)
		rec(n + i);
	CHECK_RC(posix_trace_stop(trid), 0);

	struct tally t;
	drain(trid, &t);
	CHECK_EQ(t.bad, 0);
	CHECK_EQ(count_of(&t, getpid()), 2 * n);
	CHECK_EQ(count_of(&t, c), inherit == POSIX_TRACE_INHERITED ? n : 0);
	int others = 0; /* the grandchild */
	for (int i = 0; i < 8; i++)
		if (t.pid[i] && t.pid[i] != getpid() && t.pid[i] != c)
			others += t.n[i];
	CHECK_EQ(others, inherit == POSIX_TRACE_INHERITED ? n : 0);
	struct posix_trace_status_info st;
	CHECK_RC(posix_trace_get_status(trid, &st), 0);
	CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

/* fork() while two threads record: both sides complete and intact. */
static atomic_int stop_threads;
static atomic_int produced[2];

static void *spin(void *arg)
{
	int me = (int)(long)arg;
	while (!atomic_load(&stop_threads) && atomic_load(&produced[me]) < 50000) {
		rec(atomic_load(&produced[me]));
		atomic_fetch_add(&produced[me], 1);
	}
	return NULL;
}

static void fork_under_load(void)
{
	trace_id_t trid = t_own_started(POSIX_TRACE_INHERITED, 8 << 20);
	pthread_t th[2];
	pid_t kids[5];
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, spin, (void *)i);
	for (int k = 0; k < 5; k++) {
		kids[k] = fork();
		REQUIRE(kids[k] >= 0);
		if (kids[k] == 0) {
			for (int i = 0; i < 500; i++)
				rec(i);
			_exit(0);
		}
	}
	for (int k = 0; k < 5; k++)
		waitpid(kids[k], NULL, 0);
	atomic_store(&stop_threads, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_RC(posix_trace_stop(trid), 0);
	struct posix_trace_status_info st;
	CHECK_RC(posix_trace_get_status(trid, &st), 0);
	CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	struct tally t;
	drain(trid, &t);
	CHECK_EQ(t.bad, 0);
	CHECK_EQ(count_of(&t, getpid()), atomic_load(&produced[0]) + atomic_load(&produced[1]));
	for (int k = 0; k < 5; k++)
		CHECK_EQ(count_of(&t, kids[k]), 500);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

int main(void)
{
	T_BEGIN(60);
	REQUIRE(posix_trace_eventid_open("inherit_test", &ev_a) == 0);
	one_policy(POSIX_TRACE_INHERITED);
	one_policy(POSIX_TRACE_CLOSE_FOR_CHILD);
	fork_under_load();
	T_END();
}
