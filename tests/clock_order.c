/*
 * clock_order.c -- events the program itself orders come out in that
 * order, with the clocks that promise it.
 *
 * The witness: six threads, more than there are CPUs, record one event
 * each in turn under a mutex; its payload is the next number of a counter
 * kept under that mutex, and some threads pause now and then (their open
 * chunks idle meanwhile, so the reader's runs meet idle writers).  Each
 * event is recorded after the previous one was committed and the mutex
 * passed on, so the true order is the counter's, known without the
 * library.
 *
 * Checked, with POSIXTRACE_CLOCK=ordered (the TSC read with rdtscp, which
 * waits for the mutex to be taken) and POSIXTRACE_CLOCK=monotonic (the
 * vDSO's clock, whose TSC read is ordered the same way), each in a child
 * started with that environment (the clock is chosen when the library is
 * loaded):
 *  - a FLUSH stream with a log (no-loss mode, so nothing is dropped; a
 *    256 KiB stream, so the flusher's runs keep ending): the log holds
 *    150000 numbers, 0..149999, in exactly that order;
 *  - a LOOP stream read live by a thread spinning on
 *    posix_trace_trygetnext_event() while the threads record: the same.
 * With the default clock (rdtsc, which may run ahead of the instructions
 * before it: docs/implementation-defined.md) the same run is only
 * reported: how many events came out of the program's order, and by how
 * much their timestamps disagree with it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include "t.h"
#include "../src/ext.h"

#define NTHR 6
#define N    150000u

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_no;
static trace_event_id_t ev_id;

static void *worker(void *arg)
{
	uint32_t no = (uint32_t)(uintptr_t)arg, mine = 0;

	for (;;) {
		if (no % 2 && ++mine % 400 == 0) /* idle a while: its chunk open */
			nanosleep(&(struct timespec){ 0, 200000 }, NULL);
		pthread_mutex_lock(&mu);
		uint32_t v = next_no;
		if (v < N) {
			posix_trace_event(ev_id, &v, sizeof v);
			next_no = v + 1;
		}
		pthread_mutex_unlock(&mu);
		if (v >= N)
			return NULL;
		if (no % 3 == 0)
			sched_yield();
	}
}

static void record_all(void)
{
	pthread_t th[NTHR];

	next_no = 0;
	for (int i = 0; i < NTHR; i++)
		REQUIRE(pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i) == 0);
	for (int i = 0; i < NTHR; i++)
		pthread_join(th[i], NULL);
}

/* What came out: events of ours, how many out of the counter's order, the
 * timestamp of each number (to compare with the number before it), and
 * events not 4 bytes long. */
struct seen {
	long long got, order, bad;
	uint32_t want;
	long long ts[N];
};

static void take(struct seen *s, uint32_t v, const struct posix_trace_event_info *ev)
{
	s->order += v != s->want;
	s->want = v + 1;
	if (v < N)
		s->ts[v] = ev->posix_timestamp.tv_sec * 1000000000LL + ev->posix_timestamp.tv_nsec;
	s->got++;
}

/* Numbers stamped earlier than the number before them, and by how much
 * at most (ns). */
static long long inverted(const struct seen *s, long long *worst)
{
	long long k = 0;

	*worst = 0;
	for (uint32_t v = 1; v < N; v++)
		if (s->ts[v] < s->ts[v - 1]) {
			k++;
			if (s->ts[v - 1] - s->ts[v] > *worst)
				*worst = s->ts[v - 1] - s->ts[v];
		}
	return k;
}

/* The next event of ours from trid into s: 1; 0 at the log's end, or when
 * the live stream has nothing now. */
static int next(trace_id_t trid, int live, struct seen *s)
{
	for (;;) {
		struct posix_trace_event_info ev;
		uint32_t buf[16];
		size_t len = 0;
		if (live ? t_try(trid, &ev, buf, sizeof buf, &len) : t_get(trid, &ev, buf, sizeof buf, &len))
			return 0;
		if (ev.posix_event_id != ev_id)
			continue;
		if (len != sizeof(uint32_t)) {
			s->bad++;
			continue;
		}
		take(s, buf[0], &ev);
		return 1;
	}
}

static void with_log(struct seen *s)
{
	char path[] = "/tmp/pt-clock-order-XXXXXX";
	int fd = mkstemp(path);
	trace_attr_t at;
	trace_id_t t, log;

	REQUIRE(fd >= 0);
	unlink(path);
	posix_trace_attr_init(&at);
	REQUIRE(posix_trace_attr_setstreamsize(&at, 256u << 10) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&at, POSIX_TRACE_APPEND) == 0);
	REQUIRE(posixtrace_attr_setnoloss(&at, 10000) == 0);
	REQUIRE(posix_trace_create_withlog(0, &at, fd, &t) == 0);
	posix_trace_attr_destroy(&at);
	REQUIRE(posix_trace_start(t) == 0);
	record_all();
	CHECK_RC(posix_trace_shutdown(t), 0);
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0 && posix_trace_open(fd, &log) == 0);
	while (next(log, 0, s))
		;
	CHECK_RC(posix_trace_close(log), 0);
	close(fd);
}

static trace_id_t live_t;
static atomic_int recorded;
static struct seen *live_s;

static void *reader(void *arg)
{
	(void)arg;
	for (;;) {
		int all = atomic_load(&recorded);
		if (!next(live_t, 1, live_s) && all)
			return NULL; /* nothing left once they were all done */
	}
}

static void live(struct seen *s)
{
	trace_attr_t at;
	pthread_t rd;

	posix_trace_attr_init(&at);
	REQUIRE(posix_trace_attr_setstreamsize(&at, 32u << 20) == 0); /* keeps them all */
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&at, POSIX_TRACE_LOOP) == 0);
	REQUIRE(posix_trace_create(0, &at, &live_t) == 0);
	posix_trace_attr_destroy(&at);
	REQUIRE(posix_trace_start(live_t) == 0);
	atomic_store(&recorded, 0);
	live_s = s;
	REQUIRE(pthread_create(&rd, NULL, reader, NULL) == 0);
	record_all();
	atomic_store(&recorded, 1);
	pthread_join(rd, NULL);
	CHECK_RC(posix_trace_shutdown(live_t), 0);
}

static void run(const char *clock, int strict)
{
	static struct seen lg, lv;
	long long wl, wv;

	with_log(&lg);
	live(&lv);
	long long il = inverted(&lg, &wl), iv = inverted(&lv, &wv);
	CHECK_EQ(lg.bad, 0);
	CHECK_EQ(lv.bad, 0);
	CHECK_EQ(lg.got, N);
	CHECK_EQ(lv.got, N);
	if (strict) {
		CHECK_EQ(lg.order, 0);
		CHECK_EQ(lv.order, 0);
		CHECK_EQ(il, 0);
		CHECK_EQ(iv, 0);
	}
	printf("clock %s: %lld events from the log, %lld read live; out of the program's order: "
	       "%lld and %lld; stamped before the event before them: %lld (by up to %lld ns) and "
	       "%lld (%lld ns)%s\n",
	       clock, lg.got, lv.got, lg.order, lv.order, il, wl, iv, wv,
	       strict ? "" : " [not checked: this clock does not promise it]");
}

int main(int argc, char **argv)
{
	static const char *const clocks[] = { "ordered", "monotonic" };
	const char *mine = getenv("POSIXTRACE_CLOCK");

	(void)argc;
	T_BEGIN(240);
	REQUIRE(posix_trace_eventid_open("clock_order.turn", &ev_id) == 0);
	if (mine) { /* a child: the clock it was started with */
		run(mine, 1);
		T_END();
	}
	t_rerun_with_env(argv[0], "POSIXTRACE_CLOCK", clocks, sizeof clocks / sizeof clocks[0]);
	run("default (rdtsc)", 0);
	T_END();
}
