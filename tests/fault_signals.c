/*
 * fault_signals.c -- a signal handler that records at a high rate while
 * the thread it interrupts records too.
 *
 * A POSIX timer sends SIGALRM every 10 us (SA_RESTART); the handler
 * records an event of its own type (payload: source, sequence number,
 * noise, checksum) while the main thread records in a loop for ~0.4 s
 * (capped so the UNTIL_FULL stream holds everything).  The handler itself
 * disarms the timer once the 0.4 s are over, so the storm ends even when
 * signals come faster than the thread can take them (under TSan, whose
 * runtime spends about that long on each delivery, the main thread was
 * starved for up to a minute).  (alarm() would send SIGALRM too, so
 * another POSIX timer, sending SIGTERM, is the watchdog meanwhile.)
 *
 * 1. The stream is this process's own, started before the timer.  After
 *    the timer is stopped and SIGALRM blocked, everything is read back:
 *    per source exactly as many events as were recorded, in order, intact,
 *    all from the main thread; START and STOP once, nothing else;
 *    NO_OVERRUN.
 * 2. The stream is made for this process by another one: a controller
 *    child C creates and starts it and reads concurrently.  This process
 *    records one "hello" event and waits until C has seen it before it
 *    starts the timer: events racing with the very first mapping of a
 *    stream made elsewhere (docs/design.md, "Races") are not expected in
 *    the stream, and a signal handler that interrupts that mapping is such
 *    an event.  C checks the same as in 1 against the counts carried by a
 *    final "end" event, then that nothing more is available.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "sources_util.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define MAX_MAIN 300000u
#else
#define MAX_MAIN 1500000u
#endif
#define RUN_NS 400000000ll
enum { SRC_MAIN, SRC_SIG, SRC_HELLO, SRC_END, NSRC };
static const char *const names[NSRC] = { "fsig.main", "fsig.handler", "fsig.hello", "fsig.end" };

static trace_event_id_t ev[NSRC];
static volatile uint64_t count[NSRC];

/* Record the next event of source src (async-signal-safe); the END event
 * carries the final counts of the main loop and the handler instead. */
static void record(unsigned src)
{
	struct src_payload p = src == SRC_END ? src_payload(src, count[SRC_MAIN], count[SRC_SIG])
	                                      : src_payload(src, count[src], SRC_NOISE(count[src], src));
	posix_trace_event(ev[src], &p, sizeof p);
	count[src]++;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static timer_t storm_timer;
static volatile long long storm_end; /* now_ns() when the storm is over */

static void on_alarm(int sig)
{
	static const struct itimerspec off = { { 0, 0 }, { 0, 0 } };
	int saved = errno;
	(void)sig;
	record(SRC_SIG);
	if (now_ns() >= storm_end) /* both async-signal-safe */
		timer_settime(storm_timer, 0, &off, NULL);
	errno = saved;
}

/* The high-rate part: SIGALRM every 10 us while the main thread records;
 * returns with SIGALRM blocked and no handler running any more. */
static void storm(void)
{
	struct sigaction sa;
	sigset_t alrm;
	timer_t dog;
	struct sigevent se;
	struct itimerspec dog_in = { { 0, 0 }, { 60, 0 } }, dog_off = { { 0, 0 }, { 0, 0 } };

	memset(&se, 0, sizeof se);
	se.sigev_notify = SIGEV_SIGNAL;
	se.sigev_signo = SIGTERM; /* default action: the test dies */
	REQUIRE(timer_create(CLOCK_MONOTONIC, &se, &dog) == 0);
	REQUIRE(timer_settime(dog, 0, &dog_in, NULL) == 0);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGALRM, &sa, NULL) == 0);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	REQUIRE(sigprocmask(SIG_UNBLOCK, &alrm, NULL) == 0);

	struct itimerspec it = { { 0, 10000 }, { 0, 10000 } }, off = { { 0, 0 }, { 0, 0 } };
	se.sigev_signo = SIGALRM;
	REQUIRE(timer_create(CLOCK_MONOTONIC, &se, &storm_timer) == 0);
	alarm(0); /* the harness's watchdog would send SIGALRM: dog stands in */
	long long t0 = now_ns();
	storm_end = t0 + RUN_NS;
	REQUIRE(timer_settime(storm_timer, 0, &it, NULL) == 0);
	while (count[SRC_MAIN] < MAX_MAIN) {
		record(SRC_MAIN);
		if ((count[SRC_MAIN] & 63) == 0 && now_ns() - t0 >= RUN_NS)
			break;
	}
	REQUIRE(timer_settime(storm_timer, 0, &off, NULL) == 0);
	REQUIRE(sigprocmask(SIG_BLOCK, &alrm, NULL) == 0);
	/* from here on no handler runs: the counters are final */
	signal(SIGALRM, SIG_IGN); /* drop a pending one */
	signal(SIGALRM, SIG_DFL);
	REQUIRE(sigprocmask(SIG_UNBLOCK, &alrm, NULL) == 0);
	REQUIRE(timer_settime(dog, 0, &dog_off, NULL) == 0);
	timer_delete(dog);
	timer_delete(storm_timer);
	alarm(60); /* the harness's watchdog again */
	printf("main %llu, handler %llu events\n", (unsigned long long)count[SRC_MAIN],
	       (unsigned long long)count[SRC_SIG]);
}

static trace_attr_t attr;

static void make_attr(void)
{
	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&attr, 96u << 20) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&attr, sizeof(struct src_payload)) == 0);
}

/* Read the stream: per source, events in order and intact.  until_end:
 * block until the END event (case 2), else until STOP (case 1).  Checks
 * against want[] (main and handler counts: case 2 takes them from END),
 * and that START came `starts_want` times. */
static void verify(trace_id_t trid, int until_end, uint64_t want[NSRC], uint64_t starts_want)
{
	struct posix_trace_event_info info;
	struct src_payload p;
	struct src_tally t = { 0 };
	unsigned char data[64];
	size_t len;
	int un = -1, k;
	uint64_t got[NSRC] = { 0 }, bad = 0, bad_seq = 0;
	pthread_t thr, main_thr = 0;
	int have_thr = 0;

	while ((k = src_next(trid, ev, NSRC, SRC_END, !until_end, &t, &p, &thr)) >= 0) {
		if (!have_thr)
			main_thr = thr, have_thr = 1;
		if (!pthread_equal(thr, main_thr))
			bad++;
		if (k == SRC_END) {
			want[SRC_MAIN] = p.seq;
			want[SRC_SIG] = p.noise;
			got[k]++;
			break;
		}
		if (p.seq != got[k])
			bad_seq++;
		got[k] = p.seq + 1;
	}
	CHECK_RC(posix_trace_trygetnext_event(trid, &info, data, sizeof data, &len, &un), 0);
	CHECK_EQ(un, 1);
	for (unsigned s = 0; s < NSRC; s++)
		CHECK_EQ(got[s], want[s]);
	CHECK(want[SRC_SIG] > 0);
	CHECK_EQ(t.bad + bad, 0);
	CHECK_EQ(bad_seq, 0);
	CHECK_EQ(t.starts, starts_want);
	CHECK_EQ(t.stops, !until_end);
	CHECK_EQ(t.others, 0);
	struct posix_trace_status_info st;
	CHECK_RC(posix_trace_get_status(trid, &st), 0);
	CHECK_EQ(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
}

static void own_stream(void)
{
	trace_id_t trid;
	uint64_t want[NSRC];

	make_attr();
	REQUIRE(posix_trace_create(0, &attr, &trid) == 0);
	CHECK_RC(posix_trace_start(trid), 0);
	storm();
	CHECK_RC(posix_trace_stop(trid), 0);
	for (unsigned s = 0; s < NSRC; s++)
		want[s] = count[s];
	verify(trid, 0, want, 1);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

static void remote_stream(void)
{
	int cp[2], st;
	char c;
	pid_t me = getpid();

	for (unsigned s = 0; s < NSRC; s++)
		count[s] = 0;
	REQUIRE(pipe(cp) == 0);
	fflush(stdout);
	pid_t ctl = fork();
	REQUIRE(ctl >= 0);
	if (ctl == 0) { /* C: create, start, wait for hello, read everything */
		trace_id_t trid;
		struct posix_trace_event_info info;
		unsigned char data[64];
		size_t len;
		int un;
		uint64_t want[NSRC] = { 0, 0, 0, 1 };
		alarm(60);
		int rc = posix_trace_create(me, &attr, &trid);
		if (rc)
			fprintf(stderr, "posix_trace_create(parent): %s\n", strerror(rc));
		REQUIRE(rc == 0);
		for (unsigned s = 0; s < NSRC; s++)
			REQUIRE(posix_trace_trid_eventid_open(trid, names[s], &ev[s]) == 0);
		REQUIRE(posix_trace_start(trid) == 0);
		t_write_full(cp[1], "s", 1);
		/* START, then the hello: nothing else may come first */
		REQUIRE(posix_trace_getnext_event(trid, &info, data, sizeof data, &len, &un) == 0);
		CHECK_EQ(info.posix_event_id, POSIX_TRACE_START);
		REQUIRE(posix_trace_getnext_event(trid, &info, data, sizeof data, &len, &un) == 0);
		CHECK_EQ(info.posix_event_id, ev[SRC_HELLO]);
		t_write_full(cp[1], "k", 1);
		/* the rest, read while it is recorded (START and hello taken) */
		verify(trid, 1, want, 0);
		CHECK_RC(posix_trace_shutdown(trid), 0);
		T_END();
	}
	REQUIRE(t_read_full(cp[0], &c, 1) == 0 && c == 's');
	record(SRC_HELLO); /* maps the stream, then records */
	REQUIRE(t_read_full(cp[0], &c, 1) == 0 && c == 'k');
	storm();
	record(SRC_END);
	REQUIRE(waitpid(ctl, &st, 0) == ctl);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(cp[0]);
	close(cp[1]);
}

int main(void)
{
	T_BEGIN(60);
	signal(SIGPIPE, SIG_IGN);
	for (unsigned s = 0; s < NSRC; s++)
		REQUIRE(posix_trace_eventid_open(names[s], &ev[s]) == 0);
	own_stream();
	remote_stream();
	T_END();
}
