/*
 * log_fastpath.c -- the flusher's fast path (src/flush/flushrun.c: runs of one
 * writer's records encoded straight into log blocks) writes exactly what
 * the reader's general path reads.
 *
 * Same events, two paths: every event is recorded into two streams of
 * this process at once.  A is a FLUSH stream with a log; its flusher takes
 * the fast path whenever it can.  B has no log and is read with
 * posix_trace_trygetnext_event() (the general path).  Four threads record
 * 20000 events each, of six types, with payloads of every length from 0
 * to past max-data-size (cut when recorded: TRUNCATED_RECORD), one type
 * first opened (so first named) half-way through, while another thread
 * sends them signals whose handler records too (sometimes interrupting an
 * event: nesting level 1).  Then:
 *  - per thread, the log and B hold the same events in the same order: id,
 *    pid, address, truncation status, payload length and bytes (a signal
 *    handler's events are compared as a sequence of their own, since the
 *    event they interrupted is stamped before it in one stream and after
 *    it in the other);
 *  - the log has every event recorded (nothing lost, no OVERFLOW), each
 *    thread's timestamps never go backwards, and an event's timestamps in
 *    the log and in B are within a second (the thread may be preempted
 *    between its two writes, so no closer bound holds).
 * LOOP stream with a log, flushed over and over (each flush waited for)
 * while four threads record into it (until 20 flushes are done), so that runs are read while thieves
 * take chunks: each event in the log is intact, each thread's events come
 * in strictly increasing order, and the log's count of lost events is
 * exactly what is missing (user events and the controller's own).
 */
#include <sched.h>
#include <stdatomic.h>
#include "log_util.h"
#include "../src/ext.h"

#define NTHR     4
#define PER_THR  20000u
#define MAXDATA  200u
#define NTYPES   6
#define MAXEV    200000

struct rec {
	trace_event_id_t id;
	pid_t pid;
	pthread_t thr;
	void *addr;
	long long ts;
	int trunc;
	uint32_t len;
	uint64_t hash; /* FNV-1a of the payload */
};

static char path[256];
static trace_id_t sa, sb;
static trace_event_id_t types[NTYPES], late, sig_ev;
static _Atomic trace_event_id_t late_id; /* 0 until thread 0 opens it */
static atomic_int done, nsig;
static pthread_t workers[NTHR];
static _Thread_local uint32_t my_no;
static _Thread_local volatile uint32_t my_sigs; /* (changed by this thread's handler) */

static uint64_t fnv(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void on_sig(int sig)
{
	unsigned char b[12];
	(void)sig;
	if (!my_no)
		return; /* not a worker */
	uint32_t n = ++my_sigs;
	memcpy(b, &my_no, 4);
	memcpy(b + 4, &n, 4);
	memcpy(b + 8, &n, 4);
	posix_trace_event(sig_ev, b, sizeof b);
	atomic_fetch_add(&nsig, 1);
}

static void *worker(void *arg)
{
	unsigned char buf[MAXDATA + 40];
	uint32_t no = (uint32_t)(uintptr_t)arg;

	my_no = no + 1;
	for (uint32_t i = 0; i < PER_THR; i++) {
		size_t len = (i * 7u + no) % (MAXDATA + 40);
		trace_event_id_t id = types[(i + no) % NTYPES];
		if (no == 0 && i == PER_THR / 2) {
			REQUIRE(posix_trace_eventid_open("fastpath.late", &late) == 0);
			atomic_store(&late_id, late);
		}
		if (i % 9 == 0 && atomic_load(&late_id))
			id = atomic_load(&late_id);
		for (size_t k = 0; k < len; k++)
			buf[k] = (unsigned char)(i * 13u + k * 3u + no);
		/* a worker can be done before the poker's first signal reaches it
		 * (seen under ASan): its last event waits for a handler's */
		while (i == PER_THR - 1 && !my_sigs)
			sched_yield();
		posix_trace_event(id, len ? buf : NULL, len);
	}
	atomic_fetch_add(&done, 1);
	return NULL;
}

static void *poker(void *arg)
{
	(void)arg;
	while (atomic_load(&done) < NTHR) { /* (a joined thread may not be signalled) */
		for (int i = 0; i < NTHR; i++)
			pthread_kill(workers[i], SIGUSR1);
		usleep(20);
	}
	return NULL;
}

static int is_ours(trace_event_id_t id)
{
	for (int i = 0; i < NTYPES; i++)
		if (id == types[i])
			return 1;
	return (atomic_load(&late_id) && id == late) || id == sig_ev;
}

/* Every event of one source into r; returns the count. */
static int collect(trace_id_t id, struct rec *r, int cap, int is_log, int *overflows)
{
	static unsigned char buf[TRACE_DATA_MAX + 1];
	int n = 0;

	for (;;) {
		struct posix_trace_event_info ev;
		size_t len = 0;
		if (is_log ? t_get(id, &ev, buf, sizeof buf, &len) : t_try(id, &ev, buf, sizeof buf, &len))
			return n;
		*overflows += ev.posix_event_id == POSIX_TRACE_OVERFLOW;
		if (!is_ours(ev.posix_event_id))
			continue;
		REQUIRE(n < cap);
		r[n].id = ev.posix_event_id;
		r[n].pid = ev.posix_pid;
		r[n].thr = ev.posix_thread_id;
		r[n].addr = ev.posix_prog_address;
		r[n].ts = lu_ns(&ev.posix_timestamp);
		r[n].trunc = ev.posix_truncation_status;
		r[n].len = (uint32_t)len;
		r[n].hash = fnv(buf, len);
		n++;
	}
}

static int same(const struct rec *x, const struct rec *y)
{
	return x->id == y->id && x->pid == y->pid && x->addr == y->addr && x->trunc == y->trunc &&
	       x->len == y->len && x->hash == y->hash;
}

/* Thread w's events (handler ones or not) of r, in order, compared. */
static void compare_thread(const struct rec *a, int na, const struct rec *b, int nb, int w,
                           int handler)
{
	int i = 0, j = 0, k = 0, bad = 0;
	long long last = 0;

	for (;;) {
		while (i < na && (!pthread_equal(a[i].thr, workers[w]) ||
		                  (a[i].id == sig_ev) != handler))
			i++;
		while (j < nb && (!pthread_equal(b[j].thr, workers[w]) ||
		                  (b[j].id == sig_ev) != handler))
			j++;
		if (i == na || j == nb)
			break;
		if (!same(&a[i], &b[j]) && bad++ < 3)
			fprintf(stderr, "thread %d%s, event %d: log id %d len %u, stream id %d len %u\n",
			        w, handler ? " (handler)" : "", k, (int)a[i].id, a[i].len, (int)b[j].id,
			        b[j].len);
		long long d = a[i].ts - b[j].ts;
		if ((d > 1000000000 || d < -1000000000) && bad++ < 3)
			fprintf(stderr, "thread %d, event %d: timestamps %lld ns apart\n", w, k, d);
		if (k && a[i].ts < last && bad++ < 3)
			fprintf(stderr, "thread %d, event %d: earlier than the one before\n", w, k);
		last = a[i].ts;
		i++, j++, k++;
	}
	CHECK_EQ(bad, 0);
	CHECK(i == na && j == nb); /* neither has events of w left over */
	if (!handler)
		CHECK_EQ(k, PER_THR);
}

static void same_events(void)
{
	static struct rec a[MAXEV], b[MAXEV];
	trace_attr_t at;
	pthread_t pk;
	int fd = lu_tmpfile(path, sizeof path, "fastpath", O_RDWR);
	int ovf_a = 0, ovf_b = 0;

	posix_trace_attr_init(&at);
	REQUIRE(posix_trace_attr_setmaxdatasize(&at, MAXDATA) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&at, 32u << 20) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&at, POSIX_TRACE_APPEND) == 0);
	REQUIRE(posix_trace_create_withlog(0, &at, fd, &sa) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&at, POSIX_TRACE_UNTIL_FULL) == 0);
	REQUIRE(posix_trace_create(0, &at, &sb) == 0);
	posix_trace_attr_destroy(&at);
	REQUIRE(posix_trace_start(sa) == 0 && posix_trace_start(sb) == 0);

	for (int i = 0; i < NTHR; i++)
		REQUIRE(pthread_create(&workers[i], NULL, worker, (void *)(uintptr_t)i) == 0);
	REQUIRE(pthread_create(&pk, NULL, poker, NULL) == 0);
	pthread_join(pk, NULL);
	for (int i = 0; i < NTHR; i++)
		pthread_join(workers[i], NULL);

	CHECK_RC(posix_trace_shutdown(sa), 0);
	int nb = collect(sb, b, MAXEV, 0, &ovf_b);
	CHECK_RC(posix_trace_shutdown(sb), 0);
	trace_id_t log;
	int rfd = open(path, O_RDONLY);
	REQUIRE(rfd >= 0 && posix_trace_open(rfd, &log) == 0);
	int na = collect(log, a, MAXEV, 1, &ovf_a);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
	close(fd);
	lu_rmfile(path);

	int sigs = atomic_load(&nsig);
	CHECK_EQ(ovf_a, 0);
	CHECK_EQ(ovf_b, 0);
	CHECK_EQ(na, NTHR * PER_THR + sigs);
	CHECK_EQ(nb, NTHR * PER_THR + sigs);
	CHECK(sigs > 0);
	int truncated = 0;
	for (int i = 0; i < na; i++)
		truncated += a[i].trunc == POSIX_TRACE_TRUNCATED_RECORD;
	CHECK(truncated > 0);
	for (int w = 0; w < NTHR; w++) {
		compare_thread(a, na, b, nb, w, 0);
		compare_thread(a, na, b, nb, w, 1);
	}
	printf("same events: %d in the log and in the stream (%d from signal handlers, "
	       "%d truncated)\n", na, sigs, truncated);
}

/* ------------------------------------------------------------------ LOOP */
#define LOOP_PER_THR 50000u
static trace_id_t sl;
static trace_event_id_t loop_ev;
static atomic_int loop_done, loop_flushes;
static _Atomic long long loop_recorded;

static void *loop_worker(void *arg)
{
	unsigned char buf[64];
	uint32_t no = (uint32_t)(uintptr_t)arg;

	uint32_t i = 0;
	for (; i < LOOP_PER_THR || atomic_load(&loop_flushes) < 20; i++) {
		size_t len = lu_len(i, sizeof buf);
		lu_make(buf, i, no, len);
		posix_trace_event(loop_ev, buf, len);
	}
	atomic_fetch_add(&loop_recorded, i);
	atomic_fetch_add(&loop_done, 1);
	return NULL;
}

static void loop_flushed(void)
{
	trace_attr_t at;
	pthread_t th[NTHR];
	struct pt_ext_losses x;
	int fd = lu_tmpfile(path, sizeof path, "fastloop", O_RDWR), flushes = 0;

	REQUIRE(posix_trace_eventid_open("fastpath.loop", &loop_ev) == 0);
	posix_trace_attr_init(&at);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&at, POSIX_TRACE_LOOP) == 0);
	REQUIRE(posix_trace_attr_setstreamsize(&at, 256u << 10) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&at, POSIX_TRACE_APPEND) == 0);
	REQUIRE(posix_trace_create_withlog(0, &at, fd, &sl) == 0);
	posix_trace_attr_destroy(&at);
	REQUIRE(posix_trace_start(sl) == 0);
	for (int i = 0; i < NTHR; i++)
		REQUIRE(pthread_create(&th[i], NULL, loop_worker, (void *)(uintptr_t)i) == 0);
	do {
		CHECK_RC(lu_flush_wait(sl, NULL), 0);
		atomic_store(&loop_flushes, ++flushes);
	} while (atomic_load(&loop_done) < NTHR);
	for (int i = 0; i < NTHR; i++)
		pthread_join(th[i], NULL);
	CHECK_RC(posix_trace_shutdown(sl), 0);

	trace_id_t log;
	static unsigned char buf[TRACE_DATA_MAX + 1];
	long long last[NTHR], users = 0, sys = 0, bad = 0, order = 0;
	int rfd = open(path, O_RDONLY);
	REQUIRE(rfd >= 0 && posix_trace_open(rfd, &log) == 0);
	for (int i = 0; i < NTHR; i++)
		last[i] = -1;
	for (;;) {
		struct posix_trace_event_info ev;
		size_t len = 0;
		uint32_t seq, tno;
		int un = -1, rc = posix_trace_getnext_event(log, &ev, buf, sizeof buf, &len, &un);
		CHECK_RC(rc, 0);
		if (rc || un)
			break;
		trace_event_id_t id = ev.posix_event_id;
		if (id == POSIX_TRACE_START || id == POSIX_TRACE_STOP ||
		    id == POSIX_TRACE_FLUSH_START || id == POSIX_TRACE_FLUSH_STOP) {
			sys++;
			continue;
		}
		if (id != loop_ev)
			continue;
		users++;
		if (!lu_check(buf, len, &seq, &tno) || tno >= NTHR) {
			bad++;
			continue;
		}
		order += (long long)seq <= last[tno];
		last[tno] = seq;
	}
	CHECK_RC(pt_ext_losses(log, &x), 0);
	CHECK_RC(posix_trace_close(log), 0);
	close(rfd);
	close(fd);
	lu_rmfile(path);

	/* the controller recorded START, a FLUSH_START and FLUSH_STOP per
	 * flush (each waited for), and STOP, FLUSH_START, FLUSH_STOP at shutdown */
	long long sys_recorded = 1 + 2LL * flushes + 3;
	CHECK_EQ(bad, 0);
	CHECK_EQ(order, 0);
	long long recorded = atomic_load(&loop_recorded);
	CHECK(users > 0 && users <= recorded);
	CHECK(x.total_ok);
	CHECK_EQ(x.total, (recorded - users) + (sys_recorded - sys));
	printf("LOOP with a log, %d flushes: %lld of %lld events in the log, %llu counted lost\n",
	       flushes, users, recorded, (unsigned long long)x.total);
}

int main(void)
{
	struct sigaction sa_;
	static const char *names[NTYPES] = { "fp.a", "fp.b", "fp.c", "fp.d", "fp.e", "fp.f" };

	T_BEGIN(120);
	memset(&sa_, 0, sizeof sa_);
	sa_.sa_handler = on_sig;
	sa_.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa_, NULL);
	for (int i = 0; i < NTYPES; i++)
		REQUIRE(posix_trace_eventid_open(names[i], &types[i]) == 0);
	REQUIRE(posix_trace_eventid_open("fastpath.signal", &sig_ev) == 0);
	same_events();
	loop_flushed();
	T_END();
}
