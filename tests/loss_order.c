/*
 * loss_order.c -- where losses are told, checked against the program's
 * own witness.  More threads than CPUs flood a small stream; each event
 * carries its thread's number and sequence number.  On every reading
 * path (a live LOOP stream read after the fact with trygetnext and while
 * it is written with getnext, timedgetnext and trygetnext; logs written
 * from a FLUSH stream with log-full policies APPEND, LOOP and UNTIL_FULL,
 * and from a LOOP stream flushed now and then, into an APPEND log and into
 * a LOOP log of 64 KiB; each log read twice, the
 * second time after posix_trace_rewind; and, first, one set up so that a
 * thread keeps an old chunk while the chunks it took after it are lost
 * with their loss reports, kept_old_chunk()):
 *   - a synthesized OVERFLOW or RESUME is never stamped before the event
 *     returned before it (docs/implementation-defined.md, "Reading":
 *     ordinary events of a preempted writer may come late, synthesized
 *     ones never step back), and a RESUME is stamped as the event after
 *     it or, when that event is earlier, exactly as its OVERFLOW ("Where
 *     losses are told").  An event stamped earlier than the RESUME before
 *     it is a late one: its writer stamped it before the first event lost
 *     (the OVERFLOW's time) and published it only after the reader had
 *     told the loss; nothing a reader can see shows such an event on its
 *     way (its writer commits with one store), so the pair keeps the time
 *     of the loss and the event comes late, like any late event.  The
 *     check is that rule, exactly: it fails a RESUME stamped at any other
 *     time;
 *   - every OVERFLOW is followed by a RESUME before the next event;
 *   - each thread's events come in program order, and a thread whose
 *     sequence jumps (events lost) has an OVERFLOW/RESUME pair between
 *     the two events; the events missing at its end, a pair after its
 *     last event;
 *   - the counts the RESUMEs carry (src/ext.h) add up to the total lost,
 *     exactly, and to what the sequence numbers say was lost; with one
 *     thread, each gap's count is the events missing where it is;
 *   - a log that wrapped starts with a pair that carries the count
 *     overwritten.
 * Ordinary events that step back (a writer preempted between stamping and
 * publishing), after an ordinary event or after a RESUME, are counted and
 * printed, not failed: nothing promises otherwise.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <trace.h>
#include <unistd.h>
#include "t.h"
#include "loss_util.h"
#include "../src/shm/layout.h"
#include "helpers.h"

#define MAXTHR 16
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 1
#else
#define SCALE 4
#endif

enum { R_TRY, R_BLOCK, R_TIMED };

static unsigned nthr;
static uint32_t recorded[MAXTHR]; /* events each thread recorded (flood: per_thread) */
static uint32_t flushes;     /* posix_trace_flush calls while flooding, spread */
static unsigned wraps; /* LOOP logs that wrapped */

struct wit {
	uint32_t last[MAXTHR];
	int seen[MAXTHR];
	uint64_t pairs_at[MAXTHR];
	uint64_t pairs, user, sys[PT_SYS_IDS], events;
	long long prev_ts, ovf_ts;
	int have_prev, open_ovf, after_resume;
	uint64_t synth_back, ord_back, ord_back_max, order_bad, unreported, unpaired;
	uint64_t late_gap; /* of the ordinary events stepping back, those after a RESUME */
	uint64_t jumps, gap_sum, prev_at, hash;
	uint64_t gap_since, gap_bad; /* one thread: the counts told since its last event */
	int first_is_overflow;
	int log_full;           /* an UNTIL_FULL log's STOP (data 1) tells the rest */
	struct pt_ext_losses x; /* as of the last RESUME */
	/* the last events: id, time, thread and sequence number (a RESUME's
	 * count in seq) */
	struct { trace_event_id_t e; long long ts; uint32_t k, seq; } hist[8];
};

/* The events before a fault, for the first fault of a reading. */
static void fault(struct wit *w, uint64_t *count, const char *what)
{
	size_t cap = sizeof w->hist / sizeof w->hist[0];

	if (!w->unpaired && !w->unreported && !w->synth_back && !w->gap_bad)
		for (uint64_t i = w->events > cap ? w->events - cap : 0; i < w->events; i++)
			fprintf(stderr, "  event %llu: id %u, %lld ns, thread %u, seq %u%s\n",
			        (unsigned long long)i + 1, (unsigned)w->hist[i % cap].e,
			        w->hist[i % cap].ts, w->hist[i % cap].k, w->hist[i % cap].seq,
			        i + 1 == w->events ? what : "");
	++*count;
}

static long long ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static void witness(trace_id_t id, struct wit *w, const struct posix_trace_event_info *ev,
                    const void *data, size_t len)
{
	long long ts = ns_of(&ev->posix_timestamp);
	trace_event_id_t e = ev->posix_event_id;
	int synth = e == POSIX_TRACE_OVERFLOW || e == POSIX_TRACE_RESUME;

	w->hash = w->hash * 1000003u ^ (uint64_t)ts ^ (uint64_t)e << 40;
	if (!w->events)
		w->first_is_overflow = e == POSIX_TRACE_OVERFLOW;
	uint32_t pk[2] = { UINT32_MAX, UINT32_MAX };
	if (e == ID && len >= sizeof pk)
		memcpy(pk, data, sizeof pk);
	size_t cap = sizeof w->hist / sizeof w->hist[0];
	w->hist[w->events % cap].e = e;
	w->hist[w->events % cap].ts = ts;
	w->hist[w->events % cap].k = pk[0];
	w->hist[w->events % cap].seq = pk[1];
	w->events++;
	if (w->have_prev && ts < w->prev_ts) {
		if (synth) {
			w->synth_back++;
			fprintf(stderr, "event %llu: %s stamped %lld ns before the event before it\n",
			        (unsigned long long)w->events,
			        e == POSIX_TRACE_OVERFLOW ? "OVERFLOW" : "RESUME", w->prev_ts - ts);
		} else {
			/* after a RESUME: that RESUME took its OVERFLOW's time
			 * (the event is a late one), exactly */
			if (w->after_resume && w->prev_ts != w->ovf_ts) {
				w->synth_back++;
				fprintf(stderr, "event %llu: a RESUME stamped %lld ns after the event "
				        "after it and %lld ns after its OVERFLOW\n",
				        (unsigned long long)w->events, w->prev_ts - ts,
				        w->prev_ts - w->ovf_ts);
			}
			w->late_gap += w->after_resume;
			w->ord_back++;
			if ((uint64_t)(w->prev_ts - ts) > w->ord_back_max)
				w->ord_back_max = (uint64_t)(w->prev_ts - ts);
		}
	}
	w->prev_ts = ts;
	w->have_prev = 1;
	w->after_resume = e == POSIX_TRACE_RESUME;
	if (e == POSIX_TRACE_OVERFLOW)
		w->ovf_ts = ts;
	if (e < PT_SYS_IDS)
		w->sys[e]++;
	if (e == POSIX_TRACE_ERROR)
		fprintf(stderr, "event %llu: POSIX_TRACE_ERROR\n", (unsigned long long)w->events);
	if (e == POSIX_TRACE_STOP && len == sizeof(int) && *(const int *)data == 1)
		w->log_full = 1;
	if (e == POSIX_TRACE_OVERFLOW) {
		if (w->open_ovf)
			fault(w, &w->unpaired, " <- a second OVERFLOW");
		w->open_ovf = 1;
		return;
	}
	if (w->open_ovf && e != POSIX_TRACE_RESUME) /* an event between OVERFLOW and RESUME */
		fault(w, &w->unpaired, " <- after an OVERFLOW");
	if (e == POSIX_TRACE_RESUME) {
		if (!w->open_ovf)
			fault(w, &w->unpaired, " <- no OVERFLOW before");
		w->open_ovf = 0;
		w->pairs++;
		CHECK_RC(pt_ext_losses(id, &w->x), 0);
		CHECK(w->x.resume_ok);
		uint64_t at = w->x.at_resume + w->x.wrap_at_resume;
		CHECK(at >= w->prev_at);
		w->gap_sum += at - w->prev_at;
		w->gap_since += at - w->prev_at;
		w->hist[(w->events - 1) % cap].seq = (uint32_t)(at - w->prev_at); /* (its count) */
		w->prev_at = at;
		return;
	}
	w->open_ovf = 0;
	if (e != ID)
		return;
	w->user++;
	uint32_t p[2];
	REQUIRE(len >= sizeof p);
	memcpy(p, data, sizeof p);
	REQUIRE(p[0] < nthr && p[1] < recorded[p[0]]);
	uint32_t k = p[0];
	uint64_t jump;
	if (w->seen[k]) {
		if (p[1] <= w->last[k]) {
			w->order_bad++;
			return;
		}
		jump = p[1] - w->last[k] - 1;
	} else {
		jump = p[1];
	}
	if (jump && w->pairs_at[k] == w->pairs) {
		fault(w, &w->unreported, " <- no pair before");
		fprintf(stderr, "thread %u lost %llu events before its event %u with no "
		        "OVERFLOW/RESUME\n", k, (unsigned long long)jump, p[1]);
	}
	if (nthr == 1 && w->seen[k] && jump != w->gap_since) {
		fault(w, &w->gap_bad, " <- the gaps before it miscount");
		fprintf(stderr, "lost %llu events before event %u, the gaps since its last one "
		        "count %llu\n", (unsigned long long)jump, p[1],
		        (unsigned long long)w->gap_since);
	}
	w->gap_since = 0;
	w->jumps += jump;
	w->seen[k] = 1;
	w->last[k] = p[1];
	w->pairs_at[k] = w->pairs;
}

/* The events each thread lost after its last one read: a pair must tell
 * them after that event. */
static void witness_end(struct wit *w)
{
	if (w->open_ovf)
		w->unpaired++;
	for (unsigned k = 0; k < nthr; k++) {
		uint64_t tail = w->seen[k] ? recorded[k] - 1 - w->last[k] : recorded[k];
		if (tail && w->pairs_at[k] == w->pairs && !w->log_full) {
			w->unreported++;
			fprintf(stderr, "thread %u lost its last %llu events with no OVERFLOW/RESUME\n",
			        k, (unsigned long long)tail);
		}
		w->jumps += tail;
		if (nthr == 1 && w->seen[k] && !w->log_full && tail != w->gap_since)
			w->gap_bad++;
	}
}

/* What every case checks; sys_lost: system events counted lost. */
static void check_wit(const char *what, struct wit *w, uint64_t total, uint64_t sys_lost)
{
	CHECK_EQ(w->synth_back, 0);
	CHECK_EQ(w->order_bad, 0);
	CHECK_EQ(w->unpaired, 0);
	CHECK_EQ(w->unreported, 0);
	CHECK_EQ(w->gap_bad, 0);
	CHECK_EQ(w->sys[POSIX_TRACE_ERROR], 0);
	CHECK_EQ(w->sys[POSIX_TRACE_OVERFLOW], w->sys[POSIX_TRACE_RESUME]);
	CHECK_EQ(w->jumps + sys_lost, total);
	CHECK_EQ(w->gap_sum, total);
	uint64_t all = 0;
	for (unsigned k = 0; k < nthr; k++)
		all += recorded[k];
	CHECK_EQ(w->user + w->jumps, all);
	printf("%-34s %7llu events, %7llu lost in %4llu gaps; ordinary events stepping back: "
	       "%llu, %llu of them after a gap (at most %.3f ms)\n", what,
	       (unsigned long long)w->user, (unsigned long long)total,
	       (unsigned long long)w->pairs, (unsigned long long)w->ord_back,
	       (unsigned long long)w->late_gap, (double)w->ord_back_max / 1e6);
	if (t_failures)
		exit(1);
}

/* nthr threads flood; the caller's thread flushes meanwhile if asked */
static void flood(void)
{
	pthread_t th[MAXTHR];

	for (unsigned i = 0; i < nthr; i++)
		recorded[i] = per_thread;
	for (unsigned i = 0; i < nthr; i++)
		REQUIRE(pthread_create(&th[i], NULL, loss_writer, (void *)(uintptr_t)i) == 0);
	for (uint32_t f = 0; f < flushes; f++) { /* each one whole: its own FLUSH_START/STOP */
		struct posix_trace_status_info st;
		usleep(2000);
		CHECK_RC(posix_trace_flush(trid), 0);
		do {
			usleep(200);
			CHECK_RC(posix_trace_get_status(trid, &st), 0);
		} while (st.posix_stream_flush_status == POSIX_TRACE_FLUSHING);
	}
	for (unsigned i = 0; i < nthr; i++)
		pthread_join(th[i], NULL);
}

static int next(trace_id_t id, int mode, struct posix_trace_event_info *ev, void *buf,
                size_t cap, size_t *len)
{
	int un = 0, rc;
	struct timespec dl;

	switch (mode) {
	case R_BLOCK:
		rc = posix_trace_getnext_event(id, ev, buf, cap, len, &un);
		break;
	case R_TIMED:
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 5000000;
		if (dl.tv_nsec >= 1000000000)
			dl.tv_sec++, dl.tv_nsec -= 1000000000;
		rc = posix_trace_timedgetnext_event(id, ev, buf, cap, len, &un, &dl);
		if (rc == ETIMEDOUT)
			return 0;
		break;
	default:
		rc = posix_trace_trygetnext_event(id, ev, buf, cap, len, &un);
	}
	CHECK_RC(rc, 0);
	return !rc && !un;
}

/* A LOOP stream read after the fact (a flight recorder). */
static void loop_after(void)
{
	struct wit w = { 0 };
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len;

	loss_stream(POSIX_TRACE_LOOP, 64 * 1024, -1, 0, 0);
	CHECK_RC(posix_trace_start(trid), 0);
	flood();
	CHECK_RC(posix_trace_stop(trid), 0);
	while (next(trid, R_TRY, &ev, buf, sizeof buf, &len))
		witness(trid, &w, &ev, buf, len);
	witness_end(&w);
	check_wit("LOOP stream, after the fact", &w, loss_total(trid), !w.sys[POSIX_TRACE_START]);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

/* The segment of the one stream of this process (src/shm/layout.h), as
 * a hostile traced process would map it (tests/sec_losses.c). */
static struct pt_hdr *map_stream(size_t *size)
{
	const char *e = getenv("POSIXTRACE_CTL");
	int fd = e ? atoi(e) : -1;
	struct pt_ctl *c = fd < 0 ? MAP_FAILED
	                          : mmap(NULL, PT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct pt_hdr *h = MAP_FAILED;

	REQUIRE(c != MAP_FAILED);
	for (unsigned s = 0; s < PT_SLOTS && h == MAP_FAILED; s++) {
		uint64_t off = atomic_load(&c->slot[s].off);
		*size = atomic_load(&c->slot[s].size);
		if (atomic_load(&c->slot[s].ticket) > PT_TICKET_BUSY && off >= PT_CTL_SIZE && *size)
			h = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	}
	munmap(c, PT_CTL_SIZE);
	REQUIRE(h != MAP_FAILED);
	return h;
}

static struct pt_hdr *seg;

static void event_of(uint32_t k, uint32_t seq)
{
	uint32_t p[4] = { k, seq };

	posix_trace_event(ID, p, sizeof p);
}

/* thread 1: floods until the loss reports made since B and C were stolen
 * have overwritten theirs, twice over */
static void *overwrite_reports(void *arg)
{
	uint32_t n = 0;

	(void)arg;
	while (atomic_load(&seg->loss_gen) < 2 * PT_LOSS_RING)
		event_of(1, n++);
	recorded[1] = n;
	return NULL;
}

/* A LOOP stream read after the fact, where a thread's old chunk is kept
 * and the chunks it took after it are lost with their loss reports: the
 * reader must still tell a gap between the thread's events of the two
 * chunks it keeps (the chunk serial, src/shm/layout.h).  Thread 0 (this
 * one) fills its chunk A, which no thief takes: its writer was
 * preempted between taking its seal number and publishing it, and the
 * thieves went past that entry of the seal log, never to come back --
 * emulated here by moving the steal cursor past it, as they do.  It then
 * fills B and C and begins D; thread 1 floods, stealing B and C and then
 * its own chunks until their reports are overwritten.  The old reader
 * told the overwritten reports by one pair before everything, then
 * returned A's events and D's with nothing between them. */
static void kept_old_chunk(void)
{
	struct wit w = { 0 };
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len, size;
	pthread_t th;
	uint32_t n = 0;

	nthr = 2;
	loss_stream(POSIX_TRACE_LOOP, 64 * 1024, -1, 0, 0);
	CHECK_RC(posix_trace_start(trid), 0);
	seg = map_stream(&size);
	uint64_t sealed = atomic_load(&seg->seal_seq); /* (START's chunk) */
	while (atomic_load(&seg->seal_seq) == sealed) /* A, sealed by the event that */
		event_of(0, n++);                          /* went into B */
	atomic_store(&seg->reclaim, atomic_load(&seg->seal_seq));
	sealed = atomic_load(&seg->seal_seq);
	while (atomic_load(&seg->seal_seq) < sealed + 2) /* B and C; D begun */
		event_of(0, n++);
	recorded[0] = n;
	REQUIRE(pthread_create(&th, NULL, overwrite_reports, NULL) == 0);
	pthread_join(th, NULL);
	CHECK_RC(posix_trace_stop(trid), 0);
	while (next(trid, R_TRY, &ev, buf, sizeof buf, &len))
		witness(trid, &w, &ev, buf, len);
	witness_end(&w);
	CHECK(w.seen[0] && w.last[0] == n - 1); /* D's event was kept */
	check_wit("a kept old chunk, reports overwritten", &w, loss_total(trid),
	          !w.sys[POSIX_TRACE_START]);
	munmap(seg, size);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

static int read_mode;
static struct wit live_w;

static void *live_reader(void *arg)
{
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len;

	(void)arg;
	for (;;) { /* until the STOP the controller records after the flood */
		if (!next(trid, read_mode, &ev, buf, sizeof buf, &len))
			continue;
		witness(trid, &live_w, &ev, buf, len);
		if (ev.posix_event_id == POSIX_TRACE_STOP)
			break;
	}
	while (next(trid, R_TRY, &ev, buf, sizeof buf, &len)) /* the rest */
		witness(trid, &live_w, &ev, buf, len);
	return NULL;
}

/* A LOOP stream read while it is written. */
static void loop_live(int mode, const char *what)
{
	pthread_t rt;

	memset(&live_w, 0, sizeof live_w);
	read_mode = mode;
	loss_stream(POSIX_TRACE_LOOP, 64 * 1024, -1, 0, 0);
	CHECK_RC(posix_trace_start(trid), 0);
	REQUIRE(pthread_create(&rt, NULL, live_reader, NULL) == 0);
	flood();
	int rc = posix_trace_stop(trid); /* checked once the reader, which checks, is done */
	pthread_join(rt, NULL);
	CHECK_RC(rc, 0);
	witness_end(&live_w);
	check_wit(what, &live_w, loss_total(trid), !live_w.sys[POSIX_TRACE_START]);
	CHECK_RC(posix_trace_shutdown(trid), 0);
}

static int tmp_file(void)
{
	char path[] = "/tmp/loss_order.XXXXXX";
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	unlink(path);
	return fd;
}

/* A stream with a log, read back twice (the second time after a rewind:
 * the same events). */
static void with_log(int policy, int log_policy, size_t log_size, const char *what)
{
	int fd = tmp_file();
	struct wit w = { 0 }, again = { 0 };
	struct posix_trace_event_info ev;
	unsigned char buf[64];
	size_t len;
	trace_id_t log;

	loss_stream(policy, 64 * 1024, fd, log_policy, log_size);
	CHECK_RC(posix_trace_start(trid), 0);
	flood();
	/* An UNTIL_FULL log must fill for the case to be itself: it takes
	 * twice the stream, which a flusher kept off its CPU for the whole
	 * flood (a loaded machine) did not write; thread 0's sequence goes
	 * on, from this thread, until it is full. */
	for (struct posix_trace_status_info st; log_policy == POSIX_TRACE_UNTIL_FULL;) {
		CHECK_RC(posix_trace_get_status(trid, &st), 0);
		if (st.posix_log_full_status == POSIX_TRACE_FULL || t_failures)
			break;
		for (int i = 0; i < 1000; i++)
			event_of(0, recorded[0]++);
		usleep(1000);
	}
	CHECK_RC(posix_trace_shutdown(trid), 0);
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	CHECK_RC(posix_trace_open(fd, &log), 0);
	for (int pass = 0; pass < 2; pass++) {
		struct wit *v = pass ? &again : &w;
		if (pass)
			CHECK_RC(posix_trace_rewind(log), 0);
		while (next(log, R_BLOCK, &ev, buf, sizeof buf, &len))
			witness(log, v, &ev, buf, len);
		witness_end(v);
	}
	CHECK_EQ(again.hash, w.hash);
	CHECK_EQ(again.events, w.events);
	struct pt_ext_losses x;
	CHECK_RC(pt_ext_losses(log, &x), 0);
	CHECK(x.total_ok);
	/* the controller's events: START, the FLUSH_START/STOP of each flush
	 * and of the shutdown, and its STOP */
	uint64_t sys = 2 + 2 * ((uint64_t)flushes + 1);
	uint64_t seen = w.sys[POSIX_TRACE_START] + w.sys[POSIX_TRACE_STOP] +
	                w.sys[POSIX_TRACE_FLUSH_START] + w.sys[POSIX_TRACE_FLUSH_STOP];
	CHECK(seen <= sys);
	if (log_policy == POSIX_TRACE_LOOP) {
		/* wrapped: told before the oldest event kept */
		CHECK_EQ(w.first_is_overflow, x.log_overwritten > 0);
		wraps += x.log_overwritten > 0;
	} else {
		CHECK_EQ(x.log_overwritten, 0);
	}
	if (log_policy == POSIX_TRACE_UNTIL_FULL) {
		/* what the full log refused is told by its STOP, not in a gap */
		CHECK(x.log_dropped > 0);
		CHECK(w.log_full);
		/* (its STOP is one of those seen, in place of the controller's) */
		CHECK_EQ(w.jumps + sys - (seen - 1), x.total + x.log_dropped);
		CHECK(w.gap_sum <= x.total); /* the RESUMEs after it were refused */
		CHECK_EQ(w.synth_back + w.order_bad + w.unpaired + w.unreported, 0);
		printf("%-34s %7llu events, %7llu lost in %4llu gaps, %llu refused by the full log\n",
		       what, (unsigned long long)w.user, (unsigned long long)x.total,
		       (unsigned long long)w.pairs, (unsigned long long)x.log_dropped);
	} else {
		CHECK_EQ(x.log_dropped, 0);
		check_wit(what, &w, x.total + x.log_overwritten, sys - seen);
	}
	CHECK_RC(posix_trace_close(log), 0);
	close(fd);
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	T_BEGIN(300);
	setvbuf(stdout, NULL, _IOLBF, 0); /* (a fault's lines, then its case's line) */
	nthr = ncpu + 2 < 4 ? 4 : (unsigned)(ncpu + 2);
	if (nthr > MAXTHR)
		nthr = MAXTHR;
	per_thread = 50000 * SCALE;
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	unsigned many = nthr;
	kept_old_chunk();
	nthr = many;
	for (int r = 0; r < rounds; r++) {
		flushes = 0;
		loop_after();
		loop_live(R_TRY, "LOOP stream, trygetnext meanwhile");
		loop_live(R_BLOCK, "LOOP stream, getnext meanwhile");
		loop_live(R_TIMED, "LOOP stream, timedgetnext meanwhile");
		with_log(POSIX_TRACE_FLUSH, POSIX_TRACE_APPEND, 0, "FLUSH stream, APPEND log");
		with_log(POSIX_TRACE_FLUSH, POSIX_TRACE_LOOP, 64 * 1024, "FLUSH stream, LOOP log");
		with_log(POSIX_TRACE_FLUSH, POSIX_TRACE_UNTIL_FULL, 128 * 1024,
		         "FLUSH stream, UNTIL_FULL log");
		flushes = 5;
		with_log(POSIX_TRACE_LOOP, POSIX_TRACE_APPEND, 0, "LOOP stream, APPEND log, flushed");
		with_log(POSIX_TRACE_LOOP, POSIX_TRACE_LOOP, 64 * 1024, "LOOP stream, LOOP log, flushed");
		/* one thread: each gap's count is exactly the events missing
		 * between the two events around it */
		nthr = 1;
		flushes = 0;
		loop_after();
		loop_live(R_BLOCK, "1 thread, LOOP stream, getnext");
		with_log(POSIX_TRACE_FLUSH, POSIX_TRACE_APPEND, 0, "1 thread, FLUSH stream, APPEND log");
		nthr = many;
	}
	CHECK(wraps > 0); /* a wrapped log was read */
	T_END();
}
