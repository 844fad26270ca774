/*
 * getnext_wait.c -- the blocking readers.  posix_trace_getnext_event()
 * blocks until another thread records (the recorder sets a flag just before
 * recording; the reader must find it set when getnext returns).
 * posix_trace_timedgetnext_event(): ETIMEDOUT once a CLOCK_REALTIME deadline
 * ~50 ms ahead has passed (the clock is checked to be past the deadline),
 * ETIMEDOUT at once for a deadline in the past, EINVAL for tv_nsec of
 * 1000000000 or -1 when no event is ready, but the event itself when one is
 * ready, whatever abstime says.  posix_trace_shutdown() from another thread
 * wakes a blocked getnext and a blocked timedgetnext (far deadline), which
 * return EINVAL.  A signal whose handler was installed without SA_RESTART,
 * sent with pthread_kill() to a thread blocked in getnext or timedgetnext,
 * makes the call return EINTR.  A reader polling with trygetnext gets,
 * from the first call it makes after an event was recorded, that event:
 * in one thread (an empty poll, an event, a poll at once), and with the
 * recording in another thread that publishes a counter after each event
 * returns while the reader spins.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <trace.h>
#include "t.h"

#define ID ((trace_event_id_t)300)

static trace_id_t trid;
static atomic_int flag;      /* recorder: about to record */
static atomic_int done;      /* blocked thread: call returned */
static atomic_int handled;   /* signal handler ran */

struct call {
	int timed;               /* 0: getnext, 1: timedgetnext far deadline */
	int rc;
	int unavailable;
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len;
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static struct timespec realtime_plus_ms(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static int ts_ge(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

static trace_id_t new_stream(void)
{
	trace_attr_t attr;
	trace_id_t id;
	struct posix_trace_event_info ev;
	unsigned char buf[256];
	size_t len;
	int unavailable;

	REQUIRE(posix_trace_attr_init(&attr) == 0);
	REQUIRE(posix_trace_create(0, &attr, &id) == 0);
	posix_trace_attr_destroy(&attr);
	CHECK_RC(posix_trace_start(id), 0);
	/* take START: the stream is empty afterwards */
	CHECK_RC(posix_trace_trygetnext_event(id, &ev, buf, sizeof buf, &len, &unavailable), 0);
	CHECK_EQ(unavailable, 0);
	CHECK_EQ(ev.posix_event_id, POSIX_TRACE_START);
	CHECK_RC(posix_trace_trygetnext_event(id, &ev, buf, sizeof buf, &len, &unavailable), 0);
	CHECK(unavailable != 0);
	return id;
}

static void *recorder(void *arg)
{
	(void)arg;
	int v = 4242;
	sleep_ms(100); /* give the reader time to block (not required for correctness) */
	atomic_store(&flag, 1);
	posix_trace_event(ID, &v, sizeof v);
	return NULL;
}

static void *blocked_reader(void *arg)
{
	struct call *c = arg;
	c->unavailable = -1;
	if (c->timed) {
		struct timespec far = realtime_plus_ms(3600 * 1000L);
		c->rc = posix_trace_timedgetnext_event(trid, &c->ev, c->buf, sizeof c->buf, &c->len,
		                                       &c->unavailable, &far);
	} else {
		c->rc = posix_trace_getnext_event(trid, &c->ev, c->buf, sizeof c->buf, &c->len,
		                                  &c->unavailable);
	}
	atomic_store(&done, 1);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

/* ---- polling with trygetnext: no event recorded before a call is missed */
#define POLLS 500
static atomic_int recorded, acked;

static void *poll_recorder(void *arg)
{
	(void)arg;
	for (int i = 1; i <= POLLS; i++) {
		posix_trace_event(ID, &i, sizeof i);
		atomic_store(&recorded, i); /* after the event was recorded */
		while (atomic_load(&acked) != i)
			;
	}
	return NULL;
}

static void polling_sees_every_event(void)
{
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len;
	int unavailable, v, empty = 0, missed = 0;
	pthread_t th;

	trid = new_stream();
	/* one thread: empty, record, and the next call has it */
	for (int i = 0; i < POLLS; i++) {
		CHECK_RC(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable),
		         0);
		empty += unavailable != 0;
		posix_trace_event(ID, &i, sizeof i);
		unavailable = -1;
		CHECK_RC(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable),
		         0);
		memcpy(&v, buf, sizeof v);
		missed += unavailable != 0 || ev.posix_event_id != ID || v != i;
	}
	CHECK_EQ(empty, POLLS);
	CHECK_EQ(missed, 0);

	/* a spinning reader and a recorder in another thread */
	atomic_store(&recorded, 0);
	atomic_store(&acked, 0);
	REQUIRE(pthread_create(&th, NULL, poll_recorder, NULL) == 0);
	for (int i = 1; i <= POLLS; i++) {
		for (;;) {
			int before = atomic_load(&recorded); /* read before the call begins */
			unavailable = -1;
			if (posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len,
			                                 &unavailable) != 0) {
				missed++;
				break;
			}
			if (!unavailable) {
				memcpy(&v, buf, sizeof v);
				missed += ev.posix_event_id != ID || v != i;
				break;
			}
			if (before == i) { /* recorded before the call, and not returned */
				missed++;
				break;
			}
		}
		atomic_store(&acked, i);
	}
	pthread_join(th, NULL);
	CHECK_EQ(missed, 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

/* Start a thread blocked in (timed)getnext; shut the stream down under it. */
static void shutdown_wakes(int timed)
{
	struct call c = { .timed = timed };
	pthread_t th;

	trid = new_stream();
	atomic_store(&done, 0);
	REQUIRE(pthread_create(&th, NULL, blocked_reader, &c) == 0);
	sleep_ms(100);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	pthread_join(th, NULL);
	CHECK_RC(c.rc, EINVAL);
}

/* Start a thread blocked in (timed)getnext; signal it until it returns. */
static void signal_interrupts(int timed)
{
	struct call c = { .timed = timed };
	pthread_t th;

	trid = new_stream();
	atomic_store(&done, 0);
	atomic_store(&handled, 0);
	REQUIRE(pthread_create(&th, NULL, blocked_reader, &c) == 0);
	sleep_ms(50);
	/* A signal landing before the thread blocks is harmless: send another. */
	while (!atomic_load(&done)) {
		pthread_kill(th, SIGUSR1);
		sleep_ms(50);
	}
	pthread_join(th, NULL);
	CHECK_RC(c.rc, EINTR);
	CHECK(atomic_load(&handled) > 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

int main(void)
{
	T_BEGIN(60);
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len;
	int unavailable, v;
	pthread_t th;

	/* --- getnext blocks until another thread records --- */
	trid = new_stream();
	REQUIRE(pthread_create(&th, NULL, recorder, NULL) == 0);
	unavailable = -1;
	memset(buf, 0, sizeof buf);
	CHECK_RC(posix_trace_getnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable), 0);
	CHECK_EQ(atomic_load(&flag), 1);
	CHECK_EQ(unavailable, 0);
	CHECK_EQ(ev.posix_event_id, ID);
	CHECK_EQ(len, sizeof v);
	memcpy(&v, buf, sizeof v);
	CHECK_EQ(v, 4242);
	pthread_join(th, NULL);

	/* --- timedgetnext: a deadline 50 ms ahead --- */
	struct timespec deadline = realtime_plus_ms(50), now;
	CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable,
	                                        &deadline), ETIMEDOUT);
	clock_gettime(CLOCK_REALTIME, &now);
	CHECK(ts_ge(&now, &deadline));

	/* a deadline in the past, and one at the current second */
	struct timespec past = realtime_plus_ms(0);
	past.tv_sec -= 10;
	CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable,
	                                        &past), ETIMEDOUT);
	struct timespec epoch = { 0, 0 };
	CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable,
	                                        &epoch), ETIMEDOUT);

	/* invalid abstime with no event ready */
	struct timespec bad_hi = realtime_plus_ms(1000), bad_lo = realtime_plus_ms(1000);
	bad_hi.tv_nsec = 1000000000L;
	bad_lo.tv_nsec = -1;
	CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable,
	                                        &bad_hi), EINVAL);
	CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable,
	                                        &bad_lo), EINVAL);

	/* an event ready: returned whatever abstime is */
	const struct timespec *stamps[] = { &bad_hi, &bad_lo, &past };
	for (int i = 0; i < 3; i++) {
		v = 10 + i;
		posix_trace_event(ID, &v, sizeof v);
	}
	for (int i = 0; i < 3; i++) {
		unavailable = -1;
		CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len,
		                                        &unavailable, stamps[i]), 0);
		CHECK_EQ(unavailable, 0);
		CHECK_EQ(ev.posix_event_id, ID);
		CHECK_EQ(len, sizeof v);
		memcpy(&v, buf, sizeof v);
		CHECK_EQ(v, 10 + i);
	}
	/* and with a valid deadline ahead, the ready event comes at once */
	v = 99;
	posix_trace_event(ID, &v, sizeof v);
	deadline = realtime_plus_ms(3600 * 1000L);
	CHECK_RC(posix_trace_timedgetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable,
	                                        &deadline), 0);
	CHECK_EQ(unavailable, 0);
	memcpy(&v, buf, sizeof v);
	CHECK_EQ(v, 99);
	/* empty again */
	CHECK_RC(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable), 0);
	CHECK(unavailable != 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);

	/* --- polling with trygetnext --- */
	polling_sees_every_event();

	/* --- shutdown from another thread wakes blocked readers --- */
	shutdown_wakes(0);
	shutdown_wakes(1);

	/* --- a signal interrupts a blocked reader: EINTR --- */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART */
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	signal_interrupts(0);
	signal_interrupts(1);

	T_END();
}
