/*
 * traced_killed.c -- the traced process is killed with SIGKILL; its
 * controller keeps every event recorded before the death.
 *
 * A child with 3 threads is traced from here (UNTIL_FULL, 4 MiB).  First
 * each thread records 5000 events and then sleeps, its chunk still open;
 * the child reports over a pipe; it is killed.  Exactly START + 15000
 * events are read, per thread in order with intact payloads and the
 * child's pid, no overrun, then nothing more (re-polled past the reader's
 * 50 ms wait for half-published entries).  Then the threads record at
 * full speed and are killed in the middle: each thread's events are an
 * intact, gap-free prefix of what it recorded (more than 10000 each).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"

/* ------------------------------------------- the traced process killed */
#define VN 5000
static atomic_int done_threads;
static trace_event_id_t vid;

static void *victim_thread(void *arg)
{
	int me = (int)(long)arg;
	for (long long i = 0; i < VN; i++)
		t_wit_rec(vid, me, i);
	atomic_fetch_add(&done_threads, 1);
	while (atomic_load(&done_threads) >= 0)
		pause();                /* keeps its chunk open */
	return NULL;
}

/* Each thread records its first 10001 events, then waits for the other
 * two to have theirs before going on at full speed: a thread starved
 * while the others spun on could otherwise find the UNTIL_FULL stream
 * already full before its own 10001st event (4 MiB hold about 130 000). */
static void *spinner(void *arg)
{
	int me = (int)(long)arg;
	long long i = 0;
	for (; i <= 10000; i++)
		t_wit_rec(vid, me, i);
	atomic_fetch_add(&done_threads, 1);
	while (atomic_load(&done_threads) < 3)
		sched_yield();
	for (;; i++)
		t_wit_rec(vid, me, i);
	return NULL;
}

static void victim(int full_speed)
{
	struct t_pipes p;
	int n = 0;
	trace_attr_t attr;
	trace_id_t trid;
	pid_t v = t_fork_piped(&p);
	if (v == 0) {
		pthread_t th;
		char c;
		alarm(60);
		if (posix_trace_eventid_open("auto-victim", &vid) != 0 || read(p.cmd, &c, 1) != 1)
			_exit(1);
		for (long i = 0; i < 3; i++)
			pthread_create(&th, NULL, full_speed ? spinner : victim_thread, (void *)i);
		while (atomic_load(&done_threads) < 3)
			sched_yield();
		n = full_speed ? 0 : 3 * VN;
		t_write_full(p.rep, &n, sizeof n);
		for (;;)
			pause();
	}
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 4 << 20) == 0);
	trid = t_create_ok(v, &attr);
	CHECK_RC(posix_trace_start(trid), 0);
	t_write_full(p.cmd, "g", 1);
	REQUIRE(t_read_full(p.rep, &n, sizeof n) == 0);
	kill(v, SIGKILL);
	REQUIRE(waitpid(v, NULL, 0) == v);

	struct t_tally t = { { 0 }, 0, 0, 0, { 0 } };
	t_wit_drain(trid, v, &t);
	int first = t.n[0] + t.n[1] + t.n[2];
	if (!full_speed)           /* all of it published before the kill */
		CHECK_EQ(first, 3 * VN);
	/* entries a killed writer left half-published are stepped over after
	 * 50 ms: look again until two looks find nothing new */
	for (int quiet = 0, i = 0; quiet < 2 && i < 40; i++) {
		int before = t.n[0] + t.n[1] + t.n[2] + t.bad;
		usleep(60000);
		t_wit_drain(trid, v, &t);
		quiet = t.n[0] + t.n[1] + t.n[2] + t.bad == before ? quiet + 1 : 0;
	}
	CHECK_EQ(t.bad, 0);
	CHECK_EQ(t.other, 0);
	for (int i = 0; i < 3; i++) {
		if (full_speed)
			CHECK(t.n[i] > 10000);
		else
			CHECK_EQ(t.n[i], VN);
	}
	if (!full_speed) {
		CHECK_EQ(t.sys, 1);
		struct posix_trace_status_info si;
		CHECK_RC(posix_trace_get_status(trid, &si), 0);
		CHECK_EQ(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);
	posix_trace_attr_destroy(&attr);
	close(p.cmd);
	close(p.rep);
}

int main(void)
{
	T_BEGIN(60);
	signal(SIGPIPE, SIG_IGN);   /* a dead peer: EPIPE and a message */
	victim(0);
	victim(1);
	T_END();
}
