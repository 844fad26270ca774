/*
 * signals.c -- events recorded by signal handlers that interrupt recording.
 *
 * Case 1: an ITIMER_PROF timer (50 us) raises SIGPROF, whose handler records
 * an event of its own type (payload: source, invocation counter, checksum)
 * while the main thread records events in a tight loop (~0.5 s of CPU time, capped so
 * the UNTIL_FULL stream holds everything).  Case 2 adds nesting: the SIGPROF
 * handler (A) records and then raises SIGUSR1, whose handler (B) records
 * too; meanwhile a helper thread keeps sending SIGUSR2 to the main thread,
 * whose handler (C) records and can land inside the main loop's, A's or
 * B's posix_trace_event().  After the timer is stopped and the signals
 * blocked, everything is read back: per source, the number of events equals
 * the number of handler invocations (or loop iterations) exactly, sequence
 * numbers are consecutive, payloads are intact and every event belongs to
 * the main thread; no OVERFLOW or ERROR, status NO_OVERRUN.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "sources_util.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define MAX_MAIN 400000u
#else
#define MAX_MAIN 4000000u
#endif
#define RUN_NS 500000000ll
enum { SRC_MAIN, SRC_A, SRC_B, SRC_C, NSRC };

static trace_event_id_t ev[NSRC];
static volatile uint64_t count[NSRC]; /* events recorded per source */
static volatile int nested;           /* case 2: A raises B */
static atomic_int pump_stop;
static pthread_t main_thread;

/* Record the next event of source src; async-signal-safe. */
static void record(unsigned src)
{
	struct src_payload p = src_payload(src, count[src], SRC_NOISE(count[src], src));

	posix_trace_event(ev[src], &p, sizeof p);
	count[src] = p.seq + 1;
}

static void on_sigprof(int sig)
{
	int saved = errno;
	(void)sig;
	record(SRC_A);
	if (nested)
		raise(SIGUSR1);
	errno = saved;
}

static void on_sigusr1(int sig)
{
	(void)sig;
	record(SRC_B);
}

static void on_sigusr2(int sig)
{
	(void)sig;
	record(SRC_C);
}

static void *pump_main(void *arg)
{
	struct timespec pause = { 0, 20000 };

	(void)arg;
	while (!pump_stop) {
		pthread_kill(main_thread, SIGUSR2);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* the process's CPU time, which ITIMER_PROF counts: a loop bounded by the
 * wall clock could end on a loaded machine before the timer had fired */
static long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void set_handler(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(sig, &sa, NULL) == 0);
}

static void run(int with_nesting)
{
	trace_attr_t attr;
	trace_id_t trid;
	sigset_t sigs, old;
	pthread_t pump;

	for (unsigned s = 0; s < NSRC; s++)
		count[s] = 0;
	nested = with_nesting;
	pump_stop = 0;
	CHECK_RC(posix_trace_attr_init(&attr), 0);
	CHECK_RC(posix_trace_attr_setstreamsize(&attr, 256u << 20), 0);
	CHECK_RC(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL), 0);
	CHECK_RC(posix_trace_attr_setmaxdatasize(&attr, sizeof(struct src_payload)), 0);
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	CHECK_RC(posix_trace_attr_destroy(&attr), 0);
	CHECK_RC(posix_trace_start(trid), 0);

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGPROF);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	if (with_nesting) {
		/* the helper must not run the handlers: it starts with them blocked */
		REQUIRE(pthread_sigmask(SIG_BLOCK, &sigs, &old) == 0);
		REQUIRE(pthread_create(&pump, NULL, pump_main, NULL) == 0);
		REQUIRE(pthread_sigmask(SIG_SETMASK, &old, NULL) == 0);
	}
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	REQUIRE(setitimer(ITIMER_PROF, &it, NULL) == 0);

	long long t0 = cpu_ns();
	while (count[SRC_MAIN] < MAX_MAIN) {
		record(SRC_MAIN);
		if ((count[SRC_MAIN] & 1023) == 0 && cpu_ns() - t0 >= RUN_NS)
			break;
	}

	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	REQUIRE(setitimer(ITIMER_PROF, &off, NULL) == 0);
	if (with_nesting) {
		pump_stop = 1;
		CHECK_RC(pthread_join(pump, NULL), 0);
	}
	/* from here on no handler runs: the counters are final */
	REQUIRE(pthread_sigmask(SIG_BLOCK, &sigs, &old) == 0);
	CHECK_RC(posix_trace_stop(trid), 0);

	struct posix_trace_event_info info;
	struct src_payload p;
	struct src_tally t = { 0 };
	unsigned char data[64];
	size_t len;
	int unavail, k;
	uint64_t got[NSRC] = { 0 }, bad_seq = 0, bad_thread = 0;
	pthread_t thr;

	while ((k = src_next(trid, ev, NSRC, NSRC, 1, &t, &p, &thr)) >= 0) {
		if (p.seq != got[k])
			bad_seq++;
		got[k] = p.seq + 1;
		if (!pthread_equal(thr, main_thread))
			bad_thread++;
	}
	CHECK_RC(posix_trace_trygetnext_event(trid, &info, data, sizeof data, &len, &unavail), 0);
	CHECK(unavail != 0);

	printf("%s: main %llu, A %llu, B %llu, C %llu events\n",
	       with_nesting ? "nested" : "simple", (unsigned long long)count[SRC_MAIN],
	       (unsigned long long)count[SRC_A], (unsigned long long)count[SRC_B],
	       (unsigned long long)count[SRC_C]);
	for (unsigned s = 0; s < NSRC; s++)
		CHECK_EQ(got[s], count[s]);
	CHECK(count[SRC_A] > 0); /* 0.5 s of CPU time must trigger ITIMER_PROF */
	if (with_nesting) {
		/* each A raises SIGUSR1, but a raise while B runs (SIGUSR1 blocked)
		 * stays pending, and a second one then merges with it: standard
		 * signals do not queue, so B may run fewer times than A */
		CHECK(count[SRC_B] > 0 && count[SRC_B] <= count[SRC_A]);
		CHECK(count[SRC_C] > 0);
	}
	CHECK_EQ(t.bad, 0);
	CHECK_EQ(bad_seq, 0);
	CHECK_EQ(bad_thread, 0);
	CHECK_EQ(t.starts, 1);
	CHECK_EQ(t.stops, 1);
	CHECK_EQ(t.others, 0);

	struct posix_trace_status_info st;
	CHECK_RC(posix_trace_get_status(trid, &st), 0);
	CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	REQUIRE(pthread_sigmask(SIG_UNBLOCK, &sigs, NULL) == 0);
}

int main(void)
{
	static const char *names[NSRC] = { "signals.main", "signals.sigprof", "signals.sigusr1",
	                                   "signals.sigusr2" };

	T_BEGIN(120);
	main_thread = pthread_self();
	for (unsigned s = 0; s < NSRC; s++)
		CHECK_RC(posix_trace_eventid_open(names[s], &ev[s]), 0);
	set_handler(SIGPROF, on_sigprof);
	set_handler(SIGUSR1, on_sigusr1);
	set_handler(SIGUSR2, on_sigusr2);
	run(0);
	run(1);
	T_END();
}
