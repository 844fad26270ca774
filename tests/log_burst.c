/*
 * log_burst.c -- the flusher's loop for a thread recording in a loop
 * (src/flush/flushrun.c, burst(): the records after one just written that
 * are short, of the same type and not truncated are encoded by a loop of
 * their own; those of whole words of payload by copying a window of the
 * chunk and writing each header over its first word) and the runs it
 * counts for the summary itself (pt_logw_span_pre): the log is what the
 * program recorded, and its summary and block index are what a reader
 * counts.
 *
 * The program records batches of events, each batch one type, one
 * payload length and one call site: lengths of whole words (0, 8, 16, 32,
 * 64 = max data size) and not (5, 13), and longer than max data size (70:
 * cut, TRUNCATED_RECORD), batches of 1 to 1000 events, one batch in five
 * from a second call site.  Each payload's bytes are made from its
 * sequence number and thread.  Cases: an UNTIL_FULL stream with one
 * thread, flushed once at the end; a FLUSH stream whose flusher drains
 * while two threads record (the stream holds everything recorded, so
 * nothing may be lost whatever the machine's speed).  Then, read through
 * posix_trace_open (the block index: a block that is not what its entry
 * says reads as an error event):
 *  - per thread, exactly its events in the order recorded: type, length,
 *    truncation status, payload bytes, one address per call site (two in
 *    all), no error event, no loss;
 *  - each event stamped within its batch's CLOCK_REALTIME bracket
 *    (LU_SLACK_NS), and a thread's timestamps never going back;
 *  - the summary the writer wrote (pt_log_summary_read) equals what a
 *    reader scanning the log counts (pt_logr_census): events, per type
 *    count, first and last, per writer count, first and last; and the
 *    program's own counts per type.
 */
#include "log_util.h"
#include "../src/log/log.h"
#include "helpers.h"

#define NBATCH  300
#define MAXDATA 64u
#define NTHR_MAX 2
#define MAXSEQ  400000u

static trace_event_id_t types[3];
static const uint32_t lens[8] = { 32, 0, 8, 16, 64, 5, 13, 70 };

struct batch { long long t0, t1; uint32_t first, n; };
struct thr {
	uint32_t no, nev;
	struct batch b[NBATCH];
	uint64_t per_type[3];
};
static struct thr thr[NTHR_MAX];

static unsigned char pbyte(uint32_t seq, uint32_t no, uint32_t k)
{
	return (unsigned char)(seq * 131u + no * 29u + k * 7u + 0x5bu);
}

static uint32_t batch_len(uint32_t b) { return lens[b % 8]; }
static uint32_t batch_count(uint32_t b) { return 1 + (b * 97u) % 1000u; }
static unsigned batch_type(uint32_t b) { return (b / 8) % 3; }

/* two call sites: each its own function, never inlined into the other */
__attribute__((noinline)) static void site_a(trace_event_id_t id, const void *p, size_t n)
{
	posix_trace_event(id, p, n);
	__asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void site_b(trace_event_id_t id, const void *p, size_t n)
{
	posix_trace_event(id, p, n);
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	struct thr *t = arg;
	unsigned char buf[128];
	uint32_t seq = 0;

	for (uint32_t b = 0; b < NBATCH; b++) {
		uint32_t len = batch_len(b), n = batch_count(b);
		trace_event_id_t id = types[batch_type(b)];
		t->b[b].first = seq, t->b[b].n = n;
		t->b[b].t0 = lu_now();
		for (uint32_t i = 0; i < n; i++, seq++) {
			for (uint32_t k = 0; k < len; k++)
				buf[k] = pbyte(seq, t->no, k);
			(b % 5 == 4 ? site_b : site_a)(id, len ? buf : NULL, len);
		}
		t->b[b].t1 = lu_now();
		t->per_type[batch_type(b)] += n;
	}
	t->nev = seq;
	return NULL;
}

/* thread no's events among the n loaded, in order */
static void check_thread(int n, const struct thr *t, pthread_t self, void **addr)
{
	uint32_t seq = 0, b = 0, bad = 0;
	long long last = 0;

	for (int i = 0; i < n; i++) {
		const struct lu_ev *e = &lu_ev[i];
		if (!pthread_equal(e->thr, self))
			continue;
		if (e->id < PT_SYS_IDS) /* (the stream's own) */
			continue;
		while (b < NBATCH && seq >= t->b[b].first + t->b[b].n)
			b++;
		if (b == NBATCH) {
			if (bad++ < 5)
				fprintf(stderr, "  thread %u: event %d beyond the last recorded\n", t->no, i);
			continue;
		}
		uint32_t len = batch_len(b), got = len > MAXDATA ? MAXDATA : len;
		int ok = e->id == types[batch_type(b)] && e->len == got &&
		         e->trunc == (len > MAXDATA ? POSIX_TRACE_TRUNCATED_RECORD
		                                    : POSIX_TRACE_NOT_TRUNCATED);
		for (uint32_t k = 0; ok && k < got; k++)
			ok = e->data[k] == pbyte(seq, t->no, k);
		void **site = &addr[b % 5 == 4];
		if (!*site)
			*site = e->addr;
		ok = ok && e->addr == *site;
		ok = ok && e->ts >= t->b[b].t0 - LU_SLACK_NS && e->ts <= t->b[b].t1 + LU_SLACK_NS;
		ok = ok && e->ts >= last;
		if (!ok && bad++ < 5)
			fprintf(stderr, "  thread %u seq %u (batch %u): id %u len %zu trunc %d ts %lld "
			        "[%lld, %lld] last %lld\n", t->no, seq, b, e->id, e->len, e->trunc, e->ts,
			        t->b[b].t0, t->b[b].t1, last);
		last = e->ts;
		seq++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(seq, t->nev);
}

/* the writer's summary against a reader's count of the same log */
static void check_summary(const char *path, int nthr)
{
	int fd = open(path, O_RDONLY);
	struct pt_log_summary s;
	struct pt_logr r;
	const struct pt_logw_sum *c;
	uint64_t damaged = 1;

	REQUIRE(fd >= 0);
	memset(&s, 0, sizeof s);
	CHECK_RC(pt_log_summary_read(fd, &s), 0);
	REQUIRE(pt_logr_open_opt(&r, fd, PT_LOGR_SCAN) == 0);
	CHECK_RC(pt_logr_census(&r, &c, &damaged), 0);
	CHECK_EQ(damaged, 0);
	CHECK_EQ(s.events, c->events);
	CHECK_EQ(s.first, c->first);
	CHECK_EQ(s.last, c->last);
	int bad = 0;
	for (unsigned id = 0; id < PT_NIDS; id++)
		if (s.count[id] != c->count[id] ||
		    (s.count[id] && (s.tfirst[id] != c->tfirst[id] || s.tlast[id] != c->tlast[id])))
			bad++;
	CHECK_EQ(bad, 0);
	for (int k = 0; k < 3; k++) {
		uint64_t want = 0;
		for (int i = 0; i < nthr; i++)
			want += thr[i].per_type[k];
		CHECK_EQ(s.count[types[k]], want);
	}
	CHECK_EQ(s.nwr, c->nwr);
	for (uint32_t i = 0; i < s.nwr && i < c->nwr; i++) {
		CHECK(s.wr[i].pid == c->wr[i].pid && s.wr[i].thread == c->wr[i].thread);
		CHECK_EQ(s.wr[i].count, c->wr[i].count);
		CHECK_EQ(s.wr[i].first, c->wr[i].first);
		CHECK_EQ(s.wr[i].last, c->wr[i].last);
	}
	pt_logr_close(&r);
	pt_log_summary_free(&s);
	close(fd);
}

static void run(int policy, int nthr)
{
	char path[256];
	trace_attr_t a;
	trace_id_t trid;
	pthread_t th[NTHR_MAX];
	int fd = lu_tmpfile(path, sizeof path, "burst", O_RDWR);

	memset(thr, 0, sizeof thr);
	REQUIRE(posix_trace_attr_init(&a) == 0);
	REQUIRE(posix_trace_attr_setstreamfullpolicy(&a, policy) == 0);
	REQUIRE(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND) == 0);
	REQUIRE(posix_trace_attr_setmaxdatasize(&a, MAXDATA) == 0);
	/* everything recorded fits: nothing is lost however slow the flusher */
	REQUIRE(posix_trace_attr_setstreamsize(&a, 64u << 20) == 0);
	REQUIRE(posix_trace_create_withlog(0, &a, fd, &trid) == 0);
	REQUIRE(posix_trace_start(trid) == 0);
	for (int i = 0; i < nthr; i++) {
		thr[i].no = (uint32_t)i;
		REQUIRE(pthread_create(&th[i], NULL, worker, &thr[i]) == 0);
	}
	for (int i = 0; i < nthr; i++)
		REQUIRE(pthread_join(th[i], NULL) == 0);
	CHECK_RC(lu_flush_wait(trid, NULL), 0);
	CHECK_RC(posix_trace_shutdown(trid), 0);
	close(fd);

	int n = lu_load(path, NULL, NULL);
	lu_no_damage(n);
	CHECK_EQ(lu_count(n, POSIX_TRACE_OVERFLOW, -1), 0);
	lu_ts_sorted(n);
	void *addr[2] = { NULL, NULL };
	uint64_t total = 0;
	for (int i = 0; i < nthr; i++) {
		check_thread(n, &thr[i], th[i], addr);
		total += thr[i].nev;
	}
	CHECK(addr[0] && addr[1] && addr[0] != addr[1]);
	uint64_t user = 0;
	for (int k = 0; k < 3; k++)
		user += (uint64_t)lu_count(n, types[k], -1);
	CHECK_EQ(user, total);
	check_summary(path, nthr);
	printf("%s, %d thread%s: %llu events, summary as counted\n",
	       policy == POSIX_TRACE_FLUSH ? "FLUSH" : "UNTIL_FULL", nthr, nthr > 1 ? "s" : "",
	       (unsigned long long)total);
	lu_rmfile(path);
}

int main(void)
{
	T_BEGIN(120);
	REQUIRE(posix_trace_eventid_open("burst.a", &types[0]) == 0);
	REQUIRE(posix_trace_eventid_open("burst.b", &types[1]) == 0);
	REQUIRE(posix_trace_eventid_open("burst.c", &types[2]) == 0);
	run(POSIX_TRACE_UNTIL_FULL, 1);
	run(POSIX_TRACE_FLUSH, 2);
	T_END();
}
