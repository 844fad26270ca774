/*
 * log_order.c -- a log reads in timestamp order, always (issue 46, item 5).
 *
 * A late event (its thread preempted between taking its timestamp and
 * publishing the event) is written to the log after events of other
 * threads stamped later; the reader merges the blocks whose time ranges
 * overlap (src/log/logiter.c) and returns every event in order.
 *
 *  1. Written with the log writer itself, so the late events are where
 *     the test puts them: 4 writers, one of them late by up to 3 ms, over
 *     small blocks (a late event up to 40 blocks after its time), a block
 *     whose own records step back, equal timestamps of several writers.
 *     Read through the block index and by a scan, each through
 *     posix_trace_getnext_event() on posix_trace_open() (the public way),
 *     pt_ext_next_batch() (what show, stats and the exports read) and
 *     after a seek: no timestamp steps back, every event exactly once,
 *     each writer's events in its own order, equal timestamps in the
 *     order they were written.  And losses: another thread's late events
 *     stamped inside an OVERFLOW/RESUME pair's gap leave the pair whole
 *     (the RESUME right after its OVERFLOW, stamped no later than the
 *     event after it), wherever the blocks split.
 *  2. Recorded by threads that outnumber the CPUs (so some are preempted
 *     between stamp and publish), 10 FLUSH logs written by 4 threads and
 *     10 flight-recorder logs (LOOP stream, APPEND log, 3 threads, flushed
 *     3 times): 0 backsteps; the witness is each thread's own sequence
 *     number: its events come in its order, none twice, and the events
 *     read plus the losses the log tells add up to what was recorded,
 *     exactly.  Read by getnext and by batches, the same events in the
 *     same order.
 * On the reader before the merge, part 1 steps back every time and part
 * 2 in some logs (2 to 7 in 10 were seen).
 */
#include <pthread.h>
#include <sys/wait.h>
#include <trace.h>
#include "t.h"
#include "logfmt_util.h"
#include "../src/ext.h"
#include "flood_threads.h"

/* ------------------------------------------------ 1: written by hand */

#define NW 4
#define PER 6000u
#define T0 1700000000000000000ull

struct rec { uint64_t ts; uint32_t w, seq; };

/* what was written, in the order written: writer w's event seq at ts */
static struct rec wrote[NW * PER + 16];
static size_t nwrote;

static void put(struct pt_logw *w, uint32_t wr, uint32_t seq, uint64_t ts)
{
	uint32_t pl[2] = { wr, seq };

	CHECK_RC(pt_logw_event(w, ts, 1000, 100 + wr, 0x4000 + wr, 30, 0, pl, sizeof pl), 0);
	wrote[nwrote++] = (struct rec){ ts, wr, seq };
}

/* Writers 0-2 write in time order, 1 us apart; writer 3's event j is
 * stamped with them but written up to 3 ms late (when the others reach a
 * later time; in its own order); every 500th event of writer 1 has
 * writer 0's timestamp. */
static uint64_t lag3(uint32_t j)
{
	return j * 7919u % 3000u; /* iterations of 1 us */
}

static void write_log(int fd, int policy, uint64_t log_max)
{
	struct pt_attr_img a = mkattr(64);
	struct pt_logw_opt o = { .block_size = 1024 };
	struct pt_logw w;
	uint32_t n3 = 0;

	nwrote = 0;
	REQUIRE(pt_logw_init_opt(&w, fd, &a, policy, log_max, &o) == 0);
	for (uint32_t i = 0; i < PER; i++) {
		uint64_t t = T0 + (uint64_t)i * 1000;
		put(&w, 0, i, t);
		put(&w, 1, i, i % 500 == 0 ? t : t + 300);
		put(&w, 2, i, t + 600);
		while (n3 <= i && i >= n3 + lag3(n3)) {
			put(&w, 3, n3, T0 + (uint64_t)n3 * 1000 + 200);
			n3++;
		}
	}
	for (; n3 < PER; n3++)
		put(&w, 3, n3, T0 + (uint64_t)n3 * 1000 + 200);
	struct posix_trace_status_info st = { 0 };
	CHECK_RC(pt_logw_finish(&w, &st), 0);
	pt_logw_free(&w);
}

/* The events read (user events only, those stamped at or after from),
 * checked: no backstep, each exactly once in its writer's order, equal
 * timestamps in the order written. */
static void check_read(const char *how, const struct rec *got, size_t n, uint64_t from)
{
	uint32_t next[NW] = { 0 };
	long back = 0, bad = 0, ties = 0;
	size_t want = 0;

	for (size_t k = 0; k < nwrote; k++) {
		want += wrote[k].ts >= from;
		next[wrote[k].w] += wrote[k].ts < from;
	}
	for (size_t k = 0; k < n; k++) {
		if (k && got[k].ts < got[k - 1].ts)
			back++;
		if (got[k].w >= NW || got[k].seq != next[got[k].w])
			bad++;
		else
			next[got[k].w]++;
		/* equal timestamps: writer 0's event first, as written */
		if (k && got[k].ts == got[k - 1].ts && got[k].w == 0 && got[k - 1].w == 1)
			ties++;
	}
	if (back || bad || ties || n != want)
		fprintf(stderr, "%s: %zu events (want %zu), %ld backsteps, %ld out of their "
		        "writer's order, %ld ties out of the written order\n", how, n, want, back,
		        bad, ties);
	CHECK_EQ(back, 0);
	CHECK_EQ(bad, 0);
	CHECK_EQ(ties, 0);
	CHECK_EQ(n, want);
}

static size_t read_getnext(trace_id_t t, struct rec *out, uint64_t from)
{
	size_t n = 0;

	for (;;) {
		struct posix_trace_event_info e;
		uint32_t pl[2];
		size_t len = 0;
		if (t_get(t, &e, pl, sizeof pl, &len))
			break;
		uint64_t ts = (uint64_t)e.posix_timestamp.tv_sec * 1000000000u +
		              (uint64_t)e.posix_timestamp.tv_nsec;
		if (e.posix_event_id != 30 || ts < from)
			continue;
		CHECK(len == sizeof pl && pl[0] < NW && e.posix_pid == 1000 &&
		      (uint64_t)e.posix_thread_id == 100 + pl[0]);
		if (n < NW * PER + 16)
			out[n++] = (struct rec){ ts, pl[0], pl[1] };
	}
	return n;
}

/* by batches: no payload; the writer gives the thread, and the sequence
 * is found by counting each writer's events */
static size_t read_batches(trace_id_t t, struct rec *out)
{
	static struct pt_ext_batch b;
	uint32_t cnt[NW] = { 0 };
	uint64_t prev = 0;
	long back = 0;
	size_t n = 0;

	for (;;) {
		CHECK_RC(pt_ext_next_batch(t, &b), 0);
		if (!b.n)
			break;
		for (size_t i = 0; i < b.n; i++) {
			const struct pt_ext_bevent *e = &b.ev[i];
			back += e->ts < prev;
			prev = e->ts;
			if (e->id != 30 || e->w >= b.nw)
				continue;
			uint32_t w = (uint32_t)(b.w[e->w].thread - 100);
			if (w < NW && n < NW * PER + 16)
				out[n++] = (struct rec){ e->ts, w, cnt[w]++ };
		}
	}
	CHECK_EQ(back, 0);
	return n;
}

/* The writers' events (id 30) r gives from where it is to its end,
 * those stamped at or after from (ns), into out (pt_logr_next, each call
 * checked); how many. */
static size_t read_logr(struct pt_logr *r, struct rec *out, uint64_t from)
{
	size_t n = 0;
	for (;;) {
		struct posix_trace_event_info e;
		uint32_t pl[2];
		size_t len;
		int un = 0;
		CHECK_RC(pt_logr_next(r, &e, pl, sizeof pl, &len, &un), 0);
		if (un)
			break;
		uint64_t ts = (uint64_t)e.posix_timestamp.tv_sec * 1000000000u +
		              (uint64_t)e.posix_timestamp.tv_nsec;
		if (e.posix_event_id == 30 && ts >= from && n < NW * PER + 16)
			out[n++] = (struct rec){ ts, pl[0], pl[1] };
	}
	return n;
}

static void part1(void)
{
	static struct rec got[NW * PER + 16];
	static const int policies[] = { POSIX_TRACE_APPEND, POSIX_TRACE_UNTIL_FULL };
	long file_back = 0;

	for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
		int fd = mfd();
		write_log(fd, policies[i], policies[i] == POSIX_TRACE_UNTIL_FULL ? 64u << 20 : 0);
		for (size_t k = 1; k < nwrote; k++)
			file_back += wrote[k].ts < wrote[k - 1].ts;
		/* through the index (the summary) and by a scan */
		for (int scan = 0; scan < 2; scan++) {
			struct pt_logr r;
			char how[64];
			REQUIRE(pt_logr_open_opt(&r, fd, scan ? PT_LOGR_SCAN : 0) == 0);
			CHECK_EQ(r.indexed, !scan);
			size_t n = read_logr(&r, got, 0);
			snprintf(how, sizeof how, "policy %d, %s, pt_logr_next", policies[i],
			         scan ? "scan" : "index");
			check_read(how, got, n, 0);
			/* a seek into the middle: every event from there, in order */
			for (uint64_t x = T0 + 777777; x < T0 + PER * 1000ull; x += 1234567) {
				uint64_t before;
				CHECK_RC(pt_logr_seek(&r, x, &before), 0);
				n = read_logr(&r, got, x);
				snprintf(how, sizeof how, "policy %d, %s, from +%llu", policies[i],
				         scan ? "scan" : "index", (unsigned long long)(x - T0));
				check_read(how, got, n, x);
			}
			pt_logr_close(&r);
		}
		/* the public way, and by batches */
		trace_id_t t;
		REQUIRE(lseek(fd, 0, SEEK_SET) == 0 && posix_trace_open(fd, &t) == 0);
		check_read("posix_trace_getnext_event", got, read_getnext(t, got, 0), 0);
		CHECK_RC(posix_trace_rewind(t), 0);
		check_read("pt_ext_next_batch", got, read_batches(t, got), 0);
		CHECK_RC(posix_trace_close(t), 0);
		close(fd);
	}
	printf("written: %ld backsteps in the order of the file\n", file_back);
	CHECK(file_back >= 20); /* (the logs do hold late events) */
}

/* Losses: an OVERFLOW/RESUME pair (the RESUME stamped as the event after
 * it) and, written after it, another thread's late events stamped inside
 * the gap: read in order, the pair stays whole (the RESUME right after
 * its OVERFLOW, stamped no later than the event after it) and nothing
 * steps back.  The pair at every place in a block (a block boundary
 * between the two, a pair ending a block read as it is and its RESUME in
 * a merged group after it). */
struct pst { uint64_t prev, back, split, pairs, evs; int open; };

static void note_ev(struct pst *p, uint64_t ts, unsigned id)
{
	p->back += ts < p->prev;
	p->split += p->open && id != POSIX_TRACE_RESUME;
	p->open = id == POSIX_TRACE_OVERFLOW;
	p->pairs += id == POSIX_TRACE_RESUME;
	p->prev = ts;
	p->evs++;
}

static void put_normal(struct pt_logw *w, uint64_t ts, uint32_t *normal)
{
	CHECK_RC(pt_logw_event(w, ts, 1000, 100, 0x4000, 30, 0, normal, 4), 0);
	(*normal)++;
}

static void part1_pairs(void)
{
	for (uint32_t shift = 0; shift < 40; shift++) {
		struct pt_attr_img a = mkattr(64);
		struct pt_logw_opt o = { .block_size = 512 };
		struct pt_logw w;
		uint64_t lost = 0, t = T0;
		uint32_t late = 0, normal = 0;
		int fd = mfd();
		REQUIRE(pt_logw_init_opt(&w, fd, &a, POSIX_TRACE_APPEND, 0, &o) == 0);
		for (uint32_t i = 0; i < shift; i++, t += 100)
			put_normal(&w, t, &normal);
		for (int pair = 0; pair < 5; pair++) {
			uint64_t o_ts = t, r_ts = t + 5000;
			CHECK_RC(pt_logw_event(&w, o_ts, 0, 0, 0, POSIX_TRACE_OVERFLOW, 0, NULL, 0), 0);
			CHECK_RC(pt_logw_event_lost(&w, r_ts, 0, 0, 0, POSIX_TRACE_RESUME, lost += 7), 0);
			t = r_ts;
			/* thread 100 goes on; thread 101's events stamped in the gap
			 * come after 30 of them */
			for (uint32_t i = 0; i < 30; i++, t += 100)
				put_normal(&w, t, &normal);
			for (uint32_t i = 0; i < 3; i++, late++)
				CHECK_RC(pt_logw_event(&w, o_ts + 1000 + i * 1000, 1000, 101, 0x4000, 30, 0,
				                       &late, 4), 0);
		}
		struct posix_trace_status_info st = { 0 };
		CHECK_RC(pt_logw_finish(&w, &st), 0);
		pt_logw_free(&w);
		/* through the index and by a scan with getnext; in batches */
		for (int way = 0; way < 3; way++) {
			static struct pt_ext_batch b;
			struct pt_logr r;
			struct pst p = { 0, 0, 0, 0, 0, 0 };
			uint64_t last_lost = 0;
			REQUIRE(pt_logr_open_opt(&r, fd, way == 1 ? PT_LOGR_SCAN : 0) == 0);
			for (;;) {
				if (way == 2) {
					CHECK_RC(pt_logr_next_batch(&r, &b), 0);
					if (!b.n)
						break;
					for (size_t i = 0; i < b.n; i++)
						note_ev(&p, b.ev[i].ts, b.ev[i].id);
				} else {
					struct posix_trace_event_info e;
					unsigned char d[8];
					size_t len;
					int un = 0;
					CHECK_RC(pt_logr_next(&r, &e, d, sizeof d, &len, &un), 0);
					if (un)
						break;
					note_ev(&p, (uint64_t)e.posix_timestamp.tv_sec * 1000000000u +
					            (uint64_t)e.posix_timestamp.tv_nsec,
					        (unsigned)e.posix_event_id);
				}
				if (r.last_lost_ok)
					last_lost = r.last_lost;
			}
			if (p.back || p.split)
				fprintf(stderr, "pairs, shift %u, way %d: %llu backsteps, %llu pairs split\n",
				        shift, way, (unsigned long long)p.back, (unsigned long long)p.split);
			CHECK_EQ(p.back, 0);
			CHECK_EQ(p.split, 0);
			CHECK_EQ(p.pairs, 5);
			CHECK_EQ(p.evs, normal + late + 10);
			CHECK_EQ(last_lost, lost);
			pt_logr_close(&r);
		}
		close(fd);
	}
}

/* ------------------------------------------------ 2: recorded by threads */

/* Reads the log on fd twice (getnext, batches); checks it; returns the
 * backsteps seen */
static long check_log(int fd, const char *what, int run)
{
	trace_id_t t;
	struct pt_ext_losses l;
	uint32_t next[MAXT] = { 0 };
	uint64_t prev = 0, read = 0, n = 0;
	long back = 0, bad = 0, worst = 0;
	size_t cap = (size_t)nthr * per + 64;
	struct rec *seq = calloc(cap, sizeof *seq);

	REQUIRE(seq);
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0 && posix_trace_open(fd, &t) == 0);
	for (;;) {
		struct posix_trace_event_info e;
		struct pl p;
		size_t len = 0;
		if (t_get(t, &e, &p, sizeof p, &len))
			break;
		uint64_t ts = (uint64_t)e.posix_timestamp.tv_sec * 1000000000u +
		              (uint64_t)e.posix_timestamp.tv_nsec;
		CHECK(e.posix_event_id != POSIX_TRACE_ERROR);
		if (ts < prev) {
			if (getenv("LOG_ORDER_DEBUG"))
				fprintf(stderr, "back: id %d after id %d by %llu ns\n", (int)e.posix_event_id,
				        (int)(n ? seq[n - 1].w : 0), (unsigned long long)(prev - ts));
			back++;
			if ((long)(prev - ts) > worst)
				worst = (long)(prev - ts);
		}
		prev = ts;
		if (n < cap)
			seq[n++] = (struct rec){ ts, (uint32_t)e.posix_event_id, 0 };
		if (e.posix_event_id != uid)
			continue;
		read++;
		/* the witness (a flight recorder loses whole stretches, told by
		 * its pairs) */
		bad += !flood_witness(&e, &p, len, next);
	}
	CHECK_RC(pt_ext_losses(t, &l), 0);
	CHECK(l.total_ok);
	/* every event recorded is read or counted lost, exactly (a flight
	 * recorder's START used to be overwritten and counted lost:
	 * tests/loop_exact) */
	uint64_t all = (uint64_t)nthr * per, told = l.at_resume + l.wrap_at_resume;
	CHECK_EQ(read + told, all);
	CHECK_EQ(told, l.total);
	/* by batches: the same events in the same order */
	static struct pt_ext_batch b;
	uint64_t k = 0, differ = 0;
	CHECK_RC(posix_trace_rewind(t), 0);
	for (;;) {
		CHECK_RC(pt_ext_next_batch(t, &b), 0);
		if (!b.n)
			break;
		for (size_t i = 0; i < b.n; i++, k++)
			differ += k >= n || b.ev[i].ts != seq[k].ts || b.ev[i].id != seq[k].w;
	}
	CHECK_EQ(k, n);
	CHECK_EQ(differ, 0);
	CHECK_RC(posix_trace_close(t), 0);
	CHECK_EQ(bad, 0);
	printf("%s %d: %llu of %u events read, %llu told lost (%+lld); %ld backsteps "
	       "(worst %ld ns)\n", what, run, (unsigned long long)read, nthr * per,
	       (unsigned long long)told, (long long)(read + told - all), back, worst);
	free(seq);
	return back;
}

static void part2(void)
{
	long back = 0;

	REQUIRE(posix_trace_eventid_open("log_order.ev", &uid) == 0);
	for (int run = 0; run < 10; run++) {
		char path[] = "/tmp/pt-log-order-XXXXXX";
		int fd = mkstemp(path);
		REQUIRE(fd >= 0);
		unlink(path);
		flood_record(fd, 0, 2 + run % 3, 150000);
		back += check_log(fd, "FLUSH log", run);
		close(fd);
	}
	for (int run = 0; run < 10; run++) {
		char path[] = "/tmp/pt-log-order-XXXXXX";
		int fd = mkstemp(path);
		REQUIRE(fd >= 0);
		unlink(path);
		flood_record(fd, 1, 3, 300000);
		back += check_log(fd, "flight-recorder log", run);
		close(fd);
	}
	CHECK_EQ(back, 0);
}

int main(void)
{
	T_BEGIN(240);
	part1();
	part1_pairs();
	part2();
	T_END();
}
